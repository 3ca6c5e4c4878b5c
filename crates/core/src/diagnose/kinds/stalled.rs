//! The server holds or runs requests but generates almost nothing: a hang or a crawl,
//! not a capacity limit, so no lever is advised and no what-if is offered. The
//! actions are where to look and how to see more.

use crate::diagnose::actions::action;
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{ev, finish};
use crate::diagnose::faults::{Stall, StallKind, CRAWL_TOK_S};
use crate::report::{Action, Finding, Kind};
use crate::text::num::{count, num, pct};

pub fn stalled(c: &Ctx, s: &Stall, confidence: f64) -> Finding {
    let confidence = confidence.min(s.confidence);
    let lines = format!("lines {}–{}", s.first_line, s.last_line);
    let secs = num(s.seconds);
    let headline = match s.kind {
        StallKind::Hang => format!(
            "The server is stalled: {} waiting{} while nothing runs and nothing is generated for {secs} s ({lines}), with the KV pool {}",
            num(s.queued_last),
            if s.queued_first != s.queued_last {
                format!(" (from {})", num(s.queued_first))
            } else {
                String::new()
            },
            s.kv.map_or("not reported".to_string(), |k| format!("{} used", pct(k)))
        ),
        StallKind::Crawl => format!(
            "The server is stalled: {} {} at {} tok/s in total ({} tok/s each) for {secs} s with no prompt work logged ({lines}): no batch size explains that",
            count(s.running, "request", "requests"),
            if s.running < 1.5 { "runs" } else { "run" },
            num(s.gen_tok_s),
            num(if s.running > 0.0 { s.gen_tok_s / s.running } else { 0.0 })
        ),
        StallKind::Silence => format!(
            "The server is stalled: its stats lines stop for {secs} s between {lines} with {} running, and the batch is still there when they resume",
            count(s.running, "request", "requests")
        ),
    };
    let mut evidence = vec![ev(
        match s.kind {
            StallKind::Hang if s.points == 0 => format!(
                "Line {} shows running 0 and {} waiting with the pool free and nothing done in its interval, then no stats line for {secs} s: the engine prints one whenever it generates or prefills anything, so none of the waiting requests was admitted",
                s.first_line,
                num(s.queued_first)
            ),
            StallKind::Hang => format!(
                "{} stats lines in a row show running 0, waiting {} → {} with the pool free, and nothing generated or prefilled between them: requests are accepted but the scheduler, which admits waiting requests at its next step while the pool has room, admits none{}",
                s.points,
                num(s.queued_first),
                num(s.queued_last),
                if s.to_end {
                    "; the log ends there, still stalled"
                } else {
                    ""
                }
            ),
            StallKind::Crawl => format!(
                "{} stats buckets in a row show ~{} running at under {} tok/s per request with no prefill between them: a decode step would take over a second per request",
                s.points,
                num(s.running),
                num(CRAWL_TOK_S)
            ),
            StallKind::Silence => format!(
                "No stats line for {secs} s while {} requests were running{}: a server that steps prints a line at least every few seconds",
                num(s.running),
                if s.queued_first >= 1.0 {
                    format!(" and {} waiting", num(s.queued_first))
                } else {
                    String::new()
                }
            ),
        },
        vec![s.first_line, s.last_line],
    )];
    evidence.push(ev(
        "Not a capacity limit: no setting that grows the batch (pool, cap, concurrency) changes a server that does not step, so no what-if is offered".to_string(),
        Vec::new(),
    ));
    Finding {
        kind: Kind::Stalled,
        confidence,
        headline,
        evidence: finish(c, evidence),
        actions: actions(c, s),
        predicted_gain: None,
    }
}

fn actions(c: &Ctx, s: &Stall) -> Vec<Action> {
    let around = format!("between lines {} and {}", s.first_line, s.last_line);
    vec![
        action(
            c,
            "look_for_error",
            format!("the full log {around}"),
            "An exception or traceback in a scheduler or worker process often stops stepping while the API server goes on accepting requests".to_string(),
            &[],
            "the cause, where the process printed it",
        ),
        action(
            c,
            "collective_timeout",
            "NCCL_DEBUG=INFO, TORCH_NCCL_ASYNC_ERROR_HANDLING=1".to_string(),
            "A stuck collective (an NCCL or Gloo all-reduce one rank never joins) hangs every rank of a TP/DP/EP group; NCCL and Gloo timeouts, watchdog messages or a rank that died say so".to_string(),
            &[],
            "a timeout naming the rank instead of a silent hang",
        ),
        action(
            c,
            "stack_dump",
            "py-spy dump --pid <scheduler or engine pid>".to_string(),
            "A stack dump of the stalled process shows where it waits (a collective, a lock, a kernel); DEBUG logging shows the last step it took".to_string(),
            &[],
            "the frame the server is stuck in; compare with the engine's known hangs for this version",
        ),
    ]
}
