//! Exit codes and messages of `batchlens diagnose` on bad input: one clear
//! sentence on stderr and exit code 2; a valid log exits 0; a closed stdout
//! pipe (`| head -1`) ends quietly with 0.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use assert_cmd::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// A test's own folder under the temp dir, removed when the test ends (each
/// run would otherwise leave a dozen, some of several MB).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("batchlens-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

fn valid_log() -> Vec<u8> {
    std::fs::read(fixtures().join("sglang/sglang_41_dp-tp-ep-pd-decode-rank-imbalance-uvicorn.log"))
        .unwrap()
}

fn big_log() -> Vec<u8> {
    let mut s = String::new();
    for i in 0..20_000u32 {
        s.push_str(&format!(
            "[2026-05-07 1{}:{:02}:{:02} TP0] Decode batch, #running-req: {}, #token: 9000, token usage: 0.40, cuda graph: True, gen throughput (token/s): 1234.56, #queue-req: {}\n",
            i / 3600 % 10,
            i / 60 % 60,
            i % 60,
            i % 300,
            i % 17
        ));
    }
    s.into_bytes()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The JSON report of a run that must succeed (exit 0).
fn json_report(p: &Path) -> serde_json::Value {
    let out = bin()
        .args(["diagnose", "--no-progress", "--format", "json"])
        .arg(p)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn bin() -> Command {
    Command::cargo_bin("batchlens").unwrap()
}

/// Runs `diagnose` on `path`: asserts exit code 2 and one `batchlens: …` sentence
/// on stderr containing `needle`; returns the sentence.
fn input_error(path: &Path, needle: &str) -> String {
    let out = bin()
        .args(["diagnose", "--no-progress"])
        .arg(path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}: stderr {err}",
        path.display()
    );
    assert!(out.stdout.is_empty(), "no report on stdout for bad input");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr, got {err:?}");
    assert!(lines[0].starts_with("batchlens: "), "{err}");
    assert!(
        lines[0].contains(needle),
        "{err:?} should mention {needle:?}"
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn a_directory_is_an_input_error() {
    let d = scratch("dir");
    input_error(&d, "is a directory");
}

#[test]
fn a_missing_file_is_an_input_error() {
    let d = scratch("missing");
    input_error(&d.join("nope.log"), "does not exist");
}

#[test]
fn an_unreadable_file_is_an_input_error() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("perm");
    let f = d.join("secret.log");
    std::fs::write(&f, valid_log()).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&f).is_ok() {
        // Running as root (or with CAP_DAC_OVERRIDE): everything is readable.
        eprintln!("skipped: this user can read a mode-000 file");
        return;
    }
    input_error(&f, "permission denied");
}

#[test]
fn an_empty_file_is_an_input_error() {
    let d = scratch("empty");
    let f = d.join("empty.log");
    std::fs::write(&f, b"").unwrap();
    input_error(&f, "is empty");
}

#[test]
fn binary_files_are_input_errors() {
    let d = scratch("binary");
    let f = d.join("random.bin");
    let mut x = 88172645463325252u64;
    let bytes: Vec<u8> = (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    std::fs::write(&f, &bytes).unwrap();
    input_error(&f, "is not a text log");
    input_error(
        &fixtures().join("hostile/tiny.png"),
        "is a PNG image, not a text log",
    );
    // A log packed with another tool than gzip: named, with the command that unpacks it.
    for (magic, ext, unpack) in [
        (&b"\xfd7zXZ\x00"[..], "xz", "xz -dc"),
        (b"\x28\xb5\x2f\xfd", "zst", "zstd -dc"),
        (b"PK\x03\x04", "zip", "unzip -p"),
    ] {
        let f = d.join(format!("server.log.{ext}"));
        std::fs::write(&f, [magic, &bytes[..]].concat()).unwrap();
        input_error(
            &f,
            &format!("Unpack it first: {unpack} '{}' |", f.display()),
        );
    }
}

#[test]
fn a_log_of_another_program_is_an_input_error() {
    input_error(
        &fixtures().join("hostile/systemd.log"),
        "no scheduler stats lines found",
    );
}

#[test]
fn another_inference_servers_log_is_named() {
    let err = input_error(
        &fixtures().join("other/tgi_01_xpu-connected-chat-completions-success.log"),
        "looks like a TGI log, not an SGLang, vLLM, LMDeploy or TensorRT-LLM one (line 2: ",
    );
    assert!(err.contains("no periodic queue or KV-cache line"), "{err}");
    input_error(
        &fixtures().join("other/ollama_02_gin-sequential-num-parallel-1.log"),
        "looks like an Ollama log",
    );
    // LMDeploy's metrics lines are read: its log without them is told how to get them.
    let err = input_error(
        &fixtures().join("other/lmdeploy_02_turbomind-startup-config-lines.log"),
        "looks like an LMDeploy log (line 1: ",
    );
    assert!(
        err.contains("holds none of its stats lines") && err.contains("--enable-metrics"),
        "{err}"
    );
    // So is TensorRT-LLM's: its startup lines alone say which server it is.
    let dir = scratch("trtllm-startup");
    let startup = dir.0.join("trtllm-startup.log");
    std::fs::write(
        &startup,
        "[TensorRT-LLM][INFO] Number of tokens per block: 32.\n\
         [TensorRT-LLM][INFO] Max KV cache blocks per sequence: 257 [window size=8192], tokens per block=32, primary blocks=3630, secondary blocks=0\n",
    )
    .unwrap();
    let err = input_error(&startup, "looks like a TensorRT-LLM log (line 1: ");
    assert!(err.contains("print_iter_log: true"), "{err}");
}

/// A log of `engine` (a fixture) is detected as that engine's and diagnosed as
/// `kind`, and `--engine` reads it alone, the same.
fn engine_log_is_diagnosed(fixture: &str, engine: &str, kind: &str) -> serde_json::Value {
    let log = fixtures().join(fixture);
    let v = json_report(&log);
    assert_eq!(v["engine"], engine);
    assert_eq!(v["diagnosis"]["primary"]["kind"], kind);
    let forced = bin()
        .args([
            "diagnose",
            "--no-progress",
            "--format",
            "json",
            "--engine",
            engine,
        ])
        .arg(&log)
        .output()
        .expect("run");
    let f: serde_json::Value = serde_json::from_slice(&forced.stdout).expect("json");
    assert_eq!(f["input"]["stat_lines"], v["input"]["stat_lines"]);
    assert_eq!(f["diagnosis"]["primary"]["kind"], kind);
    v
}

#[test]
fn a_tensorrt_llm_iteration_log_is_diagnosed() {
    engine_log_is_diagnosed(
        "trtllm/synthetic_serve-kv-reserved-queue.log",
        "trtllm",
        "kv_cache_capacity",
    );
}

#[test]
fn an_lmdeploy_metrics_log_is_diagnosed() {
    let v = engine_log_is_diagnosed(
        "lmdeploy/synthetic_grouped-kv-full-queue.log",
        "lmdeploy",
        "kv_cache_capacity",
    );
    assert_eq!(v["input"]["stat_lines"], 40);
}

#[test]
fn stdin_without_stats_lines_is_named_stdin_and_counted_in_words() {
    let out = bin()
        .args(["diagnose", "--no-progress", "-"])
        .write_stdin("hello\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no scheduler stats lines found in stdin (1 line read: 0 other known lines, 1 unrecognized line)"),
        "{err}"
    );
}

#[test]
fn a_log_whose_stats_were_turned_off_says_why() {
    let d = scratch("stats-off");
    let f = d.join("vllm.log");
    std::fs::write(
        &f,
        "(APIServer pid=1) WARNING 05-19 10:13:01 [async_llm.py:139] AsyncLLM created with api_server_count more than 1; disabling stats logging to avoid incomplete stats.\n",
    )
    .unwrap();
    input_error(
        &f,
        "vLLM turned its stats lines off because it runs more than one API server",
    );
}

#[test]
fn a_valid_log_exits_0() {
    let d = scratch("valid");
    let f = d.join("server.log");
    std::fs::write(&f, valid_log()).unwrap();
    let v = json_report(&f);
    assert_eq!(v["engine"], "sglang");
    assert_eq!(v["input"]["stat_lines"], 3);
}

#[test]
fn gzip_input_reads_like_plain_and_a_corrupt_gz_is_an_input_error() {
    let d = scratch("gz");
    let plain = d.join("server.log");
    let gz = d.join("server.log.gz");
    let log = big_log();
    std::fs::write(&plain, &log).unwrap();
    std::fs::write(&gz, gzip(&log)).unwrap();
    let run = |p: &Path| {
        let mut v = json_report(p);
        assert_eq!(v["input"]["stat_lines"], 20_000);
        // Bytes counted are the decompressed ones in both cases.
        v["input"]["bytes"] = serde_json::Value::Null;
        v
    };
    assert_eq!(run(&plain), run(&gz));

    // Corrupt the middle of the deflate stream.
    let mut bad = gzip(&log);
    let mid = bad.len() / 2;
    for b in &mut bad[mid..mid + 64] {
        *b ^= 0x5a;
    }
    let f = d.join("corrupt.log.gz");
    std::fs::write(&f, &bad).unwrap();
    input_error(&f, "not a valid gzip file");

    // A .gz cut short.
    let whole = gzip(&log);
    let f = d.join("truncated.log.gz");
    std::fs::write(&f, &whole[..whole.len() / 3]).unwrap();
    input_error(&f, "gzip");
}

#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    let d = scratch("pipe");
    let f = d.join("big.log");
    std::fs::write(&f, big_log()).unwrap();
    for format in ["text", "json"] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("batchlens"))
            .args(["diagnose", "--no-progress", "--format", format])
            .arg(&f)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Like `| head -0`: the reader goes away before batchlens writes.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{format}: stderr {err}");
        assert!(err.is_empty(), "{format}: nothing on stderr, got {err:?}");
    }
}

/// Several MiB of mixed lines (SGLang ranks, vLLM, wrapped and glued records,
/// access and ANSI lines): many chunks on both reading threads.
fn mixed_log() -> Vec<u8> {
    let mut parts = Vec::new();
    for rel in [
        "sglang/sglang_41_dp-tp-ep-pd-decode-rank-imbalance-uvicorn.log",
        "sglang/sglang_23_deepseek-v3-kv-full-decode-oom-retract.log",
        "vllm/synthetic_v1-docker-aggregated-wrapped-header-glued-cut-end.log",
        "vllm/synthetic_v1-033-dp2-preemptions-startup-ansi.log",
        "hostile/wrapped.log",
        "hostile/glued.log",
    ] {
        parts.push(std::fs::read(fixtures().join(rel)).unwrap());
    }
    let mut log = Vec::new();
    while log.len() < 5 << 20 {
        for p in &parts {
            log.extend_from_slice(p);
        }
        log.extend_from_slice(&big_log()[..200_000]);
    }
    log
}

#[test]
fn a_log_of_many_chunks_reads_exactly_as_the_core_reads_it() {
    let d = scratch("chunks");
    let log = mixed_log();
    let want = batchlens_core::analyze(&log, batchlens_core::Options::default());
    let want = serde_json::to_value(&want).unwrap();
    assert!(
        want["input"]["stat_lines"].as_u64().unwrap() > 20_000,
        "{}",
        want["input"]
    );
    let plain = d.join("mixed.log");
    std::fs::write(&plain, &log).unwrap();
    assert_eq!(json_report(&plain), want, "file");
    let gz = d.join("mixed.log.gz");
    std::fs::write(&gz, gzip(&log)).unwrap();
    assert_eq!(json_report(&gz), want, "gzip");
    let out = bin()
        .args(["diagnose", "--no-progress", "--format", "json", "-"])
        .write_stdin(log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got, want, "stdin");
}

/// The two readers hand chunks to the analyzer in order whichever finishes
/// first, and hold a few at most: read again and again, with chunk counts
/// around that limit, the report is the same every time (a stall would fail
/// on the timeout; the hand-off's own test, in `ordered.rs`, is the one that
/// provokes stalls).
#[test]
fn reading_on_two_threads_gives_the_same_report_every_time() {
    let d = scratch("stalls");
    let log = mixed_log();
    for mib in [1usize, 2, 3, 5] {
        let f = d.join(format!("{mib}.log"));
        let cut = (mib << 20).min(log.len());
        std::fs::write(&f, &log[..cut]).unwrap();
        let mut first: Option<Vec<u8>> = None;
        for _ in 0..6 {
            let out = bin()
                .args(["diagnose", "--no-progress", "--format", "json"])
                .arg(&f)
                .timeout(std::time::Duration::from_secs(60))
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{mib} MiB");
            match &first {
                None => first = Some(out.stdout),
                Some(want) => assert!(*want == out.stdout, "{mib} MiB: reports differ"),
            }
        }
    }
}

#[test]
fn run_picks_a_server_run_and_says_when_the_log_has_not_that_many() {
    let d = scratch("runs");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let read = |f: &str| std::fs::read(examples.join(f)).unwrap();
    // Two server runs: the KV-bound example, then a restart with a bigger pool.
    let f = d.join("restarted.log");
    std::fs::write(
        &f,
        [
            read("sglang-kv-bound.log"),
            read("sglang-client-limited.log"),
        ]
        .concat(),
    )
    .unwrap();
    let judge = |run: &str| {
        let out = bin()
            .args([
                "diagnose",
                "--no-progress",
                "--format",
                "json",
                "--run",
                run,
            ])
            .arg(&f)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let judged = v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .position(|r| r["analyzed"] == true)
            .unwrap()
            + 1;
        (
            out.status.code(),
            judged,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(judge("1"), (Some(0), 1, String::new()));
    assert_eq!(judge("2"), (Some(0), 2, String::new()));
    let out = bin()
        .args(["diagnose", "--run", "0"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn files_in_other_encodings_read_as_one_log() {
    let d = scratch("utf16");
    let log = valid_log();
    let cut = log.len() / 2
        + log[log.len() / 2..]
            .iter()
            .position(|&c| c == b'\n')
            .unwrap()
        + 1;
    let (a, b) = (d.join("part1.log"), d.join("part2.log"));
    std::fs::write(&a, &log[..cut]).unwrap();
    // The second part as PowerShell's `>` writes it: UTF-16LE with its mark.
    let mut wide = vec![0xff, 0xfe];
    for u in String::from_utf8(log[cut..].to_vec())
        .unwrap()
        .encode_utf16()
    {
        wide.extend(u.to_le_bytes());
    }
    std::fs::write(&b, wide).unwrap();
    let whole = d.join("whole.log");
    std::fs::write(&whole, &log).unwrap();
    let out = bin()
        .args(["diagnose", "--no-progress", "--format", "json"])
        .args([&a, &b])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut want = json_report(&whole);
    assert_eq!(v["input"]["encoding"], "utf-16le");
    for r in [&mut v, &mut want] {
        r["input"]["bytes"] = serde_json::Value::Null;
        r["input"]["encoding"] = serde_json::Value::Null;
    }
    assert_eq!(v, want);
}
