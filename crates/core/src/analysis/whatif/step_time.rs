//! The decode step time, `step = a + b·running + c·kv_tokens`, fitted by least
//! squares over the timeline's buckets, or a memory-bound prior when the log
//! shows too little spread in batch size to fit.

use super::least_squares::robust_least_squares;
use crate::report::{Point, StepSums};

/// What the step-time fit reads: the timeline and the steady state it anchors to.
pub(super) struct StepInputs<'a> {
    pub points: &'a [Point],
    /// Steady-state running requests and generation throughput (all ranks).
    pub running: f64,
    pub gen: f64,
    /// KV pool in tokens, all ranks together.
    pub cap: Option<f64>,
    pub kv_per_request: Option<f64>,
    /// The log prints a line per prefill batch (SGLang), whose rate runs since the
    /// previous prefill line: its tokens are counted, its rate is not an amount.
    pub prefill_lines: bool,
    /// Steady-state prompt throughput, tok/s.
    pub input_tok_s: Option<f64>,
    /// Ranks or engines with their own scheduler (data parallelism), each with its share
    /// of the batch.
    pub ranks: f64,
    /// The window's buckets of engine steps the log times (TensorRT-LLM's iterations,
    /// vLLM's `Iteration(N)` lines); empty elsewhere.
    pub steps: &'a [StepSums],
}

/// The step model anchored to the steady state (see [`super::Model`]'s fields).
pub(super) struct StepTime {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub pf: f64,
    pub cov_ab: [[f64; 2]; 2],
    pub r2: f64,
    pub fitted: bool,
    /// Fitted to the engine's own times of its decode steps.
    pub timed: bool,
    /// Prefill's part is the ridge prior's ([`ridge_prefill`]), not measured.
    pub pf_prior: bool,
    /// Prefill's part is what the step holds beyond the most decode can take
    /// ([`StepTime::bound_decode`]).
    pub decode_bound: bool,
    pub points: usize,
}

/// A fitted step model: `a + b·running` at the steady state's KV and prefill per request,
/// `c` per KV token, the covariance of `(a, b)` and R².
struct StepFit {
    a: f64,
    b: f64,
    c: f64,
    /// Prefill seconds per step per running request (part of `b`).
    pf: f64,
    cov: [[f64; 2]; 2],
    r2: f64,
}

/// The prior's batch size at which the per-request part of a step equals the fixed part.
pub(super) const PRIOR_N0: f64 = 48.0;

/// Prompt tokens a forward pass computes in the time decode takes to read the weights once:
/// a GPU's FLOP/s over its bytes/s, at the efficiencies serving reaches (~120 on an A100 in
/// bf16, ~250 on an H100, twice that in FP8).
const RIDGE_TOKENS: f64 = 300.0;

/// The longest a decode step's fixed part (reading the weights once) takes: ~80 GB of
/// weights per GPU at ~1.5 TB/s.
const MAX_FIXED_STEP_S: f64 = 0.06;

impl StepTime {
    /// Sets prefill's part of the step to `share` of it at `running` requests (the step's
    /// level kept), scaling the decode part and keeping its split between the fixed and
    /// the per-request cost.
    pub(super) fn set_prefill_share(&mut self, share: f64, running: f64) {
        let y0 = self.a + self.b * running;
        let decode_old = y0 - self.pf * running;
        if !(y0 > 0.0 && decode_old > 0.0 && running > 0.0) {
            return;
        }
        let decode = y0 * (1.0 - share.clamp(0.0, 0.99));
        let k = decode / decode_old;
        let pf = share * y0 / running;
        self.a *= k;
        self.c *= k;
        self.b = (self.b - self.pf) * k + pf;
        self.pf = pf;
        self.pf_prior = false;
        for row in self.cov_ab.iter_mut() {
            for v in row.iter_mut() {
                *v *= k * k;
            }
        }
    }

    /// Decode is memory-bound: a step reads the weights once (its fixed part) and, for each
    /// request, its KV and its sampling, which even at long contexts is less than the
    /// weights again. A prior's decode part beyond `a·(1 + per_rank)` in a log that shows
    /// prompt work is prefill the prior could not place (vLLM V1 counts a request whose
    /// prompt is being chunked as running, so its steps read as decode): the excess moves
    /// to prefill's part, a floor on it (the step's range is the prior's, which is wide
    /// there). The prior has no KV term to rescale.
    pub(super) fn bound_decode(&mut self, running: f64, per_rank: f64) {
        let y0 = self.a + self.b * running;
        let decode = y0 - self.pf * running;
        let most = self.a * (1.0 + per_rank.max(0.0));
        if !(running > 0.0 && self.a > 0.0 && decode > most) {
            return;
        }
        self.pf = (y0 - most) / running;
        self.b = (most - self.a) / running + self.pf;
        self.pf_prior = false;
        self.decode_bound = true;
    }

    pub(super) fn fit(i: &StepInputs) -> StepTime {
        if let Some(t) = timed_decode(i) {
            return t;
        }
        let StepInputs {
            running,
            gen,
            cap,
            kv_per_request,
            prefill_lines,
            ranks,
            ..
        } = *i;
        // Columns: 1, running, KV tokens, running × (prefill ran in the bucket). The last
        // separates the prefill time per step (proportional to the batch: each request's
        // prefill is spread over its outputs) from decode, when drain or idle stretches show
        // decode alone.
        let y0 = running / gen;
        let mut rows: Vec<(Vec<f64>, f64, f64)> = Vec::new();
        let mut with_kv = 0usize;
        let mut prev_n: Option<f64> = None;
        let (mut counted_prompt, mut counted_gen) = (0.0, 0.0);
        for p in i.points {
            let (Some(n), Some(g)) = (p.running, p.gen_tok_s) else {
                prev_n = None;
                continue;
            };
            // vLLM rates over the interval since its previous line, ten seconds or so: a line
            // without one rates idle time too. SGLang's decode lines come several a second on
            // a clock that prints whole seconds, so one without an interval is mostly a clock
            // that did not tick.
            if !prefill_lines && !super::rated_over_known_time(p) {
                prev_n = Some(n);
                continue;
            }
            // A stats line's throughput covers the interval since the previous line, during
            // which the batch moved from the previous count to this one: the batch that
            // produced it is on average half a line interval behind the bucket's mean.
            let lag = prev_n.map_or(0.0, |pn| (pn - n) / (2.0 * (p.samples as f64).max(1.0)));
            let jump = prev_n.is_some_and(|pn| (pn - n).abs() > 0.25 * pn.max(n));
            prev_n = Some(n);
            if jump {
                continue;
            }
            let n = n + lag;
            if n < 1.0 || g <= 0.0 {
                continue;
            }
            let y = n / g;
            // Buckets whose step is far off the steady one are prefill storms or stalls.
            if !(y > 0.2 * y0 && y < 5.0 * y0) {
                continue;
            }
            let wt = (p.samples as f64).clamp(1.0, 8.0);
            let kv = match (p.kv_usage, cap) {
                (Some(u), Some(c)) => {
                    with_kv += 1;
                    u * c
                }
                _ => f64::NAN,
            };
            // SGLang: the bucket had prefill batches (their throughput figure is a rate since
            // the previous prefill line, too noisy to use as an amount). vLLM: prompt tokens
            // per step from the interval's average prompt throughput.
            let pf = match p.input_tok_s.filter(|v| *v > 0.0) {
                Some(_) if prefill_lines => n,
                Some(i) => i * y,
                None => 0.0,
            };
            // SGLang: prompt tokens per step by count, where the bucket has them (the prefill
            // lines between a rank's decode lines), for the prior's prefill part below.
            let counted = (prefill_lines && p.gen_tokens > 0.0).then(|| {
                counted_prompt += p.prompt_tokens;
                counted_gen += p.gen_tokens;
                p.prompt_tokens * n / p.gen_tokens
            });
            // vLLM: the bucket's prompt tokens per step at the steady step, for the prior's
            // prefill part below. Per step at the bucket's own step (`pf`), the seconds per
            // step would stand on both sides of the fit, and their noise alone would read
            // as a cost of prompts.
            let prompt = match p.input_tok_s {
                Some(i) if !prefill_lines && i >= 0.0 => i * y0,
                _ => f64::NAN,
            };
            rows.push((
                vec![1.0, n, kv, pf, counted.unwrap_or(f64::NAN), prompt],
                y,
                wt,
            ));
        }
        let n_rows = rows.len();
        let pf_rows = rows.iter().filter(|r| r.0[3] > 0.0).count();
        let h = kv_per_request.unwrap_or(0.0);
        let kv_ok = with_kv >= 12 && with_kv * 10 >= n_rows * 9;
        if kv_ok {
            rows.retain(|r| r.0[2].is_finite());
        } else {
            for r in rows.iter_mut() {
                r.0[2] = 0.0;
            }
        }
        let spread_n = {
            let n = rows.len() as f64;
            let m = rows.iter().map(|r| r.0[1]).sum::<f64>() / n.max(1.0);
            let v = rows.iter().map(|r| (r.0[1] - m).powi(2)).sum::<f64>() / n.max(1.0);
            if m > 0.0 {
                v.sqrt() / m
            } else {
                0.0
            }
        };
        // Steady state: prefill runs (SGLang interleaves it with decode).
        let pf0 = if prefill_lines {
            if pf_rows > 0 {
                1.0
            } else {
                0.0
            }
        } else {
            i.input_tok_s.unwrap_or(0.0) / gen
        };
        // Rows at batch sizes well off the steady one: without a few, the intercept and
        // the per-request slope cannot be told apart (a run pinned at its cap).
        let off_steady = rows
            .iter()
            .filter(|r| (r.0[1] - running).abs() > 0.2 * running)
            .count();
        let mut candidates: Vec<&[usize]> = Vec::new();
        let separate_pf = pf_rows >= 4 && n_rows - pf_rows >= 4;
        if kv_ok && separate_pf {
            candidates.push(&[0, 1, 2, 3]);
        }
        if separate_pf {
            candidates.push(&[0, 1, 3]);
        }
        if kv_ok {
            candidates.push(&[0, 1, 2]);
        }
        candidates.push(&[0, 1]);
        let mut fit: Option<StepFit> = None;
        let all_rows = rows;
        for cols in candidates {
            if all_rows.len() < 6 {
                break;
            }
            let Some(f) = robust_least_squares(&all_rows, cols) else {
                continue;
            };
            // The steady state's row in terms of the fitted columns: b_eff per request.
            let unit = |c: usize| match c {
                1 => 1.0,
                2 => h,
                3 => pf0,
                _ => 0.0,
            };
            let xb: Vec<f64> = cols.iter().map(|&c| unit(c)).collect();
            let xa: Vec<f64> = cols
                .iter()
                .map(|&c| if c == 0 { 1.0 } else { 0.0 })
                .collect();
            let a = f.beta[0];
            let be: f64 = (0..cols.len()).map(|i| f.beta[i] * xb[i]).sum();
            let nonneg = f.beta.iter().skip(1).all(|v| *v >= 0.0);
            let var_b = f.var(&xb);
            let ok = a > 0.0
                && nonneg
                && be > 0.0
                && f.r2 >= 0.3
                && off_steady >= 3
                && (var_b.sqrt() < 0.5 * be || spread_n > 0.15);
            if ok {
                let var_a = f.var(&xa);
                let sum: Vec<f64> = (0..cols.len()).map(|i| xa[i] + xb[i]).collect();
                let cov = 0.5 * (f.var(&sum) - var_a - var_b);
                let c = cols.iter().position(|&c| c == 2).map_or(0.0, |i| f.beta[i]);
                let pf = cols
                    .iter()
                    .position(|&c| c == 3)
                    .map_or(0.0, |i| f.beta[i] * pf0);
                fit = Some(StepFit {
                    a,
                    b: be,
                    c,
                    pf,
                    cov: [[var_a, cov], [cov, var_b]],
                    r2: f.r2,
                });
                break;
            }
        }
        let points = all_rows.len();
        // Prefill's part of the step per running request where the log shows prompt work
        // but no fitted column separates it: fitted to the prompt work alone where it
        // moves, else placed at the ridge (`true`: not measured).
        let placed_prefill = || -> (f64, bool) {
            // Per request, prompt tokens per generated token: SGLang's by count (its rows'
            // prefill flag says too little to measure by).
            let per_token = if prefill_lines {
                if counted_gen > 0.0 {
                    counted_prompt / counted_gen
                } else {
                    0.0
                }
            } else {
                pf0
            };
            // SGLang's counted column; the others' prompt work is the usual one.
            let col = if prefill_lines { 4 } else { 5 };
            let measured = prefill_part(&all_rows, col, per_token, y0, running).map(|pf| {
                if prefill_lines {
                    return pf;
                }
                // vLLM's prompt tokens per step are its rate times a step they lengthen
                // (`y = d / (1 − p·v)`): against the rate at the steady step the share
                // reads `s / (1 − s)`.
                let e = pf * running / y0;
                e / (1.0 + e) * y0 / running
            });
            match measured {
                Some(pf) => (pf, false),
                None => (ridge_prefill(per_token, running / ranks, y0, running), true),
            }
        };
        let mut pf_prior = false;
        let (mut a, mut b, mut c, mut pf, mut cov_ab, r2, fitted) = match fit {
            Some(f) if f.pf > 0.0 || pf0 <= 0.0 => (f.a, f.b, f.c, f.pf, f.cov, f.r2, true),
            Some(f) => {
                // Every bucket prefilled (vLLM's prompt rate is never zero in a busy
                // window), so the fit's per-request slope holds prefill's part too: the
                // same split as the prior's takes it out, within the slope.
                let (placed, prior) = placed_prefill();
                let pf = placed.min(0.9 * f.b).max(0.0);
                pf_prior = prior;
                let pf_sd = if prior { 0.6 * pf } else { 0.0 };
                let mut cov = f.cov;
                cov[1][1] += pf_sd.powi(2);
                (f.a, f.b, f.c, pf, cov, f.r2, true)
            }
            None => {
                // Prior: memory-bound decode, per-request share n/(n + n0) at this batch.
                // Prefill's part of the step, where the log measures it, is per request (each
                // request's prompt, spread over its outputs) and stays outside the prior.
                let (pf, prior) = placed_prefill();
                pf_prior = prior;
                let decode = y0 - pf * running;
                let per_rank = running / ranks;
                let share = per_rank / (per_rank + PRIOR_N0);
                // The fixed part is a read of the weights: no replica's takes more than
                // MAX_FIXED_STEP_S (the largest models' weights per GPU over the slowest
                // HBM). A longer step is per-request work (attention over long contexts,
                // a compute-bound batch), however the prior would split it.
                let a = ((1.0 - share) * decode).min(MAX_FIXED_STEP_S);
                let b = (decode - a) / running + pf;
                // ±50 % on the per-request part, and on a prefill part the ridge places
                // (a GPU's ridge is known to a factor of two) ±60 % more.
                let pf_sd = if pf_prior { 0.6 * pf } else { 0.0 };
                let cov = [[0.0, 0.0], [0.0, (0.5 * b).powi(2) + pf_sd.powi(2)]];
                (a, b, 0.0, pf, cov, 0.0, false)
            }
        };
        // Anchor to the steady state: the level from the window, the split from the fit.
        let k = y0 / (a + b * running);
        if k.is_finite() && k > 0.0 {
            a *= k;
            b *= k;
            c *= k;
            pf *= k;
            for row in cov_ab.iter_mut() {
                for v in row.iter_mut() {
                    *v *= k * k;
                }
            }
        }
        StepTime {
            a,
            b,
            c,
            pf,
            cov_ab,
            r2,
            fitted,
            timed: false,
            pf_prior: pf_prior && pf > 0.0,
            decode_bound: false,
            points,
        }
    }
}

/// Prefill's part of a step per running request where the log shows the prompt work
/// (`per_token` prompt tokens per generated token) but not its time: prefill is
/// compute-bound and decode memory-bound, so a rank's step of `P` prompt tokens spends
/// `P / RIDGE_TOKENS` weight reads on them, beside decode's one read and its per-request
/// part (the prior's `n / PRIOR_N0` of it). Only ratios of work enter: the step's level
/// stays the window's `y0`.
fn ridge_prefill(per_token: f64, per_rank: f64, y0: f64, running: f64) -> f64 {
    let reads = per_token * per_rank / RIDGE_TOKENS;
    if !(reads > 0.0 && running > 0.0 && y0 > 0.0) {
        return 0.0;
    }
    let share = reads / (1.0 + per_rank / PRIOR_N0 + reads);
    share * y0 / running
}

/// Decode steps the buckets must time between them, and buckets, to fit on.
const MIN_TIMED_STEPS: u32 = 200;
const MIN_TIMED_BUCKETS: usize = 8;

/// The decode step from the engine's own times of its decode-only steps, bucket by bucket
/// (mean seconds against mean batch): no prefill, idle or line interval mixes in, so where
/// the batch moves the fixed and per-request costs are read as they are. Prefill's part is
/// set afterwards from its measured share. `None` where the log times too few decode
/// steps, their batch barely moves, or the fit does not pin the per-request cost down.
fn timed_decode(i: &StepInputs) -> Option<StepTime> {
    let rows: Vec<(Vec<f64>, f64, f64)> = i
        .steps
        .iter()
        .filter(|b| b.decode_steps >= 3 && b.decode_secs > 0.0 && b.decode_requests > 0.0)
        .map(|b| {
            let k = f64::from(b.decode_steps);
            (
                vec![1.0, b.decode_requests / k],
                b.decode_secs / k,
                k.sqrt(),
            )
        })
        .collect();
    let steps: u32 = i.steps.iter().map(|b| b.decode_steps).sum();
    if rows.len() < MIN_TIMED_BUCKETS || steps < MIN_TIMED_STEPS || i.running <= 0.0 {
        return None;
    }
    if !moves(&rows) {
        return None;
    }
    let f = robust_least_squares(&rows, &[0, 1])?;
    let (a, b) = (f.beta[0], f.beta[1].max(0.0));
    let var_a = f.var(&[1.0, 0.0]);
    let var_b = f.var(&[0.0, 1.0]);
    // Per rank: each scheduler's batch is its share of the running requests.
    let per_rank = i.running / i.ranks.max(1.0);
    let y = a + b * per_rank;
    if !(a > 0.0 && y > 0.0 && var_b.sqrt() * per_rank < 0.15 * y) {
        return None;
    }
    // In terms of all ranks' running requests: each rank steps its own share at once.
    let b_all = b / i.ranks.max(1.0);
    let var_b_all = var_b / i.ranks.max(1.0).powi(2);
    let cov = 0.5 * (f.var(&[1.0, 1.0]) - var_a - var_b) / i.ranks.max(1.0);
    // Anchored to the steady state's step over wall time (what the rates are).
    let y0 = i.running / i.gen;
    let k = y0 / (a + b_all * i.running);
    if !(k.is_finite() && k > 0.0) {
        return None;
    }
    Some(StepTime {
        a: a * k,
        b: b_all * k,
        c: 0.0,
        pf: 0.0,
        cov_ab: [
            [var_a * k * k, cov * k * k],
            [cov * k * k, var_b_all * k * k],
        ],
        r2: f.r2,
        fitted: true,
        timed: true,
        pf_prior: false,
        decode_bound: false,
        points: rows.len(),
    })
}

/// Whether the rows' column 1 (the regressor beside the intercept) moves enough to fit a
/// slope on: its spread at least a tenth of its mean.
fn moves(rows: &[(Vec<f64>, f64, f64)]) -> bool {
    let n = rows.len() as f64;
    let mean = rows.iter().map(|r| r.0[1]).sum::<f64>() / n;
    let sd = (rows.iter().map(|r| (r.0[1] - mean).powi(2)).sum::<f64>() / n).sqrt();
    mean > 0.0 && sd >= 0.1 * mean
}

/// Prefill seconds per step per running request at the steady state, from the rows of a
/// run whose batch barely moves: the step against the prompt work alone (column `col` of the
/// rows, prompt tokens per step), which moves from
/// bucket to bucket as prompts arrive (the intercept holds decode at the steady batch).
/// `None` unless the prompt work varies enough to tell, its slope is clearly positive, and
/// decode keeps at least a tenth of the step.
fn prefill_part(
    rows: &[(Vec<f64>, f64, f64)],
    col: usize,
    pf0: f64,
    y0: f64,
    running: f64,
) -> Option<f64> {
    let rows: Vec<(Vec<f64>, f64, f64)> = rows
        .iter()
        .filter(|r| r.0[col].is_finite())
        .map(|r| (vec![r.0[0], r.0[col]], r.1, r.2))
        .collect();
    if rows.len() < 8 || pf0 <= 0.0 {
        return None;
    }
    if !moves(&rows) {
        return None;
    }
    let f = robust_least_squares(&rows, &[0, 1])?;
    let beta = f.beta[1];
    let se = f.var(&[0.0, 1.0]).sqrt();
    let pf = beta * pf0;
    (beta > 0.0 && se < 0.5 * beta && pf * running <= 0.9 * y0).then_some(pf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minute of buckets of decode-only steps at 10 ms + 0.2 ms per request, the batch
    /// moving between `lo` and `hi` (with ±3 % noise on each bucket's mean step).
    fn buckets(lo: f64, hi: f64) -> Vec<StepSums> {
        (0..60u32)
            .map(|k| {
                let n = lo + (hi - lo) * f64::from((k * 7) % 11) / 10.0;
                let noise = 1.0 + 0.03 * (f64::from((k * 13) % 5) - 2.0) / 2.0;
                let steps = 50;
                StepSums {
                    t_s: f64::from(k),
                    steps,
                    secs: 0.0,
                    decode_steps: steps,
                    decode_secs: f64::from(steps) * (0.010 + 0.0002 * n) * noise,
                    decode_requests: f64::from(steps) * n,
                    ..StepSums::default()
                }
            })
            .collect()
    }

    fn inputs(steps: &[StepSums]) -> StepInputs<'_> {
        let running = 25.0;
        StepInputs {
            points: &[],
            running,
            gen: running / (0.010 + 0.0002 * running),
            cap: None,
            kv_per_request: None,
            prefill_lines: false,
            input_tok_s: None,
            ranks: 1.0,
            steps,
        }
    }

    /// The engine's own decode-step times, where the batch moves, give the fixed and the
    /// per-request cost as they are (anchored to the steady state's step).
    #[test]
    fn timed_decode_steps_split_the_step() {
        let steps = buckets(10.0, 40.0);
        let t = StepTime::fit(&inputs(&steps));
        assert!(t.fitted);
        assert!((t.a / 0.010 - 1.0).abs() < 0.1, "a = {}", t.a);
        assert!((t.b / 0.0002 - 1.0).abs() < 0.15, "b = {}", t.b);
    }

    /// vLLM's buckets with the batch moving between 10 and 40 and prompt work in every one:
    /// 20 prompt tokens per generated token at 50 µs each beside a decode step of 10 ms +
    /// 0.2 ms per request, so 1 ms of each request's 1.2 ms per step is prefill. The fitted
    /// per-request slope holds both, and prefill's part is split out of it.
    #[test]
    fn a_fitted_slope_that_holds_prefill_is_split() {
        let y = |n: f64| 0.010 + (0.0002 + 0.001) * n;
        let points: Vec<Point> = (0..60u32)
            .map(|k| {
                // A ramp: a jump of a quarter between buckets reads as a storm.
                let n = 10.0 + f64::from(k) / 2.0;
                let g = n / y(n);
                Point {
                    t_s: f64::from(k) * 10.0,
                    samples: 1,
                    line: u64::from(k) + 1,
                    running: Some(n),
                    queued: Some(0.0),
                    kv_usage: None,
                    gen_tok_s: Some(g),
                    input_tok_s: Some(20.0 * g),
                    retractions: 0,
                    gen_tokens: 10.0 * g,
                    gen_secs: 10.0,
                    gen_timed: 1,
                    untimed: 0,
                    prompt_tokens: 0.0,
                }
            })
            .collect();
        let running = 25.0;
        let gen = running / y(running);
        let t = StepTime::fit(&StepInputs {
            points: &points,
            gen,
            input_tok_s: Some(20.0 * gen),
            ..inputs(&[])
        });
        assert!(t.fitted);
        assert!(
            t.pf > 0.5 * t.b && t.pf <= 0.9 * t.b + 1e-12,
            "pf {} of b {}",
            t.pf,
            t.b
        );
    }

    /// A batch that never moves leaves the split to the prior, as the buckets' rates do.
    #[test]
    fn timed_decode_steps_at_one_batch_say_nothing_of_the_split() {
        let steps = buckets(25.0, 25.5);
        assert!(timed_decode(&inputs(&steps)).is_none());
        assert!(timed_decode(&inputs(&[])).is_none());
    }
}
