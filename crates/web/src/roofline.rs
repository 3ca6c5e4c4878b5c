//! The roofline on the page: the GPU and model lists, and a finished session's
//! report recomputed for the GPU and model the user picks.

use super::{report_json, Session};
use batchlens_core::{gpu_names, model_names, set_roofline, ModelChoice, RooflineChoice};
use wasm_bindgen::prelude::*;

/// The GPUs of batchlens' table, for the page's searchable list.
#[wasm_bindgen]
pub fn roofline_gpus() -> Vec<String> {
    gpu_names().into_iter().map(str::to_string).collect()
}

/// The built-in models, for the page's searchable list.
#[wasm_bindgen]
pub fn roofline_models() -> Vec<String> {
    model_names()
}

#[wasm_bindgen]
impl Session {
    /// The JSON report with `roofline` for `gpu` and a model (a built-in name, or a
    /// dropped config.json's text; neither: the log's model path), after `finish()`.
    /// An unknown GPU or model, or a config.json that does not read, is an error.
    pub fn roofline(
        &mut self,
        gpu: &str,
        model: Option<String>,
        config_json: Option<String>,
    ) -> Result<String, JsError> {
        let model = match (
            config_json.filter(|c| !c.trim().is_empty()),
            model.filter(|m| !m.trim().is_empty()),
        ) {
            (Some(c), _) => Some(ModelChoice::ConfigJson(c)),
            (None, Some(m)) => Some(ModelChoice::Name(m)),
            (None, None) => None,
        };
        let choice = RooflineChoice {
            gpu: (!gpu.trim().is_empty()).then(|| gpu.to_string()),
            model,
            ..RooflineChoice::default()
        };
        let report = self
            .report
            .as_mut()
            .ok_or_else(|| JsError::new("no report yet: call finish() first"))?;
        set_roofline(report, &choice).map_err(|e| JsError::new(&e))?;
        report_json(report).map_err(|e| JsError::new(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_session_is_measured_against_the_chosen_gpu_and_model() {
        let log = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/sglang-kv-bound.log"
        ))
        .unwrap();
        let mut s = Session::new();
        s.feed(&log).unwrap();
        let plain: serde_json::Value = serde_json::from_str(&s.finish().unwrap()).unwrap();
        assert!(plain.get("roofline").is_none());
        let json = s
            .roofline("h200", Some("Llama-3.1-8B".into()), None)
            .unwrap();
        let r: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(r["roofline"]["gpu"], "H200 SXM");
        assert!(r["roofline"]["mbu"].as_f64().is_some_and(|m| m > 0.0));
        // The text report is the recomputed one.
        assert!(s.text().unwrap().contains("MBU"));
        assert!(roofline_gpus().contains(&"MI300X".to_string()));
        assert!(roofline_models().contains(&"DeepSeek-V3".to_string()));
    }
}
