//! The cap on running requests stops admission while requests wait.

use crate::diagnose::actions::{action, change, fp8_kv, lever, more_kv_memory, raised_cap};
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{
    concurrency_evidence, ev, finish, kv_evidence, throughput_evidence,
};
use crate::report::{Action, Finding, Kind};
use crate::text::num::{num, pct};

pub fn running_limit(c: &Ctx, confidence: f64) -> Finding {
    let cap = c.cap.unwrap_or(c.run());
    let mut evidence = throughput_evidence(c);
    evidence.push(concurrency_evidence(c));
    evidence.push(ev(
        if c.cap_inferred {
            format!(
                "Running stays flat at {} — a hard ceiling (e.g. a max_running_requests / max_num_seqs setting, or speculative decoding's small default) — while requests wait",
                num(cap)
            )
        } else {
            format!("The configured cap on running requests is {}, and the run sits at it", num(cap))
        },
        c.r.config.lines.iter().take(1).copied().chain(c.r.timeline.max_running_line).collect(),
    ));
    if let Some(e) = kv_evidence(c) {
        evidence.push(e);
    }
    Finding {
        kind: Kind::RunningRequestLimit,
        confidence,
        headline: format!(
            "{} requests run — the cap of {} — while {} wait with KV {} used: the running-request limit binds, {}",
            num(c.run()),
            num(cap),
            num(c.queued()),
            c.kv().map(pct).unwrap_or_else(|| "not".into()),
            if c.kv_tight() {
                "and the pool is nearly full too"
            } else {
                "not memory"
            }
        ),
        evidence: finish(c, evidence),
        actions: actions(c),
        predicted_gain: None,
    }
}

fn actions(c: &Ctx) -> Vec<Action> {
    if c.kv_tight() && c.retracts_often() {
        // The pool already overflows at this cap: a higher one would only add
        // retractions (and undo fewer sequences); the pool has to grow first.
        let mut v = vec![more_kv_memory(c)];
        v.extend(fp8_kv(c));
        return v;
    }
    let target = raised_cap(c);
    let levers = &c.p.levers;
    let spec = c.r.config.speculative_algorithm.is_some();
    let words = &levers.raise_cap;
    let why = if c.kv_tight() {
        words.kv_tight
    } else {
        words.speculative.filter(|_| spec).unwrap_or(words.room)
    };
    let mut v = vec![action(
        c,
        "raise_running_cap",
        format!("{} {}", levers.running_cap, num(target)),
        why.to_string(),
        &[change("max_running", target)],
        "",
    )];
    if let Some(l) = &levers.with_cap {
        v.push(lever(c, l, &num(target), "", &[]));
    }
    v
}
