//! The KV pool (used, plus reserved where admission reserves) admits no more.

use crate::diagnose::actions::{action, change, client_concurrency, fp8_kv, lever, more_kv_memory};
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{
    concurrency_evidence, ev, finish, kv_evidence, runs_while, throughput_evidence,
};
use crate::model::profile::TierSize;
use crate::report::{Action, Finding, Kind};
use crate::text::num::{num, pct};

pub fn kv_capacity(c: &Ctx, confidence: f64) -> Finding {
    let kv = c.kv().unwrap_or(0.0);
    let mut evidence = throughput_evidence(c);
    evidence.push(concurrency_evidence(c));
    if let Some(e) = kv_evidence(c) {
        evidence.push(e);
    }
    let held = kv < 0.9 && c.waiting() && c.reserves();
    if let Some(reservation) = c.p.reservation.filter(|_| held) {
        let budget = c
            .prompt_budget_use()
            .filter(|_| c.reserves_whole_requests())
            .map(|u| {
                format!(
                    "; iterations use {} of their {}-token prompt budget, so prefill does not hold admission back",
                    if u < 0.01 { "under 1%".to_string() } else { pct(u) },
                    num(c.r.config.max_batched_tokens.unwrap_or(8192) as f64)
                )
            })
            .unwrap_or_default();
        evidence.push(ev(
            format!(
                "Usage sits at {} yet nothing more is admitted: {reservation}{budget}",
                pct(kv)
            ),
            c.line(),
        ));
    }
    if let Some(m) = c.r.config.mem_fraction_static {
        let avail =
            c.r.config
                .available_gpu_mem_gb
                .map(|a| format!(", {a} GB of GPU memory left after the pool"))
                .unwrap_or_default();
        evidence.push(ev(
            format!("mem_fraction_static = {m}{avail}"),
            c.r.config.lines.iter().take(2).copied().collect(),
        ));
    }
    let headline = if c.waiting() {
        format!(
            "The KV cache pool binds: {} {} wait, and the pool ({} used{}) cannot admit more",
            runs_while(c.run()),
            num(c.queued()),
            pct(kv),
            if c.reserves() { " plus reserved" } else { "" }
        )
    } else {
        format!(
            "The KV cache is {} full with {} running requests: the pool, not compute, caps how many requests fit",
            pct(kv),
            num(c.run())
        )
    };
    Finding {
        kind: Kind::KvCacheCapacity,
        confidence,
        headline,
        evidence: finish(c, evidence),
        actions: actions(c),
        predicted_gain: None,
    }
}

/// The size of a host-memory KV tier to suggest, in GB: twice the GPU pool
/// where the log states its size, else 64.
fn host_tier_gb(c: &Ctx) -> f64 {
    c.r.config
        .kv_cache_gb
        .map(|g| (2.0 * g).ceil())
        .unwrap_or(64.0)
}

fn actions(c: &Ctx) -> Vec<Action> {
    let levers = &c.p.levers;
    // A pool full of whole-request reservations admits more with smaller ones at
    // once, where more memory adds a few percent: those come first.
    let mut v = if c.reserves_whole_requests() {
        whole_request_reservations(c)
    } else {
        Vec::new()
    };
    v.push(more_kv_memory(c));
    v.extend(fp8_kv(c));
    if let Some(tier) = &levers.host_tier {
        let gb = host_tier_gb(c);
        let size = match tier.size {
            TierSize::Gigabytes => num(gb),
            TierSize::Bytes => format!("{:.0}", gb * 1e9),
        };
        v.push(lever(c, &tier.lever, &size, "", &[]));
    }
    if let Some(k) = &levers.conservativeness {
        if c.kv().is_some_and(|u| u < 0.9) && c.waiting() && !c.retracts_often() {
            let cur = c.r.config.schedule_conservativeness.unwrap_or(k.default);
            let t = (cur * 0.3).max(0.1);
            v.push(lever(
                c,
                &k.lower,
                &format!("{t:.1}"),
                "",
                &[change("schedule_conservativeness", t)],
            ));
        }
    }
    if let Some(flag) = levers.tensor_parallel {
        v.push(action(
            c,
            "tensor_parallel",
            flag.to_string(),
            "Sharding the model over more GPUs frees memory per GPU for KV cache".to_string(),
            &[],
            "roughly doubles the KV pool per replica",
        ));
    }
    if let Some(flag) = levers.prefix_caching {
        if c.r.config.prefix_caching != Some(true) {
            v.push(action(
                c,
                "prefix_caching",
                flag.to_string(),
                "Requests that share a prefix then share its KV blocks instead of storing copies"
                    .to_string(),
                &[],
                "helps only when prompts share prefixes",
            ));
        }
    }
    if c.waiting() {
        // What the server actually admits: where admission reserves, that is the running count.
        let h = if c.reserves() {
            Some(c.run())
        } else {
            c.facts.pool_holds_requests.or(Some(c.run()))
        };
        if let Some(h) = h.filter(|h| *h >= 1.0) {
            v.push(client_concurrency(
                c,
                h * 1.1,
                format!(
                    "The pool admits ~{} requests of this size at once: a tenth more in flight keeps it full, and sending more than that only lengthens the queue (same throughput, longer time to first token)",
                    num(h)
                ),
            ));
        }
    }
    v
}

/// Admission that reserves each request's prompt and all of its max_tokens (a
/// whole max_seq_len when the request sets none): while the pool is not full of
/// tokens, it is full of reservations, and smaller ones, or none, admit more.
fn whole_request_reservations(c: &Ctx) -> Vec<Action> {
    let mut v = Vec::new();
    if !(c.waiting() && c.kv().is_some_and(|u| u < 0.9)) {
        return v;
    }
    v.push(action(
        c,
        "max_tokens",
        "client: set max_tokens on every request, near the longest output you need".to_string(),
        format!(
            "The scheduler reserves each request's prompt plus its max_tokens before admitting it — a whole max_seq_len{} when the request sets none — so the pool is full of reservations at {} of it used",
            c.r.config
                .context_length
                .map(|l| format!(" ({})", num(l as f64)))
                .unwrap_or_default(),
            c.kv().map(pct).unwrap_or_default()
        ),
        &[],
        "more requests admitted at once, as many as the reservations shrink",
    ));
    if let Some(policy) = &c.p.levers.capacity_policy {
        v.push(lever(c, &policy.admit_on_blocks, "", "", &[]));
    }
    v
}
