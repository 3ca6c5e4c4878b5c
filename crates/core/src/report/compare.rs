//! Part of the JSON contract (see the module above): serde types only.
//!
//! `batchlens compare`: two server runs (two logs, or two runs of one log with a
//! restart) side by side, what changed between them, and whether the change or the
//! workload explains the difference.

use serde::Serialize;

use super::config::ServerConfig;
use super::what_if::Change;

/// Bumped when a field's meaning changes (fields are only ever added).
pub const COMPARE_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Comparison {
    pub schema_version: u32,
    pub before: Side,
    pub after: Side,
    /// The settings that differ between the two runs, in the order of
    /// `analysis::settings` (server settings first, then the client's requests in flight).
    pub changes: Vec<SettingChange>,
    pub workload: Workload,
    /// After's steady generation throughput over before's; `null` when a side has none.
    pub effect: Option<Effect>,
    /// The model fitted on `before`, asked about `after`'s settings; `null` when
    /// `before` has no steady state to fit it to.
    pub prediction_check: Option<PredictionCheck>,
    /// What the difference is credited to: `setting` (a changed setting on a similar
    /// workload), `workload` (the workloads differ), `none` (no change beyond the
    /// windows' spread), `unexplained` (a change no setting or workload figure accounts for).
    pub attribution: &'static str,
    /// Sentences that attribute the change, the workload's first when it differs.
    pub explanation: Vec<String>,
}

/// One run's judged steady window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Side {
    pub engine: String,
    /// The server run judged, when its log holds several (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
    pub config: ServerConfig,
    pub gen_throughput_tok_s: Option<f64>,
    pub running_requests: Option<f64>,
    pub queued_requests: Option<f64>,
    pub kv_usage: Option<f64>,
    /// The primary finding's kind (`kv_cache_capacity`, …), `null` without a diagnosis.
    pub verdict: Option<String>,
    /// The primary finding's headline.
    pub headline: Option<String>,
    /// The steady window, seconds from the run's first stats line.
    pub window_start_s: f64,
    pub window_end_s: f64,
    /// Requests in the server (running + waiting) over the window: what a client at a
    /// fixed concurrency keeps in flight.
    pub in_flight_requests: Option<f64>,
    /// The per-request figures the workload comparison reads (`null` where the log
    /// does not give them).
    pub per_request: PerRequest,
}

/// Per-request workload figures, estimated from what the log holds.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PerRequest {
    /// Prompt tokens per request and output tokens per request, where the log
    /// states them (a client summary, per-request completions) or they can be
    /// estimated from the prompt-to-output ratio and the KV held per request.
    pub prompt_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    /// Where those two figures come from: `client` (the benchmark summary),
    /// `requests` (SGLang `Finish:` lines), `kv` (KV held per running request and
    /// prompt tokens per generated token over the steady window).
    pub source: Option<String>,
    /// Prompt tokens prefilled per generated token over the steady window.
    pub prompt_per_output: Option<f64>,
    /// KV tokens held per running request over the steady window.
    pub kv_tokens_per_request: Option<f64>,
}

/// A setting that differs, in words (`?` where a run did not state it).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SettingChange {
    pub setting: String,
    pub before: String,
    pub after: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Workload {
    /// Same engine (and version where both state it), per-request prompt and output
    /// lengths within 15 %, and, when `before` was client-bound and a server setting
    /// changed, the same requests in flight.
    pub similar: bool,
    /// Each difference found, or what was compared when none was.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Effect {
    /// After's steady generation throughput over before's.
    pub gen_throughput_ratio: f64,
    /// About a 95 % range of that ratio, from the spread of both windows.
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PredictionCheck {
    /// The settings asked of the model (as `--what-if` takes them); empty when none
    /// the model knows changed, and the model then predicts `before` unchanged.
    pub changes: Vec<Change>,
    pub predicted_gen_tok_s: f64,
    pub low: f64,
    pub high: f64,
    pub predicted_running_requests: f64,
    pub measured_gen_tok_s: Option<f64>,
    /// Predicted over measured, minus one (0.05: the model expected 5 % more).
    pub error: Option<f64>,
    /// The measurement falls inside the predicted range.
    pub within_range: Option<bool>,
    /// What limits admission after the change, as the model sees it.
    pub bound_by: &'static str,
    pub notes: Vec<String>,
}
