//! A real Prometheus (Debian's `prometheus` package, which scripts/setup.sh
//! installs) scrapes `batchlens watch` every second on loopback: its HTTP API
//! gives back the throughput `diagnose` computes, `promtool` accepts the
//! exposition and the scrape example, and every query of the Grafana
//! dashboard finds data.

mod common;

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{diagnose_json, encode, get, have, on_path, repo, value_in, Watch};

/// Prometheus, ended when dropped.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    log: std::path::PathBuf,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn start_prometheus(dir: &Path, target: SocketAddr) -> Prometheus {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: batchlens\n    static_configs:\n      - targets: [\"{target}\"]\n"
        ),
    )
    .expect("write the config");
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let log = dir.join("prometheus.out");
    let out = std::fs::File::create(&log).expect("prometheus' log");
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={addr}"))
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("log"))
        .stderr(out)
        .spawn()
        .expect("start prometheus");
    Prometheus { child, addr, log }
}

/// An instant query's result vector (waits up to `secs` for it to be non-empty).
fn query(p: &Prometheus, promql: &str, secs: u64) -> Vec<serde_json::Value> {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        let got = get(
            p.addr,
            &format!("/api/v1/query?query={}", encode(promql)),
            None,
        );
        if let Ok(r) = got {
            let v: serde_json::Value = serde_json::from_str(&r.body).unwrap_or_default();
            assert_ne!(v["status"], "error", "{promql}: {}", r.body);
            if let Some(res) = v["data"]["result"].as_array().filter(|a| !a.is_empty()) {
                return res.clone();
            }
        }
        assert!(
            Instant::now() < end,
            "no data for {promql}; prometheus said:\n{}",
            std::fs::read_to_string(&p.log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn value(sample: &serde_json::Value) -> f64 {
    sample["value"][1]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("a sample value")
}

#[test]
fn prometheus_scrapes_the_watch_and_reads_the_throughput_diagnose_gives() {
    if !have(
        "prometheus and promtool (Debian's prometheus package)",
        on_path("prometheus") && on_path("promtool"),
    ) {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    // Several ranks: the per-source series are scraped too.
    let log = dir.path().join("server.log");
    std::fs::copy(repo().join("examples/sglang-dp-ranks.log"), &log).expect("copy");
    let report = diagnose_json(&[log.as_path()]);
    let w = Watch::start(&log, &["--window", "1000h", "--refresh", "100ms"]);
    let exposition = w.until(20, "a judgement", |m| {
        value_in(m, "batchlens_window_stat_lines").is_some_and(|v| v > 0.0)
    });

    // promtool lints the exposition a plain client gets.
    let mut lint = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool");
    lint.stdin
        .take()
        .unwrap()
        .write_all(exposition.as_bytes())
        .unwrap();
    let out = lint.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}\n{exposition}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The scrape example of deploy/ is a valid configuration.
    let out = Command::new("promtool")
        .args(["check", "config"])
        .arg(repo().join("deploy/prometheus/prometheus.yml"))
        .output()
        .expect("promtool");
    assert!(
        out.status.success(),
        "promtool check config: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let p = start_prometheus(dir.path(), w.addr);
    // Scraped as OpenMetrics (Prometheus asks for it first) and parsed.
    let up = query(&p, "up{job=\"batchlens\"}", 60);
    assert_eq!(value(&up[0]), 1.0, "the scrape succeeded");
    let gen = query(
        &p,
        "batchlens_gen_throughput_tokens_per_second{source=\"all\"}",
        30,
    );
    assert_eq!(
        Some(value(&gen[0])),
        report["summary"]["gen_throughput_tok_s"]["mean"].as_f64(),
        "the throughput diagnose gives"
    );
    let ranks = query(
        &p,
        "batchlens_gen_throughput_tokens_per_second{source!=\"all\"}",
        30,
    );
    assert_eq!(ranks.len(), report["sources"].as_array().unwrap().len());
    let kind = report["diagnosis"]["primary"]["kind"].as_str().unwrap();
    let verdict = query(&p, &format!("batchlens_verdict{{kind=\"{kind}\"}}"), 30);
    assert_eq!(value(&verdict[0]), 1.0);
    let lines = query(&p, "sum(batchlens_lines_total)", 30);
    assert_eq!(value(&lines[0]), report["input"]["lines"].as_f64().unwrap());
    // The counter's family is named without `_total`: the OpenMetrics text was
    // what Prometheus read (the older format names it with the suffix).
    let meta = get(
        p.addr,
        "/api/v1/targets/metadata?metric=batchlens_lines",
        None,
    )
    .expect("metadata");
    let meta: serde_json::Value = serde_json::from_str(&meta.body).expect("JSON");
    assert_eq!(meta["data"][0]["type"], "counter", "{meta}");

    // Each query of the dashboard finds data in what Prometheus scraped.
    let dash: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("deploy/grafana/batchlens-dashboard.json"))
            .expect("the dashboard"),
    )
    .expect("JSON");
    for panel in dash["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().unwrap() {
            let expr = t["expr"].as_str().unwrap().replace("$instance", ".*");
            let got = query(&p, &expr, 20);
            assert!(!got.is_empty(), "{expr}");
        }
    }
}
