//! The GPU and model the caller names (`--gpu`, `--model`), resolved against
//! batchlens' tables, and the roofline they give the report.

use crate::analysis::roofline::{roofline, Hardware};
use crate::model::hardware;
use crate::model::shapes::{self, Shape};
use crate::report::{Report, Roofline};

/// The model: a built-in one by name, or a Hugging Face `config.json`'s text.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelChoice {
    Name(String),
    ConfigJson(String),
}

/// What the caller says of the hardware; what it leaves out comes from the log's
/// startup lines (the model path, TP size, weight and KV dtypes).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RooflineChoice {
    /// A GPU of [`gpu_names`], in any spelling (`h200`, `H100 PCIe`).
    pub gpu: Option<String>,
    pub model: Option<ModelChoice>,
    pub tp: Option<u64>,
    pub weight_dtype: Option<String>,
    pub kv_dtype: Option<String>,
}

impl RooflineChoice {
    /// Err with a message a person can act on when the GPU or the model is not known.
    pub fn check(&self) -> Result<(), String> {
        if let Some(g) = &self.gpu {
            if hardware::gpu(g).is_none() {
                return Err(format!(
                    "unknown GPU `{g}`: known are {}",
                    gpu_names().join(", ")
                ));
            }
        }
        self.shape().map(|_| ())
    }

    fn shape(&self) -> Result<Option<(Shape, &'static str)>, String> {
        match &self.model {
            None => Ok(None),
            Some(ModelChoice::Name(n)) => shapes::builtin(n)
                .map(|s| Some((s, "builtin")))
                .ok_or_else(|| {
                    format!(
                        "unknown model `{n}`: give a config.json or one of {}",
                        model_names().join(", ")
                    )
                }),
            Some(ModelChoice::ConfigJson(t)) => {
                shapes::from_config_json(t).map(|s| Some((s, "config.json")))
            }
        }
    }
}

/// The GPUs batchlens knows, as named in its table.
pub fn gpu_names() -> Vec<&'static str> {
    hardware::GPUS.iter().map(|g| g.name).collect()
}

/// The built-in models.
pub fn model_names() -> Vec<String> {
    shapes::builtin_names()
}

/// The report's roofline: none without a GPU, or without a model (asked for, or
/// named by the startup lines' model path).
pub(crate) fn apply(r: &Report, choice: &RooflineChoice) -> Option<Roofline> {
    let gpu = hardware::gpu(choice.gpu.as_deref()?)?;
    let (shape, source) = match choice.shape().ok()? {
        Some(s) => s,
        None => (shapes::builtin(r.config.model.as_deref()?)?, "log"),
    };
    Some(roofline(
        r,
        &Hardware {
            gpu,
            shape: &shape,
            model_source: source,
            tp: choice.tp,
            weight_dtype: choice.weight_dtype.as_deref(),
            kv_dtype: choice.kv_dtype.as_deref(),
        },
    ))
}

/// Sets (or clears) a finished report's roofline for another choice of GPU and
/// model, and judges it again with it (the page asks after reading the log).
pub fn set_roofline(r: &mut Report, choice: &RooflineChoice) -> Result<(), String> {
    choice.check()?;
    r.roofline = apply(r, choice);
    if r.diagnosis.is_some() {
        r.diagnosis = crate::diagnose::diagnose(r, crate::engines::profile(&r.engine));
    }
    Ok(())
}
