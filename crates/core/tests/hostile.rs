//! Hostile input: no panic, no hang, bounded memory on any bytes, and
//! honest accounting — every physical line is counted once, garbage never
//! becomes a stats line, and a damaged stats line is counted as damaged, never
//! read as zeros. Small corpus in tests/fixtures/hostile/, big inputs generated here.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

mod common;
use common::*;

use std::time::{Duration, Instant};

use batchlens_core::MAX_LINE;
use batchlens_core::{Analyzer, Options, Report};

/// `stat + damaged - glued + other + unrecognized + joined == lines`.
fn assert_accounted(r: &Report, what: &str) {
    let i = &r.input;
    assert_eq!(
        i.accounted_lines(),
        i.lines,
        "{what}: line accounting {i:?}"
    );
}

/// The same report whether fed whole or cut at arbitrary places.
fn assert_chunking_invariant(bytes: &[u8], what: &str) -> Report {
    let whole = analyze(bytes);
    assert_accounted(&whole, what);
    for seed in 1..4 {
        let cut = analyze_split(bytes, &cuts(bytes.len(), 7, seed));
        assert_eq!(
            whole, cut,
            "{what}: chunking changed the report (seed {seed})"
        );
    }
    let mut a = Analyzer::new(Options::default());
    for b in bytes.chunks(1) {
        a.feed(b);
    }
    assert_eq!(
        whole,
        a.finish(),
        "{what}: byte-at-a-time changed the report"
    );
    whole
}

fn no_stats(r: &Report, what: &str) {
    assert_eq!(
        (r.input.stat_lines, r.input.damaged_stat_lines),
        (0, 0),
        "{what}: stats lines invented from garbage"
    );
    assert_eq!(r.engine, "unknown", "{what}");
    assert!(r.summary.gen_throughput_tok_s.is_none(), "{what}");
    assert!(r.summary.running_requests.is_none(), "{what}");
    assert!(r.timeline.points.is_empty(), "{what}");
}

fn xorshift_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.max(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn decode_line(sec: u32, running: u32, queued: u32, gen: f64) -> String {
    format!(
        "[2026-05-07 13:{:02}:{:02} TP0] Decode batch, #running-req: {running}, #token: {}, token usage: 0.{:02}, cuda graph: True, gen throughput (token/s): {gen:.2}, #queue-req: {queued}",
        sec / 60 % 60,
        sec % 60,
        running * 900,
        running % 100
    )
}

fn prefill_line(sec: u32) -> String {
    format!(
        "[2026-05-07 13:{:02}:{:02} TP0] Prefill batch, #new-seq: 2, #new-token: 4096, #cached-token: 1024, token usage: 0.30, #running-req: 12, #queue-req: 3",
        sec / 60 % 60,
        sec % 60
    )
}

/// A small valid log: 20 decode lines, 5 prefill lines, access lines, one blank.
fn valid_lines() -> Vec<String> {
    let mut v = Vec::new();
    for i in 0..20u32 {
        v.push(decode_line(i * 2, 10 + i, i % 4, 1000.0 + i as f64));
        if i % 4 == 0 {
            v.push(prefill_line(i * 2));
            v.push(format!(
                "[2026-05-07 13:00:{:02}] INFO:     127.0.0.1:4{i:04} - \"POST /generate HTTP/1.1\" 200 OK",
                i * 2
            ));
        }
    }
    v.push(String::new());
    v
}

fn join(lines: &[String], eol: &str) -> Vec<u8> {
    let mut s = String::new();
    for l in lines {
        s.push_str(l);
        s.push_str(eol);
    }
    s.into_bytes()
}

/// The same report up to the byte count (for inputs that differ only in invisible bytes).
fn same_reading(a: &Report, b: &Report, what: &str) {
    let mut a = a.clone();
    let mut b = b.clone();
    a.input.bytes = 0;
    b.input.bytes = 0;
    assert_eq!(a, b, "{what}");
}

#[test]
fn empty_input_reads_as_nothing() {
    let r = assert_chunking_invariant(b"", "empty");
    assert_eq!((r.input.bytes, r.input.lines), (0, 0));
    assert!(!r.input.looks_binary);
    no_stats(&r, "empty");
    // A file with only newlines is text, with blank lines.
    let r = assert_chunking_invariant(b"\n\n\r\n", "newlines");
    assert_eq!(r.input.lines, 3);
    assert_eq!(r.input.other_lines_by_kind.get("blank"), Some(&3));
    assert!(!r.input.looks_binary);
}

#[test]
fn random_bytes_are_binary_and_give_no_stats() {
    for seed in [1u64, 7, 99] {
        let bytes = xorshift_bytes(200_000, seed);
        let r = assert_chunking_invariant(&bytes[..20_000], "random");
        assert!(r.input.looks_binary, "seed {seed}");
        no_stats(&r, "random");
        let r = analyze(&bytes);
        assert_accounted(&r, "random");
        assert!(r.input.looks_binary);
        no_stats(&r, "random");
    }
}

#[test]
fn images_and_archives_are_binary_and_give_no_stats() {
    for name in ["tiny.png", "tiny.zip"] {
        let bytes = fixture(&format!("hostile/{name}"));
        let r = assert_chunking_invariant(&bytes, name);
        assert!(r.input.looks_binary, "{name}");
        no_stats(&r, name);
    }
}

#[test]
fn other_programs_logs_are_not_stats() {
    let r = assert_chunking_invariant(&fixture("hostile/nginx.log"), "nginx");
    no_stats(&r, "nginx");
    assert!(!r.input.looks_binary);
    assert_eq!(r.input.lines, 8);
    // Access lines are known as such; the nginx error lines are not ours.
    assert_eq!(r.input.other_lines_by_kind.get("access_log"), Some(&6));
    let r = assert_chunking_invariant(&fixture("hostile/systemd.log"), "systemd");
    no_stats(&r, "systemd");
    assert_eq!(r.input.lines, 11);
    assert!(r.input.unrecognized_examples.is_empty());
}

#[test]
fn a_50_mb_line_without_newline_is_cut_counted_and_fast() {
    let rec = decode_line(1, 5, 0, 10.0);
    let mut big = Vec::with_capacity(50 * 1024 * 1024 + rec.len());
    while big.len() < 50 * 1024 * 1024 {
        big.extend_from_slice(rec.as_bytes());
    }
    let t = Instant::now();
    let mut a = Analyzer::new(Options::default());
    for c in big.chunks(1 << 20) {
        a.feed(c);
    }
    a.feed(b"\n");
    a.feed(decode_line(9, 7, 1, 20.0).as_bytes());
    let chunked = a.finish();
    let whole = {
        let mut b = big.clone();
        b.push(b'\n');
        b.extend_from_slice(decode_line(9, 7, 1, 20.0).as_bytes());
        analyze(&b)
    };
    let took = t.elapsed();
    assert_eq!(chunked, whole);
    let i = &chunked.input;
    assert_eq!(i.lines, 2);
    assert_eq!(i.overlong_lines, 1);
    assert_accounted(&chunked, "50 MB line");
    // Only the kept head of the line is read: at most the records it can hold.
    let per_line = (MAX_LINE / rec.len() + 1) as u64;
    assert!(i.stat_lines + i.damaged_stat_lines <= per_line + 1, "{i:?}");
    assert!(
        i.stat_lines >= 2,
        "the glued records and the last line are read"
    );
    // Debug build, two feeds of 50 MB: linear work finishes in seconds.
    assert!(took < Duration::from_secs(60), "took {took:?}");

    // The same without anything to find in it.
    let t = Instant::now();
    let r = analyze(&vec![b'x'; 50 * 1024 * 1024]);
    assert_eq!((r.input.lines, r.input.overlong_lines), (1, 1));
    assert_eq!(r.input.unrecognized_lines, 1);
    assert!(t.elapsed() < Duration::from_secs(60));
}

#[test]
fn wrapped_tails_cannot_make_the_join_quadratic() {
    // A truncated stats line, then thousands of tiny lines that do not start a
    // record: each may be joined to the held line, but the work must stay linear.
    let mut s = String::new();
    for k in 0..4 {
        s.push_str(&decode_line(k, 5, 0, 10.0)[..60]);
        s.push('\n');
        for _ in 0..20_000 {
            s.push_str("x\n");
        }
    }
    let t = Instant::now();
    let r = analyze(s.as_bytes());
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "took {:?}",
        t.elapsed()
    );
    assert_accounted(&r, "tiny tails");
    assert_eq!(r.input.lines, 4 * 20_001);
    assert_eq!(r.input.stat_lines, 0);
}

#[test]
fn nul_bytes_and_invalid_utf8() {
    let lines = valid_lines();
    let clean = analyze(&join(&lines, "\n"));
    assert_eq!(clean.input.stat_lines, 25);

    // A run of NULs (a crashed writer's preallocated block) between lines.
    let mut b = join(&lines[..10], "\n");
    b.extend_from_slice(&[0u8; 4096]);
    b.push(b'\n');
    b.extend_from_slice(&join(&lines[10..], "\n"));
    let r = assert_chunking_invariant(&b, "nul block");
    assert_eq!(r.input.stat_lines, 25);
    assert_eq!(r.input.damaged_stat_lines, 0);
    assert_eq!(r.input.lines, clean.input.lines + 1);

    // Invalid UTF-8 and NUL in the prefix: the record is still read.
    let l = decode_line(3, 9, 2, 33.0).replacen("TP0", "TP0 \u{1}", 1);
    let mut b = l.into_bytes();
    b.splice(1..1, [0xff, 0xfe, 0x00]);
    b.push(b'\n');
    let r = assert_chunking_invariant(&b, "utf8 prefix");
    assert_eq!((r.input.stat_lines, r.input.damaged_stat_lines), (1, 0));
    assert_eq!(r.summary.running_requests.unwrap().max, 9.0);

    // Invalid UTF-8 inside a value: that value is not read, and not zero.
    let l = decode_line(3, 9, 2, 33.0).replace("33.00", "3\u{0}3.\u{fffd}");
    let mut b = l.into_bytes();
    b.extend_from_slice(b"\xc3\n");
    let r = assert_chunking_invariant(&b, "utf8 value");
    assert_eq!(r.input.stat_lines + r.input.damaged_stat_lines, 1);
    assert_eq!(r.input.damaged_stat_lines, 1);
    assert!(r.summary.gen_throughput_tok_s.is_none());
    assert_eq!(r.input.damaged_examples.len(), 1);
}

#[test]
fn crlf_and_ansi_colour_read_like_plain_text() {
    let lines = valid_lines();
    let plain = assert_chunking_invariant(&join(&lines, "\n"), "plain");
    let crlf = assert_chunking_invariant(&join(&lines, "\r\n"), "crlf");
    same_reading(&plain, &crlf, "CRLF");
    let coloured: Vec<String> = lines
        .iter()
        .map(|l| {
            l.split(' ')
                .enumerate()
                .map(|(k, w)| format!("\x1b[{}m{w}\x1b[0m", 31 + k % 6))
                .collect::<Vec<_>>()
                .join("\x1b[1;36m \x1b[0;0m")
        })
        .collect();
    let ansi = assert_chunking_invariant(&join(&coloured, "\r\n"), "ansi");
    same_reading(&plain, &ansi, "ANSI");
}

#[test]
fn a_file_cut_mid_line_counts_the_last_line_as_damaged() {
    let whole = join(&valid_lines()[..2], "\n");
    let full = analyze(&whole);
    assert_eq!(full.input.stat_lines, 2);
    // Cut inside the last stats line (the prefill line), in `token usage`.
    let cut_at = whole.len() - 60;
    let r = assert_chunking_invariant(&whole[..cut_at], "cut");
    assert_eq!(
        (r.input.stat_lines, r.input.damaged_stat_lines),
        (1, 1),
        "{:?}",
        r.input
    );
    assert_eq!(r.input.damaged_examples.len(), 1);
    assert_eq!(r.input.damaged_examples[0].line, 2);
    assert!(r.input.damaged_examples[0].text.contains("Prefill batch"));
}

#[test]
fn damaged_values_are_never_read_as_zeros() {
    let mut s = String::new();
    for (k, bad) in ["???", "", "nan", "inf", "-", "0x1f"].iter().enumerate() {
        s.push_str(&format!(
            "[2026-05-07 13:00:{k:02} TP0] Decode batch, #running-req: {bad}, #token: {bad}, token usage: {bad}, gen throughput (token/s): {bad}, #queue-req: {bad}\n"
        ));
    }
    let r = assert_chunking_invariant(s.as_bytes(), "bad values");
    assert_eq!((r.input.stat_lines, r.input.damaged_stat_lines), (0, 6));
    assert_eq!(r.input.damaged_examples.len(), 5, "examples are bounded");
    assert!(r.input.damaged_examples[0]
        .text
        .starts_with("[2026-05-07 13:00:00"));
    let sm = &r.summary;
    assert!(sm.gen_throughput_tok_s.is_none(), "{sm:?}");
    assert!(sm.running_requests.is_none(), "{sm:?}");
    assert!(sm.queued_requests.is_none(), "{sm:?}");
    assert!(sm.kv_usage.is_none(), "{sm:?}");
    assert!(sm.kv_tokens.is_none(), "{sm:?}");
}

#[test]
fn hard_wrapped_lines_are_joined() {
    let r = assert_chunking_invariant(&fixture("hostile/wrapped.log"), "wrapped");
    assert_eq!((r.input.stat_lines, r.input.damaged_stat_lines), (4, 0));
    assert_eq!(r.input.joined_wrapped_lines, 4);
    assert_eq!(r.input.lines, 8);
    assert_eq!(r.summary.running_requests.unwrap().max, 23.0);
    assert_eq!(r.summary.queued_requests.unwrap().max, 3.0);
}

#[test]
fn several_records_on_one_line_are_split() {
    let r = assert_chunking_invariant(&fixture("hostile/glued.log"), "glued");
    assert_eq!(r.input.lines, 2);
    assert_eq!((r.input.stat_lines, r.input.damaged_stat_lines), (4, 0));
    assert_eq!(r.input.glued_records, 2);
    assert_eq!(r.summary.running_requests.unwrap().max, 14.0);
    assert_eq!(r.summary.gen_throughput_tok_s.unwrap().count, 4);
}

#[test]
fn timestamps_that_go_backwards_are_a_clock_jump_not_a_negative_span() {
    let r = assert_chunking_invariant(&fixture("hostile/rotated.log"), "rotated");
    assert_eq!(r.input.stat_lines, 12);
    assert_eq!(r.input.clock_regressions, 1);
    assert_eq!(r.events.clock_jumps, 1);
    assert!(r.span_seconds >= 0.0 && r.busy_seconds >= 0.0 && r.idle_seconds >= 0.0);
    assert!(r.span_seconds < 86_400.0, "span {}", r.span_seconds);
}

#[test]
fn unknown_stats_formats_are_shown_as_examples() {
    let mut s = String::new();
    for k in 0..8 {
        s.push_str(&format!(
            "[2026-05-07 13:00:{k:02}] Decode batch v9 running={k} queue=0 throughput=100 {}\n",
            "pad ".repeat(40)
        ));
    }
    let r = assert_chunking_invariant(s.as_bytes(), "unknown format");
    assert_eq!(r.input.stat_lines + r.input.damaged_stat_lines, 0);
    assert_eq!(r.input.unrecognized_lines, 8);
    let ex = &r.input.unrecognized_examples;
    assert_eq!(ex.len(), 5, "bounded");
    assert_eq!(ex[0].line, 1);
    assert_eq!(ex[4].line, 5);
    assert!(ex[0]
        .text
        .starts_with("[2026-05-07 13:00:00] Decode batch v9"));
    assert_eq!(ex[0].text.chars().count(), 121, "120 chars and an ellipsis");
    assert!(ex[0].text.ends_with('…'));
}

#[test]
fn garbage_around_real_lines_does_not_change_what_they_say() {
    // Random binary lines interleaved with the valid log: the stats read are the
    // same ones, whatever the garbage.
    let lines = valid_lines();
    let clean = analyze(&join(&lines, "\n"));
    let mut b = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        let mut junk = xorshift_bytes(50, k as u64 + 1);
        junk.retain(|&c| c != b'\n');
        b.extend_from_slice(&junk);
        b.push(b'\n');
        b.extend_from_slice(l.as_bytes());
        b.push(b'\n');
    }
    let r = assert_chunking_invariant(&b, "interleaved garbage");
    assert_eq!(r.input.stat_lines, clean.input.stat_lines);
    assert_eq!(r.input.damaged_stat_lines, 0);
    assert_eq!(r.summary, clean.summary);
}

/// A startup line cut inside a quoted key (`server_args=ServerArgs('model_path`, a log
/// cut mid-line; an input of `cargo fuzz`): the Python-repr reader (`text::python`)
/// stops at the unterminated key instead of slicing past the end.
#[test]
fn fuzz_crash_unterminated_quoted_key_in_a_startup_line() {
    let r = assert_chunking_invariant(
        &fixture("hostile/fuzz-unterminated-quoted-key.log"),
        "unterminated quoted key",
    );
    assert_eq!(r.input.lines, 2);
    assert_eq!(r.input.stat_lines, 1);
    let r = analyze(&fixture("hostile/fuzz-crash-26207c0d.bin"));
    assert_accounted(&r, "fuzz crash input");
}

/// An access line (` HTTP/1.`) that also holds a TensorRT-LLM stats record (an input of
/// `cargo fuzz`): read ahead, the search ends at the access line (no engine reads stats
/// from one), and read on its own TensorRT-LLM's parser, the last asked, turns access
/// lines away too, so both readings agree.
#[test]
fn fuzz_access_line_holding_a_tensorrt_llm_record() {
    let r = assert_chunking_invariant(
        &fixture("hostile/fuzz-access-line-holding-trtllm-json.log"),
        "access line holding a stats record",
    );
    assert_eq!(r.input.stat_lines, 0);
    assert_eq!(r.input.other_lines_by_kind.get("access_log"), Some(&1));
}
