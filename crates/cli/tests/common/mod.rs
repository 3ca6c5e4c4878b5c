//! Helpers of the live and fleet tests: the binary, a running `batchlens
//! watch`, plain HTTP on loopback, and the external tools some tests need.
#![allow(dead_code)] // Each test file uses its own share of these.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_batchlens"))
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn fixtures() -> PathBuf {
    repo().join("tests/fixtures")
}

/// Whether a test that needs `what` (an external tool) can run: when it is
/// missing it is skipped, except under CI, where a missing tool is a failure
/// (scripts/setup.sh installs it).
pub fn have(what: &str, found: bool) -> bool {
    if found {
        return true;
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    assert!(
        !ci,
        "{what} is missing under CI: scripts/setup.sh installs it"
    );
    eprintln!("skipped: {what} is not installed (scripts/setup.sh installs it)");
    false
}

pub fn on_path(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A simulated server's log (deterministic for the preset and the duration).
pub fn simulate(preset: &str, duration_s: u32, out: &Path) {
    let st = Command::new(bin())
        .args(["simulate", "--preset", preset, "--duration"])
        .arg(duration_s.to_string())
        .arg("--out")
        .arg(out)
        .status()
        .expect("run batchlens simulate");
    assert!(st.success(), "simulate {preset}");
}

/// `batchlens diagnose --format json` of these files.
pub fn diagnose_json(files: &[&Path]) -> serde_json::Value {
    let out = Command::new(bin())
        .args(["diagnose", "--format", "json"])
        .args(files)
        .output()
        .expect("run batchlens diagnose");
    assert!(
        out.status.success(),
        "diagnose: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the report is JSON")
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// `GET path` over HTTP/1.1 on loopback (the servers answer with
/// `Connection: close`, or a length, which is all this reads).
pub fn get(addr: SocketAddr, path: &str, accept: Option<&str>) -> std::io::Result<Response> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{accept}Connection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Percent-encodes a query parameter.
pub fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A `batchlens watch` serving metrics on a port of its choosing; ended when dropped.
pub struct Watch {
    pub child: Child,
    pub addr: SocketAddr,
    pub stdout: Arc<Mutex<String>>,
    pub stderr: Arc<Mutex<String>>,
}

impl Watch {
    pub fn start(log: &Path, extra: &[&str]) -> Watch {
        let mut child = Command::new(bin())
            .arg("watch")
            .arg(log)
            .args(["--metrics-addr", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start batchlens watch");
        let stderr = Arc::new(Mutex::new(String::new()));
        let stdout = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let err = BufReader::new(child.stderr.take().expect("stderr"));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                if let Some(a) = line
                    .strip_prefix("batchlens: serving http://")
                    .and_then(|r| r.strip_suffix("/metrics"))
                {
                    let _ = tx.send(a.to_string());
                }
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let sink = Arc::clone(&stdout);
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the watch says where it serves")
            .parse()
            .expect("an address");
        Watch {
            child,
            addr,
            stdout,
            stderr,
        }
    }

    pub fn metrics(&self) -> String {
        get(self.addr, "/metrics", None).expect("GET /metrics").body
    }

    /// A sample's value in the exposition, by its name and labels as written.
    pub fn value(&self, series: &str) -> Option<f64> {
        value_in(&self.metrics(), series)
    }

    /// Waits until `ok` holds of the exposition (at most `secs`).
    pub fn until(&self, secs: u64, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let m = self.metrics();
            if ok(&m) {
                return m;
            }
            assert!(
                Instant::now() < end,
                "timed out waiting for {what}; last exposition:\n{m}\nstderr:\n{}",
                self.stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn value_in(exposition: &str, series: &str) -> Option<f64> {
    exposition
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}
