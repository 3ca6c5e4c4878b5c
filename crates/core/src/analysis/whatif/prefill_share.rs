//! Prefill's share of the server's busy time, measured from the log.
//!
//! Prefill of a long prompt is compute-bound: its cost grows with the prompt tokens,
//! whatever else runs, while a decode step costs about the same for a given batch. So a
//! busy interval's time is its decode steps' time plus its prompt tokens' time, and in
//! rates over the interval (as SGLang and vLLM print them, over wall time, prefill
//! included):
//!
//! ```text
//! 1 = d0 · steps/s + d1 · generated tok/s + p · prompt tok/s
//! ```
//!
//! Prompts arrive unevenly, so the prompt work moves from bucket to bucket and the steps
//! it displaces move with it: the slope `p` is identified even where the batch never
//! varies. Prefill's share of the time is then `p` × the steady prompt rate. Where the
//! log times its iterations (TensorRT-LLM), the measured share is
//! used as it is; where it times its prefill batches (SGLang's input throughput over the
//! gap between back-to-back prefill lines), the cost of a prompt token is read off them
//! and the share is that cost × the window's prompt tokens over its time.

use super::least_squares::{robust_instrumented, robust_least_squares};
use crate::report::{Point, PrefillGaps};

/// The measured share and how it was found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrefillShare {
    /// Of the busy time, 0..1.
    pub share: f64,
    /// Measured from the engine's own timing of its steps or prefill batches, not from
    /// the buckets' rates (which a server idling between arrivals dilutes).
    pub direct: bool,
}

/// What the estimate reads: the steady window's buckets and how the engine logs prefill.
pub(super) struct ShareInputs<'a> {
    pub points: &'a [Point],
    pub start_s: f64,
    pub end_s: f64,
    /// The log prints a line per prefill batch whose tokens are counted between decode
    /// lines (SGLang); otherwise prompt work comes from the prompt rate (vLLM).
    pub prefill_lines: bool,
    /// Measured from iteration times (TensorRT-LLM), when the log has them.
    pub measured: Option<f64>,
    /// Prefill batches timed by their lines (SGLang).
    pub gaps: &'a PrefillGaps,
    /// Sources that print their own decode lines (DP ranks): a point's seconds are their
    /// intervals averaged, its prompt tokens their sum.
    pub schedulers: f64,
}

/// At least this many buckets with prompt work, and a spread of it, to fit the slope.
const MIN_ROWS: usize = 8;

pub(super) fn prefill_share(i: &ShareInputs) -> Option<PrefillShare> {
    if let Some(s) = i.measured.filter(|s| s.is_finite() && *s >= 0.0) {
        return Some(PrefillShare {
            share: s.min(0.99),
            direct: true,
        });
    }
    let floor = match timed_batches(i) {
        Some(Timed::Share(s)) => return Some(s),
        Some(Timed::AtLeast(s)) => Some(s),
        None => None,
    };
    // Each estimate errs high where the buckets are few or the batch small (a handful of
    // prompts make the whole spread); the lower of two is the safer claim.
    let rates = match (trade_off(i), per_step(i)) {
        (Some(a), Some(b)) => Some(if a.share <= b.share { a } else { b }),
        (a, b) => a.or(b),
    };
    match (floor, rates) {
        (Some(f), Some(r)) => Some(if f.share >= r.share { f } else { r }),
        (f, r) => f.or(r),
    }
}

/// What the timed batches say: the share, or where their gaps hold decode steps too, the
/// part their prompt tokens' own cost makes (a floor).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Timed {
    Share(PrefillShare),
    AtLeast(PrefillShare),
}

/// At least this many timed batches to read the cost of a prompt token off them.
const MIN_TIMED: usize = 8;

/// Prompt tokens beyond which a forward pass is compute-bound: twice the largest GPU
/// ridge point (FLOP/s over bytes/s, ~1,000 tokens for FP8 on a recent GPU).
const COMPUTE_BOUND_TOKENS: f64 = 2048.0;

/// Prefill's share from its batches' own times: a batch of `x` prompt tokens takes
/// `pa + pt·x`, and its gap adds whatever decode steps ran before it (more before the
/// larger batches, which gather while decode runs), so the cost is the gaps' lower
/// envelope: a line through the fast tenth of each tenth of the batches by size, read
/// where the tokens' part of it is at least twice the part per batch. The
/// window's prefill time is then its prompt tokens at `pt + pa / (mean tokens per batch)`,
/// and its share that over the time the window's decode lines cover, on every scheduler.
fn timed_batches(i: &ShareInputs) -> Option<Timed> {
    if !i.prefill_lines || i.gaps.pairs.len() < MIN_TIMED {
        return None;
    }
    let (mut tokens, mut secs) = (0.0, 0.0);
    for p in i
        .points
        .iter()
        .filter(|p| p.t_s >= i.start_s && p.t_s < i.end_s && p.gen_secs > 0.0)
    {
        tokens += p.prompt_tokens;
        secs += p.gen_secs;
    }
    if secs <= 0.0 {
        return None;
    }
    let mut pairs: Vec<(f64, f64)> = i
        .gaps
        .pairs
        .iter()
        .map(|&(x, g)| (f64::from(x), f64::from(g)))
        .collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let fast = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 10]
    };
    let bins = (pairs.len() / MIN_TIMED).min(10);
    let envelope: Vec<(Vec<f64>, f64, f64)> = (0..bins)
        .map(|k| {
            let part = &pairs[k * pairs.len() / bins..(k + 1) * pairs.len() / bins];
            let x = part[part.len() / 2].0;
            let mut g: Vec<f64> = part.iter().map(|p| p.1).collect();
            (vec![1.0, x], fast(&mut g), 1.0)
        })
        .collect();
    let (x_lo, x_hi) = (envelope[0].0[1], envelope[bins - 1].0[1]);
    // Theil–Sen through the tenths: a tenth whose batches all waited behind decode steps
    // (the largest gather while decode runs) does not tilt the line.
    let line = (bins >= 3 && x_hi >= 1.5 * x_lo.max(1.0))
        .then(|| {
            let mut slopes = Vec::new();
            for (k, a) in envelope.iter().enumerate() {
                for b in &envelope[k + 1..] {
                    let dx = b.0[1] - a.0[1];
                    if dx > 0.0 {
                        slopes.push((b.1 - a.1) / dx);
                    }
                }
            }
            let slope = crate::analysis::window::median(slopes)?;
            let intercept = crate::analysis::window::median(
                envelope.iter().map(|e| e.1 - slope * e.0[1]).collect(),
            )?;
            (slope > 0.0).then_some((intercept, slope))
        })
        .flatten();
    let tokens_per_batch = i.gaps.tokens_per_batch.max(1.0);
    let share = |per_token: f64| PrefillShare {
        share: (per_token * tokens / (secs * i.schedulers.max(1.0))).clamp(0.0, 0.99),
        direct: true,
    };
    let per_token = match line {
        // Where a batch costs about the same whatever its size (a weight read, or the decode
        // steps each gap holds when requests arrive one completion at a time), the
        // envelope's intercept says how long a gap is, not what prefill costs: only the
        // tokens' own cost, the slope, is prefill's for sure.
        Some((pa, pt)) => {
            let per_batch = pa.max(0.0);
            if pt * tokens_per_batch < 2.0 * per_batch {
                return Some(Timed::AtLeast(share(pt)));
            }
            pt + per_batch / tokens_per_batch
        }
        // Batches all about one size (a chunk the prompts fill): no line to fit, but a batch
        // this large is compute-bound on any GPU (its tokens' matmuls outlast the weights'
        // read), so its fast gaps are its cost, per token at the size the run batches.
        None if x_lo >= COMPUTE_BOUND_TOKENS && tokens_per_batch >= COMPUTE_BOUND_TOKENS => {
            crate::analysis::window::median(envelope.iter().map(|e| e.1 / e.0[1]).collect())?
        }
        None => return None,
    };
    Some(Timed::Share(share(per_token)))
}

/// The slope of the busy time's split between decode steps and prompt tokens. Where
/// prefill takes nearly all the time the decode steps' column is too small to place, and
/// there only [`per_step`] measures it.
fn trade_off(i: &ShareInputs) -> Option<PrefillShare> {
    // Rows: [decode steps per second, generated tokens per second, prompt tokens per
    // second], the busy share of the time (1), weight.
    let mut rows: Vec<(Vec<f64>, f64, f64)> = Vec::new();
    for p in i
        .points
        .iter()
        .filter(|p| p.t_s >= i.start_s && p.t_s < i.end_s)
    {
        let (Some(n), Some(g)) = (p.running, p.gen_tok_s) else {
            continue;
        };
        if n < 1.0 || g <= 0.0 {
            continue;
        }
        let (g, v) = if i.prefill_lines {
            if p.gen_tokens <= 0.0 || p.gen_secs <= 0.0 {
                continue;
            }
            (p.gen_tokens / p.gen_secs, p.prompt_tokens / p.gen_secs)
        } else {
            match p.input_tok_s {
                Some(v) if v >= 0.0 && super::rated_over_known_time(p) => (g, v),
                _ => continue,
            }
        };
        if !(g.is_finite() && v.is_finite()) {
            continue;
        }
        rows.push((vec![g / n, g, v], 1.0, (p.samples as f64).clamp(1.0, 8.0)));
    }
    if rows.len() < MIN_ROWS {
        return None;
    }
    let mean = |k: usize| {
        let w: f64 = rows.iter().map(|r| r.2).sum();
        rows.iter().map(|r| r.0[k] * r.2).sum::<f64>() / w
    };
    let cv = |k: usize, m: f64| {
        let w: f64 = rows.iter().map(|r| r.2).sum();
        let v = rows.iter().map(|r| (r.0[k] - m).powi(2) * r.2).sum::<f64>() / w;
        if m > 0.0 {
            v.sqrt() / m
        } else {
            0.0
        }
    };
    let v_mean = mean(2);
    if v_mean <= 0.0 {
        // No prompt work in the window: prefill takes none of the time.
        return Some(PrefillShare {
            share: 0.0,
            direct: false,
        });
    }
    if cv(2, v_mean) < 0.05 {
        return None;
    }
    // The time of a busy interval is its decode steps' plus its prompt tokens':
    // `1 = d0·steps/s + d1·tokens/s + p·prompt tokens/s`. Each column is a rate over the
    // same interval and the target carries none of their noise, so a slope is the
    // trade-off between decoding and prefilling the buckets show, not a ratio of one
    // noisy figure to itself. The batch's column only where the batch moves: else it is
    // the steps' column again.
    let steps_cv = cv(0, mean(0));
    let per_token = cv(1, mean(1)) >= 0.1 && (cv(1, mean(1)) - steps_cv).abs() >= 0.05;
    let cols: &[usize] = if per_token { &[0, 1, 2] } else { &[0, 2] };
    let fit = robust_least_squares(&rows, cols)?;
    let k = cols.len() - 1;
    let p = fit.beta[k];
    let mut unit = vec![0.0; cols.len()];
    unit[k] = 1.0;
    let se = fit.var(&unit).max(0.0).sqrt();
    // A slope the buckets' noise could give is no measurement, nor is a decode step that
    // costs nothing.
    if !(p.is_finite() && p > 0.0 && p > 2.0 * se && fit.beta[0] > 0.0) {
        return None;
    }
    Some(PrefillShare {
        share: (p * v_mean).clamp(0.0, 0.99),
        direct: false,
    })
}

/// Seconds per decode step against the prompt tokens per step,
/// `running / gen = d0 + d1 · running + p · (prompt tokens per step)`: used only where
/// [`trade_off`] finds none. vLLM's prompt tokens per step are its prompt rate times the
/// bucket's step, so the step's noise (a snapshot of the batch over a rate) stands on both
/// sides and alone would read as prefill's cost: the prompt rate, which moves the prompt
/// work but not that noise, instruments the slope.
fn per_step(i: &ShareInputs) -> Option<PrefillShare> {
    // Rows: [1, running, prompt tokens per step, its instrument], seconds per step, weight.
    let mut rows: Vec<(Vec<f64>, f64, f64)> = Vec::new();
    for p in i
        .points
        .iter()
        .filter(|p| p.t_s >= i.start_s && p.t_s < i.end_s)
    {
        let (Some(n), Some(g)) = (p.running, p.gen_tok_s) else {
            continue;
        };
        if n < 1.0 || g <= 0.0 {
            continue;
        }
        let y = n / g;
        let (x, z) = if i.prefill_lines {
            if p.gen_tokens <= 0.0 {
                continue;
            }
            // Steps in the bucket: generated tokens over the batch. Counted, not rated.
            let x = p.prompt_tokens / (p.gen_tokens / n);
            (x, x)
        } else {
            match p.input_tok_s {
                Some(v) if v >= 0.0 && super::rated_over_known_time(p) => (v * y, v),
                _ => continue,
            }
        };
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        rows.push((vec![1.0, n, x, z], y, (p.samples as f64).clamp(1.0, 8.0)));
    }
    if rows.len() < MIN_ROWS {
        return None;
    }
    let w: f64 = rows.iter().map(|r| r.2).sum();
    let mean = |k: usize| rows.iter().map(|r| r.0[k] * r.2).sum::<f64>() / w;
    let cv = |k: usize, m: f64| {
        let v = rows.iter().map(|r| (r.0[k] - m).powi(2) * r.2).sum::<f64>() / w;
        if m > 0.0 {
            v.sqrt() / m
        } else {
            0.0
        }
    };
    let (n_mean, x_mean, z_mean) = (mean(1), mean(2), mean(3));
    let y_mean = rows.iter().map(|r| r.1 * r.2).sum::<f64>() / w;
    if x_mean <= 0.0 || y_mean <= 0.0 {
        // No prompt work in the window: prefill takes none of the time.
        return Some(PrefillShare {
            share: 0.0,
            direct: false,
        });
    }
    // The prompt work itself must move: a spread that is only the step's noise is none.
    if cv(3, z_mean) < 0.05 {
        return None;
    }
    // The batch's own column only where the batch moves: else it is the intercept again.
    let (cols, inst): (&[usize], &[usize]) = if cv(1, n_mean) >= 0.1 {
        (&[0, 1, 2], &[0, 1, 3])
    } else {
        (&[0, 2], &[0, 3])
    };
    let fit = robust_instrumented(&rows, cols, inst)?;
    let k = cols.len() - 1;
    let p = fit.beta[k];
    let mut unit = vec![0.0; cols.len()];
    unit[k] = 1.0;
    let se = fit.var(&unit).max(0.0).sqrt();
    // A slope the buckets' noise could give is no measurement.
    if !(p.is_finite() && p > 0.0 && p > 2.0 * se) {
        return None;
    }
    Some(PrefillShare {
        share: (p * x_mean / y_mean).clamp(0.0, 0.99),
        direct: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(t_s: f64, prompt_tokens: f64, gen_secs: f64) -> Point {
        Point {
            t_s,
            samples: 1,
            line: 1,
            running: Some(8.0),
            queued: Some(0.0),
            kv_usage: None,
            gen_tok_s: Some(100.0),
            input_tok_s: None,
            retractions: 0,
            gen_tokens: 100.0 * gen_secs,
            gen_secs,
            gen_timed: 1,
            untimed: 0,
            prompt_tokens,
        }
    }

    /// A minute of buckets, each prefilling 1,000 tokens in its second.
    fn minute() -> Vec<Point> {
        (0..60).map(|t| point(f64::from(t), 1000.0, 1.0)).collect()
    }

    /// That minute judged, with `gaps` timed on `schedulers` ranks.
    fn inputs<'a>(points: &'a [Point], gaps: &'a PrefillGaps, schedulers: f64) -> ShareInputs<'a> {
        ShareInputs {
            points,
            start_s: 0.0,
            end_s: 60.0,
            prefill_lines: true,
            measured: None,
            gaps,
            schedulers,
        }
    }

    /// Batches of 500–4,000 tokens at 20 ms + 50 µs per token; one in three waited behind
    /// up to 30 decode steps of 25 ms, the largest most often. The window prefilled
    /// 1,000 tokens a second on one scheduler: prefill took ~5.5 % of it.
    #[test]
    fn the_gaps_lower_envelope_is_the_cost_of_a_prompt_token() {
        let mut pairs = Vec::new();
        for k in 0..400u32 {
            let x = 500.0 + f64::from(k % 36) * 100.0;
            let behind = if k % 3 == 0 {
                f64::from(k % 31) * 0.025 * x / 4000.0 * 2.0
            } else {
                0.0
            };
            pairs.push((x as f32, (0.02 + 50e-6 * x + behind) as f32));
        }
        let gaps = PrefillGaps {
            pairs,
            tokens_per_batch: 2250.0,
        };
        let points = minute();
        let share =
            |schedulers| prefill_share(&inputs(&points, &gaps, schedulers)).expect("a share");
        let one = share(1.0);
        let truth = 1000.0 * (50e-6 + 0.02 / 2250.0);
        assert!(one.direct);
        assert!(
            (one.share - truth).abs() < 0.1 * truth,
            "{one:?} against {truth}"
        );
        // The same prompt work over the same seconds on two ranks is half the share.
        assert!((share(2.0).share - one.share / 2.0).abs() < 1e-9);
    }

    /// One prompt per batch, each gap holding the few decode steps (40 ms) run since the
    /// previous completion: the intercept is mostly decode, so only the prompt tokens' own
    /// cost (10 µs each, 1,000 a second: 1 % of the time) is claimed, as a floor.
    #[test]
    fn gaps_that_hold_decode_steps_claim_the_tokens_cost_only() {
        let pairs: Vec<(f32, f32)> = (0..200u32)
            .map(|k| {
                let x = 1500.0 + f64::from(k % 29) * 100.0;
                (x as f32, (0.01 + 0.04 + 10e-6 * x) as f32)
            })
            .collect();
        let gaps = PrefillGaps {
            pairs,
            tokens_per_batch: 2900.0,
        };
        let points = minute();
        let Some(Timed::AtLeast(s)) = timed_batches(&inputs(&points, &gaps, 1.0)) else {
            panic!("a floor");
        };
        assert!((s.share - 0.01).abs() < 0.001, "{s:?}");
    }

    /// Every batch a full 8,192-token chunk at 20 ms + 50 µs per token: no line to fit, but
    /// a batch that large is compute-bound, so its gap is its cost. The window prefilled
    /// 1,000 tokens a second: ~5.2 % of the time.
    #[test]
    fn full_chunks_are_timed_as_they_are() {
        let gaps = PrefillGaps {
            pairs: vec![(8192.0, (0.02 + 50e-6 * 8192.0) as f32); 60],
            tokens_per_batch: 8192.0,
        };
        let points = minute();
        let Some(Timed::Share(s)) = timed_batches(&inputs(&points, &gaps, 1.0)) else {
            panic!("a share");
        };
        let truth = 1000.0 * (50e-6 + 0.02 / 8192.0);
        assert!(
            (s.share - truth).abs() < 0.01 * truth,
            "{s:?} against {truth}"
        );
        // Small batches of one size say nothing of prefill's cost: a weight read each.
        let small = PrefillGaps {
            pairs: vec![(300.0, 0.03); 60],
            tokens_per_batch: 300.0,
        };
        assert_eq!(timed_batches(&inputs(&points, &small, 1.0)), None);
    }

    /// vLLM's buckets: ten-second lines over a decode step of 20 ms at a batch of 8 and
    /// 50 µs per prompt token, the prompt rate `rate(k)`; the running count printed is a
    /// snapshot, 6 to 10 about the interval's mean of 8.
    fn vllm_buckets(rate: impl Fn(u32) -> f64) -> Vec<Point> {
        (0..60u32)
            .map(|k| {
                let v = rate(k);
                let steps = (1.0 - 50e-6 * v) / 0.02;
                let g = 8.0 * steps;
                Point {
                    running: Some(6.0 + f64::from((k * 7) % 5)),
                    gen_tok_s: Some(g),
                    input_tok_s: Some(v),
                    gen_tokens: g * 10.0,
                    ..point(f64::from(k) * 10.0, 0.0, 10.0)
                }
            })
            .collect()
    }

    fn vllm_inputs<'a>(points: &'a [Point], gaps: &'a PrefillGaps) -> ShareInputs<'a> {
        ShareInputs {
            end_s: 600.0,
            prefill_lines: false,
            ..inputs(points, gaps, 1.0)
        }
    }

    /// Prompt rates of 500–3,000 tokens a second (1,750 on average: prefill takes 8.75 %
    /// of the time): the share is found though the printed batch is a noisy snapshot.
    #[test]
    fn vllm_prompt_rates_that_move_measure_the_share() {
        let gaps = PrefillGaps::default();
        let points = vllm_buckets(|k| 500.0 + 2500.0 * f64::from((k * 11) % 13) / 12.0);
        let s = prefill_share(&vllm_inputs(&points, &gaps)).expect("a share");
        assert!((s.share - 0.0875).abs() < 0.015, "{s:?}");
        assert!(!s.direct);
    }

    /// A steady prompt rate: the only spread in the prompt work per step is the batch's
    /// snapshot noise, which says nothing of prefill's cost.
    #[test]
    fn a_steady_prompt_rate_measures_nothing() {
        let gaps = PrefillGaps::default();
        let points = vllm_buckets(|k| 3000.0 + f64::from(k % 3));
        assert_eq!(per_step(&vllm_inputs(&points, &gaps)), None);
        assert_eq!(trade_off(&vllm_inputs(&points, &gaps)), None);
    }

    /// The log's first line rates the time since the server started, idle included: its
    /// bucket of diluted rates (the first prompts prefilled before any decode: a quarter of
    /// the generation rate, two sevenths of the prompt rate, at the same batch) reads as
    /// less work in the same time, unless it is left out of the fits.
    #[test]
    fn a_first_line_rated_over_start_up_is_left_out() {
        let gaps = PrefillGaps::default();
        let mut points = vllm_buckets(|k| 3000.0 + 40.0 * f64::from(k % 3));
        for p in points.iter_mut() {
            p.running = Some(8.0);
        }
        let steady = prefill_share(&vllm_inputs(&points[1..], &gaps));
        let first = &mut points[0];
        first.gen_tok_s = first.gen_tok_s.map(|g| g / 4.0);
        first.input_tok_s = first.input_tok_s.map(|v| v / 3.5);
        first.gen_timed = 0;
        first.gen_secs = 0.0;
        first.gen_tokens = 0.0;
        first.untimed = 1;
        assert_eq!(prefill_share(&vllm_inputs(&points, &gaps)), steady);
    }

    /// Too few back-to-back batches, or none of SGLang's prefill lines: the buckets'
    /// estimates are used instead.
    #[test]
    fn few_timed_batches_are_no_measurement() {
        let gaps = PrefillGaps {
            pairs: vec![(1000.0, 0.07); MIN_TIMED - 1],
            tokens_per_batch: 1000.0,
        };
        let points = minute();
        let i = inputs(&points, &gaps, 1.0);
        assert_eq!(timed_batches(&i), None);
        let many = PrefillGaps {
            pairs: vec![(1000.0, 0.07); 40],
            tokens_per_batch: 1000.0,
        };
        assert_eq!(
            timed_batches(&ShareInputs {
                prefill_lines: false,
                gaps: &many,
                ..i
            }),
            None
        );
    }
}
