//! Part of the JSON contract (see the module above): serde types only.

use serde::Serialize;

/// One chart point: the means of a bucket.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Point {
    /// Bucket start, seconds from the first stats line.
    pub t_s: f64,
    pub samples: u32,
    /// First log line that fell in the bucket.
    pub line: u64,
    pub running: Option<f64>,
    pub queued: Option<f64>,
    pub kv_usage: Option<f64>,
    pub gen_tok_s: Option<f64>,
    pub input_tok_s: Option<f64>,
    pub retractions: u32,
    /// Generated tokens over the seconds their lines' rates cover, where known:
    /// a rate over the whole bucket's time, which a mean of the lines' rates is
    /// not when their intervals differ.
    #[serde(skip)]
    pub gen_tokens: f64,
    #[serde(skip)]
    pub gen_secs: f64,
    /// Lines (rounds of lines) those figures come from.
    #[serde(skip)]
    pub gen_timed: u32,
    /// Lines whose rate covers a time the log does not give: a source's first line
    /// (rated since the server started, idle included) or the line after a silence.
    #[serde(skip)]
    pub untimed: u32,
    /// Prompt tokens prefilled within the intervals of `gen_secs` (SGLang's prefill
    /// lines between a rank's decode lines): prompt work counted, not rated.
    #[serde(skip)]
    pub prompt_tokens: f64,
}

/// Sums over the engine steps of a bucket starting at `t_s` (seconds from the first stats line) (vLLM's `Iteration(N)` lines), summed
/// over schedulers: a step is one scheduler's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepSums {
    pub t_s: f64,
    /// Steps that did work, and their seconds.
    pub steps: u32,
    pub secs: f64,
    /// Steps that only decoded: their seconds, requests and tokens.
    pub decode_steps: u32,
    pub decode_secs: f64,
    pub decode_requests: f64,
    pub decode_tokens: f64,
    /// Steps that prefilled prompts (and decoded the running requests beside
    /// them): their seconds and the prompt tokens they computed.
    pub prefill_steps: u32,
    pub prefill_secs: f64,
    pub prompt_tokens: f64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Gap {
    pub start_s: f64,
    pub seconds: f64,
    /// The line after the silence.
    pub line: u64,
}
