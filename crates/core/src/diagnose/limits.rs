//! What the log could not support: each check the verdict had to do without, so a
//! reader knows its limits.

use super::context::Ctx;
use crate::report::NotAssessed;
use crate::text::num::num;

fn na(check: &'static str, why: String) -> NotAssessed {
    NotAssessed { check, why }
}

/// Stats lines this far apart average a burst away.
const COARSE_S: f64 = 9.5;

pub fn not_assessed(c: &Ctx) -> Vec<NotAssessed> {
    let r = c.r;
    let mut v = Vec::new();
    if c.stat_lines == 0 {
        return v;
    }
    if r.summary.queued_requests.is_none() {
        v.push(na(
            "queue",
            "The stats lines print no waiting count, so whether requests queue (and so whether the pool, the cap or the client binds) is inferred, not read".to_string(),
        ));
    }
    if r.config.kv_capacity_tokens.is_none() {
        v.push(na(
            "capacity",
            "No startup line gives the KV pool's size, so how many requests it holds is not known; the log starts after startup or leaves it out".to_string(),
        ));
    }
    let prompt_seen = r.summary.input_throughput_tok_s.is_some() || r.summary.prefill_tokens > 0;
    if !prompt_seen && c.prefill_lines == 0 {
        v.push(na(
            "prefill",
            "No prefill lines or prompt rate in the log, so prefill's share of the work is not measured".to_string(),
        ));
    }
    let dp = r.config.data_parallel_size.unwrap_or(1);
    // The reader names a line that sums the engines' figures `aggregated`.
    let summed = r.sources.iter().any(|s| s.source == "aggregated");
    if (dp > 1 || summed) && r.timeline.per_source.len() < 2 {
        let how =
            c.p.ranks
                .as_ref()
                .map(|rr| format!(": {}", rr.all_ranks))
                .unwrap_or_default();
        let what = if summed {
            "The log prints the engines' figures summed into one line".to_string()
        } else {
            format!(
                "The server runs {} data-parallel ranks but the log holds one rank's lines",
                num(dp as f64)
            )
        };
        v.push(na(
            "ranks",
            format!("{what}, so the ranks' balance cannot be judged{how}"),
        ));
    }
    let sources = r.timeline.per_source.len().max(1) as f64;
    let per_source = c.stat_lines as f64 / sources;
    if per_source >= 3.0 && c.prefill_lines == 0 {
        let interval = r.busy_seconds / (per_source - 1.0);
        if interval >= COARSE_S {
            v.push(na(
                "bursts",
                format!(
                    "Stats lines come every ~{} s, too coarse to show a burst shorter than that: arrivals and queue spikes inside an interval are averaged away",
                    num(interval)
                ),
            ));
        }
    }
    v
}
