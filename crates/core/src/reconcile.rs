//! Client-side versus server-side throughput.

use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Reconciliation {
    pub server_gen_tok_s: f64,
    pub client_tok_s: f64,
    pub gap_fraction: f64,
    pub parts: Vec<Part>,
    pub unexplained_fraction: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Part {
    pub cause: String,
    pub tok_s: f64,
    pub evidence: String,
}
