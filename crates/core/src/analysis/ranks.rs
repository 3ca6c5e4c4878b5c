//! Data-parallel ranks side by side: each rank's steady figures from its own series,
//! and what the ranks would generate if the requests were spread so that no rank
//! queues while another has room.
//!
//! Each rank schedules its own batch, so its throughput is its batch over its own step
//! time. A rank's step is modelled as memory-bound decode, `s0 · (1 + n / 48)` (the
//! step doubles at ~48 running requests per scheduler, the what-if model's prior),
//! scaled to the rank's own operating point; spreading the requests then moves each
//! rank along its own curve.

use crate::analysis::window::Window;
use crate::report::{RankFigures, Report};
use crate::text::round::sig;

/// Running requests per scheduler at which a decode step takes twice its fixed part.
const DOUBLING_BATCH: f64 = 48.0;

/// The ranks over the judged window and the balanced case.
#[derive(Debug, Clone, Default)]
pub struct Ranks {
    pub figures: Vec<RankFigures>,
    /// Balanced throughput over today's, minus one; `None` without throughput per rank.
    pub balance_gain: Option<f64>,
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Each rank's means over the window's buckets (the whole series where the window
/// holds none of a rank's points), and the balanced case.
pub fn ranks(r: &Report, w: &Window) -> Ranks {
    let series = &r.timeline.per_source;
    if series.len() < 2 {
        return Ranks::default();
    }
    let mut figures = Vec::new();
    for s in series {
        let inside: Vec<_> = s
            .points
            .iter()
            .filter(|p| p.t_s >= w.start_s && p.t_s <= w.end_s)
            .collect();
        let pts: Vec<_> = if inside.is_empty() {
            s.points.iter().collect()
        } else {
            inside
        };
        let col = |f: &dyn Fn(&crate::report::Point) -> Option<f64>| {
            mean(&pts.iter().filter_map(|p| f(p)).collect::<Vec<_>>())
        };
        let lines = r
            .sources
            .iter()
            .find(|x| x.source == s.source)
            .map_or(0, |x| x.stat_lines);
        figures.push(RankFigures {
            source: s.source.clone(),
            stat_lines: lines,
            running_requests: col(&|p| p.running).map(sig),
            queued_requests: col(&|p| p.queued).map(sig),
            kv_usage: col(&|p| p.kv_usage).map(|v| (v * 1e4).round() / 1e4),
            gen_tok_s: col(&|p| p.gen_tok_s).map(sig),
            balanced_gen_tok_s: None,
        });
    }
    // A rank that queues holds as many as it can: its batch is the room of a rank.
    let room = figures
        .iter()
        .filter(|f| f.queued_requests.unwrap_or(0.0) >= 1.0)
        .filter_map(|f| f.running_requests)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    let demand: f64 = figures
        .iter()
        .map(|f| f.running_requests.unwrap_or(0.0) + f.queued_requests.unwrap_or(0.0))
        .sum();
    let n = figures.len() as f64;
    let share = match room {
        Some(room) => (demand / n).min(room),
        None => demand / n,
    };
    let mut now = 0.0;
    let mut balanced = 0.0;
    let mut complete = true;
    for f in figures.iter_mut() {
        let (Some(run), Some(gen)) = (f.running_requests, f.gen_tok_s) else {
            complete = false;
            continue;
        };
        if run < 0.5 || gen <= 0.0 {
            // An idle rank's step is unknown: it takes the others' curve below.
            continue;
        }
        let step = run / gen;
        let s0 = step / (1.0 + run / DOUBLING_BATCH);
        let b = share / (s0 * (1.0 + share / DOUBLING_BATCH));
        f.balanced_gen_tok_s = Some(sig(b));
        now += gen;
        balanced += b;
    }
    // Idle ranks step like the busy ones: the mean fixed part of the busy ones.
    let busy: Vec<f64> = figures
        .iter()
        .filter_map(|f| {
            let (run, gen) = (f.running_requests?, f.gen_tok_s?);
            (run >= 0.5 && gen > 0.0).then(|| run / gen / (1.0 + run / DOUBLING_BATCH))
        })
        .collect();
    if let Some(s0) = mean(&busy) {
        for f in figures
            .iter_mut()
            .filter(|f| f.balanced_gen_tok_s.is_none())
        {
            if f.running_requests.is_some() {
                let b = share / (s0 * (1.0 + share / DOUBLING_BATCH));
                f.balanced_gen_tok_s = Some(sig(b));
                now += f.gen_tok_s.unwrap_or(0.0);
                balanced += b;
            }
        }
    }
    let balance_gain = (complete && now > 0.0).then(|| balanced / now - 1.0);
    Ranks {
        figures,
        balance_gain,
    }
}
