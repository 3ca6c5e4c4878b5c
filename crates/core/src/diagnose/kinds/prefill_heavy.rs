//! Prefill (prompt processing) is where the time goes, or what holds admission back.

use crate::diagnose::actions::action;
use crate::diagnose::context::{prefill_time_dominates, Ctx};
use crate::diagnose::evidence::{
    concurrency_evidence, ev, finish, kv_evidence, throughput_evidence,
};
use crate::report::{Action, Finding, Kind};
use crate::text::num::{count, num, pct};

pub fn prefill(c: &Ctx, confidence: f64) -> Finding {
    let mut evidence = throughput_evidence(c);
    let s = &c.r.summary;
    if c.queued() > 0.0 || c.run() > 0.0 {
        evidence.push(concurrency_evidence(c));
    }
    if let Some(i) = s.input_throughput_tok_s {
        let gen = s
            .gen_throughput_tok_s
            .map(|g| format!(" vs {} tok/s generated", num(g.mean)))
            .unwrap_or_default();
        evidence.push(ev(
            format!(
                "Prompt processing runs at {} tok/s on average{}",
                num(i.mean),
                gen
            ),
            c.line(),
        ));
    }
    if let Some(share) = c.facts.prefill_time_share {
        evidence.push(ev(
            format!(
                "Iterations that prefill prompts take {} of the server's time, as the log times them",
                pct(share)
            ),
            Vec::new(),
        ));
    }
    if c.prefill_lines > 0 {
        evidence.push(ev(
            format!(
                "{} and {}; {} prompt tokens computed, {} reused from the prefix cache",
                count(c.prefill_lines as f64, "prefill batch", "prefill batches"),
                count(c.decode_lines as f64, "decode line", "decode lines"),
                num(s.prefill_tokens as f64),
                num(s.cached_prompt_tokens as f64)
            ),
            Vec::new(),
        ));
    }
    if let Some(e) = kv_evidence(c) {
        evidence.push(e);
    }
    let stalled =
        c.r.summary
            .gen_throughput_tok_s
            .is_some_and(|g| g.max < 1.0);
    let headline = if !c.has_decode {
        format!(
            "Prefill is all the log shows: {}, {} requests waiting on average, no decode lines — prompt processing is where the time goes",
            count(c.prefill_lines as f64, "prefill batch", "prefill batches"),
            num(c.queued())
        )
    } else if stalled {
        format!("Requests are running ({}) but almost no tokens are generated: a long prefill is in progress", num(c.run()))
    } else if c.stat_lines >= 20 && prefill_time_dominates(c) {
        format!(
            "Prefill takes most of the server's time: prompts outweigh generated tokens {}:1, so {} running requests decode at only {} tok/s each{}",
            num(c.facts.prefill_token_share.map(|s| s / (1.0 - s).max(1e-9)).unwrap_or(0.0)),
            num(c.run()),
            num(c.facts.per_request_tok_s.unwrap_or(0.0)),
            if c.waiting() {
                format!(" and {} requests wait", num(c.queued()))
            } else {
                String::new()
            }
        )
    } else {
        format!(
            "Admission is limited by prefill: {} requests wait while {} run and KV is only {} used",
            num(c.queued()),
            num(c.run()),
            c.kv().map(pct).unwrap_or_else(|| "lightly".into())
        )
    };
    Finding {
        kind: Kind::PrefillHeavy,
        confidence,
        headline,
        evidence: finish(c, evidence),
        actions: actions(c),
    }
}

fn actions(c: &Ctx) -> Vec<Action> {
    let mut v = Vec::new();
    let cfg = &c.r.config;
    if c.sglang {
        let cur = cfg.chunked_prefill_size.filter(|v| *v > 0).unwrap_or(8192);
        v.push(action(
            c,
            "chunked_prefill",
            format!("--chunked-prefill-size {}", cur * 2),
            format!("Each prefill batch takes at most {cur} tokens; larger chunks admit waiting requests faster when memory allows (smaller ones if prefill runs out of memory)"),
            &[],
            "faster admission of long prompts",
        ));
        v.push(action(
            c,
            "mixed_chunk",
            "--enable-mixed-chunk".to_string(),
            "Run prefill chunks together with decode steps, so running requests keep generating while new ones are admitted".to_string(),
            &[],
            "",
        ));
        if c.r.summary.cached_prompt_tokens > 0 {
            v.push(action(
                c,
                "lpm",
                "--schedule-policy lpm".to_string(),
                "Prompts share prefixes (the log shows cached tokens): longest-prefix-match scheduling raises cache hits and skips recomputation".to_string(),
                &[],
                "",
            ));
        }
        v.push(action(
            c,
            "more_replicas",
            "--dp-size 2 (or prefill/decode disaggregation: --disaggregation-mode prefill|decode)"
                .to_string(),
            "More prefill compute: data-parallel replicas, or dedicated prefill servers"
                .to_string(),
            &[],
            "",
        ));
    } else if c.trtllm {
        if let Some(share) = c
            .facts
            .prefill_time_share
            .filter(|_| prefill_time_dominates(c))
        {
            // Prefill is busy, not held back: a larger budget only makes its iterations longer.
            v.push(action(
                c,
                "more_replicas",
                "another replica behind the load balancer (or disaggregated serving: context and generation servers apart)".to_string(),
                format!(
                    "Iterations that prefill take {} of the time: the GPU is busy with prompts, so more prefill compute, not more room for requests, raises throughput",
                    crate::text::num::pct(share)
                ),
                &[],
                "throughput up about in proportion to the prefill compute added",
            ));
        }
        let cur = cfg.max_batched_tokens.unwrap_or(8192);
        v.push(action(
            c,
            "batched_tokens",
            format!("--max_num_tokens {}", cur * 2),
            format!("Each iteration schedules at most {cur} tokens; a larger budget admits long prompts in fewer iterations"),
            &[],
            "",
        ));
        v.push(action(
            c,
            "chunked_prefill",
            "--enable_chunked_prefill".to_string(),
            "Split long prompts into chunks that run beside decode steps, so they neither stall running requests nor wait for a whole-prompt budget".to_string(),
            &[],
            "",
        ));
    } else if c.lmdeploy {
        let cur = cfg.max_prefill_tokens.unwrap_or(8192);
        v.push(action(
            c,
            "prefill_tokens",
            format!("--max-prefill-token-num {}", cur * 2),
            format!("Each prefill step takes at most {cur} tokens; a larger budget admits long prompts in fewer steps"),
            &[],
            "",
        ));
        v.extend(reuse_prefixes(c));
    } else {
        let cur = cfg.max_batched_tokens.unwrap_or(8192);
        v.push(action(
            c,
            "batched_tokens",
            format!("--max-num-batched-tokens {}", cur * 2),
            format!("Each step processes at most {cur} tokens; a larger budget admits long prompts in fewer steps"),
            &[],
            "",
        ));
        v.extend(reuse_prefixes(c));
        v.push(action(
            c,
            "chunked_prefill",
            "--enable-chunked-prefill".to_string(),
            "Interleave prompt chunks with decode steps so long prompts do not stall running requests".to_string(),
            &[],
            "",
        ));
    }
    v
}

/// Prefix caching, where the log does not say it is on (vLLM, LMDeploy).
fn reuse_prefixes(c: &Ctx) -> Option<Action> {
    (c.r.config.prefix_caching != Some(true)).then(|| {
        action(
            c,
            "prefix_caching",
            "--enable-prefix-caching".to_string(),
            "Reuse the KV of shared prompt prefixes instead of recomputing them".to_string(),
            &[],
            "",
        )
    })
}
