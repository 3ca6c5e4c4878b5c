//! The KV pool overflows: running requests are evicted (retracted, preempted,
//! paused) and recomputed.

use crate::diagnose::actions::{action, change, fp8_kv, more_kv_memory};
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
        actions: actions(c),
    }
}

fn actions(c: &Ctx) -> Vec<Action> {
    let mut v = Vec::new();
    if c.sglang {
        // Under about one a minute SGLang's guide calls retractions fine: reserving
        // more would cost admissions, where a larger pool (below) costs none.
        if c.retracts_often() {
            let cur = c.r.config.schedule_conservativeness.unwrap_or(1.0);
            v.push(action(
                c,
                "schedule_conservativeness",
                format!("--schedule-conservativeness {:.1}", (cur * 1.3).max(1.3)),
                "Reserve more room for running requests' future tokens before admitting new ones, so the pool stops overflowing".to_string(),
                &[],
                "fewer retractions; slightly fewer requests running at once",
            ));
        }
        v.push(more_kv_memory(c));
        v.extend(fp8_kv(c));
        return v;
    }
    // vLLM's own order: more KV memory first, then fewer sequences, which stops
    // preemptions by running fewer at once.
    v.push(more_kv_memory(c));
    v.extend(fp8_kv(c));
    if c.trtllm && c.retracts_often() {
        // Pauses come only from MAX_UTILIZATION; the default policy never pauses.
        v.push(action(
            c,
            "capacity_scheduler_policy",
            "scheduler_config.capacity_scheduler_policy: GUARANTEED_NO_EVICT (in the YAML of --extra_llm_api_options)".to_string(),
            "Paused requests come from the MAX_UTILIZATION policy, which admits against the blocks in use and pauses requests when outputs outgrow the pool; the default policy reserves each request's whole length before admitting it, so none is paused and recomputed".to_string(),
            &[],
            "no pauses; fewer requests running at once (set max_tokens on requests to keep reservations small)",
        ));
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
