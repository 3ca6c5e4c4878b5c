//! Predict the effect of a configuration change from the log alone.
//!
//! The model has three parts, each fitted from the log:
//! - **step time**: seconds per decode step as a function of the batch,
//!   `step = a + b·running + c·kv_tokens`, fitted by least squares over the
//!   timeline (`step = running ÷ gen_tok_s` per bucket). When the log has too
//!   little spread to identify the slope, a prior is used (decode is mostly
//!   memory-bound: 70 % of a step is fixed cost) and the range widens.
//! - **per-request KV footprint** in the steady state, including what the
//!   engine reserves: SGLang admits a request only if the pool can also hold
//!   the future tokens of running requests, so when requests wait the pool is
//!   effectively full at `capacity ÷ running` tokens per request.
//! - **admission**: running = min(running cap, capacity ÷ footprint, client concurrency).

use serde::Serialize;

use crate::report::Report;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WhatIf {
    pub changes: Vec<Change>,
    pub baseline: Baseline,
    pub predicted: Prediction,
    /// How the model was fitted, in words.
    pub model: String,
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
}

/// Parameters a change can name.
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
    Ok(Change {
        parameter: k.to_string(),
        value,
    })
}

/// Fitted step-time model and the steady state it was fitted around.
#[derive(Debug, Clone)]
pub struct Model {
    pub running: f64,
    pub gen_tok_s: f64,
    pub queued: f64,
    pub kv_capacity: Option<f64>,
    /// KV tokens per running request, as held (not reserved).
    pub kv_per_request: Option<f64>,
    /// Fixed and per-request parts of a decode step, seconds.
    pub a: f64,
    pub b: f64,
    /// Relative half-width of the prediction range.
    pub spread: f64,
    pub fitted: bool,
    pub queue_bound: bool,
    pub sglang: bool,
    pub max_running: Option<f64>,
}

impl Model {
    /// Fits the model to a report's steady state.
    pub fn fit(r: &Report) -> Option<Model> {
        let w = crate::diagnose::window::steady(r);
        let running = w.running.filter(|v| *v > 0.0)?;
        let gen = w.gen_tok_s.filter(|v| *v > 0.0)?;
        let step0 = running / gen;
        // Least squares of step time on running over buckets with both figures.
        let pts: Vec<(f64, f64)> = r
            .timeline
            .points
            .iter()
            .filter_map(|p| match (p.running, p.gen_tok_s) {
                (Some(n), Some(g)) if n >= 1.0 && g > 0.0 => Some((n, n / g)),
                _ => None,
            })
            .collect();
        let (mut a, mut b, mut fitted) = (0.7 * step0, 0.3 * step0 / running, false);
        let mut spread = 0.15;
        if pts.len() >= 6 {
            let n = pts.len() as f64;
            let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
            let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
            let sxx = pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
            let sxy = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>();
            let syy = pts.iter().map(|p| (p.1 - my).powi(2)).sum::<f64>();
            // Enough spread in the batch size, and a fit that explains the step time.
            if sxx > 0.0 && mx > 0.0 && (sxx / n).sqrt() / mx > 0.15 {
                let bb = sxy / sxx;
                let aa = my - bb * mx;
                let r2 = if syy > 0.0 {
                    (sxy * sxy) / (sxx * syy)
                } else {
                    0.0
                };
                if bb >= 0.0 && aa > 0.0 && r2 >= 0.5 {
                    a = aa;
                    b = bb;
                    fitted = true;
                    spread = (0.05 + 0.2 * (1.0 - r2)).min(0.15);
                }
            }
        }
        let cap = r.config.kv_capacity_tokens.map(|c| c as f64);
        let kv_per_request = match (w.kv_usage, cap) {
            (Some(u), Some(c)) if u > 0.0 => Some(u * c / running),
            _ => r
                .summary
                .kv_tokens
                .map(|d| d.mean / running)
                .filter(|v| *v > 0.0),
        };
        let queued = w.queued.unwrap_or(0.0);
        Some(Model {
            running,
            gen_tok_s: gen,
            queued,
            kv_capacity: cap,
            kv_per_request,
            a,
            b,
            spread,
            fitted,
            queue_bound: queued >= 1.0 && w.queue_share.unwrap_or(0.0) >= 0.3,
            sglang: r.engine == "sglang",
            max_running: r.config.max_running_requests.map(|v| v as f64),
        })
    }

    pub fn step(&self, running: f64) -> f64 {
        self.a + self.b * running
    }

    /// Steady-state running requests and throughput after the changes.
    pub fn predict(&self, changes: &[Change]) -> Prediction {
        let mut kv_scale = 1.0;
        let mut cap = self.max_running;
        let mut clients: Option<f64> = None;
        let mut reserve_scale = 1.0;
        for c in changes {
            match c.parameter.as_str() {
                "kv_tokens" => {
                    if let Some(k) = self.kv_capacity.filter(|k| *k > 0.0) {
                        kv_scale *= c.value / k;
                    }
                }
                "kv_scale" => kv_scale *= c.value,
                "kv_dtype_fp8" if c.value > 0.0 => kv_scale *= 2.0,
                "max_running" => cap = Some(c.value),
                "client_concurrency" => clients = Some(c.value),
                "schedule_conservativeness" => reserve_scale = c.value.max(0.05),
                _ => {}
            }
        }
        // Demand: what the client keeps in flight (running + waiting), unless changed.
        let demand = clients.unwrap_or(self.running + self.queued);
        // Supply from the KV pool: with a queue the pool is full at the current
        // footprint (held + reserved); scale it with capacity and reservation.
        let kv_limit = if self.queue_bound {
            let held = self
                .kv_per_request
                .zip(self.kv_capacity)
                .map(|(k, c)| (k / (c / self.running)).min(1.0))
                .unwrap_or(0.7);
            // Footprint = held + reserved; the reserved share scales with conservativeness.
            let footprint = held + (1.0 - held) * if self.sglang { reserve_scale } else { 1.0 };
            Some(self.running * kv_scale / footprint.max(0.05))
        } else {
            self.kv_per_request
                .zip(self.kv_capacity)
                .map(|(k, c)| c * kv_scale / k)
        };
        let mut running = demand;
        if let Some(l) = kv_limit {
            running = running.min(l);
        }
        if let Some(c) = cap {
            running = running.min(c);
        }
        let running = running.max(0.0);
        let gen = if running > 0.0 {
            running / self.step(running)
        } else {
            0.0
        };
        let queued = (demand - running).max(0.0);
        let spread = self.spread
            * if (running / self.running - 1.0).abs() > 0.5 {
                1.5
            } else {
                1.0
            };
        Prediction {
            running_requests: crate::round::dec(running, 1),
            gen_throughput_tok_s: crate::round::dec(gen, 1),
            low: crate::round::dec(gen * (1.0 - spread), 1),
            high: crate::round::dec(gen * (1.0 + spread), 1),
            queued_requests: Some(crate::round::dec(queued, 1)),
            per_request_tok_s: crate::round::dec(
                if running > 0.0 { gen / running } else { 0.0 },
                2,
            ),
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "decode step = {:.4} s + {:.6} s × running ({}); steady state {:.1} running, {:.1} tok/s{}",
            self.a,
            self.b,
            if self.fitted {
                "fitted by least squares on the timeline"
            } else {
                "prior: too little spread in batch size to fit"
            },
            self.running,
            self.gen_tok_s,
            if self.queue_bound { ", queue-bound" } else { "" }
        )
    }
}

/// Predicts the effect of `changes` on the run in `r`.
pub fn predict(r: &Report, changes: &[Change]) -> Option<WhatIf> {
    let m = Model::fit(r)?;
    Some(WhatIf {
        changes: changes.to_vec(),
        baseline: Baseline {
            running_requests: crate::round::dec(m.running, 1),
            gen_throughput_tok_s: crate::round::dec(m.gen_tok_s, 1),
        },
        predicted: m.predict(changes),
        model: m.describe(),
    })
}
