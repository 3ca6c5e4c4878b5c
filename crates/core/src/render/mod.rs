//! Reports as text for a terminal and as Markdown for an issue or ticket.

pub mod charts;
mod compare;
mod markdown;
mod problem;
mod reconcile;
pub mod roofline;
mod setting;
mod text;
mod what_if;

pub(crate) use compare::explanation as compare_explanation;
pub use compare::{compare_markdown, compare_text};
pub use markdown::markdown;
pub use problem::{input_problem, Front};
pub use setting::setting_flag;
pub use text::text;
pub use what_if::{what_if_sentence, what_if_text};

pub use crate::text::num::{count, duration, num, pct};

use crate::report::{Distribution, Report};

/// The stats lines read and the span the report covers: with several server
/// runs, which run is judged (its figures are the report's).
pub(crate) fn scope(r: &Report) -> String {
    let stats = count(r.input.stat_lines as f64, "stats line", "stats lines");
    match r.runs.iter().find(|run| run.analyzed) {
        Some(run) => format!(
            "{stats} in {} server runs{}; run {} judged: {} over {}",
            num((r.events.restarts + 1) as f64),
            match r.runs_not_listed {
                0 => String::new(),
                n => format!(" ({} of the earliest not listed)", num(n as f64)),
            },
            run.run,
            count(run.stat_lines as f64, "stats line", "stats lines"),
            duration(r.span_seconds)
        ),
        None => format!("{stats} over {}", duration(r.span_seconds)),
    }
}

/// The sentence that says a file shrank while it was read, if one did.
pub(crate) fn truncation(r: &Report) -> Option<String> {
    let t = r.input.truncated_while_reading.as_ref()?;
    Some(format!(
        "'{}' shrank while it was read (truncated or rotated): this report covers the {} bytes read of the {} it held when opened.",
        t.file,
        num(t.bytes_read as f64),
        num(t.bytes_at_open as f64)
    ))
}

/// Columns of the server-runs table.
pub(crate) const RUN_COLUMNS: [&str; 7] = [
    "run",
    "lines",
    "span",
    "gen tok/s",
    "running",
    "queued",
    "KV pool",
];

/// One row per server run (none for a single run); the judged run is starred.
pub(crate) fn run_rows(r: &Report) -> Vec<[String; 7]> {
    let opt = |v: Option<f64>| v.map_or_else(|| "–".to_string(), num);
    r.runs
        .iter()
        .map(|run| {
            [
                format!("{}{}", run.run, if run.analyzed { " *" } else { "" }),
                format!(
                    "{}–{}",
                    num(run.first_line as f64),
                    num(run.last_line as f64)
                ),
                duration(run.span_seconds),
                opt(run.gen_throughput_tok_s_mean),
                opt(run.running_requests_mean),
                opt(run.queued_requests_mean),
                opt(run.config.kv_capacity_tokens.map(|v| v as f64)),
            ]
        })
        .collect()
}

/// Rows of the summary table: label, distribution, formatter.
type Fmt = fn(f64) -> String;

pub(crate) fn summary_rows(r: &Report) -> Vec<(&'static str, Distribution, Fmt)> {
    let s = &r.summary;
    let mut rows: Vec<(&'static str, Distribution, Fmt)> = Vec::new();
    if let Some(d) = s.gen_throughput_tok_s {
        rows.push(("generation tok/s", d, num));
    }
    if let Some(d) = s.input_throughput_tok_s {
        rows.push(("prompt tok/s", d, num));
    }
    if let Some(d) = s.running_requests {
        rows.push(("running requests", d, num));
    }
    if let Some(d) = s.queued_requests {
        rows.push(("queued requests", d, num));
    }
    if let Some(d) = s.kv_usage {
        rows.push(("KV cache usage", d, pct));
    }
    rows
}

/// ` · prefill N% of the time`, where the log times its iterations (else empty).
fn prefill_time(r: &Report) -> String {
    r.summary
        .prefill_time_share
        .map(|s| format!(" · prefill {} of the time", pct(s)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{count, num};

    #[test]
    fn numbers_read_as_counts_or_measurements() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(0.004), "0.00");
        assert_eq!(num(0.7), "0.70");
        assert_eq!(num(56.0), "56");
        assert_eq!(num(12.5), "12.5");
        assert_eq!(num(116171.0), "116,171");
        assert_eq!(num(f64::NAN), "n/a");
    }

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(count(1.0, "stats line", "stats lines"), "1 stats line");
        assert_eq!(count(0.0, "stats line", "stats lines"), "0 stats lines");
        assert_eq!(count(2048.0, "line", "lines"), "2,048 lines");
        // A mean that shows as 1 reads as one.
        assert_eq!(count(1.004, "request", "requests"), "1 request");
        assert_eq!(count(1.02, "request", "requests"), "1.02 requests");
        assert_eq!(count(1.5, "request", "requests"), "1.50 requests");
    }
}
