//! The counterfactuals the verdict follows: the steady throughput the fitted model
//! predicts with each lever relaxed (twice the KV pool, twice the running cap, twice the
//! client's requests in flight, half of prefill's cost per prompt token).

use super::whatif::Model;
use crate::report::{Change, Prediction};

/// A lever an operator can pull.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lever {
    KvPool,
    RunningCap,
    Client,
    Prefill,
    /// The cap and the client's requests together: a client that keeps exactly as many in
    /// flight as the cap admits gains from neither alone. Reported, and advised beside a
    /// verdict, but never the verdict: one change at a time names the bottleneck.
    CapAndClient,
}

impl Lever {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Lever::KvPool => "kv_pool",
            Lever::RunningCap => "running_cap",
            Lever::Client => "client_concurrency",
            Lever::Prefill => "prefill_cost",
            Lever::CapAndClient => "running_cap_and_client",
        }
    }
}

/// One lever relaxed: the change asked of the model, its prediction and the gain.
#[derive(Debug, Clone)]
pub struct LeverGain {
    pub lever: Lever,
    pub changes: Vec<Change>,
    pub predicted: Prediction,
    /// Predicted steady throughput over today's, minus one (0.4 = +40 %).
    pub gain: f64,
}

/// Each lever relaxed, strongest first. `cap` is the running cap over all ranks (stated or
/// seen); without one the cap is no lever.
pub fn lever_gains(m: &Model, cap: Option<f64>) -> Vec<LeverGain> {
    let base = m.predict(&[]).gen_throughput_tok_s;
    let change = |parameter: &str, value: f64| Change {
        parameter: parameter.to_string(),
        value,
    };
    let mut asks = vec![
        (Lever::KvPool, vec![change("kv_scale", 2.0)]),
        // Twice what the client keeps in flight as the log shows it (running and waiting),
        // not a count rounded to whole requests: a closed loop of one keeps a little under
        // one running (its request is between turns now and then), and two keep twice that.
        (Lever::Client, vec![change("client_scale", 2.0)]),
        (Lever::Prefill, vec![change("prefill_cost_scale", 0.5)]),
    ];
    if let Some(c) = cap.filter(|c| *c > 0.0) {
        let raised = change("max_running", (2.0 * c / m.ranks.max(1.0)).round());
        asks.push((Lever::RunningCap, vec![raised.clone()]));
        // Nothing waits with the batch at the cap: the client sends just what it admits.
        if m.queued < 1.0 && m.running >= 0.9 * c {
            asks.push((
                Lever::CapAndClient,
                vec![raised, change("client_scale", 2.0)],
            ));
        }
    }
    let mut out: Vec<LeverGain> = asks
        .into_iter()
        .map(|(lever, changes)| {
            let predicted = m.predict(&changes);
            let gain = if base > 0.0 {
                predicted.gen_throughput_tok_s / base - 1.0
            } else {
                0.0
            };
            LeverGain {
                lever,
                changes,
                predicted,
                gain: if gain.is_finite() { gain } else { 0.0 },
            }
        })
        .collect();
    out.sort_by(|a, b| b.gain.total_cmp(&a.gain));
    out
}
