//! `batchlens watch` on a log that a test writes as a server and logrotate
//! would: appended in pieces, rotated by rename, copied and truncated. The
//! window's report equals `diagnose` on the same lines, every line is counted
//! once, an idle watch sleeps and a long one keeps its memory.

mod common;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use common::{diagnose_json, get, simulate, value_in, Watch};

fn append(path: &Path, text: &str) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open the log for append");
    f.write_all(text.as_bytes()).expect("append");
}

fn lines_of(m: &str, kind: &str) -> u64 {
    value_in(m, &format!("batchlens_lines_total{{kind=\"{kind}\"}}")).unwrap_or(-1.0) as u64
}

fn read_bytes(m: &str) -> u64 {
    value_in(m, "batchlens_read_bytes_total").unwrap_or(-1.0) as u64
}

#[test]
fn watch_follows_appends_rotation_and_copytruncate_reading_each_line_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sim = dir.path().join("sim.log");
    simulate("kv_bound", 600, &sim);
    let text = std::fs::read_to_string(&sim).expect("the simulated log");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let n = lines.len();
    let (a, b) = (n / 3, 2 * n / 3);
    let part = |r: std::ops::Range<usize>| lines[r].concat();
    let (first, second, third) = (part(0..a), part(a..b), part(b..n));

    // The log does not exist yet when the watch starts.
    let log = dir.path().join("server.log");
    let w = Watch::start(&log, &["--window", "3m", "--refresh", "100ms"]);
    w.until(10, "the server", |m| {
        value_in(m, "batchlens_up") == Some(0.0)
    });

    // Appended in two writes, the first ending inside a line.
    let cut = first.len() / 2 + 7;
    append(&log, &first[..cut]);
    std::thread::sleep(Duration::from_millis(300));
    append(&log, &first[cut..]);
    w.until(20, "the first part", |m| {
        read_bytes(m) == first.len() as u64
    });

    // Rotation by rename: the server's next lines go to a new file.
    std::fs::rename(&log, dir.path().join("server.log.1")).expect("rotate");
    append(&log, &second);
    w.until(20, "the rotated log", |m| {
        read_bytes(m) == (first.len() + second.len()) as u64
            && value_in(m, "batchlens_file_reopens_total{reason=\"rotation\"}") == Some(1.0)
    });

    // copytruncate: copied away, cut to nothing in place, written on.
    std::fs::copy(&log, dir.path().join("server.log.2")).expect("copy");
    OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&log)
        .expect("truncate");
    w.until(20, "the truncation", |m| {
        value_in(m, "batchlens_file_reopens_total{reason=\"truncation\"}") == Some(1.0)
    });
    append(&log, &third);
    w.until(20, "every line", |m| {
        read_bytes(m) == text.len() as u64 && lines_of(m, "stats") > 0
    });

    // The judgement that covers the last line.
    let (report, first_line) = loop {
        let r = get(w.addr, "/report", None).expect("GET /report");
        assert_eq!(r.status, 200, "{}", r.body);
        let first_line: usize = r
            .header("X-Batchlens-First-Line")
            .and_then(|v| v.parse().ok())
            .expect("the window's first line");
        let report: serde_json::Value = serde_json::from_str(&r.body).expect("JSON");
        if first_line - 1 + report["input"]["lines"].as_u64().unwrap() as usize == n {
            break (report, first_line);
        }
        std::thread::sleep(Duration::from_millis(50));
    };

    // Nothing missed, nothing read twice: the counters equal diagnose's on the whole log.
    let whole = diagnose_json(&[sim.as_path()]);
    let m = w.until(10, "the counters of the last judgement", |m2| {
        lines_of(m2, "stats") == whole["input"]["stat_lines"].as_u64().unwrap()
    });
    for (kind, field) in [
        ("stats", "stat_lines"),
        ("damaged_stats", "damaged_stat_lines"),
        ("other", "other_lines"),
        ("unrecognized", "unrecognized_lines"),
    ] {
        assert_eq!(
            lines_of(&m, kind),
            whole["input"][field].as_u64().unwrap(),
            "{kind} lines"
        );
    }
    assert_eq!(
        ["stats", "damaged_stats", "other", "unrecognized"]
            .iter()
            .map(|k| lines_of(&m, k))
            .sum::<u64>(),
        n as u64
    );

    // The window is the log's last 3 minutes: it spans at most that and a
    // bucket, and the stats line before it is older than that.
    let span = report["span_seconds"].as_f64().unwrap();
    let bucket = report["timeline"]["bucket_seconds"].as_f64().unwrap();
    assert!(span <= 180.0 + bucket, "window span {span} s");
    let stamp = |l: &str| -> Option<u32> {
        if !l.contains(" batch") {
            return None;
        }
        let t = l.get(12..20)?;
        let n = |r: std::ops::Range<usize>| t.get(r)?.parse::<u32>().ok();
        Some(n(0..2)? * 3600 + n(3..5)? * 60 + n(6..8)?)
    };
    let last = lines
        .iter()
        .rev()
        .find_map(|l| stamp(l))
        .expect("a stats line");
    let before = lines[..first_line - 1]
        .iter()
        .rev()
        .find_map(|l| stamp(l))
        .expect("lines before the window");
    assert!(
        last - before >= 180,
        "a line {} s before the end was dropped",
        last - before
    );
    let tail = dir.path().join("tail.log");
    std::fs::write(&tail, lines[first_line - 1..].concat()).expect("write the tail");
    assert_eq!(
        report,
        diagnose_json(&[tail.as_path()]),
        "the window's report"
    );
    assert_eq!(report["last_timestamp"], whole["last_timestamp"]);

    // The gauges are the window's figures.
    let gen = report["summary"]["gen_throughput_tok_s"]["mean"].as_f64();
    assert_eq!(
        value_in(
            &m,
            "batchlens_gen_throughput_tokens_per_second{source=\"all\"}"
        ),
        gen
    );
    let kind = report["diagnosis"]["primary"]["kind"].as_str().unwrap();
    assert_eq!(
        value_in(&m, &format!("batchlens_verdict{{kind=\"{kind}\"}}")),
        Some(1.0)
    );
    assert_eq!(value_in(&m, "batchlens_up"), Some(1.0));

    // Not a terminal: one line per change of verdict, the last one the current.
    let out = w.stdout.lock().unwrap().clone();
    let last = out.lines().last().expect("a verdict line");
    assert!(last.contains(&format!(" {kind} confidence ")), "{out}");
    let shown: Vec<&str> = out
        .lines()
        .map(|l| l.split(' ').nth(2).unwrap_or(""))
        .collect();
    assert!(
        shown.windows(2).all(|p| p[0] != p[1]),
        "a line per change: {out}"
    );
}

/// User and system CPU ticks the process has used.
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    // Fields 14 and 15 of the line (utime, stime), counted after the name.
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[cfg(target_os = "linux")]
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[cfg(target_os = "linux")]
#[test]
fn an_idle_watch_sleeps_instead_of_spinning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("server.log");
    std::fs::copy(common::repo().join("examples/sglang-kv-bound.log"), &log).expect("copy");
    let w = Watch::start(&log, &["--refresh", "100ms"]);
    w.until(20, "a judgement", |m| {
        value_in(m, "batchlens_window_stat_lines").is_some_and(|v| v > 0.0)
    });
    let pid = w.child.id();
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(3));
    let used = cpu_ticks(pid) - before;
    eprintln!("idle watch: {used} ticks of CPU in 3 s");
    // A tick is 10 ms: a loop that spins would take ~300 in 3 s.
    assert!(used <= 5, "{used} ticks of CPU in 3 s idle");
}

#[cfg(target_os = "linux")]
#[test]
fn a_watch_keeps_its_memory_while_the_log_grows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("server.log");
    let w = Watch::start(
        &log,
        &[
            "--window",
            "10m",
            "--refresh",
            "100ms",
            "--max-window-mib",
            "1",
        ],
    );
    let pid = w.child.id();
    // Ten lines a second of log time (ranks of one stamp): ten minutes hold ~1.7 MB, more than the cap.
    let mut t = 0u64;
    let mut written = 0u64;
    let mut lines = 0u64;
    let mut burst = |written: &mut u64, lines: &mut u64| {
        let mut s = String::new();
        for _ in 0..6000 {
            s.push_str(&format!(
                "[2026-05-07 {:02}:{:02}:{:02} TP0] Decode batch, #running-req: {}, #token: 9000, token usage: 0.{:02}, cuda graph: True, gen throughput (token/s): {}.25, #queue-req: {}\n",
                t / 36_000 % 24,
                t / 600 % 60,
                t / 10 % 60,
                20 + t % 30,
                40 + t % 50,
                900 + t % 200,
                t % 7
            ));
            t += 1;
        }
        append(&log, &s);
        *written += s.len() as u64;
        *lines += 6000;
    };
    let mut rss = Vec::new();
    for round in 0..12 {
        burst(&mut written, &mut lines);
        let m = w.until(30, "the burst", |m| read_bytes(m) == written);
        assert!(
            value_in(&m, "batchlens_window_bytes").unwrap() <= (1 << 20) as f64,
            "the window keeps within its cap"
        );
        if round >= 2 {
            rss.push(rss_kib(pid));
        }
    }
    let m = w.until(30, "the counts", |m| lines_of(m, "stats") == lines);
    assert_eq!(lines_of(&m, "unrecognized"), 0);
    let (lo, hi) = (rss.iter().min().unwrap(), rss.iter().max().unwrap());
    eprintln!("watch RSS over the rounds: {rss:?} KiB");
    // 10 MB read through a 1 MiB window: what is held does not grow with it.
    assert!(hi - lo < 6 * 1024, "RSS {lo}–{hi} KiB over the rounds");
}

#[test]
fn a_directory_or_a_taken_address_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = std::process::Command::new(common::bin())
        .arg("watch")
        .arg(dir.path())
        .output()
        .expect("run watch");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().unwrap().to_string();
    let out = std::process::Command::new(common::bin())
        .arg("watch")
        .arg(dir.path().join("server.log"))
        .args(["--metrics-addr", &addr])
        .output()
        .expect("run watch");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen on"));
}
