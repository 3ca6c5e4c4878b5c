//! Data-parallel ranks unevenly loaded: requests wait on some while others have room,
//! so the server generates less than the same requests spread evenly would.

use crate::diagnose::actions::action;
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{ev, finish};
use crate::diagnose::faults::Imbalance;
use crate::report::{Action, Finding, Kind, RankFigures};
use crate::text::num::{num, pct};

fn opt(v: Option<f64>) -> String {
    v.map_or("–".to_string(), num)
}

fn rank_line(f: &RankFigures) -> String {
    format!(
        "{}: {} running, {} waiting, KV {}, {} tok/s",
        f.source,
        opt(f.running_requests),
        opt(f.queued_requests),
        f.kv_usage.map_or("–".to_string(), pct),
        opt(f.gen_tok_s)
    )
}

pub fn rank_imbalance(c: &Ctx, im: &Imbalance, confidence: f64) -> Finding {
    let f = &c.ranks.figures;
    let (h, l) = (&f[im.heavy], &f[im.light]);
    let gain = c.ranks.balance_gain.unwrap_or(0.0);
    let headline = if im.binding {
        format!(
            "The data-parallel ranks are unevenly loaded: {} holds {} running and {} waiting while {} runs {}{}",
            h.source,
            opt(h.running_requests),
            opt(h.queued_requests),
            l.source,
            opt(l.running_requests),
            if gain > 0.0 {
                format!("; spread evenly, the ranks would generate ~{} more", pct(gain))
            } else {
                String::new()
            }
        )
    } else {
        format!(
            "The data-parallel ranks run uneven batches ({} runs {}, {} runs {}), though nothing waits",
            h.source,
            opt(h.running_requests),
            l.source,
            opt(l.running_requests)
        )
    };
    let mut evidence = vec![ev(
        format!(
            "Per rank over the judged window — {}",
            f.iter().map(rank_line).collect::<Vec<_>>().join("; ")
        ),
        c.line(),
    )];
    if let Some(g) = c.ranks.balance_gain {
        let now: f64 = f.iter().filter_map(|x| x.gen_tok_s).sum();
        evidence.push(ev(
            format!(
                "Each rank's step modelled from its own batch and rate: with the requests spread so no rank waits while another has room, the ranks would generate ~{} tok/s instead of {} ({}{})",
                num(now * (1.0 + g)),
                num(now),
                if g < 0.0 { "-" } else { "+" },
                pct(g.abs())
            ),
            Vec::new(),
        ));
    }
    if let Some(rr) = &c.p.ranks {
        evidence.push(ev(
            rr.routing.to_string(),
            c.r.config.lines.iter().take(1).copied().collect(),
        ));
    }
    Finding {
        kind: Kind::RankImbalance,
        confidence,
        headline,
        evidence: finish(c, evidence),
        actions: actions(c, im),
        predicted_gain: im.binding.then(|| crate::text::round::dec(gain, 4)),
    }
}

fn actions(c: &Ctx, im: &Imbalance) -> Vec<Action> {
    let mut v = Vec::new();
    if let Some(rr) = &c.p.ranks {
        v.push(action(
            c,
            "load_balance",
            rr.balance.to_string(),
            "Routing by each rank's load sends new requests to the rank with room instead of queueing them behind a full one".to_string(),
            &[],
            if im.binding {
                "the waiting requests run on the ranks with room"
            } else {
                "even batches, so no step waits for the largest"
            },
        ));
    }
    v.push(action(
        c,
        "client_routing",
        "the client's or router's request routing".to_string(),
        "A router in front that pins sessions or prefixes to one rank (sticky routing, cache-aware routing) loads it past the others".to_string(),
        &[],
        "requests spread by load rather than by key",
    ));
    v
}
