//! Part of the JSON contract (see the module above): serde types only.

use serde::Serialize;

use crate::model::Distribution;

/// Client-side figures, from a benchmark summary, its JSON, or the command line.
/// Every field is optional: tools and versions print different rows.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ClientFigures {
    /// Where the figures came from: `sglang_bench_serving`, `vllm_bench_serve`,
    /// `bench_block` (tool unknown), `save_result_json`, `command_line`, `request_log`.
    pub source: String,
    /// `sglang`, `vllm` or `unknown`.
    pub tool: String,
    /// Output (generated) tokens per second over the client's whole window.
    pub output_tok_s: Option<f64>,
    pub requests_per_s: Option<f64>,
    /// The client's window: first request sent to last response received, seconds.
    pub duration_s: Option<f64>,
    pub completed_requests: Option<u64>,
    pub failed_requests: Option<u64>,
    pub total_input_tokens: Option<u64>,
    pub total_output_tokens: Option<u64>,
    pub input_tok_s: Option<f64>,
    pub total_tok_s: Option<f64>,
    pub peak_output_tok_s: Option<f64>,
    /// `Max request concurrency` (absent or `not set` when the client did not cap it).
    pub max_concurrency: Option<u64>,
    /// `Traffic request rate` / `Request rate configured (RPS)` as printed (`inf`, a number, `trace`).
    pub request_rate: Option<String>,
    /// SGLang `Concurrency:` (mean requests in flight seen by the client).
    pub mean_concurrency: Option<f64>,
    pub mean_ttft_ms: Option<f64>,
    pub median_ttft_ms: Option<f64>,
    pub p99_ttft_ms: Option<f64>,
    pub mean_tpot_ms: Option<f64>,
    pub mean_itl_ms: Option<f64>,
    pub mean_e2e_latency_ms: Option<f64>,
    pub median_e2e_latency_ms: Option<f64>,
    pub p99_e2e_latency_ms: Option<f64>,
    /// Physical line where the summary block started (when read from the log).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// Per-request completions from SGLang `--log-requests` `Finish:` lines.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RequestStats {
    pub finished_requests: u64,
    pub received_requests: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    /// Seconds from the earliest request start (finish time − e2e latency) to the last
    /// finish, when the lines carry timestamps.
    pub window_s: Option<f64>,
    /// Completion tokens ÷ window: throughput counted at completion, as a client sees it.
    pub completion_tok_s: Option<f64>,
    pub e2e_latency_s: Option<Distribution>,
    pub ttft_s: Option<Distribution>,
    pub completion_tokens_per_request: Option<Distribution>,
}
