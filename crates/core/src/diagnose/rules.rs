//! The rules: which kinds a report shows, in what order, with what confidence.

use super::context::{
    confidence, measured_prefill_confidence, prefill_time_dominates, prompt_heavy, Ctx,
};
use super::evidence::{
    ev, few_lines_note, no_stats_evidence, no_stats_headline, other_server_evidence,
};
use super::kinds::{client, decode_saturated, kv_capacity, prefill, retraction, running_limit};
use crate::report::{Finding, Kind};
use crate::text::num::{count, num, pct};

pub fn findings(c: &Ctx) -> Vec<Finding> {
    // A stall is the verdict alone: no lever explains a server that does not step.
    if let Some(s) = super::faults::stall(c) {
        return vec![super::kinds::stalled(c, &s, confidence(c, 0.97))];
    }
    let mut out = Vec::new();
    if let Some(im) = super::faults::imbalance(c) {
        let conf = if im.binding { 0.96 } else { 0.4 };
        out.push(super::kinds::rank_imbalance(c, &im, confidence(c, conf)));
    }
    let retractions = c.r.summary.retractions;
    if c.stat_lines == 0 {
        if retractions > 0 {
            out.push(retraction(c, 0.55));
        } else {
            out.push(Finding {
                kind: Kind::InsufficientData,
                confidence: 0.9,
                headline: no_stats_headline(c),
                evidence: other_server_evidence(c)
                    .into_iter()
                    .chain([no_stats_evidence(c)])
                    .collect(),
                actions: Vec::new(),
                predicted_gain: None,
            });
        }
        return out;
    }
    let waiting = c.waiting();
    let kv = c.kv();
    let kv_full = kv.is_some_and(|u| u >= 0.9);
    let kv_thr = c.kv_bound_threshold();
    let at_cap = c.at_cap();

    if retractions > 0 {
        let rate = c.facts.retractions_per_minute.unwrap_or(0.0);
        // About one retraction a minute is normal (SGLang's guide); many more is the problem itself.
        let mut conf = if rate < 1.0 {
            0.45
        } else if rate < 5.0 {
            0.6 + 0.04 * rate
        } else {
            0.85 + (rate / 200.0).min(0.1)
        };
        if kv_full || c.r.summary.kv_usage.is_some_and(|d| d.max >= 0.97) {
            conf += 0.1;
        }
        out.push(retraction(c, confidence(c, conf)));
    }

    if waiting && at_cap && !c.kv_tight() {
        let conf = if c.cap_inferred { 0.7 } else { 0.85 };
        out.push(running_limit(c, confidence(c, conf)));
    } else if waiting && at_cap {
        // Both bind: the cap is reached with the pool all but full. A higher cap
        // admits only what the pool can still hold, so the one with less room
        // beyond the current batch leads.
        let pool_room = c
            .facts
            .pool_holds_requests
            .zip(c.cap)
            .map(|(h, cap)| h / cap);
        let cap_first = pool_room.is_some_and(|r| r >= 1.2);
        let (kv_conf, cap_conf) = if cap_first { (0.6, 0.8) } else { (0.8, 0.6) };
        out.push(kv_capacity(c, confidence(c, kv_conf)));
        out.push(running_limit(c, confidence(c, cap_conf)));
    }

    let reserved = c.reservations_bind();
    if waiting && !at_cap && (kv.is_some_and(|u| u >= kv_thr) || reserved) {
        let u = kv.unwrap_or(0.0);
        let conf = 0.65
            + 0.25 * ((u - kv_thr) / (1.0 - kv_thr)).clamp(0.0, 1.0)
            + 0.05 * c.w.queue_share.unwrap_or(0.0);
        out.push(kv_capacity(c, confidence(c, conf)));
    } else if kv_full && !waiting {
        out.push(kv_capacity(c, confidence(c, 0.6)));
    }

    let prefill_dominated = c.prefill_lines > c.decode_lines
        || c.facts.prefill_token_share.is_some_and(|s| s > 0.5)
        || c.r
            .summary
            .input_throughput_tok_s
            .zip(c.r.summary.gen_throughput_tok_s)
            .is_some_and(|(i, g)| i.mean > 2.0 * g.mean);
    let stalled = c.has_decode
        && c.run() > 0.0
        && c.r
            .summary
            .gen_throughput_tok_s
            .is_some_and(|g| g.max < 1.0);
    let starved = c.has_decode && c.stat_lines >= 20 && prefill_time_dominates(c);
    // Few requests run against the room the server has, and none wait: however
    // the work splits between prompts and outputs, more of them at once would
    // batch both, so the client leads.
    let room = match (c.cap, c.facts.pool_holds_requests) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let underloaded = !waiting && c.run() < 0.5 * room.unwrap_or(0.0);
    if starved && waiting {
        // Prompts dwarf outputs: prefill takes nearly all the time, so decode is starved
        // and requests pile up (and hold the pool) whatever the pool's size. But a
        // batch at its running cap is held there by the cap, however long prefill
        // takes: the cap leads and prefill is named beside it (on simulated runs,
        // doubling the cap then raises throughput by ~20 %). Where the log times its
        // iterations, the share of the time prefill takes says how sure.
        let conf = measured_prefill_confidence(c).unwrap_or(if at_cap { 0.7 } else { 0.95 });
        out.push(prefill(c, confidence(c, conf)));
    } else if waiting && !at_cap && kv.is_none_or(|u| u < kv_thr) && !reserved {
        let conf = 0.6 + if prefill_dominated { 0.2 } else { 0.0 };
        out.push(prefill(c, confidence(c, conf)));
    } else if !c.has_decode && c.prefill_lines > 0 {
        out.push(prefill(c, confidence(c, if waiting { 0.7 } else { 0.55 })));
        if !waiting && !kv_full {
            // Prefill lines only, nothing waiting: with several requests running the client is the limit.
            let conf = 0.5 + if c.run() >= 4.0 { 0.15 } else { 0.0 };
            out.push(client(c, confidence(c, conf)));
        }
    } else if stalled {
        out.push(prefill(c, confidence(c, 0.5)));
    } else if starved {
        // Nothing waits, but long prompts take most of the server's time: decode is starved.
        out.push(prefill(
            c,
            confidence(c, if underloaded { 0.5 } else { 0.7 }),
        ));
    } else if c.has_decode && c.stat_lines >= 20 && prompt_heavy(c) {
        // Beside what binds, prefill is a large part of the work.
        out.push(prefill(c, confidence(c, 0.6)));
    }

    let per_req = c.facts.per_request_tok_s;
    let mut saturated = 0.0;
    // SGLang's gen throughput includes time spent in prefill, so only a
    // decode-dominated log can show decode itself is slow.
    let prefill_share = c.facts.prefill_token_share.unwrap_or(0.0);
    let decode_dominated =
        c.decode_lines >= 5 && (prefill_share < 0.6 || c.decode_lines >= 2 * c.prefill_lines);
    if !waiting && c.has_decode && decode_dominated && !kv_full && c.run() >= 8.0 {
        if per_req.is_some_and(|p| p < 5.0) {
            saturated = 0.6
                + if per_req.is_some_and(|p| p < 2.0) {
                    0.1
                } else {
                    0.0
                };
        } else if let Some(m) = c.model.as_ref().filter(|m| m.fitted) {
            let share = m.b * m.running / m.step(m.running);
            if share >= 0.6 {
                saturated = 0.5;
            }
        }
    }
    if saturated > 0.0 {
        out.push(decode_saturated(c, confidence(c, saturated)));
    }

    if c.has_decode && !waiting && !kv_full && !stalled {
        let mut conf: f64 = 0.6;
        let room = c.cap.or(c.facts.pool_holds_requests);
        if room.is_some_and(|h| c.run() < 0.5 * h) || c.run() <= 4.0 {
            conf += 0.15;
        }
        if c.facts.idle_fraction.is_some_and(|f| f > 0.2) {
            conf += 0.1;
        }
        if c.w.drain_s > 0.15 * c.r.span_seconds {
            conf += 0.05;
        }
        if saturated >= 0.55 || (starved && !underloaded) {
            conf = conf.min(0.5);
        }
        if c.w.queued.is_none() {
            // Nothing in the log says whether requests wait.
            conf = conf.min(0.55);
        }
        out.push(client(c, confidence(c, conf.min(0.9))));
    }

    plateau(c, &mut out);

    if out.is_empty() {
        out.push(Finding {
            kind: Kind::InsufficientData,
            confidence: 0.5,
            headline: match (c.w.running, c.w.queued) {
                (Some(run), Some(q)) => format!(
                    "{} stats lines, but no known limit fits them ({} running, {} waiting in the judged window)",
                    c.stat_lines,
                    num(run),
                    num(q)
                ),
                _ => format!(
                    "{} stats lines, but too little in them to say what binds (no running/queue figures in the judged window)",
                    c.stat_lines
                ),
            },
            evidence: few_lines_note(c).into_iter().collect(),
            actions: Vec::new(),
            predicted_gain: None,
        });
    } else if let Some(n) = few_lines_note(c) {
        out.push(Finding {
            kind: Kind::InsufficientData,
            confidence: 0.3,
            headline: format!(
                "Only {}: a snapshot, not a run",
                count(c.stat_lines as f64, "stats line", "stats lines")
            ),
            evidence: vec![n],
            actions: Vec::new(),
            predicted_gain: None,
        });
    }
    out
}

/// A batch lever leads (the cap, the client's concurrency, the pool), but the step-time model
/// says a batch twice as large buys little, whatever lets it grow: each request's own
/// work (its KV reads, its prefill) is already most of a decode step, so throughput
/// sits near the GPU's ceiling and a bigger batch mostly divides it among more
/// requests. Decode saturation (or prefill, where prompts are most of that work) then
/// leads, with the prediction as its evidence; the lever stays beside it.
///
/// So too where the client leads but its own action, more requests in flight, is
/// predicted to buy little because another limit (the pool, the cap) then stops the batch
/// short of twice its size, and twice the batch would itself buy under twice the
/// plateau's gain: near the ceiling, whatever comes first (`bench/sweep.py`: such
/// runs gain under 10 % from any doubled lever, and more concurrency often loses).
fn plateau(c: &Ctx, out: &mut Vec<Finding>) {
    let Some(top) = out
        .iter()
        .max_by(|a, b| a.confidence.total_cmp(&b.confidence))
    else {
        return;
    };
    if !matches!(
        top.kind,
        Kind::RunningRequestLimit | Kind::ClientUnderload | Kind::KvCacheCapacity
    ) {
        return;
    }
    let Some(m) = c
        .model
        .as_ref()
        .filter(|m| m.running > 0.0 && m.gen_tok_s > 0.0)
    else {
        return;
    };
    let doubled = 2.0 * m.running;
    let gain = doubled / m.step(doubled) / m.gen_tok_s - 1.0;
    // The lever's own action, as the model predicts it: another limit (the
    // pool, the cap) may stop the batch well short of twice its size.
    let action = top
        .actions
        .first()
        .and_then(|a| a.predicted.as_ref())
        .filter(|p| p.gen_throughput_tok_s.is_finite());
    let action_flat = top.kind == Kind::ClientUnderload
        && action.is_some_and(|p| p.gen_throughput_tok_s < m.gen_tok_s * (1.0 + PLATEAU_GAIN))
        && gain < 2.0 * PLATEAU_GAIN;
    // A NaN (a degenerate model) is no evidence either way.
    if gain.is_nan() || (gain >= PLATEAU_GAIN && !action_flat) {
        return;
    }
    let conf = confidence(c, (top.confidence + 0.05).min(0.9));
    let mut evidence = vec![ev(
        format!(
            "Twice the batch (~{} running instead of {}, whatever lets it grow) is predicted to add only {} ({} → {} tok/s): the requests would share about the same throughput",
            num(doubled),
            num(m.running),
            pct(gain.max(0.0)),
            num(m.gen_tok_s),
            num(m.gen_tok_s * (1.0 + gain))
        ),
        Vec::new(),
    )];
    if let Some(p) = action.filter(|_| gain >= PLATEAU_GAIN) {
        let limit = match p.bound_by {
            "kv_cache" => "the KV pool",
            "max_running" => "the running cap",
            _ => "the client",
        };
        evidence.push(ev(
            format!(
                "More requests from the client stop short of that: {} then holds ~{} running, and the prediction is {} ({} → {} tok/s)",
                limit,
                num(p.running_requests),
                signed_pct(p.gen_throughput_tok_s / m.gen_tok_s - 1.0),
                num(m.gen_tok_s),
                num(p.gen_throughput_tok_s)
            ),
            Vec::new(),
        ));
    }
    // Where prompts are most of each request's part of the step, the ceiling is prefill's.
    let kind = if m.pf_per_request >= 0.5 * m.b {
        Kind::PrefillHeavy
    } else {
        Kind::DecodeSaturated
    };
    match out.iter_mut().find(|f| f.kind == kind) {
        Some(f) => {
            f.confidence = f.confidence.max(conf);
            let at = 1.min(f.evidence.len());
            f.evidence.splice(at..at, evidence);
        }
        None => {
            let mut f = if kind == Kind::PrefillHeavy {
                prefill(c, conf)
            } else {
                decode_saturated(c, conf)
            };
            let at = 1.min(f.evidence.len());
            f.evidence.splice(at..at, evidence);
            out.push(f);
        }
    }
}

fn signed_pct(frac: f64) -> String {
    format!("{}{}", if frac < 0.0 { "-" } else { "+" }, pct(frac.abs()))
}

/// Below this predicted gain from twice the batch, the batch is not what limits throughput.
const PLATEAU_GAIN: f64 = 0.08;
