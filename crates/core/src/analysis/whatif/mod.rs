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

mod least_squares;
mod model;
mod prefill_share;
mod step_time;

use crate::model::profile::Profile;
use crate::report::{Baseline, Change, RestartCheck, WhatIf};

use crate::report::Report;
pub use model::Model;

/// Parameters a change can name.
///
/// - `kv_tokens`: KV pool size in tokens (SGLang `max_total_num_tokens`, vLLM KV cache size).
/// - `kv_scale`: multiply the KV pool by this factor.
/// - `kv_dtype_fp8`: 1 = store the KV cache in FP8 (half the bytes per token of a 16-bit cache).
/// - `mem_fraction_static` (SGLang), `gpu_memory_utilization` (vLLM): the memory flag's new
///   value, converted to a pool size when the startup lines give enough to do so.
/// - `max_running`: SGLang `--max-running-requests`, vLLM `--max-num-seqs`.
/// - `client_concurrency`: requests the client keeps in flight.
/// - `client_scale`: multiply what the client sends (its requests in flight, or for a
///   client that sends at its own pace, its rate) by this factor.
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
    "client_scale",
    "schedule_conservativeness",
    "prefill_cost_scale",
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
        "kv_tokens"
            | "kv_scale"
            | "max_running"
            | "client_concurrency"
            | "client_scale"
            | "prefill_cost_scale"
    );
    if positive && value <= 0.0 {
        return Err(format!("'{k}' must be positive in '{s}'"));
    }
    // A switch: the cache is in FP8 or it is not.
    if k == "kv_dtype_fp8" && value != 0.0 && value != 1.0 {
        return Err(format!("'{k}' is 0 or 1 in '{s}'"));
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

/// Whether a bucket's rates all cover time the log accounts for. A rate printed over the
/// interval since the previous line is a rate of stepping only when that interval is
/// known: a source's first line rates the time since the server started, and a line after
/// a silence rates the silence too, so their figures are diluted by idle time the fits
/// would read as work.
pub(super) fn rated_over_known_time(p: &crate::report::Point) -> bool {
    p.untimed == 0
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

/// Checks the model on a restart: fitted on `before` (the run before the judged
/// one), asked about the settings `after` runs with. `None` when no capacity
/// setting the model knows changed, or when `before` cannot be fitted.
pub fn check_restart(before: &Report, after: &Report, p: &Profile) -> Option<RestartCheck> {
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
    let w = predict(before, p, &changes)?;
    let measured = crate::analysis::window::steady(after);
    Some(RestartCheck {
        fitted_on_run: judged.run - 1,
        checked_run: judged.run,
        changes,
        predicted: w.predicted,
        measured_running_requests: measured.running.map(crate::text::round::sig),
        measured_gen_tok_s: measured.gen_tok_s.map(crate::text::round::sig),
    })
}

/// Predicts the effect of `changes` on the run in `r`.
pub fn predict(r: &Report, p: &Profile, changes: &[Change]) -> Option<WhatIf> {
    let m = Model::fit(r, p)?;
    let (predicted, notes) = m.predict_with_notes(changes);
    Some(WhatIf {
        changes: changes.to_vec(),
        baseline: Baseline {
            running_requests: crate::text::round::dec(m.running, 1),
            gen_throughput_tok_s: crate::text::round::dec(m.gen_tok_s, 1),
        },
        predicted,
        model: m.describe(),
        notes,
    })
}
