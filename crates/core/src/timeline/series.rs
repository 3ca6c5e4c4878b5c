//! Bounded, time-bucketed series for charts.
//!
//! Buckets start one second wide; when the run outgrows [`MAX_BUCKETS`] buckets,
//! neighbours merge pairwise and the width doubles. Memory stays fixed whatever
//! the length of the log, and the result does not depend on how input was chunked.

use crate::model::Step;
use crate::report::{Point, StepSums};

pub const MAX_BUCKETS: usize = 512;

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
}

impl Default for Series {
    fn default() -> Self {
        Series {
            width_s: 1.0,
            per_s: 1.0,
            buckets: Vec::new(),
            last: None,
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

    fn find(&mut self, t: f64) -> &mut Bucket {
        let mut q = t * self.per_s;
        while q >= MAX_BUCKETS as f64 {
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
        let mut merged = Vec::with_capacity(MAX_BUCKETS / 2 + 1);
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
    }

    pub fn bucket_seconds(&self) -> f64 {
        self.width_s
    }

    /// Non-empty buckets as chart points. Running/queued/KV come from decode
    /// lines when `prefer_decode`, else from prefill lines.
    pub fn points(&self, prefer_decode: bool) -> Vec<Point> {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.is_empty())
            .map(|(i, b)| Point {
                t_s: i as f64 * self.width_s,
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
}
