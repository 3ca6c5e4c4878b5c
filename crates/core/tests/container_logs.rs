//! Logs as container runtimes and collectors keep them read like the plain
//! logs they hold: lines wrapped in JSON records (Docker's `json-file` driver,
//! `journalctl -o json`, a JSON formatter) and lines behind a runtime's or
//! collector's prefix (Kubernetes, docker compose, journald, `docker logs -t`).

mod common;

use batchlens_core::{Options, Report};

/// A JSON string literal of `s` (quotes, backslashes and control bytes escaped).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Each line as `journalctl -o json` exports it.
fn journald_json(log: &str) -> String {
    log.lines()
        .enumerate()
        .map(|(i, l)| {
            format!(
                "{{\"__CURSOR\":\"s={i}\",\"__REALTIME_TIMESTAMP\":\"1708771{i:09}\",\"_PID\":\"7\",\"MESSAGE\":{}}}\n",
                quoted(l)
            )
        })
        .collect()
}

fn examples() -> Vec<(String, String)> {
    common::example_logs()
        .into_iter()
        .map(|(name, bytes)| (name, String::from_utf8(bytes).unwrap()))
        .collect()
}

/// What a reader of the report would compare: the figures and the verdict.
fn same_reading(name: &str, plain: &Report, wrapped: &Report) {
    let (p, w) = (&plain.input, &wrapped.input);
    assert_eq!(wrapped.engine, plain.engine, "{name}");
    assert_eq!(w.lines, p.lines, "{name}");
    assert_eq!(w.json_records, p.lines, "{name}: every line is a record");
    assert_eq!(
        (
            w.stat_lines,
            w.damaged_stat_lines,
            w.other_lines,
            w.unrecognized_lines
        ),
        (
            p.stat_lines,
            p.damaged_stat_lines,
            p.other_lines,
            p.unrecognized_lines
        ),
        "{name}"
    );
    assert_eq!(w.stat_lines_by_kind, p.stat_lines_by_kind, "{name}");
    assert_eq!(wrapped.span_seconds, plain.span_seconds, "{name}");
    assert_eq!(wrapped.summary, plain.summary, "{name}");
    assert_eq!(wrapped.config, plain.config, "{name}");
    let kind = |r: &Report| r.diagnosis.as_ref().map(|d| d.primary.kind);
    assert_eq!(kind(wrapped), kind(plain), "{name}");
}

#[test]
fn docker_json_file_logs_read_like_the_plain_log() {
    for (name, log) in examples() {
        let plain = common::analyze(log.as_bytes());
        assert!(plain.input.stat_lines > 0, "{name}");
        assert_eq!(plain.input.json_records, 0, "{name}");
        let wrapped = common::analyze(common::docker_json(&log).as_bytes());
        same_reading(&name, &plain, &wrapped);
        // The reports say where the lines came from; a plain log's do not.
        let lines = wrapped.input.lines;
        let noted = |r: &Report| {
            (
                batchlens_core::render::text(r, false).contains(&format!(
                    "{} read from JSON records",
                    batchlens_core::render::count(lines as f64, "line", "lines")
                )),
                batchlens_core::render::markdown(r).contains(&format!(
                    "Lines read from JSON records (Docker, journald, a collector): {lines}."
                )),
            )
        };
        assert_eq!(noted(&wrapped), (true, true), "{name}");
        assert_eq!(noted(&plain), (false, false), "{name}");
    }
}

#[test]
fn journald_json_exports_read_like_the_plain_log() {
    for (name, log) in examples() {
        let plain = common::analyze(log.as_bytes());
        let wrapped = common::analyze(journald_json(&log).as_bytes());
        same_reading(&name, &plain, &wrapped);
    }
}

#[test]
fn json_records_read_the_same_ahead_and_line_by_line_in_any_chunking() {
    let (_, log) = examples().into_iter().next().unwrap();
    // Plain and wrapped lines mixed, as when a collector starts part-way.
    let half = log.len() / 2;
    let cut = log[..half].rfind('\n').unwrap() + 1;
    let mixed = format!("{}{}", &log[..cut], common::docker_json(&log[cut..]));
    let bytes = mixed.as_bytes();
    let want =
        serde_json::to_string(&common::analyze_line_by_line(bytes, Options::default())).unwrap();
    for chunk in [bytes.len(), 4096, 777] {
        let mut a = batchlens_core::Analyzer::new(Options::default());
        for c in bytes.chunks(chunk) {
            a.feed(c);
        }
        let got = a.finish();
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            want,
            "chunks of {chunk}"
        );
        assert!(got.input.json_records > 0);
    }
}

/// vLLM logging through a JSON formatter: the time as `asctime`, the message
/// without vLLM's prefix (`INFO 02-24 10:01:10 [loggers.py:271] `).
fn vllm_json_formatter(log: &str) -> String {
    log.lines()
        .map(|l| {
            let record = l
                .find(" [")
                .zip(l.find("] "))
                .filter(|(open, close)| open < close && *open >= 14)
                .map(|(open, close)| {
                    let (date, time) = (&l[open - 14..open - 9], &l[open - 8..open]);
                    format!(
                        "{{\"asctime\":\"2026-{date} {time},000\",\"levelname\":\"INFO\",\"message\":{}}}",
                        quoted(&l[close + 2..])
                    )
                });
            record.unwrap_or_else(|| format!("{{\"message\":{}}}", quoted(l))) + "\n"
        })
        .collect()
}

#[test]
fn vllm_through_a_json_formatter_reads_its_stats_lines() {
    let log = String::from_utf8(common::fixture("../../examples/vllm-kv-bound.log")).unwrap();
    let plain = common::analyze(log.as_bytes());
    let wrapped_log = vllm_json_formatter(&log);
    assert!(wrapped_log.contains("\"message\":\"Engine 000: Avg prompt throughput:"));
    let wrapped = common::analyze(wrapped_log.as_bytes());
    assert_eq!(wrapped.engine, "vllm");
    assert_eq!(wrapped.input.stat_lines, plain.input.stat_lines);
    assert_eq!(wrapped.input.damaged_stat_lines, 0);
    // The formatter's time stands in for vLLM's prefix (with the year it lacks).
    assert_eq!(wrapped.span_seconds, plain.span_seconds);
    assert_eq!(
        wrapped.summary.gen_throughput_tok_s,
        plain.summary.gen_throughput_tok_s
    );
    assert_eq!(wrapped.summary.retractions, plain.summary.retractions);
    let kind = |r: &Report| r.diagnosis.as_ref().map(|d| d.primary.kind);
    assert_eq!(kind(&wrapped), kind(&plain));
}

/// Prefixes runtimes and collectors put before each line of a plain log.
const PREFIXES: [&str; 4] = [
    // Kubernetes (CRI) container log files.
    "2026-02-24T18:00:00.123456789Z stderr F ",
    // docker compose.
    "server-1  | ",
    // journald as text (no year).
    "Feb 24 18:00:00 gpu-node python3[2831]: ",
    // `docker logs --timestamps`.
    "2026-02-24T18:00:00.123456789Z ",
];

#[test]
fn lines_behind_runtime_and_collector_prefixes_read_like_the_plain_log() {
    for (name, log) in examples() {
        let plain = common::analyze(log.as_bytes());
        for prefix in PREFIXES {
            let prefixed: String = log.lines().map(|l| format!("{prefix}{l}\n")).collect();
            let wrapped = common::analyze(prefixed.as_bytes());
            let what = format!("{name} behind {prefix:?}");
            assert_eq!(wrapped.input.json_records, 0, "{what}");
            assert_eq!(wrapped.input.stat_lines, plain.input.stat_lines, "{what}");
            assert_eq!(wrapped.input.damaged_stat_lines, 0, "{what}");
            assert_eq!(wrapped.span_seconds, plain.span_seconds, "{what}");
            assert_eq!(wrapped.summary, plain.summary, "{what}");
            let kind = |r: &Report| r.diagnosis.as_ref().map(|d| d.primary.kind);
            assert_eq!(kind(&wrapped), kind(&plain), "{what}");
        }
    }
}
