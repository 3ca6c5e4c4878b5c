//! The JSON contract: one serde type that the CLI prints and the page reads.
//!
//! Field names here are fixed once published: add fields freely, never rename or
//! drop one; bump [`SCHEMA_VERSION`] when a meaning changes. Fractions are 0..1,
//! throughput in tokens/s, times in seconds.

use serde::Serialize;
use std::collections::BTreeMap;

pub mod client;
pub mod compare;
pub mod config;
pub mod diagnosis;
pub mod input;
pub mod reconciliation;
pub mod roofline;
pub mod timeline;
pub mod what_if;

pub use crate::model::Distribution;
pub use client::{ClientFigures, RequestStats};
pub use compare::{
    Comparison, Effect, PerRequest, PredictionCheck, SettingChange, Side, Workload,
    COMPARE_SCHEMA_VERSION,
};
pub use config::ServerConfig;
pub use diagnosis::{
    Action, Diagnosis, Evidence, Facts, Finding, Kind, LeverOutcome, NotAssessed, RankFigures,
};
pub use input::{CustomFormat, FileFormat, OtherServer};
pub use reconciliation::{Part, Reconciliation};
pub use roofline::{EngineReported, Roofline, RooflineSource};
pub use timeline::{Gap, Point, StepSums};
pub use what_if::{Baseline, Change, Prediction, RestartCheck, WhatIf};

/// 2: in a log with several server runs (a restart starts the next), the
/// top-level figures describe one run — the last, unless it is too short to
/// judge — and `runs` lists every run (1 combined them all).
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    pub schema_version: u32,
    /// `sglang`, `vllm`, `lmdeploy`, `trtllm`, or `unknown` when no stats line was recognised.
    pub engine: String,
    pub input: InputStats,
    /// Seconds between the first and the last timestamped stats line.
    pub span_seconds: f64,
    /// Seconds with work in flight (running or queued requests).
    pub busy_seconds: f64,
    /// Seconds the server sat idle: gaps between stats lines and lines with nothing running or queued.
    pub idle_seconds: f64,
    /// Timestamps as the log printed them (first and last stats line).
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    pub config: ServerConfig,
    pub summary: Summary,
    /// One entry per rank / engine that printed stats lines.
    pub sources: Vec<SourceSummary>,
    pub events: EventSummary,
    /// Bounded series for charts: at most [`crate::timeline::series::MAX_BUCKETS`] points per series.
    pub timeline: TimelineReport,
    /// What limits throughput, with evidence and actions.
    pub diagnosis: Option<Diagnosis>,
    /// Every server run in the log, in order, when it holds more than one: the
    /// rest of the report (but `input` and `events.restarts`) describes the one
    /// marked `analyzed`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunSummary>,
    /// Runs not in `runs`: past [`crate::timeline::MAX_RUNS_LISTED`] the oldest
    /// are not listed (but the one asked for); `events.restarts` + 1 runs in all.
    #[serde(skip_serializing_if = "is_zero")]
    pub runs_not_listed: u64,
    /// When the judged run follows a restart with other settings: what the model
    /// fitted on the run before predicted for them, and what the judged run measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart_check: Option<RestartCheck>,
    /// Predicted effect of the requested changes (`--what-if`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_if: Option<WhatIf>,
    /// Server-side versus client-side throughput (`--client…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<Reconciliation>,
    /// The client's benchmark figures (summary block in the log, `--client` file or flags).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientFigures>,
    /// Per-request completions from SGLang `--log-requests` `Finish:` lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestStats>,
    /// Achieved HBM bandwidth and FLOPs against the GPU's peaks (`--gpu`, `--model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roofline: Option<Roofline>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct InputStats {
    pub bytes: u64,
    /// Physical lines (a final line without a newline counts).
    pub lines: u64,
    /// Stats lines read in full.
    pub stat_lines: u64,
    /// Lines that are recognisably stats lines but could not be read in full (cut, spliced, wrapped).
    pub damaged_stat_lines: u64,
    /// Known lines that are not stats lines (startup, access log, retraction, progress bars…).
    pub other_lines: u64,
    pub unrecognized_lines: u64,
    /// Stats lines by kind (`decode`, `prefill`, `interval`).
    pub stat_lines_by_kind: BTreeMap<String, u64>,
    /// Other lines by kind (`access_log`, `startup`, `retraction`, `progress_bar`, …).
    pub other_lines_by_kind: BTreeMap<String, u64>,
    /// Physical lines that held more than one record (missing newlines).
    pub glued_records: u64,
    /// Physical lines joined back to the line before them (terminal hard wraps).
    pub joined_wrapped_lines: u64,
    /// Lines longer than the parser keeps; their tail was not read.
    pub overlong_lines: u64,
    /// Lines read from the text field of a JSON record (Docker's `json-file`
    /// driver, journald's JSON export, log collectors) rather than as they were.
    #[serde(skip_serializing_if = "is_zero")]
    pub json_records: u64,
    /// Records or lines that went on the line before: Docker's `json-file`
    /// driver and Kubernetes' CRI logs cut a line longer than 16 KiB into pieces, joined back.
    #[serde(skip_serializing_if = "is_zero")]
    pub joined_pieces: u64,
    /// Times the log's clock went backwards (rotated or concatenated logs).
    pub clock_regressions: u64,
    /// A few unrecognised lines that look like stats lines, so a new format can be reported.
    pub unrecognized_examples: Vec<LineExample>,
    /// A few damaged stats lines.
    pub damaged_examples: Vec<LineExample>,
    /// Whether the bytes look like text at all.
    pub looks_binary: bool,
    /// The text encoding decoded, when not UTF-8 (`utf-16le`, `utf-16be`: told by the byte-order mark).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// What binary input is, when its first bytes say (`xz`, `zip`, `tar`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary_format: Option<FileFormat>,
    /// Stats records per engine format: a file mixing engines shows both.
    pub stat_lines_by_engine: BTreeMap<String, u64>,
    /// The first line where the server said it turned its stats lines off
    /// (vLLM with more than one API server, or started with `--disable-log-stats`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats_disabled: Option<LineExample>,
    /// Another inference server whose lines the log holds (LMDeploy, TGI,
    /// llama.cpp, …), from the first lines no engine parser claims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_server: Option<OtherServer>,
    /// A file that shrank while it was read (truncated, as `logrotate`'s
    /// copytruncate does): the report covers only what was read of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_while_reading: Option<Truncation>,
    /// The line formats given with `--format-file`, and what each read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub custom_formats: Vec<CustomFormat>,
}

/// A file that shrank while it was read.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Truncation {
    /// The file as it was named.
    pub file: String,
    /// Its bytes read (compressed ones for gzip).
    pub bytes_read: u64,
    /// Its size when it was opened.
    pub bytes_at_open: u64,
}

impl InputStats {
    /// Physical lines accounted for: every line is a stats record (records split
    /// from one line count once), a known other line, an unrecognised one, or a
    /// wrapped tail joined to the line before. Equals `lines` for any input.
    pub fn accounted_lines(&self) -> u64 {
        self.stat_lines + self.damaged_stat_lines - self.glued_records
            + self.other_lines
            + self.unrecognized_lines
            + self.joined_wrapped_lines
            + self.joined_pieces
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LineExample {
    pub line: u64,
    /// The first 120 characters, lossily decoded.
    pub text: String,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Summary {
    /// Server-side generation throughput as printed on each decode/interval line (all ranks summed).
    pub gen_throughput_tok_s: Option<Distribution>,
    /// Prompt (prefill) throughput per line (all ranks summed).
    pub input_throughput_tok_s: Option<Distribution>,
    pub running_requests: Option<Distribution>,
    pub queued_requests: Option<Distribution>,
    /// KV usage, 0..1 (mean over ranks).
    pub kv_usage: Option<Distribution>,
    pub kv_tokens: Option<Distribution>,
    /// Tokens generated over the run, estimated as throughput × interval, summed.
    pub generated_tokens_estimate: f64,
    /// Generated tokens ÷ busy seconds: the sustained server-side generation rate.
    pub sustained_gen_tok_s: Option<f64>,
    /// Prompt tokens computed in prefill batches (when the engine logs them).
    pub prefill_tokens: u64,
    pub cached_prompt_tokens: u64,
    /// Retraction/preemption events (vLLM V0: from the cumulative counter).
    pub retractions: u64,
    /// Retracted/preempted requests, where the log gives a count.
    pub retracted_requests: u64,
    /// KV tokens freed by retractions (SGLang's `#new_tokens_gained`), prefilled again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retracted_tokens: Option<u64>,
    pub out_of_memory_events: u64,
    pub restarts: u64,
    /// Share of the server's time spent in iterations that prefill prompts, 0..1:
    /// only where the log times each iteration (TensorRT-LLM; vLLM with at least 20
    /// `Iteration(N)` step lines, as the share of their printed times).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_time_share: Option<f64>,
    /// Decode lines that say whether their step replayed a captured graph, those
    /// that say it did not, and the smallest batch among the latter.
    #[serde(skip)]
    pub graph_lines: u64,
    #[serde(skip)]
    pub graph_off_lines: u64,
    #[serde(skip)]
    pub graph_off_min_running: Option<u32>,
    /// The engine's own per-GPU estimates: sums and counts of the lines that carry them
    /// (decode GB/s, decode TFLOPS, prefill TFLOPS).
    #[serde(skip)]
    pub engine_estimates: [(f64, u64); 3],
    /// Speculative decoding: the sum and count of the log's figures of tokens a
    /// request commits per step (SGLang's `accept len`, vLLM's mean acceptance length).
    #[serde(skip)]
    pub accept_len: (f64, u64),
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SourceSummary {
    pub source: String,
    pub stat_lines: u64,
    pub gen_throughput_tok_s_mean: Option<f64>,
    pub running_requests_mean: Option<f64>,
    pub queued_requests_mean: Option<f64>,
    pub kv_usage_mean: Option<f64>,
}

/// One server run (from a startup to the next restart), in brief.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunSummary {
    /// 1-based, in log order.
    pub run: u32,
    /// The run's first line (its first startup line; 1 for the first run) and last stats line.
    pub first_line: u64,
    pub last_line: u64,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    pub span_seconds: f64,
    pub busy_seconds: f64,
    pub stat_lines: u64,
    /// Its decode (or interval) and prefill stats lines.
    pub decode_lines: u64,
    pub prefill_lines: u64,
    pub gen_throughput_tok_s_mean: Option<f64>,
    pub sustained_gen_tok_s: Option<f64>,
    pub running_requests_mean: Option<f64>,
    pub queued_requests_mean: Option<f64>,
    pub kv_usage_mean: Option<f64>,
    pub retractions: u64,
    pub out_of_memory: u64,
    pub crashes: u64,
    /// What the run's startup lines said.
    pub config: ServerConfig,
    /// Its first timestamp is earlier than the run before's last: not a restart
    /// but another server's log (or a rotated one) joined after it, most likely.
    pub starts_before_previous_ends: bool,
    /// The run the rest of the report describes.
    pub analyzed: bool,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct EventSummary {
    pub retractions: u64,
    pub preemptions: u64,
    pub out_of_memory: u64,
    /// Restarts in the whole log (each starts a run: see `Report::runs`).
    pub restarts: u64,
    pub crashes: u64,
    pub clock_jumps: u64,
    /// The first events, in log order (bounded).
    pub first: Vec<crate::model::Event>,
    /// What the engine calls evicting a running request (`retraction`, `preemption`,
    /// `pause`), for labels.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub eviction: String,
}

/// Time-bucketed series of the combined (all ranks) timeline.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TimelineReport {
    /// Width of one bucket, seconds.
    pub bucket_seconds: f64,
    pub points: Vec<Point>,
    /// Per source (rank / engine) series, when the log has several.
    pub per_source: Vec<SourceSeries>,
    /// Silences longer than [`crate::timeline::IDLE_GAP_S`] (the longest few, in log order).
    pub idle_gaps: Vec<Gap>,
    pub idle_gap_count: u64,
    /// Lines where the queue and the running count peaked.
    pub max_queued_line: Option<u64>,
    pub max_running_line: Option<u64>,
    /// The buckets' engine step times, where the log times its steps (not in the JSON).
    #[serde(skip)]
    pub steps: Vec<StepSums>,
    /// Back-to-back prefill batches (a prefill line whose source logged no decode line
    /// since its previous prefill line): the batch's prompt tokens and the seconds its
    /// line's input throughput covers, for SGLang's prefill lines (not in the JSON).
    #[serde(skip)]
    pub prefill_gaps: PrefillGaps,
    /// The records are engine iterations, each timed (TensorRT-LLM): a point's
    /// `gen_secs` is the time the server stepped, not the time between lines (not in
    /// the JSON).
    #[serde(skip)]
    pub iterations: bool,
}

/// Prefill batches timed by the gap since the previous prefill line, a bounded sample
/// of them (every `stride`-th once more were seen than are kept).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PrefillGaps {
    /// (prompt tokens, seconds) of each kept batch.
    pub pairs: Vec<(f32, f32)>,
    /// Mean prompt tokens of all the run's prefill batches.
    pub tokens_per_batch: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SourceSeries {
    pub source: String,
    pub points: Vec<Point>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
