//! The watched window as metrics: OpenMetrics text (what Prometheus asks for)
//! or the older Prometheus text format (what `curl` and `promtool` get).
//!
//! Gauges describe the judged window (means over its stats lines); counters
//! cover everything read since the watch began.

use std::fmt::Write;

use batchlens_core::report::Kind;
use batchlens_core::{whatif, Report};

use crate::follow::Reopens;
use crate::window::Counts;

/// The source label of the figures of all ranks / engines together.
pub const ALL_SOURCES: &str = "all";

/// Every verdict kind, so that each has a series (0 when not the verdict).
/// The match is exhaustive: a kind added to the core must be added here.
const KINDS: [Kind; 9] = [
    Kind::KvCacheCapacity,
    Kind::RunningRequestLimit,
    Kind::ClientUnderload,
    Kind::PrefillHeavy,
    Kind::KvRetraction,
    Kind::DecodeSaturated,
    Kind::InsufficientData,
    Kind::Stalled,
    Kind::RankImbalance,
];

fn _every_kind_is_listed(k: Kind) -> usize {
    match k {
        Kind::KvCacheCapacity => 0,
        Kind::RunningRequestLimit => 1,
        Kind::ClientUnderload => 2,
        Kind::PrefillHeavy => 3,
        Kind::KvRetraction => 4,
        Kind::DecodeSaturated => 5,
        Kind::InsufficientData => 6,
        Kind::Stalled => 7,
        Kind::RankImbalance => 8,
    }
}

/// What the watch knows besides the window's report.
pub struct State<'a> {
    /// Whether the log file is open and read without error.
    pub up: bool,
    pub report: Option<&'a Report>,
    pub counts: Counts,
    pub bytes_read: u64,
    pub reopens: Reopens,
    pub window_bytes: usize,
    /// Unix time of the latest judgement.
    pub judged_at: Option<f64>,
}

/// The metric names served (each family once).
#[cfg(test)]
const NAMES: &[&str] = &[
    "batchlens_up",
    "batchlens_info",
    "batchlens_gen_throughput_tokens_per_second",
    "batchlens_input_throughput_tokens_per_second",
    "batchlens_running_requests",
    "batchlens_queued_requests",
    "batchlens_kv_usage_ratio",
    "batchlens_verdict",
    "batchlens_verdict_confidence",
    "batchlens_predicted_gain_ratio",
    "batchlens_window_seconds",
    "batchlens_window_stat_lines",
    "batchlens_window_bytes",
    "batchlens_last_judgement_timestamp_seconds",
    "batchlens_lines_total",
    "batchlens_read_bytes_total",
    "batchlens_file_reopens_total",
];

struct Out {
    text: String,
    open_metrics: bool,
}

impl Out {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        // OpenMetrics names a counter's family without `_total`; the older format with it.
        let family = match (self.open_metrics, kind) {
            (true, "counter") => name.strip_suffix("_total").unwrap_or(name),
            _ => name,
        };
        let _ = writeln!(self.text, "# HELP {family} {help}");
        let _ = writeln!(self.text, "# TYPE {family} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], v: f64) {
        if !v.is_finite() {
            return;
        }
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (i, (k, val)) in labels.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{k}=\"{}\"", escape(val));
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {v}");
    }
}

/// A label value as the formats quote it: backslash, quote and newline escaped.
fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// The exposition; `open_metrics` picks the format (and ends it with `# EOF`).
pub fn render(st: &State<'_>, open_metrics: bool) -> String {
    let mut o = Out {
        text: String::new(),
        open_metrics,
    };
    o.family(
        "batchlens_up",
        "gauge",
        "1 while the watched log is open and read without error.",
    );
    o.sample("batchlens_up", &[], if st.up { 1.0 } else { 0.0 });
    if let Some(r) = st.report {
        window(&mut o, r);
    }
    o.family(
        "batchlens_window_bytes",
        "gauge",
        "Bytes of log lines held in the window.",
    );
    o.sample("batchlens_window_bytes", &[], st.window_bytes as f64);
    if let Some(t) = st.judged_at {
        o.family(
            "batchlens_last_judgement_timestamp_seconds",
            "gauge",
            "Unix time of the latest judgement of the window.",
        );
        o.sample("batchlens_last_judgement_timestamp_seconds", &[], t);
    }
    o.family(
        "batchlens_lines_total",
        "counter",
        "Lines read since the watch began, by kind (stats counts records).",
    );
    let c = &st.counts;
    for (kind, n) in [
        ("stats", c.stats),
        ("damaged_stats", c.damaged_stats),
        ("other", c.other),
        ("unrecognized", c.unrecognized),
    ] {
        o.sample("batchlens_lines_total", &[("kind", kind)], n as f64);
    }
    o.family(
        "batchlens_read_bytes_total",
        "counter",
        "Bytes of whole lines read since the watch began.",
    );
    o.sample("batchlens_read_bytes_total", &[], st.bytes_read as f64);
    o.family(
        "batchlens_file_reopens_total",
        "counter",
        "Times the log was rotated (renamed away) or cut short in place (copytruncate).",
    );
    o.sample(
        "batchlens_file_reopens_total",
        &[("reason", "rotation")],
        st.reopens.rotations as f64,
    );
    o.sample(
        "batchlens_file_reopens_total",
        &[("reason", "truncation")],
        st.reopens.truncations as f64,
    );
    if open_metrics {
        o.text.push_str("# EOF\n");
    }
    o.text
}

/// The window's figures: means over its stats lines, the verdict, the predictions.
fn window(o: &mut Out, r: &Report) {
    o.family(
        "batchlens_info",
        "gauge",
        "The engine whose log is read (always 1).",
    );
    o.sample("batchlens_info", &[("engine", &r.engine)], 1.0);
    o.family(
        "batchlens_window_seconds",
        "gauge",
        "Log time the judged window spans.",
    );
    o.sample("batchlens_window_seconds", &[], r.span_seconds);
    o.family(
        "batchlens_window_stat_lines",
        "gauge",
        "Stats lines in the judged window.",
    );
    o.sample(
        "batchlens_window_stat_lines",
        &[],
        r.input.stat_lines as f64,
    );

    let s = &r.summary;
    let mean = |d: &Option<batchlens_core::report::Distribution>| d.map(|d| d.mean);
    // Ranks' own series only when there are several: one source is `all` itself.
    let ranks: Vec<_> = if r.sources.len() > 1 {
        r.sources.iter().collect()
    } else {
        Vec::new()
    };
    type PerSource = fn(&batchlens_core::report::SourceSummary) -> Option<f64>;
    let gauges: [(&str, &str, Option<f64>, Option<PerSource>); 5] = [
        (
            "batchlens_gen_throughput_tokens_per_second",
            "Generation throughput, mean over the window's stats lines (all: ranks summed).",
            mean(&s.gen_throughput_tok_s),
            Some(|x| x.gen_throughput_tok_s_mean),
        ),
        (
            "batchlens_input_throughput_tokens_per_second",
            "Prompt (prefill) throughput, mean over the window's stats lines (ranks summed).",
            mean(&s.input_throughput_tok_s),
            None,
        ),
        (
            "batchlens_running_requests",
            "Running requests, mean over the window's stats lines (all: ranks summed).",
            mean(&s.running_requests),
            Some(|x| x.running_requests_mean),
        ),
        (
            "batchlens_queued_requests",
            "Waiting (queued) requests, mean over the window's stats lines (all: ranks summed).",
            mean(&s.queued_requests),
            Some(|x| x.queued_requests_mean),
        ),
        (
            "batchlens_kv_usage_ratio",
            "KV cache usage 0..1, mean over the window's stats lines (all: mean over ranks).",
            mean(&s.kv_usage),
            Some(|x| x.kv_usage_mean),
        ),
    ];
    for (name, help, all, per) in gauges {
        o.family(name, "gauge", help);
        if let Some(v) = all {
            o.sample(name, &[("source", ALL_SOURCES)], v);
        }
        if let Some(per) = per {
            for src in &ranks {
                if let Some(v) = per(src) {
                    o.sample(name, &[("source", &src.source)], v);
                }
            }
        }
    }

    let Some(d) = &r.diagnosis else {
        return;
    };
    o.family(
        "batchlens_verdict",
        "gauge",
        "1 for the kind of the current verdict (what limits throughput), 0 for the others.",
    );
    for k in KINDS {
        let v = if k == d.primary.kind { 1.0 } else { 0.0 };
        o.sample("batchlens_verdict", &[("kind", k.as_str())], v);
    }
    o.family(
        "batchlens_verdict_confidence",
        "gauge",
        "Confidence 0..1 of the current verdict.",
    );
    o.sample("batchlens_verdict_confidence", &[], d.primary.confidence);
    let gains = gains(r);
    if !gains.is_empty() {
        o.family(
            "batchlens_predicted_gain_ratio",
            "gauge",
            "Predicted throughput change of an action (0.25 = 25 % more), by lever.",
        );
        for (lever, g) in gains {
            o.sample("batchlens_predicted_gain_ratio", &[("lever", lever)], g);
        }
    }
}

/// Each action with a prediction, once (from the strongest finding that has
/// it): its predicted throughput over the fitted steady state's, less one.
pub fn gains(r: &Report) -> Vec<(&str, f64)> {
    let Some(d) = &r.diagnosis else {
        return Vec::new();
    };
    let Some(base) = whatif::predict(r, &[])
        .map(|w| w.baseline.gen_throughput_tok_s)
        .filter(|b| *b > 0.0)
    else {
        return Vec::new();
    };
    let mut out: Vec<(&str, f64)> = Vec::new();
    for a in d.findings.iter().flat_map(|f| &f.actions) {
        if let Some(p) = &a.predicted {
            if !out.iter().any(|(id, _)| *id == a.id) {
                out.push((&a.id, p.gen_throughput_tok_s / base - 1.0));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_report() -> Report {
        let log = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../examples/sglang-kv-bound.log"),
        )
        .expect("example log");
        batchlens_core::analyze(&log, Default::default())
    }

    #[test]
    fn both_formats_name_counters_as_each_wants_and_list_every_kind() {
        let r = sample_report();
        let st = State {
            up: true,
            report: Some(&r),
            counts: Counts::default(),
            bytes_read: 10,
            reopens: Reopens::default(),
            window_bytes: 10,
            judged_at: Some(1.0),
        };
        let om = render(&st, true);
        let prom = render(&st, false);
        assert!(om.ends_with("# EOF\n"));
        assert!(!prom.contains("# EOF"));
        assert!(om.contains("# TYPE batchlens_lines counter\n"));
        assert!(prom.contains("# TYPE batchlens_lines_total counter\n"));
        let verdicts = om
            .lines()
            .filter(|l| l.starts_with("batchlens_verdict{"))
            .count();
        assert_eq!(verdicts, KINDS.len());
        let primary = r
            .diagnosis
            .as_ref()
            .expect("a verdict")
            .primary
            .kind
            .as_str();
        assert!(om.contains(&format!("batchlens_verdict{{kind=\"{primary}\"}} 1\n")));
        for name in NAMES {
            assert!(
                om.contains(&format!(" {name} "))
                    || om.contains(&format!(" {}", name.trim_end_matches("_total"))),
                "{name} is served"
            );
        }
    }

    #[test]
    fn label_values_from_the_log_are_escaped() {
        assert_eq!(escape("DP\"1\\\n"), "DP\\\"1\\\\\\n");
    }
}
