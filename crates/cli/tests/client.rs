//! `batchlens diagnose --client…`: client figures from a file or flags are reconciled
//! with the server's throughput; a bad client file exits 2 with a clear sentence.

use std::path::PathBuf;

use assert_cmd::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn diagnose(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("batchlens")
        .unwrap()
        .current_dir(root())
        .arg("diagnose")
        .args(["--color", "never"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn client_throughput_flag_explains_the_gap() {
    let out = diagnose(&[
        "examples/sglang-client-limited.log",
        "--client-throughput",
        "400",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Client versus server"), "{text}");
    assert!(text.contains("your client measured 400 tok/s"), "{text}");
    assert!(text.contains("For capacity planning"), "{text}");
}

#[test]
fn client_files_text_and_json_reach_the_report() {
    for (file, rate) in [
        ("tests/fixtures/client/vllm_bench_serve_0.10.txt", 815.46),
        ("tests/fixtures/client/sglang_save_result.jsonl", 500.0),
    ] {
        let out = diagnose(&[
            "examples/sglang-kv-bound.log",
            "--client",
            file,
            "--format",
            "json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["reconciliation"]["client_tok_s"], rate, "{file}");
        assert_eq!(v["reconciliation"]["parts"].as_array().unwrap().len(), 4);
        assert!(v["client"]["duration_s"].is_number(), "{file}");
    }
}

#[test]
fn flags_win_over_the_file() {
    let out = diagnose(&[
        "examples/sglang-kv-bound.log",
        "--client",
        "tests/fixtures/client/vllm_save_result.json",
        "--client-throughput",
        "700",
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["reconciliation"]["client_tok_s"], 700.0);
    assert_eq!(v["client"]["duration_s"], 120.55);
}

#[test]
fn bad_client_inputs_exit_2() {
    let out = diagnose(&["examples/sglang-kv-bound.log", "--client", "README.md"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a client summary"), "{err}");
    assert!(err.contains("Serving Benchmark Result"), "{err}");
    let out = diagnose(&[
        "examples/sglang-kv-bound.log",
        "--client",
        "no/such/file.txt",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the client file"));
    let out = diagnose(&["examples/sglang-kv-bound.log", "--client-throughput", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be a positive number"));
}
