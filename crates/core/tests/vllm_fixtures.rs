//! Real vLLM logs pasted in public issues (sources in tests/fixtures/SOURCES.md),
//! plus `synthetic_*` files built from the format notes for what no paste shows:
//! every stats record a person would count is read (their reports' snapshots are in
//! `fixture_snapshots.rs`).

mod common;
use common::*;

/// (fixture, stats records read in full, stats records read in part).
/// Counted by hand from the files (the INDEX's "Stat lines" column).
const COUNTS: &[(&str, u64, u64)] = &[
    (
        "synthetic_v0-preemption-warnings-interleaved-startup-no-dot",
        5,
        0,
    ),
    ("synthetic_v1-033-dp2-preemptions-startup-ansi", 8, 0),
    // Wrapped inside the header (joined), two glued records, the last one cut at EOF.
    (
        "synthetic_v1-docker-aggregated-wrapped-header-glued-cut-end",
        4,
        1,
    ),
    ("synthetic_v1-year-rollover-dec31-jan1", 3, 0),
    ("vllm_01_v1-prefill-heavy-waiting90", 5, 0),
    ("vllm_02_v0-heartbeat-kv-92pct-16running", 5, 0),
    ("vllm_04_v1-single-line-waiting4-prefix-hit", 1, 0),
    ("vllm_05_v1-mtp-kv-95pct-waiting43", 5, 0),
    ("vllm_07_v0-single-request-idle-client", 6, 0),
    ("vllm_08_preemption-warning-bare", 0, 0),
    ("vllm_10_v0-swap-preemption-pending98", 2, 0),
    ("vllm_11_v1-lmcache-preempt-resume", 0, 0),
    ("vllm_13_v1-preemption-inflates-prefix-hit", 1, 0),
    ("vllm_14_v0-debug-level-stuck-prefill-metrics-scrape", 4, 0),
    ("vllm_16_v0-double-timestamp-4090", 1, 0),
    // 5 wrapped records joined back, 1 overwritten mid-record (`Running: 32 $INFO …`).
    ("vllm_17_v0-terminal-hard-wrapped-lines", 5, 1),
    ("vllm_19_v1-s390x-cpu-single-req", 5, 0),
    ("vllm_20_v0-tenstorrent-draining-23running", 5, 0),
    ("vllm_22_v1-dynamo-kvbm-interleaved-rust-log", 1, 0),
    ("vllm_23_v0-tenstorrent-dp16-32running-slow", 5, 0),
    ("vllm_25_v1-specdecode-100pct-accept-loop", 2, 0),
    ("vllm_26_v0-tt-metal-loguru-mixed-received-request", 2, 0),
    ("vllm_28_ibm-fork-tgis-style-response-log", 0, 0),
    ("vllm_29_v1-docker-hardwrap-kv-full-waiting63", 3, 0),
    // 3 records on 2 physical lines.
    ("vllm_31_v1-concatenated-lines-no-newline", 3, 0),
    ("vllm_32_v1-idle-gap-then-single-request-kv-grows", 5, 0),
    ("vllm_34_v1-startup-banner-unicode-trailing-spaces", 0, 0),
    ("vllm_35_v1-ray-data-batch-underutilization", 3, 0),
    ("vllm_37_v0-fully-idle-zeros", 6, 0),
    ("vllm_38_ascend-engine001-deferred-external-prefix", 2, 0),
    ("vllm_39_v0-hang-pending-rising-nothing-runs", 3, 0),
    ("vllm_40_v0-crawl-two-requests-0.4-tok-s", 4, 0),
    (
        "vllm_41_v1-debug-one-request-zero-tokens-health-checks",
        4,
        0,
    ),
    ("vllm_42_v1-dp8-two-engines-both-kv-full-queued", 2, 0),
    (
        "vllm_43_v1-xpu-reported-hang-one-running-14-waiting-kv77",
        3,
        0,
    ),
    ("vllm_44_v1-mfu-metrics-gpt-oss-120b-b200-tp1", 4, 0),
    ("vllm_45_v1-mfu-metrics-dp2-engines", 4, 0),
    // Step lines are not stats lines.
    ("vllm_46_v1-iteration-details-pr-example", 0, 0),
    // The last step line is cut: a parse failure.
    (
        "synthetic_v1-iteration-details-llama8b-steady-decode",
        11,
        1,
    ),
];

/// Of the damaged records above, the `Iteration(N)` step lines.
const STEP_LINES_DAMAGED: &[(&str, u64)] =
    &[("synthetic_v1-iteration-details-llama8b-steady-decode", 1)];

fn report(name: &str) -> batchlens_core::Report {
    analyze(&fixture(&format!("vllm/{name}.log")))
}

#[test]
fn every_vllm_fixture_has_its_stats_records_counted_exactly() {
    let all = fixtures_in("vllm");
    assert_eq!(
        all.len(),
        COUNTS.len(),
        "a fixture without an expected count"
    );
    for (name, full, damaged) in COUNTS {
        let r = report(name);
        assert_eq!(
            (r.input.stat_lines, r.input.damaged_stat_lines),
            (*full, *damaged),
            "{name}"
        );
        if full + damaged > 0 {
            assert_eq!(r.engine, "vllm", "{name}");
            // A damaged step line is a parse failure without a stats record.
            let steps = STEP_LINES_DAMAGED
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |(_, k)| *k);
            assert_eq!(
                r.input.stat_lines_by_kind.get("interval"),
                Some(&(full + damaged - steps)),
                "{name}"
            );
        }
        // Every physical line is accounted for exactly once.
        let i = &r.input;
        assert_eq!(i.accounted_lines(), i.lines, "{name}: line accounting");
    }
}

#[test]
fn other_engines_lines_are_not_claimed() {
    use batchlens_core::parse::{parser_for, LineParser, Outcome};
    for folder in ["sglang", "other"] {
        for (name, bytes) in fixtures_in(folder) {
            let mut p = parser_for(batchlens_core::Engine::Vllm);
            let mut out = Vec::new();
            for (i, line) in bytes.split(|&c| c == b'\n').enumerate() {
                let o = p.parse(line, i as u64 + 1, true, &mut out);
                assert_eq!(
                    o,
                    Outcome::NotMine,
                    "{folder}/{name}:{}: {}",
                    i + 1,
                    String::from_utf8_lossy(line)
                );
            }
            assert!(out.is_empty(), "{name}");
        }
    }
    // And SGLang's parser leaves every vLLM line alone.
    for (name, bytes) in fixtures_in("vllm") {
        let mut p = parser_for(batchlens_core::Engine::Sglang);
        let mut out = Vec::new();
        for (i, line) in bytes.split(|&c| c == b'\n').enumerate() {
            let o = p.parse(line, i as u64 + 1, true, &mut out);
            assert_eq!(o, Outcome::NotMine, "vllm/{name}:{}", i + 1);
        }
    }
}

#[test]
fn hard_wrapped_lines_are_joined() {
    let r = report("vllm_17_v0-terminal-hard-wrapped-lines");
    assert_eq!(r.input.joined_wrapped_lines, 5);
    assert_eq!(r.input.glued_records, 1);
    let run = r.summary.running_requests.unwrap();
    assert_eq!((run.mean, run.max, run.count), (32.0, 32.0, 5));
    assert_eq!(r.input.unrecognized_lines, 0);

    let r = report("vllm_29_v1-docker-hardwrap-kv-full-waiting63");
    assert_eq!(r.input.joined_wrapped_lines, 3);
    let kv = r.summary.kv_usage.unwrap();
    assert!((kv.mean - 0.9873).abs() < 0.001, "{kv:?}");
    assert_eq!(r.summary.queued_requests.unwrap().max, 63.0);
    // The engine's own stamp is used, not docker's (a different time zone).
    assert_eq!(r.first_timestamp.as_deref(), Some("10-14 17:07:38"));
    assert_eq!(r.span_seconds, 20.0);
}

#[test]
fn glued_records_are_split() {
    let r = report("vllm_31_v1-concatenated-lines-no-newline");
    assert_eq!(r.input.glued_records, 1);
    assert_eq!(r.span_seconds, 20.0);
    let kv = r.summary.kv_usage.unwrap();
    assert_eq!((kv.max, kv.count), (0.919, 3));
    assert!((kv.mean - 0.9157).abs() < 0.0001, "{kv:?}");

    let r = report("synthetic_v1-docker-aggregated-wrapped-header-glued-cut-end");
    assert_eq!(r.input.joined_wrapped_lines, 1);
    assert_eq!(r.input.glued_records, 1);
    assert_eq!(r.sources.len(), 1);
    assert_eq!(r.sources[0].source, "aggregated");
}

#[test]
fn bare_preemption_warning_gives_the_cumulative_count() {
    let r = report("vllm_08_preemption-warning-bare");
    assert_eq!(r.input.other_lines_by_kind.get("preemption"), Some(&1));
    assert_eq!(r.summary.retractions, 101);
    assert_eq!(r.summary.retracted_requests, 101);

    let r = report("synthetic_v0-preemption-warnings-interleaved-startup-no-dot");
    assert_eq!(r.events.preemptions, 100);
    assert_eq!(r.summary.retracted_requests, 100);
}

#[test]
fn v1_preemptions_part_is_counted() {
    let r = report("synthetic_v1-033-dp2-preemptions-startup-ansi");
    // `Preemptions: 3` then `Preemptions: 1`, per interval.
    assert_eq!(r.summary.retracted_requests, 4);
    assert_eq!(r.summary.retractions, 2);
}

#[test]
fn engines_are_kept_apart_and_combined() {
    let r = report("vllm_38_ascend-engine001-deferred-external-prefix");
    assert_eq!(r.sources.len(), 1);
    assert_eq!(r.sources[0].source, "Engine 001");

    let r = report("synthetic_v1-033-dp2-preemptions-startup-ansi");
    let names: Vec<_> = r.sources.iter().map(|s| s.source.as_str()).collect();
    assert_eq!(names, ["Engine 000", "Engine 001"]);
    // Counts summed over the two engines each round, KV averaged.
    let run = r.summary.running_requests.unwrap();
    // Rounds: 60+58, 64+64, 62+63, 64+64.
    assert_eq!((run.mean, run.max, run.count), (124.75, 128.0, 4));
    let kv = r.summary.kv_usage.unwrap();
    assert!((kv.mean - 0.9495).abs() < 0.0001, "{kv:?}");
    assert_eq!(r.summary.queued_requests.unwrap().max, 42.0);
}

#[test]
fn startup_capacity_lines_fill_the_config() {
    let r = report("synthetic_v1-033-dp2-preemptions-startup-ansi");
    let c = &r.config;
    assert_eq!(c.kv_capacity_tokens, Some(380_928));
    assert_eq!(c.max_concurrency_x, Some(11.62));
    assert_eq!(c.max_running_requests, Some(128));
    assert_eq!(c.gpu_memory_utilization, Some(0.95));
    assert_eq!(c.max_batched_tokens, Some(8192));
    assert_eq!(c.data_parallel_size, Some(2));
    assert_eq!(c.context_length, Some(32_768));
    assert_eq!(c.prefix_caching, Some(true));
    assert_eq!(c.model.as_deref(), Some("Qwen/Qwen3-8B"));
    assert_eq!(c.engine_version.as_deref(), Some("0.33.0"));
    assert_eq!(c.kv_cache_dtype.as_deref(), Some("auto"));

    let r = report("synthetic_v0-preemption-warnings-interleaved-startup-no-dot");
    let c = &r.config;
    assert_eq!(c.kv_blocks, Some(27_000));
    assert_eq!(c.cpu_kv_blocks, Some(2048));
    assert_eq!(c.block_size, Some(16));
    assert_eq!(c.kv_capacity_tokens, Some(27_000 * 16));
    assert_eq!(c.max_running_requests, Some(256));
    assert_eq!(c.swap_space_gb, Some(4.0));
    assert_eq!(c.max_concurrency_x, Some(52.73));

    // No block size stated: vLLM's default of 16.
    let r = report("synthetic_v1-year-rollover-dec31-jan1");
    assert_eq!(r.config.kv_capacity_tokens, Some(4096 * 16));

    let r = report("vllm_34_v1-startup-banner-unicode-trailing-spaces");
    assert_eq!(r.input.unrecognized_lines, 0);
    assert_eq!(r.config.model.as_deref(), Some("google/gemma-4-31B-it"));
}

#[test]
fn year_rollover_keeps_order() {
    let r = report("synthetic_v1-year-rollover-dec31-jan1");
    assert_eq!(r.span_seconds, 20.0);
    assert_eq!(r.input.clock_regressions, 0);
    assert_eq!(r.first_timestamp.as_deref(), Some("12-31 23:59:50"));
    assert_eq!(r.last_timestamp.as_deref(), Some("01-01 00:00:10"));
}

#[test]
fn percentages_become_fractions_and_both_v0_endings_read() {
    let r = report("vllm_04_v1-single-line-waiting4-prefix-hit");
    assert_eq!(r.summary.kv_usage.unwrap().mean, 0.579);
    assert_eq!(r.summary.queued_requests.unwrap().mean, 4.0);
    // Without the final "." (early 2024).
    let r = report("vllm_16_v0-double-timestamp-4090");
    assert_eq!((r.input.stat_lines, r.input.damaged_stat_lines), (1, 0));
    assert_eq!(r.summary.kv_usage.unwrap().mean, 0.156);
    assert_eq!(r.first_timestamp.as_deref(), Some("07-08 07:17:34"));
    let r = report("synthetic_v0-preemption-warnings-interleaved-startup-no-dot");
    assert_eq!(r.summary.kv_usage.unwrap().max, 0.998);
}

#[test]
fn known_vllm_lines_are_not_unrecognized() {
    for name in [
        "vllm_02_v0-heartbeat-kv-92pct-16running",
        "vllm_11_v1-lmcache-preempt-resume",
        "vllm_13_v1-preemption-inflates-prefix-hit",
        "vllm_14_v0-debug-level-stuck-prefill-metrics-scrape",
        "vllm_25_v1-specdecode-100pct-accept-loop",
        "vllm_28_ibm-fork-tgis-style-response-log",
        "vllm_35_v1-ray-data-batch-underutilization",
        "vllm_38_ascend-engine001-deferred-external-prefix",
        "synthetic_v0-preemption-warnings-interleaved-startup-no-dot",
        "synthetic_v1-033-dp2-preemptions-startup-ansi",
    ] {
        assert_eq!(report(name).input.unrecognized_lines, 0, "{name}");
    }
}

#[test]
fn a_line_wrapped_into_three_pieces_is_joined_back() {
    let line = "INFO 01-22 18:27:20 metrics.py:449] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.7 tokens/s, Running: 7 reqs, Swapped: 1 reqs, Pending: 3 reqs, GPU KV cache usage: 2.0%, CPU KV cache usage: 0.5%.";
    let mut text = String::new();
    for piece in line.as_bytes().chunks(80) {
        text.push_str(std::str::from_utf8(piece).unwrap());
        text.push_str("\r\n");
    }
    text.push_str("INFO 01-22 18:27:25 metrics.py:449] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.7 tokens/s, Running: 7 reqs, Swapped: 1 reqs, Pending: 3 reqs, GPU KV cache usage: 2.1%, CPU KV cache usage: 0.5%.\n");
    let r = analyze(text.as_bytes());
    assert_eq!((r.input.stat_lines, r.input.damaged_stat_lines), (2, 0));
    assert_eq!(r.input.joined_wrapped_lines, 2);
    assert_eq!(r.summary.queued_requests.unwrap().mean, 3.0);
    assert_eq!(r.span_seconds, 5.0);
}

#[test]
fn a_file_mixing_engines_reports_both_and_picks_the_majority() {
    let mut mixed = fixture("sglang/sglang_01_hisparse-decode-token-usage.log");
    mixed.extend_from_slice(&fixture("vllm/vllm_01_v1-prefill-heavy-waiting90.log"));
    let r = analyze(&mixed);
    assert_eq!(r.input.stat_lines_by_engine.get("sglang"), Some(&8));
    assert_eq!(r.input.stat_lines_by_engine.get("vllm"), Some(&5));
    assert_eq!(r.engine, "sglang");
    let forced = batchlens_core::analyze(
        &mixed,
        batchlens_core::Options {
            engine: Some(batchlens_core::Engine::Vllm),
            ..Default::default()
        },
    );
    assert_eq!(forced.engine, "vllm");
    assert_eq!(forced.input.stat_lines, 5);
    assert_eq!(forced.input.stat_lines_by_engine.get("sglang"), None);
}

/// Fewer sequences is advice only against a measured batch, and only below it:
/// a log with a preemption warning and no stats line does not say how many run.
#[test]
fn fewer_sequences_are_advised_only_below_the_running_measured() {
    for (name, bytes) in fixtures_in("vllm") {
        let r = analyze(&bytes);
        let Some(d) = r.diagnosis.as_ref() else {
            continue;
        };
        for a in all_actions(&r) {
            if a.id != "fewer_seqs" {
                continue;
            }
            let n: f64 = a.flag["--max-num-seqs ".len()..].parse().expect("a number");
            let running = d.facts.running_requests;
            assert!(
                running.is_some_and(|run| n >= 1.0 && n < run),
                "{name}: {} with {running:?} running",
                a.flag
            );
        }
    }
}

/// Advice on a vLLM log names vLLM's tools and flags, never SGLang's.
#[test]
fn vllm_advice_does_not_cite_sglang() {
    for (name, bytes) in fixtures_in("vllm") {
        let r = analyze(&bytes);
        if r.engine != "vllm" {
            continue;
        }
        for a in all_actions(&r) {
            for text in [&a.flag, &a.why, &a.effect] {
                assert!(
                    !text.contains("SGLang") && !text.contains("bench_serving"),
                    "{name}: {text}"
                );
            }
        }
    }
}
