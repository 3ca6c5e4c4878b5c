//! Rounds: each source's line of a tick, combined (counts and throughput
//! summed, KV usage averaged) into the phase's statistics and chart series.

use crate::model::stats::Stream;
use crate::model::Sample;
use crate::timeline::series::{Obs, Series};

/// The seconds a decode line's rate covers, and the prompt tokens its source
/// prefilled within them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Covered {
    pub secs: f64,
    pub prompt_tokens: f64,
}

/// What a round keeps of each source's line.
#[derive(Debug, Clone, Copy)]
struct Held {
    running: Option<u32>,
    queued: Option<u32>,
    kv_tokens: Option<u64>,
    kv_usage: Option<f64>,
    gen_tok_s: Option<f64>,
    input_tok_s: Option<f64>,
    /// What the line's generation rate covers, where known.
    covered: Option<Covered>,
}

impl Held {
    fn of(s: &Sample, covered: Option<Covered>) -> Self {
        Held {
            covered,
            running: s.running,
            queued: s.queued,
            kv_tokens: s.kv_tokens,
            kv_usage: s.kv_usage,
            gen_tok_s: s.gen_tok_s,
            input_tok_s: s.input_tok_s,
        }
    }
}

/// Combined statistics of one phase (decode/interval lines, or prefill lines).
#[derive(Debug, Clone, Default)]
pub(super) struct Phase {
    pending: Vec<Option<Held>>,
    /// How many of `pending` are set.
    pending_n: usize,
    pending_t: f64,
    pending_line: u64,
    pub(super) rounds: u64,
    pub(super) running: Stream,
    pub(super) queued: Stream,
    pub(super) kv_usage: Stream,
    pub(super) kv_tokens: Stream,
    pub(super) gen: Stream,
    pub(super) input: Stream,
    /// Where the maxima were seen.
    pub(super) max_queued_line: Option<(f64, u64)>,
    pub(super) max_running_line: Option<(f64, u64)>,
}

impl Phase {
    /// Inlined into its two callers, so `covered` stays in registers: built on
    /// the stack field by field and read back whole, it would be a load the
    /// processor cannot forward from those stores.
    #[inline(always)]
    pub(super) fn add(
        &mut self,
        src: usize,
        t: f64,
        s: &Sample,
        covered: Option<Covered>,
        series: &mut Series,
        prefill: bool,
    ) {
        if self.pending.len() <= src {
            self.pending.resize(src + 1, None);
        }
        if self.pending[src].is_some() {
            self.close(series, prefill);
        }
        if self.pending_n == 0 {
            self.pending_t = t;
            self.pending_line = s.line;
        }
        self.pending_n += 1;
        self.pending[src] = Some(Held::of(s, covered));
    }

    pub(super) fn close(&mut self, series: &mut Series, prefill: bool) {
        if self.pending_n == 0 {
            return;
        }
        let (mut run, mut q, mut kvt, mut gen, mut inp) = (None, None, None, None, None);
        let (mut kv_sum, mut kv_n) = (0.0, 0u32);
        // The sources' rates summed over their intervals (about the same: they print
        // together) averaged. A source whose line has no interval of its own (a clock
        // that did not tick since its previous line) still generated over the round's.
        let (mut secs, mut timed, mut prompt) = (0.0, 0u32, 0.0);
        self.pending_n = 0;
        fn acc<T: Into<f64> + Copy>(slot: &mut Option<f64>, v: Option<T>) {
            if let Some(v) = v {
                *slot = Some(slot.unwrap_or(0.0) + v.into());
            }
        }
        for s in self.pending.iter_mut().filter_map(Option::take) {
            acc(&mut run, s.running);
            acc(&mut q, s.queued);
            acc(&mut kvt, s.kv_tokens.map(|v| v as f64));
            acc(&mut gen, s.gen_tok_s);
            acc(&mut inp, s.input_tok_s);
            if let (Some(_), Some(c)) = (s.gen_tok_s, s.covered) {
                secs += c.secs;
                timed += 1;
                prompt += c.prompt_tokens;
            }
            if let Some(u) = s.kv_usage {
                kv_sum += u;
                kv_n += 1;
            }
        }
        self.rounds += 1;
        let kv = (kv_n > 0).then(|| kv_sum / kv_n as f64);
        let put = |st: &mut Stream, v: Option<f64>| {
            if let Some(v) = v {
                st.add(v)
            }
        };
        put(&mut self.running, run);
        put(&mut self.queued, q);
        put(&mut self.kv_usage, kv);
        put(&mut self.kv_tokens, kvt);
        put(&mut self.gen, gen);
        put(&mut self.input, inp);
        let line = self.pending_line;
        if let Some(v) = q {
            if self.max_queued_line.is_none_or(|(m, _)| v > m) {
                self.max_queued_line = Some((v, line));
            }
        }
        if let Some(v) = run {
            if self.max_running_line.is_none_or(|(m, _)| v > m) {
                self.max_running_line = Some((v, line));
            }
        }
        series.add(
            self.pending_t,
            line,
            &Obs {
                running: run,
                queued: q,
                kv_usage: kv,
                gen_tok_s: gen,
                input_tok_s: inp,
                gen_timed: gen
                    .filter(|_| timed > 0)
                    .map(|g| (g * secs / timed as f64, secs / timed as f64)),
                prompt_tokens: prompt,
                prefill,
            },
        );
    }
}

/// Decode (or interval) lines when there are any, else prefill lines.
pub(super) fn main_phase<'a>(decode: &'a Phase, prefill: &'a Phase) -> &'a Phase {
    if decode.rounds > 0 {
        decode
    } else {
        prefill
    }
}
