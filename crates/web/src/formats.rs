//! Format files on the page: a session that reads a log with the line formats
//! of a format file (dropped or pasted beside the log), and the built-in ones.

use batchlens_core::formats::{builtin, Formats, BUILTIN};
use batchlens_core::Options;
use wasm_bindgen::prelude::*;

use crate::Session;

/// The formats of a format file's text, or a built-in one's name.
fn formats_of(text: &str) -> Result<Formats, String> {
    let t = text.trim();
    let source = builtin(t).unwrap_or(text);
    Formats::parse(source).map_err(|e| format!("format file: {e}"))
}

#[wasm_bindgen]
impl Session {
    /// A session that reads the log with the line formats of `format_file` (a
    /// TOML or JSON format file's text, or a built-in one's name: `llama.cpp`),
    /// judging server run `run` where given. Fails with the format file's fault
    /// and its line, as the CLI's `--format-file` does.
    pub fn with_formats(run: Option<u32>, format_file: &str) -> Result<Session, JsError> {
        let formats = formats_of(format_file).map_err(|e| JsError::new(&e))?;
        Ok(Session::reading(Options {
            run: run.filter(|&r| r >= 1),
            formats,
            ..Options::default()
        }))
    }
}

/// Checks a format file's text: the names of its formats (comma-separated),
/// or an error naming the line at fault.
#[wasm_bindgen]
pub fn check_format_file(text: &str) -> Result<String, JsError> {
    let f = formats_of(text).map_err(|e| JsError::new(&e))?;
    let mut names: Vec<&str> = f.list().iter().map(|f| f.name.as_str()).collect();
    names.dedup();
    Ok(names.join(", "))
}

/// The names of the built-in format files, comma-separated.
#[wasm_bindgen]
pub fn builtin_formats() -> String {
    BUILTIN
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_in_name_or_a_file_text_gives_formats_and_a_bad_file_its_line() {
        assert_eq!(
            formats_of("llama.cpp").map(|f| f.list().len()).ok(),
            Some(5)
        );
        let mine = "[[format]]\nname = \"gw\"\nregex = 'running=(?P<running>\\d+)'\n";
        assert_eq!(formats_of(mine).unwrap().list()[0].name, "gw");
        let bad = "[[format]]\nname = \"gw\"\nregex = 'busy=(?P<busy>\\d+)'\n";
        let e = formats_of(bad).unwrap_err();
        assert!(e.contains("line 3") && e.contains("busy"), "{e}");
        assert_eq!(builtin_formats(), "llama.cpp,ollama,tgi");
    }
}
