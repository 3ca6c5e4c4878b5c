//! Print a preset's log to stdout and its ground truth (JSON) to stderr.
//! Usage: cargo run -p batchlens-sim --example simlog -- <preset|config.json> [seed]
use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "kv_bound".into());
    let mut cfg = match batchlens_sim::SimConfig::preset(&name) {
        Some(c) => c,
        None => {
            let text = std::fs::read_to_string(&name).expect("preset name or JSON config path");
            serde_json::from_str(&text).expect("valid SimConfig JSON")
        }
    };
    if let Some(seed) = args.next() {
        cfg.seed = seed.parse().expect("seed");
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let outcome = batchlens_sim::simulate(&cfg, &mut |line| {
        let _ = w.write_all(line.as_bytes());
        let _ = w.write_all(b"\n");
    });
    let _ = w.flush();
    eprintln!("{}", serde_json::to_string_pretty(&outcome).unwrap());
}
