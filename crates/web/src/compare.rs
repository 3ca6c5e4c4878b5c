//! `batchlens compare` for the page: two finished sessions (a before and an after
//! log) compared by the core, in the CLI's words and JSON.

use batchlens_core::render;
use wasm_bindgen::prelude::*;

use crate::Session;

fn compared(
    before: &Session,
    after: &Session,
) -> Result<batchlens_core::report::Comparison, JsError> {
    Ok(batchlens_core::compare(before.report()?, after.report()?))
}

/// The comparison as JSON, byte for byte `batchlens compare BEFORE AFTER --format json`
/// (both sessions finished).
#[wasm_bindgen]
pub fn compare_json(before: &Session, after: &Session) -> Result<String, JsError> {
    let mut s = serde_json::to_string_pretty(&compared(before, after)?)
        .map_err(|e| JsError::new(&e.to_string()))?;
    s.push('\n');
    Ok(s)
}

/// The comparison as Markdown, as `--format markdown` prints it.
#[wasm_bindgen]
pub fn compare_markdown(before: &Session, after: &Session) -> Result<String, JsError> {
    Ok(render::compare_markdown(&compared(before, after)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(log: &[u8]) -> Session {
        let mut s = Session::new();
        s.feed(log).unwrap();
        s.finish().unwrap();
        s
    }

    #[test]
    fn the_example_pair_compares_as_the_core_does() {
        let (b, a) = (
            session(include_bytes!("../../../examples/sglang-kv-bound.log")),
            session(include_bytes!(
                "../../../examples/sglang-kv-bound-larger-pool.log"
            )),
        );
        let json: serde_json::Value = serde_json::from_str(&compare_json(&b, &a).unwrap()).unwrap();
        assert_eq!(json["changes"][0]["setting"], "KV pool (tokens)");
        assert_eq!(json["attribution"], "setting");
        assert!(compare_markdown(&b, &a)
            .unwrap()
            .contains("| KV pool (tokens) | 116,171 | 159,000 |"));
    }
}
