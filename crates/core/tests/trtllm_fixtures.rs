//! TensorRT-LLM's stats (three real pastes, the rest written from its format
//! strings by `tests/fixtures/trtllm/synthetic.py`): read as TensorRT-LLM's in
//! each of the shapes its servers print, judged as any engine's, and answered
//! with its own flags.

mod common;

use batchlens_core::report::Kind;
use batchlens_core::Report;

fn report(name: &str) -> Report {
    common::analyze(&common::fixture(&format!("trtllm/{name}.log")))
}

fn flags(r: &Report) -> Vec<String> {
    assert!(r.diagnosis.is_some(), "no diagnosis");
    common::all_actions(r).map(|a| a.flag.clone()).collect()
}

/// A stats record of any shape: the iteration log's, Triton's, `/metrics`'.
fn is_stats_line(l: &str) -> bool {
    (l.contains("iter = ") && l.contains("states = {"))
        || l.contains("Active Request Count")
        || l.contains("\"iterLatencyMS\"")
}

#[test]
fn every_stats_record_is_read_as_tensorrt_llms() {
    for (name, bytes) in common::fixtures_in("trtllm") {
        let r = common::analyze(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let records = text.lines().filter(|l| is_stats_line(l)).count() as u64;
        assert!(records > 0, "{name}");
        assert_eq!(r.engine, "trtllm", "{name}");
        assert_eq!(r.input.stat_lines, records, "{name}");
        assert_eq!(r.input.damaged_stat_lines, 0, "{name}");
        // The server is read, so it is no other server.
        assert!(r.input.other_server.is_none(), "{name}");
    }
}

#[test]
fn the_real_pastes_are_read() {
    // `/metrics` iteration 0: one 16,000-token context request, 7 queued, 5495 of 7240 blocks.
    let r = report("trtllm_01_executor-iteration-stats-json");
    let s = &r.summary;
    assert_eq!(s.running_requests.as_ref().map(|d| d.mean), Some(1.0));
    assert_eq!(s.queued_requests.as_ref().map(|d| d.mean), Some(7.0));
    let kv = s.kv_usage.as_ref().map(|d| d.mean).unwrap();
    assert!((kv - 5495.0 / 7240.0).abs() < 1e-3, "{kv}");
    // Triton's record hard-wrapped over five lines: joined, then read.
    let r = report("trtllm_02_triton-backend-glog-json-wrapped");
    assert_eq!(r.input.joined_wrapped_lines, 4);
    assert_eq!(r.input.stat_lines, 1);
    let s = &r.summary;
    assert_eq!(s.running_requests.as_ref().map(|d| d.mean), Some(1.0));
    let kv = s.kv_usage.as_ref().map(|d| d.mean).unwrap();
    assert!((kv - 1.0 / 513.0).abs() < 1e-3, "{kv}");
    // The earliest Triton record has only its active count.
    let r = report("trtllm_04_triton-iteration-counter");
    let s = &r.summary;
    assert_eq!(s.running_requests.as_ref().map(|d| d.mean), Some(1.0));
}

#[test]
fn a_pool_full_of_reservations_is_kv_bound_with_tensorrt_llm_remedies() {
    let r = report("synthetic_serve-kv-reserved-queue");
    assert_eq!(r.config.kv_capacity_tokens, Some(116_160));
    assert_eq!(r.config.max_running_requests, Some(2048));
    let d = r.diagnosis.as_ref().unwrap();
    assert_eq!(d.primary.kind, Kind::KvCacheCapacity);
    // The pool is ~60 % used: reservations, not tokens, fill it.
    let kv = d.facts.kv_usage.unwrap();
    assert!((0.5..0.75).contains(&kv), "{kv}");
    assert!(
        d.primary
            .evidence
            .iter()
            .any(|e| e.statement.contains("GUARANTEED_NO_EVICT")),
        "{:?}",
        d.primary.evidence
    );
    let ids: Vec<&str> = d.primary.actions.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        ids[..2],
        ["max_tokens", "capacity_scheduler_policy"],
        "{ids:?}"
    );
    let f = flags(&r).join(" | ");
    for want in [
        "--kv_cache_free_gpu_memory_fraction 0.95",
        "kv_cache_config.dtype: fp8",
        "--tp_size 2",
    ] {
        assert!(f.contains(want), "{want} in {f}");
    }
    // Generated tokens: ~90 requests, one token each per ~41 ms step.
    let g = d.facts.server_gen_tok_s.unwrap();
    assert!((1800.0..2600.0).contains(&g), "{g}");
    // The client is told what the pool admits: the running count, not what
    // the used share of the pool would suggest.
    let client = d
        .primary
        .actions
        .iter()
        .find(|a| a.id == "client_concurrency")
        .expect("client advice");
    let run = d.facts.running_requests.unwrap();
    assert!(
        client.flag.contains(&format!("~{}", (run * 1.1).round())),
        "{}",
        client.flag
    );
}

#[test]
fn a_log_without_a_waiting_count_is_not_said_to_have_none_waiting() {
    let r = report("synthetic_serve-client-8-in-flight");
    let d = r.diagnosis.as_ref().unwrap();
    assert_eq!(d.primary.kind, Kind::ClientUnderload);
    assert!(d.primary.confidence <= 0.55, "{}", d.primary.confidence);
    assert!(
        d.primary.headline.contains("does not say how many wait"),
        "{}",
        d.primary.headline
    );
    let text = serde_json::to_string(&d.primary).unwrap();
    assert!(!text.contains("while 0 wait"), "{text}");
    assert_eq!(r.summary.queued_requests, None);
    // 8 requests, one token each per ~18.6 ms step.
    let g = d.facts.server_gen_tok_s.unwrap();
    assert!((380.0..480.0).contains(&g), "{g}");
}

#[test]
fn a_batch_at_triton_s_cap_is_cap_bound_with_a_measured_rate() {
    let r = report("synthetic_triton-batch-cap-64");
    assert_eq!(r.config.max_running_requests, Some(64));
    let d = r.diagnosis.as_ref().unwrap();
    assert_eq!(d.primary.kind, Kind::RunningRequestLimit);
    assert_eq!(d.primary.actions[0].flag, "--max_batch_size 128");
    // Triton prints no rate: it is measured between iterations' timestamps,
    // 64 requests one token each per ~38 ms step.
    let g = d.facts.server_gen_tok_s.unwrap();
    assert!((1400.0..2000.0).contains(&g), "{g}");
}

#[test]
fn tensorrt_llm_advice_names_no_other_engines_flag() {
    for (name, bytes) in common::fixtures_in("trtllm") {
        let r = common::analyze(&bytes);
        for f in flags(&r) {
            for other in [
                "--gpu-memory-utilization",
                "--max-num-seqs",
                "--kv-cache-dtype",
                "--tensor-parallel-size",
                "--mem-fraction-static",
                "--enable-prefix-caching",
                "vllm",
            ] {
                assert!(!f.contains(other), "{name}: {f}");
            }
        }
    }
}

#[test]
fn paused_requests_are_preemptions_answered_with_the_policy_that_pauses_none() {
    // Triton's `Paused Requests` counts the requests its scheduler paused in that
    // iteration (MAX_UTILIZATION frees their blocks): events, summed. Iterations
    // are merged into samples of about a second: an event is a second with pauses.
    let name = "synthetic_triton-max-utilization-pauses";
    let text = String::from_utf8(common::fixture(&format!("trtllm/{name}.log"))).unwrap();
    let paused: Vec<u64> = text
        .split("Paused Requests\\\":")
        .skip(1)
        .map(|t| t[..t.find(',').unwrap()].parse().unwrap())
        .collect();
    assert!(paused.len() > 100, "{}", paused.len());
    let r = report(name);
    let iterations_pausing = paused.iter().filter(|&&p| p > 0).count() as u64;
    // Pauses come in ~1 iteration in 7 over 30 s: in many of the seconds, at most all.
    let seconds = r.span_seconds.ceil() as u64 + 1;
    assert!(
        (5..=iterations_pausing.min(seconds)).contains(&r.summary.retractions),
        "{} events, {iterations_pausing} iterations pausing, {seconds} s",
        r.summary.retractions
    );
    assert_eq!(r.summary.retracted_requests, paused.iter().sum::<u64>());
    let d = r.diagnosis.as_ref().unwrap();
    assert_eq!(d.primary.kind, Kind::KvRetraction);
    assert!(
        d.primary.headline.contains("paused"),
        "{}",
        d.primary.headline
    );
    // Pauses show MAX_UTILIZATION is on: it is not advised, nor are the default
    // policy's reservations given as the reason the pool is full.
    let f = flags(&r).join(" | ");
    assert!(!f.contains("MAX_UTILIZATION"), "{f}");
    assert!(
        f.contains("capacity_scheduler_policy: GUARANTEED_NO_EVICT"),
        "{f}"
    );
    assert!(f.contains("--kv_cache_free_gpu_memory_fraction"), "{f}");
    let text = serde_json::to_string(&d).unwrap();
    assert!(!text.contains("reserves each request's prompt"), "{text}");
    assert!(!text.contains("plus reserved"), "{text}");
}

#[test]
fn iterations_of_absurd_length_are_taken_as_they_are() {
    // A damaged or hostile `/metrics` object: an iteration of 10^300 ms is no
    // iteration to merge, and no figure may become infinite.
    let mut log = String::new();
    for (it, ms) in [
        (1, "20.0"),
        (2, "1e300"),
        (3, "20.0"),
        (4, "1e300"),
        (5, "20.0"),
    ] {
        log.push_str(&format!(
            r#"{{"iter":{it},"iterLatencyMS":{ms},"numActiveRequests":8,"numQueuedRequests":0,"timestamp":"04-15-2025 12:34:5{it}.000000","inflightBatchingStats":{{"numScheduledRequests":8,"numContextRequests":0,"numGenRequests":8,"numCtxTokens":0,"numPausedRequests":0}},"kvCacheStats":{{"maxNumBlocks":100,"usedNumBlocks":10}}}}"#
        ));
        log.push('\n');
    }
    let r = common::analyze(log.as_bytes());
    assert_eq!(r.input.stat_lines, 5);
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("inf") && !json.contains("NaN"), "{json}");
    let s = &r.summary;
    // Each absurd one is a sample of its own, between the 20 ms ones it ends.
    assert_eq!(s.gen_throughput_tok_s.map(|d| d.count), Some(5));
    assert!(s.generated_tokens_estimate.is_finite());
    assert!(s.sustained_gen_tok_s.is_none_or(f64::is_finite));
    assert!(s
        .prefill_time_share
        .is_none_or(|p| (0.0..=1.0).contains(&p)));
}
