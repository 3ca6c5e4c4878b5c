//! Faults no lever explains: stalls, uneven ranks, the cost of evictions,
//! and what the log could not support, on every fixture and on simulated runs.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

mod common;

use batchlens_core::report::{Diagnosis, Kind};
use batchlens_core::Report;
use batchlens_sim::{simulate, IdleGap, LenDist, SimConfig, SimOutcome};
use common::{analyze, fixtures_in};

fn every_fixture() -> Vec<(String, batchlens_core::Report)> {
    ["sglang", "vllm", "trtllm", "lmdeploy", "other"]
        .iter()
        .flat_map(|f| fixtures_in(f))
        .map(|(n, b)| (n, analyze(&b)))
        .collect()
}

fn diag(r: &Report) -> &Diagnosis {
    r.diagnosis.as_ref().expect("a diagnosis")
}

fn kinds(r: &Report) -> Vec<Kind> {
    r.diagnosis
        .as_ref()
        .map(|d| d.findings.iter().map(|f| f.kind).collect())
        .unwrap_or_default()
}

/// Each new kind and fact, on the fixtures it belongs to and on no other: the real
/// pastes where the numbers show it, none elsewhere.
#[test]
fn new_kinds_and_facts_appear_only_where_they_belong() {
    // A vLLM V0 server logged at DEBUG: one request runs for 30 s with nothing generated
    // and nothing prefilled (vllm-project/vllm#25677); the same on V1 at DEBUG
    // (vllm-project/vllm#17972); two requests at 0.4 tok/s in total (vllm-project/vllm#15018);
    // pending 0 → 12 → 22 while nothing runs and the pool is empty (vllm-project/vllm PR #8378).
    let stalled = [
        "vllm_14_v0-debug-level-stuck-prefill-metrics-scrape",
        "vllm_39_v0-hang-pending-rising-nothing-runs",
        "vllm_40_v0-crawl-two-requests-0.4-tok-s",
        "vllm_41_v1-debug-one-request-zero-tokens-health-checks",
    ];
    // Not vllm_43 (intel/llm-scaler#391), reported as a hang: its one request decodes at
    // 5.4 tok/s with most of the pool, while 14 wait for room.
    // DP ranks running 6, 8 and 11 with nothing waiting (sgl-project/sglang PR #17392):
    // uneven, not binding. Not vllm_42 (vllm-project/vllm#36748): its two engines run 51
    // and 31 but both queue behind a full pool, so neither has room to take the other's.
    let uneven = ["sglang_41_dp-tp-ep-pd-decode-rank-imbalance-uvicorn"];
    let mut seen_multi_rank = 0;
    // Evictions counted with stats lines that say what a running request holds: SGLang's
    // old `#retracted_reqs` wording (sgl-project/sglang#2746), vLLM V0 preemption warnings
    // and V1's `Preemptions:` field, TensorRT-LLM's paused requests. A share of prefill
    // work only where the prefill the log measures holds that estimate: not in sglang_23
    // (no prefill line), nor in the V0 excerpt, whose cumulative counter (100) started
    // long before its few lines' prompt work.
    let recomputed = [
        "sglang_23_deepseek-v3-kv-full-decode-oom-retract",
        "synthetic_v0-preemption-warnings-interleaved-startup-no-dot",
        "synthetic_v1-033-dp2-preemptions-startup-ansi",
        "synthetic_triton-max-utilization-pauses",
    ];
    let shared = [
        "synthetic_v1-033-dp2-preemptions-startup-ansi",
        "synthetic_triton-max-utilization-pauses",
    ];
    let mut seen_share = 0;
    for (name, r) in every_fixture() {
        let k = kinds(&r);
        assert_eq!(
            k.contains(&Kind::Stalled),
            stalled.contains(&name.as_str()),
            "{name}: stalled in {k:?}"
        );
        assert_eq!(
            k.contains(&Kind::RankImbalance),
            uneven.contains(&name.as_str()),
            "{name}: rank_imbalance in {k:?}"
        );
        let Some(d) = &r.diagnosis else { continue };
        let evicted = r.summary.retractions.max(r.summary.retracted_requests) > 0;
        // Recomputation is counted exactly where requests were evicted and the log says
        // what a running request holds.
        assert_eq!(
            d.facts.recomputed_tokens.is_some(),
            evicted && d.facts.kv_tokens_per_request.is_some(),
            "{name}: recomputed_tokens {:?}",
            d.facts.recomputed_tokens
        );
        assert_eq!(
            d.facts.recomputed_tokens.is_some(),
            recomputed.contains(&name.as_str()),
            "{name}: recomputed_tokens {:?}",
            d.facts.recomputed_tokens
        );
        assert_eq!(
            d.facts.recompute_token_share.is_some(),
            shared.contains(&name.as_str()),
            "{name}: recompute_token_share {:?}",
            d.facts.recompute_token_share
        );
        if let Some(sh) = d.facts.recompute_token_share {
            assert!(sh > 0.0 && sh < 1.0, "{name}: share {sh}");
            seen_share += 1;
            let f = d
                .findings
                .iter()
                .find(|f| f.kind == Kind::KvRetraction)
                .unwrap_or_else(|| panic!("{name}: a share without the retraction finding"));
            assert!(
                f.evidence
                    .iter()
                    .any(|e| e.statement.starts_with("Recomputation took ~")),
                "{name}: {:?}",
                f.evidence
            );
        }
        // A stall is the verdict alone, and leads.
        if k.contains(&Kind::Stalled) {
            assert_eq!(k, vec![Kind::Stalled], "{name}");
        }
        // The non-binding imbalance says nothing waits: only where nothing does.
        for f in d.findings.iter().filter(|f| f.kind == Kind::RankImbalance) {
            if f.headline.contains("nothing waits") {
                assert!(
                    d.facts
                        .ranks
                        .iter()
                        .all(|x| x.queued_requests.unwrap_or(0.0) < 1.0),
                    "{name}: {}",
                    f.headline
                );
            }
        }
        if r.timeline.per_source.len() >= 2 {
            seen_multi_rank += 1;
        }
        // Per-rank figures only where the log prints several ranks.
        assert_eq!(
            d.facts.ranks.len(),
            if r.timeline.per_source.len() >= 2 {
                r.timeline.per_source.len()
            } else {
                0
            },
            "{name}"
        );
    }
    // vLLM V1 DP preemptions with counts, TensorRT-LLM's paused requests.
    assert!(seen_share >= 2, "recompute share on {seen_share} fixtures");
    // sglang_16, _17, _40, _41, the synthetic vLLM DP2 and vllm_42 print several ranks.
    assert!(
        seen_multi_rank >= 5,
        "{seen_multi_rank} multi-rank fixtures"
    );
}

/// A stall is not a capacity verdict: on every fixture and example whose verdict is
/// `stalled`, no lever is weighed or reported (`diagnosis.levers` empty, no finding's or
/// action's gain or prediction, no evidence of one) and the what-if is withheld with its
/// reason; every other report that the model fits keeps its what-if.
#[test]
fn no_stalled_report_carries_a_lever_prediction() {
    let kv = vec![batchlens_core::whatif::parse_change("kv_scale=2").unwrap()];
    let mut stalled = Vec::new();
    let mut offered = 0;
    let reports = every_fixture().into_iter().chain(
        common::example_logs()
            .into_iter()
            .map(|(n, b)| (n, analyze(&b))),
    );
    for (name, r) in reports {
        let Some(d) = &r.diagnosis else { continue };
        if d.primary.kind != Kind::Stalled {
            assert!(batchlens_core::whatif::withheld(&r).is_none(), "{name}");
            offered += usize::from(batchlens_core::whatif::predict(&r, &kv).is_some());
            continue;
        }
        stalled.push(name.clone());
        assert!(d.levers.is_empty(), "{name}: levers {:?}", d.levers);
        for f in &d.findings {
            assert!(
                f.predicted_gain.is_none(),
                "{name}: {:?} gains {:?}",
                f.kind,
                f.predicted_gain
            );
            for a in &f.actions {
                assert!(
                    a.predicted.is_none() && a.predicted_gain.is_none(),
                    "{name}: {}",
                    a.id
                );
            }
            for e in &f.evidence {
                assert!(
                    !e.statement.contains("predicted"),
                    "{name}: {}",
                    e.statement
                );
            }
        }
        let why = batchlens_core::whatif::withheld(&r).unwrap_or_else(|| panic!("{name}"));
        assert!(why.contains("stalled"), "{name}: {why}");
        assert!(batchlens_core::whatif::predict(&r, &kv).is_none(), "{name}");
        assert!(batchlens_core::whatif::predict(&r, &[]).is_none(), "{name}");
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["diagnosis"].get("levers").is_none(), "{name}");
    }
    stalled.sort();
    assert_eq!(
        stalled,
        [
            "vllm_14_v0-debug-level-stuck-prefill-metrics-scrape",
            "vllm_39_v0-hang-pending-rising-nothing-runs",
            "vllm_40_v0-crawl-two-requests-0.4-tok-s",
            "vllm_41_v1-debug-one-request-zero-tokens-health-checks",
        ]
    );
    // The refusal is the stall's alone: the logs with a steady state keep theirs.
    assert!(offered > 50, "{offered} reports with a what-if");
}

fn by_name(n: &str) -> Report {
    every_fixture()
        .into_iter()
        .find(|(x, _)| x == n)
        .unwrap_or_else(|| panic!("no fixture {n}"))
        .1
}

/// The hang: vLLM V0 with pending 0 → 12 → 22 while nothing runs, the pool empty and
/// nothing generated in the last interval; the paste ends there (vllm-project/vllm
/// PR #8378): no lever explains it, so it reads neither `prefill_heavy` nor any other.
#[test]
fn pending_rising_while_nothing_runs_is_a_hang() {
    let name = "vllm/vllm_39_v0-hang-pending-rising-nothing-runs.log";
    let r = analyze(&common::fixture(name));
    let d = diag(&r);
    assert_eq!(d.primary.kind, Kind::Stalled, "{:?}", kinds(&r));
    let f = &d.primary;
    assert!(
        f.headline
            .starts_with("The server is stalled: 22 waiting (from 12) while nothing runs"),
        "{}",
        f.headline
    );
    assert!(f.headline.contains("lines 5–9"), "{}", f.headline);
    assert!(f.headline.contains("KV pool 0% used"), "{}", f.headline);
    // Two lines, five seconds: short of sustained, so below the sustained confidence.
    assert!(
        f.confidence >= 0.75 && f.confidence < 0.9,
        "{}",
        f.confidence
    );
    assert_eq!(f.evidence[0].lines, vec![5, 9]);
    assert!(f.evidence[0].statement.contains("the log ends there"));
    assert!(f.predicted_gain.is_none());
    assert!(f.actions.iter().all(|a| a.predicted.is_none()));

    let text = String::from_utf8(common::fixture(name)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // One snapshot of the state, with no interval after it, is no hang: the paste cut
    // before its last line shows requests that may be admitted at the next step.
    let cut = lines[..lines.len() - 1].join("\n") + "\n";
    let r = analyze(cut.as_bytes());
    assert!(!kinds(&r).contains(&Kind::Stalled), "{:?}", kinds(&r));
    // Five seconds followed by the server admitting them is a hiccup, not a stall: a
    // short stretch counts only where the log ends in it.
    let recovered = format!(
        "{}\n{}\n",
        lines.join("\n"),
        "INFO 09-18 16:11:08 metrics.py:351] Avg prompt throughput: 4210.0 tokens/s, Avg generation throughput: 310.2 tokens/s, Running: 22 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 6.1%, CPU KV cache usage: 0.0%."
    );
    let r = analyze(recovered.as_bytes());
    assert!(!kinds(&r).contains(&Kind::Stalled), "{:?}", kinds(&r));
    // A queue that stays level across the last two lines: nothing shows requests kept
    // arriving unadmitted, so the short stretch does not count.
    let level = text.replace("Pending: 22 reqs", "Pending: 12 reqs");
    let r = analyze(level.as_bytes());
    assert!(!kinds(&r).contains(&Kind::Stalled), "{:?}", kinds(&r));
}

/// Requests run, but each at under 1 tok/s with no prompt work: on V0 (two requests,
/// vllm-project/vllm#15018) and on V1 logged at DEBUG (one, vllm-project/vllm#17972).
#[test]
fn requests_running_at_under_a_token_a_second_are_a_crawl() {
    let r = by_name("vllm_40_v0-crawl-two-requests-0.4-tok-s");
    let d = diag(&r);
    assert_eq!(d.primary.kind, Kind::Stalled);
    assert!(
        d.primary.headline.starts_with(
            "The server is stalled: 2 requests run at 0.40 tok/s in total (0.20 tok/s each) for 30 s"
        ),
        "{}",
        d.primary.headline
    );
    assert!(d.primary.confidence >= 0.95);
    let r = by_name("vllm_41_v1-debug-one-request-zero-tokens-health-checks");
    let d = diag(&r);
    assert_eq!(d.primary.kind, Kind::Stalled);
    assert!(
        d.primary
            .headline
            .starts_with("The server is stalled: 1 request runs at 0 tok/s"),
        "{}",
        d.primary.headline
    );
    // The stretch's lines are the stats lines, not the health checks between them.
    assert!(
        d.primary.headline.contains("lines 5–8"),
        "{}",
        d.primary.headline
    );
}

/// Two DP engines that both queue behind a full pool (vllm-project/vllm#36748, 2 of its
/// 8 engines kept): uneven batches, but no rank has room for another's requests.
#[test]
fn ranks_that_all_queue_at_a_full_pool_are_not_unevenly_loaded() {
    let r = by_name("vllm_42_v1-dp8-two-engines-both-kv-full-queued");
    let d = diag(&r);
    assert_eq!(d.facts.ranks.len(), 2);
    let run: Vec<f64> = d
        .facts
        .ranks
        .iter()
        .map(|x| x.running_requests.unwrap())
        .collect();
    assert_eq!(run, vec![51.0, 31.0]);
    assert!(!kinds(&r).contains(&Kind::RankImbalance), "{:?}", kinds(&r));
    assert_eq!(d.primary.kind, Kind::KvCacheCapacity);
    // The same two batches with nothing waiting are uneven batches under DP.
    let text = String::from_utf8(common::fixture(
        "vllm/vllm_42_v1-dp8-two-engines-both-kv-full-queued.log",
    ))
    .unwrap()
    .replace("Waiting: 117 reqs", "Waiting: 0 reqs")
    .replace("Waiting: 108 reqs", "Waiting: 0 reqs");
    let r = analyze(text.as_bytes());
    let f = diag(&r)
        .findings
        .iter()
        .find(|f| f.kind == Kind::RankImbalance)
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert!(
        f.headline.contains("though nothing waits"),
        "{}",
        f.headline
    );
}

/// `not_assessed` names each check the log cannot support, on every fixture where it applies.
#[test]
fn not_assessed_names_what_the_log_lacks() {
    for (name, r) in every_fixture() {
        let Some(d) = &r.diagnosis else { continue };
        let has = |c: &str| d.not_assessed.iter().any(|x| x.check == c);
        let stats = r.input.stat_lines + r.input.damaged_stat_lines > 0;
        assert_eq!(
            has("queue"),
            stats && r.summary.queued_requests.is_none(),
            "{name}: queue"
        );
        assert_eq!(
            has("capacity"),
            stats && r.config.kv_capacity_tokens.is_none(),
            "{name}: capacity"
        );
        if !stats {
            assert!(d.not_assessed.is_empty(), "{name}");
        }
        for x in &d.not_assessed {
            assert!(!x.why.is_empty(), "{name}: {}", x.check);
        }
    }
    let by_name = |n: &str| every_fixture().into_iter().find(|(x, _)| x == n).unwrap().1;
    // Decode lines only: prefill's share is not measured.
    let r = by_name("sglang_02_bench-drain-largest-len");
    assert!(diag(&r).not_assessed.iter().any(|x| x.check == "prefill"));
    // vLLM V1 prints every 10 s: a burst inside an interval is averaged away.
    let r = by_name("vllm_29_v1-docker-hardwrap-kv-full-waiting63");
    assert!(diag(&r).not_assessed.iter().any(|x| x.check == "bursts"));
    // vLLM's `2 Engines Aggregated:` lines: one line for all engines.
    let r = by_name("synthetic_v1-docker-aggregated-wrapped-header-glued-cut-end");
    let x = diag(&r)
        .not_assessed
        .iter()
        .find(|x| x.check == "ranks")
        .unwrap();
    assert!(x.why.contains("--aggregate-engine-logging"), "{}", x.why);
    // TensorRT-LLM's iteration log before 2026 prints no waiting count.
    let r = by_name("synthetic_serve-client-8-in-flight");
    assert!(diag(&r).not_assessed.iter().any(|x| x.check == "queue"));
}

fn run(cfg: &SimConfig) -> (String, SimOutcome) {
    let mut text = String::new();
    let out = simulate(cfg, &mut |l| {
        text.push_str(l);
        text.push('\n');
    });
    (text, out)
}

/// A closed-loop client well inside an ample pool, 10 minutes.
fn steady() -> SimConfig {
    SimConfig {
        seed: 11,
        kv_capacity_tokens: 400_000,
        concurrency: 48,
        num_requests: 0,
        duration_s: 600.0,
        prompt_len: LenDist::Uniform { min: 300, max: 700 },
        output_len: LenDist::Uniform { min: 200, max: 600 },
        max_new_tokens: 1024,
        ..SimConfig::default()
    }
}

#[test]
fn a_server_that_stops_stepping_is_stalled() {
    let mut cfg = steady();
    cfg.stalls = vec![IdleGap {
        start_s: 250.0,
        end_s: 370.0,
    }];
    let (log, _) = run(&cfg);
    let r = analyze(log.as_bytes());
    let d = diag(&r);
    let f = d
        .findings
        .iter()
        .find(|f| f.kind == Kind::Stalled)
        .unwrap_or_else(|| panic!("no stall in {:?}", kinds(&r)));
    assert!(f.headline.contains("stop for"), "{}", f.headline);
    println!("stall: {} (primary {:?})", f.headline, d.primary.kind);
    assert_eq!(d.primary.kind, Kind::Stalled);
    assert!(d.primary.confidence >= 0.95);
    // Not a capacity verdict: no action pulls a lever or carries a prediction.
    assert!(f.predicted_gain.is_none());
    assert!(f.actions.iter().all(|a| a.predicted.is_none()));
    // The stall is the rules' only finding.
    assert_eq!(
        d.findings
            .iter()
            .filter(|f| f.kind == Kind::Stalled)
            .count(),
        1
    );
}

/// vLLM V1 logs a line with zero throughput, then (both rates zero) only at DEBUG;
/// V0 logs from inside the engine step, so nothing while it does not step: a stalled
/// engine reads as a silence with the batch in flight.
#[test]
fn a_vllm_engine_that_stops_stepping_is_stalled() {
    for engine in [batchlens_sim::Engine::VllmV1, batchlens_sim::Engine::VllmV0] {
        let mut cfg = steady();
        cfg.engine = engine;
        cfg.stalls = vec![IdleGap {
            start_s: 250.0,
            end_s: 370.0,
        }];
        let (log, _) = run(&cfg);
        let r = analyze(log.as_bytes());
        assert!(
            kinds(&r).contains(&Kind::Stalled),
            "{engine:?}: {:?}",
            kinds(&r)
        );
        cfg.stalls.clear();
        let (log, _) = run(&cfg);
        let r = analyze(log.as_bytes());
        assert!(
            !kinds(&r).contains(&Kind::Stalled),
            "{engine:?}: {:?}",
            kinds(&r)
        );
    }
}

/// The scheduler goes on stepping for two minutes mid-run but admits nothing: the batch
/// drains, the clients' requests wait, the pool empties. vLLM prints one idle line, then
/// none until admission resumes.
#[test]
fn a_scheduler_that_admits_nothing_for_two_minutes_is_a_hang() {
    for engine in [batchlens_sim::Engine::VllmV0, batchlens_sim::Engine::VllmV1] {
        let mut cfg = steady();
        cfg.engine = engine;
        cfg.admission_stops = vec![IdleGap {
            start_s: 250.0,
            end_s: 370.0,
        }];
        let (log, _) = run(&cfg);
        let r = analyze(log.as_bytes());
        let d = diag(&r);
        assert_eq!(d.primary.kind, Kind::Stalled, "{engine:?}: {:?}", kinds(&r));
        let f = &d.primary;
        assert!(
            f.headline
                .starts_with("The server is stalled: 48 waiting while nothing runs"),
            "{engine:?}: {}",
            f.headline
        );
        // The silence after the idle line: most of the two minutes.
        let secs: f64 = f
            .headline
            .split(" for ")
            .nth(1)
            .and_then(|x| x.split(' ').next())
            .and_then(|x| x.parse().ok())
            .unwrap();
        assert!((90.0..=125.0).contains(&secs), "{engine:?}: {}", f.headline);
        assert!(f.confidence >= 0.95);
        assert!(f.actions.iter().all(|a| a.predicted.is_none()));
        // The same run without the stop: no stall.
        cfg.admission_stops.clear();
        let (log, _) = run(&cfg);
        let r = analyze(log.as_bytes());
        assert!(
            !kinds(&r).contains(&Kind::Stalled),
            "{engine:?}: {:?}",
            kinds(&r)
        );
    }
}

#[test]
fn a_drain_or_an_idle_client_is_not_a_stall() {
    // The run ends with the client stopping and the batch draining.
    let (log, _) = run(&steady());
    let r = analyze(log.as_bytes());
    assert!(!kinds(&r).contains(&Kind::Stalled), "{:?}", kinds(&r));
    // The client pauses for two minutes: the server drains and waits.
    let mut cfg = steady();
    cfg.idle_gaps = vec![IdleGap {
        start_s: 250.0,
        end_s: 370.0,
    }];
    let (log, _) = run(&cfg);
    let r = analyze(log.as_bytes());
    assert!(r.timeline.idle_gap_count > 0, "the pause shows as a gap");
    assert!(!kinds(&r).contains(&Kind::Stalled), "{:?}", kinds(&r));
}

/// Two DP ranks, each with its own pool that binds under a deep queue.
fn two_ranks() -> SimConfig {
    SimConfig {
        seed: 5,
        dp_size: 2,
        tp_size: 2,
        kv_capacity_tokens: 60_000,
        concurrency: 160,
        num_requests: 0,
        duration_s: 600.0,
        prompt_len: LenDist::Uniform { min: 300, max: 700 },
        output_len: LenDist::Uniform {
            min: 800,
            max: 1600,
        },
        max_new_tokens: 2048,
        ..SimConfig::default()
    }
}

#[test]
fn unevenly_fed_ranks_are_flagged_and_balanced_ones_are_not() {
    let (log, balanced) = run(&two_ranks());
    let r = analyze(log.as_bytes());
    let d = diag(&r);
    assert_eq!(d.facts.ranks.len(), 2);
    let balanced_read: f64 = d.facts.ranks.iter().filter_map(|x| x.gen_tok_s).sum();
    assert!(!kinds(&r).contains(&Kind::RankImbalance), "{:?}", kinds(&r));

    let mut cfg = two_ranks();
    cfg.dp_weights = vec![4.0, 1.0];
    let (log, _) = run(&cfg);
    let r = analyze(log.as_bytes());
    let d = diag(&r);
    let f = d
        .findings
        .iter()
        .find(|f| f.kind == Kind::RankImbalance)
        .unwrap_or_else(|| panic!("no imbalance in {:?}: {:?}", kinds(&r), d.facts.ranks));
    let gain = d.facts.rank_balance_gain.unwrap();
    assert_eq!(d.primary.kind, Kind::RankImbalance);
    assert_eq!(f.predicted_gain, Some(gain));
    println!("uneven ranks: {:?}, balanced gain {gain}", d.facts.ranks);
    // What the balanced ranks would generate, against the same client's balanced run.
    let now: f64 = d.facts.ranks.iter().filter_map(|x| x.gen_tok_s).sum();
    let predicted = now * (1.0 + gain);
    println!(
        "balanced: predicted {predicted:.0} tok/s, simulated {:.0} (read {balanced_read:.0})",
        balanced.steady_gen_tok_s
    );
    assert!(
        (predicted / balanced_read - 1.0).abs() < 0.15,
        "predicted {predicted}, balanced run reads {balanced_read}"
    );
    assert!(gain >= 0.05, "{gain}");
    // The rank fed four times as much queues; the other does not.
    let q: Vec<f64> = d
        .facts
        .ranks
        .iter()
        .map(|x| x.queued_requests.unwrap_or(0.0))
        .collect();
    assert!(q[0] >= 1.0 && q[1] < 0.5, "{q:?}");
    assert!(f
        .evidence
        .iter()
        .any(|e| e.statement.contains("--load-balance-method")));
}

#[test]
fn recomputation_share_follows_the_simulated_retractions() {
    let mut cfg = SimConfig::preset("retraction").unwrap();
    cfg.duration_s = 900.0;
    let (log, out) = run(&cfg);
    let r = analyze(log.as_bytes());
    let d = diag(&r);
    let share = d.facts.recompute_token_share.expect("a share");
    let truth = out.recomputed_tokens as f64 / out.prompt_tokens_computed as f64;
    println!("recompute share: read {share:.3}, simulated {truth:.3}");
    assert!(truth > 0.0);
    assert!(
        (share / truth - 1.0).abs() < 0.05,
        "read {share}, simulated {truth}"
    );
    // SGLang's own count of what the retractions freed, as the evidence says it.
    assert_eq!(
        d.facts.recomputed_tokens,
        r.summary.retracted_tokens.map(|t| t as f64)
    );
    let f = d
        .findings
        .iter()
        .find(|f| f.kind == Kind::KvRetraction)
        .expect("the retraction finding");
    assert!(f
        .evidence
        .iter()
        .any(|e| e.statement.starts_with("Recomputation took ~")));
}

/// Under DP, a log with one rank's lines says the ranks' balance is not assessed.
#[test]
fn one_ranks_lines_under_dp_are_named() {
    let (log, _) = run(&two_ranks());
    let one: String = log
        .lines()
        .filter(|l| !l.contains(" DP1 "))
        .map(|l| format!("{l}\n"))
        .collect();
    let r = analyze(one.as_bytes());
    let d = diag(&r);
    let x = d
        .not_assessed
        .iter()
        .find(|x| x.check == "ranks")
        .unwrap_or_else(|| panic!("{:?}", d.not_assessed));
    assert!(
        x.why.contains("--enable-metrics-for-all-schedulers"),
        "{}",
        x.why
    );
    let r = analyze(log.as_bytes());
    assert!(!diag(&r).not_assessed.iter().any(|x| x.check == "ranks"));
}

/// The text and Markdown reports name what was not assessed, as the JSON does.
#[test]
fn text_and_markdown_say_what_was_not_assessed() {
    let b = common::fixture("vllm/vllm_14_v0-debug-level-stuck-prefill-metrics-scrape.log");
    let r = analyze(&b);
    let d = diag(&r);
    assert!(!d.not_assessed.is_empty());
    let text = batchlens_core::render::text(&r, false);
    let md = batchlens_core::render::markdown(&r);
    for x in &d.not_assessed {
        assert!(
            text.contains(&format!("not assessed ({}): {}", x.check, x.why)),
            "{text}"
        );
        assert!(
            md.contains(&format!("*Not assessed ({}):*", x.check)),
            "{md}"
        );
    }
    assert!(text.contains("The server is stalled"), "{text}");
}

/// Ranks that print several lines a second under a clock of whole seconds: a line in the
/// same second as its rank's previous one has no interval of its own, yet its rank
/// generated through the round all the same. The steady rate is both ranks' together.
#[test]
fn ranks_printing_within_a_second_are_all_counted() {
    for interval in [40, 4] {
        let mut cfg = two_ranks();
        cfg.concurrency = 6;
        cfg.decode_log_interval = interval;
        cfg.log_ms = false;
        let (log, out) = run(&cfg);
        let r = analyze(log.as_bytes());
        let read = diag(&r).facts.server_gen_tok_s.expect("a steady rate");
        let sim = out.steady_gen_tok_s;
        assert!(
            (read / sim - 1.0).abs() < 0.1,
            "every {interval} steps: read {read:.0} tok/s, simulated {sim:.0}"
        );
    }
}
