//! A log truncated while batchlens reads it (`logrotate`'s copytruncate, `: >
//! log`), here while batchlens is stopped mid-read (as by `kill -STOP` or a
//! terminal paused with Ctrl-S): the truncation does not wait for batchlens,
//! batchlens does not crash, and its report says the file shrank and how much
//! was read. Endless binary input is judged within its first megabytes.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("batchlens-rotation-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// A real log, repeated to some 50 MB: long enough to be caught mid-read.
fn big_log(path: &Path) {
    let one = std::fs::read(root().join("examples/sglang-kv-bound.log")).unwrap();
    let mut all = Vec::with_capacity(one.len() * 160);
    for _ in 0..160 {
        all.extend_from_slice(&one);
    }
    std::fs::write(path, all).unwrap();
}

/// The running batchlens, ended (continued, then killed) if the test fails.
struct Running(Option<Child>);

impl Running {
    fn pid(&self) -> u32 {
        self.0.as_ref().unwrap().id()
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.pid().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    }

    fn output(mut self) -> std::process::Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = Command::new("kill")
                .args(["-CONT", &c.id().to_string()])
                .status();
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn diagnose_json(path: &Path) -> Running {
    let child = Command::new(assert_cmd::cargo::cargo_bin("batchlens"))
        .args(["diagnose", "--no-progress", "--format", "json"])
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Running(Some(child))
}

/// Waits until `ready` holds of the process, and stops it there.
fn stop_when(p: &Running, ready: impl Fn(u32) -> bool) {
    let start = Instant::now();
    while !ready(p.pid()) {
        assert!(start.elapsed() < Duration::from_secs(20), "never got there");
        std::thread::sleep(Duration::from_millis(2));
    }
    p.signal("-STOP");
}

/// Whether the process maps `path` now from past byte `at` (it has read up to there).
fn maps_past(pid: u32, path: &Path, at: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).is_ok_and(|m| {
        m.lines().any(|l| {
            let offset = l
                .split_whitespace()
                .nth(2)
                .and_then(|o| u64::from_str_radix(o, 16).ok());
            l.ends_with(path.to_str().unwrap()) && offset.is_some_and(|o| o > at)
        })
    })
}

/// Whether the process has read past `at` of `path` with `read`.
fn read_past(pid: u32, path: &Path, at: u64) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|l| l == path)
            && std::fs::read_to_string(format!(
                "/proc/{pid}/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .ok()
            .and_then(|info| {
                info.lines()
                    .find_map(|l| l.strip_prefix("pos:"))
                    .and_then(|p| p.trim().parse::<u64>().ok())
            })
            .is_some_and(|pos| pos > at)
    })
}

/// The report of a run that read `path` in part: exit 0, the file said to
/// have shrunk, with fewer bytes read than it held.
fn assert_said_shrank(p: Running, path: &Path, size: u64) {
    let out = p.output();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["input"]["truncated_while_reading"];
    assert_eq!(t["file"], path.display().to_string(), "{}", v["input"]);
    assert_eq!(t["bytes_at_open"].as_u64(), Some(size));
    let read = t["bytes_read"].as_u64().unwrap();
    assert!(read > 0 && read < size, "{read} of {size}");
    assert!(v["input"]["stat_lines"].as_u64().unwrap() > 0);
    assert!(err.contains("shrank while it was read"), "{err}");
}

#[test]
fn a_mapped_log_truncated_while_batchlens_is_stopped_neither_waits_nor_crashes() {
    let d = scratch("mapped");
    let path = d.0.join("big.log");
    big_log(&path);
    let size = std::fs::metadata(&path).unwrap().len();
    let p = diagnose_json(&path);
    stop_when(&p, |pid| maps_past(pid, &path, 1 << 20));
    // `: > big.log` while batchlens holds mapped windows of it and cannot run.
    let (done, truncated) = std::sync::mpsc::channel();
    let target = path.clone();
    std::thread::spawn(move || {
        let r = OpenOptions::new().write(true).truncate(true).open(&target);
        let _ = done.send(r.is_ok());
    });
    assert_eq!(
        truncated.recv_timeout(Duration::from_secs(5)),
        Ok(true),
        "the truncation waited for a stopped batchlens"
    );
    p.signal("-CONT");
    assert_said_shrank(p, &path, size);
}

#[test]
fn a_streamed_log_truncated_mid_read_is_said_to_have_shrunk() {
    let d = scratch("streamed");
    let path = d.0.join("live.log");
    big_log(&path);
    let size = std::fs::metadata(&path).unwrap().len();
    // The server still has it open: it is read as a stream.
    let writer = OpenOptions::new().append(true).open(&path).unwrap();
    let p = diagnose_json(&path);
    stop_when(&p, |pid| read_past(pid, &path, 1 << 20));
    writer.set_len(0).unwrap();
    p.signal("-CONT");
    assert_said_shrank(p, &path, size);
}

#[test]
fn endless_binary_input_is_judged_within_its_first_megabytes() {
    for dev in ["/dev/zero", "/dev/urandom"] {
        for stdin in [false, true] {
            let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("batchlens"));
            cmd.args(["diagnose", "--no-progress"]);
            if stdin {
                cmd.stdin(std::fs::File::open(dev).unwrap());
            } else {
                cmd.arg(dev).stdin(Stdio::null());
            }
            let p = Running(Some(
                cmd.stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap(),
            ));
            let start = Instant::now();
            while Command::new("kill")
                .args(["-0", &p.pid().to_string()])
                .stderr(Stdio::null())
                .status()
                .unwrap()
                .success()
                && !std::fs::read_to_string(format!("/proc/{}/stat", p.pid()))
                    .is_ok_and(|s| s.contains(") Z "))
            {
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "{dev} (stdin: {stdin}) read for 30 s"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            let out = p.output();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{dev}: {err}");
            assert!(err.contains("is not a text log"), "{dev}: {err}");
            assert!(err.contains("first 4 MiB"), "{dev}: {err}");
        }
    }
}

/// UTF-16 text has a NUL in every other byte, but is no binary input: a
/// UTF-16 log whose first 4 MiB hold no stats line (a long start-up, health
/// checks) is read to its stats lines, with its mark or, split from one, without.
#[test]
fn a_utf16_log_is_read_past_its_first_megabytes() {
    let d = scratch("utf16");
    let mut text = String::new();
    while text.len() < 3 << 20 {
        text.push_str("INFO:     127.0.0.1:51234 - \"GET /health HTTP/1.1\" 200 OK\n");
    }
    text.push_str(&std::fs::read_to_string(root().join("examples/sglang-kv-bound.log")).unwrap());
    let wide: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let whole = d.0.join("whole.log");
    std::fs::write(&whole, &wide).unwrap();
    let (a, b) = (d.0.join("part.aa"), d.0.join("part.ab"));
    std::fs::write(&a, &wide[..1001]).unwrap();
    std::fs::write(&b, &wide[1001..]).unwrap();
    for files in [vec![whole.clone()], vec![a.clone(), b.clone()]] {
        let out = Command::new(assert_cmd::cargo::cargo_bin("batchlens"))
            .args(["diagnose", "--no-progress", "--format", "json"])
            .args(&files)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{files:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v["input"]["stat_lines"].as_u64().unwrap() > 1000,
            "{files:?}"
        );
        assert_eq!(v["input"]["encoding"], "utf-16le");
    }
}
