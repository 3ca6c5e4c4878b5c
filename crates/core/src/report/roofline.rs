//! Part of the JSON contract (see the module above): serde types only.

use serde::Serialize;

/// How close decode runs to the hardware: the bandwidth a step achieves against
/// the GPU's peak (MBU), prefill's FLOPs against its peak (MFU), and the decode
/// ceiling at the observed batch. Present only when a GPU and a model are known.
/// Bytes and figures are per GPU; a step is one scheduler's decode step.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Roofline {
    /// The GPU's name as in batchlens' table (`H200 SXM`).
    pub gpu: String,
    /// The model's name (built-in, or a config's `_name_or_path`).
    pub model: String,
    /// Where the model came from: `builtin` (asked by name), `config.json`, or
    /// `log` (the startup lines' model path named a built-in model).
    pub model_source: String,
    pub peak_hbm_gb_s: f64,
    /// Dense tensor TFLOPS at the weights' precision (FP8 for FP8 weights where the GPU has it).
    pub peak_tflops: f64,
    pub tensor_parallel_size: u64,
    /// Schedulers (DP ranks, vLLM engines) whose steps run side by side.
    pub schedulers: u64,
    pub weight_dtype: String,
    pub kv_dtype: String,
    /// The model's parameters, all and those a token goes through (MoE: its experts only).
    pub params: f64,
    pub active_params: f64,
    /// Weight bytes each GPU holds.
    pub weights_bytes_per_gpu: f64,
    pub kv_bytes_per_token_per_gpu: f64,
    /// Requests in one scheduler's decode batch and the KV tokens they hold (steady window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<f64>,
    /// MoE: distinct experts per layer the batch touches in a step (of `experts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experts_touched: Option<f64>,
    /// Bytes one decode step reads per GPU: the weights it touches and the batch's KV.
    pub bytes_per_step_per_gpu: Option<f64>,
    /// Decode steps per second of one scheduler: generated tok/s ÷ running requests
    /// (÷ the tokens a request commits per step under speculative decoding), or from
    /// the engine's own step times where it logs them (see `steps_from`).
    pub steps_per_s: Option<f64>,
    /// How `steps_per_s` was found: `rate_per_request` (generated tok/s ÷ running ÷
    /// `tokens_per_step`), `iteration_times` (1 ÷ the mean time of the decode-only
    /// steps the engine times, vLLM's `Iteration(N)` lines), `iteration_count` (those
    /// steps counted over the window's busy time, where their printed times cover
    /// under half of it: vLLM times only the wait for a launched step's output).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub steps_from: String,
    /// The mean time of a decode-only step as the engine prints it, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_time_ms: Option<f64>,
    /// Speculative decoding: tokens a request commits per step, as the log states it
    /// (SGLang's `accept len`, vLLM's mean acceptance length).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_per_step: Option<f64>,
    /// Bytes read per step × steps per second, GB/s per GPU.
    pub achieved_hbm_gb_s: Option<f64>,
    /// Model bandwidth utilisation: achieved ÷ peak HBM bandwidth, 0..1 (above 1:
    /// the GPU, model or dtypes given are not the server's).
    pub mbu: Option<f64>,
    /// Prompt tokens per second per GPU while prefilling, where the log measures prefill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_tok_s_per_gpu: Option<f64>,
    /// Model FLOPs utilisation of prefill: (2 × active params + attention) FLOPs per
    /// prompt token × prompt tokens/s per GPU ÷ peak, 0..1.
    pub prefill_mfu: Option<f64>,
    /// Generated tok/s the server would make at this batch and context with every
    /// step at peak bandwidth (all schedulers).
    pub decode_ceiling_tok_s: Option<f64>,
    /// Why the achieved figure understates the hardware's use: `prefill_shares_interval`
    /// (prefill ran in the intervals the rates cover), `cuda_graph_off` (steps were
    /// launched without a captured graph), `small_batch_fast_gpu` (a step at peak
    /// would take under 5 ms, so per-step host overhead weighs), `kv_context_unknown`
    /// (the log gives no KV pool size: a step's bytes are the weights alone, and no ceiling).
    pub lower_bound_reasons: Vec<String>,
    /// Why the achieved figure may overstate it: `speculative_tokens_per_step_unknown`
    /// (speculative decoding is on and the log does not say how many tokens a step
    /// commits, so rate ÷ running counts too many steps).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub upper_bound_reasons: Vec<String>,
    /// Share of decode lines that say their step ran without a captured graph,
    /// and the smallest batch that did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_off_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_off_min_batch: Option<u64>,
    /// The same figures per rank or engine, where the log has several.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_source: Vec<RooflineSource>,
    /// The engine's own estimates, where it logs them, beside batchlens'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_reported: Option<EngineReported>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RooflineSource {
    pub source: String,
    pub steps_per_s: Option<f64>,
    pub achieved_hbm_gb_s: Option<f64>,
    pub mbu: Option<f64>,
}

/// Figures the engine prints per GPU (vLLM `--enable-mfu-metrics`, SGLang's
/// `est. … TFLOPS/s (per GPU)`), means over the lines that carry them, and
/// batchlens' figure ÷ the engine's.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct EngineReported {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hbm_gb_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tflops: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_tflops: Option<f64>,
    /// batchlens' achieved GB/s ÷ the engine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hbm_ratio: Option<f64>,
    /// batchlens' prefill TFLOPS ÷ the engine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_tflops_ratio: Option<f64>,
}
