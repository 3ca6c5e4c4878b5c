//! Part of the JSON contract (see the module above): serde types only.

use serde::Serialize;

/// The fixed vocabulary of bottleneck kinds (the `kind` values in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    KvCacheCapacity,
    RunningRequestLimit,
    ClientUnderload,
    PrefillHeavy,
    KvRetraction,
    DecodeSaturated,
    InsufficientData,
    /// The server holds or runs requests but generates almost nothing for a sustained
    /// stretch: a hang or a crawl no batch size explains, not a capacity limit.
    Stalled,
    /// Data-parallel ranks (or engines) are unevenly loaded: requests wait on some
    /// while others have room.
    RankImbalance,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Diagnosis {
    pub primary: Finding,
    /// Every finding, strongest first (the primary included).
    pub findings: Vec<Finding>,
    /// Figures derived from the timeline that the findings draw on.
    pub facts: Facts,
    /// The counterfactuals the verdict follows: each lever relaxed (KV pool ×2, running cap
    /// ×2, the client's requests in flight ×2, prefill's cost ×½) and the steady throughput
    /// the fitted model predicts, strongest first; empty when the model cannot be fitted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub levers: Vec<LeverOutcome>,
    /// The checks the log could not support, so a reader knows the verdict's limits.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_assessed: Vec<NotAssessed>,
}

/// A check the log could not support.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NotAssessed {
    /// `queue`, `capacity`, `prefill`, `ranks`, `bursts`.
    pub check: &'static str,
    /// Why not, in words.
    pub why: String,
}

/// One data-parallel rank (or engine) over the judged window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RankFigures {
    /// The rank as the log names it (`DP1`, `Engine 001`).
    pub source: String,
    pub stat_lines: u64,
    pub running_requests: Option<f64>,
    pub queued_requests: Option<f64>,
    pub kv_usage: Option<f64>,
    pub gen_tok_s: Option<f64>,
    /// What the rank would generate with the queued requests spread evenly, as its
    /// own step model predicts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balanced_gen_tok_s: Option<f64>,
}

/// One lever relaxed, as the model predicts it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LeverOutcome {
    /// `kv_pool`, `running_cap`, `client_concurrency`, `prefill_cost`.
    pub lever: &'static str,
    /// The change asked of the model (as `--what-if` takes it).
    pub changes: Vec<super::what_if::Change>,
    /// Predicted steady throughput over today's, minus one (0.4 = +40 %).
    pub predicted_gain: f64,
    pub predicted: super::what_if::Prediction,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Finding {
    pub kind: Kind,
    /// 0..1
    pub confidence: f64,
    /// One sentence with numbers.
    pub headline: String,
    pub evidence: Vec<Evidence>,
    pub actions: Vec<Action>,
    /// What relaxing this finding's lever is predicted to buy: steady throughput over
    /// today's, minus one (0.4 = +40 %); for `decode_saturated`, the best any lever buys.
    /// Absent where the finding names no lever or the model cannot be fitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_gain: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Evidence {
    pub statement: String,
    /// Representative log lines (1-based).
    pub lines: Vec<u64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Action {
    pub id: String,
    /// The exact flag(s) for the engine at hand.
    pub flag: String,
    pub why: String,
    /// Expected effect in words, with numbers where they can be derived.
    pub effect: String,
    /// Predicted effect, when the what-if model can compute it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted: Option<super::what_if::Prediction>,
    /// `predicted` as a gain over today's steady throughput (0.4 = +40 %).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_gain: Option<f64>,
}

/// Derived facts, all optional: the log decides what can be known.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Facts {
    /// Window judged (steady state), seconds from the first stats line.
    pub steady_start_s: Option<f64>,
    pub steady_end_s: Option<f64>,
    pub server_gen_tok_s: Option<f64>,
    pub running_requests: Option<f64>,
    pub queued_requests: Option<f64>,
    pub kv_usage: Option<f64>,
    pub per_request_tok_s: Option<f64>,
    pub kv_tokens_per_request: Option<f64>,
    pub pool_holds_requests: Option<f64>,
    pub prefill_time_share: Option<f64>,
    pub idle_fraction: Option<f64>,
    pub retractions_per_minute: Option<f64>,
    /// Prompt tokens ÷ (prompt + generated tokens) processed in the steady state.
    pub prefill_token_share: Option<f64>,
    /// Warm-up and drain cut from the judged window, seconds.
    pub warmup_s: Option<f64>,
    pub drain_s: Option<f64>,
    /// Configured cap on running requests, when known.
    pub running_cap: Option<f64>,
    /// Share of the prefill tokens spent recomputing retracted or preempted requests
    /// (0..1), where the log lets it be counted or bounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recompute_token_share: Option<f64>,
    /// Prompt and output tokens of evicted requests prefilled again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recomputed_tokens: Option<f64>,
    /// Each data-parallel rank's figures, where the log prints several ranks' lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankFigures>,
    /// Throughput the balanced ranks would add over today's (0.25 = +25 %).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_balance_gain: Option<f64>,
}
