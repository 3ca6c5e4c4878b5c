//! `batchlens compare`: the bundled before/after pair, one log with a restart compared
//! run to run (the same comparison as the two runs' own logs), the formats, and
//! bad input exiting 2.

use std::path::PathBuf;

use assert_cmd::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn batchlens(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("batchlens")
        .unwrap()
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = batchlens(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).unwrap()
}

const BEFORE: &str = "examples/sglang-kv-bound.log";
const AFTER: &str = "examples/sglang-kv-bound-larger-pool.log";

#[test]
fn the_bundled_pair_credits_the_larger_pool() {
    let c = json(&["compare", BEFORE, AFTER, "--format", "json"]);
    assert_eq!(c["schema_version"], 1);
    assert_eq!(c["changes"][0]["setting"], "KV pool (tokens)");
    assert_eq!(c["changes"][0]["before"], "116,171");
    assert_eq!(c["changes"][0]["after"], "159,000");
    assert_eq!(c["workload"]["similar"], true);
    assert_eq!(c["attribution"], "setting");
    for side in ["before", "after"] {
        assert_eq!(c[side]["engine"], "sglang");
        assert_eq!(c[side]["verdict"], "kv_cache_capacity");
        for f in [
            "gen_throughput_tok_s",
            "running_requests",
            "queued_requests",
            "kv_usage",
        ] {
            assert!(c[side][f].as_f64().is_some_and(|v| v > 0.0), "{side}.{f}");
        }
    }
    let e = &c["effect"];
    let ratio = e["gen_throughput_ratio"].as_f64().unwrap();
    let measured = c["after"]["gen_throughput_tok_s"].as_f64().unwrap()
        / c["before"]["gen_throughput_tok_s"].as_f64().unwrap();
    assert!(
        (ratio / measured - 1.0).abs() < 0.002,
        "{ratio} vs {measured}"
    );
    assert!(e["low"].as_f64().unwrap() > 1.0 && e["high"].as_f64().unwrap() >= ratio);
    let p = &c["prediction_check"];
    assert!(p["error"].as_f64().unwrap().abs() < 0.10, "{p}");
    assert_eq!(p["changes"][0]["parameter"], "kv_tokens");
    let first = c["explanation"][0].as_str().unwrap();
    assert!(
        first.starts_with("The larger pool did it: +") && first.contains("as predicted"),
        "{first}"
    );

    let text = ok(&["compare", BEFORE, AFTER]);
    assert!(text.contains(first), "{text}");
    assert!(
        text.contains("KV pool (tokens)  116,171  159,000"),
        "{text}"
    );
    let md = ok(&["compare", BEFORE, AFTER, "--format", "markdown"]);
    assert!(md.starts_with("## batchlens compare"), "{md}");
    assert!(
        md.contains("| KV pool (tokens) | 116,171 | 159,000 |"),
        "{md}"
    );
    assert!(md.contains("### Prediction check"), "{md}");
}

#[test]
fn one_log_with_a_restart_is_compared_run_to_run_as_its_runs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let sim = |kv: &str, start: &str, name: &str| {
        let cfg = dir.path().join(format!("{name}.json"));
        std::fs::write(
            &cfg,
            format!(
                r#"{{"seed": 7, "kv_capacity_tokens": {kv}, "concurrency": 150, "num_requests": 0,
                "duration_s": 600.0, "start_time": "{start}",
                "prompt_len": {{"kind": "uniform", "min": 300, "max": 700}},
                "output_len": {{"kind": "log_normal", "mean": 2250.0, "sigma": 0.5, "min": 200, "max": 4096}},
                "max_new_tokens": 4096}}"#
            ),
        )
        .unwrap();
        let log = dir.path().join(format!("{name}.log"));
        ok(&[
            "simulate",
            "--config",
            cfg.to_str().unwrap(),
            "--out",
            log.to_str().unwrap(),
        ]);
        log
    };
    let a = sim("116171", "2026-02-24 10:00:00", "a");
    let b = sim("200000", "2026-02-24 11:00:00", "b");
    let both = dir.path().join("both.log");
    let mut bytes = std::fs::read(&a).unwrap();
    bytes.extend(std::fs::read(&b).unwrap());
    std::fs::write(&both, bytes).unwrap();
    let (a, b, both) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        both.to_str().unwrap(),
    );

    let runs = json(&["compare", both, "--format", "json"]);
    assert_eq!(runs["before"]["run"], 1);
    assert_eq!(runs["after"]["run"], 2);
    assert_eq!(runs["changes"][0]["setting"], "KV pool (tokens)");
    assert_eq!(runs["attribution"], "setting");
    let picked = json(&["compare", both, "--runs", "1,2", "--format", "json"]);
    assert_eq!(runs, picked);
    // The other way round: the smaller pool cost throughput.
    let back = json(&["compare", both, "--runs", "2,1", "--format", "json"]);
    assert!(back["effect"]["gen_throughput_ratio"].as_f64().unwrap() < 1.0);

    // Each run judged within the joined log reads as its own log does.
    let files = json(&["compare", a, b, "--format", "json"]);
    for k in ["effect", "changes", "workload", "prediction_check"] {
        assert_eq!(runs[k], files[k], "{k}");
    }
    // One side from stdin.
    let out = Command::cargo_bin("batchlens")
        .unwrap()
        .args(["compare", a, "-", "--format", "json"])
        .pipe_stdin(b)
        .unwrap()
        .output()
        .unwrap();
    assert!(out.status.success());
    let piped: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(piped["effect"], files["effect"]);

    // No run 3; a one-run log has nothing to compare run to run.
    let out = batchlens(&["compare", both, "--runs", "1,3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no run 3"));
    let out = batchlens(&["compare", a]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds one server run"));
}

#[test]
fn bad_input_exits_2_with_a_message() {
    for args in [
        &["compare", "examples/README.md", AFTER][..],
        &["compare", BEFORE, "no/such/file.log"],
        &["compare", "-", "-"],
        &["compare", BEFORE, AFTER, "--runs", "1,2"],
        &["compare", BEFORE, "--runs", "1,1"],
        &["compare", "tests/fixtures/hostile/tiny.png", AFTER],
    ] {
        let out = batchlens(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
