//! How long a forward pass takes: the GPU's side of the simulation, shared by every engine.
//!
//! Decode is memory-bound: a step streams the weights once (`step_a`), pays a per-request
//! overhead (`step_b`: sampling, scheduling, kernel setup) and reads every KV token it
//! holds for attention (`step_c`). Prefill is compute-bound: its matmuls cost
//! `prefill_per_token` per prompt token however the prompts are batched, each pass pays an
//! overhead (`prefill_a`: no CUDA graph, more launches), and its attention grows with each
//! token's position in its sequence (`prefill_attn` per pair of tokens).
//!
//! With `roofline`, a pass streams the weights once and its matmuls take the longer of the
//! weight read and the compute of all its tokens: a small prefill costs at least a decode
//! step, a big decode batch becomes compute-bound, and a prompt chunk sharing a step with
//! decodes (vLLM V1, TensorRT-LLM) hides their weight read. Without it the terms add, as
//! when the matmuls never overlap.

use crate::config::SimConfig;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Cost {
    a: f64,
    b: f64,
    c: f64,
    pa: f64,
    pt: f64,
    attn: f64,
    /// Scales every prefill term (the prefill lever).
    scale: f64,
    roofline: bool,
}

/// Attention pairs of `len` tokens computed at positions `start..start+len` of one
/// sequence (each attends to itself and every earlier token).
#[inline]
pub(crate) fn attn_pairs(start: u64, len: u64) -> f64 {
    let (s, l) = (start as f64, len as f64);
    l * s + l * (l + 1.0) / 2.0
}

impl Cost {
    pub(crate) fn new(c: &SimConfig) -> Self {
        let scale = if c.prefill_cost_scale.is_finite() && c.prefill_cost_scale > 0.0 {
            c.prefill_cost_scale
        } else {
            1.0
        };
        Cost {
            a: c.step_a.max(0.0),
            b: c.step_b.max(0.0),
            c: c.step_c.max(0.0),
            pa: c.prefill_a.max(0.0),
            pt: c.prefill_per_token.max(0.0),
            attn: c.prefill_attn.max(0.0),
            scale,
            roofline: c.roofline,
        }
    }

    /// Seconds of a decode step's fixed part for `n` running requests (all decoding):
    /// everything but the KV read.
    #[inline]
    pub(crate) fn decode_fixed(&self, n: u64) -> f64 {
        let n = n as f64;
        let mm = if self.roofline {
            self.a.max(self.pt * n)
        } else {
            self.a
        };
        mm + self.b * n
    }

    /// Seconds per KV token held, per decode step.
    #[inline]
    pub(crate) fn kv_coef(&self) -> f64 {
        self.c
    }

    /// A decode step of `n` running requests holding `kv` tokens.
    #[inline]
    pub(crate) fn decode(&self, n: u64, kv: u64) -> f64 {
        self.decode_fixed(n) + self.c * kv as f64
    }

    /// A prefill-only pass (SGLang's prefill batch, vLLM V0's prompt step) over `tokens`
    /// prompt tokens with `pairs` attention pairs.
    pub(crate) fn prefill(&self, tokens: u64, pairs: f64) -> f64 {
        let compute = self.pt * tokens as f64;
        if self.roofline {
            self.a.max(self.scale * compute) + self.scale * (self.pa + self.attn * pairs)
        } else {
            self.scale * (self.pa + compute + self.attn * pairs)
        }
    }

    /// A step that decodes `decode_n` of its `n` running requests holding `kv` tokens and
    /// computes `tokens` prompt tokens (`pairs` attention pairs) of the others: its
    /// seconds, and how many of them the prefill adds.
    pub(crate) fn mixed(
        &self,
        n: u64,
        decode_n: u64,
        kv: u64,
        tokens: u64,
        pairs: f64,
    ) -> (f64, f64) {
        let kv_read = self.c * kv as f64;
        let per_req = self.b * n as f64;
        if tokens == 0 {
            let mm = if self.roofline {
                self.a.max(self.pt * decode_n as f64)
            } else {
                self.a
            };
            return (mm + per_req + kv_read, 0.0);
        }
        if !self.roofline {
            let pre = self.scale * (self.pa + self.pt * tokens as f64 + self.attn * pairs);
            return (self.a + per_req + kv_read + pre, pre);
        }
        let own = self.scale * (self.pa + self.attn * pairs);
        let dec = self.pt * decode_n as f64;
        let mm = self.a.max(self.scale * self.pt * tokens as f64 + dec);
        let pre = mm - self.a.max(dec) + own;
        (mm + per_req + kv_read + own, pre)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(roofline: bool) -> SimConfig {
        SimConfig {
            step_a: 0.01,
            step_b: 1e-4,
            step_c: 1e-8,
            prefill_a: 0.005,
            prefill_per_token: 4e-5,
            prefill_attn: 1e-9,
            roofline,
            ..Default::default()
        }
    }

    #[test]
    fn pairs_count_each_token_against_its_prefix() {
        assert_eq!(attn_pairs(0, 1), 1.0);
        assert_eq!(attn_pairs(0, 4), 10.0);
        // A chunk continuing at position 4 attends to the first chunk too.
        assert_eq!(attn_pairs(4, 4), 26.0);
        assert_eq!(attn_pairs(0, 4) + attn_pairs(4, 4), attn_pairs(0, 8));
    }

    #[test]
    fn additive_without_roofline() {
        let c = Cost::new(&cfg(false));
        let d = c.decode(10, 1000);
        assert!((d - (0.01 + 1e-3 + 1e-5)).abs() < 1e-12);
        let p = c.prefill(1000, 5e5);
        assert!((p - (0.005 + 0.04 + 5e-4)).abs() < 1e-12);
        let (m, pre) = c.mixed(10, 9, 1000, 1000, 5e5);
        assert!((m - (d + p)).abs() < 1e-12);
        assert!((pre - p).abs() < 1e-12);
    }

    #[test]
    fn roofline_streams_weights_once() {
        let c = Cost::new(&cfg(true));
        // A tiny prefill still reads every weight.
        assert!(c.prefill(10, 55.0) >= 0.01);
        // A long prompt is compute-bound: twice the tokens, about twice the time.
        let one = c.prefill(8192, 0.0);
        let two = c.prefill(16_384, 0.0);
        assert!((two - c.pa - 2.0 * (one - c.pa)).abs() < 1e-12);
        // A chunk sharing a step with decodes hides their weight read.
        let (m, pre) = c.mixed(33, 32, 10_000, 2048, 0.0);
        let alone = c.decode(32, 10_000) + c.prefill(2048, 0.0);
        assert!(m < alone);
        assert!((m - pre - (0.01 + 33.0 * 1e-4 + 1e-4)).abs() < 1e-9);
        // Big decode batches become compute-bound.
        assert!(c.decode_fixed(1000) > 1000.0 * 4e-5);
    }

    #[test]
    fn scale_halves_long_prefill() {
        let full = Cost::new(&cfg(true));
        let half = Cost::new(&SimConfig {
            prefill_cost_scale: 0.5,
            ..cfg(true)
        });
        let p = full.prefill(16_000, attn_pairs(0, 16_000));
        let q = half.prefill(16_000, attn_pairs(0, 16_000));
        assert!((q / p - 0.5).abs() < 1e-9);
        // Decode does not change.
        assert_eq!(full.decode(64, 50_000), half.decode(64, 50_000));
    }
}
