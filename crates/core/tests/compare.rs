//! `batchlens compare` on simulated pairs with known truth: each lever (pool, cap,
//! client, conservativeness) on each engine's scheduler and log format. The
//! comparison names the setting, measures the effect within ±10 % of the
//! simulator's ratio of steady throughputs, and checks the model's prediction; a
//! pair whose outputs differ is another workload. On real logs, a run compared
//! with itself shows no change.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

mod common;

use batchlens_core::report::Comparison;
use batchlens_core::{analyze, Options, Report};
use batchlens_sim::{simulate, Engine, LenDist, SimConfig, SimOutcome};
use common::story;

fn run(cfg: &SimConfig) -> (Report, SimOutcome) {
    let mut text = String::new();
    let out = simulate(cfg, &mut |l| {
        text.push_str(l);
        text.push('\n');
    });
    (analyze(text.as_bytes(), Options::default()), out)
}

fn preset(name: &str, engine: Option<Engine>, duration: f64) -> SimConfig {
    let mut c = SimConfig::preset(name).unwrap();
    c.duration_s = duration;
    if let Some(e) = engine {
        c.engine = e;
    }
    c
}

struct Pair {
    name: &'static str,
    base: SimConfig,
    apply: fn(&mut SimConfig),
    /// The `changes[].setting` that names the lever.
    setting: &'static str,
}

fn pairs() -> Vec<Pair> {
    let trt = Some(Engine::Trtllm);
    vec![
        Pair {
            name: "sglang pool 116k -> 159k",
            base: story(),
            apply: |c| c.kv_capacity_tokens = 159_000,
            setting: "KV pool (tokens)",
        },
        Pair {
            name: "vllm pool 116k -> 159k",
            base: preset("vllm_kv_bound", None, 900.0),
            apply: |c| c.kv_capacity_tokens = 159_000,
            setting: "KV pool (tokens)",
        },
        Pair {
            name: "trtllm pool x1.5",
            base: preset("kv_bound", trt, 600.0),
            apply: |c| c.kv_capacity_tokens = c.kv_capacity_tokens * 3 / 2,
            setting: "KV pool (tokens)",
        },
        Pair {
            name: "sglang cap 32 -> 48",
            base: preset("running_cap", None, 600.0),
            apply: |c| c.max_running_requests = 48,
            setting: "max running requests",
        },
        Pair {
            name: "vllm cap 256 -> 40",
            base: preset("vllm_kv_bound", None, 900.0),
            apply: |c| c.max_running_requests = 40,
            setting: "max running requests",
        },
        Pair {
            name: "trtllm cap 32 -> 48",
            base: preset("running_cap", trt, 600.0),
            apply: |c| c.max_running_requests = 48,
            setting: "max running requests",
        },
        Pair {
            name: "sglang clients 8 -> 24",
            base: preset("client_underload", None, 600.0),
            apply: |c| c.concurrency = 24,
            setting: "client requests in flight",
        },
        Pair {
            name: "vllm clients 150 -> 40",
            base: preset("vllm_kv_bound", None, 900.0),
            apply: |c| c.concurrency = 40,
            setting: "client requests in flight",
        },
        Pair {
            name: "trtllm clients 8 -> 24",
            base: preset("client_underload", trt, 600.0),
            apply: |c| c.concurrency = 24,
            setting: "client requests in flight",
        },
        // schedule_conservativeness is SGLang's alone: vLLM and TensorRT-LLM have no such flag.
        Pair {
            name: "sglang conservativeness 1 -> 0.5",
            base: story(),
            apply: |c| c.schedule_conservativeness = 0.5,
            setting: "schedule_conservativeness",
        },
    ]
}

fn compared(base: &SimConfig, apply: fn(&mut SimConfig)) -> (Comparison, SimOutcome, SimOutcome) {
    let (rb, tb) = run(base);
    let mut cfg = base.clone();
    apply(&mut cfg);
    let (ra, ta) = run(&cfg);
    (batchlens_core::compare(&rb, &ra), tb, ta)
}

#[test]
fn every_lever_on_every_engine_is_named_measured_and_checked() {
    let mut failures = Vec::new();
    for p in pairs() {
        let (c, tb, ta) = compared(&p.base, p.apply);
        let truth = ta.steady_gen_tok_s / tb.steady_gen_tok_s;
        let e = c.effect.as_ref().expect("an effect");
        let pc = c.prediction_check.as_ref().expect("a prediction check");
        let err = pc.error.expect("an error");
        let model_err = pc.predicted_gen_tok_s / ta.steady_gen_tok_s - 1.0;
        let line = format!(
            "{:<34} ratio {:.3} [{:.3}-{:.3}] sim {:.3} | predicted {:.0} measured {:.0} sim {:.0} | error {:+.1}% (vs sim {:+.1}%) | {}",
            p.name,
            e.gen_throughput_ratio,
            e.low,
            e.high,
            truth,
            pc.predicted_gen_tok_s,
            pc.measured_gen_tok_s.unwrap_or(0.0),
            ta.steady_gen_tok_s,
            err * 100.0,
            model_err * 100.0,
            c.explanation.first().map_or("", |s| s.as_str()),
        );
        eprintln!("{line}");
        let mut bad = Vec::new();
        if !c.changes.iter().any(|x| x.setting == p.setting) {
            bad.push(format!("changes {:?} lack {}", c.changes, p.setting));
        }
        if !c.workload.similar {
            bad.push(format!("workload not similar: {:?}", c.workload.notes));
        }
        if (e.gen_throughput_ratio / truth - 1.0).abs() > 0.10 {
            bad.push("effect outside ±10 % of the simulated ratio".into());
        }
        if !(e.low <= e.gen_throughput_ratio && e.gen_throughput_ratio <= e.high) {
            bad.push("effect outside its own range".into());
        }
        // Where the model is within ±10 % of the simulated truth, the check against
        // the measurement says so too (the measurement's own error aside).
        if model_err.abs() <= 0.10
            && err.abs() > 0.10 + (truth / e.gen_throughput_ratio - 1.0).abs()
        {
            bad.push(format!("error {err} where the model is within ±10 %"));
        }
        let moved = e.low > 1.0 || e.high < 1.0;
        if moved && c.attribution != "setting" {
            bad.push(format!("attributed to {}", c.attribution));
        }
        if !bad.is_empty() {
            failures.push(format!("{line}\n    {}", bad.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_seed_story_reads_the_larger_pool_did_it_as_predicted() {
    let (c, tb, ta) = compared(&story(), |c| c.kv_capacity_tokens = 159_000);
    let first = &c.explanation[0];
    assert!(
        first.starts_with("The larger pool did it: +"),
        "{:?}",
        c.explanation
    );
    assert!(first.contains(", as predicted (error "), "{first}");
    assert_eq!(c.attribution, "setting");
    assert_eq!(c.changes.len(), 1, "{:?}", c.changes);
    assert_eq!(c.changes[0].before, "116,171");
    assert_eq!(c.changes[0].after, "159,000");
    // The gain is real: its range is above no change and holds the simulated one.
    let e = c.effect.clone().unwrap();
    let truth = ta.steady_gen_tok_s / tb.steady_gen_tok_s;
    assert!(e.low > 1.0, "{e:?}");
    assert!(e.low <= truth && truth <= e.high, "{e:?} vs {truth}");
    let text = batchlens_core::render::compare_text(&c);
    assert!(
        text.contains("KV pool (tokens)  116,171  159,000"),
        "{text}"
    );
    let md = batchlens_core::render::compare_markdown(&c);
    assert!(
        md.contains("| KV pool (tokens) | 116,171 | 159,000 |"),
        "{md}"
    );
}

#[test]
fn shorter_outputs_are_another_workload_and_the_setting_is_not_credited() {
    // The same server, but outputs half as long and a bigger pool: the faster run is
    // the workload's doing, whatever the pool did.
    let (c, _, _) = compared(&story(), |c| {
        c.output_len = LenDist::LogNormal {
            mean: 1125.0,
            sigma: 0.5,
            min: 100,
            max: 4096,
        };
        c.kv_capacity_tokens = 159_000;
    });
    assert!(!c.workload.similar, "{:?}", c.workload);
    assert!(
        c.workload
            .notes
            .iter()
            .any(|n| n.starts_with("output tokens per request")
                || n.starts_with("KV tokens held per running request")),
        "{:?}",
        c.workload.notes
    );
    assert_eq!(c.attribution, "workload");
    assert!(
        c.explanation[0].starts_with("The workloads differ"),
        "{:?}",
        c.explanation
    );
    assert!(!c.explanation[0].contains("did it"));
    // The same outputs on both sides are one workload.
    let (same, _, _) = compared(&story(), |c| c.seed = 8);
    assert!(same.workload.similar, "{:?}", same.workload);
    assert!(same.changes.is_empty(), "{:?}", same.changes);
}

#[test]
fn another_engine_is_another_workload() {
    let (rb, _) = run(&story());
    let (ra, _) = run(&SimConfig {
        engine: Engine::VllmV1,
        ..story()
    });
    let c = batchlens_core::compare(&rb, &ra);
    assert!(!c.workload.similar);
    assert!(
        c.workload.notes[0].contains("different engines"),
        "{:?}",
        c.workload
    );
}

/// Every real log compared with itself: no change, no setting, one workload; and
/// with the next log, a comparison that holds together whatever the pair.
#[test]
fn real_logs_compared_with_themselves_show_no_change() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut reports = Vec::new();
    for dir in ["sglang", "vllm", "trtllm", "lmdeploy"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        paths.sort();
        for p in paths {
            let r = analyze(&std::fs::read(&p).unwrap(), Options::default());
            if r.input.stat_lines > 0 {
                reports.push((p, r));
            }
        }
    }
    assert!(reports.len() > 20);
    let mut with_effect = 0;
    for (p, r) in &reports {
        let c = batchlens_core::compare(r, r);
        assert!(c.changes.is_empty(), "{}: {:?}", p.display(), c.changes);
        assert!(c.workload.similar, "{}: {:?}", p.display(), c.workload);
        if let Some(e) = &c.effect {
            with_effect += 1;
            assert_eq!(e.gen_throughput_ratio, 1.0, "{}", p.display());
            assert!(e.low <= 1.0 && 1.0 <= e.high, "{}", p.display());
            assert_eq!(c.attribution, "none", "{}", p.display());
        }
        if let Some(pc) = &c.prediction_check {
            // Nothing changed: the model predicts the run it was fitted on.
            assert!(pc.changes.is_empty(), "{}", p.display());
            assert!(pc.within_range != Some(false), "{}: {pc:?}", p.display());
            assert!(
                pc.error.is_none_or(|e| e.abs() < 0.05),
                "{}: {pc:?}",
                p.display()
            );
        }
        assert!(!c.explanation.is_empty());
        serde_json::to_string(&c).unwrap();
    }
    assert!(with_effect > 15, "{with_effect}");
    for w in reports.windows(2) {
        let c = batchlens_core::compare(&w[0].1, &w[1].1);
        if let Some(e) = &c.effect {
            assert!(e.low <= e.gen_throughput_ratio && e.gen_throughput_ratio <= e.high);
        }
        assert!(!c.explanation.is_empty());
        assert!(!batchlens_core::render::compare_markdown(&c).is_empty());
    }
}
