//! The part of timed engine steps spent prefilling: a step with prompts also decodes the
//! running requests, so its prefill is the time beyond a decode-only step's.

use crate::model::line::LineSums;

/// Seconds of timed steps and their prefill part, from one scheduler's steps in order.
#[derive(Debug, Clone, Default)]
pub(super) struct StepSplit {
    /// The latest step that only decoded.
    decode_step_s: Option<f64>,
    /// Steps with prompts before any decode-only one: their prefill waits for one, or
    /// at the end for what their own spread says ([`StepSplit::prefill_s`]).
    pending: Pending,
    prefill_s: f64,
}

/// Steps with prompts awaiting a decode-only step: their seconds against their prompt
/// tokens, and the shortest.
#[derive(Debug, Clone, Default)]
struct Pending {
    line: LineSums,
    min_y: f64,
}

/// Fewer steps with prompts than this, alone, say nothing of their decode part.
const MIN_PENDING: f64 = 8.0;

impl StepSplit {
    /// A step of `secs` with `prompt_tokens` prompt tokens, decoding (`decodes`) or not.
    pub(super) fn add(&mut self, secs: f64, prompt_tokens: f64, decodes: bool) {
        if prompt_tokens > 0.0 {
            match self.decode_step_s {
                Some(d) => self.prefill_s += (secs - d).max(0.0),
                None => {
                    let p = &mut self.pending;
                    p.min_y = if p.line.n == 0.0 {
                        secs
                    } else {
                        p.min_y.min(secs)
                    };
                    p.line.add(prompt_tokens, secs);
                }
            }
        } else if decodes {
            if self.decode_step_s.is_none() && self.pending.line.n > 0.0 {
                let p = std::mem::take(&mut self.pending).line;
                self.prefill_s += (p.sum_y() - p.n * secs).max(0.0);
            }
            self.decode_step_s = Some(secs);
        }
    }

    /// The prefill seconds. Steps with prompts that no decode-only step ever followed (every
    /// step prefilled: long prompts, few outputs) are split by their own line of seconds
    /// against prompt tokens: its intercept is the step without prompts, decode and each
    /// pass's fixed cost, so prefill's part there is its tokens' alone, a floor. Where
    /// their prompt tokens do not vary, all of their time is prefill's, a ceiling.
    pub(super) fn prefill_s(&self) -> f64 {
        let (p, min_y) = (&self.pending.line, self.pending.min_y);
        if p.n == 0.0 {
            return self.prefill_s;
        }
        let intercept = match (p.slope(), p.intercept()) {
            (Some(slope), Some(a)) if p.n >= MIN_PENDING && slope > 0.0 => a.clamp(0.0, min_y),
            _ => 0.0,
        };
        self.prefill_s + (p.sum_y() - p.n * intercept).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefill_step_costs_what_it_takes_beyond_the_latest_decode_step() {
        let mut s = StepSplit::default();
        s.add(0.010, 0.0, true);
        s.add(0.050, 2048.0, true);
        s.add(0.012, 0.0, true);
        s.add(0.030, 1000.0, true);
        assert!((s.prefill_s() - 0.058).abs() < 1e-12, "{}", s.prefill_s());
    }

    #[test]
    fn prefill_steps_before_the_first_decode_step_wait_for_it() {
        let mut s = StepSplit::default();
        s.add(0.050, 2048.0, true);
        s.add(0.040, 1500.0, true);
        s.add(0.010, 0.0, true);
        assert!((s.prefill_s() - 0.070).abs() < 1e-12, "{}", s.prefill_s());
    }

    /// Every step prefills (chunks of a long prompt, a few outputs each): the decode part
    /// is the intercept of their seconds against their prompt tokens, not zero.
    #[test]
    fn steps_that_all_prefill_are_split_by_their_own_spread() {
        let mut s = StepSplit::default();
        let (decode, per_token) = (0.015, 1e-5);
        let mut total = 0.0;
        for i in 0..40 {
            let tokens = if i % 4 == 3 {
                300.0 + 50.0 * i as f64
            } else {
                2048.0
            };
            let secs = decode + per_token * tokens;
            total += secs;
            s.add(secs, tokens, true);
        }
        let share = s.prefill_s() / total;
        let truth = 1.0 - 40.0 * decode / total;
        assert!((share - truth).abs() < 1e-6, "{share} vs {truth}");
        assert!(share < 0.6, "{share}");
    }

    #[test]
    fn steps_of_one_size_that_all_prefill_are_prefill_throughout() {
        let mut s = StepSplit::default();
        for _ in 0..20 {
            s.add(0.035, 2048.0, true);
        }
        assert!((s.prefill_s() - 0.7).abs() < 1e-9);
    }
}
