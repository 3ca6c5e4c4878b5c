//! Bounded, time-bucketed series for charts.
//!
//! Buckets start one second wide; when the run outgrows [`MAX_BUCKETS`] buckets,
//! neighbours merge pairwise and the width doubles. Memory stays fixed whatever
//! the length of the log, and the result does not depend on how input was chunked.
//!
//! A series can carry a finer twin ([`Series::detailed`]: up to [`DETAIL_BUCKETS`]
//! buckets, as bounded): a window of the run is then cut from it and merged the
//! same way to chart resolution ([`Series::window`]), so a zoom shows the lines'
//! detail rather than a few of the report's buckets stretched.

use crate::model::Step;
use crate::report::{Point, StepSums};

pub const MAX_BUCKETS: usize = 512;
/// Buckets of the combined series' finer twin: a day-long run in 4-s buckets.
pub const DETAIL_BUCKETS: usize = 32_768;
/// Buckets of each source's finer twin (up to [`super::MAX_SOURCE_SERIES`] of them).
pub const SOURCE_DETAIL_BUCKETS: usize = 4_096;

/// Running sum of one metric inside a bucket: a point shows its mean.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Acc {
    sum: f64,
    n: u32,
}

impl Acc {
    fn add(&mut self, v: f64) {
        self.sum += v;
        self.n += 1;
    }
    fn merge(&mut self, o: &Acc) {
        if o.n == 0 {
            // Untouched, as a sum of none (`-0.0 + 0.0` is `0.0`).
            return;
        }
        self.sum += o.sum;
        self.n += o.n;
    }
    fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| crate::text::round::sig(self.sum / self.n as f64))
    }
}

fn pick(prefer_decode: bool, decode: &Acc, prefill: &Acc) -> Option<f64> {
    if prefer_decode {
        decode.mean().or_else(|| prefill.mean())
    } else {
        prefill.mean()
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Bucket {
    samples: u32,
    first_line: u64,
    running: Acc,
    queued: Acc,
    kv_usage: Acc,
    /// The same three, from prefill lines (used when a log has no decode lines).
    p_running: Acc,
    p_queued: Acc,
    p_kv_usage: Acc,
    gen: Acc,
    /// Generated tokens of the lines that say the time their rate covers, and that time.
    gen_tokens: f64,
    gen_secs: f64,
    gen_timed: u32,
    /// Prompt tokens prefilled within the intervals `gen_secs` covers.
    prompt_tokens: f64,
    input: Acc,
    retractions: u32,
    steps: StepSums,
}

impl Bucket {
    fn merge(&mut self, o: &Bucket) {
        if self.samples == 0 && self.retractions == 0 {
            self.first_line = o.first_line;
        }
        self.samples += o.samples;
        self.running.merge(&o.running);
        self.queued.merge(&o.queued);
        self.kv_usage.merge(&o.kv_usage);
        self.p_running.merge(&o.p_running);
        self.p_queued.merge(&o.p_queued);
        self.p_kv_usage.merge(&o.p_kv_usage);
        self.gen.merge(&o.gen);
        self.gen_tokens += o.gen_tokens;
        self.gen_secs += o.gen_secs;
        self.gen_timed += o.gen_timed;
        self.prompt_tokens += o.prompt_tokens;
        self.input.merge(&o.input);
        self.retractions += o.retractions;
        let (a, b) = (&mut self.steps, &o.steps);
        a.steps += b.steps;
        a.secs += b.secs;
        a.decode_steps += b.decode_steps;
        a.decode_secs += b.decode_secs;
        a.decode_requests += b.decode_requests;
        a.decode_tokens += b.decode_tokens;
        a.prefill_steps += b.prefill_steps;
        a.prefill_secs += b.prefill_secs;
        a.prompt_tokens += b.prompt_tokens;
    }
    // Steps alone make no point: a bucket is the stats lines' (steps only add to it).
    fn is_empty(&self) -> bool {
        self.samples == 0 && self.retractions == 0
    }
}

/// Values of one observation to put in a series.
#[derive(Debug, Clone, Copy, Default)]
pub struct Obs {
    pub running: Option<f64>,
    pub queued: Option<f64>,
    pub kv_usage: Option<f64>,
    pub gen_tok_s: Option<f64>,
    pub input_tok_s: Option<f64>,
    /// Tokens generated over the interval the rate covers, and its seconds.
    pub gen_timed: Option<(f64, f64)>,
    /// Prompt tokens prefilled within the interval of `gen_timed`.
    pub prompt_tokens: f64,
    /// From a prefill line rather than a decode/interval line.
    pub prefill: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// A power of two (1 s, doubled as the run grows), so `t * per_s` below is
    /// exactly `t / width_s`, without a division per sample.
    width_s: f64,
    per_s: f64,
    buckets: Vec<Bucket>,
    /// The last bucket found and the times it covers, `[from, to)`: lines
    /// come in time order, many to a bucket.
    last: Option<(f64, f64, usize)>,
    /// Buckets at most: past this many the width doubles.
    max: usize,
    /// The same observations in finer buckets, for windows of the run.
    fine: Option<Box<Series>>,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            width_s: 1.0,
            per_s: 1.0,
            buckets: Vec::new(),
            last: None,
            max: MAX_BUCKETS,
            fine: None,
        }
    }
}

impl Series {
    #[inline]
    fn slot(&mut self, t_s: f64) -> &mut Bucket {
        let t = if t_s.is_finite() && t_s > 0.0 {
            t_s
        } else {
            0.0
        };
        // Bucket `i` holds exactly the times in [i·w, (i+1)·w): `w` is a power
        // of two, so `t · per_s` below is exact and its floor is `i` there.
        match self.last {
            Some((from, to, i)) if t >= from && t < to => &mut self.buckets[i],
            _ => self.find(t),
        }
    }

    /// A series with a finer twin of up to `detail` buckets (see [`Series::window`]).
    pub fn detailed(detail: usize) -> Series {
        Series {
            fine: Some(Box::new(Series {
                max: detail.max(MAX_BUCKETS),
                ..Series::default()
            })),
            ..Series::default()
        }
    }

    fn find(&mut self, t: f64) -> &mut Bucket {
        let mut q = t * self.per_s;
        while q >= self.max as f64 {
            self.halve();
            q = t * self.per_s;
        }
        let i = q as usize;
        if self.buckets.len() <= i {
            self.buckets.resize(i + 1, Bucket::default());
        }
        self.last = Some((i as f64 * self.width_s, (i + 1) as f64 * self.width_s, i));
        &mut self.buckets[i]
    }

    fn halve(&mut self) {
        let mut merged = Vec::with_capacity(self.buckets.len() / 2 + 1);
        for pair in self.buckets.chunks(2) {
            let mut b = pair[0].clone();
            if let Some(o) = pair.get(1) {
                b.merge(o);
            }
            merged.push(b);
        }
        self.buckets = merged;
        self.width_s *= 2.0;
        self.per_s /= 2.0;
        self.last = None;
    }

    /// Inlined into its two callers, so `o` stays in registers: built on the
    /// stack, its fields were read back two at a time, a load the processor
    /// cannot forward from the stores that wrote them one by one.
    #[inline(always)]
    pub fn add(&mut self, t_s: f64, line: u64, o: &Obs) {
        let b = self.slot(t_s);
        if b.is_empty() {
            b.first_line = line;
        }
        b.samples += 1;
        let put = |acc: &mut Acc, v: Option<f64>| {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                acc.add(v)
            }
        };
        if o.prefill {
            put(&mut b.p_running, o.running);
            put(&mut b.p_queued, o.queued);
            put(&mut b.p_kv_usage, o.kv_usage);
        } else {
            put(&mut b.running, o.running);
            put(&mut b.queued, o.queued);
            put(&mut b.kv_usage, o.kv_usage);
        }
        put(&mut b.gen, o.gen_tok_s);
        if let Some((tokens, secs)) = o.gen_timed.filter(|(t, s)| t.is_finite() && s.is_finite()) {
            b.gen_tokens += tokens;
            b.gen_secs += secs;
            b.gen_timed += 1;
            b.prompt_tokens += o.prompt_tokens;
        }
        put(&mut b.input, o.input_tok_s);
        if self.fine.is_some() {
            self.add_fine(t_s, line, o);
        }
    }

    // Out of line: the per-line `add` stays small where no twin is kept (the CLI).
    #[inline(never)]
    fn add_fine(&mut self, t_s: f64, line: u64, o: &Obs) {
        if let Some(f) = self.fine.as_mut() {
            f.add(t_s, line, o);
        }
    }

    /// An engine step of `secs` seconds: prefill when it computed prompt tokens.
    pub fn add_step(&mut self, t_s: f64, st: &Step) {
        let b = &mut self.slot(t_s).steps;
        b.steps += 1;
        b.secs += st.secs;
        if st.ctx_tokens > 0 {
            b.prefill_steps += 1;
            b.prefill_secs += st.secs;
            b.prompt_tokens += st.ctx_tokens as f64;
        } else {
            b.decode_steps += 1;
            b.decode_secs += st.secs;
            b.decode_requests += f64::from(st.gen_requests);
            b.decode_tokens += st.gen_tokens as f64;
        }
    }

    /// The buckets that hold engine steps, with their start.
    pub fn steps(&self) -> Vec<StepSums> {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, b)| b.steps.steps > 0)
            .map(|(i, b)| StepSums {
                t_s: i as f64 * self.width_s,
                ..b.steps
            })
            .collect()
    }

    pub fn add_retraction(&mut self, t_s: f64, line: u64) {
        let b = self.slot(t_s);
        if b.is_empty() {
            b.first_line = line;
        }
        b.retractions += 1;
        if let Some(f) = self.fine.as_mut() {
            f.add_retraction(t_s, line);
        }
    }

    /// Bytes held on the heap, the finer twin's included.
    pub fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<Bucket>()
            + self
                .fine
                .as_ref()
                .map_or(0, |f| std::mem::size_of::<Series>() + f.heap_bytes())
    }

    /// The window `[t0_s, t1_s)` of the run in at most [`MAX_BUCKETS`] buckets, from
    /// the finer twin where there is one: its buckets there, merged pairwise (as
    /// the series merges them as it grows) until that many cover the window, no
    /// narrower than `min_width_s` nor than half the lines' usual spacing (a
    /// bucket of its own for each line would break the chart's line at every
    /// empty one). Returns the buckets' width and their points; each bucket is
    /// the one a series of that width fed only the window's observations holds.
    pub fn window(
        &self,
        t0_s: f64,
        t1_s: f64,
        prefer_decode: bool,
        min_width_s: f64,
    ) -> (f64, Vec<Point>) {
        let s = self.fine.as_deref().unwrap_or(self);
        let t0 = t0_s.max(0.0);
        if !(t1_s > t0 && t1_s.is_finite()) {
            return (s.width_s, Vec::new());
        }
        let t1 = t1_s.min(s.buckets.len() as f64 * s.width_s).max(t0);
        let floor = min_width_s.max(s.width_s * s.spacing(t0, t1) as f64 / 2.0);
        // Powers of two times the twin's width: each window bucket is whole twin buckets.
        let mut width = s.width_s;
        while (t1 - t0) / width > MAX_BUCKETS as f64 || width < floor {
            width *= 2.0;
        }
        let per = (width / s.width_s) as usize;
        let first = (t0 / width).floor() as usize;
        let end = ((t1 / width).ceil() as usize).saturating_mul(per);
        let lo = first.saturating_mul(per).min(s.buckets.len());
        let hi = end.min(s.buckets.len()).max(lo);
        let mut part = Series {
            width_s: s.width_s,
            per_s: s.per_s,
            buckets: s.buckets[lo..hi].to_vec(),
            last: None,
            max: usize::MAX,
            fine: None,
        };
        // `lo` is a multiple of `per`: the pairs merged are those of the whole series.
        while part.width_s < width {
            part.halve();
        }
        (part.width_s, part.points_from(first, prefer_decode))
    }

    /// The width of this series' widest twin bucket (its own, without one).
    pub fn detail_width(&self) -> f64 {
        self.fine.as_deref().unwrap_or(self).width_s
    }

    /// The median distance, in buckets, between neighbouring non-empty buckets of
    /// `[t0, t1)` (silences left out); 1 when there are too few to tell.
    fn spacing(&self, t0: f64, t1: f64) -> usize {
        let lo = ((t0 * self.per_s) as usize).min(self.buckets.len());
        let hi = ((t1 * self.per_s).ceil() as usize).min(self.buckets.len());
        let silence = (super::IDLE_GAP_S * self.per_s).max(1.0) as usize;
        let mut prev = None;
        let mut gaps: Vec<usize> = Vec::new();
        for (i, b) in self.buckets[lo..hi].iter().enumerate() {
            if b.samples == 0 {
                continue;
            }
            if let Some(p) = prev {
                if i - p <= silence {
                    gaps.push(i - p);
                }
            }
            prev = Some(i);
        }
        if gaps.len() < 3 {
            return 1;
        }
        let mid = gaps.len() / 2;
        *gaps.select_nth_unstable(mid).1
    }

    pub fn bucket_seconds(&self) -> f64 {
        self.width_s
    }

    /// Non-empty buckets as chart points. Running/queued/KV come from decode
    /// lines when `prefer_decode`, else from prefill lines.
    pub fn points(&self, prefer_decode: bool) -> Vec<Point> {
        self.points_from(0, prefer_decode)
    }

    /// [`Series::points`] of buckets that start at bucket `base` of the run.
    fn points_from(&self, base: usize, prefer_decode: bool) -> Vec<Point> {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.is_empty())
            .map(|(i, b)| Point {
                t_s: (base + i) as f64 * self.width_s,
                samples: b.samples,
                line: b.first_line,
                // Decode lines win; prefill lines fill in what they lack (cut or old formats).
                running: pick(prefer_decode, &b.running, &b.p_running),
                queued: pick(prefer_decode, &b.queued, &b.p_queued),
                kv_usage: pick(prefer_decode, &b.kv_usage, &b.p_kv_usage),
                gen_tok_s: b.gen.mean(),
                input_tok_s: b.input.mean(),
                retractions: b.retractions,
                gen_tokens: b.gen_tokens,
                gen_secs: b.gen_secs,
                gen_timed: b.gen_timed,
                // Lines with a rate (`gen` counts them) but no interval behind it.
                untimed: b.gen.n.saturating_sub(b.gen_timed),
                prompt_tokens: b.prompt_tokens,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_stay_bounded_and_keep_their_mean() {
        let mut s = Series::default();
        for i in 0..100_000u64 {
            s.add(
                i as f64,
                i + 1,
                &Obs {
                    running: Some(10.0),
                    ..Obs::default()
                },
            );
        }
        let p = s.points(true);
        assert!(p.len() <= MAX_BUCKETS, "{} points", p.len());
        assert!(s.bucket_seconds() >= 100_000.0 / MAX_BUCKETS as f64);
        assert!(p.iter().all(|p| p.running == Some(10.0)));
        assert_eq!(p.iter().map(|p| p.samples as u64).sum::<u64>(), 100_000);
        assert_eq!(p[0].line, 1);
    }

    /// A decode line every 3 s (or so) for 20 hours, with varying figures.
    fn day_of_lines() -> Vec<(f64, u64, Obs)> {
        (0..24_000u64)
            .map(|i| {
                let t = i as f64 * 3.0 + (i % 7) as f64 * 0.25;
                let o = Obs {
                    running: Some((i % 61) as f64),
                    queued: Some((i % 13) as f64),
                    kv_usage: Some(0.5 + (i % 40) as f64 / 100.0),
                    gen_tok_s: Some(800.0 + (i % 97) as f64 * 3.5),
                    input_tok_s: (i % 5 == 0).then_some(1200.0),
                    gen_timed: Some((2400.0 + i as f64, 3.0)),
                    prompt_tokens: (i % 3) as f64,
                    prefill: false,
                };
                (t, i + 1, o)
            })
            .collect()
    }

    #[test]
    fn a_window_holds_the_buckets_of_its_own_lines_only() {
        let lines = day_of_lines();
        let mut s = Series::detailed(DETAIL_BUCKETS);
        for (i, (t, line, o)) in lines.iter().enumerate() {
            s.add(*t, *line, o);
            if i % 500 == 0 {
                s.add_retraction(*t, *line);
            }
        }
        let coarse = s.points(true);
        let span = lines.last().unwrap().0;
        // 1 % of the run, in the middle.
        let (t0, t1) = (span * 0.5, span * 0.51);
        let (width, points) = s.window(t0, t1, true, 0.0);
        assert!(
            width < s.bucket_seconds() / 16.0,
            "{width} s against {} s",
            s.bucket_seconds()
        );
        let inside = |t: f64| t >= t0 && t < t1;
        let shown = coarse.iter().filter(|p| inside(p.t_s)).count();
        let zoomed = points.iter().filter(|p| inside(p.t_s)).count();
        assert!(
            zoomed > 20 * shown.max(1),
            "{zoomed} buckets zoomed, {shown} in the report"
        );
        // The same as bucketing, at that width, only the lines of the window's buckets.
        let (from, to) = (points[0].t_s, points.last().unwrap().t_s + width);
        let mut only = Series {
            width_s: width,
            per_s: 1.0 / width,
            max: usize::MAX,
            ..Series::default()
        };
        for (i, (t, line, o)) in lines.iter().enumerate() {
            if *t >= from && *t < to {
                only.add(*t, *line, o);
                if i % 500 == 0 {
                    only.add_retraction(*t, *line);
                }
            }
        }
        let expected = only.points(true);
        assert_eq!(points.len(), expected.len());
        for (a, b) in points.iter().zip(&expected) {
            assert_eq!(
                (a.t_s, a.samples, a.line, a.retractions),
                (b.t_s, b.samples, b.line, b.retractions)
            );
            assert_eq!(
                (a.running, a.queued, a.kv_usage),
                (b.running, b.queued, b.kv_usage)
            );
            assert_eq!((a.gen_tok_s, a.input_tok_s), (b.gen_tok_s, b.input_tok_s));
            assert!((a.gen_tokens - b.gen_tokens).abs() < 1e-6 * b.gen_tokens.abs());
            assert_eq!(
                (a.gen_secs, a.gen_timed, a.prompt_tokens),
                (b.gen_secs, b.gen_timed, b.prompt_tokens)
            );
        }
        // The whole run at the report's width is the report's series.
        let (w, all) = s.window(0.0, span + 1.0, true, s.bucket_seconds());
        assert_eq!(w, s.bucket_seconds());
        assert_eq!(all.len(), coarse.len());
        for (a, b) in all.iter().zip(&coarse) {
            assert_eq!(
                (a.t_s, a.samples, a.line, a.running),
                (b.t_s, b.samples, b.line, b.running)
            );
        }
    }

    #[test]
    fn lines_sparser_than_the_twin_get_buckets_wide_enough_to_join() {
        // A line every 10 s (vLLM): 1-s buckets would leave nine empty between lines.
        let mut s = Series::detailed(DETAIL_BUCKETS);
        for i in 0..2_000u64 {
            let o = Obs {
                running: Some(8.0),
                ..Obs::default()
            };
            s.add(i as f64 * 10.0, i + 1, &o);
        }
        let (width, points) = s.window(1_000.0, 1_600.0, true, 0.0);
        assert!((5.0..=10.0).contains(&width), "{width}");
        let most = points
            .windows(2)
            .map(|w| w[1].t_s - w[0].t_s)
            .fold(0.0, f64::max);
        assert!(
            most < 2.5 * width,
            "a {most}-s step between {width}-s buckets"
        );
    }

    #[test]
    fn the_twin_stays_bounded() {
        let mut s = Series::detailed(DETAIL_BUCKETS);
        for i in 0..200_000u64 {
            s.add(i as f64, i + 1, &Obs::default());
        }
        let fine = s.fine.as_ref().unwrap();
        assert!(fine.buckets.len() <= DETAIL_BUCKETS);
        assert!(s.heap_bytes() < DETAIL_BUCKETS * 2 * std::mem::size_of::<Bucket>() + 64 * 1024);
    }
}
