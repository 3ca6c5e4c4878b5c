//! Nothing waits: the client does not send enough concurrent work.

use crate::diagnose::actions::{action, change, in_flight, raised_cap};
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{
    concurrency_evidence, ev, finish, kv_evidence, throughput_evidence,
};
use crate::report::{Action, Finding, Kind};
use crate::text::num::{count, num, pct};

pub fn client(c: &Ctx, confidence: f64) -> Finding {
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
    if let Some(g) = &c.p.guide {
        evidence.push(ev(g.empty_queue.to_string(), Vec::new()));
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
        actions: actions(c),
        predicted_gain: None,
    }
}

fn actions(c: &Ctx) -> Vec<Action> {
    if c.client_fills_cap() {
        return client_at_cap(c);
    }
    let run = c.run().max(1.0);
    // What the client keeps in flight: running, and those waiting (a client whose bursts
    // queue has that many more out at its peaks).
    let flight = (c.run() + c.queued()).max(1.0);
    // Doubling is what the model predicts (the verdict's lever); a client that waits on
    // nothing already gets no more from the server than its cap or pool holds.
    let room = if c.queued() < 1.0 {
        c.cap.or(c.facts.pool_holds_requests).unwrap_or(run * 4.0)
    } else {
        f64::INFINITY
    };
    let target = (flight * 2.0).min(room.max(flight)).max(flight + 1.0);
    // The model predicts near the batch sizes the log shows: doubling is a step
    // it can vouch for, and the advice says to go on while it pays.
    let step = if target < flight * 2.0 {
        "up to what the server can hold"
    } else {
        c.p.guide.as_ref().map_or(
            "and keep doubling the concurrency while throughput rises, until requests start to wait",
            |g| g.keep_doubling,
        )
    };
    // Predicted as a multiple of what the log shows in flight, as the verdict's lever is:
    // the advice rounds to whole requests, the prediction keeps the gaps between turns.
    let n = target.round().max(1.0);
    vec![in_flight(
        c,
        n,
        format!(
            "The server has KV and slots to spare: send more requests at once, {step}{}",
            if c.facts.idle_fraction.is_some_and(|f| f > 0.05) {
                "; also remove the gaps where the client sends nothing"
            } else {
                ""
            }
        ),
        &[change("client_scale", target / flight)],
    )]
}

/// The client keeps exactly as many requests in flight as the running cap
/// admits: more in flight would only wait, and a higher cap would find nothing
/// more to run. The two rise together, and are predicted together.
fn client_at_cap(c: &Ctx) -> Vec<Action> {
    let cap = c.cap.unwrap_or(c.run()).max(1.0);
    let target = raised_cap(c);
    let both = [
        change("max_running", target),
        change("client_concurrency", target),
    ];
    vec![
        action(
            c,
            "raise_running_cap",
            format!("{} {}", c.p.levers.running_cap, num(target)),
            format!(
                "The client keeps {} requests in flight, exactly the cap: raise the cap and the client's concurrency together (either alone changes nothing)",
                num(cap)
            ),
            &both,
            "",
        ),
        in_flight(
            c,
            target,
            format!("With the cap raised to {}: send that many at once", num(target)),
            &both,
        ),
    ]
}
