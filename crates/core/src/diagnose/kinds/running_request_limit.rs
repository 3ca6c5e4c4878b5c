//! The cap on running requests stops admission while requests wait.

use crate::diagnose::actions::{
    action, batch_cap_flag, change, fp8_kv, more_kv_memory, raised_cap, running_cap_flag,
};
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
    let mut v = Vec::new();
    if c.sglang {
        let spec = c.r.config.speculative_algorithm.is_some();
        v.push(action(
            c,
            "raise_running_cap",
            format!("{} {}", running_cap_flag(c), num(target)),
            if c.kv_tight() {
                "The cap stops admission, but the KV pool is nearly full too: a higher cap admits only what the pool can hold, so grow the pool with it (FP8 KV cache, more memory)".to_string()
            } else if spec {
                "Speculative decoding lowers the default max_running_requests (e.g. 32 for EAGLE); with KV to spare, a higher cap lets more requests decode at once".to_string()
            } else {
                "The cap, not memory, stops admission; the KV pool has room for more running requests".to_string()
            },
            &[change("max_running", target)],
            "",
        ));
        v.push(action(
            c,
            "cuda_graph_bs",
            format!("--cuda-graph-max-bs {}", num(target)),
            "Keep CUDA graphs covering the larger batch, or decode steps above the captured size run eagerly and slower".to_string(),
            &[],
            "",
        ));
    } else {
        // vLLM and LMDeploy: a batch cap and a KV remedy of their own names.
        let (what, kv_remedy, units) = if c.lmdeploy {
            (
                "max_batch_size",
                "int8 KV cache, higher cache_max_entry_count",
                "requests",
            )
        } else if c.trtllm {
            (
                "max_batch_size",
                "FP8 KV cache, higher free_gpu_memory_fraction",
                "requests",
            )
        } else {
            (
                "max_num_seqs",
                "FP8 KV cache, higher gpu_memory_utilization",
                "sequences",
            )
        };
        v.push(action(
            c,
            "raise_running_cap",
            format!("{} {}", batch_cap_flag(c), num(target)),
            if c.kv_tight() {
                format!("{what} caps the batch, but the KV cache is nearly full too: grow it with the cap ({kv_remedy})")
            } else {
                format!("{what} caps the batch; the KV cache has room for more {units}")
            },
            &[change("max_running", target)],
            "",
        ));
    }
    v
}
