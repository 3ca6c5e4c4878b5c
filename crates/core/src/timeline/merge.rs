//! Engine iterations merged into samples of about a second.
//!
//! Some engines log every iteration (TensorRT-LLM): a decode step of a few
//! tens of milliseconds, a prefill step of a few hundred. A rate is tokens over
//! its interval, so taking such records one by one weights a short decode step
//! as much as a long prefill step, and overstates generation several-fold when
//! prefill takes most of the time. Records that state their interval are
//! merged, per source, into samples covering at least [`MERGE_S`], whose rates
//! are the tokens over the summed time, as periodic stats lines give them.

use crate::model::time::Stamp;
use crate::model::Sample;

/// Seconds of iterations merged into one sample.
pub const MERGE_S: f64 = 1.0;

/// Tokens over seconds, of the records that state the rate.
#[derive(Debug, Default, Clone, Copy)]
struct Rate {
    tokens: f64,
    secs: f64,
}

impl Rate {
    fn add(&mut self, rate: Option<f64>, secs: f64) {
        if let Some(r) = rate.filter(|r| r.is_finite()) {
            self.tokens += r * secs;
            self.secs += secs;
        }
    }

    fn get(self) -> Option<f64> {
        (self.secs > 0.0).then(|| self.tokens / self.secs)
    }
}

/// The records of one source merged so far.
#[derive(Debug, Clone, Default)]
pub(super) struct Merging {
    /// The latest record: the state (running, queue, pool) at the end of the span.
    last: Option<Sample>,
    secs: f64,
    gen: Rate,
    input: Rate,
    preempted: Option<u32>,
    new_seqs: Option<u32>,
    prefill_tokens: Option<u64>,
    cached_tokens: Option<u64>,
    damaged: bool,
}

/// Two stamps further apart than a merged span can be.
fn apart(a: Option<&Stamp>, b: Option<&Stamp>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            (a.year, a.month, a.day) != (b.year, b.month, b.day)
                || (a.second_of_day - b.second_of_day).abs() > 2.0 * MERGE_S
        }
        _ => false,
    }
}

fn sum<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

impl Merging {
    /// Adds record `s` covering `secs` (finite, positive); the merged sample once the records
    /// cover [`MERGE_S`]. A record of another kind, or one printed well after
    /// the last (the engine was idle), ends the span before it.
    pub fn add(&mut self, s: &Sample, secs: f64, out: &mut Vec<Sample>) {
        if self
            .last
            .as_ref()
            .is_some_and(|l| l.kind != s.kind || apart(l.stamp.as_ref(), s.stamp.as_ref()))
        {
            out.extend(self.take());
        }
        self.secs += secs;
        self.gen.add(s.gen_tok_s, secs);
        self.input.add(s.input_tok_s, secs);
        self.preempted = sum(self.preempted, s.preempted);
        self.new_seqs = sum(self.new_seqs, s.new_seqs);
        self.prefill_tokens = sum(self.prefill_tokens, s.prefill_tokens);
        self.cached_tokens = sum(self.cached_tokens, s.cached_tokens);
        self.damaged |= s.damaged;
        self.last = Some(s.clone());
        if self.secs >= MERGE_S {
            out.extend(self.take());
        }
    }

    /// The sample of the records merged so far, if any.
    pub fn take(&mut self) -> Option<Sample> {
        let m = std::mem::take(self);
        let mut s = m.last?;
        s.gen_tok_s = m.gen.get();
        s.input_tok_s = m.input.get();
        s.preempted = m.preempted;
        s.new_seqs = m.new_seqs;
        s.prefill_tokens = m.prefill_tokens;
        s.cached_tokens = m.cached_tokens;
        s.damaged = m.damaged;
        s.interval_s = Some(m.secs);
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iteration(gen: f64, input: f64, secs: f64, running: u32) -> Sample {
        Sample {
            running: Some(running),
            gen_tok_s: Some(gen / secs),
            input_tok_s: Some(input / secs),
            interval_s: Some(secs),
            ..Sample::default()
        }
    }

    #[test]
    fn rates_are_tokens_over_the_time_of_the_merged_iterations() {
        let mut m = Merging::default();
        let mut out = Vec::new();
        // 20 decode steps of 30 ms with 60 requests, then one prefill step of
        // 400 ms: 1.0 s, 1260 tokens generated and 8000 prompt tokens.
        for _ in 0..20 {
            m.add(&iteration(60.0, 0.0, 0.03, 60), 0.03, &mut out);
        }
        assert!(out.is_empty());
        m.add(&iteration(60.0, 8000.0, 0.4, 61), 0.4, &mut out);
        assert_eq!(out.len(), 1);
        let s = &out[0];
        assert!((s.gen_tok_s.unwrap() - 1260.0).abs() < 1e-6, "{s:?}");
        assert!((s.input_tok_s.unwrap() - 8000.0).abs() < 1e-6, "{s:?}");
        assert_eq!(s.running, Some(61));
        assert!((s.interval_s.unwrap() - 1.0).abs() < 1e-9);
        // The mean of the 21 rates would be ~1900 tok/s.
        assert!(m.last.is_none());
    }

    #[test]
    fn counts_are_summed_and_a_record_of_another_kind_ends_the_span() {
        let mut m = Merging::default();
        let mut out = Vec::new();
        let paused = |n| Sample {
            preempted: Some(n),
            ..iteration(10.0, 0.0, 0.1, 10)
        };
        m.add(&paused(2), 0.1, &mut out);
        m.add(&paused(0), 0.1, &mut out);
        m.add(&paused(3), 0.1, &mut out);
        let other = Sample {
            kind: Some(crate::model::SampleKind::Prefill),
            ..iteration(0.0, 100.0, 0.1, 10)
        };
        m.add(&other, 0.1, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].preempted, Some(5));
        assert!((out[0].gen_tok_s.unwrap() - 100.0).abs() < 1e-9);
        assert!(m.last.is_some());
        let last = m.take().unwrap();
        assert_eq!(last.kind, Some(crate::model::SampleKind::Prefill));
        assert_eq!(m.take(), None);
    }

    #[test]
    fn a_record_printed_after_a_silence_starts_a_new_span() {
        let at = |second_of_day| Sample {
            stamp: Some(Stamp {
                year: Some(2026),
                month: Some(2),
                day: Some(24),
                second_of_day,
            }),
            ..iteration(10.0, 0.0, 0.1, 10)
        };
        let mut m = Merging::default();
        let mut out = Vec::new();
        m.add(&at(100.0), 0.1, &mut out);
        m.add(&at(101.0), 0.1, &mut out);
        assert!(out.is_empty());
        m.add(&at(160.0), 0.1, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].stamp.unwrap().second_of_day, 101.0);
        assert!((out[0].interval_s.unwrap() - 0.2).abs() < 1e-9);
    }
}
