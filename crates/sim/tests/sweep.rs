//! The physics behind the lever sweep: each lever buys what the mechanism it relaxes
//! says, on every engine; the random draws cover the space the sweep claims.

use batchlens_sim::sweep::{self, Lever};
use batchlens_sim::{simulate, Engine, LenDist, SimConfig};

const ENGINES: [Engine; 4] = [
    Engine::Sglang,
    Engine::VllmV1,
    Engine::VllmV0,
    Engine::Trtllm,
];

fn gain(cfg: &SimConfig, lever: Lever) -> f64 {
    let base = simulate(cfg, &mut |_| {}).steady_gen_tok_s;
    let relaxed = simulate(&sweep::relax(cfg, lever), &mut |_| {}).steady_gen_tok_s;
    assert!(base > 0.0, "{cfg:?}");
    relaxed / base - 1.0
}

fn server(engine: Engine) -> SimConfig {
    SimConfig {
        engine,
        num_requests: 0,
        duration_s: 600.0,
        step_a: 0.012,
        step_b: 2e-4,
        step_c: 2e-8,
        prefill_a: 0.005,
        prefill_per_token: 4e-5,
        prefill_attn: 4e-5 * 1e-5,
        roofline: true,
        context_len: 32_768,
        ..Default::default()
    }
}

/// Prompts of ~8k tokens, outputs of ~24: prefill takes most of the GPU's time.
fn prompt_heavy(engine: Engine, roofline: bool) -> SimConfig {
    SimConfig {
        kv_capacity_tokens: 2_000_000,
        concurrency: 32,
        prompt_len: LenDist::Uniform {
            min: 7000,
            max: 9000,
        },
        output_len: LenDist::Uniform { min: 16, max: 32 },
        max_new_tokens: 64,
        roofline,
        ..server(engine)
    }
}

#[test]
fn halving_prefill_cost_speeds_up_a_prompt_heavy_run() {
    for engine in ENGINES {
        for roofline in [false, true] {
            let cfg = prompt_heavy(engine, roofline);
            let out = simulate(&cfg, &mut |_| {});
            assert!(
                out.prefill_s > 0.6 * (out.prefill_s + out.decode_s),
                "{engine:?}: {out:?}"
            );
            let g = gain(&cfg, Lever::Prefill);
            assert!(
                g > 0.4,
                "{engine:?} roofline {roofline}: prefill ×½ gained {g}"
            );
        }
    }
}

#[test]
fn more_clients_buy_little_when_long_prompts_fill_the_gpu() {
    // Prefill of long prompts is compute-bound: batching more of them is not cheaper, so
    // twice the requests in flight mostly wait.
    for engine in ENGINES {
        let cfg = prompt_heavy(engine, true);
        let g = gain(&cfg, Lever::Client);
        assert!(g < 0.1, "{engine:?}: client ×2 gained {g}");
        let p = gain(&cfg, Lever::Prefill);
        assert!(
            p > 3.0 * g.max(0.0),
            "{engine:?}: prefill {p} vs client {g}"
        );
    }
}

#[test]
fn doubling_the_pool_speeds_up_a_kv_bound_run() {
    for engine in ENGINES {
        let cfg = SimConfig {
            kv_capacity_tokens: 60_000,
            concurrency: 200,
            prompt_len: LenDist::Uniform { min: 300, max: 700 },
            output_len: LenDist::Uniform {
                min: 500,
                max: 1500,
            },
            max_new_tokens: 2048,
            ..server(engine)
        };
        let out = simulate(&cfg, &mut |_| {});
        assert!(out.steady_mean_queued > 20.0, "{engine:?}: {out:?}");
        let g = gain(&cfg, Lever::Kv);
        assert!(g > 0.2, "{engine:?}: kv ×2 gained {g}");
        assert!(gain(&cfg, Lever::Cap).abs() < 0.03, "{engine:?}");
    }
}

#[test]
fn doubling_the_cap_speeds_up_a_cap_bound_run() {
    for engine in ENGINES {
        let cfg = SimConfig {
            kv_capacity_tokens: 1_000_000,
            max_running_requests: 16,
            max_running_requests_explicit: true,
            concurrency: 64,
            prompt_len: LenDist::Uniform { min: 200, max: 800 },
            output_len: LenDist::Uniform {
                min: 200,
                max: 1200,
            },
            max_new_tokens: 2048,
            ..server(engine)
        };
        let out = simulate(&cfg, &mut |_| {});
        assert!((out.steady_mean_running - 16.0).abs() < 0.5, "{engine:?}");
        let g = gain(&cfg, Lever::Cap);
        assert!(g > 0.4, "{engine:?}: cap ×2 gained {g}");
        assert!(gain(&cfg, Lever::Kv).abs() < 0.03, "{engine:?}");
    }
}

#[test]
fn attention_bound_decode_gains_nothing_from_a_bigger_batch() {
    // When reading the KV for attention dominates a step, a step's time grows with the
    // batch as fast as its tokens do: twice the pool admits twice the requests and buys
    // nothing.
    for engine in ENGINES {
        let cfg = SimConfig {
            kv_capacity_tokens: 200_000,
            concurrency: 300,
            step_c: 3e-7,
            prompt_len: LenDist::Uniform {
                min: 1500,
                max: 2500,
            },
            output_len: LenDist::Uniform { min: 200, max: 600 },
            max_new_tokens: 1024,
            ..server(engine)
        };
        let kv = gain(&cfg, Lever::Kv);
        assert!(kv.abs() < 0.08, "{engine:?}: kv ×2 gained {kv}");
    }
}

#[test]
fn an_underloaded_open_loop_scales_with_its_arrival_rate() {
    for engine in ENGINES {
        let cfg = SimConfig {
            kv_capacity_tokens: 500_000,
            concurrency: 0,
            arrival_rate: 0.5,
            duration_s: 2000.0,
            ..server(engine)
        };
        let g = gain(&cfg, Lever::Client);
        assert!((g - 1.0).abs() < 0.1, "{engine:?}: rate ×2 gained {g}");
        assert!(gain(&cfg, Lever::Kv).abs() < 0.03, "{engine:?}");
    }
}

#[test]
fn relax_changes_only_its_lever() {
    let mut cfg = sweep::draw(3);
    cfg.concurrency = 10;
    let kv = sweep::relax(&cfg, Lever::Kv);
    assert_eq!(kv.kv_capacity_tokens, 2 * cfg.kv_capacity_tokens);
    assert_eq!(
        SimConfig {
            kv_capacity_tokens: cfg.kv_capacity_tokens,
            ..kv
        },
        cfg
    );
    let cap = sweep::relax(&cfg, Lever::Cap);
    assert_eq!(cap.max_running_requests, 2 * cfg.max_running_requests);
    let client = sweep::relax(&cfg, Lever::Client);
    assert_eq!(client.concurrency, 20);
    let prefill = sweep::relax(&cfg, Lever::Prefill);
    assert_eq!(prefill.prefill_cost_scale, 0.5 * cfg.prefill_cost_scale);
    assert_eq!(
        SimConfig {
            prefill_cost_scale: cfg.prefill_cost_scale,
            ..prefill
        },
        cfg
    );
    // An open loop doubles its rate and its bursts.
    let open = SimConfig {
        concurrency: 0,
        arrival_rate: 1.5,
        bursts: vec![batchlens_sim::Burst {
            at_s: 10.0,
            count: 7,
        }],
        ..cfg
    };
    let more = sweep::relax(&open, Lever::Client);
    assert_eq!(more.arrival_rate, 3.0);
    assert_eq!(more.bursts[0].count, 14);
    assert_eq!(more.concurrency, 0);
}

#[test]
fn draws_are_deterministic_and_cover_the_space() {
    let all = sweep::subset(300);
    assert_eq!(all, sweep::subset(300));
    let has = |f: &dyn Fn(&SimConfig) -> bool| all.iter().filter(|c| f(c)).count();
    for engine in ENGINES {
        assert!(has(&|c| c.engine == engine) >= 30, "{engine:?}");
    }
    assert!(has(&|c| c.concurrency > 0) >= 100);
    assert!(has(&|c| c.concurrency == 0 && c.bursts.is_empty()) >= 50);
    assert!(has(&|c| !c.bursts.is_empty()) >= 20);
    assert!(has(&|c| c.dp_size == 2) >= 10);
    assert!(has(&|c| c.prompt_len.mean() < 256.0) >= 20);
    assert!(has(&|c| c.prompt_len.mean() > 4096.0) >= 40);
    assert!(has(&|c| c.output_len.mean() < 32.0) >= 20);
    assert!(has(&|c| c.output_len.mean() > 1024.0) >= 40);
    assert!(has(&|c| c.roofline) >= 100 && has(&|c| !c.roofline) >= 30);
    assert!(has(&|c| c.schedule_conservativeness != 1.0) >= 30);
    // Small caps nobody stated, as speculative decoding sets them in SGLang.
    assert!(
        has(&|c| c.engine == Engine::Sglang
            && !c.max_running_requests_explicit
            && c.max_running_requests <= 48)
            >= 5
    );
    let a: Vec<f64> = all.iter().map(|c| c.step_a).collect();
    let lo = a.iter().cloned().fold(f64::MAX, f64::min);
    let hi = a.iter().cloned().fold(0.0, f64::max);
    assert!(hi / lo > 8.0, "{lo} {hi}");
    for c in &all {
        let json = serde_json::to_string(c).unwrap();
        let back: SimConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(
            (back.engine, back.seed, back.bursts.len()),
            (c.engine, c.seed, c.bursts.len())
        );
        assert!(c.duration_s >= 120.0 && c.duration_s <= 8000.0);
        assert!(c.concurrency > 0 || c.arrival_rate > 0.0);
    }
}

#[test]
fn a_fixed_subset_is_labelled_by_every_lever() {
    // The first seeds hold every label, so a test over them sees every kind of limit
    // (cut to 400 s of traffic to keep the debug build quick: the labels hold).
    let mut seen = std::collections::BTreeMap::new();
    for (seed, cfg) in sweep::subset(40).into_iter().enumerate() {
        let cfg = SimConfig {
            duration_s: cfg.duration_s.min(400.0),
            ..cfg
        };
        let (out, gains) = sweep::measure(&cfg);
        assert_eq!(out.aborted_requests, 0, "seed {seed}");
        assert!(gains.baseline_tok_s > 0.0, "seed {seed}");
        let label = gains.label().map_or("none", Lever::name);
        seen.entry(label).or_insert_with(Vec::new).push(seed);
    }
    for label in ["kv", "cap", "client", "prefill", "none"] {
        assert!(seen.contains_key(label), "{label} missing from {seen:?}");
    }
}
