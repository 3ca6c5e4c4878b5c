//! Predict the effect of a configuration change from the log alone.
//!
//! The model has three parts, each fitted from the log:
//! - **step time**: seconds per decode step, `step = a + b·running + c·kv_tokens`, fitted by
//!   least squares over the timeline (per bucket, `running ÷ gen throughput`; KV tokens from
//!   `token usage × pool size`). Warm-up and drain give the spread in batch size that
//!   separates the fixed cost from the per-request cost. The per-request part of the
//!   measured step also absorbs the prefill time per generated token, which scales the
//!   same way. The fit is anchored to the steady state, so "no change" predicts the
//!   baseline exactly. Without spread (or with a fit that explains too little) a prior is
//!   used: decode is memory-bound, the step doubles at ~48 running requests.
//! - **per-request KV footprint**: tokens held per running request (prompt plus generated
//!   so far, averaged over the requests' lives), plus what the engine reserves. SGLang
//!   admits a request only if the pool can also hold the future tokens of the running
//!   requests (`new_token_ratio × remaining max_new_tokens`, scaled by
//!   `schedule_conservativeness`), so when the pool binds it is full at `capacity ÷
//!   running` tokens per request, of which the `token usage` share is held and the rest
//!   reserved. vLLM admits on free blocks and preempts when they run out: the pool binds
//!   at ~98% usage, held tokens only.
//! - **admission**: running = min(max running requests, what the pool admits, what the
//!   client keeps in flight); the rest of the client's requests wait.
//!
//! The check (crates/core/tests/whatif.rs) simulates a workload, predicts a changed
//! configuration from its log, simulates the changed configuration and compares.

use serde::Serialize;

use crate::report::Report;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WhatIf {
    pub changes: Vec<Change>,
    pub baseline: Baseline,
    pub predicted: Prediction,
    /// How the model was fitted, in words.
    pub model: String,
    /// Changes the model could not apply, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Change {
    pub parameter: String,
    pub value: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Baseline {
    pub running_requests: f64,
    pub gen_throughput_tok_s: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Prediction {
    pub running_requests: f64,
    pub gen_throughput_tok_s: f64,
    /// Uncertainty range of the throughput prediction.
    pub low: f64,
    pub high: f64,
    pub queued_requests: Option<f64>,
    pub per_request_tok_s: f64,
    /// Uncertainty range of the running-requests prediction.
    pub running_low: f64,
    pub running_high: f64,
    /// What limits admission after the change: `kv_cache`, `max_running`, `client`.
    pub bound_by: &'static str,
}

/// Parameters a change can name.
///
/// - `kv_tokens`: KV pool size in tokens (SGLang `max_total_num_tokens`, vLLM KV cache size).
/// - `kv_scale`: multiply the KV pool by this factor.
/// - `kv_dtype_fp8`: 1 = store the KV cache in FP8 (half the bytes per token of a 16-bit cache).
/// - `mem_fraction_static` (SGLang), `gpu_memory_utilization` (vLLM): the memory flag's new
///   value, converted to a pool size when the startup lines give enough to do so.
/// - `max_running`: SGLang `--max-running-requests`, vLLM `--max-num-seqs`.
/// - `client_concurrency`: requests the client keeps in flight.
/// - `schedule_conservativeness`: SGLang `--schedule-conservativeness`, the new value (the
///   current one is read from `server_args`, default 1.0).
pub const PARAMETERS: &[&str] = &[
    "kv_tokens",
    "kv_scale",
    "kv_dtype_fp8",
    "mem_fraction_static",
    "gpu_memory_utilization",
    "max_running",
    "client_concurrency",
    "schedule_conservativeness",
];

/// Parses `name=value` (e.g. `kv_tokens=159000`).
pub fn parse_change(s: &str) -> Result<Change, String> {
    let (k, v) = s.split_once('=').ok_or_else(|| {
        format!(
            "'{s}' is not name=value (known names: {})",
            PARAMETERS.join(", ")
        )
    })?;
    let k = k.trim();
    if !PARAMETERS.contains(&k) {
        return Err(format!(
            "unknown what-if parameter '{k}' (known: {})",
            PARAMETERS.join(", ")
        ));
    }
    let value: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("'{v}' is not a number in '{s}'"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("'{v}' must be a non-negative number in '{s}'"));
    }
    let positive = matches!(
        k,
        "kv_tokens" | "kv_scale" | "max_running" | "client_concurrency"
    );
    if positive && value <= 0.0 {
        return Err(format!("'{k}' must be positive in '{s}'"));
    }
    if matches!(k, "mem_fraction_static" | "gpu_memory_utilization")
        && !(value > 0.0 && value < 1.0)
    {
        return Err(format!("'{k}' must be between 0 and 1 in '{s}'"));
    }
    Ok(Change {
        parameter: k.to_string(),
        value,
    })
}

/// What limits admission in a steady state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The KV pool (with the engine's reservation) admits no more.
    KvCache,
    /// Running sits at the max-running-requests cap while requests wait.
    MaxRunning,
    /// Nothing waits: the client sends no more.
    Client,
}

impl Bound {
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::KvCache => "kv_cache",
            Bound::MaxRunning => "max_running",
            Bound::Client => "client",
        }
    }
}

/// Weighted least squares `y = X·β` by the normal equations over the columns `cols` of
/// the rows; `None` if singular.
fn least_squares(rows: &[(Vec<f64>, f64, f64)], cols: &[usize]) -> Option<LsFit> {
    let k = cols.len();
    let mut m = vec![vec![0.0; k]; k];
    let mut v = vec![0.0; k];
    let mut wsum = 0.0;
    for (x, y, w) in rows {
        wsum += w;
        for i in 0..k {
            v[i] += w * x[cols[i]] * y;
            for j in 0..k {
                m[i][j] += w * x[cols[i]] * x[cols[j]];
            }
        }
    }
    if rows.len() <= k + 2 || wsum <= 0.0 {
        return None;
    }
    let inv = invert(m)?;
    let beta: Vec<f64> = (0..k)
        .map(|i| (0..k).map(|j| inv[i][j] * v[j]).sum())
        .collect();
    let my = rows.iter().map(|(_, y, w)| w * y).sum::<f64>() / wsum;
    let (mut ss, mut ssy) = (0.0, 0.0);
    for (x, y, w) in rows {
        let f: f64 = (0..k).map(|i| beta[i] * x[cols[i]]).sum();
        ss += w * (y - f).powi(2);
        ssy += w * (y - my).powi(2);
    }
    // Residual variance per unit weight (weights are relative).
    let mean_w = wsum / rows.len() as f64;
    let sigma2 = ss / (rows.len() - k) as f64 / mean_w;
    let r2 = if ssy > 0.0 { 1.0 - ss / ssy } else { 0.0 };
    let cov = inv
        .into_iter()
        .map(|row| row.into_iter().map(|c| c * sigma2 * mean_w).collect())
        .collect();
    Some(LsFit { beta, cov, r2 })
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

/// Least squares, then again without the buckets whose residual is beyond 4 robust standard
/// deviations (a prefill storm at start-up, a last interval that ends in idle time).
fn robust_least_squares(rows: &[(Vec<f64>, f64, f64)], cols: &[usize]) -> Option<LsFit> {
    let f = least_squares(rows, cols)?;
    let resid: Vec<f64> = rows
        .iter()
        .map(|(x, y, _)| {
            y - cols
                .iter()
                .zip(&f.beta)
                .map(|(&c, b)| b * x[c])
                .sum::<f64>()
        })
        .collect();
    let sigma = 1.4826 * crate::diagnose::window::median(resid.iter().map(|r| r.abs()).collect())?;
    if sigma.is_nan() || sigma <= 0.0 {
        return Some(f);
    }
    let kept: Vec<(Vec<f64>, f64, f64)> = rows
        .iter()
        .zip(&resid)
        .filter(|(_, r)| r.abs() <= 4.0 * sigma)
        .map(|(row, _)| row.clone())
        .collect();
    if kept.len() == rows.len() {
        return Some(f);
    }
    least_squares(&kept, cols)
}

struct LsFit {
    beta: Vec<f64>,
    cov: Vec<Vec<f64>>,
    r2: f64,
}

impl LsFit {
    /// Variance of `x·β`.
    fn var(&self, x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() {
            for j in 0..x.len() {
                s += x[i] * self.cov[i][j] * x[j];
            }
        }
        s.max(0.0)
    }
}

/// Gauss-Jordan inverse with partial pivoting, scaled by the diagonal so that mixed units
/// (requests, tokens) condition well.
fn invert(m: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let k = m.len();
    let d: Vec<f64> = (0..k).map(|i| m[i][i].abs().sqrt().max(1e-300)).collect();
    let mut a: Vec<Vec<f64>> = (0..k)
        .map(|i| (0..k).map(|j| m[i][j] / (d[i] * d[j])).collect())
        .collect();
    let mut inv: Vec<Vec<f64>> = (0..k)
        .map(|i| (0..k).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    for col in 0..k {
        let piv = (col..k).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[piv][col].abs() < 1e-9 {
            return None;
        }
        a.swap(col, piv);
        inv.swap(col, piv);
        let p = a[col][col];
        for j in 0..k {
            a[col][j] /= p;
            inv[col][j] /= p;
        }
        for r in 0..k {
            if r != col {
                let f = a[r][col];
                if f != 0.0 {
                    for j in 0..k {
                        a[r][j] -= f * a[col][j];
                        inv[r][j] -= f * inv[col][j];
                    }
                }
            }
        }
    }
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v /= d[i] * d[j];
        }
    }
    Some(inv)
}

/// Fitted model and the steady state it was fitted around.
#[derive(Debug, Clone)]
pub struct Model {
    /// Steady-state running requests (all ranks).
    pub running: f64,
    /// Steady-state generation throughput, tok/s (all ranks).
    pub gen_tok_s: f64,
    pub queued: f64,
    /// KV pool in tokens, all ranks together.
    pub kv_capacity: Option<f64>,
    /// KV tokens held per running request in the steady state (not reserved).
    pub kv_per_request: Option<f64>,
    /// Steady-state KV usage (0..1).
    pub kv_usage: Option<f64>,
    /// Decode step seconds = `a + b·running` at the steady-state KV tokens per request
    /// (`b` includes `c × kv_per_request` and prefill time per step per request).
    pub a: f64,
    pub b: f64,
    /// Seconds per KV token in use (0 when the fit could not separate it).
    pub c: f64,
    /// Relative standard error of the step time at the steady state.
    pub spread: f64,
    /// The step model was fitted (not the prior).
    pub fitted: bool,
    /// R² of the fit (0 for the prior).
    pub r2: f64,
    /// Timeline buckets the fit used.
    pub points: usize,
    /// Requests waited during most of the steady state.
    pub queue_bound: bool,
    pub bound: Bound,
    pub sglang: bool,
    /// Max running requests, all ranks together.
    pub max_running: Option<f64>,
    /// Ranks with their own pool and cap (SGLang data parallelism).
    pub ranks: f64,
    /// Current schedule_conservativeness (SGLang), when the log shows it.
    pub conservativeness: Option<f64>,
    /// KV pool memory in GB and an estimate of the GPU's memory (for the memory flags).
    pub kv_cache_gb: Option<f64>,
    pub gpu_mem_gb: Option<f64>,
    pub mem_fraction_static: Option<f64>,
    pub gpu_memory_utilization: Option<f64>,
    /// Cache dtype is already 8-bit.
    pub kv_fp8: bool,
    /// Prefill seconds per step per running request in the steady state (part of `b`; 0 when
    /// the fit could not separate it).
    pub pf_per_request: f64,
    /// Share of that prefill spent recomputing evicted requests, which stops when the pool
    /// no longer binds.
    pub recompute_share: f64,
    /// Covariance of (a, b) after anchoring, for the prediction range.
    cov_ab: [[f64; 2]; 2],
}

/// The prior's batch size at which the per-request part of a step equals the fixed part.
const PRIOR_N0: f64 = 48.0;

impl Model {
    /// Fits the model to a report's steady state.
    pub fn fit(r: &Report) -> Option<Model> {
        let pts = &r.timeline.points;
        // The same steady window the diagnosis judges.
        let w = crate::diagnose::window::steady(r);
        let running = w.running.filter(|v| *v > 0.0)?;
        let gen = w.gen_tok_s.filter(|v| *v > 0.0)?;
        let sglang = r.engine == "sglang";
        let ranks = if sglang {
            r.config.data_parallel_size.unwrap_or(1).max(1) as f64
        } else {
            1.0
        };
        let cap_rank = r
            .config
            .kv_capacity_tokens
            .map(|c| c as f64)
            .filter(|c| *c > 0.0);
        let cap = cap_rank.map(|c| c * ranks);
        let kv_usage = w.kv_usage.filter(|u| *u >= 0.0);
        let kv_per_request = match (kv_usage, cap) {
            (Some(u), Some(c)) if u > 0.0 => Some(u * c / running),
            _ => r
                .summary
                .kv_tokens
                .as_ref()
                .map(|d| d.mean / running)
                .filter(|v| *v > 0.0),
        };
        let queued = w.queued.unwrap_or(0.0);
        let max_running = r
            .config
            .max_running_requests
            .map(|v| v as f64 * ranks)
            .filter(|v| *v > 0.0);
        let queue_bound = queued >= 1.0 && w.queue_share.unwrap_or(0.0) >= 0.3;
        let at_cap = max_running.is_some_and(|m| running >= 0.93 * m || running >= m - 1.0);
        let bound = if !queue_bound {
            Bound::Client
        } else if at_cap {
            Bound::MaxRunning
        } else {
            Bound::KvCache
        };

        // ---- step time ----
        // Columns: 1, running, KV tokens, running × (prefill ran in the bucket). The last
        // separates the prefill time per step (proportional to the batch: each request's
        // prefill is spread over its outputs) from decode, when drain or idle stretches show
        // decode alone.
        let y0 = running / gen;
        let mut rows: Vec<(Vec<f64>, f64, f64)> = Vec::new();
        let mut with_kv = 0usize;
        let mut prev_n: Option<f64> = None;
        for p in pts {
            let (Some(n), Some(g)) = (p.running, p.gen_tok_s) else {
                prev_n = None;
                continue;
            };
            // A stats line's throughput covers the interval since the previous line, during
            // which the batch moved from the previous count to this one: the batch that
            // produced it is on average half a line interval behind the bucket's mean.
            let lag = prev_n.map_or(0.0, |pn| (pn - n) / (2.0 * (p.samples as f64).max(1.0)));
            prev_n = Some(n);
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
                Some(_) if sglang => n,
                Some(i) => i * y,
                None => 0.0,
            };
            rows.push((vec![1.0, n, kv, pf], y, wt));
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
        let pf0 = if sglang {
            if pf_rows > 0 {
                1.0
            } else {
                0.0
            }
        } else {
            w.input_tok_s.unwrap_or(0.0) / gen
        };
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
        let (mut a, mut b, mut c, mut pf, mut cov_ab, r2, fitted) = match fit {
            Some(f) => (f.a, f.b, f.c, f.pf, f.cov, f.r2, true),
            None => {
                // Prior: memory-bound decode, per-request share n/(n + n0) at this batch.
                let per_rank = running / ranks;
                let share = per_rank / (per_rank + PRIOR_N0);
                let a = (1.0 - share) * y0;
                let b = share * y0 / running;
                // ±50 % on the per-request part.
                let cov = [[0.0, 0.0], [0.0, (0.5 * b).powi(2)]];
                (a, b, 0.0, 0.0, cov, 0.0, false)
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
        let se0 = (cov_ab[0][0] + 2.0 * running * cov_ab[0][1] + running * running * cov_ab[1][1])
            .max(0.0)
            .sqrt();
        let spread = (se0 / y0).clamp(0.0, 0.3);

        // Share of the prefill work that recomputes retracted/preempted requests: each
        // eviction re-prefills a request (vLLM evicts the newest, with little output), each
        // completion was prefilled once. Completions are counted from access-log lines.
        let evicted = r.summary.retracted_requests as f64;
        let completed = r
            .input
            .other_lines_by_kind
            .get("access_log")
            .copied()
            .unwrap_or(0) as f64;
        let recompute_share = if evicted > 0.0 && completed > 0.0 {
            evicted / (evicted + completed)
        } else {
            0.0
        };
        let mfs = r
            .config
            .mem_fraction_static
            .filter(|v| *v > 0.0 && *v < 1.0);
        let gmu = r
            .config
            .gpu_memory_utilization
            .filter(|v| *v > 0.0 && *v < 1.0);
        let kv_gb = r.config.kv_cache_gb.filter(|v| *v > 0.0);
        // SGLang leaves (1 − mem_fraction_static) of the GPU for activations and CUDA graphs;
        // what is left after startup is at most that, so this underestimates the GPU (and
        // the gain from raising the fraction) rather than overstating it.
        let gpu_mem_gb = match (mfs, r.config.available_gpu_mem_gb) {
            (Some(m), Some(avail)) if sglang && avail > 0.0 => Some(avail / (1.0 - m)),
            _ => None,
        };
        let kv_fp8 = r
            .config
            .kv_cache_dtype
            .as_deref()
            .is_some_and(|d| d.contains("fp8") || d.contains("int8"));
        Some(Model {
            running,
            gen_tok_s: gen,
            queued,
            kv_capacity: cap,
            kv_per_request,
            kv_usage,
            a,
            b,
            c,
            spread,
            fitted,
            r2,
            points,
            queue_bound,
            bound,
            sglang,
            max_running,
            ranks,
            conservativeness: r.config.schedule_conservativeness.filter(|v| *v > 0.0),
            kv_cache_gb: kv_gb,
            gpu_mem_gb,
            mem_fraction_static: mfs,
            gpu_memory_utilization: gmu,
            kv_fp8,
            pf_per_request: pf,
            recompute_share,
            cov_ab,
        })
    }

    /// Effective seconds per decode step with `running` requests (at the steady state's KV
    /// tokens per request, prefill time included).
    pub fn step(&self, running: f64) -> f64 {
        self.a + self.b * running
    }

    /// Pool utilisation at which admission stops, relative to the held tokens, for an engine
    /// that is not pool-bound now: SGLang reserves future tokens (about 14 % of the pool at
    /// the default conservativeness), vLLM fills the pool.
    fn usable_share(&self, cons_factor: f64) -> f64 {
        if self.sglang {
            (1.0 - 0.14 * cons_factor).clamp(0.5, 0.98)
        } else {
            0.98
        }
    }

    /// Steady-state running requests, queue and throughput after the changes.
    pub fn predict(&self, changes: &[Change]) -> Prediction {
        self.predict_with_notes(changes).0
    }

    fn predict_with_notes(&self, changes: &[Change]) -> (Prediction, Vec<String>) {
        let mut notes = Vec::new();
        let mut kv_scale = 1.0;
        let mut cap = self.max_running;
        let mut clients: Option<f64> = None;
        let mut cons_factor = 1.0;
        for ch in changes {
            let v = ch.value;
            match ch.parameter.as_str() {
                "kv_tokens" => match self.kv_capacity.filter(|k| *k > 0.0) {
                    // Per rank, as the engine reports it.
                    Some(k) => kv_scale *= v * self.ranks / k,
                    None => notes.push(
                        "kv_tokens: the log does not show the current KV pool size".to_string(),
                    ),
                },
                "kv_scale" if v > 0.0 => kv_scale *= v,
                "kv_dtype_fp8" => {
                    if v > 0.0 && !self.kv_fp8 {
                        kv_scale *= 2.0;
                    } else if v > 0.0 {
                        notes.push("kv_dtype_fp8: the KV cache is already 8-bit".to_string());
                    }
                }
                "mem_fraction_static" | "gpu_memory_utilization" => {
                    let cur = if ch.parameter == "mem_fraction_static" {
                        self.mem_fraction_static
                    } else {
                        self.gpu_memory_utilization
                    };
                    match (cur, self.kv_cache_gb, self.gpu_mem_gb) {
                        (Some(m), Some(kv), Some(gpu)) => {
                            let new_kv = (kv + (v - m) * gpu).max(0.0);
                            kv_scale *= new_kv / kv;
                        }
                        _ => notes.push(format!(
                            "{}: the startup lines do not give the GPU memory and the pool's \
                             size in GB, so the new pool size is unknown; use kv_tokens",
                            ch.parameter
                        )),
                    }
                }
                "max_running" if v > 0.0 => cap = Some(v * self.ranks),
                "client_concurrency" if v > 0.0 => clients = Some(v),
                "schedule_conservativeness" if v > 0.0 => {
                    // The new setting, against the current one (SGLang's default is 1.0).
                    cons_factor *= v / self.conservativeness.unwrap_or(1.0);
                    if !self.sglang {
                        notes.push("schedule_conservativeness: SGLang only".to_string());
                        cons_factor = 1.0;
                    }
                }
                _ => {}
            }
        }

        // Demand: what the client keeps in flight (running + waiting), unless changed.
        let demand = clients.unwrap_or(self.running + self.queued);
        // Supply from the KV pool.
        let mut kv_err = 0.0;
        let kv_limit = match self.bound {
            Bound::KvCache => {
                // The pool is full now at capacity ÷ running per request: the usage share is
                // held, the rest (SGLang) reserved, and the reservation scales with
                // conservativeness.
                let held = self.kv_usage.unwrap_or(0.85).clamp(0.05, 1.0);
                let footprint = if self.sglang {
                    held + (1.0 - held) * cons_factor
                } else {
                    1.0
                };
                let mut l = self.running * kv_scale / footprint.max(0.05);
                // Never more than the pool can hold outright.
                if let (Some(h), Some(k)) = (self.kv_per_request, self.kv_capacity) {
                    l = l.min(0.99 * k * kv_scale / h.max(1.0));
                }
                kv_err = 0.03 + 0.05 * kv_scale.ln().abs() + 0.1 * (cons_factor - 1.0).abs();
                Some(l)
            }
            _ => self.kv_per_request.zip(self.kv_capacity).map(|(h, k)| {
                kv_err = 0.08;
                k * kv_scale * self.usable_share(cons_factor) / h.max(1.0)
            }),
        };
        let mut running = demand;
        let mut bound = Bound::Client;
        if let Some(l) = kv_limit {
            if l < running {
                running = l;
                bound = Bound::KvCache;
            }
        }
        if let Some(c) = cap {
            if c < running {
                running = c;
                bound = Bound::MaxRunning;
            }
        }
        let running = running.max(0.0);
        // Uncertainty of running: exact for a cap or the client, the KV model's error else.
        let run_err = match bound {
            Bound::KvCache => kv_err,
            _ => 0.01,
        };
        // Out of the pool-bound regime, evicted requests are no longer recomputed.
        let b = if self.bound == Bound::KvCache && bound != Bound::KvCache {
            self.b - self.pf_per_request * self.recompute_share
        } else {
            self.b
        };
        let step = self.a + b * running;
        let gen = if running > 0.0 { running / step } else { 0.0 };
        let queued = (demand - running).max(0.0);
        // Throughput range: the step fit's error at the new batch, the running error (which
        // moves throughput by the step's per-request elasticity) and a model floor.
        let se_step = (self.cov_ab[0][0]
            + 2.0 * running * self.cov_ab[0][1]
            + running * running * self.cov_ab[1][1])
            .max(0.0)
            .sqrt();
        let elasticity = if step > 0.0 { self.a / step } else { 1.0 };
        let rel = ((se_step / step.max(1e-12)).powi(2)
            + (run_err * elasticity).powi(2)
            + 0.03f64.powi(2))
        .sqrt();
        let half = (1.645 * rel).min(0.6);
        let d1 = |v: f64| crate::round::dec(v, 1);
        (
            Prediction {
                running_requests: d1(running),
                gen_throughput_tok_s: d1(gen),
                low: d1(gen * (1.0 - half)),
                high: d1(gen * (1.0 + half)),
                queued_requests: Some(d1(queued)),
                per_request_tok_s: crate::round::dec(
                    if running > 0.0 { gen / running } else { 0.0 },
                    2,
                ),
                running_low: d1(running * (1.0 - 1.645 * run_err)),
                running_high: d1(match bound {
                    Bound::KvCache => running * (1.0 + 1.645 * run_err),
                    _ => running,
                }),
                bound_by: bound.as_str(),
            },
            notes,
        )
    }

    pub fn describe(&self) -> String {
        let kv = if self.c > 0.0 {
            format!(" + {:.3e} s × KV token", self.c)
        } else {
            String::new()
        };
        format!(
            "decode step = {:.4} s + {:.6} s × running{kv} ({}); steady state {:.1} running, {:.1} tok/s, bound by {}",
            self.a,
            self.b,
            if self.fitted {
                format!(
                    "least squares over {} timeline buckets, R² {:.2}",
                    self.points, self.r2
                )
            } else {
                "prior: too little spread in batch size to fit".to_string()
            },
            self.running,
            self.gen_tok_s,
            self.bound.as_str()
        )
    }
}

/// Predicts the effect of `changes` on the run in `r`.
/// A prediction checked against a restart: the model fitted on one run,
/// asked about the next run's settings, and what that run measured.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RestartCheck {
    /// The run the model was fitted on, and the run it predicts (1-based).
    pub fitted_on_run: u32,
    pub checked_run: u32,
    /// The settings that changed, as what-if changes.
    pub changes: Vec<Change>,
    pub predicted: Prediction,
    /// The checked run's steady state.
    pub measured_running_requests: Option<f64>,
    pub measured_gen_tok_s: Option<f64>,
}

/// Checks the model on a restart: fitted on `before` (the run before the judged
/// one), asked about the settings `after` runs with. `None` when no capacity
/// setting the model knows changed, or when `before` cannot be fitted.
pub fn check_restart(before: &Report, after: &Report) -> Option<RestartCheck> {
    let judged = after.runs.iter().find(|r| r.analyzed)?;
    let mut changes = Vec::new();
    let (b, a) = (&before.config, &after.config);
    if let (Some(x), Some(y)) = (b.kv_capacity_tokens, a.kv_capacity_tokens) {
        if x != y {
            changes.push(Change {
                parameter: "kv_tokens".into(),
                value: y as f64,
            });
        }
    }
    if let (Some(x), Some(y)) = (b.max_running_requests, a.max_running_requests) {
        if x != y {
            changes.push(Change {
                parameter: "max_running".into(),
                value: y as f64,
            });
        }
    }
    if changes.is_empty() {
        return None;
    }
    let w = predict(before, &changes)?;
    let measured = crate::diagnose::window::steady(after);
    Some(RestartCheck {
        fitted_on_run: judged.run - 1,
        checked_run: judged.run,
        changes,
        predicted: w.predicted,
        measured_running_requests: measured.running.map(crate::round::sig),
        measured_gen_tok_s: measured.gen_tok_s.map(crate::round::sig),
    })
}

pub fn predict(r: &Report, changes: &[Change]) -> Option<WhatIf> {
    let m = Model::fit(r)?;
    let (predicted, notes) = m.predict_with_notes(changes);
    Some(WhatIf {
        changes: changes.to_vec(),
        baseline: Baseline {
            running_requests: crate::round::dec(m.running, 1),
            gen_throughput_tok_s: crate::round::dec(m.gen_tok_s, 1),
        },
        predicted,
        model: m.describe(),
        notes,
    })
}
