//! Where the report and the messages go when stdout or stderr cannot take
//! them, and arguments at their limits: the exit code is the one the input
//! deserves, a lost report is never a success, nothing panics.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(name: &str) -> PathBuf {
    root().join("examples").join(name)
}

fn bin() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("batchlens"));
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

fn run(cmd: &mut Command) -> Output {
    within(cmd.stdin(Stdio::null()), Duration::from_secs(30))
}

/// Runs `cmd` (stdout and stderr captured unless set) to its end, killed and
/// the test failed past `limit`: an input read without end must fail the
/// test, not hang it or fill the memory.
fn within(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd.spawn().expect("run batchlens");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("output"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("still running after {limit:?}: {cmd:?}");
        }
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A command line run by the shell, for redirections `Command` cannot make
/// (a closed descriptor, a read-only stdout).
fn shell(script: &str) -> Output {
    let exe = assert_cmd::cargo::cargo_bin("batchlens");
    run(Command::new("bash")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .arg("-c")
        .arg(script)
        .env("BATCHLENS", exe)
        .current_dir(root()))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("batchlens-streams-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full"),
    )
}

#[test]
fn an_unwritable_stderr_changes_no_exit_code_and_loses_no_report() {
    // The message is lost, the input's exit code is not (it was a panic, 101).
    let o = run(bin().args(["diagnose", "/nope"]).stderr(full()));
    assert_eq!(o.status.code(), Some(2));
    // A run that warns (`--what-if` on a log without a steady state) still writes its report.
    let short = root().join("tests/fixtures/sglang/sglang_20_slow-prefill-single-req-swa.log");
    let warns = run(bin()
        .args(["diagnose", "--no-progress", "--what-if", "kv_tokens=200000"])
        .arg(&short));
    assert!(
        stderr(&warns).contains("--what-if: no prediction"),
        "{}",
        stderr(&warns)
    );
    let o = run(bin()
        .args(["diagnose", "--no-progress", "--what-if", "kv_tokens=200000"])
        .arg(&short)
        .stderr(full()));
    assert_eq!(o.status.code(), warns.status.code());
    assert_eq!(o.stdout, warns.stdout);
    assert!(!o.stdout.is_empty());
}

#[test]
fn a_report_that_cannot_be_written_is_an_error_but_a_closed_pipe_is_quiet() {
    for (how, script) in [
        (
            "stdout read-only",
            r#""$BATCHLENS" diagnose examples/sglang-kv-bound.log 1</dev/null"#,
        ),
        (
            "stdout closed",
            r#""$BATCHLENS" diagnose examples/sglang-kv-bound.log >&-"#,
        ),
        (
            "stdout full",
            r#""$BATCHLENS" diagnose --format json examples/sglang-kv-bound.log >/dev/full"#,
        ),
        ("help, stdout full", r#""$BATCHLENS" --help >/dev/full"#),
        ("help, stdout closed", r#""$BATCHLENS" diagnose --help >&-"#),
        (
            "simulate, stdout closed",
            r#""$BATCHLENS" simulate --duration 30 >&-"#,
        ),
        (
            "simulate, stdout full",
            r#""$BATCHLENS" simulate --duration 30 >/dev/full"#,
        ),
    ] {
        let o = shell(script);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{how}: {err}");
        assert!(
            err.starts_with("batchlens: could not write to stdout"),
            "{how}: {err}"
        );
        assert!(!err.contains("panicked"), "{how}: {err}");
    }
    for script in [
        r#""$BATCHLENS" --help | head -c1 >/dev/null; exit ${PIPESTATUS[0]}"#,
        r#""$BATCHLENS" simulate --duration 600 | head -c1 >/dev/null; exit ${PIPESTATUS[0]}"#,
    ] {
        let o = shell(script);
        assert_eq!(o.status.code(), Some(0), "{script}: {}", stderr(&o));
        assert!(o.stderr.is_empty(), "{script}: {}", stderr(&o));
    }
    // Plain redirections still work.
    let o = shell(r#""$BATCHLENS" diagnose examples/sglang-kv-bound.log >/dev/null"#);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_run_the_log_has_not_is_an_input_error_and_a_negative_one_is_out_of_range() {
    let d = scratch("runs");
    let two = d.join("two.log");
    let log = std::fs::read(example("sglang-kv-bound.log")).unwrap();
    std::fs::write(&two, [&log[..], &log[..]].concat()).unwrap();
    let o = run(bin()
        .args(["diagnose", "--no-progress", "--run", "999"])
        .arg(&two));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--run 999: the log holds 2 server runs"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty(), "no report on a run the log has not");
    let o = run(bin().args(["diagnose", "--run", "-1"]).arg(&two));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("'-1'") && stderr(&o).contains("not in 1.."),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn binary_input_of_several_files_names_the_first() {
    let png = root().join("tests/fixtures/hostile/tiny.png");
    let o = run(bin()
        .args(["diagnose", "--no-progress"])
        .arg(&png)
        .arg(example("sglang-kv-bound.log")));
    // The log after the picture is read: it is no input error then.
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(bin()
        .args(["diagnose", "--no-progress"])
        .arg(&png)
        .arg(&png));
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "'{}' (the first of 2 files) is a PNG image",
            png.display()
        )),
        "{err}"
    );
    assert!(!err.contains("2 files is"), "{err}");
}

#[test]
fn the_client_file_is_capped_and_may_be_stdin() {
    // An endless client file is refused within the cap, not read until memory runs out.
    let start = Instant::now();
    let o = run(bin()
        .args(["diagnose", "--no-progress", "--client", "/dev/zero"])
        .arg(example("sglang-kv-bound.log")));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("larger than 16 MiB"), "{}", stderr(&o));
    assert!(start.elapsed() < Duration::from_secs(20));
    // A large regular file is refused by its size, unread.
    let d = scratch("client");
    let big = d.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1_500_000_000)
        .unwrap();
    let start = Instant::now();
    let o = run(bin()
        .args(["diagnose", "--no-progress", "--client"])
        .arg(&big)
        .arg(example("sglang-kv-bound.log")));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("larger than 16 MiB"), "{}", stderr(&o));
    assert!(start.elapsed() < Duration::from_secs(5));
    // `--client -` reads the summary from stdin: the same report as from the file.
    let summary = root().join("tests/fixtures/client/vllm_save_result.json");
    let from_file = run(bin()
        .args(["diagnose", "--no-progress", "--format", "json", "--client"])
        .arg(&summary)
        .arg(example("vllm-kv-bound.log")));
    assert_eq!(from_file.status.code(), Some(0), "{}", stderr(&from_file));
    let from_stdin = bin()
        .args([
            "diagnose",
            "--no-progress",
            "--format",
            "json",
            "--client",
            "-",
        ])
        .arg(example("vllm-kv-bound.log"))
        .stdin(std::fs::File::open(&summary).unwrap())
        .output()
        .unwrap();
    assert_eq!(from_stdin.status.code(), Some(0), "{}", stderr(&from_stdin));
    assert_eq!(from_stdin.stdout, from_file.stdout);
    // Both cannot be stdin.
    let o = run(bin().args(["diagnose", "--client", "-"]));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--client -"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn simulate_refuses_inputs_beyond_its_memory_and_a_directory_to_write() {
    for args in [&["--concurrency", "100000000"][..], &["--duration", "1e9"]] {
        let start = Instant::now();
        let o = run(bin().arg("simulate").args(args).stdout(Stdio::null()));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(start.elapsed() < Duration::from_secs(5), "{args:?}");
    }
    let d = scratch("sim");
    let cfg = d.join("open.json");
    std::fs::write(
        &cfg,
        r#"{"concurrency": 0, "arrival_rate": 1e7, "duration_s": 600}"#,
    )
    .unwrap();
    let o = run(bin().arg("simulate").arg("--config").arg(&cfg));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("requests"), "{}", stderr(&o));
    let o = run(bin().args(["simulate", "--out"]).arg(&d));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
    assert!(!Path::new(&d).exists());
}
