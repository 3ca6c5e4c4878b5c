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

/// `log` as Docker's json-file driver writes it, a line longer than 16 KiB cut
/// into records of 16 KiB whose text has no newline; or as Kubernetes' CRI log
/// files hold it, the pieces of a long line tagged `P` and its end `F`.
fn cut_into_pieces(log: &str, docker: bool) -> String {
    let mut out = String::new();
    for l in log.lines() {
        let mut text = format!("{l}\n");
        while text.len() > batchlens_core::PIECE_BYTES {
            let rest = text.split_off(batchlens_core::PIECE_BYTES);
            out.push_str(&match docker {
                true => common::docker_json_record(&text),
                false => cri_line("stderr", 'P', &text),
            });
            text = rest;
        }
        out.push_str(&match docker {
            true => common::docker_json_record(&text),
            false => cri_line("stderr", 'F', text.trim_end_matches('\n')),
        });
    }
    out
}

/// One line of a CRI log file: the runtime's time, the stream, the tag (`P` a
/// piece of a cut line, `F` its end or a whole line) and `text`.
fn cri_line(stream: &str, tag: char, text: &str) -> String {
    format!("2026-02-24T18:00:00.123456789Z {stream} {tag} {text}\n")
}

/// The log with its SGLang `server_args` line (or, lacking one, its first line)
/// grown past 40 KiB, as a server with many options prints it; the fields the
/// report reads stay where they were, some now past a cut.
fn with_a_long_line(log: &str) -> String {
    let at = log
        .lines()
        .position(|l| l.contains("server_args="))
        .unwrap_or(0);
    let filler: String = (0..2_500)
        .map(|i| format!("extra_option_{i}=None, "))
        .collect();
    log.lines()
        .enumerate()
        .map(|(i, l)| match (i == at, l.find("ServerArgs(")) {
            (true, Some(p)) => format!("{}{filler}{}\n", &l[..p + 11], &l[p + 11..]),
            (true, None) => format!("{l} {filler}\n"),
            _ => format!("{l}\n"),
        })
        .collect()
}

#[test]
fn a_line_docker_or_kubernetes_cut_into_pieces_is_joined_back() {
    for ((name, log), docker) in examples()
        .into_iter()
        .flat_map(|e| [(e.clone(), true), (e, false)])
    {
        let name = format!("{name} ({})", if docker { "docker" } else { "cri" });
        let log = with_a_long_line(&log);
        let cut = cut_into_pieces(&log, docker);
        let pieces = cut.lines().count() - log.lines().count();
        assert!(pieces >= 2, "{name}: {pieces}");
        let plain = common::analyze(log.as_bytes());
        let wrapped = common::analyze(cut.as_bytes());
        let (p, w) = (&plain.input, &wrapped.input);
        assert_eq!(w.joined_pieces, pieces as u64, "{name}");
        assert_eq!(w.lines, p.lines + pieces as u64, "{name}");
        assert_eq!(w.accounted_lines(), w.lines, "{name}");
        assert_eq!(
            (
                w.stat_lines,
                w.other_lines,
                w.unrecognized_lines,
                w.overlong_lines
            ),
            (
                p.stat_lines,
                p.other_lines,
                p.unrecognized_lines,
                p.overlong_lines
            ),
            "{name}"
        );
        assert_eq!(wrapped.summary, plain.summary, "{name}");
        let settings = |r: &Report| {
            let mut c = r.config.clone();
            c.lines.clear();
            c
        };
        assert_eq!(settings(&wrapped), settings(&plain), "{name}");
        let kind = |r: &Report| r.diagnosis.as_ref().map(|d| d.primary.kind);
        assert_eq!(kind(&wrapped), kind(&plain), "{name}");
        assert!(
            batchlens_core::render::text(&wrapped, false).contains(&format!(
                "{} of lines over 16 KiB joined back",
                batchlens_core::render::count(pieces as f64, "piece", "pieces")
            )),
            "{name}"
        );
        // Read ahead or line by line, in any chunking: the same report.
        let bytes = cut.as_bytes();
        let want = serde_json::to_string(&common::analyze_line_by_line(bytes, Options::default()))
            .unwrap();
        for chunk in [bytes.len(), 4096, 777] {
            let mut a = batchlens_core::Analyzer::new(Options::default());
            for c in bytes.chunks(chunk) {
                a.feed(c);
            }
            assert_eq!(
                serde_json::to_string(&a.finish()).unwrap(),
                want,
                "{name}: chunks of {chunk}"
            );
        }
    }
}

#[test]
fn a_cut_line_is_joined_across_the_other_stream_and_read_when_its_end_never_comes() {
    let long = format!(
        "[2026-02-24 10:55:31] server_args=ServerArgs(mem_fraction_static=0.85, {}, max_running_requests=48)",
        "x".repeat(20_000)
    );
    let (head, tail) = long.split_at(batchlens_core::PIECE_BYTES);
    let first = common::docker_json_record(head);
    let last = common::docker_json_record(&format!("{tail}\n"));
    let access_line =
        r#"[2026-02-24 10:55:31] INFO:     127.0.0.1:1 - "POST /generate HTTP/1.1" 200 OK"#;
    let access = common::docker_json_record_in("stdout", &format!("{access_line}\n"));
    let stats = "[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, #token: 81290, token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 94";
    // (log, whole line read, records joined): the other stream's line between
    // the pieces; the end lost before a plain line; the log ending on a piece.
    let (cri_first, cri_last) = (cri_line("stderr", 'P', head), cri_line("stderr", 'F', tail));
    let cri_access = cri_line("stdout", 'F', access_line);
    for (log, whole, joined) in [
        (format!("{first}{access}{last}{stats}\n"), true, 1),
        (format!("{first}{stats}\n"), false, 0),
        (format!("{first}{access}"), false, 0),
        (first.clone(), false, 0),
        (
            format!("{cri_first}{cri_access}{cri_last}{stats}\n"),
            true,
            1,
        ),
        (format!("{cri_first}{stats}\n"), false, 0),
        (format!("{cri_first}{cri_access}"), false, 0),
        (format!("{cri_first}{first}"), false, 0),
        (cri_first.clone(), false, 0),
    ] {
        for r in [
            common::analyze(log.as_bytes()),
            common::analyze_line_by_line(log.as_bytes(), Options::default()),
        ] {
            let i = &r.input;
            assert_eq!(r.config.mem_fraction_static, Some(0.85), "{log:.60}");
            let cap = r.config.max_running_requests;
            assert_eq!(cap, whole.then_some(48), "{log:.60}");
            assert_eq!(i.joined_pieces, joined);
            assert_eq!(i.accounted_lines(), i.lines);
            assert_eq!(i.stat_lines, u64::from(log.contains("Decode")));
            let access_lines = i.other_lines_by_kind.get("access_log").copied();
            assert_eq!(access_lines, log.contains("POST").then_some(1));
        }
    }
}

#[test]
fn a_cut_line_joined_past_the_longest_line_kept_is_cut_and_counted() {
    let long = format!(
        "[2026-02-24 10:55:31] server_args=ServerArgs(mem_fraction_static=0.85, {})",
        "x".repeat(100_000)
    );
    for docker in [true, false] {
        let log = cut_into_pieces(&format!("{long}\n"), docker);
        let r = common::analyze(log.as_bytes());
        let i = &r.input;
        assert_eq!(i.lines, 7, "{docker}");
        assert_eq!((i.joined_pieces, i.overlong_lines), (6, 1), "{docker}");
        assert_eq!(i.accounted_lines(), i.lines);
        assert_eq!(r.config.mem_fraction_static, Some(0.85));
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
