//! LMDeploy's metrics lines (one real, the rest written from its format
//! strings): read as LMDeploy's, judged as any engine's, and answered with
//! LMDeploy's own flags.

mod common;

use batchlens_core::report::Kind;
use batchlens_core::Report;

fn report(name: &str) -> Report {
    common::analyze(&common::fixture(&format!("lmdeploy/{name}.log")))
}

fn flags(r: &Report) -> Vec<String> {
    assert!(r.diagnosis.is_some(), "no diagnosis");
    common::all_actions(r).map(|a| a.flag.clone()).collect()
}

#[test]
fn every_metrics_line_is_read_as_lmdeploy() {
    for (name, bytes) in common::fixtures_in("lmdeploy") {
        let r = common::analyze(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let metrics = text
            .lines()
            .filter(|l| l.contains("Avg thr (in/out)") || l.contains("Unfinished: "))
            .count() as u64;
        assert!(metrics > 0, "{name}");
        assert_eq!(r.engine, "lmdeploy", "{name}");
        assert_eq!(r.input.stat_lines, metrics, "{name}");
        assert_eq!(r.input.damaged_stat_lines, 0, "{name}");
        assert_eq!(r.input.unrecognized_lines, 0, "{name}");
        assert!(r.input.other_server.is_none(), "{name}");
    }
}

#[test]
fn the_real_line_counts_api_server_waiters_as_queued() {
    let r = report("lmdeploy_01_metrics-log-new-format");
    let s = &r.summary;
    assert_eq!(s.running_requests.as_ref().map(|d| d.mean), Some(45.0));
    // 5 waiting in the engine and 50 at the API server.
    assert_eq!(s.queued_requests.as_ref().map(|d| d.mean), Some(55.0));
    assert_eq!(s.kv_usage.as_ref().map(|d| d.mean), Some(0.216));
    assert_eq!(
        s.gen_throughput_tok_s.as_ref().map(|d| d.mean),
        Some(2756.3)
    );
}

#[test]
fn a_full_kv_cache_with_a_queue_is_kv_bound_with_lmdeploy_flags() {
    let r = report("synthetic_grouped-kv-full-queue");
    let d = r.diagnosis.as_ref().unwrap();
    assert_eq!(d.primary.kind, Kind::KvCacheCapacity);
    assert_eq!(r.config.cache_max_entry_count, Some(0.8));
    let f = flags(&r).join(" | ");
    for want in ["--cache-max-entry-count 0.90", "--quant-policy 8", "--tp 2"] {
        assert!(f.contains(want), "{want} in {f}");
    }
    // The memory step is predicted from the share it adds (0.9 / 0.8 of the pool).
    let more = &d.primary.actions[0];
    assert_eq!(more.id, "more_kv_memory");
    let p = more.predicted.as_ref().expect("a prediction");
    let run = d.facts.running_requests.unwrap();
    assert!(
        p.running_requests > run && p.running_requests <= run * 1.125 + 1.0,
        "{} from {run}",
        p.running_requests
    );
}

#[test]
fn a_batch_at_max_batch_size_is_cap_bound() {
    let r = report("synthetic_flat-batch-cap-128");
    assert_eq!(r.config.max_running_requests, Some(128));
    let d = r.diagnosis.as_ref().unwrap();
    // The cap holds the batch at 128 while 39 wait; with the prior's split of the step
    // (nothing in the log moves the batch), admitting those 39 buys ~7 %: under the
    // 8 % a lever must buy, so saturation may lead, but the cap is named with its flag.
    assert!(
        matches!(
            d.primary.kind,
            Kind::RunningRequestLimit | Kind::DecodeSaturated
        ),
        "{:?}",
        d.primary.kind
    );
    let cap = d
        .findings
        .iter()
        .find(|f| f.kind == Kind::RunningRequestLimit)
        .expect("the cap's finding");
    assert_eq!(cap.actions[0].flag, "--max-batch-size 256");
    assert!(
        cap.predicted_gain.is_some_and(|g| g > 0.03 && g < 0.15),
        "{:?}",
        cap.predicted_gain
    );
}

#[test]
fn a_short_client_is_client_bound() {
    let r = report("synthetic_grouped-client-8-in-flight");
    assert_eq!(
        r.diagnosis.as_ref().unwrap().primary.kind,
        Kind::ClientUnderload
    );
}

/// No flag of SGLang's or vLLM's is offered for an LMDeploy server.
#[test]
fn advice_names_lmdeploy_flags_only() {
    for (name, bytes) in common::fixtures_in("lmdeploy") {
        let r = common::analyze(&bytes);
        for f in flags(&r) {
            for foreign in [
                "--mem-fraction-static",
                "--gpu-memory-utilization",
                "--max-num-seqs",
                "--max-running-requests",
                "--tensor-parallel-size",
                "--kv-cache-dtype",
                "--max-num-batched-tokens",
                "--chunked-prefill-size",
                "bench_serving",
                "vllm bench",
            ] {
                assert!(!f.contains(foreign), "{name}: {f}");
            }
        }
    }
}

/// A stated share of 0 (or above 1) is taken as LMDeploy's default; one already
/// at the top is not raised: the advice and its prediction stay finite and never lower it.
#[test]
fn the_memory_step_holds_for_any_stated_share() {
    let text = String::from_utf8(common::fixture(
        "lmdeploy/synthetic_grouped-kv-full-queue.log",
    ))
    .unwrap();
    for (share, flag) in [
        ("0", "0.90"),
        ("7", "0.90"),
        ("0.95", "0.95"),
        ("0.5", "0.60"),
    ] {
        let t = text.replace(
            "cache_max_entry_count=0.8",
            &format!("cache_max_entry_count={share}"),
        );
        let r = common::analyze(t.as_bytes());
        let more = common::all_actions(&r)
            .find(|a| a.id == "more_kv_memory")
            .expect("a memory step");
        assert_eq!(
            more.flag,
            format!("--cache-max-entry-count {flag}"),
            "{share}"
        );
        let p = more.predicted.as_ref().expect("a prediction");
        assert!(
            p.gen_throughput_tok_s.is_finite() && p.running_requests.is_finite(),
            "{share}: {p:?}"
        );
        let run = r
            .diagnosis
            .as_ref()
            .unwrap()
            .facts
            .running_requests
            .unwrap();
        assert!(
            p.running_requests >= run - 0.5,
            "{share}: {} from {run}",
            p.running_requests
        );
    }
}

/// LMDeploy's own startup lines beside its metrics lines do not name it as
/// another server: it is the server read.
#[test]
fn lmdeploy_is_not_another_server_in_its_own_log() {
    let mut text = common::fixture("other/lmdeploy_02_turbomind-startup-config-lines.log");
    text.extend(common::fixture(
        "lmdeploy/synthetic_grouped-kv-full-queue.log",
    ));
    let r = common::analyze(&text);
    assert_eq!(r.engine, "lmdeploy");
    assert!(r.input.other_server.is_none(), "{:?}", r.input.other_server);
    // Without its metrics lines it is named, as before.
    let r = common::analyze(&common::fixture(
        "other/lmdeploy_02_turbomind-startup-config-lines.log",
    ));
    assert_eq!(
        r.input.other_server.map(|o| o.name).as_deref(),
        Some("LMDeploy")
    );
}
