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
mod faults;
mod kinds;
mod limits;
mod recompute;
mod rules;
mod verdict;
pub use evidence::stats_disabled_why;

use crate::report::{Diagnosis, Kind};

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
            Kind::Stalled => "stalled",
            Kind::RankImbalance => "rank_imbalance",
        }
    }
}

/// Why `--what-if` is not offered for this report, where it is not: a stalled server is
/// held up by something no setting of the batch reaches, so a prediction from its
/// fitted model would be a number about a server that does not step.
pub fn what_if_withheld(report: &crate::report::Report) -> Option<&'static str> {
    let d = report.diagnosis.as_ref()?;
    (d.primary.kind == Kind::Stalled).then_some(
        "not offered for a stalled server: no setting that grows the batch (pool, cap, concurrency, prefill) changes a server that does not step; the verdict says where to look",
    )
}

/// Diagnoses a report. Always gives a verdict; `insufficient_data` when the log cannot be judged.
pub fn diagnose(
    report: &crate::report::Report,
    profile: &'static crate::model::profile::Profile,
) -> Option<Diagnosis> {
    let ctx = context::Ctx::new(report, profile);
    let mut findings = rules::findings(&ctx);
    findings.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(a.kind.cmp(&b.kind))
    });
    // A stall is not a capacity verdict: the rules return it alone, and no lever is
    // weighed against it (nor its gains reported), since none changes a server that does
    // not step. Without levers, `choose` leaves the rules' findings as they are.
    let stalled = findings.iter().any(|f| f.kind == Kind::Stalled);
    let levers = match &ctx.model {
        Some(m) if !stalled => crate::analysis::levers::lever_gains(m, ctx.cap),
        _ => Vec::new(),
    };
    verdict::choose(&ctx, &mut findings, &levers);
    let primary = findings.first()?.clone();
    Some(Diagnosis {
        primary,
        findings,
        facts: ctx.facts.clone(),
        levers: verdict::outcomes(&levers),
        not_assessed: limits::not_assessed(&ctx),
    })
}
