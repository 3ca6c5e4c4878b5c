//! Reading ahead (`ReadAhead` + `Analyzer::feed_prepared`, what the CLI's
//! workers run, and what `feed` does itself) gives the report reading every
//! line on its own gives, byte for byte, on every fixture and example, however
//! the input is cut.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

mod common;

use std::path::Path;

use batchlens_core::{Analyzer, Engine, Options, ReadAhead, Report};

fn json(r: &Report) -> String {
    serde_json::to_string(r).unwrap()
}

/// Like the CLI: windows of `chunk` bytes cut after their last newline when
/// `at_newlines`, anywhere otherwise (the reading ahead is then partly unusable).
fn prepared(bytes: &[u8], opts: &Options, chunk: usize, at_newlines: bool) -> (Report, usize) {
    let mut a = Analyzer::new(opts.clone());
    let mut ahead = ReadAhead::new(opts);
    let mut read = 0;
    let mut rest = bytes;
    while !rest.is_empty() {
        let take = rest.len().min(chunk);
        let cut = match memchr::memrchr(b'\n', &rest[..take]) {
            Some(i) if at_newlines && take < rest.len() => i + 1,
            _ => take,
        };
        let (c, r) = rest.split_at(cut);
        let mut p = ahead.read(c);
        read += p.lines_read();
        a.feed_prepared(c, &mut p);
        rest = r;
    }
    (a.finish(), read)
}

fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    for folder in ["sglang", "vllm", "lmdeploy", "trtllm", "other", "hostile"] {
        v.extend(common::fixtures_in(folder));
    }
    let examples = common::example_logs();
    // The same logs as Docker's json-file driver keeps them; in one, some lines
    // carry colour codes and some stats lines are cut short inside their records.
    for (i, (name, bytes)) in examples.iter().enumerate() {
        let mut log = String::from_utf8(bytes.clone()).unwrap();
        if i == 0 {
            log = log
                .lines()
                .enumerate()
                .map(|(k, l)| match k % 97 {
                    3 => format!("\u{1b}[32m{l}\u{1b}[0m\n"),
                    5 if l.contains(" batch") => format!("{}\n", &l[..l.len() * 2 / 3]),
                    _ => format!("{l}\n"),
                })
                .collect();
        }
        v.push((
            format!("{name} (docker json)"),
            common::docker_json(&log).into_bytes(),
        ));
    }
    v.extend(examples);
    assert!(v.len() > 60, "fixtures found: {}", v.len());
    v
}

#[test]
fn reading_ahead_gives_the_same_report_on_every_fixture() {
    let mut read_total = 0;
    let mut lines_total = 0;
    for engine in [None, Some(Engine::Sglang), Some(Engine::Vllm)] {
        let opts = Options {
            engine,
            ..Options::default()
        };
        for (name, bytes) in inputs() {
            let want = common::analyze_line_by_line(&bytes, opts.clone());
            lines_total += want.input.lines;
            // `feed` reads ahead itself, in one piece or in chunks cut anywhere.
            assert_eq!(
                json(&batchlens_core::analyze(&bytes, opts.clone())),
                json(&want),
                "{name}, engine {engine:?}, fed whole"
            );
            let mut fed = Analyzer::new(opts.clone());
            for c in bytes.chunks(1237) {
                fed.feed(c);
            }
            assert_eq!(
                json(&fed.finish()),
                json(&want),
                "{name}, engine {engine:?}, fed in chunks"
            );
            for (chunk, at_newlines) in [(1 << 20, true), (4096, true), (777, false)] {
                let (got, read) = prepared(&bytes, &opts, chunk, at_newlines);
                assert_eq!(
                    json(&got),
                    json(&want),
                    "{name}, engine {engine:?}, chunks of {chunk} (at newlines: {at_newlines})"
                );
                if at_newlines {
                    read_total += read as u64;
                }
            }
        }
    }
    // Most lines of these logs are stats or access lines: read ahead.
    assert!(
        read_total * 3 > lines_total,
        "{read_total} lines read ahead of {lines_total}"
    );
}

#[test]
fn a_wrapped_stats_line_is_still_joined_when_read_ahead() {
    let log = common::fixture("hostile/wrapped.log");
    let want = batchlens_core::analyze(&log, Options::default());
    assert!(want.input.joined_wrapped_lines > 0);
    for chunk in [64, 200, 4096] {
        let (got, _) = prepared(&log, &Options::default(), chunk, true);
        assert_eq!(json(&got), json(&want), "chunks of {chunk}");
    }
}

/// The text in UTF-16 with its byte-order mark, as Windows PowerShell's `>` writes it.
fn utf16(text: &[u8], big_endian: bool) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let mut b = if big_endian {
        vec![0xfe, 0xff]
    } else {
        vec![0xff, 0xfe]
    };
    for u in text.encode_utf16() {
        b.extend(if big_endian {
            u.to_be_bytes()
        } else {
            u.to_le_bytes()
        });
    }
    b
}

#[test]
fn a_utf16_log_reads_as_its_utf8_text_fed_or_read_ahead() {
    let opts = Options::default();
    let mut tried = 0;
    for (name, bytes) in inputs()
        .into_iter()
        .filter(|(n, _)| n.contains("kv-bound") || n.contains("sglang_41") || n.contains("vllm_31"))
    {
        let Ok(_) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let mut want = common::analyze(&bytes);
        assert!(want.input.stat_lines > 0, "{name}");
        tried += 1;
        for big_endian in [false, true] {
            let wide = utf16(&bytes, big_endian);
            let whole = common::analyze(&wide);
            let mut fed = Analyzer::new(opts.clone());
            for c in wide.chunks(4093) {
                fed.feed(c);
            }
            let (ahead, _) = prepared(&wide, &opts, 8191, true);
            for (how, mut got) in [("whole", whole), ("fed", fed.finish()), ("ahead", ahead)] {
                let enc = if big_endian { "utf-16be" } else { "utf-16le" };
                assert_eq!(got.input.encoding.as_deref(), Some(enc), "{name} {how}");
                assert_eq!(got.input.bytes, wide.len() as u64);
                // Everything else is what the UTF-8 text gives.
                got.input.encoding = None;
                got.input.bytes = 0;
                want.input.bytes = 0;
                assert_eq!(json(&got), json(&want), "{name} {how} {enc}");
            }
        }
    }
    assert!(tried >= 3, "{tried} logs tried");
}

#[test]
fn each_input_of_several_tells_its_own_encoding() {
    let text = common::fixture("sglang/sglang_41_dp-tp-ep-pd-decode-rank-imbalance-uvicorn.log");
    let cut = text.len() / 2
        + text[text.len() / 2..]
            .iter()
            .position(|&c| c == b'\n')
            .unwrap()
        + 1;
    let (a, b) = text.split_at(cut);
    let mut want = common::analyze(&text);
    // UTF-8 then UTF-16, and UTF-16 then UTF-8 (the second file's mark is read as a mark).
    for (first, second) in [(a.to_vec(), utf16(b, false)), (utf16(a, true), b.to_vec())] {
        let mut an = Analyzer::new(Options::default());
        for c in first.chunks(1000) {
            an.feed(c);
        }
        an.next_input();
        for c in second.chunks(999) {
            an.feed(c);
        }
        let mut got = an.finish();
        assert!(got
            .input
            .encoding
            .as_deref()
            .is_some_and(|e| e.starts_with("utf-16")));
        (got.input.encoding, got.input.bytes, want.input.bytes) = (None, 0, 0);
        assert_eq!(json(&got), json(&want));
    }
}

#[test]
fn client_lines_among_access_lines_are_read_when_read_ahead() {
    // The analyzer skips lines read ahead as access lines unless they may be
    // client lines or a summary block is open: a block and request log lines
    // (one whose text reads like an access line) amid access and stats lines
    // must give what `feed` gives.
    let kv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sglang-kv-bound.log");
    let kv = std::fs::read(kv).unwrap();
    let (head, tail) = kv.split_at(memchr::memrchr(b'\n', &kv[..kv.len() / 2]).unwrap() + 1);
    let access =
        b"[2026-02-24 10:55:40] INFO:     127.0.0.1:30819 - \"POST /generate HTTP/1.1\" 200 OK\n";
    let mut log = head.to_vec();
    for i in 0..40 {
        log.extend_from_slice(access);
        if i % 10 == 0 {
            log.extend_from_slice(
                format!("[2026-02-24 10:55:40] Receive: obj=GenerateReqInput(rid='r{i}')\n")
                    .as_bytes(),
            );
            log.extend_from_slice(format!("[2026-02-24 10:55:41] Finish: obj=GenerateReqInput(rid='r{i}', stream=False), out={{'text': ' HTTP/1.1 200', 'meta_info': {{'id': 'r{i}', 'prompt_tokens': 431, 'completion_tokens': 512, 'cached_tokens': 0, 'e2e_latency': 12.5}}}}\n").as_bytes());
        }
    }
    log.extend_from_slice(&common::fixture("client/sglang_bench_serving_0.4.0.txt"));
    log.extend_from_slice(b"\n");
    log.extend_from_slice(access);
    log.extend_from_slice(tail);
    for engine in [None, Some(Engine::Sglang), Some(Engine::Vllm)] {
        let opts = Options {
            engine,
            ..Options::default()
        };
        let want = batchlens_core::analyze(&log, opts.clone());
        let kinds = &want.input.other_lines_by_kind;
        assert_eq!(kinds.get("client_summary"), Some(&27), "{engine:?}");
        assert_eq!(kinds.get("request_log"), Some(&8), "{engine:?}");
        assert_eq!(want.requests.as_ref().map(|r| r.finished_requests), Some(4));
        assert!(want.client.is_some());
        for chunk in [97, 1000, 4096, 1 << 20] {
            let (got, _) = prepared(&log, &opts, chunk, true);
            assert_eq!(json(&got), json(&want), "{engine:?}, chunks of {chunk}");
        }
    }
}

#[test]
fn a_long_log_with_a_line_longer_than_a_chunk_reads_as_line_by_line() {
    // `feed` reads each whole line ahead as it comes: a line cut at MAX_LINE
    // and longer than some chunks, chunks ending inside it and inside a stats line.
    let mut log = Vec::new();
    let parts = inputs();
    let mut rounds = 0;
    while log.len() < 3 << 20 {
        for (_, bytes) in &parts {
            log.extend_from_slice(bytes);
            log.push(b'\n');
        }
        if rounds == 0 {
            log.extend(std::iter::repeat_n(b'x', 700 * 1024));
            log.extend_from_slice(b" #running-req: 5\n");
        }
        rounds += 1;
    }
    let want = common::analyze_line_by_line(&log, Options::default());
    assert!(want.input.overlong_lines >= 1 && want.input.stat_lines > 1000);
    assert_eq!(json(&common::analyze(&log)), json(&want), "whole");
    for chunk in [100_000, 524_289, 1 << 20] {
        let mut a = Analyzer::new(Options::default());
        for c in log.chunks(chunk) {
            a.feed(c);
        }
        assert_eq!(json(&a.finish()), json(&want), "chunks of {chunk}");
    }
}

/// Request-log lines (SGLang's `Receive:`/`Finish:`, vLLM's `Received
/// request`/`Added request`: a busy server's commonest lines, often KBs of
/// prompt) are labelled ahead as the parser labels them in order, so the
/// analyzer does not read them again; the report is the line-by-line one.
#[test]
fn request_log_lines_are_read_ahead_and_labelled_as_in_order() {
    let prompt = |k: usize| {
        let words = [
            "the", "Decode", "batch", "Received", "memory", "cache:", "a=b,",
        ];
        (0..300)
            .map(|i| words[(i * 7 + k) % words.len()])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut sglang = String::new();
    let mut vllm = String::new();
    for k in 0..60 {
        let s = 10 + k % 50;
        sglang.push_str(&format!("[2026-02-24 10:55:{s:02} TP0] Decode batch, #running-req: {}, #token: 81290, token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 4\n", 50 + k % 7));
        sglang.push_str(&format!(
            "[2026-02-24 10:55:{s:02}] Receive: obj=GenerateReqInput(text='{}', rid='r{k}')\n",
            prompt(k)
        ));
        sglang.push_str(&format!("[2026-02-24 10:55:{s:02}] Finish: obj=GenerateReqInput(rid='r{k}'), out={{'text': '{}', 'meta_info': {{'id': 'r{k}', 'prompt_tokens': 431, 'completion_tokens': 512, 'cached_tokens': 0, 'e2e_latency': 12.5}}}}\n", prompt(k + 1)));
        sglang.push_str(&format!("[2026-02-24 10:55:{s:02}] INFO:     127.0.0.1:{} - \"POST /generate HTTP/1.1\" 200 OK\n", 30000 + k));
        vllm.push_str(&format!("INFO 02-24 10:55:{s:02} [logger.py:43] Received request cmpl-{k}: prompt: '{}', params: SamplingParams(n=1, max_tokens=1024), prompt_token_ids: [1, 2, 3], lora_request: None.\n", prompt(k)));
        vllm.push_str(&format!(
            "INFO 02-24 10:55:{s:02} [async_llm.py:270] Added request cmpl-{k}.\n"
        ));
        if k % 10 == 0 {
            vllm.push_str(&format!("INFO 02-24 10:55:{s:02} [loggers.py:123] Engine 000: Avg prompt throughput: 7599.0 tokens/s, Avg generation throughput: 1108.2 tokens/s, Running: {} reqs, Waiting: 0 reqs, GPU KV cache usage: 75.8%, Prefix cache hit rate: 0.0%\n", 100 + k));
        }
    }
    for (name, log) in [("sglang", sglang), ("vllm", vllm)] {
        let opts = Options::default();
        let want = common::analyze_line_by_line(log.as_bytes(), opts.clone());
        assert_eq!(
            want.input.other_lines_by_kind.get("request_log"),
            Some(&120),
            "{name}: {:?}",
            want.input.other_lines_by_kind
        );
        let (got, read) = prepared(log.as_bytes(), &opts, 4096, true);
        assert_eq!(json(&got), json(&want), "{name}");
        assert_eq!(
            read as u64, want.input.lines,
            "{name}: every line read ahead"
        );
    }
}
