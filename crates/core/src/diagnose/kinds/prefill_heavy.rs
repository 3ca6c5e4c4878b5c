//! Prefill (prompt processing) is where the time goes, or what holds admission back.

use crate::diagnose::actions::{action, lever};
use crate::diagnose::context::{prefill_time_dominates, Ctx};
use crate::diagnose::evidence::{
    concurrency_evidence, ev, finish, kv_evidence, throughput_evidence,
};
use crate::model::profile::{PrefillLever, TokenBudget};
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
        predicted_gain: None,
    }
}

fn actions(c: &Ctx) -> Vec<Action> {
    let cfg = &c.r.config;
    let mut v = Vec::new();
    for l in c.p.levers.prefill {
        match l {
            PrefillLever::Always(l) => v.push(lever(c, l, "", "", &[])),
            PrefillLever::Budget {
                lever: l,
                setting,
                default,
            } => {
                let cur = match setting {
                    TokenBudget::ChunkedPrefillSize => cfg
                        .chunked_prefill_size
                        .filter(|v| *v > 0)
                        .map(|v| v as u64),
                    TokenBudget::MaxPrefillTokens => cfg.max_prefill_tokens,
                    TokenBudget::MaxBatchedTokens => cfg.max_batched_tokens,
                }
                .unwrap_or(*default);
                let doubled = cur.saturating_mul(2).to_string();
                v.push(lever(c, l, &doubled, &cur.to_string(), &[]));
            }
            PrefillLever::SharedPrefixes(l) => {
                if c.r.summary.cached_prompt_tokens > 0 {
                    v.push(lever(c, l, "", "", &[]));
                }
            }
            PrefillLever::PrefixCaching => v.extend(reuse_prefixes(c)),
            PrefillLever::MoreCompute(l) => {
                if let Some(share) = c
                    .facts
                    .prefill_time_share
                    .filter(|_| prefill_time_dominates(c))
                {
                    v.push(lever(c, l, "", &pct(share), &[]));
                }
            }
        }
    }
    v
}

/// Prefix caching, where the engine has a flag for it and the log does not say it is on.
fn reuse_prefixes(c: &Ctx) -> Option<Action> {
    let flag = c.p.levers.prefix_caching?;
    (c.r.config.prefix_caching != Some(true)).then(|| {
        action(
            c,
            "prefix_caching",
            flag.to_string(),
            "Reuse the KV of shared prompt prefixes instead of recomputing them".to_string(),
            &[],
            "",
        )
    })
}
