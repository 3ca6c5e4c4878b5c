//! Every preset behaves as its name says; runs are deterministic.

mod common;
use common::*;

use batchlens_sim::{simulate, Engine, SimConfig, PRESETS};

fn hash_run(cfg: &SimConfig) -> (u64, u64) {
    // FNV-1a over the bytes.
    let mut h: u64 = 0xcbf29ce484222325;
    let mut n = 0u64;
    simulate(cfg, &mut |l| {
        for &b in l.as_bytes().iter().chain(b"\n") {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        n += 1;
    });
    (h, n)
}

#[test]
fn deterministic_per_seed() {
    for engine in [Engine::Sglang, Engine::VllmV1, Engine::VllmV0] {
        let cfg = SimConfig {
            engine,
            num_requests: 200,
            kv_capacity_tokens: 50_000,
            ..Default::default()
        };
        let a = hash_run(&cfg);
        let b = hash_run(&cfg);
        assert_eq!(a, b, "{engine:?}");
        let c = hash_run(&SimConfig { seed: 2, ..cfg });
        assert_ne!(a.0, c.0, "{engine:?}");
    }
}

#[test]
fn all_presets_exist_and_parse_from_json() {
    for name in PRESETS {
        let cfg = SimConfig::preset(name).unwrap();
        let json = serde_json::to_string(&cfg).unwrap();
        let back: SimConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, cfg);
    }
    assert!(SimConfig::preset("nope").is_none());
    let cfg: SimConfig = serde_json::from_str(
        r#"{"engine":"vllm_v1","concurrency":3,"output_len":{"kind":"log_normal","mean":300,"sigma":0.5}}"#,
    )
    .unwrap();
    assert_eq!(cfg.engine, Engine::VllmV1);
    assert_eq!(cfg.concurrency, 3);
    assert_eq!(
        cfg.kv_capacity_tokens,
        SimConfig::default().kv_capacity_tokens
    );
}

/// Steady-window Decode lines.
fn steady_decodes(lines: &[String], out: &batchlens_sim::SimOutcome) -> Vec<Vec<(String, String)>> {
    let base = secs("2026-02-24 10:01:00");
    decode_lines(lines)
        .into_iter()
        .filter(|(ts, _)| {
            let t = (secs(ts) - base) as f64;
            t >= out.steady_start_s + 60.0 && t <= out.steady_end_s
        })
        .map(|x| x.1)
        .collect()
}

fn conserved(out: &batchlens_sim::SimOutcome) {
    assert_eq!(
        out.completed_requests + out.aborted_requests,
        out.submitted_requests
    );
    assert_eq!(out.aborted_requests, 0);
    assert_eq!(out.generated_tokens, out.useful_output_tokens);
    assert!(out.steady_end_s > out.steady_start_s);
}

#[test]
fn kv_bound() {
    let (lines, out) = run(&SimConfig::preset("kv_bound").unwrap());
    conserved(&out);
    assert!((40.0..70.0).contains(&out.steady_mean_running), "{out:?}");
    assert!((70.0..110.0).contains(&out.steady_mean_queued), "{out:?}");
    assert!((750.0..1000.0).contains(&out.steady_gen_tok_s), "{out:?}");
    assert!(out.steady_kv_usage > 0.8, "{out:?}");
    let d = steady_decodes(&lines, &out);
    let queued = d.iter().filter(|f| num(f, "#queue-req") > 0.0).count();
    assert!(queued as f64 >= 0.95 * d.len() as f64);
    // The pool (plus reservation) binds: usage stays high while requests wait.
    let high = d.iter().filter(|f| num(f, "token usage") >= 0.75).count();
    assert!(high as f64 >= 0.9 * d.len() as f64);
    // Retractions happen, but far less than in the retraction preset.
    assert!(out.retractions < 150, "{}", out.retractions);
}

#[test]
fn running_cap() {
    let (lines, out) = run(&SimConfig::preset("running_cap").unwrap());
    conserved(&out);
    let d = steady_decodes(&lines, &out);
    assert!(!d.is_empty());
    for f in &d {
        if num(f, "#queue-req") > 0.0 {
            assert_eq!(num(f, "#running-req"), 32.0);
        }
        assert!(num(f, "token usage") < 0.5);
    }
    assert!(out.steady_mean_queued > 10.0);
    assert!((out.steady_mean_running - 32.0).abs() < 0.5);
    assert!(lines[0].contains("max_running_requests=32,"));
}

#[test]
fn client_underload() {
    let (lines, out) = run(&SimConfig::preset("client_underload").unwrap());
    conserved(&out);
    for (_, f) in decode_lines(&lines) {
        assert_eq!(num(&f, "#queue-req"), 0.0);
        assert!(num(&f, "#running-req") <= 8.0);
    }
    assert!(out.steady_mean_queued < 0.05);
    assert!(out.steady_mean_running > 7.0);
}

#[test]
fn prefill_heavy() {
    let (lines, out) = run(&SimConfig::preset("prefill_heavy").unwrap());
    conserved(&out);
    assert!(out.prefill_s > 0.7 * out.duration_s, "{out:?}");
    let pre = prefill_lines(&lines);
    let chunked = pre
        .iter()
        .filter(|(_, f)| num(f, "#new-token") == 8192.0)
        .count();
    assert!(chunked as f64 > 0.5 * pre.len() as f64);
    let queued = pre
        .iter()
        .filter(|(_, f)| num(f, "#queue-req") > 0.0)
        .count();
    assert!(queued as f64 > 0.3 * pre.len() as f64);
    assert!(out.steady_mean_queued > 2.0, "{out:?}");
}

#[test]
fn retraction() {
    let (lines, out) = run(&SimConfig::preset("retraction").unwrap());
    conserved(&out);
    assert!(out.retractions > 150, "{out:?}");
    assert!(out.recomputed_tokens as f64 > 0.5 * out.prompt_tokens_computed as f64);
    assert!(lines
        .iter()
        .any(|l| l.contains("KV cache pool is full. Retract requests. #retracted_reqs: ")));
    assert!(lines[0].contains("schedule_conservativeness=0.3,"));
}

#[test]
fn decode_saturated() {
    let cfg = SimConfig::preset("decode_saturated").unwrap();
    let (lines, out) = run(&cfg);
    conserved(&out);
    assert!(out.steady_mean_queued < 1.0);
    assert!(out.steady_mean_running > 0.95 * cfg.concurrency as f64);
    // Throughput is close to the asymptote 1/step_b.
    let n = out.steady_mean_running;
    let kv = out.steady_kv_usage * cfg.kv_capacity_tokens as f64;
    let model = n / (cfg.step_a + cfg.step_b * n + cfg.step_c * kv);
    assert!(
        (out.steady_gen_tok_s / model - 1.0).abs() < 0.05,
        "{} vs {model}",
        out.steady_gen_tok_s
    );
    assert!(out.steady_gen_tok_s > 0.85 / cfg.step_b);
    assert!(decode_lines(&lines).len() > 50);
}

#[test]
fn vllm_kv_bound() {
    let (lines, out) = run(&SimConfig::preset("vllm_kv_bound").unwrap());
    conserved(&out);
    assert!(out.preemptions > 100, "{out:?}");
    assert!(out.steady_kv_usage > 0.9);
    assert!(out.steady_mean_queued > 50.0);
    let stats: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("Engine 000: "))
        .collect();
    let full = stats
        .iter()
        .filter(|l| l.contains("GPU KV cache usage: 9"))
        .count();
    assert!(full as f64 > 0.8 * stats.len() as f64);
}

#[test]
fn what_if_capacity_monotone() {
    // More KV → more running and more throughput under the same kv-bound workload.
    let base = SimConfig {
        duration_s: 900.0,
        ..SimConfig::preset("kv_bound").unwrap()
    };
    let (_, a) = run(&base);
    let (_, b) = run(&SimConfig {
        kv_capacity_tokens: 2 * base.kv_capacity_tokens,
        ..base.clone()
    });
    assert!(
        b.steady_mean_running > 1.6 * a.steady_mean_running,
        "{} {}",
        a.steady_mean_running,
        b.steady_mean_running
    );
    assert!(b.steady_gen_tok_s > 1.3 * a.steady_gen_tok_s);
}

#[test]
fn steady_state_is_stable_across_seeds() {
    let base = SimConfig {
        duration_s: 1200.0,
        ..SimConfig::preset("kv_bound").unwrap()
    };
    let (_, a) = run(&base);
    let (_, b) = run(&SimConfig { seed: 99, ..base });
    let rel = |x: f64, y: f64| (x / y - 1.0).abs();
    assert!(
        rel(a.steady_gen_tok_s, b.steady_gen_tok_s) < 0.03,
        "{a:?} {b:?}"
    );
    assert!(rel(a.steady_mean_running, b.steady_mean_running) < 0.05);
}
