//! One finding per bottleneck kind: its headline, evidence and actions.

use super::actions;
use super::context::{prefill_time_dominates, Ctx};
use super::evidence::{
    concurrency_evidence, ev, finish, kv_evidence, runs_while, throughput_evidence,
};
use crate::model::EventKind;
use crate::report::{Finding, Kind};
use crate::text::num::{count, num, pct};

pub(super) fn retraction(c: &Ctx, confidence: f64) -> Finding {
    let s = &c.r.summary;
    let lines: Vec<u64> =
        c.r.events
            .first
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::Retraction { .. } | EventKind::Preemption { .. }
                )
            })
            .map(|e| e.line)
            .take(4)
            .collect();
    let rate = c.facts.retractions_per_minute;
    let per_min = |fmt: &str| rate.map(|r| fmt.replace("{}", &num(r))).unwrap_or_default();
    let (event, what) = if c.sglang {
        ("retraction", "retracted")
    } else if c.trtllm {
        // TensorRT-LLM's word: its scheduler pauses requests to free blocks.
        ("pause", "paused")
    } else {
        ("preemption", "preempted")
    };
    let mut evidence = throughput_evidence(c);
    evidence.push(ev(
        format!(
            "{} {} event{}{}, {} request(s) {}: their KV is freed, their tokens recomputed, and they go back to the queue",
            num(s.retractions as f64),
            event,
            if s.retractions == 1 { "" } else { "s" },
            per_min(" ({} per minute of busy time)"),
            num(s.retracted_requests.max(s.retractions) as f64),
            what
        ),
        lines,
    ));
    if let Some(d) = s.kv_usage {
        evidence.push(ev(
            format!("KV usage peaks at {} (mean {})", pct(d.max), pct(d.mean)),
            c.line(),
        ));
    }
    if c.sglang && rate.is_some_and(|r| r < 1.0) {
        evidence.push(ev(
            "SGLang's tuning guide: about one retraction per minute is acceptable; more means admission is too optimistic".to_string(),
            Vec::new(),
        ));
    }
    Finding {
        kind: Kind::KvRetraction,
        confidence,
        headline: format!(
            "The KV pool overflows: running requests were {} {}{}, {}",
            what,
            if s.retractions == 1 {
                "once".to_string()
            } else {
                format!("{} times", num(s.retractions as f64))
            },
            per_min(" ({} per minute)"),
            if c.sglang && rate.is_some_and(|r| r < 1.0) {
                "fewer than the one a minute SGLang's tuning guide calls fine"
            } else {
                "wasting work and delaying them"
            }
        ),
        evidence: finish(c, evidence),
        actions: actions::retraction(c),
        predicted_gain: None,
    }
}

pub(super) fn running_limit(c: &Ctx, confidence: f64) -> Finding {
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
        actions: actions::running_limit(c),
        predicted_gain: None,
    }
}

pub(super) fn kv_capacity(c: &Ctx, confidence: f64) -> Finding {
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
        actions: actions::kv_capacity(c),
        predicted_gain: None,
    }
}

pub(super) fn prefill(c: &Ctx, confidence: f64) -> Finding {
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
        actions: actions::prefill(c),
        predicted_gain: None,
    }
}

pub(super) fn decode_saturated(c: &Ctx, confidence: f64) -> Finding {
    let mut evidence = throughput_evidence(c);
    let per = c.facts.per_request_tok_s.unwrap_or(0.0);
    evidence.push(ev(
        format!(
            "{} requests share {} tok/s: {} tok/s per request",
            num(c.run()),
            num(c.w.gen_tok_s.unwrap_or(0.0)),
            num(per)
        ),
        c.line(),
    ));
    if let Some(m) = &c.model {
        evidence.push(ev(format!("Step-time model: {}", m.describe()), Vec::new()));
    }
    Finding {
        kind: Kind::DecodeSaturated,
        confidence,
        headline: format!(
            "Decode is saturated: {} running requests get {} tok/s each; a bigger batch would not add much — faster kernels, quantization or more GPUs would",
            num(c.run()),
            num(per)
        ),
        evidence: finish(c, evidence),
        actions: actions::decode_saturated(c),
        predicted_gain: None,
    }
}

pub(super) fn client(c: &Ctx, confidence: f64) -> Finding {
    let mut evidence = throughput_evidence(c);
    evidence.push(concurrency_evidence(c));
    if let Some(e) = kv_evidence(c) {
        evidence.push(e);
    }
    if let Some(f) = c.facts.idle_fraction.filter(|f| *f > 0.05) {
        let longest =
            c.r.timeline
                .idle_gaps
                .iter()
                .max_by(|a, b| a.seconds.total_cmp(&b.seconds));
        evidence.push(ev(
            format!(
                "The server sat idle {} of the time ({} silences over 30 s{})",
                pct(f),
                c.r.timeline.idle_gap_count,
                longest
                    .map(|g| format!(", the longest {}", crate::text::num::duration(g.seconds)))
                    .unwrap_or_default()
            ),
            c.r.timeline
                .idle_gaps
                .iter()
                .take(3)
                .map(|g| g.line)
                .collect(),
        ));
    }
    if c.w.drain_s > 0.15 * c.r.span_seconds {
        evidence.push(ev(
            format!(
                "The run ends with a {} drain: the queue is empty and running falls as the last requests finish",
                crate::text::num::duration(c.w.drain_s)
            ),
            Vec::new(),
        ));
    }
    if c.sglang {
        evidence.push(ev(
            "SGLang's tuning guide: #queue-req near 0 means the client submits too slowly; a healthy queue is 100–2000".to_string(),
            Vec::new(),
        ));
    }
    let idle_all = c.run() == 0.0 && c.queued() == 0.0;
    let headline = if idle_all {
        format!(
            "The server was idle: nothing ran or waited in {} stats lines",
            c.stat_lines
        )
    } else if c.client_fills_cap() {
        format!(
            "{} requests run — the cap of {} — and {}: the client keeps exactly as many in flight as the cap admits, so sending more would only queue and a higher cap would find nothing more to run; raise both together",
            num(c.run()),
            num(c.cap.unwrap_or(c.run())),
            if c.w.queued.is_none() {
                "the log does not say how many wait"
            } else {
                "nothing waits"
            }
        )
    } else if c.w.queued.is_none() {
        format!(
            "The server runs {} with KV {} used, and its log does not say how many wait: unless requests queue at the server, the client does not send enough concurrent work",
            count(c.run(), "request", "requests"),
            c.kv().map(pct).unwrap_or_else(|| "lightly".into())
        )
    } else {
        format!(
            "{}: the server runs {} with KV {} used — the client does not send enough concurrent work",
            if c.queued() >= 0.5 {
                format!("Few requests wait ({} on average)", num(c.queued()))
            } else {
                "Nothing waits".to_string()
            },
            count(c.run(), "request", "requests"),
            c.kv().map(pct).unwrap_or_else(|| "lightly".into())
        )
    };
    Finding {
        kind: Kind::ClientUnderload,
        confidence,
        headline,
        evidence: finish(c, evidence),
        actions: actions::client(c),
        predicted_gain: None,
    }
}
