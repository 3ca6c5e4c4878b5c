//! vLLM V1's per-step line (`--enable-logging-iteration-details`, `core.py`'s
//! `log_iteration_details`):
//!
//! `Iteration(515): 0 context requests, 0 context tokens, 32 generation requests,
//! 32 generation tokens, iteration elapsed time: 23.45 ms`
//!
//! Later builds add ` (dummy)` after the time (a DP rank's idle step) and `, GPU KV
//! cache usage: 99.1%`; an `Engine 000: ` may lead. Parts are read by their labels, so
//! an added part is no harm; a line without the four counts and the time is damaged.

use crate::model::Step;
use crate::text::fields::{float, trim, uint, uint32};

/// What an `Iteration(` message (after any engine label) holds.
pub(super) enum Read {
    Step(Step),
    /// A DP rank's idle step: no work, no time worth counting.
    Dummy,
    Damaged,
}

pub(super) fn read(m: &[u8]) -> Read {
    let Some(rest) = m
        .strip_prefix(b"Iteration(")
        .and_then(|r| memchr::memmem::find(r, b"): ").map(|i| &r[i + 3..]))
    else {
        return Read::Damaged;
    };
    let (mut cr, mut ct, mut gr, mut gt, mut secs) = (None, None, None, None, None);
    let mut dummy = false;
    for part in rest.split(|&c| c == b',') {
        let p = trim(part);
        if let Some(v) = p.strip_prefix(b"iteration elapsed time: ") {
            let v = trim(v);
            let (v, d) = match v.strip_suffix(b" (dummy)") {
                Some(v) => (trim(v), true),
                None => (v, false),
            };
            dummy = d;
            secs = v
                .strip_suffix(b"ms")
                .and_then(|v| float(trim(v)))
                .filter(|t| t.is_finite() && *t >= 0.0)
                .map(|ms| ms / 1000.0);
            continue;
        }
        let Some(sp) = p.iter().position(|&c| c == b' ') else {
            continue;
        };
        let (n, label) = (&p[..sp], &p[sp + 1..]);
        match label {
            b"context requests" => cr = uint32(n),
            b"context tokens" => ct = uint(n),
            b"generation requests" => gr = uint32(n),
            b"generation tokens" => gt = uint(n),
            _ => {}
        }
    }
    match (cr, ct, gr, gt, secs) {
        _ if dummy && secs.is_some() => Read::Dummy,
        (
            Some(ctx_requests),
            Some(ctx_tokens),
            Some(gen_requests),
            Some(gen_tokens),
            Some(secs),
        ) => Read::Step(Step {
            ctx_requests,
            ctx_tokens,
            gen_requests,
            gen_tokens,
            secs,
            ..Step::default()
        }),
        _ => Read::Damaged,
    }
}

/// The tokens a request commits per speculative step, from vLLM's acceptance line:
/// V1's `SpecDecoding metrics: Mean acceptance length: 4.00, …` as printed, V0's
/// `Speculative metrics: … Number of speculative tokens: k, …, Number of draft
/// tokens: d, Number of emitted tokens: e` as e over the d ÷ k steps.
pub(super) fn tokens_per_step(m: &[u8]) -> Option<f64> {
    let m = m
        .strip_prefix(b"SpecDecoding metrics: ")
        .or_else(|| m.strip_prefix(b"Speculative metrics: "))?;
    let (mut mean, mut k, mut draft, mut emitted) = (None, None, None, None);
    for part in m.split(|&c| c == b',') {
        let p = trim(part);
        let Some(c) = memchr::memmem::find(p, b": ") else {
            continue;
        };
        let v = trim(&p[c + 2..]);
        let v = v.strip_suffix(b".").unwrap_or(v);
        match &p[..c] {
            b"Mean acceptance length" => mean = float(v),
            b"Number of speculative tokens" => k = float(v),
            b"Number of draft tokens" => draft = float(v),
            b"Number of emitted tokens" => emitted = float(v),
            _ => {}
        }
    }
    let v0 = || Some(emitted? * k? / draft.filter(|d| *d > 0.0)?);
    mean.or_else(v0).filter(|t| t.is_finite() && *t >= 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(m: &str) -> Step {
        match read(m.as_bytes()) {
            Read::Step(s) => s,
            _ => panic!("no step: {m}"),
        }
    }

    #[test]
    fn every_shape_since_the_line_was_added() {
        // core.py as first shipped (no KV part).
        let s = step("Iteration(0): 1 context requests, 8000 context tokens, 0 generation requests, 0 generation tokens, iteration elapsed time: 303.84 ms");
        assert_eq!(
            (s.ctx_requests, s.ctx_tokens, s.gen_requests, s.gen_tokens),
            (1, 8000, 0, 0)
        );
        assert!((s.secs - 0.30384).abs() < 1e-12);
        let s = step("Iteration(515): 0 context requests, 0 context tokens, 64 generation requests, 64 generation tokens, iteration elapsed time: 21.33 ms, GPU KV cache usage: 99.1%");
        assert_eq!((s.gen_requests, s.gen_tokens), (64, 64));
        assert!((s.secs - 0.02133).abs() < 1e-12);
        assert!(matches!(read(b"Iteration(7): 0 context requests, 0 context tokens, 0 generation requests, 0 generation tokens, iteration elapsed time: 1.02 ms (dummy), GPU KV cache usage: 0.0%"), Read::Dummy));
        assert!(matches!(read(b"Iteration(7): 0 context requests, 0 context tokens, 0 generation requests, 0 generation tokens, iteration elapsed time: 1.02 ms (dummy)"), Read::Dummy));
    }

    #[test]
    fn acceptance_lines_give_tokens_per_step() {
        let t = tokens_per_step(b"SpecDecoding metrics: Mean acceptance length: 4.00, Accepted throughput: 27.90 tokens/s, Drafted throughput: 27.90 tokens/s, Accepted: 279 tokens, Drafted: 279 tokens, Per-position acceptance rate: 1.000, 1.000, 1.000, Avg Draft acceptance rate: 100.0%");
        assert_eq!(t, Some(4.0));
        // V0: 1920 tokens emitted over 2000 ÷ 4 = 500 steps.
        let t = tokens_per_step(b"Speculative metrics: Draft acceptance rate: 0.612, System efficiency: 0.480, Number of speculative tokens: 4, Number of accepted tokens: 1224, Number of draft tokens: 2000, Number of emitted tokens: 1920.");
        assert_eq!(t, Some(3.84));
        // An older V1 line without the mean says nothing of it.
        assert_eq!(tokens_per_step(b"SpecDecoding metrics: Draft acceptance rate: 61.2%, Accepted: 10 tokens, Drafted: 20 tokens"), None);
    }

    #[test]
    fn a_line_missing_a_count_or_the_time_is_damaged() {
        for m in [
            "Iteration(3): 0 context requests, 0 context tokens, 64 generation requests, iteration elapsed time: 21.33 ms",
            "Iteration(3): 0 context requests, 0 context tokens, 64 generation requests, 64 generation tokens",
            "Iteration(3): 0 context requests, 0 context tokens, 64 generation requests, 64 generation tokens, iteration elapsed time: nan ms",
            "Iteration(3): 0 context requests, x context tokens, 64 generation requests, 64 generation tokens, iteration elapsed time: 2 ms",
            "Iteration(3",
        ] {
            assert!(matches!(read(m.as_bytes()), Read::Damaged), "{m}");
        }
    }
}
