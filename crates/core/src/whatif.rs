//! Predict the effect of a configuration change from the log alone.

use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WhatIf {
    pub changes: Vec<Change>,
    pub baseline: Baseline,
    pub predicted: Prediction,
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
}
