//! Part of the JSON contract (see the module above): serde types only.

use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Reconciliation {
    /// Steady server-side generation rate while busy, tokens/s.
    pub server_gen_tok_s: f64,
    /// The client's output tokens/s over its whole window.
    pub client_tok_s: f64,
    /// (server − client) ÷ server.
    pub gap_fraction: f64,
    /// Named causes of the gap, in tokens/s (positive widens the gap).
    pub parts: Vec<Part>,
    /// Unexplained tokens/s ÷ server rate (signed).
    pub unexplained_fraction: f64,
    /// server − client − Σ parts, tokens/s.
    pub unexplained_tok_s: f64,
    /// Generated tokens ÷ busy seconds over the window (includes warm-up, drain and stalls).
    pub sustained_gen_tok_s: f64,
    /// The client's window, seconds.
    pub client_window_s: f64,
    /// Whether the window was assumed (the log's span) because the client gave no duration.
    pub window_assumed: bool,
    /// Seconds of the log the window was matched to (start, from the first stats line).
    pub window_start_s: f64,
    pub server_busy_s: f64,
    pub server_idle_s: f64,
    /// Tokens the server's stats lines account for inside the window.
    pub server_generated_tokens: f64,
    /// Output tokens the client received (client rate × window).
    pub client_output_tokens: f64,
    /// Which figure to believe for what, in a sentence.
    pub advice: String,
    /// Caveats about the inputs (assumed window, missing figures).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Part {
    /// `idle`, `warm_up_drain`, `retraction`, `prefill`.
    pub cause: String,
    pub tok_s: f64,
    pub evidence: String,
}
