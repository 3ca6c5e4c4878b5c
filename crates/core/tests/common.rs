//! Shared helpers for the integration tests.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use batchlens_core::report::Action;
use batchlens_core::{Analyzer, Options, Report};

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

pub fn fixture(rel: &str) -> Vec<u8> {
    let p = fixtures_dir().join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every `.log` fixture under a folder, sorted.
pub fn fixtures_in(folder: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fixtures_dir().join(folder);
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Every `.log` in `examples/` (logs the simulator wrote), by path.
pub fn example_logs() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    v.sort();
    v
}

pub fn analyze(bytes: &[u8]) -> Report {
    batchlens_core::analyze(bytes, Options::default())
}

/// Every line read on its own, without reading ahead: the reference.
pub fn analyze_line_by_line(bytes: &[u8], opts: Options) -> Report {
    let mut a = Analyzer::new(opts).line_by_line();
    a.feed(bytes);
    a.finish()
}

/// Feeds `bytes` cut at the given positions.
pub fn analyze_split(bytes: &[u8], cuts: &[usize]) -> Report {
    let mut a = Analyzer::new(Options::default());
    let mut from = 0;
    for &c in cuts {
        let c = c.clamp(from, bytes.len());
        a.feed(&bytes[from..c]);
        from = c;
    }
    a.feed(&bytes[from..]);
    a.finish()
}

/// Deterministic pseudo-random cut points (xorshift), so failures reproduce.
pub fn cuts(len: usize, n: usize, seed: u64) -> Vec<usize> {
    let mut x = seed.max(1);
    let mut v: Vec<usize> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % (len as u64 + 1)) as usize
        })
        .collect();
    v.sort();
    v
}

/// Each line of `log` as Docker's json-file driver writes it, stamped eight
/// hours off the engine's own clock (Docker writes UTC; the engine its local time).
pub fn docker_json(log: &str) -> String {
    log.lines()
        .map(|l| docker_json_record(&format!("{l}\n")))
        .collect()
}

/// One record of Docker's json-file driver holding `text` (from stderr), and its newline.
pub fn docker_json_record(text: &str) -> String {
    docker_json_record_in("stderr", text)
}

/// [`docker_json_record`] from the given stream.
pub fn docker_json_record_in(stream: &str, text: &str) -> String {
    format!(
        "{{\"log\":{},\"stream\":\"{stream}\",\"time\":\"2026-02-24T18:00:00.123456789Z\"}}\n",
        serde_json::to_string(text).unwrap()
    )
}

/// Every action of every finding of a report's diagnosis (none without one).
pub fn all_actions(r: &Report) -> impl Iterator<Item = &Action> {
    r.diagnosis
        .iter()
        .flat_map(|d| d.findings.iter())
        .flat_map(|f| f.actions.iter())
}

/// The seed story (examples/sglang-kv-bound.json), shortened.
pub fn story() -> batchlens_sim::SimConfig {
    batchlens_sim::SimConfig {
        seed: 7,
        kv_capacity_tokens: 116_171,
        concurrency: 150,
        num_requests: 0,
        duration_s: 900.0,
        prompt_len: batchlens_sim::LenDist::Uniform { min: 300, max: 700 },
        output_len: batchlens_sim::LenDist::LogNormal {
            mean: 2250.0,
            sigma: 0.5,
            min: 200,
            max: 4096,
        },
        max_new_tokens: 4096,
        step_a: 0.032,
        step_b: 0.000_35,
        step_c: 1.2e-7,
        ..batchlens_sim::SimConfig::default()
    }
}
