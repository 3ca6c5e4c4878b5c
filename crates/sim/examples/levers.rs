//! One run of the lever sweep (`bench/levers.py` calls it): draws the workload of a seed,
//! writes its log, simulates every lever relaxed and prints one JSON line.
//! Usage: levers <seed> <log path>
use std::io::Write;

use batchlens_sim::sweep::{self, Lever};
use batchlens_sim::Engine;

fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .expect("usage: levers <seed> <log path>");
    let path = args.next().expect("usage: levers <seed> <log path>");
    let cfg = sweep::draw(seed);
    let file = std::fs::File::create(&path).expect("create the log");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut failed = None;
    batchlens_sim::simulate(&cfg, &mut |line| {
        if failed.is_none() {
            if let Err(e) = w
                .write_all(line.as_bytes())
                .and_then(|_| w.write_all(b"\n"))
            {
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed.or_else(|| w.flush().err()) {
        panic!("writing {path}: {e}");
    }
    let (base, gains) = sweep::measure(&cfg);
    let ranks = if cfg.engine == Engine::Sglang {
        cfg.dp_size.max(1) as f64
    } else {
        1.0
    };
    // What the what-if is asked for each lever: the cap is per rank; the client sends
    // twice what it sends now (its requests in flight, or its rate), as the sim relaxes it.
    let busy = (base.prefill_s + base.decode_s).max(1e-9);
    let line = serde_json::json!({
        "seed": seed,
        "engine": cfg.engine,
        "client": if cfg.concurrency > 0 { "closed" } else if cfg.bursts.is_empty() { "poisson" } else { "bursty" },
        "config": cfg,
        "baseline": {
            "steady_gen_tok_s": base.steady_gen_tok_s,
            "steady_mean_running": base.steady_mean_running,
            "steady_mean_queued": base.steady_mean_queued,
            "steady_kv_usage": base.steady_kv_usage,
            "steady_start_s": base.steady_start_s,
            "steady_end_s": base.steady_end_s,
            "prefill_share": base.prefill_s / busy,
            "idle_share": base.idle_s / base.duration_s.max(1e-9),
            "retracted_requests": base.retracted_requests,
            "completed_requests": base.completed_requests,
            "aborted_requests": base.aborted_requests,
            "ranks": ranks,
        },
        "sim_gain": {
            "kv": gains.kv,
            "cap": gains.cap,
            "client": gains.client,
            "prefill": gains.prefill,
        },
        "label": gains.label().map_or("none", Lever::name),
        "what_if_args": {
            "kv": "kv_scale=2",
            "cap": format!("max_running={}", cfg.max_running_requests.saturating_mul(2)),
            "client": "client_scale=2",
            "prefill": "prefill_cost_scale=0.5",
        },
    });
    println!("{line}");
}
