//! The KV pool overflows: running requests are evicted (retracted, preempted,
//! paused) and recomputed.

use crate::diagnose::actions::{action, change, fp8_kv, lever, more_kv_memory};
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{ev, finish, throughput_evidence};
use crate::model::EventKind;
use crate::report::{Action, Finding, Kind};
use crate::text::num::{num, pct};

pub fn retraction(c: &Ctx, confidence: f64) -> Finding {
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
    let (event, what) = c.p.eviction;
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
    if let Some(t) = c.facts.recomputed_tokens {
        evidence.push(ev(
            match c.facts.recompute_token_share {
                Some(sh) => format!(
                    "Recomputation took ~{} of prefill work: ~{} tokens prefilled again ({} evicted × ~{} tokens each)",
                    pct(sh),
                    num(t),
                    num(s.retracted_requests.max(s.retractions) as f64),
                    num(c.facts.kv_tokens_per_request.unwrap_or(0.0))
                ),
                None => format!(
                    "~{} tokens prefilled again for the evicted requests ({} × ~{} tokens each)",
                    num(t),
                    num(s.retracted_requests.max(s.retractions) as f64),
                    num(c.facts.kv_tokens_per_request.unwrap_or(0.0))
                ),
            },
            Vec::new(),
        ));
    }
    if let Some(d) = s.kv_usage {
        evidence.push(ev(
            format!("KV usage peaks at {} (mean {})", pct(d.max), pct(d.mean)),
            c.line(),
        ));
    }
    // Fewer than about one a minute, as the engine's tuning guide counts them.
    let fine = c.p.guide.as_ref().filter(|_| rate.is_some_and(|r| r < 1.0));
    if let Some(g) = fine {
        evidence.push(ev(g.few_evictions.to_string(), Vec::new()));
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
            match fine {
                Some(g) => g.few_evictions_headline,
                None => "wasting work and delaying them",
            }
        ),
        evidence: finish(c, evidence),
        actions: actions(c),
        predicted_gain: None,
    }
}

fn actions(c: &Ctx) -> Vec<Action> {
    let mut v = Vec::new();
    if let Some(k) = &c.p.levers.conservativeness {
        // Admission reserves for future tokens, and reserving more stops the
        // overflow. Only against frequent evictions (about one a minute is fine):
        // it costs admissions, where a larger pool (below) costs none.
        if c.retracts_often() {
            let cur = c.r.config.schedule_conservativeness.unwrap_or(k.default);
            v.push(lever(
                c,
                &k.raise,
                &format!("{:.1}", (cur * 1.3).max(1.3)),
                "",
                &[],
            ));
        }
        v.push(more_kv_memory(c));
        v.extend(fp8_kv(c));
        return v;
    }
    // No reservation to tune: more KV memory first, then fewer sequences, which
    // stops evictions by running fewer at once.
    v.push(more_kv_memory(c));
    v.extend(fp8_kv(c));
    if let Some(policy) =
        c.p.levers
            .capacity_policy
            .as_ref()
            .filter(|_| c.retracts_often())
    {
        // Evictions come only from the policy that admits against the blocks in use.
        v.push(lever(c, &policy.reserve_whole, "", "", &[]));
    }
    // Only against a measured batch: a bare preemption warning does not say how many run.
    if let Some(n) =
        c.w.running
            .map(|run| (run * 0.8).round())
            .filter(|&n| n >= 1.0 && n < c.run())
    {
        v.push(action(
            c,
            "fewer_seqs",
            format!("{} {}", c.p.levers.running_cap, num(n)),
            "Fewer concurrent sequences leave KV blocks free for the ones running, so they are not preempted and recomputed".to_string(),
            &[change("max_running", n)],
            "fewer preemptions and steadier latency, at the cost of running fewer at once",
        ));
    }
    v
}
