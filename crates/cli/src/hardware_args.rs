//! `--gpu`, `--model`, `--tp`, `--weight-dtype`, `--kv-dtype`: the hardware the
//! roofline figures are measured against.

use crate::Failure;
use batchlens_core::{ModelChoice, RooflineChoice};
use std::path::Path;

#[derive(clap::Args, Clone, Default)]
pub struct HardwareArgs {
    /// The GPU the server ran on (h100, h100-pcie, h200, h20, b200, a100-40gb,
    /// a100, l40s, l4, a10g, rtx4090, rtx5090, mi300x, mi325x, ascend910b): adds
    /// `roofline` (achieved HBM bandwidth, MBU, prefill MFU, the decode ceiling).
    #[arg(long, value_name = "NAME")]
    pub gpu: Option<String>,
    /// The model: a built-in name (Llama-3.1-8B, Qwen3-32B, DeepSeek-V3, …) or a
    /// Hugging Face config.json. Default: the model path in the startup lines, if it
    /// names a built-in model.
    #[arg(long, value_name = "NAME|config.json")]
    pub model: Option<String>,
    /// Tensor-parallel size (default: the startup lines', else 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub tp: Option<u64>,
    /// Weight dtype: bf16, fp8, int8, int4, mxfp4, nvfp4 (default: the startup
    /// lines' quantization, else the checkpoint's).
    #[arg(long, value_name = "DTYPE")]
    pub weight_dtype: Option<String>,
    /// KV-cache dtype: bf16, fp8 (default: the startup lines', else bf16).
    #[arg(long, value_name = "DTYPE")]
    pub kv_dtype: Option<String>,
}

impl HardwareArgs {
    /// The choice for the core, with the config file read; unknown names exit 2.
    pub fn choice(&self) -> Result<RooflineChoice, Failure> {
        let model = match &self.model {
            None => None,
            Some(m) if m.ends_with(".json") || Path::new(m).is_file() => {
                let text = std::fs::read_to_string(m)
                    .map_err(|e| Failure::input(format!("--model {m}: {e}")))?;
                Some(ModelChoice::ConfigJson(text))
            }
            Some(m) => Some(ModelChoice::Name(m.clone())),
        };
        let c = RooflineChoice {
            gpu: self.gpu.clone(),
            model,
            tp: self.tp,
            weight_dtype: self.weight_dtype.clone(),
            kv_dtype: self.kv_dtype.clone(),
        };
        c.check().map_err(|e| {
            let which = if e.starts_with("unknown GPU") {
                "--gpu"
            } else {
                "--model"
            };
            Failure::input(format!("{which}: {e}"))
        })?;
        Ok(c)
    }
}
