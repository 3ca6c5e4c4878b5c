//! The `--what-if` prediction in words, for every front end.

use crate::report::{Report, WhatIf};
use crate::text::num::num;

/// The `--what-if` prediction in words (the JSON carries it as `what_if`), under
/// `heading` (`## ` in Markdown); empty without a prediction.
pub fn what_if_text(r: &Report, heading: &str) -> String {
    let Some(w) = &r.what_if else {
        return String::new();
    };
    let changes: Vec<String> = w
        .changes
        .iter()
        .map(|c| format!("{}={}", c.parameter, c.value))
        .collect();
    let mut s = format!(
        "\n{heading}What if {}\n  {}\n  model: {}\n",
        changes.join(", "),
        what_if_sentence(w),
        w.model
    );
    for note in &w.notes {
        s.push_str(&format!("  note: {note}\n"));
    }
    s
}

/// The prediction in one sentence: running requests and throughput with their ranges
/// against today's, the queue left, and what bounds admission after the change.
pub fn what_if_sentence(w: &WhatIf) -> String {
    let n = num;
    let p = &w.predicted;
    let mut s = format!(
        "~{} running ({}–{}) and ~{} tok/s ({}–{}) instead of {} and {}",
        n(p.running_requests),
        n(p.running_low),
        n(p.running_high),
        n(p.gen_throughput_tok_s),
        n(p.low),
        n(p.high),
        n(w.baseline.running_requests),
        n(w.baseline.gen_throughput_tok_s),
    );
    if let Some(q) = p.queued_requests {
        s.push_str(&format!("; ~{} waiting", n(q)));
    }
    s.push_str(&format!("; admission bound by {}", p.bound_by));
    s
}
