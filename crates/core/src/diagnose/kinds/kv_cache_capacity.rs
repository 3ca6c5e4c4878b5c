//! The KV pool (used, plus reserved where admission reserves) admits no more.

use crate::diagnose::actions::{action, change, client_concurrency, fp8_kv, more_kv_memory};
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{
    concurrency_evidence, ev, finish, kv_evidence, runs_while, throughput_evidence,
};
use crate::report::{Action, Finding, Kind};
use crate::text::num::{num, pct};

pub fn kv_capacity(c: &Ctx, confidence: f64) -> Finding {
    let kv = c.kv().unwrap_or(0.0);
    let mut evidence = throughput_evidence(c);
    evidence.push(concurrency_evidence(c));
    if let Some(e) = kv_evidence(c) {
        evidence.push(e);
    }
    if c.sglang && kv < 0.9 && c.waiting() {
        evidence.push(ev(
            format!(
                "Usage sits at {} yet nothing more is admitted: SGLang admits a request only if the pool can also hold the future tokens it reserves for running requests (new_token_ratio × remaining max_new_tokens), so the pool is full once reservations are counted",
                pct(kv)
            ),
            c.line(),
        ));
    }
    if c.trtllm_reserves && kv < 0.9 && c.waiting() {
        let budget = c
            .prompt_budget_use()
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
                "Usage sits at {} yet nothing more is admitted: TensorRT-LLM's default policy (GUARANTEED_NO_EVICT) admits a request only if the pool can hold its prompt and all of its max_tokens, so the pool is full once reservations are counted{budget}",
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
            if c.sglang || c.trtllm_reserves {
                " plus reserved"
            } else {
                ""
            }
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
    // A TensorRT-LLM pool full of reservations admits more with smaller ones at
    // once, where more memory adds a few percent: those come first.
    let mut v = if c.trtllm_reserves {
        trtllm_reservations(c)
    } else {
        Vec::new()
    };
    v.push(more_kv_memory(c));
    v.extend(fp8_kv(c));
    if c.sglang {
        let kv_gb = host_tier_gb(c);
        v.push(action(
            c,
            "hierarchical_cache",
            format!("--enable-hierarchical-cache --hicache-size {}", num(kv_gb)),
            "A host-memory tier behind the GPU pool keeps evicted prefixes (system prompts, earlier turns) in CPU RAM and loads them back instead of recomputing; it helps most when prompts share prefixes".to_string(),
            &[],
            "more prefix-cache hits and shorter prefills; the GPU pool for running requests stays the same size",
        ));
        if c.kv().is_some_and(|u| u < 0.9) && c.waiting() && !c.retracts_often() {
            let cur = c.r.config.schedule_conservativeness.unwrap_or(1.0);
            let t = (cur * 0.3).max(0.1);
            v.push(action(
                c,
                "schedule_conservativeness",
                format!("--schedule-conservativeness {t:.1}"),
                "The pool looks full only because of what SGLang reserves for future tokens. A lower conservativeness reserves less and admits more requests; if they then outgrow the pool, requests are retracted (about one retraction per minute is fine)".to_string(),
                &[change("schedule_conservativeness", t)],
                "risk: retractions if outputs run long",
            ));
        }
    } else if c.trtllm {
        let kv_bytes = host_tier_gb(c) * 1e9;
        v.push(action(
            c,
            "host_kv_cache",
            // A YAML integer: no separators.
            format!("kv_cache_config.host_cache_size: {kv_bytes:.0} (in the YAML of --extra_llm_api_options)"),
            "A host-memory tier behind the GPU blocks (in bytes) keeps reusable blocks of evicted prefixes in CPU RAM instead of dropping them; it helps most when prompts share prefixes".to_string(),
            &[],
            "more block reuse and shorter prefills; the GPU pool for running requests stays the same size",
        ));
        v.push(action(
            c,
            "tensor_parallel",
            "--tp_size 2 (or more GPUs per replica)".to_string(),
            "Sharding the model over more GPUs frees memory per GPU for KV cache".to_string(),
            &[],
            "roughly doubles the KV pool per replica",
        ));
    } else {
        v.push(action(
            c,
            "tensor_parallel",
            if c.lmdeploy {
                "--tp 2 (or more GPUs per replica)"
            } else {
                "--tensor-parallel-size 2 (or more GPUs per replica)"
            }
            .to_string(),
            "Sharding the model over more GPUs frees memory per GPU for KV cache".to_string(),
            &[],
            "roughly doubles the KV pool per replica",
        ));
        if c.r.config.prefix_caching != Some(true) {
            v.push(action(
                c,
                "prefix_caching",
                "--enable-prefix-caching".to_string(),
                "Requests that share a prefix then share its KV blocks instead of storing copies"
                    .to_string(),
                &[],
                "helps only when prompts share prefixes",
            ));
        }
    }
    if c.waiting() {
        // What the server actually admits: with SGLang's or TensorRT-LLM's
        // reservations that is the running count.
        let h = if c.sglang || c.trtllm_reserves {
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

/// TensorRT-LLM's default policy, GUARANTEED_NO_EVICT, admits a request only when
/// the pool can hold its prompt and all of its max_tokens (a whole max_seq_len
/// when the request sets none): while the pool is not full of tokens, it is full
/// of reservations, and smaller ones, or none, admit more.
fn trtllm_reservations(c: &Ctx) -> Vec<Action> {
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
            c.kv().map(crate::text::num::pct).unwrap_or_default()
        ),
        &[],
        "more requests admitted at once, as many as the reservations shrink",
    ));
    v.push(action(
        c,
        "capacity_scheduler_policy",
        "scheduler_config.capacity_scheduler_policy: MAX_UTILIZATION (in the YAML of --extra_llm_api_options)".to_string(),
        "Admit as many requests as the blocks in use allow instead of reserving every request's whole length; if outputs then outgrow the pool, requests are paused and resumed".to_string(),
        &[],
        "risk: paused requests if outputs run long",
    ));
    v
}
