//! `--format-file`: a bad format file is refused with the line it is about
//! and exit code 2; built-in formats by name; a client's progress lines
//! reconciled with the server's log.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

/// A format file of the test's own, under the temp dir.
fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("batchlens-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn diagnose(args: &[&str]) -> Output {
    Command::new(common::bin())
        .arg("diagnose")
        .args(args)
        .output()
        .unwrap()
}

fn llama_log() -> String {
    common::fixtures()
        .join("other/llamacpp_02_server-slow-single-slot.log")
        .to_string_lossy()
        .into_owned()
}

/// The run fails with exit 2, and stderr names the file, the line and `words`.
fn refused(file: &str, text: &str, line: usize, words: &[&str]) {
    let p = write(file, text);
    let out = diagnose(&[&llama_log(), "--format-file", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{file}: {err}");
    assert!(out.stdout.is_empty(), "{file}: no report");
    assert!(err.contains(file), "{file}: {err}");
    assert!(err.contains(&format!("line {line}:")), "{file}: {err}");
    for w in words {
        assert!(err.contains(w), "{file}: '{w}' not in {err}");
    }
}

#[test]
fn bad_format_files_each_get_their_message_and_exit_2() {
    refused(
        "bad-regex.toml",
        "[[format]]\nname = \"gw\"\nregex = 'running=(?P<running>\\d+'\n",
        3,
        &["invalid regex", "gw"],
    );
    refused(
        "unknown-capture.toml",
        "[[format]]\nname = \"gw\"\n\nregex = 'busy=(?P<busy>\\d+)'\n",
        4,
        &["unknown capture name 'busy'", "running"],
    );
    refused(
        "declared-missing.toml",
        "[[format]]\nname = \"gw\"\nregex = 'running=(?P<running>\\d+)'\nkv_usage = \"percent\"\n",
        4,
        &["kv_usage is declared", "(?P<kv_usage>"],
    );
    refused(
        "undeclared-usage.toml",
        "[[format]]\nname = \"gw\"\nregex = 'kv=(?P<kv_usage>[\\d.]+)'\n",
        3,
        &["declare kv_usage = \"fraction\" or \"percent\""],
    );
    refused(
        "time-without-format.toml",
        "[[format]]\nname = \"gw\"\nregex = '(?P<time>\\S+) running=(?P<running>\\d+)'\n",
        3,
        &["time_format"],
    );
    refused(
        "bad-time-format.toml",
        "[[format]]\nname = \"gw\"\nregex = '(?P<time>\\S+) running=(?P<running>\\d+)'\ntime_format = \"%Y-%q\"\n",
        4,
        &["%q"],
    );
    refused(
        "unknown-key.toml",
        "[[format]]\nname = \"gw\"\nregex = 'running=(?P<running>\\d+)'\nlevel = \"info\"\n",
        4,
        &["unknown key 'level'"],
    );
    refused(
        "unknown-engine.toml",
        "[[format]]\nname = \"gw\"\nlike = \"tgi\"\nregex = 'running=(?P<running>\\d+)'\n",
        3,
        &["like 'tgi'"],
    );
    refused(
        "not-toml.toml",
        "[[format]]\nname = \"gw\nregex = 'x'\n",
        2,
        &[],
    );
    refused(
        "bad-regex.json",
        "{\"format\": [\n  {\"name\": \"gw\",\n   \"regex\": \"running=(?P<running>\\\\d+\"}\n]}\n",
        3,
        &["invalid regex"],
    );
    refused(
        "unknown-capture.json",
        "{\"format\": [\n  {\"name\": \"a\", \"regex\": \"running=(?P<running>\\\\d+)\"},\n  {\"name\": \"b\",\n   \"regex\": \"x=(?P<x>\\\\d+)\"}\n]}\n",
        4,
        &["unknown capture name 'x'", "format 'b'"],
    );
}

#[test]
fn a_name_that_is_neither_a_file_nor_built_in_is_refused() {
    let out = diagnose(&[&llama_log(), "--format-file", "no-such-server"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("built in: llama.cpp, ollama, tgi"), "{err}");
}

#[test]
fn a_built_in_format_by_name_judges_a_log_batchlens_only_named() {
    let plain = diagnose(&[&llama_log(), "--format", "json"]);
    // Without the format: nothing to diagnose, an input problem.
    assert_eq!(plain.status.code(), Some(2));
    let out = diagnose(&[
        &llama_log(),
        "--format-file",
        "llama.cpp",
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["engine"], "llama.cpp");
    assert_eq!(r["input"]["custom_formats"][0]["samples"], 2);
    assert!(r["diagnosis"]["primary"]["kind"].is_string());
}

#[test]
fn a_client_progress_log_reconciles_with_the_server_log() {
    let dir = std::env::temp_dir().join(format!("batchlens-formats-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = dir.join("server.log");
    common::simulate("client_underload", 300, &server);
    let report = common::diagnose_json(&[&server]);
    let gen = report["summary"]["sustained_gen_tok_s"].as_f64().unwrap();
    // The client's own progress lines, as a batch client prints them: its
    // output tokens so far over the server's busy window.
    let start = report["first_timestamp"].as_str().unwrap()[..19].to_string();
    let busy = report["busy_seconds"].as_f64().unwrap();
    let mut progress = String::new();
    for i in 0..=10 {
        let t = busy * i as f64 / 10.0;
        let tokens = (gen * t).round();
        progress.push_str(&format!(
            "{} progress: {tokens} tokens out, {:.2} req/s, ETA=1.0h\n",
            shift(&start, t as u64),
            0.5
        ));
    }
    let client = dir.join("progress.log");
    std::fs::write(&client, progress).unwrap();
    let fmt = write(
        "client.toml",
        r#"[[format]]
name = "batchclient"
side = "client"
regex = '^(?P<time>\S+ \S+) progress: (?P<generated_tokens>\d+) tokens out, (?P<requests_per_s>[\d.]+) req/s'
time_format = "%Y-%m-%d %H:%M:%S"
generated_tokens = "cumulative"
"#,
    );
    let out = diagnose(&[
        server.to_str().unwrap(),
        "--client",
        client.to_str().unwrap(),
        "--format-file",
        fmt.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["client"]["source"], "format:batchclient");
    let c = r["client"]["output_tok_s"].as_f64().unwrap();
    assert!((c / gen - 1.0).abs() < 0.02, "{c} against {gen}");
    assert!(r["reconciliation"].is_object(), "{}", r["reconciliation"]);
    // The server's log is still the simulated vLLM's: client formats do not read it.
    assert_ne!(r["engine"], "batchclient");
}

/// `YYYY-MM-DD HH:MM:SS` plus `s` seconds (within the day).
fn shift(stamp: &str, s: u64) -> String {
    let h: u64 = stamp[11..13].parse().unwrap();
    let m: u64 = stamp[14..16].parse().unwrap();
    let sec: u64 = stamp[17..19].parse().unwrap();
    let t = h * 3600 + m * 60 + sec + s;
    format!(
        "{} {:02}:{:02}:{:02}",
        &stamp[..10],
        t / 3600 % 24,
        t / 60 % 60,
        t % 60
    )
}
