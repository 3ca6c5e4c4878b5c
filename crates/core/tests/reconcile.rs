//! Client versus server: summary-block, JSON and request-line parsers,
//! and the reconciliation against simulated runs with known ground truth.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

mod common;

use batchlens_core::client::{parse_client_file, parse_finish, ClientFigures};
use batchlens_core::report::Reconciliation;
use batchlens_core::{analyze, render, Options, Report};
use batchlens_sim::{simulate, IdleGap, SimConfig, SimOutcome};

fn client_fixture(name: &str) -> Vec<u8> {
    common::fixture(&format!("client/{name}"))
}

#[test]
fn sglang_bench_serving_block() {
    let c = parse_client_file(&client_fixture("sglang_bench_serving_0.4.0.txt")).unwrap();
    assert_eq!(c.tool, "sglang");
    assert_eq!(c.source, "sglang_bench_serving");
    assert_eq!(c.output_tok_s, Some(500.0));
    assert_eq!(c.duration_s, Some(612.48));
    assert_eq!(c.completed_requests, Some(1000));
    assert_eq!(c.total_output_tokens, Some(306_240));
    assert_eq!(c.max_concurrency, Some(128), "the 0.4.0 'reqeuest' typo");
    assert_eq!(c.request_rate.as_deref(), Some("inf"));
    assert_eq!(c.mean_concurrency, Some(101.37));
    assert_eq!(c.mean_ttft_ms, Some(15234.77));
    assert_eq!(c.p99_ttft_ms, Some(60011.02));
    assert_eq!(c.mean_e2e_latency_ms, Some(62078.12));
    assert_eq!(c.mean_itl_ms, Some(152.88));
    assert_eq!(c.total_tok_s, Some(991.83));
}

#[test]
fn vllm_bench_serve_block() {
    let c = parse_client_file(&client_fixture("vllm_bench_serve_0.10.txt")).unwrap();
    assert_eq!(c.tool, "vllm");
    assert_eq!(c.source, "vllm_bench_serve");
    assert_eq!(c.output_tok_s, Some(815.46));
    assert_eq!(c.requests_per_s, Some(4.15));
    assert_eq!(c.completed_requests, Some(500));
    assert_eq!(c.failed_requests, Some(3));
    assert_eq!(c.max_concurrency, Some(64));
    assert_eq!(
        c.total_tok_s,
        Some(1664.91),
        "'Total Token throughput' (≤ 0.10)"
    );
    assert_eq!(c.mean_tpot_ms, Some(71.3));
    assert_eq!(c.mean_e2e_latency_ms, Some(15300.4), "'Mean E2EL (ms)'");
    assert_eq!(c.p99_e2e_latency_ms, Some(29011.7));
}

#[test]
fn a_block_with_crlf_and_indentation_still_reads() {
    let text = String::from_utf8(client_fixture("vllm_bench_serve_0.10.txt")).unwrap();
    let messy: String = text.lines().map(|l| format!("  {l}   \r\n")).collect();
    let c = parse_client_file(messy.as_bytes()).unwrap();
    assert_eq!(c.output_tok_s, Some(815.46));
    assert_eq!(c.duration_s, Some(120.55));
}

#[test]
fn save_result_json_both_tools() {
    let s = parse_client_file(&client_fixture("sglang_save_result.jsonl")).unwrap();
    assert_eq!(
        (s.tool.as_str(), s.source.as_str()),
        ("sglang", "save_result_json")
    );
    assert_eq!(s.output_tok_s, Some(500.0));
    assert_eq!(s.duration_s, Some(612.48));
    assert_eq!(s.completed_requests, Some(1000));
    assert_eq!(s.mean_e2e_latency_ms, Some(62078.12));
    let v = parse_client_file(&client_fixture("vllm_save_result.json")).unwrap();
    assert_eq!(v.tool, "vllm");
    assert_eq!(v.output_tok_s, Some(815.46));
    assert_eq!(v.failed_requests, Some(3));
    assert_eq!(v.mean_e2e_latency_ms, Some(15300.4));
    // Totals alone are enough.
    let t = parse_client_file(br#"{"duration": 100.0, "total_output_tokens": 50000}"#).unwrap();
    assert_eq!(t.output_rate(), Some(500.0));
}

#[test]
fn bad_client_files_say_why() {
    let e = parse_client_file(b"hello\nworld\n").unwrap_err();
    assert!(e.contains("Serving Benchmark Result"), "{e}");
    let e = parse_client_file(b"{\"foo\": 1}").unwrap_err();
    assert!(e.contains("output_throughput"), "{e}");
    let e = parse_client_file(b"{not json").unwrap_err();
    assert!(e.contains("does not parse"), "{e}");
}

const FINISH_PY: &str = "[2026-02-24 10:55:40] Finish: obj=GenerateReqInput(validation_time=1.1e-05, received_time=1771535999.49, text=None, input_ids=[1, 2], sampling_params={'max_new_tokens': 512, 'temperature': 0.0}, rid='batch-1771535999307121343-30', stream=False), out={'text': 'Hello', 'meta_info': {'id': 'batch-1771535999307121343-30', 'finish_reason': {'type': 'length', 'length': 512}, 'prompt_tokens': 431, 'completion_tokens': 512, 'cached_tokens': 128, 'e2e_latency': 12.5}}";

const FINISH_JSON: &str = r#"{"timestamp": "2026-02-24T10:55:42.120", "event": "request.finished", "rid": "a1", "obj": {"rid": "a1"}, "out": {"text": "x", "meta_info": {"prompt_tokens": 200, "completion_tokens": 88, "cached_tokens": 0, "e2e_latency": 3.25}}}"#;

#[test]
fn finish_lines_python_and_json() {
    let f = parse_finish(FINISH_PY.as_bytes());
    assert_eq!(f.prompt_tokens, Some(431));
    assert_eq!(f.completion_tokens, Some(512));
    assert_eq!(f.cached_tokens, Some(128));
    assert_eq!(f.e2e_latency_s, Some(12.5));
    let j = parse_finish(FINISH_JSON.as_bytes());
    assert_eq!(
        (j.prompt_tokens, j.completion_tokens, j.e2e_latency_s),
        (Some(200), Some(88), Some(3.25))
    );
    // A key that only starts like one is not read.
    let g = parse_finish(b"{'prompt_tokens_details': 7, 'completion_tokens': 3}");
    assert_eq!((g.prompt_tokens, g.completion_tokens), (None, Some(3)));
}

fn decode(ts: &str, running: u32, gen: f64, queued: u32) -> String {
    format!(
        "[{ts} TP0] Decode batch, #running-req: {running}, #token: {}, token usage: 0.50, cuda graph: True, gen throughput (token/s): {gen:.2}, #queue-req: {queued}, \n",
        running * 900
    )
}

fn stamp(t: u32) -> String {
    format!("2026-02-24 10:{:02}:{:02}", 40 + t / 60, t % 60)
}

#[test]
fn request_lines_and_blocks_in_a_log_are_known_lines() {
    let mut log = String::new();
    for i in 0..10u32 {
        log.push_str(&decode(&stamp(i * 2), 10, 300.0, 0));
        log.push_str(&format!(
            "[{}] Receive: obj=GenerateReqInput(rid='r{i}')\n",
            stamp(i * 2)
        ));
        log.push_str(&FINISH_PY.replace("10:55:40", &stamp(i * 2 + 1)[11..]));
        log.push('\n');
    }
    log.push_str(FINISH_JSON);
    log.push('\n');
    log.push_str(&String::from_utf8(client_fixture("sglang_bench_serving_0.4.0.txt")).unwrap());
    let r = analyze(log.as_bytes(), Options::default());
    assert_eq!(
        r.input.unrecognized_lines, 0,
        "{:?}",
        r.input.unrecognized_examples
    );
    assert_eq!(r.input.other_lines_by_kind.get("client_summary"), Some(&27));
    assert_eq!(r.input.other_lines_by_kind.get("request_log"), Some(&21));
    let q = r.requests.as_ref().expect("request stats");
    assert_eq!(q.finished_requests, 11);
    assert_eq!(q.received_requests, 10);
    assert_eq!(q.completion_tokens, 10 * 512 + 88);
    assert!(q.completion_tok_s.is_some());
    assert_eq!(q.e2e_latency_s.unwrap().max, 12.5);
    let c = r.client.as_ref().expect("client block from the log");
    assert_eq!(c.output_tok_s, Some(500.0));
    assert!(r.reconciliation.is_some());
}

#[test]
fn request_log_alone_gives_client_figures() {
    let mut log = String::new();
    for i in 0..30u32 {
        log.push_str(&decode(&stamp(i * 2), 8, 400.0, 0));
        log.push_str(&FINISH_PY.replace("10:55:40", &stamp(i * 2 + 1)[11..]));
        log.push('\n');
    }
    let r = analyze(log.as_bytes(), Options::default());
    let c = r.client.as_ref().expect("figures from Finish lines");
    assert_eq!(c.source, "request_log");
    // 30 × 512 tokens from 12.5 s before the first finish (t=1 s) to the last (t=59 s).
    let expect = 30.0 * 512.0 / (58.0 + 12.5);
    assert!(
        (c.output_tok_s.unwrap() - expect).abs() < 0.01 * expect,
        "{c:?}"
    );
}

/// Runs a simulated scenario with the client's bench_serving block at the end.
fn sim_run(mut cfg: SimConfig) -> (SimOutcome, Report) {
    cfg.bench_summary = true;
    let mut text = String::new();
    let out = simulate(&cfg, &mut |l| {
        text.push_str(l);
        text.push('\n');
    });
    let report = analyze(text.as_bytes(), Options::default());
    (out, report)
}

fn part(r: &Reconciliation, cause: &str) -> f64 {
    r.parts
        .iter()
        .find(|p| p.cause == cause)
        .unwrap_or_else(|| panic!("no part {cause}"))
        .tok_s
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-9)
}

/// Checks one simulated run; returns the relative errors (server rate, client rate,
/// idle part, unexplained) for the report.
fn check(name: &str, cfg: SimConfig, steady_reference: bool) -> [f64; 4] {
    let (out, report) = sim_run(cfg);
    let r = report
        .reconciliation
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: no reconciliation"));
    let causes: Vec<&str> = r.parts.iter().map(|p| p.cause.as_str()).collect();
    assert_eq!(
        causes,
        ["idle", "warm_up_drain", "retraction", "prefill"],
        "{name}"
    );
    assert!(r.parts.iter().all(|p| !p.evidence.is_empty()), "{name}");
    // The server's generation rate while busy: the steady rate when the run has no idle
    // stretches, else decode tokens ÷ busy time (the simulator's steady window spans gaps).
    let busy_s = out.decode_s + out.prefill_s;
    let server_truth = if steady_reference {
        out.steady_gen_tok_s
    } else {
        out.decode_tokens as f64 / busy_s
    };
    let e_server = rel(r.server_gen_tok_s, server_truth);
    let e_client = rel(r.client_tok_s, out.client_output_tok_s);
    // Idle part: the server rate × the simulator's idle time ÷ the client's window.
    let idle_truth = r.server_gen_tok_s * out.idle_s / out.last_completion_s;
    let e_idle = (part(r, "idle") - idle_truth).abs() / r.server_gen_tok_s;
    let sum: f64 = r.parts.iter().map(|p| p.tok_s).sum::<f64>() + r.unexplained_tok_s;
    assert!(
        (sum - (r.server_gen_tok_s - r.client_tok_s)).abs() < 1e-3 * r.server_gen_tok_s,
        "{name}: parts do not add up"
    );
    println!(
        "{name}: server {:.1} (truth {:.1}, err {:.2}%), client {:.1} (truth {:.1}, err {:.2}%), idle part {:.1} (truth {:.1}), warm-up/drain {:.1}, prefill {:.1}, unexplained {:.2}% of server",
        r.server_gen_tok_s,
        server_truth,
        100.0 * e_server,
        r.client_tok_s,
        out.client_output_tok_s,
        100.0 * e_client,
        part(r, "idle"),
        idle_truth,
        part(r, "warm_up_drain"),
        part(r, "prefill"),
        100.0 * r.unexplained_fraction
    );
    assert!(
        e_server < 0.05,
        "{name}: server rate off by {:.1}%",
        100.0 * e_server
    );
    assert!(
        e_client < 0.005,
        "{name}: client rate off by {:.2}%",
        100.0 * e_client
    );
    assert!(
        e_idle < 0.05,
        "{name}: idle part off by {:.1}% of G",
        100.0 * e_idle
    );
    assert!(
        r.unexplained_fraction.abs() < 0.05,
        "{name}: {:.1}% unexplained",
        100.0 * r.unexplained_fraction
    );
    [e_server, e_client, e_idle, r.unexplained_fraction.abs()]
}

fn shorter(name: &str, secs: f64) -> SimConfig {
    let mut c = SimConfig::preset(name).unwrap();
    c.duration_s = c.duration_s.min(secs);
    c
}

/// DONE-WHEN: simulated runs whose gap comes from idle time, warm-up/drain and
/// retraction reconcile to within 5% with each part named.
#[test]
fn simulated_runs_reconcile_within_five_percent() {
    // KV-bound seed-story server with retractions and a long drain.
    let kv = check("kv_bound", shorter("kv_bound", 600.0), true);
    // Retraction-heavy.
    let retr = check("retraction", shorter("retraction", 600.0), true);
    // A client that stops sending twice: the server idles.
    let mut idle = shorter("client_underload", 600.0);
    idle.idle_gaps = vec![
        IdleGap {
            start_s: 150.0,
            end_s: 250.0,
        },
        IdleGap {
            start_s: 400.0,
            end_s: 460.0,
        },
    ];
    let id = check("client_underload+idle gaps", idle, false);
    let mut capped = shorter("running_cap", 600.0);
    capped.idle_gaps = vec![IdleGap {
        start_s: 200.0,
        end_s: 300.0,
    }];
    let cap = check("running_cap+idle gap", capped, false);
    let vllm = check("vllm_kv_bound", shorter("vllm_kv_bound", 600.0), true);
    let v0 = check("vllm_v0_kv_bound", shorter("vllm_v0_kv_bound", 600.0), true);
    for e in [kv, retr, id, cap, vllm, v0] {
        assert!(e.iter().all(|x| *x < 0.05));
    }
}

#[test]
fn idle_gaps_are_the_named_cause_when_the_client_pauses() {
    let mut cfg = shorter("client_underload", 600.0);
    cfg.idle_gaps = vec![IdleGap {
        start_s: 100.0,
        end_s: 300.0,
    }];
    let (_, report) = sim_run(cfg);
    let r = report.reconciliation.unwrap();
    let idle = part(&r, "idle");
    assert!(r.parts.iter().all(|p| p.tok_s <= idle), "{r:?}");
    assert!(r.advice.contains("client side"), "{}", r.advice);
}

/// The seed story: ~885 tok/s decode lines while busy, the server idle about a third
/// of the time waiting for the client, and a client that measured 500 tok/s.
fn seed_story_log() -> String {
    let mut log = String::new();
    // Three busy stretches of 132 s (lines every 2 s) with 22 s ramps at both ends,
    // separated by 104 s silences: ~204 s of 604 s idle (34%).
    let mut t = 0u32;
    for seg in 0..3 {
        for k in 0..=66u32 {
            let s = k * 2;
            let frac = (s.min(132 - s) as f64 / 22.0).min(1.0);
            // The batch fills from 8 to 48 requests, then runs full at 56.
            let (running, gen) = if frac < 1.0 {
                ((8.0 + 40.0 * frac).round() as u32, 126.0 + 632.0 * frac)
            } else {
                (56, 885.0)
            };
            log.push_str(&decode(&stamp_s(t + s), running, gen, 0));
        }
        t += 132;
        if seg < 2 {
            t += 104;
        }
    }
    log
}

fn stamp_s(t: u32) -> String {
    format!("2026-02-24 10:{:02}:{:02}", t / 60, t % 60)
}

#[test]
fn seed_story_500_versus_885_in_plain_words() {
    let opts = Options {
        client: ClientFigures::from_flags(Some(500.0), None),
        ..Options::default()
    };
    let report = analyze(seed_story_log().as_bytes(), opts);
    let r = report.reconciliation.as_ref().expect("reconciliation");
    assert!(rel(r.server_gen_tok_s, 885.0) < 0.01, "{r:?}");
    assert_eq!(r.client_tok_s, 500.0);
    assert!(r.window_assumed);
    let idle = part(r, "idle");
    assert!(rel(idle, 885.0 * 0.34) < 0.05, "idle part {idle}");
    let ramp = part(r, "warm_up_drain");
    assert!(ramp > 50.0 && ramp < 120.0, "warm-up/drain {ramp}");
    assert!(r.unexplained_fraction.abs() < 0.05, "{r:?}");
    let text = render::text(&report, false);
    println!("{text}");
    for phrase in [
        "Client versus server",
        "The server generated ~885 tok/s while busy",
        "your client measured 500 tok/s over its whole",
        "of the gap is the server waiting for your client (idle 34% of the time)",
        "warm-up and drain",
        "For capacity planning believe the server figure (885 tok/s) for what the GPU can do",
        "the client figure (500 tok/s) for what your pipeline gets",
    ] {
        assert!(text.contains(phrase), "missing {phrase:?} in\n{text}");
    }
    let md = render::markdown(&report);
    assert!(md.contains("### Client versus server"), "{md}");
    let json = serde_json::to_value(&report).unwrap();
    let rc = &json["reconciliation"];
    for k in [
        "server_gen_tok_s",
        "client_tok_s",
        "gap_fraction",
        "parts",
        "unexplained_fraction",
    ] {
        assert!(!rc[k].is_null(), "{k}");
    }
    assert!(rc["parts"][0]["cause"].is_string() && rc["parts"][0]["evidence"].is_string());
}

#[test]
fn no_client_figure_no_reconciliation() {
    let report = analyze(seed_story_log().as_bytes(), Options::default());
    assert!(report.reconciliation.is_none());
    assert!(report.client.is_none());
    let json = serde_json::to_value(&report).unwrap();
    assert!(json.get("reconciliation").is_none());
}

#[test]
fn a_request_rate_alone_uses_tokens_per_request_from_the_request_log() {
    let mut log = String::new();
    for i in 0..30u32 {
        log.push_str(&decode(&stamp(i * 2), 8, 400.0, 0));
        log.push_str(&FINISH_PY.replace("10:55:40", &stamp(i * 2 + 1)[11..]));
        log.push('\n');
    }
    let opts = Options {
        client: ClientFigures::from_flags(None, Some(0.5)),
        ..Options::default()
    };
    let r = analyze(log.as_bytes(), opts);
    let rc = r.reconciliation.as_ref().expect("reconciliation");
    assert_eq!(rc.client_tok_s, 256.0, "0.5 req/s × 512 tokens");
    assert!(rc.notes.iter().any(|n| n.contains("requests/s only")));
    // Without a request log there is nothing to turn requests into tokens.
    let opts = Options {
        client: ClientFigures::from_flags(None, Some(0.5)),
        ..Options::default()
    };
    let r = analyze(seed_story_log().as_bytes(), opts);
    assert!(r.reconciliation.is_none());
    assert_eq!(r.client.unwrap().requests_per_s, Some(0.5));
}

/// A log that holds more than the client's run (an earlier warm-up run, then a long
/// pause): the busiest stretch of the client's window length is compared.
#[test]
fn a_longer_log_is_matched_to_the_client_window() {
    let mut log = String::new();
    // 120 s of light traffic from 09:50, then silence until the seed story at 10:00.
    for k in 0..60u32 {
        let t = k * 2;
        log.push_str(&decode(
            &format!("2026-02-24 09:{:02}:{:02}", 50 + t / 60, t % 60),
            4,
            80.0,
            0,
        ));
    }
    log.push_str(&seed_story_log());
    let client = ClientFigures {
        source: "test".into(),
        output_tok_s: Some(500.0),
        duration_s: Some(604.0),
        ..ClientFigures::default()
    };
    let opts = Options {
        client: Some(client),
        ..Options::default()
    };
    let report = analyze(log.as_bytes(), opts);
    let r = report.reconciliation.unwrap();
    assert!(
        r.window_start_s >= 590.0,
        "window from {} s",
        r.window_start_s
    );
    assert!(rel(r.server_gen_tok_s, 885.0) < 0.01, "{r:?}");
    assert!(rel(part(&r, "idle"), 885.0 * 0.34) < 0.06, "{r:?}");
    assert!(
        r.notes.iter().any(|n| n.contains("busiest")),
        "{:?}",
        r.notes
    );
}

/// A pasted block cut short is closed by the first line that is not a row; log lines
/// after it are not taken for rows.
#[test]
fn a_cut_block_does_not_swallow_the_log() {
    let mut log = String::new();
    log.push_str("============ Serving Benchmark Result ============\n");
    log.push_str("Successful requests:                     100       \n");
    log.push_str("Benchmark duration (s):                  50.00     \n");
    log.push_str("INFO 02-24 10:55:32 [api_server.py:1] something: else\n");
    log.push_str("Output token throughput (tok/s):         123.00    \n");
    for i in 0..5u32 {
        log.push_str(&decode(&stamp(i * 2), 10, 300.0, 0));
    }
    let r = analyze(log.as_bytes(), Options::default());
    assert_eq!(r.input.other_lines_by_kind.get("client_summary"), Some(&3));
    let c = r.client.expect("the part that was read");
    assert_eq!(c.completed_requests, Some(100));
    assert_eq!(c.duration_s, Some(50.0));
    assert_eq!(
        c.output_tok_s, None,
        "a row after the cut is not part of the block"
    );
}
