//! Real SGLang logs pasted in public issues (sources in tests/fixtures/SOURCES.md):
//! every stats line a person would count is read (their reports' snapshots are in
//! `fixture_snapshots.rs`).

mod common;
use common::*;

/// (fixture, stats lines read in full, stats lines read in part).
/// Counted by hand from the files; the damaged ones are column-truncated pastes.
const COUNTS: &[(&str, u64, u64)] = &[
    ("sglang_01_hisparse-decode-token-usage", 8, 0),
    ("sglang_02_bench-drain-largest-len", 7, 0),
    ("sglang_04_npu-truncated-columns-uvicorn", 0, 6),
    ("sglang_05_npu-tp-ep-accept-len", 4, 0),
    ("sglang_07_swa-spec-dflash-cap-len", 5, 0),
    ("sglang_08_npu-mamba-usage-prefix-cache", 5, 0),
    ("sglang_10_no-rank-prefix-uvicorn-interleaved", 4, 0),
    ("sglang_11_drain-cuda-graph-toggle-trailing-comma", 8, 0),
    ("sglang_13_retraction-collapse-after-abbreviated", 7, 0),
    ("sglang_14_jax-cache-miss-field-single-req", 9, 0),
    ("sglang_16_pd-decode-dp-ranks-preallocated", 7, 0),
    ("sglang_17_dp-attention-retracted-req-field", 3, 0),
    ("sglang_19_bench-start-queue-burst-chunked-prefill", 9, 0),
    ("sglang_20_slow-prefill-single-req-swa", 6, 0),
    ("sglang_22_hicache-container-prefetch-interleaved", 3, 0),
    ("sglang_23_deepseek-v3-kv-full-decode-oom-retract", 5, 0),
    ("sglang_25_tqdm-progress-interleaved-npu-mamba", 2, 0),
    ("sglang_26_oldest-format-new-fill-batch", 1, 0),
    ("sglang_28_chunked-prefill-cache-hit-rate-queue130", 7, 0),
    ("sglang_29_gpu0-prefix-kv-full-queue1549", 1, 0),
    ("sglang_31_double-timestamp-container-prefix", 7, 0),
    ("sglang_32_glm51-prefill-only-queue-pileup", 2, 0),
    ("sglang_34_pd-custom-logfmt-prealloc-rising", 4, 0),
    ("sglang_35_npu-tqdm-prefix-burst-start", 0, 7),
    ("sglang_37_offline-engine-tqdm-prefill-ramp-cache-hit", 7, 0),
    ("sglang_38_startup-capacity-lines-per-tp", 0, 0),
    ("sglang_40_multinode-dp-ranks-slow-gen", 8, 0),
    ("sglang_41_dp-tp-ep-pd-decode-rank-imbalance-uvicorn", 3, 0),
    ("sglang_46_docs-reference-healthy-full-load", 1, 0),
    (
        "sglang_47_custom-logfmt-spec-cuda-graph-false-vs-true",
        3,
        0,
    ),
    ("sglang_49_h200-single-prefill-line-client-28", 1, 0),
    (
        "sglang_50_pd-prefill-est-prefill-tflops-nixl-disconnect",
        2,
        0,
    ),
];

#[test]
fn every_sglang_fixture_has_its_stats_lines_counted_exactly() {
    let all = fixtures_in("sglang");
    assert_eq!(
        all.len(),
        COUNTS.len(),
        "a fixture without an expected count"
    );
    for (name, full, damaged) in COUNTS {
        let r = analyze(&fixture(&format!("sglang/{name}.log")));
        assert_eq!(
            (r.input.stat_lines, r.input.damaged_stat_lines),
            (*full, *damaged),
            "{name}"
        );
        if full + damaged > 0 {
            assert_eq!(r.engine, "sglang", "{name}");
        }
        // Every physical line is accounted for exactly once.
        let i = &r.input;
        assert_eq!(i.accounted_lines(), i.lines, "{name}: line accounting");
    }
}

#[test]
fn fixture_reports_do_not_depend_on_chunk_boundaries() {
    for folder in ["sglang", "vllm", "other"] {
        for (name, bytes) in fixtures_in(folder) {
            let whole = analyze(&bytes);
            for seed in 1..6 {
                let split = analyze_split(&bytes, &cuts(bytes.len(), 7, seed * 7919));
                assert_eq!(split, whole, "{folder}/{name} seed {seed}");
            }
            let bytewise: Vec<usize> = (0..bytes.len()).collect();
            assert_eq!(
                analyze_split(&bytes, &bytewise),
                whole,
                "{folder}/{name} byte by byte"
            );
        }
    }
}

#[test]
fn dp_ranks_are_kept_apart_and_summed() {
    let r = analyze(&fixture("sglang/sglang_40_multinode-dp-ranks-slow-gen.log"));
    assert_eq!(r.sources.len(), 8);
    // Eight ranks with 12 running each, ~3.83 tok/s each.
    let run = r.summary.running_requests.unwrap();
    assert_eq!(run.mean, 96.0);
    let gen = r.summary.gen_throughput_tok_s.unwrap();
    assert!((gen.mean - 30.64).abs() < 0.05, "{gen:?}");
    let kv = r.summary.kv_usage.unwrap();
    assert_eq!(kv.mean, 0.0);
}

#[test]
fn retraction_printed_by_every_tp_rank_is_one_event() {
    let r = analyze(&fixture(
        "sglang/sglang_23_deepseek-v3-kv-full-decode-oom-retract.log",
    ));
    assert_eq!(r.summary.retractions, 1);
    assert_eq!(r.summary.retracted_requests, 1);
    assert_eq!(
        r.input.other_lines_by_kind.get("retraction_other_rank"),
        Some(&4)
    );
}

#[test]
fn startup_capacity_lines_fill_the_config() {
    let r = analyze(&fixture(
        "sglang/sglang_38_startup-capacity-lines-per-tp.log",
    ));
    assert_eq!(r.config.kv_capacity_tokens, Some(201_681));
    assert_eq!(r.config.max_running_requests, Some(2049));
    assert_eq!(r.config.chunked_prefill_size, Some(8192));
    assert_eq!(r.config.context_length, Some(163_840));
}

#[test]
fn time_only_prefixes_and_double_timestamps_give_the_right_span() {
    let r = analyze(&fixture(
        "sglang/sglang_37_offline-engine-tqdm-prefill-ramp-cache-hit.log",
    ));
    assert_eq!(r.span_seconds, 4.0);
    let r = analyze(&fixture(
        "sglang/sglang_31_double-timestamp-container-prefix.log",
    ));
    // The engine's own (UTC) stamp is used, not the collector's.
    assert_eq!(r.first_timestamp.as_deref(), Some("2025-03-11 01:44:27"));
    assert_eq!(r.span_seconds, 9.0);
}
