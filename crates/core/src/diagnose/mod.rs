//! From the timeline to a verdict: what limits throughput, the evidence, the fix.
//!
//! Rules follow the schedulers' mechanics, not any one log: a request waits
//! either because the KV pool (used + reserved) cannot take it, because a cap
//! on running requests is reached, or because admission (prefill) is slower
//! than arrival; when nothing waits, the client is the limit unless decode
//! itself is saturated. Retractions/preemptions are a finding of their own.

mod actions;
mod context;
mod evidence;
mod kinds;
mod rules;
pub use evidence::stats_disabled_why;
pub mod window;

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
}

impl Kind {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::KvCacheCapacity => "kv_cache_capacity",
            Kind::RunningRequestLimit => "running_request_limit",
            Kind::ClientUnderload => "client_underload",
            Kind::PrefillHeavy => "prefill_heavy",
            Kind::KvRetraction => "kv_retraction",
            Kind::DecodeSaturated => "decode_saturated",
            Kind::InsufficientData => "insufficient_data",
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Diagnosis {
    pub primary: Finding,
    /// Every finding, strongest first (the primary included).
    pub findings: Vec<Finding>,
    /// Figures derived from the timeline that the findings draw on.
    pub facts: Facts,
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
    pub predicted: Option<crate::whatif::Prediction>,
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
}

/// Diagnoses a report. Always gives a verdict; `insufficient_data` when the log cannot be judged.
pub fn diagnose(report: &crate::report::Report) -> Option<Diagnosis> {
    let ctx = context::Ctx::new(report);
    let mut findings = rules::findings(&ctx);
    findings.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(a.kind.cmp(&b.kind))
    });
    let primary = findings.first()?.clone();
    Some(Diagnosis {
        primary,
        findings,
        facts: ctx.facts.clone(),
    })
}
