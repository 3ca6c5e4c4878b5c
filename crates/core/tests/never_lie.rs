//! Values a log cannot hold are not read as if it did: an impossible date, a
//! count written as a literal, a usage or rate outside its physical range make
//! their line damaged (counted, shown), never part of a figure.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

use batchlens_core::{analyze, Options, Report};

fn example(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    std::fs::read_to_string(p).expect("example log")
}

fn report(text: &str) -> Report {
    analyze(text.as_bytes(), Options::default())
}

/// The log with its `k`-th SGLang decode line changed by `edit`.
fn edit_decode_line(text: &str, k: usize, edit: impl Fn(&str) -> String) -> String {
    let mut seen = 0;
    let mut out = String::new();
    for line in text.lines() {
        if line.contains("Decode batch") {
            if seen == k {
                out.push_str(&edit(line));
                out.push('\n');
                seen += 1;
                continue;
            }
            seen += 1;
        }
        out.push_str(line);
        out.push('\n');
    }
    assert!(seen > k, "the log has {seen} decode lines");
    out
}

#[test]
fn a_count_written_as_a_literal_is_no_count() {
    let log = example("sglang-kv-bound.log");
    let clean = report(&log);
    let edited = edit_decode_line(&log, 100, |l| {
        let at = l.find("#running-req: ").expect("running") + "#running-req: ".len();
        let end = at + l[at..].find(',').expect("comma");
        format!("{}1_000{}", &l[..at], &l[end..])
    });
    let r = report(&edited);
    assert_eq!(
        r.input.damaged_stat_lines,
        clean.input.damaged_stat_lines + 1
    );
    assert_eq!(r.input.stat_lines + 1, clean.input.stat_lines);
    assert!(r
        .input
        .damaged_examples
        .iter()
        .any(|e| e.text.contains("1_000")));
    let most = |r: &Report| r.summary.running_requests.as_ref().map(|d| d.max);
    assert!(most(&r) <= most(&clean), "1_000 read as a thousand running");
}

/// `HH:MM:SS` of a line, as seconds: the one before the message.
fn second_of_day(line: &str) -> Option<u32> {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(8)).find_map(|i| {
        let w = &b[i..i + 8];
        let d = |j: usize| (w[j] as char).to_digit(10);
        (w[2] == b':' && w[5] == b':').then_some(())?;
        Some((d(0)? * 10 + d(1)?) * 3600 + (d(3)? * 10 + d(4)?) * 60 + d(6)? * 10 + d(7)?)
    })
}

/// SGLang's dated lines and vLLM's year-less ones of the same day in one file,
/// in time order (two servers logging to one journal): one clock, not a
/// 26-year jump at every switch.
#[test]
fn year_less_lines_between_dated_ones_take_their_year() {
    let (k, v) = (example("sglang-kv-bound.log"), example("vllm-kv-bound.log"));
    let mut mixed = String::new();
    let (mut a, mut b) = (k.lines().peekable(), v.lines().peekable());
    let (mut ta, mut tb) = (0, 0);
    loop {
        let next_a = a.peek().map(|l| second_of_day(l).unwrap_or(ta));
        let next_b = b.peek().map(|l| second_of_day(l).unwrap_or(tb));
        let line = match (next_a, next_b) {
            (None, None) => break,
            (Some(x), Some(y)) if x <= y => {
                ta = x;
                a.next()
            }
            (Some(x), None) => {
                ta = x;
                a.next()
            }
            (_, Some(y)) => {
                tb = y;
                b.next()
            }
        };
        mixed.push_str(line.unwrap());
        mixed.push('\n');
    }
    let switches = mixed
        .lines()
        .zip(mixed.lines().skip(1))
        .filter(|(x, y)| x.starts_with("[2026") != y.starts_with("[2026"))
        .count();
    assert!(switches > 100, "{switches} switches");
    let (rk, rv, r) = (report(&k), report(&v), report(&mixed));
    let longest = rk.span_seconds.max(rv.span_seconds);
    assert!(
        r.span_seconds <= longest * 1.5,
        "span {} s of logs of {} s and {} s",
        r.span_seconds,
        rk.span_seconds,
        rv.span_seconds
    );
    let sustained = r.summary.sustained_gen_tok_s.expect("a rate");
    let most = rk.summary.sustained_gen_tok_s.unwrap() + rv.summary.sustained_gen_tok_s.unwrap();
    assert!(sustained < most * 2.0, "{sustained} tok/s sustained");
    assert_eq!(r.input.clock_regressions, 0);
    // Line by line (`paste -d'\n'`), so the two drift minutes apart: each
    // server's lines go forward on their own, no step back between them.
    let mut pasted = String::new();
    let (mut a, mut b) = (k.lines(), v.lines());
    loop {
        let (x, y) = (a.next(), b.next());
        if x.is_none() && y.is_none() {
            break;
        }
        for l in [x, y] {
            pasted.push_str(l.unwrap_or(""));
            pasted.push('\n');
        }
    }
    let r = report(&pasted);
    assert!(
        r.span_seconds <= longest * 1.5,
        "pasted: span {} s",
        r.span_seconds
    );
    let sustained = r.summary.sustained_gen_tok_s.expect("a rate");
    assert!(
        sustained < most * 2.0,
        "pasted: {sustained} tok/s sustained"
    );
    assert_eq!(r.input.clock_regressions, 0);
}

/// `field: value` of a line replaced by `field: new`.
fn set_field(line: &str, field: &str, new: &str) -> String {
    let at = line
        .find(field)
        .unwrap_or_else(|| panic!("{field} in {line}"))
        + field.len();
    let end = line[at..].find(',').map_or(line.len(), |e| at + e);
    format!("{}{new}{}", &line[..at], &line[end..])
}

#[test]
fn impossible_calendar_dates_make_their_line_damaged() {
    let log = example("sglang-kv-bound.log");
    let clean = report(&log);
    for date in [
        "2026-13-24",
        "2026-02-32",
        "2026-00-24",
        "2026-02-30",
        "2026-02-29",
    ] {
        let edited = edit_decode_line(&log, 300, |l| l.replacen("2026-02-24", date, 1));
        let r = report(&edited);
        assert_eq!(
            r.input.damaged_stat_lines,
            clean.input.damaged_stat_lines + 1,
            "{date}"
        );
        assert!(
            r.input
                .damaged_examples
                .iter()
                .any(|e| e.text.contains(date)),
            "{date} shown"
        );
        assert!(
            (r.span_seconds - clean.span_seconds).abs() <= 1.0,
            "{date}: span {} s, not {} s",
            r.span_seconds,
            clean.span_seconds
        );
        assert_eq!(r.input.clock_regressions, 0, "{date}");
    }
    // One line in ten with an impossible date: the rate stays the log's.
    let mut edited = log.clone();
    for k in (0..600).step_by(10) {
        edited = edit_decode_line(&edited, k, |l| l.replacen("2026-02-24", "2026-13-24", 1));
    }
    let r = report(&edited);
    assert_eq!(
        r.input.damaged_stat_lines,
        clean.input.damaged_stat_lines + 60
    );
    let rate = |r: &Report| r.summary.sustained_gen_tok_s.expect("a rate");
    assert!(rate(&r) < rate(&clean) * 1.2, "{} tok/s", rate(&r));
}

#[test]
fn values_outside_their_physical_range_make_their_line_damaged() {
    let log = example("sglang-kv-bound.log");
    let clean = report(&log);
    let max = |d: &Option<batchlens_core::report::Distribution>| d.as_ref().map(|d| d.max);
    for (field, value) in [
        ("gen throughput (token/s): ", "99999999999999999999"),
        ("gen throughput (token/s): ", "-120.5"),
        ("token usage: ", "1e20"),
        ("token usage: ", "-0.40"),
    ] {
        let edited = edit_decode_line(&log, 200, |l| set_field(l, field, value));
        let r = report(&edited);
        assert_eq!(
            r.input.damaged_stat_lines,
            clean.input.damaged_stat_lines + 1,
            "{field}{value}"
        );
        let shown = |e: &batchlens_core::report::LineExample| {
            edited
                .lines()
                .nth(e.line as usize - 1)
                .unwrap()
                .contains(value)
        };
        assert!(
            r.input.damaged_examples.iter().any(shown),
            "{field}{value} shown"
        );
        assert!(max(&r.summary.gen_throughput_tok_s) <= max(&clean.summary.gen_throughput_tok_s));
        assert!(max(&r.summary.kv_usage) <= Some(1.0), "{field}{value}");
        assert!(
            r.summary.kv_usage.as_ref().unwrap().mean >= 0.0,
            "{field}{value}"
        );
    }
    // One line in twenty with a negative usage: the verdict stays the log's.
    let mut edited = log.clone();
    for k in (0..800).step_by(20) {
        edited = edit_decode_line(&edited, k, |l| set_field(l, "token usage: ", "-0.90"));
    }
    let r = report(&edited);
    assert_eq!(
        r.input.damaged_stat_lines,
        clean.input.damaged_stat_lines + 40
    );
    let kind = |r: &Report| r.diagnosis.as_ref().map(|d| d.primary.kind);
    assert_eq!(kind(&r), kind(&clean));
    // vLLM's percentages: a usage past 100 % is no usage.
    let v = example("vllm-kv-bound.log");
    let clean = report(&v);
    let mut seen = false;
    let edited: String = v
        .lines()
        .map(|l| {
            if !seen && l.contains("GPU KV cache usage: ") {
                seen = true;
                set_field(l, "GPU KV cache usage: ", "1e20%")
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect();
    let r = report(&edited);
    assert_eq!(
        r.input.damaged_stat_lines,
        clean.input.damaged_stat_lines + 1
    );
    assert!(max(&r.summary.kv_usage) <= Some(1.0));
}

/// The report without the fields that tell how the bytes were written.
fn as_read(r: &Report) -> serde_json::Value {
    let mut v = serde_json::to_value(r).expect("json");
    v["input"]["bytes"] = serde_json::Value::Null;
    v["input"]["encoding"] = serde_json::Value::Null;
    v
}

#[test]
fn a_log_with_lone_carriage_returns_reads_as_its_lines() {
    let log = example("sglang-kv-bound.log");
    let cr = log.replace('\n', "\r");
    let (want, got) = (report(&log), report(&cr));
    assert_eq!(got.input.stat_lines, want.input.stat_lines);
    assert_eq!(as_read(&got), as_read(&want));
    // In small pieces, as a pipe hands them.
    let mut a = batchlens_core::Analyzer::new(Options::default());
    for piece in cr.as_bytes().chunks(7) {
        a.feed(piece);
    }
    assert_eq!(as_read(&a.finish()), as_read(&want));
}

fn utf16le(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

#[test]
fn a_utf16_log_split_in_two_files_reads_as_one() {
    let log = example("vllm-kv-bound.log");
    let want = report(&log);
    let mut wide = vec![0xff, 0xfe];
    wide.extend(utf16le(&log));
    // `split -b` cuts anywhere: mid-line, and mid-code-unit.
    for cut in [wide.len() / 2, wide.len() / 2 + 1, wide.len() / 3 + 7] {
        let mut a = batchlens_core::Analyzer::new(Options::default());
        for piece in wide[..cut].chunks(4096) {
            a.feed(piece);
        }
        a.next_input();
        for piece in wide[cut..].chunks(4093) {
            a.feed(piece);
        }
        let got = a.finish();
        assert_eq!(got.input.encoding.as_deref(), Some("utf-16le"));
        assert_eq!(
            got.input.unrecognized_lines, want.input.unrecognized_lines,
            "cut at {cut}"
        );
        assert_eq!(as_read(&got), as_read(&want), "cut at {cut}");
    }
}

#[test]
fn a_file_that_shrank_while_read_is_said_in_text_markdown_and_json() {
    let mut r = report(&example("sglang-kv-bound.log"));
    let json = serde_json::to_value(&r).unwrap();
    assert!(json["input"].get("truncated_while_reading").is_none());
    assert!(!batchlens_core::render::text(&r, false).contains("shrank"));
    r.input.truncated_while_reading = Some(batchlens_core::report::Truncation {
        file: "big.log".into(),
        bytes_read: 60_000_000,
        bytes_at_open: 1_500_000_000,
    });
    let json = serde_json::to_value(&r).unwrap();
    let t = &json["input"]["truncated_while_reading"];
    assert_eq!(
        (t["bytes_read"].as_u64(), t["bytes_at_open"].as_u64()),
        (Some(60_000_000), Some(1_500_000_000))
    );
    let said = "'big.log' shrank while it was read (truncated or rotated): this report covers the 60,000,000 bytes read of the 1,500,000,000";
    assert!(batchlens_core::render::text(&r, false).contains(said));
    assert!(batchlens_core::render::markdown(&r).contains(said));
}
