//! The client-versus-server reconciliation in sentences.

use crate::report::{Part, Reconciliation};

/// Human names of the parts.
pub fn cause_name(cause: &str) -> &'static str {
    match cause {
        "idle" => "idle time (the server waiting for your client)",
        "warm_up_drain" => {
            "warm-up and drain (the batch fills at the start and empties at the end)"
        }
        "retraction" => "retractions/preemptions (generated tokens thrown away)",
        "prefill" => "prefill before the first decode step, less the first tokens prefill produces",
        _ => "other",
    }
}

/// The reconciliation in plain sentences, for the text and Markdown reports.
/// The first line is the headline; the rest are the breakdown and the advice.
pub fn explain(r: &Reconciliation) -> Vec<String> {
    let mut out = Vec::new();
    let gap = r.server_gen_tok_s - r.client_tok_s;
    out.push(format!(
        "The server generated ~{:.0} tok/s while busy at full batch; your client measured {:.0} tok/s over its whole {:.0} s window{}.",
        r.server_gen_tok_s,
        r.client_tok_s,
        r.client_window_s,
        if gap > 0.0 {
            format!(" ({:.0}% less)", r.gap_fraction * 100.0)
        } else {
            format!(" ({:.0}% more)", -r.gap_fraction * 100.0)
        }
    ));
    if gap.abs() < 0.005 * r.server_gen_tok_s {
        out.push("The two agree: the client got what the server generated.".into());
    } else {
        out.push(format!("Where the {:.0} tok/s gap goes:", gap));
        let mut parts: Vec<&Part> = r.parts.iter().collect();
        parts.sort_by(|a, b| b.tok_s.total_cmp(&a.tok_s));
        for p in parts {
            let lead = if p.cause == "idle" && p.tok_s > 0.0 {
                format!(
                    "{:.0} tok/s of the gap is the server waiting for your client (idle {:.0}% of the time)",
                    p.tok_s,
                    100.0 * r.server_idle_s / r.client_window_s.max(1e-9)
                )
            } else {
                format!("{:.0} tok/s: {}", p.tok_s, cause_name(&p.cause))
            };
            out.push(format!("- {lead}. {}", p.evidence));
        }
        out.push(format!(
            "- {:.0} tok/s unexplained ({:.1}% of the server rate).",
            r.unexplained_tok_s,
            r.unexplained_fraction * 100.0
        ));
    }
    out.push(r.advice.clone());
    out.extend(r.notes.iter().cloned());
    out
}
