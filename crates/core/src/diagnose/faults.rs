//! Faults the throughput levers do not explain: a server that stops generating while
//! it holds requests, and data-parallel ranks loaded unevenly. Both are read from the
//! timeline, not from the fitted model: a stalled server has no operating point to
//! fit, and the model sees the ranks merged.

use super::context::Ctx;
use crate::report::Point;

/// What the stretch shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StallKind {
    /// Requests wait, none runs, the pool has room, nothing is prefilled: over
    /// consecutive stats lines, or a silence after one.
    Hang,
    /// Requests run at under [`CRAWL_TOK_S`] each with no prompt work logged.
    Crawl,
    /// The stats lines stop for a while with requests in flight, and the same batch
    /// is there when they resume.
    Silence,
}

#[derive(Debug, Clone)]
pub struct Stall {
    pub kind: StallKind,
    pub seconds: f64,
    /// Buckets of the stretch (0 for a silence, a hang read from one included).
    pub points: usize,
    pub first_line: u64,
    pub last_line: u64,
    pub running: f64,
    pub queued_first: f64,
    pub queued_last: f64,
    pub kv: Option<f64>,
    pub gen_tok_s: f64,
    /// The stretch runs to the log's last stats line: the log ends inside it.
    pub to_end: bool,
    /// The most a finding on this stretch may claim.
    pub confidence: f64,
}

/// Per-request decode below this, with nothing prefilled, is slower than any batch
/// explains: a decode step of a second per request is a hundred times a GPU's.
pub const CRAWL_TOK_S: f64 = 1.0;
/// A stretch counts from three stats buckets or a minute.
const MIN_POINTS: usize = 3;
const MIN_SECONDS: f64 = 60.0;
/// A sustained stretch is the verdict at this confidence; a hang the log ends in
/// before it is sustained, at the lower one.
const SUSTAINED_CONFIDENCE: f64 = 0.97;
const UNBOUNDED_CONFIDENCE: f64 = 0.8;
/// A silence this long with requests in flight: SGLang prints a decode line every
/// 40 steps (about a second), vLLM every 5–10 s while requests run.
const SILENCE_S: f64 = 60.0;

fn no_prompt_work(p: &Point) -> bool {
    p.input_tok_s.is_none_or(|i| i < 1.0) && p.prompt_tokens <= 0.0
}

/// What a stats line's snapshot shows of a hang: requests wait, none runs, the pool has
/// room. Running, waiting and KV are read at the line; its rates cover the interval
/// before it, so whether anything was done while the state held is the next line's.
fn held(p: &Point) -> bool {
    p.running.is_some_and(|r| r < 0.5)
        && p.queued.is_some_and(|q| q >= 1.0)
        && p.kv_usage.is_none_or(|k| k < 0.5)
}

/// Nothing generated and nothing prefilled over the interval a line's rates cover.
fn quiet(p: &Point) -> bool {
    p.gen_tok_s.is_none_or(|g| g < 1.0) && no_prompt_work(p)
}

fn crawl(p: &Point) -> bool {
    match (p.running, p.gen_tok_s) {
        (Some(r), Some(g)) if r >= 1.0 => g / r < CRAWL_TOK_S && no_prompt_work(p),
        _ => false,
    }
}

/// The longest stretch of consecutive buckets the test holds on, long enough.
fn stretch(pts: &[Point], bucket_s: f64, test: fn(&Point) -> bool) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < pts.len() {
        if !test(&pts[i]) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < pts.len() && test(&pts[j + 1]) {
            j += 1;
        }
        let secs = pts[j].t_s - pts[i].t_s + bucket_s;
        let long = j + 1 - i >= MIN_POINTS || secs >= MIN_SECONDS;
        if long && best.is_none_or(|(a, b)| j - i > b - a) {
            best = Some((i, j));
        }
        i = j + 1;
    }
    best
}

fn from_stretch(kind: StallKind, pts: &[Point], (i, j): (usize, usize), bucket_s: f64) -> Stall {
    let s = &pts[i..=j];
    let m = |f: fn(&Point) -> Option<f64>| {
        let v: Vec<f64> = s.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    Stall {
        kind,
        seconds: pts[j].t_s - pts[i].t_s + bucket_s,
        points: s.len(),
        first_line: pts[i].line,
        last_line: pts[j].line,
        running: m(|p| p.running).unwrap_or(0.0),
        queued_first: pts[i].queued.unwrap_or(0.0),
        queued_last: pts[j].queued.unwrap_or(0.0),
        kv: m(|p| p.kv_usage),
        gen_tok_s: m(|p| p.gen_tok_s).unwrap_or(0.0),
        to_end: j + 1 == pts.len(),
        confidence: SUSTAINED_CONFIDENCE,
    }
}

/// A sustained stretch in which the server holds or runs requests but generates
/// almost nothing. A drain (fewer running, each at its usual speed) is none: the
/// per-request rate stays up while the batch shrinks.
pub fn stall(c: &Ctx) -> Option<Stall> {
    let pts = &c.r.timeline.points;
    let bucket = c.r.timeline.bucket_seconds.max(0.0);
    if let Some(s) = hang(pts) {
        return Some(s);
    }
    if let Some(ij) = stretch(pts, bucket, crawl) {
        return Some(from_stretch(StallKind::Crawl, pts, ij, bucket));
    }
    silence(c)
}

/// Requests wait while nothing runs and nothing is done, over consecutive stats lines.
///
/// vLLM steps while any request is unfinished and admits waiting requests first come,
/// first served whenever the pool has room (SGLang likewise, and prints no line while
/// nothing runs), so waiting with an empty batch and a free pool lasts a step, not the
/// interval between two stats lines. The stretch counts from three lines or a minute; a
/// shorter one the log ends in counts too when the queue grew across it (requests kept
/// arriving and none was admitted), since nothing after it shows the server recover —
/// at a lower confidence. Waiting that falls is being admitted somewhere: never a hang.
fn hang(pts: &[Point]) -> Option<Stall> {
    let mut best: Option<Stall> = None;
    let mut i = 0;
    while i < pts.len() {
        if !held(&pts[i]) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < pts.len() && held(&pts[j + 1]) && quiet(&pts[j + 1]) {
            j += 1;
        }
        if j > i {
            let (a, b) = (&pts[i], &pts[j]);
            let (q0, q1) = (a.queued.unwrap_or(0.0), b.queued.unwrap_or(0.0));
            let secs = b.t_s - a.t_s;
            let sustained = j + 1 - i >= MIN_POINTS || secs >= MIN_SECONDS;
            let unbounded = j + 1 == pts.len() && q1 > q0;
            if q1 >= q0 && (sustained || unbounded) {
                let s = Stall {
                    kind: StallKind::Hang,
                    seconds: secs,
                    points: j + 1 - i,
                    first_line: a.line,
                    last_line: b.line,
                    running: 0.0,
                    queued_first: q0,
                    queued_last: q1,
                    kv: b.kv_usage,
                    gen_tok_s: 0.0,
                    to_end: j + 1 == pts.len(),
                    confidence: if sustained {
                        SUSTAINED_CONFIDENCE
                    } else {
                        UNBOUNDED_CONFIDENCE
                    },
                };
                if best.as_ref().is_none_or(|x| s.points > x.points) {
                    best = Some(s);
                }
            }
        }
        i = j + 1;
    }
    best
}

/// A silence with a batch in flight before and after: the requests running before it
/// did not finish during it. An idle gap follows a drain (the batch already small
/// against the steady one) or starts over from a fresh batch.
///
/// Or a silence after a line that shows requests waiting, nothing running, the pool
/// free and nothing done in its interval: vLLM prints a stats line whenever anything
/// was generated or prefilled (an idle one only once, at INFO), so none of the waiting
/// requests was admitted for the whole silence. After a drain nothing waits.
fn silence(c: &Ctx) -> Option<Stall> {
    let pts = &c.r.timeline.points;
    let steady = c.w.running.unwrap_or(0.0);
    c.r.timeline
        .idle_gaps
        .iter()
        .filter(|g| g.seconds >= SILENCE_S)
        .find_map(|g| {
            let before = pts.iter().rev().find(|p| p.t_s <= g.start_s)?;
            let after = pts
                .iter()
                .find(|p| p.t_s >= g.start_s + g.seconds * 0.999)?;
            if held(before) && quiet(before) {
                let q = before.queued.unwrap_or(0.0);
                return Some(Stall {
                    kind: StallKind::Hang,
                    seconds: g.seconds,
                    points: 0,
                    first_line: before.line,
                    last_line: g.line,
                    running: 0.0,
                    queued_first: q,
                    queued_last: q,
                    kv: before.kv_usage,
                    gen_tok_s: 0.0,
                    to_end: false,
                    confidence: SUSTAINED_CONFIDENCE,
                });
            }
            let (rb, ra) = (before.running?, after.running?);
            let batch_held = rb >= 2.0_f64.max(0.5 * steady) && ra >= 0.5 * rb;
            batch_held.then(|| Stall {
                kind: StallKind::Silence,
                seconds: g.seconds,
                points: 0,
                first_line: before.line,
                last_line: g.line,
                running: rb,
                queued_first: before.queued.unwrap_or(0.0),
                queued_last: after.queued.unwrap_or(0.0),
                kv: before.kv_usage,
                gen_tok_s: 0.0,
                to_end: false,
                confidence: SUSTAINED_CONFIDENCE,
            })
        })
}

/// How the ranks are loaded, where the log prints several.
#[derive(Debug, Clone)]
pub struct Imbalance {
    /// Requests wait on a rank while another has room, and balancing buys enough.
    pub binding: bool,
    /// The most and least loaded ranks (their index in `facts.ranks`).
    pub heavy: usize,
    pub light: usize,
}

/// Balancing must buy at least this for the imbalance to bind.
const BINDING_GAIN: f64 = 0.05;

pub fn imbalance(c: &Ctx) -> Option<Imbalance> {
    let f = &c.ranks.figures;
    if f.len() < 2 {
        return None;
    }
    let load =
        |i: usize| f[i].running_requests.unwrap_or(0.0) + f[i].queued_requests.unwrap_or(0.0);
    let heavy = (0..f.len()).max_by(|&a, &b| load(a).total_cmp(&load(b)))?;
    let light = (0..f.len()).min_by(|&a, &b| load(a).total_cmp(&load(b)))?;
    let run = |i: usize| f[i].running_requests.unwrap_or(0.0);
    let q = |i: usize| f[i].queued_requests.unwrap_or(0.0);
    // A rank with room: it runs clearly fewer than a queueing rank and queues nothing,
    // or has KV to spare where the queueing rank's pool is full.
    let waits = |i: usize| q(i) >= 1.0_f64.max(0.15 * run(i));
    let has_room = |j: usize, i: usize| {
        q(j) < 0.5
            && (run(j) < 0.75 * run(i)
                || f[j]
                    .kv_usage
                    .zip(f[i].kv_usage)
                    .is_some_and(|(kj, ki)| kj < ki - 0.25))
    };
    let binding = (0..f.len()).any(|i| waits(i) && (0..f.len()).any(|j| j != i && has_room(j, i)))
        && c.ranks.balance_gain.is_some_and(|g| g >= BINDING_GAIN);
    if binding {
        return Some(Imbalance {
            binding,
            heavy,
            light,
        });
    }
    // Nothing waits, but the batches differ widely: under DP attention every step
    // waits for the rank with the largest batch. Where requests wait on the ranks,
    // each rank's own limit sets its batch (a rank whose pool is full runs what its
    // requests' lengths let it hold), and routing that changes nothing is no fault.
    let none_waits = (0..f.len()).all(|i| !waits(i));
    let spread = none_waits && run(heavy) >= 1.5 * run(light).max(1.0) && run(heavy) >= 4.0;
    spread.then_some(Imbalance {
        binding,
        heavy,
        light,
    })
}
