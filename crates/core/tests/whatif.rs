//! The what-if check: simulate a workload, predict a changed configuration from the log
//! alone, simulate the changed configuration, and require the predicted steady-state
//! running requests and generation throughput within ±10 % of the simulated ones.
//! `WHATIF_SEED=N cargo test -p batchlens-core --test whatif -- --nocapture` runs the same
//! check with another seed and prints every comparison.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

mod common;

use batchlens_core::whatif::{self, Change};
use batchlens_core::{analyze, Options};
use batchlens_sim::{simulate, SimConfig, SimOutcome};
use common::story;

fn run(cfg: &SimConfig) -> (String, SimOutcome) {
    let mut text = String::new();
    let out = simulate(cfg, &mut |l| {
        text.push_str(l);
        text.push('\n');
    });
    (text, out)
}

struct Case {
    name: &'static str,
    base: SimConfig,
    change: &'static str,
    apply: fn(&mut SimConfig),
    /// Asserted within ±10 % (the others are printed: known limits of the model).
    strict: bool,
}

fn preset(name: &str, duration: f64) -> SimConfig {
    let mut c = SimConfig::preset(name).unwrap();
    c.duration_s = duration;
    c
}

/// TensorRT-LLM under a Poisson client: the batch follows the arrivals, and every
/// iteration's time is printed.
fn trtllm_poisson() -> SimConfig {
    SimConfig {
        engine: batchlens_sim::Engine::Trtllm,
        concurrency: 0,
        num_requests: 0,
        arrival_rate: 3.0,
        duration_s: 600.0,
        kv_capacity_tokens: 200_000,
        prompt_len: batchlens_sim::LenDist::Uniform { min: 200, max: 600 },
        output_len: batchlens_sim::LenDist::Uniform { min: 100, max: 300 },
        max_new_tokens: 1024,
        ..SimConfig::default()
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "sglang kv 116k -> 159k",
            base: story(),
            change: "kv_tokens=159000",
            apply: |c| c.kv_capacity_tokens = 159_000,
            strict: true,
        },
        Case {
            name: "sglang kv 116k -> 80k",
            base: story(),
            change: "kv_tokens=80000",
            apply: |c| c.kv_capacity_tokens = 80_000,
            strict: true,
        },
        Case {
            name: "sglang kv fp8",
            base: story(),
            change: "kv_dtype_fp8=1",
            apply: |c| c.kv_capacity_tokens *= 2,
            strict: true,
        },
        Case {
            name: "sglang conservativeness 0.5",
            base: story(),
            change: "schedule_conservativeness=0.5",
            apply: |c| c.schedule_conservativeness = 0.5,
            strict: true,
        },
        Case {
            name: "sglang story clients 150 -> 40",
            base: story(),
            change: "client_concurrency=40",
            apply: |c| c.concurrency = 40,
            strict: true,
        },
        Case {
            name: "sglang max_running 32 -> 48",
            base: preset("running_cap", 600.0),
            change: "max_running=48",
            apply: |c| c.max_running_requests = 48,
            strict: true,
        },
        Case {
            name: "sglang max_running 32 -> 16",
            base: preset("running_cap", 600.0),
            change: "max_running=16",
            apply: |c| c.max_running_requests = 16,
            strict: true,
        },
        Case {
            name: "sglang story max_running 40",
            base: story(),
            change: "max_running=40",
            apply: |c| {
                c.max_running_requests = 40;
                c.max_running_requests_explicit = true
            },
            strict: true,
        },
        Case {
            name: "sglang clients 8 -> 24",
            base: preset("client_underload", 600.0),
            change: "client_concurrency=24",
            apply: |c| c.concurrency = 24,
            strict: true,
        },
        Case {
            name: "sglang clients 8 -> 24 as a scale",
            base: preset("client_underload", 600.0),
            change: "client_scale=3",
            apply: |c| c.concurrency = 24,
            strict: true,
        },
        Case {
            name: "sglang saturated clients 384 -> 192",
            base: preset("decode_saturated", 600.0),
            change: "client_concurrency=192",
            apply: |c| c.concurrency = 192,
            strict: true,
        },
        Case {
            name: "vllm kv 116k -> 159k",
            base: preset("vllm_kv_bound", 900.0),
            change: "kv_tokens=159000",
            apply: |c| c.kv_capacity_tokens = 159_000,
            strict: true,
        },
        Case {
            name: "vllm max_running 256 -> 40",
            base: preset("vllm_kv_bound", 900.0),
            change: "max_running=40",
            apply: |c| c.max_running_requests = 40,
            strict: true,
        },
        Case {
            name: "vllm v0 kv 116k -> 159k",
            base: preset("vllm_v0_kv_bound", 900.0),
            change: "kv_tokens=159000",
            apply: |c| c.kv_capacity_tokens = 159_000,
            strict: true,
        },
        Case {
            name: "sglang retraction kv 116k -> 159k",
            // Requests live ~4 minutes here and start far above the steady state (short
            // contexts at first): an hour keeps that overshoot out of the simulated truth.
            base: preset("retraction", 3600.0),
            change: "kv_tokens=159000",
            apply: |c| c.kv_capacity_tokens = 159_000,
            strict: true,
        },
        Case {
            name: "sglang running_cap kv x0.5 (no effect)",
            base: preset("running_cap", 600.0),
            change: "kv_scale=0.5",
            apply: |c| c.kv_capacity_tokens /= 2,
            strict: true,
        },
        Case {
            name: "sglang dp2 kv 116k -> 159k per rank",
            base: SimConfig {
                dp_size: 2,
                concurrency: 300,
                ..story()
            },
            change: "kv_tokens=159000",
            apply: |c| c.kv_capacity_tokens = 159_000,
            strict: true,
        },
        Case {
            name: "sglang dp2 max_running 20 per rank",
            base: SimConfig {
                dp_size: 2,
                concurrency: 300,
                ..story()
            },
            change: "max_running=20",
            apply: |c| {
                c.max_running_requests = 20;
                c.max_running_requests_explicit = true
            },
            strict: true,
        },
        Case {
            name: "sglang kv x2 and 90 clients",
            base: story(),
            change: "kv_tokens=232000,client_concurrency=90",
            apply: |c| {
                c.kv_capacity_tokens = 232_000;
                c.concurrency = 90
            },
            strict: true,
        },
        Case {
            name: "sglang story capped at 40 -> uncapped",
            base: SimConfig {
                max_running_requests: 40,
                max_running_requests_explicit: true,
                ..story()
            },
            change: "max_running=4096",
            apply: |c| c.max_running_requests = 4096,
            strict: true,
        },
        Case {
            name: "trtllm poisson rate x1.5",
            base: trtllm_poisson(),
            change: "client_scale=1.5",
            apply: |c| c.arrival_rate *= 1.5,
            strict: false,
        },
        Case {
            name: "trtllm poisson rate x4",
            base: trtllm_poisson(),
            change: "client_scale=4",
            apply: |c| c.arrival_rate *= 4.0,
            strict: false,
        },
        Case {
            name: "sglang clients 8 -> 400 (KV binds)",
            base: SimConfig {
                kv_capacity_tokens: 116_171,
                ..preset("client_underload", 600.0)
            },
            change: "client_concurrency=400",
            apply: |c| c.concurrency = 400,
            strict: false,
        },
        Case {
            name: "vllm clients 150 -> 40",
            base: preset("vllm_kv_bound", 900.0),
            change: "client_concurrency=40",
            apply: |c| c.concurrency = 40,
            strict: true,
        },
    ]
}

#[test]
fn what_if_matches_simulation() {
    let mut failures = Vec::new();
    for case in cases() {
        let mut base_cfg = case.base.clone();
        if let Some(seed) = std::env::var("WHATIF_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
        {
            base_cfg.seed = seed;
        }
        let (text, base) = run(&base_cfg);
        let report = analyze(text.as_bytes(), Options::default());
        let changes: Vec<Change> = case
            .change
            .split(',')
            .map(|c| whatif::parse_change(c).unwrap())
            .collect();
        let w = whatif::predict(&report, &changes).expect("a model");
        let mut cfg = base_cfg.clone();
        (case.apply)(&mut cfg);
        let (_, truth) = run(&cfg);
        let p = &w.predicted;
        assert!(p.low <= p.gen_throughput_tok_s && p.gen_throughput_tok_s <= p.high);
        assert!(p.running_low <= p.running_requests && p.running_requests <= p.running_high);
        let err_run = p.running_requests / truth.steady_mean_running - 1.0;
        let err_gen = p.gen_throughput_tok_s / truth.steady_gen_tok_s - 1.0;
        let line = format!(
            "{:<36} base {:>6.1} run {:>7.1} tok/s (sim {:>6.1} / {:>7.1}) | predicted {:>6.1} run {:>7.1} tok/s [{:.0}-{:.0}] | simulated {:>6.1} run {:>7.1} tok/s | err run {:+5.1}% gen {:+5.1}%",
            case.name,
            w.baseline.running_requests,
            w.baseline.gen_throughput_tok_s,
            base.steady_mean_running,
            base.steady_gen_tok_s,
            p.running_requests,
            p.gen_throughput_tok_s,
            p.low,
            p.high,
            truth.steady_mean_running,
            truth.steady_gen_tok_s,
            err_run * 100.0,
            err_gen * 100.0
        );
        eprintln!("{line}\n    {}", w.model);
        if case.strict && (err_run.abs() > 0.10 || err_gen.abs() > 0.10) {
            failures.push(line);
        }
    }
    assert!(
        failures.is_empty(),
        "outside ±10%:\n{}",
        failures.join("\n")
    );
}

#[test]
fn no_change_predicts_the_baseline() {
    let (text, _) = run(&story());
    let report = analyze(text.as_bytes(), Options::default());
    let w = whatif::predict(&report, &[]).unwrap();
    assert_eq!(w.predicted.running_requests, w.baseline.running_requests);
    let rel = w.predicted.gen_throughput_tok_s / w.baseline.gen_throughput_tok_s - 1.0;
    assert!(rel.abs() < 0.002, "{w:?}");
    // More KV never predicts fewer running requests or less throughput here.
    let more = whatif::predict(&report, &[whatif::parse_change("kv_scale=1.5").unwrap()]).unwrap();
    assert!(more.predicted.running_requests > w.predicted.running_requests);
    assert!(more.predicted.gen_throughput_tok_s > w.predicted.gen_throughput_tok_s);
    assert_eq!(more.predicted.bound_by, "kv_cache");
}

#[test]
fn memory_flags_convert_when_the_startup_lines_allow() {
    let (text, _) = run(&story());
    let report = analyze(text.as_bytes(), Options::default());
    // SGLang prints mem_fraction_static, the pool's size in GB and what is left.
    let w = whatif::predict(
        &report,
        &[whatif::parse_change("mem_fraction_static=0.9").unwrap()],
    )
    .unwrap();
    assert!(w.notes.is_empty(), "{:?}", w.notes);
    assert!(w.predicted.running_requests > w.baseline.running_requests);
    // A lower fraction shrinks the pool.
    let w = whatif::predict(
        &report,
        &[whatif::parse_change("mem_fraction_static=0.8").unwrap()],
    )
    .unwrap();
    assert!(w.predicted.running_requests < w.baseline.running_requests);
    // vLLM's startup lines do not give the GPU's memory: the change is reported, not guessed.
    let (text, _) = run(&preset("vllm_kv_bound", 300.0));
    let report = analyze(text.as_bytes(), Options::default());
    let w = whatif::predict(
        &report,
        &[whatif::parse_change("gpu_memory_utilization=0.95").unwrap()],
    )
    .unwrap();
    assert_eq!(w.notes.len(), 1);
}

#[test]
fn parse_change_accepts_known_names_only() {
    let c = whatif::parse_change("kv_tokens=159000").unwrap();
    assert_eq!((c.parameter.as_str(), c.value), ("kv_tokens", 159000.0));
    for name in whatif::PARAMETERS {
        let v = if name.contains("fraction") || name.contains("utilization") {
            "0.9"
        } else if *name == "kv_dtype_fp8" {
            "1"
        } else {
            "2"
        };
        assert!(
            whatif::parse_change(&format!("{name}={v}")).is_ok(),
            "{name}"
        );
    }
    for bad in [
        "kv_tokens",
        "kv=1",
        "kv_tokens=x",
        "kv_tokens=-1",
        "kv_tokens=0",
        "max_running=inf",
        "mem_fraction_static=1.5",
        "kv_dtype_fp8=2",
        "kv_dtype_fp8=0.5",
        "client_scale=0",
    ] {
        assert!(whatif::parse_change(bad).is_err(), "{bad}");
    }
}

/// Every fixture log and every parameter: a finite, ordered prediction (or none when the log
/// has no steady state to fit).
#[test]
fn predictions_are_sane_on_every_fixture() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut logs = Vec::new();
    for dir in ["sglang", "vllm", "hostile", "other", "client"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            if e.path().extension().is_some_and(|x| x == "log") {
                logs.push(e.path());
            }
        }
    }
    assert!(!logs.is_empty());
    let specs = [
        "kv_tokens=200000",
        "kv_scale=0.5",
        "kv_dtype_fp8=1",
        "mem_fraction_static=0.9",
        "gpu_memory_utilization=0.95",
        "max_running=8",
        "max_running=1024",
        "client_concurrency=1",
        "client_concurrency=500",
        "schedule_conservativeness=0.3",
    ];
    let mut fitted = 0;
    for path in &logs {
        let bytes = std::fs::read(path).unwrap();
        let report = analyze(&bytes, Options::default());
        for spec in specs {
            let change = whatif::parse_change(spec).unwrap();
            let Some(w) = whatif::predict(&report, &[change]) else {
                continue;
            };
            fitted += 1;
            let p = &w.predicted;
            let all = [
                p.running_requests,
                p.gen_throughput_tok_s,
                p.low,
                p.high,
                p.per_request_tok_s,
                p.running_low,
                p.running_high,
            ];
            assert!(
                all.iter().all(|v| v.is_finite() && *v >= 0.0),
                "{}: {spec}: {p:?}",
                path.display()
            );
            assert!(p.low <= p.gen_throughput_tok_s && p.gen_throughput_tok_s <= p.high);
            assert!(p.running_low <= p.running_requests && p.running_requests <= p.running_high);
        }
    }
    assert!(fitted > 0);
}

/// An open-loop client sending more than the server can take: requests pile up whatever
/// the client had in flight before, and the server makes what its steps make when full
/// (here read off TensorRT-LLM's own decode-step times), not what the old in-flight count
/// would.
#[test]
fn an_overloaded_open_loop_server_makes_what_its_steps_make() {
    let base = trtllm_poisson();
    let (text, _) = run(&base);
    let report = analyze(text.as_bytes(), Options::default());
    for scale in [1.5, 6.0] {
        let w = whatif::predict(
            &report,
            &[whatif::parse_change(&format!("client_scale={scale}")).unwrap()],
        )
        .unwrap();
        assert!(w.model.contains("least squares"), "{}", w.model);
        let mut cfg = base.clone();
        cfg.arrival_rate *= scale;
        let (_, truth) = run(&cfg);
        let err = w.predicted.gen_throughput_tok_s / truth.steady_gen_tok_s - 1.0;
        assert!(
            err.abs() < 0.1,
            "rate x{scale}: predicted {:.0} tok/s, simulated {:.0}",
            w.predicted.gen_throughput_tok_s,
            truth.steady_gen_tok_s
        );
    }
}

/// TensorRT-LLM's default policy admits a request only with its whole length reserved, so
/// a run pinned at its running cap with the pool half used cannot double its batch: raising
/// the cap fills the pool with reservations first. The model counts each admitted request at
/// its prompt and whole output, not at what it holds on average.
#[test]
fn a_whole_request_reservation_bounds_a_raised_cap() {
    let base = SimConfig {
        engine: batchlens_sim::Engine::Trtllm,
        concurrency: 16,
        num_requests: 0,
        duration_s: 900.0,
        kv_capacity_tokens: 4_800,
        max_running_requests: 4,
        max_running_requests_explicit: true,
        prompt_len: batchlens_sim::LenDist::Uniform { min: 400, max: 600 },
        output_len: batchlens_sim::LenDist::Uniform { min: 150, max: 250 },
        max_new_tokens: 250,
        ..SimConfig::default()
    };
    let (text, _) = run(&base);
    let report = analyze(text.as_bytes(), Options::default());
    let w = whatif::predict(&report, &[whatif::parse_change("max_running=8").unwrap()]).unwrap();
    let mut cfg = base.clone();
    cfg.max_running_requests = 8;
    let (_, truth) = run(&cfg);
    let p = &w.predicted;
    eprintln!(
        "predicted {} running {} tok/s ({}), simulated {:.1} running {:.1} tok/s",
        p.running_requests,
        p.gen_throughput_tok_s,
        p.bound_by,
        truth.steady_mean_running,
        truth.steady_gen_tok_s
    );
    assert_eq!(p.bound_by, "kv_cache");
    assert!(
        (p.running_requests / truth.steady_mean_running - 1.0).abs() < 0.15,
        "predicted {} running, simulated {:.1}",
        p.running_requests,
        truth.steady_mean_running
    );
}
