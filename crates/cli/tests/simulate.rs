//! `batchlens simulate`: the bundled example logs regenerate byte for byte with the
//! commands in examples/README.md, and bad flags exit 2.

use std::path::PathBuf;

use assert_cmd::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn simulate(args: &[&str]) -> Vec<u8> {
    let out = Command::cargo_bin("batchlens")
        .unwrap()
        .current_dir(root())
        .arg("simulate")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn examples_regenerate() {
    let cases: &[(&str, &[&str])] = &[
        (
            "sglang-kv-bound.log",
            &["--config", "examples/sglang-kv-bound.json"],
        ),
        (
            "sglang-kv-bound-larger-pool.log",
            &[
                "--config",
                "examples/sglang-kv-bound.json",
                "--kv-tokens",
                "159000",
            ],
        ),
        (
            "sglang-client-limited.log",
            &["--preset", "client_underload"],
        ),
        ("sglang-retractions.log", &["--preset", "retraction"]),
        ("vllm-kv-bound.log", &["--preset", "vllm_kv_bound"]),
    ];
    for (file, args) in cases {
        let want = std::fs::read(root().join("examples").join(file)).unwrap();
        assert!(want.len() <= 2 << 20, "{file} is over 2 MB");
        let got = simulate(args);
        assert!(
            got == want,
            "examples/{file} does not match `batchlens simulate {}`",
            args.join(" ")
        );
    }
}

#[test]
fn flags_override_and_seed_is_deterministic() {
    let a = simulate(&["--preset", "running_cap", "--duration", "30", "--seed", "3"]);
    let b = simulate(&["--preset", "running_cap", "--duration", "30", "--seed", "3"]);
    assert_eq!(a, b);
    let text = String::from_utf8(a).unwrap();
    assert!(text.contains("max_running_requests=32"));
    let c = simulate(&[
        "--preset",
        "running_cap",
        "--duration",
        "30",
        "--max-running",
        "16",
        "--kv-tokens",
        "200000",
        "--engine",
        "vllm",
    ]);
    let text = String::from_utf8(c).unwrap();
    assert!(
        text.contains("'max_num_seqs': 16"),
        "{}",
        &text[..2000.min(text.len())]
    );
}

#[test]
fn bad_input_exits_2() {
    for args in [
        &["simulate", "--preset", "nope"][..],
        &["simulate", "--config", "/nonexistent/x.json"][..],
        &["simulate", "--kv-tokens", "0"][..],
    ] {
        Command::cargo_bin("batchlens")
            .unwrap()
            .args(args)
            .assert()
            .code(2);
    }
}

#[test]
fn what_if_flag_adds_the_prediction() {
    let out = Command::cargo_bin("batchlens")
        .unwrap()
        .current_dir(root())
        .args([
            "diagnose",
            "examples/sglang-kv-bound.log",
            "--format",
            "json",
            "--what-if",
            "kv_tokens=159000",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &v["what_if"];
    assert_eq!(w["changes"][0]["parameter"], "kv_tokens");
    for k in ["running_requests", "gen_throughput_tok_s"] {
        assert!(w["baseline"][k].as_f64().unwrap() > 0.0);
    }
    let p = &w["predicted"];
    let (run, gen) = (
        p["running_requests"].as_f64().unwrap(),
        p["gen_throughput_tok_s"].as_f64().unwrap(),
    );
    assert!(run > w["baseline"]["running_requests"].as_f64().unwrap());
    assert!(p["low"].as_f64().unwrap() <= gen && gen <= p["high"].as_f64().unwrap());
    for bad in ["kv_tokens", "nope=3", "kv_tokens=-5", "max_running=abc"] {
        Command::cargo_bin("batchlens")
            .unwrap()
            .current_dir(root())
            .args(["diagnose", "examples/sglang-kv-bound.log", "--what-if", bad])
            .assert()
            .code(2);
    }
}

/// A stalled server (a hang, a crawl) is not a capacity verdict: `--what-if` is refused as
/// a log without a steady state is, with a note on stderr and exit 0, and the report (JSON,
/// text, markdown, `--each`) carries no prediction and no lever.
#[test]
fn what_if_is_not_offered_for_a_stalled_server() {
    for log in [
        "tests/fixtures/vllm/vllm_39_v0-hang-pending-rising-nothing-runs.log",
        "tests/fixtures/vllm/vllm_40_v0-crawl-two-requests-0.4-tok-s.log",
    ] {
        let diagnose = |extra: &[&str]| {
            let out = Command::cargo_bin("batchlens")
                .unwrap()
                .current_dir(root())
                .args(["diagnose", "--no-progress", log, "--what-if", "kv_scale=2"])
                .args(extra)
                .output()
                .unwrap();
            assert!(out.status.success(), "{log}: {:?}", out.status);
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(
                err.contains("--what-if: not offered for a stalled server"),
                "{log}: {err}"
            );
            String::from_utf8(out.stdout).unwrap()
        };
        let v: serde_json::Value = serde_json::from_str(&diagnose(&["--format", "json"])).unwrap();
        assert_eq!(v["diagnosis"]["primary"]["kind"], "stalled", "{log}");
        assert!(v.get("what_if").is_none(), "{log}: {}", v["what_if"]);
        assert!(v["diagnosis"].get("levers").is_none(), "{log}");
        let text = diagnose(&["--color", "never"]);
        assert!(text.starts_with("batchlens: vllm log"), "{log}: {text}");
        assert!(!text.contains("What if"), "{log}: {text}");
        assert!(
            !diagnose(&["--format", "markdown"]).contains("What if"),
            "{log}"
        );
    }
    // `--each` writes the same report per file, without a prediction.
    let out = Command::cargo_bin("batchlens")
        .unwrap()
        .current_dir(root())
        .args([
            "diagnose",
            "--no-progress",
            "--each",
            "--format",
            "jsonl",
            "--what-if",
            "kv_scale=2",
            "tests/fixtures/vllm/vllm_40_v0-crawl-two-requests-0.4-tok-s.log",
            "examples/sglang-kv-bound.log",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let stalled = lines
        .iter()
        .find(|l| l["diagnosis"]["primary"]["kind"] == "stalled")
        .unwrap();
    assert!(stalled.get("what_if").is_none());
    // The other log keeps its prediction: the refusal is the stall's alone.
    let other = lines
        .iter()
        .find(|l| l["diagnosis"]["primary"]["kind"] != "stalled")
        .unwrap();
    assert!(
        other["what_if"]["predicted"]["gen_throughput_tok_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}
