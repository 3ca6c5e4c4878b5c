//! Streaming estimators: mean, max and quantiles in bounded memory.
//!
//! Values are kept exactly until [`EXACT_LIMIT`]; past that they fold into a
//! log-spaced histogram keyed by the float's exponent and top mantissa bits
//! (relative error < 0.4 %). Keying on bits instead of `ln` keeps the result
//! identical on every platform.

use crate::model::Distribution;
use crate::text::round::sig;

const EXACT_LIMIT: usize = 2048;
/// Mantissa bits kept in a histogram key: 2^-8 relative resolution.
const MANTISSA_BITS: u32 = 8;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stream {
    n: u64,
    sum: f64,
    max: f64,
    exact: Vec<f64>,
    hist: Hist,
}

/// Dense counts over a contiguous key range (values cluster within a few decades,
/// so this stays small; it grows at either end as needed).
#[derive(Debug, Clone, Default, PartialEq)]
struct Hist {
    /// Values of zero (and anything that rounds to it), kept apart so the dense
    /// range does not have to reach down to key 0.
    zeros: u64,
    base: u32,
    counts: Vec<u64>,
}

/// Keys outside [1e-9, 1e12] are clamped to it: the range, and so the memory, stays
/// bounded (≤ 18K buckets) whatever values a hostile log holds. `max` stays exact.
fn clamp_key(k: u32) -> u32 {
    k.clamp(key(1e-9), key(1e12))
}

impl Hist {
    fn is_empty(&self) -> bool {
        self.counts.is_empty() && self.zeros == 0
    }

    /// Counts key `k`: one subtraction and one comparison when the key is
    /// within the range already held (nearly always, once values settle).
    #[inline]
    fn bump(&mut self, k: u32) {
        // Keys in the range are clamped ones (the range only holds such), and
        // zero is below every clamped key: it wraps far past the range's end.
        if let Some(c) = self.counts.get_mut(k.wrapping_sub(self.base) as usize) {
            *c += 1;
            return;
        }
        self.bump_outside(k);
    }

    #[inline(never)]
    fn bump_outside(&mut self, k: u32) {
        if k == 0 {
            self.zeros += 1;
            return;
        }
        let k = clamp_key(k);
        if self.counts.is_empty() {
            self.base = k;
            self.counts.push(0);
        } else if k < self.base {
            let grow = (self.base - k) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.base = k;
        } else if (k - self.base) as usize >= self.counts.len() {
            self.counts.resize((k - self.base) as usize + 1, 0);
        }
        self.counts[(k - self.base) as usize] += 1;
    }

    /// Non-empty buckets in key order.
    fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let zeros = (self.zeros > 0).then_some((0, self.zeros));
        zeros.into_iter().chain(
            self.counts
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(move |(i, c)| (self.base + i as u32, *c)),
        )
    }
}

fn key(v: f64) -> u32 {
    // Non-negative floats order like their bit patterns. A comparison, not
    // `f64::max`: in wasm that is a call to `fmax`, once per value.
    let v = if v > 0.0 { v } else { 0.0 };
    (v.to_bits() >> (52 - MANTISSA_BITS)) as u32
}

fn unkey(k: u32) -> f64 {
    let lo = f64::from_bits((k as u64) << (52 - MANTISSA_BITS));
    let hi = f64::from_bits(((k as u64) + 1) << (52 - MANTISSA_BITS));
    if lo == 0.0 {
        0.0
    } else {
        (lo + hi) / 2.0
    }
}

impl Stream {
    /// Bytes held on the heap (bounded: the exact values, then the histogram).
    pub fn heap_bytes(&self) -> usize {
        (self.exact.capacity() + self.hist.counts.capacity()) * 8
    }

    pub fn add(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        if self.n == 0 || v > self.max {
            self.max = v;
        }
        self.n += 1;
        self.sum += v;
        if self.n as usize <= EXACT_LIMIT {
            self.exact.push(v);
            return;
        }
        if !self.exact.is_empty() {
            self.fold_exact();
        }
        self.hist.bump(key(v));
    }

    /// The exact values fold into the histogram, once.
    #[inline(never)]
    fn fold_exact(&mut self) {
        for x in std::mem::take(&mut self.exact) {
            self.hist.bump(key(x));
        }
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }

    /// The q-quantile (0..1), by linear interpolation between closest ranks while
    /// exact, by histogram bucket afterwards.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        if self.hist.is_empty() {
            let mut v = self.exact.clone();
            v.sort_by(|a, b| a.total_cmp(b));
            let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
            let i = pos.floor() as usize;
            let frac = pos - i as f64;
            let hi = v[(i + 1).min(v.len() - 1)];
            return Some(v[i] + (hi - v[i]) * frac);
        }
        let target = (q.clamp(0.0, 1.0) * (self.n - 1) as f64).round() as u64;
        let mut seen = 0u64;
        for (k, c) in self.hist.iter() {
            seen += c;
            if seen > target {
                return Some(unkey(k).min(self.max));
            }
        }
        Some(self.max)
    }

    pub fn distribution(&self) -> Option<Distribution> {
        Some(Distribution {
            mean: sig(self.mean()?),
            p50: sig(self.quantile(0.5)?),
            p90: sig(self.quantile(0.9)?),
            max: sig(self.max()?),
            count: self.n,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_are_exact() {
        let mut s = Stream::default();
        for v in [56.0, 56.0, 57.0, 55.0, 56.0] {
            s.add(v);
        }
        let d = s.distribution().unwrap();
        assert_eq!((d.mean, d.p50, d.max, d.count), (56.0, 56.0, 57.0, 5));
    }

    #[test]
    fn large_sets_stay_within_half_a_percent() {
        let mut s = Stream::default();
        for i in 0..100_000u32 {
            s.add((i % 1000) as f64 + 1.0);
        }
        let p50 = s.quantile(0.5).unwrap();
        let p90 = s.quantile(0.9).unwrap();
        assert!((p50 - 500.0).abs() / 500.0 < 0.005, "p50 {p50}");
        assert!((p90 - 900.0).abs() / 900.0 < 0.005, "p90 {p90}");
        assert_eq!(s.max(), Some(1000.0));
        assert!(s.hist.counts.len() < 5000);
    }

    #[test]
    fn zeros_and_extreme_values_keep_the_histogram_small() {
        let mut s = Stream::default();
        for i in 0..10_000u32 {
            s.add(match i % 4 {
                0 => 0.0,
                1 => 1e-300,
                2 => 1e300,
                _ => 5.0,
            });
        }
        assert!(s.hist.counts.len() < 20_000, "{}", s.hist.counts.len());
        assert_eq!(s.quantile(0.0), Some(0.0));
        assert_eq!(s.max(), Some(1e300));
        // Tiny values land in the lowest bucket, not at zero and not lost.
        let p30 = s.quantile(0.3).unwrap();
        assert!(p30 > 0.0 && p30 < 1e-8, "{p30}");
        assert!((s.quantile(0.6).unwrap() - 5.0).abs() < 0.05);
    }

    #[test]
    fn negative_zero_is_a_zero() {
        let mut s = Stream::default();
        for i in 0..(EXACT_LIMIT as u32 + 10) {
            s.add(if i % 2 == 0 { -0.0 } else { 3.0 });
        }
        assert!(!s.hist.is_empty());
        assert_eq!(s.hist.zeros, (EXACT_LIMIT as u64 + 10) / 2);
        assert_eq!(s.quantile(0.0), Some(0.0));
    }
}
