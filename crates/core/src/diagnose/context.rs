//! What the rules look at, computed once from the report: the judged window,
//! the derived facts, the running-request cap.

use crate::analysis::cap::running_cap;
use crate::analysis::ranks::{ranks, Ranks};
use crate::analysis::whatif::Model;
use crate::analysis::window::{steady, Window};
use crate::model::profile::{Admission, Profile};
use crate::report::Facts;
use crate::report::Report;
use crate::text::round::{dec, sig};

/// Everything the rules look at, computed once.
pub struct Ctx<'a> {
    pub r: &'a Report,
    /// The engine's admission, words and flags.
    #[allow(dead_code)]
    pub p: &'static Profile,
    pub w: Window,
    pub facts: Facts,
    pub stat_lines: u64,
    pub has_decode: bool,
    pub prefill_lines: u64,
    pub decode_lines: u64,
    /// The running-request cap, configured or seen as a hard plateau.
    pub cap: Option<f64>,
    pub cap_inferred: bool,
    pub model: Option<Model>,
    /// The data-parallel ranks side by side, where the log prints several.
    pub ranks: Ranks,
}

impl<'a> Ctx<'a> {
    pub fn new(r: &'a Report, p: &'static Profile) -> Ctx<'a> {
        let w = steady(r);
        let k = &r.input.stat_lines_by_kind;
        let (stat_lines, decode_lines, prefill_lines) = match r.runs.iter().find(|x| x.analyzed) {
            // Of several server runs, the judged one's lines.
            Some(run) => (run.stat_lines, run.decode_lines, run.prefill_lines),
            None => (
                r.input.stat_lines + r.input.damaged_stat_lines,
                k.get("decode").copied().unwrap_or(0) + k.get("interval").copied().unwrap_or(0),
                k.get("prefill").copied().unwrap_or(0),
            ),
        };
        let has_decode = r.summary.gen_throughput_tok_s.is_some();
        let run = w.running.unwrap_or(0.0);
        let capacity = r.config.kv_capacity_tokens.map(|v| v as f64);
        let kv_per_request = match (w.kv_usage, capacity) {
            (Some(u), Some(c)) if run > 0.0 && u > 0.0 => Some(u * c / run),
            _ if run > 0.0 => r
                .summary
                .kv_tokens
                .map(|d| d.mean / run)
                .filter(|v| *v > 0.0),
            _ => None,
        };
        let (cap, cap_inferred) = running_cap(r, &w);
        let busy_min = (r.busy_seconds / 60.0).max(1.0 / 60.0);
        let input = w
            .input_tok_s
            .or(r.summary.input_throughput_tok_s.map(|d| d.mean));
        let ranks = ranks(r, &w);
        let recomputed = super::recompute::recomputed_tokens(r, kv_per_request);
        let facts = Facts {
            steady_start_s: Some(dec(w.start_s, 1)),
            steady_end_s: Some(dec(w.end_s, 1)),
            server_gen_tok_s: w.gen_tok_s.map(sig),
            running_requests: w.running.map(sig),
            queued_requests: w.queued.map(sig),
            kv_usage: w.kv_usage.map(|v| dec(v, 4)),
            per_request_tok_s: w
                .gen_tok_s
                .zip(w.running)
                .filter(|(_, n)| *n > 0.0)
                .map(|(g, n)| sig(g / n)),
            kv_tokens_per_request: kv_per_request.map(sig),
            pool_holds_requests: capacity.zip(kv_per_request).map(|(c, k)| sig(c / k)),
            prefill_time_share: r.summary.prefill_time_share,
            idle_fraction: (r.span_seconds > 0.0).then(|| dec(r.idle_seconds / r.span_seconds, 4)),
            // A rate needs time to spread over: none without busy time, and at least a minute.
            retractions_per_minute: (r.summary.retractions > 0 && r.busy_seconds > 0.0)
                .then(|| sig(r.summary.retractions as f64 / busy_min.max(1.0))),
            // A log with a line per prefill batch gives its rate over the gap since
            // the last one: averaged over the lines it says how fast prefill runs,
            // not how much of the work it is. The token counts say that, given
            // enough decode lines to sum generated tokens over. Interval lines give
            // both rates over the same interval.
            prefill_token_share: prefill_volume_share(r, p, decode_lines).or_else(|| {
                input
                    .zip(w.gen_tok_s)
                    .filter(|(i, g)| i + g > 0.0)
                    .map(|(i, g)| dec(i / (i + g), 4))
            }),
            warmup_s: Some(dec(w.warmup_s, 1)),
            drain_s: Some(dec(w.drain_s, 1)),
            running_cap: cap,
            recomputed_tokens: recomputed.map(sig),
            recompute_token_share: recomputed
                .and_then(|t| super::recompute::share(r, t))
                .map(|v| dec(v, 4)),
            ranks: ranks.figures.clone(),
            rank_balance_gain: ranks.balance_gain.map(|g| dec(g, 4)),
        };
        Ctx {
            r,
            facts,
            p,
            stat_lines,
            has_decode,
            prefill_lines,
            decode_lines,
            cap,
            cap_inferred,
            model: Model::fit(r, p),
            ranks,
            w,
        }
    }

    pub fn run(&self) -> f64 {
        self.w.running.unwrap_or(0.0)
    }
    pub fn queued(&self) -> f64 {
        self.w.queued.unwrap_or(0.0)
    }
    pub fn kv(&self) -> Option<f64> {
        self.w.kv_usage
    }
    /// Requests wait for a good part of the judged window.
    pub fn waiting(&self) -> bool {
        let q = self.w.typical_queue();
        q >= 1.0_f64.max(0.15 * self.run()) && self.w.queue_share.unwrap_or(0.0) >= 0.3
    }
    /// Admission counts reservations beside the tokens in use: room for running
    /// requests' future tokens, or for each request's whole length.
    pub fn reserves(&self) -> bool {
        self.p.admission == Admission::ReservesFutureTokens || self.reserves_whole_requests()
    }
    /// Admission reserves each request's whole length: an engine that does so by
    /// default, as no request was evicted, which only its policy that reserves
    /// nothing does.
    pub fn reserves_whole_requests(&self) -> bool {
        self.p.admission == Admission::ReservesWholeRequest && self.r.summary.retractions == 0
    }
    /// KV usage above which a queue means the pool stops admission. Where
    /// admission reserves, the pool is full well before its usage reaches 1.
    pub fn kv_bound_threshold(&self) -> f64 {
        if self.reserves() {
            // The reservation is for future output tokens: large when outputs are long
            // (the threshold drops to 0.5), small when prompts dwarf outputs (0.85).
            let share = self.facts.prefill_token_share.unwrap_or(0.0);
            0.5 + 0.35 * ((share - 0.5) / 0.45).clamp(0.0, 1.0)
        } else {
            0.75
        }
    }
    /// Retractions (preemptions) come at a rate SGLang's tuning guide calls too
    /// many: about one a minute is fine. Unknown without the busy time to spread them over.
    pub fn retracts_often(&self) -> bool {
        self.facts.retractions_per_minute.is_some_and(|r| r >= 1.0)
    }
    /// The pool is all but full (usage as printed, reservations aside).
    pub fn kv_tight(&self) -> bool {
        self.kv().is_some_and(|u| u >= 0.85)
    }
    /// TensorRT-LLM: the share of their prompt budget (`max_num_tokens`, 8192 by
    /// default) iterations use, from the prompt rate and the iterations a second
    /// (generated tokens over generating requests).
    pub fn prompt_budget_use(&self) -> Option<f64> {
        let budget = self.r.config.max_batched_tokens.unwrap_or(8192) as f64;
        let gen = self.w.gen_tok_s.filter(|g| *g > 0.0)?;
        let run = self.w.running.filter(|r| *r >= 1.0)?;
        let input = self
            .w
            .input_tok_s
            .or(self.r.summary.input_throughput_tok_s.map(|d| d.mean))?;
        Some(input / (budget * gen / run))
    }
    /// Requests wait below the batch cap while iterations use little of their
    /// prompt budget, so admission is not held back by prefill: reservations of
    /// whole requests (prompt plus all of max_tokens) hold it, whatever share of
    /// the pool the tokens themselves use.
    pub fn reservations_bind(&self) -> bool {
        self.reserves_whole_requests()
            && self.waiting()
            && !self.at_cap()
            && self.prompt_budget_use().is_some_and(|u| u < 0.5)
    }
    /// Nothing waits while running sits at the configured cap: the client keeps
    /// exactly as many requests in flight as the cap admits (a plateau with no
    /// stated cap may be the client's own concurrency, so it does not count).
    pub fn client_fills_cap(&self) -> bool {
        !self.cap_inferred && self.cap.is_some() && self.at_cap() && !self.waiting()
    }
    pub fn at_cap(&self) -> bool {
        match (self.cap, self.w.running_max) {
            (Some(c), Some(m)) => m >= 0.95 * c && self.w.running_p50.unwrap_or(0.0) >= 0.85 * c,
            _ => false,
        }
    }
    pub fn line(&self) -> Vec<u64> {
        self.w.line.into_iter().collect()
    }
}

/// Prompt tokens ÷ (prompt + generated tokens), from the counts: logs with a
/// line per prefill batch only, with 10 or more decode lines to estimate the
/// generated tokens from.
fn prefill_volume_share(r: &Report, profile: &Profile, decode_lines: u64) -> Option<f64> {
    let s = &r.summary;
    let (p, g) = (s.prefill_tokens as f64, s.generated_tokens_estimate);
    (profile.prefill_batches_logged && decode_lines >= 10 && p > 0.0 && g > 0.0)
        .then(|| dec(p / (p + g), 4))
}

/// Prefill takes most of the time: as the log times its iterations, two thirds
/// of it or more; else, where it does not, prompt tokens so far beyond generated
/// ones that prefill must take nearly all of it, though a prompt token is much
/// cheaper than a decode step.
pub(super) fn prefill_time_dominates(c: &Ctx) -> bool {
    match c.facts.prefill_time_share {
        Some(s) => s >= 2.0 / 3.0,
        None => c.facts.prefill_token_share.unwrap_or(0.0) > 0.95,
    }
}

/// How sure prefill is what binds while requests wait, where the log times its
/// iterations: the more of the time prefill takes, the less any more room for
/// running requests (a larger pool, a higher cap) can buy, however full the pool
/// or the batch. From 0.7 at half the time to 0.95 at nine tenths.
pub(super) fn measured_prefill_confidence(c: &Ctx) -> Option<f64> {
    let s = c.facts.prefill_time_share?;
    Some(0.7 + 0.25 * ((s - 0.5) / 0.4).clamp(0.0, 1.0))
}

/// Prompts dwarf outputs, though prefill need not take most of the time: prompt
/// tokens go through several times faster than generated ones. (Line counts do
/// not show time: SGLang logs every prefill batch but only every 40th decode step.)
pub(super) fn prompt_heavy(c: &Ctx) -> bool {
    c.facts.prefill_token_share.unwrap_or(0.0) > 0.9 && c.prefill_lines >= 5 * c.decode_lines
}

/// A finding's confidence: at most 0.45 on a snapshot of fewer than 3 lines.
pub(super) fn confidence(c: &Ctx, v: f64) -> f64 {
    let v = if c.stat_lines < 3 { v.min(0.45) } else { v };
    dec(v.clamp(0.0, 0.99), 2)
}
