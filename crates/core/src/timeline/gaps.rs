//! Prefill batches timed by their own lines.
//!
//! SGLang's prefill line rates prompt tokens over the gap since the previous prefill
//! line (its own batch's tokens where the line reports `#pending-token`, 0.5.11 on; the
//! previous batch's before). When a source logged no decode line between two prefill
//! lines, the gap is that batch's forward pass plus fewer decode steps than the decode
//! log interval: the lower envelope of gap against tokens is the prefill's own cost.

use crate::model::Sample;
use crate::report::PrefillGaps;
use crate::timeline::IDLE_GAP_S;

/// Pairs kept: beyond this, every other one is let go and the stride doubles.
const MAX_PAIRS: usize = 8192;

#[derive(Debug, Clone, Default)]
pub(super) struct GapSample {
    pairs: Vec<(f32, f32)>,
    stride: u64,
    seen: u64,
    batches: u64,
    tokens: u64,
}

impl GapSample {
    /// A prefill line of `tokens` prompt tokens; `prev` the tokens of its source's previous
    /// line when that was a prefill line too.
    pub fn add(&mut self, s: &Sample, tokens: u64, prev: Option<u64>) {
        self.batches += 1;
        self.tokens += tokens;
        let (Some(prev), Some(rate)) = (prev, s.input_tok_s) else {
            return;
        };
        // 0.5.11 on (the lines that report pending tokens) rate the batch of the line;
        // earlier versions the previous line's batch.
        let x = if s.pending_tokens.is_some() {
            tokens
        } else {
            prev
        } as f64;
        if !(rate.is_finite() && rate > 0.0 && x > 0.0) {
            return;
        }
        let secs = x / rate;
        if !(secs.is_finite() && secs > 0.0 && secs <= IDLE_GAP_S) {
            return;
        }
        self.seen += 1;
        let stride = self.stride.max(1);
        if (self.seen - 1) % stride != 0 {
            return;
        }
        self.pairs.push((x as f32, secs as f32));
        if self.pairs.len() >= MAX_PAIRS {
            let mut i = 0;
            self.pairs.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride = stride * 2;
        }
    }

    pub fn report(&self) -> PrefillGaps {
        PrefillGaps {
            pairs: self.pairs.clone(),
            tokens_per_batch: if self.batches > 0 {
                self.tokens as f64 / self.batches as f64
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(tokens: u64, rate: f64, pending: bool) -> Sample {
        Sample {
            prefill_tokens: Some(tokens),
            input_tok_s: Some(rate),
            pending_tokens: pending.then_some(0),
            ..Sample::default()
        }
    }

    #[test]
    fn a_gap_times_the_batch_its_version_rates() {
        let mut g = GapSample::default();
        // The first line of a stretch has no previous prefill line to time from.
        g.add(&line(1000, 10_000.0, true), 1000, None);
        g.add(&line(2000, 10_000.0, true), 2000, Some(1000));
        // Before 0.5.11 the rate is the previous batch's tokens over the gap.
        g.add(&line(4000, 5_000.0, false), 4000, Some(2000));
        let r = g.report();
        assert_eq!(r.pairs, vec![(2000.0, 0.2), (2000.0, 0.4)]);
        assert!((r.tokens_per_batch - 7000.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn the_sample_stays_bounded_and_spread_over_the_run() {
        let mut g = GapSample::default();
        for i in 0..(5 * MAX_PAIRS as u64) {
            g.add(&line(100 + i, 10_000.0, true), 100 + i, Some(1));
        }
        let r = g.report();
        assert!(r.pairs.len() < MAX_PAIRS && r.pairs.len() > MAX_PAIRS / 4);
        // Kept from the start to the end of the run, not only its first lines.
        let last = r.pairs.last().unwrap().0 as u64;
        assert!(last > 4 * MAX_PAIRS as u64, "{last}");
    }
}
