//! The cost of evictions: an evicted request's KV is freed, so its prompt and the
//! tokens it had generated are prefilled again when it is readmitted.
//!
//! SGLang's retraction line says how many KV tokens it freed (`#new_tokens_gained`):
//! exactly the tokens prefilled again. Elsewhere the log counts the evicted requests
//! (SGLang's older `#retracted_reqs` wording, vLLM's preemption counter), not their
//! lengths: each is taken to hold what a running request holds on average (the pool's
//! tokens in use over the running requests), a bound the evicted ones (the newest
//! first, with the fewest outputs) stay under.

use crate::report::Report;

/// Tokens prefilled again for the evicted requests, where the log counts them and
/// says what a running request holds.
pub fn recomputed_tokens(r: &Report, kv_per_request: Option<f64>) -> Option<f64> {
    let s = &r.summary;
    if let Some(t) = s.retracted_tokens.filter(|t| *t > 0) {
        return Some(t as f64);
    }
    let evicted = s.retracted_requests.max(s.retractions);
    if evicted == 0 {
        return None;
    }
    kv_per_request
        .filter(|k| k.is_finite() && *k > 0.0)
        .map(|k| evicted as f64 * k)
}

/// Those tokens over all the prompt tokens prefilled: SGLang's prefill lines count
/// every prefilled token (recomputation included); where the log gives a prompt rate
/// instead, its mean over the busy time. Both count the recomputed tokens too, so an
/// estimate above them is no share at all (a cumulative counter that started before
/// the excerpt, footprints larger than the evicted requests held): none is given.
pub fn share(r: &Report, recomputed: f64) -> Option<f64> {
    let s = &r.summary;
    let total = if s.prefill_tokens > 0 {
        s.prefill_tokens as f64
    } else {
        s.input_throughput_tok_s
            .map(|d| d.mean * r.busy_seconds)
            .unwrap_or(0.0)
    };
    (total > 0.0 && recomputed < total).then(|| recomputed / total)
}
