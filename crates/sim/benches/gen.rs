//! Log-generation speed (MB/s of text) for long runs of several presets.
//! `cargo bench -p batchlens-sim` (plain `harness = false` timing, no extra dependencies).

use std::time::Instant;

use batchlens_sim::{simulate, SimConfig};

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    // Durations chosen for roughly 30-60 MB of text per case.
    let cases: [(&str, f64); 6] = [
        ("kv_bound", 300_000.0),
        ("running_cap", 50_000.0),
        ("decode_saturated", 80_000.0),
        ("prefill_heavy", 40_000.0),
        ("client_underload", 60_000.0),
        ("vllm_kv_bound", 400_000.0),
    ];
    for (name, duration) in cases {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let cfg = SimConfig {
            duration_s: duration,
            ..SimConfig::preset(name).expect("preset")
        };
        let mut bytes = 0u64;
        let mut sink = 0u64;
        let t0 = Instant::now();
        let out = simulate(&cfg, &mut |l| {
            bytes += l.len() as u64 + 1;
            sink = sink.wrapping_add(l.as_bytes()[l.len() / 2] as u64);
        });
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "{name:<18} {:>8.1} MB in {secs:>6.2} s = {:>7.1} MB/s  ({} lines, {:.0} simulated s) [{sink}]",
            bytes as f64 / 1e6,
            bytes as f64 / 1e6 / secs,
            out.lines.total,
            out.duration_s
        );
    }
}
