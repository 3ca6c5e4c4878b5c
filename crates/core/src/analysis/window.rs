//! The steady state: the part of the run that is neither warm-up nor drain.
//!
//! A batch run fills the server (running climbs), holds a plateau, then drains
//! (the client stops sending: the queue empties and running falls). Judging the
//! whole run mixes the three; the plateau is what the configuration determines.

use crate::report::Point;
use crate::report::Report;

/// Figures of the judged window, each bucket weighted by the time it stands for.
#[derive(Debug, Clone, Default)]
pub struct Window {
    pub start_s: f64,
    pub end_s: f64,
    pub whole_run: bool,
    pub running: Option<f64>,
    pub queued: Option<f64>,
    /// The median bucket's queue.
    pub queued_p50: Option<f64>,
    pub kv_usage: Option<f64>,
    pub gen_tok_s: Option<f64>,
    pub input_tok_s: Option<f64>,
    /// Share of buckets (with a queue figure) where requests waited.
    pub queue_share: Option<f64>,
    pub running_max: Option<f64>,
    pub running_p50: Option<f64>,
    /// A line inside the window that shows it (the bucket nearest its middle).
    pub line: Option<u64>,
    /// Warm-up and drain were found and cut.
    pub warmup_s: f64,
    pub drain_s: f64,
    /// Coefficient of variation of the requests in the server (running + waiting) across
    /// the window's buckets: near 0 for a client that keeps a fixed number in flight,
    /// about 1/√mean and more for one that sends at its own pace (Poisson, bursts).
    pub demand_cv: Option<f64>,
    /// Share of the window's time with nothing running: no stats lines, or none running.
    pub idle_share: f64,
    /// The queue grows through the window (its last quarter's mean over twice its first
    /// quarter's, and by more than one request): more arrives than the server serves.
    pub queue_growing: bool,
    /// The queue's least-squares slope through the window, requests per second.
    pub queue_slope: Option<f64>,
    /// Prompt tokens over generated tokens, by the buckets' counts (logs that print
    /// their prefill batches).
    pub counted_prompt_per_gen: Option<f64>,
    /// Running requests and KV usage in the buckets where requests waited (at least
    /// three): the batch the server holds when it has more than it admits. A client
    /// that sends in bursts fills the server only then, so the window's means mix the
    /// saturated batch with the lulls between bursts.
    pub running_queued: Option<f64>,
    pub kv_usage_queued: Option<f64>,
    /// Generation rate in those buckets: what the server makes when it is full.
    pub gen_tok_s_queued: Option<f64>,
}

impl Window {
    /// How many requests typically wait: the mean, or where requests wait in
    /// nearly every bucket, the median bucket's queue if that is more (a request
    /// always waiting is a queue of one, though the buckets at the window's edges
    /// pull the mean below one).
    pub fn typical_queue(&self) -> f64 {
        let mean = self.queued.unwrap_or(0.0);
        if self.queue_share.is_some_and(|s| s >= 0.9) {
            mean.max(self.queued_p50.unwrap_or(0.0))
        } else {
            mean
        }
    }
}

fn weighted_mean(points: &[Point], f: impl Fn(&Point) -> Option<f64>) -> Option<f64> {
    let weights = time_weights(points);
    let (mut s, mut n) = (0.0, 0.0);
    for (p, wt) in points.iter().zip(weights) {
        if let Some(v) = f(p) {
            s += v * wt;
            n += wt;
        }
    }
    (n > 0.0).then(|| s / n)
}

/// The time each bucket stands for: half the gaps to its neighbours, a bucket's width at
/// the ends, at most four times the median gap (a silence is idle time, which the window
/// counts apart). A bucket's lines are not its time: SGLang prints a line per prefill
/// batch, dozens a second while a wave of prompts is admitted, and one per 40 decode
/// steps, seconds apart, between waves.
fn time_weights(points: &[Point]) -> Vec<f64> {
    let gaps: Vec<f64> = points
        .windows(2)
        .map(|w| (w[1].t_s - w[0].t_s).max(0.0))
        .collect();
    let width = median(gaps.clone()).filter(|g| *g > 0.0).unwrap_or(1.0);
    let cap = 4.0 * width;
    (0..points.len())
        .map(|i| {
            let before = if i > 0 { gaps[i - 1] } else { width };
            let after = gaps.get(i).copied().unwrap_or(width);
            0.5 * (before.min(cap) + after.min(cap))
        })
        .collect()
}

/// Lines whose intervals are known, at least, for a rate over their time: a
/// source's first line rates an interval the log does not show, which a short
/// paste cannot spare.
const MIN_TIMED_LINES: u32 = 10;

/// Tokens generated over the time the lines' rates cover, where those times
/// cover at least half the window: engines rate the interval since they last
/// logged, and where those intervals differ (long prefills between decode
/// lines) a mean of the rates overstates generation.
fn timed_gen(points: &[Point], window_s: f64) -> Option<f64> {
    let secs: f64 = points.iter().map(|p| p.gen_secs).sum();
    let tokens: f64 = points.iter().map(|p| p.gen_tokens).sum();
    let lines: u32 = points.iter().map(|p| p.gen_timed).sum();
    (lines >= MIN_TIMED_LINES && secs > 0.0 && secs >= 0.5 * window_s && tokens.is_finite())
        .then(|| tokens / secs)
}

pub(crate) fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    Some(v[v.len() / 2])
}

/// Finds the steady window of a report's timeline.
pub fn steady(r: &Report) -> Window {
    let pts = &r.timeline.points;
    if pts.is_empty() {
        return Window {
            whole_run: true,
            ..Window::default()
        };
    }
    let runs: Vec<f64> = pts.iter().filter_map(|p| p.running).collect();
    // The plateau: the typical running count while requests wait, else the upper range.
    let waiting_runs: Vec<f64> = pts
        .iter()
        .filter(|p| p.queued.unwrap_or(0.0) > 0.5)
        .filter_map(|p| p.running)
        .collect();
    let plateau = if waiting_runs.len() >= 3 {
        median(waiting_runs)
    } else {
        let mut v = runs.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        v.get((v.len() * 9) / 10).copied().or(v.last().copied())
    };
    let mut from = 0;
    let mut to = pts.len();
    if let Some(pl) = plateau.filter(|p| *p > 0.0) {
        if pts.len() >= 8 {
            // Warm-up: until running first reaches 80 % of the plateau.
            if let Some(i) = pts
                .iter()
                .position(|p| p.running.is_some_and(|r| r >= 0.8 * pl))
            {
                from = i;
            }
            // Drain: after the last bucket that still had a queue, or was near the plateau.
            let last_busy = pts.iter().rposition(|p| {
                p.queued.unwrap_or(0.0) > 0.5 || p.running.is_some_and(|r| r >= 0.8 * pl)
            });
            if let Some(j) = last_busy {
                to = j + 1;
            }
        }
    }
    let mut whole_run = false;
    // Too little left: judge the whole run.
    if to <= from || (to - from) * 4 < pts.len() {
        from = 0;
        to = pts.len();
        whole_run = true;
    }
    let w = &pts[from..to];
    let qs: Vec<bool> = w.iter().filter_map(|p| p.queued.map(|q| q > 0.5)).collect();
    let mut runs_w: Vec<f64> = w.iter().filter_map(|p| p.running).collect();
    runs_w.sort_by(|a, b| a.total_cmp(b));
    let start_s = w.first().map(|p| p.t_s).unwrap_or(0.0);
    let end_s = w
        .last()
        .map(|p| p.t_s + r.timeline.bucket_seconds)
        .unwrap_or(0.0);
    let total_end = pts
        .last()
        .map(|p| p.t_s + r.timeline.bucket_seconds)
        .unwrap_or(0.0);
    let demand: Vec<(f64, f64)> = w
        .iter()
        .filter_map(|p| Some((p.running? + p.queued?, p.samples as f64)))
        .collect();
    // From the interdecile range (a normal's is 2.56 standard deviations) over the
    // median: a closed loop's ramp or drain left in the window (a tail of buckets far
    // below its plateau) does not make it read as a client at its own pace.
    let demand_cv = (demand.len() >= 8).then(|| {
        let mut d: Vec<f64> = demand.iter().map(|d| d.0).collect();
        d.sort_by(f64::total_cmp);
        let q = |f: f64| d[((d.len() - 1) as f64 * f).round() as usize];
        let m = q(0.5);
        if m > 0.0 {
            (q(0.9) - q(0.1)) / 2.563 / m
        } else {
            0.0
        }
    });
    // Idle as the report counts it: silences longer than the idle gap, and buckets with
    // nothing running or waiting (a log's stats lines are seconds apart, so a bucket
    // without one is no silence).
    let width = r.timeline.bucket_seconds;
    let silent: f64 = r
        .timeline
        .idle_gaps
        .iter()
        .map(|g| (g.start_s + g.seconds).min(end_s) - g.start_s.max(start_s))
        .filter(|s| *s > 0.0)
        .sum();
    let empty = w
        .iter()
        .filter(|p| p.running.is_some_and(|n| n <= 0.0) && p.queued.is_none_or(|q| q <= 0.0))
        .count() as f64
        * width;
    let idle_share = if end_s > start_s {
        ((silent + empty) / (end_s - start_s)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    // Timed iterations say how long the server stepped: the rest of the window it idled,
    // between iterations too short apart for their stamps (whole seconds) to show.
    let idle_share = if r.timeline.iterations && end_s > start_s {
        // A point's seconds are its sources' intervals averaged (they step together).
        let stepping: f64 = w.iter().map(|p| p.gen_secs).sum();
        let timed = 1.0 - stepping / (end_s - start_s);
        if stepping > 0.0 {
            idle_share.max(timed.clamp(0.0, 1.0))
        } else {
            idle_share
        }
    } else {
        idle_share
    };
    let queue_growing = {
        let q: Vec<f64> = w.iter().filter_map(|p| p.queued).collect();
        let k = q.len() / 4;
        k >= 2 && {
            let first = q[..k].iter().sum::<f64>() / k as f64;
            let last = q[q.len() - k..].iter().sum::<f64>() / k as f64;
            last > 2.0 * first + 1.0
        }
    };
    let queue_slope = {
        let mut line = crate::model::line::LineSums::default();
        for p in w {
            if let Some(q) = p.queued {
                line.add(p.t_s, q);
            }
        }
        line.slope().filter(|_| line.n >= 8.0)
    };
    let counted_prompt_per_gen = {
        let prompt: f64 = w.iter().map(|p| p.prompt_tokens).sum();
        let gen: f64 = w.iter().map(|p| p.gen_tokens).sum();
        (prompt > 0.0 && gen > 0.0).then(|| prompt / gen)
    };
    let waits = |p: &Point| p.queued.is_some_and(|q| q > 0.5);
    let enough = w.iter().filter(|p| waits(p)).count() >= 3;
    Window {
        running_queued: weighted_mean(w, |p| p.running.filter(|_| waits(p))).filter(|_| enough),
        kv_usage_queued: weighted_mean(w, |p| p.kv_usage.filter(|_| waits(p))).filter(|_| enough),
        gen_tok_s_queued: weighted_mean(w, |p| p.gen_tok_s.filter(|_| waits(p))).filter(|_| enough),
        start_s,
        end_s: end_s.min(r.span_seconds.max(end_s)),
        whole_run,
        demand_cv,
        queue_growing,
        queue_slope,
        counted_prompt_per_gen,
        idle_share,
        running: weighted_mean(w, |p| p.running),
        queued: weighted_mean(w, |p| p.queued),
        queued_p50: median(w.iter().filter_map(|p| p.queued).collect()),
        kv_usage: weighted_mean(w, |p| p.kv_usage),
        gen_tok_s: timed_gen(w, end_s - start_s).or_else(|| weighted_mean(w, |p| p.gen_tok_s)),
        input_tok_s: weighted_mean(w, |p| p.input_tok_s),
        queue_share: (!qs.is_empty())
            .then(|| qs.iter().filter(|b| **b).count() as f64 / qs.len() as f64),
        running_max: runs_w.last().copied(),
        running_p50: runs_w.get(runs_w.len() / 2).copied(),
        line: w.get(w.len() / 2).map(|p| p.line),
        warmup_s: start_s,
        drain_s: (total_end - end_s).max(0.0),
    }
}
