//! `--gpu`, `--model`: the JSON carries `roofline`, the text prints MBU and the
//! ceiling, and an unknown GPU, model or unreadable config.json exits 2.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sglang-kv-bound.log")
}

fn run(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("batchlens")
        .unwrap()
        .args(["diagnose", "--no-progress"])
        .arg(example())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn gpu_and_model_add_the_roofline_to_json_and_text() {
    let out = run(&[
        "--gpu",
        "h200",
        "--model",
        "Llama-3.1-8B",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["roofline"];
    assert_eq!(r["gpu"], "H200 SXM");
    assert_eq!(r["kv_bytes_per_token_per_gpu"], 131072.0);
    assert!(r["mbu"].as_f64().is_some() && r["decode_ceiling_tok_s"].as_f64().is_some());
    let out = run(&["--gpu", "h200", "--model", "Llama-3.1-8B"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("MBU") && text.contains("Decode ceiling"),
        "{text}"
    );
    // --tp and --kv-dtype override the log.
    let out = run(&[
        "--gpu",
        "h200",
        "--model",
        "Llama-3.1-8B",
        "--tp",
        "2",
        "--kv-dtype",
        "fp8",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["roofline"]["kv_bytes_per_token_per_gpu"], 32768.0);
    // Without a GPU, no roofline.
    let out = run(&["--model", "Llama-3.1-8B", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("roofline").is_none());
}

#[test]
fn unknown_hardware_exits_2_with_one_sentence() {
    for (args, needle) in [
        (vec!["--gpu", "tpu-v5"], "unknown GPU"),
        (
            vec!["--gpu", "h100", "--model", "no-such-model"],
            "unknown model",
        ),
        (
            vec!["--gpu", "h100", "--model", "/nonexistent/config.json"],
            "--model /nonexistent/config.json",
        ),
    ] {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}
