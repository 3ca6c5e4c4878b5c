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
//! used as it is.

use super::least_squares::robust_least_squares;
use crate::report::Point;

/// The measured share and how it was found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrefillShare {
    /// Of the busy time, 0..1.
    pub share: f64,
    /// Rows (timeline buckets) the fit used; 0 when measured from iteration times.
    pub rows: usize,
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
}

/// At least this many buckets with prompt work, and a spread of it, to fit the slope.
const MIN_ROWS: usize = 8;

pub(super) fn prefill_share(i: &ShareInputs) -> Option<PrefillShare> {
    if let Some(s) = i.measured.filter(|s| s.is_finite() && *s >= 0.0) {
        return Some(PrefillShare {
            share: s.min(0.99),
            rows: 0,
        });
    }
    // Each estimate errs high where the buckets are few or the batch small (a handful of
    // prompts make the whole spread); the lower of two is the safer claim.
    match (trade_off(i), per_step(i)) {
        (Some(a), Some(b)) => Some(if a.share <= b.share { a } else { b }),
        (a, b) => a.or(b),
    }
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
                Some(v) if v >= 0.0 => (g, v),
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
            rows: rows.len(),
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
        rows: rows.len(),
    })
}

/// Seconds per decode step against the prompt tokens per step,
/// `running / gen = d0 + d1 · running + p · (prompt tokens per step)`. Both sides divide
/// by the generation rate, so noise in it makes a slope of its own: used only where
/// [`trade_off`] finds none.
fn per_step(i: &ShareInputs) -> Option<PrefillShare> {
    // Rows: [1, running, prompt tokens per step], seconds per step, weight.
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
        let x = if i.prefill_lines {
            if p.gen_tokens <= 0.0 {
                continue;
            }
            // Steps in the bucket: generated tokens over the batch.
            p.prompt_tokens / (p.gen_tokens / n)
        } else {
            match p.input_tok_s {
                Some(v) if v >= 0.0 => v * y,
                _ => continue,
            }
        };
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        rows.push((vec![1.0, n, x], y, (p.samples as f64).clamp(1.0, 8.0)));
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
    let (n_mean, x_mean) = (mean(1), mean(2));
    let y_mean = {
        let w: f64 = rows.iter().map(|r| r.2).sum();
        rows.iter().map(|r| r.1 * r.2).sum::<f64>() / w
    };
    if x_mean <= 0.0 || y_mean <= 0.0 {
        // No prompt work in the window: prefill takes none of the time.
        return Some(PrefillShare {
            share: 0.0,
            rows: rows.len(),
        });
    }
    if cv(2, x_mean) < 0.05 {
        return None;
    }
    // The batch's own column only where the batch moves: else it is the intercept again.
    let cols: &[usize] = if cv(1, n_mean) >= 0.1 {
        &[0, 1, 2]
    } else {
        &[0, 2]
    };
    let fit = robust_least_squares(&rows, cols)?;
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
        rows: rows.len(),
    })
}
