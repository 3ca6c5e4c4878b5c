//! Part of the JSON contract (see the module above): serde types only.

use serde::Serialize;

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
