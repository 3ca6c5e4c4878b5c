//! `batchlens watch LOG`: follows a growing log, judges its last `--window` of
//! log time whenever new lines came in (at most once per `--refresh`), shows the
//! verdict on the terminal and, with `--metrics-addr`, serves it as metrics.
//!
//! Idle, it blocks in the kernel (inotify on the log's directory, or a sleep
//! between looks at the file): no busy loop. Its memory is the window's lines
//! (capped by `--max-window-mib`) and one report: bounded however long it runs.

use std::io::{IsTerminal, Write};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use batchlens_core::render::{duration, num, pct};
use batchlens_core::{Engine, Options, Report};

use crate::follow::{Follower, Piece, Reopens, Waker};
use crate::http::{self, Reply, Request};
use crate::metrics::{self, State};
use crate::window::{Counts, Judged, Window};
use crate::Failure;

#[derive(clap::Args)]
pub struct WatchArgs {
    /// The log file to follow, as `tail -F` does: appends, rotation by rename,
    /// copytruncate, and a file that does not exist yet.
    file: PathBuf,
    /// The stretch of log time judged: the last this much of the log
    /// (`90s`, `10m`, `2h`; a bare number is seconds).
    #[arg(long, default_value = "10m", value_parser = parse_duration, value_name = "TIME")]
    window: f64,
    /// Serve metrics at http://ADDR/metrics (OpenMetrics) and the window's JSON
    /// report at /report, e.g. `127.0.0.1:9464` (`0.0.0.0:9464` in a pod).
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    metrics_addr: Option<SocketAddr>,
    /// Read only this engine's format instead of detecting it.
    #[arg(long, value_parser = crate::parse_engine)]
    engine: Option<Engine>,
    /// Judge at most this often while new lines come in (less often when
    /// judging the window takes more than a fifth of it).
    #[arg(long, default_value = "1s", value_parser = parse_duration, value_name = "TIME")]
    refresh: f64,
    /// MiB of log lines kept in memory at most; a window whose lines hold more
    /// is judged on its latest lines that fit. A file already there is read
    /// from this far before its end.
    #[arg(long, default_value_t = 64, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=65536))]
    max_window_mib: u64,
}

/// `90`, `90s`, `1.5m`, `2h`, `500ms` as seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (n, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let per = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("'{s}': give a time like 90s, 10m or 2h")),
    };
    match n.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * per),
        _ => Err(format!("'{s}': give a time like 90s, 10m or 2h")),
    }
}

fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    s.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| format!("'{s}' is not an address to listen on (like 127.0.0.1:9464)"))
}

/// What the metrics server shows: the latest judgement and the counters.
#[derive(Default)]
struct Snapshot {
    up: bool,
    report: Option<Report>,
    counts: Counts,
    bytes_read: u64,
    reopens: Reopens,
    window_bytes: usize,
    judged_at: Option<f64>,
    /// The number, among the lines read since the watch began, of the first line judged.
    first_line: u64,
}

fn handle(shared: &Mutex<Snapshot>, req: &Request<'_>) -> Reply {
    let s = shared.lock().unwrap_or_else(|e| e.into_inner());
    match req.path {
        "/metrics" => {
            let st = State {
                up: s.up,
                report: s.report.as_ref(),
                counts: s.counts,
                bytes_read: s.bytes_read,
                reopens: s.reopens,
                window_bytes: s.window_bytes,
                judged_at: s.judged_at,
            };
            Reply {
                status: 200,
                content_type: if req.open_metrics {
                    http::OPEN_METRICS
                } else {
                    http::PROMETHEUS_TEXT
                },
                headers: Vec::new(),
                body: metrics::render(&st, req.open_metrics),
            }
        }
        "/report" => match &s.report {
            Some(r) => match serde_json::to_string_pretty(r) {
                Ok(mut body) => {
                    body.push('\n');
                    Reply {
                        status: 200,
                        content_type: "application/json",
                        // Where the judged lines begin among those read: the
                        // report's line numbers count from there.
                        headers: vec![("X-Batchlens-First-Line", s.first_line.to_string())],
                        body,
                    }
                }
                Err(e) => http::text(503, &format!("could not write the report: {e}\n")),
            },
            None => http::text(503, "no lines judged yet\n"),
        },
        "/" => http::text(
            200,
            "batchlens watch: /metrics (OpenMetrics), /report (the window's JSON report)\n",
        ),
        _ => http::text(404, "not found: try /metrics or /report\n"),
    }
}

pub fn run(args: WatchArgs) -> Result<(), Failure> {
    if args.file.is_dir() {
        return Err(Failure::input(format!(
            "'{}' is a directory; give the path of the log file to follow.",
            args.file.display()
        )));
    }
    let opts = Options {
        engine: args.engine,
        ..Options::default()
    };
    let cap = (args.max_window_mib as usize).saturating_mul(1 << 20);
    let shared = Arc::new(Mutex::new(Snapshot::default()));
    if let Some(addr) = args.metrics_addr {
        let listener = TcpListener::bind(addr)
            .map_err(|e| Failure::input(format!("cannot listen on {addr}: {e}.")))?;
        let local = listener.local_addr().unwrap_or(addr);
        eprintln!("batchlens: serving http://{local}/metrics");
        let sh = Arc::clone(&shared);
        std::thread::spawn(move || http::serve(listener, move |req| handle(&sh, req)));
    }
    let refresh = Duration::from_secs_f64(args.refresh);
    let mut follower = Follower::new(&args.file, cap as u64);
    let mut waker = Waker::new(&args.file);
    let mut window = Window::new(cap);
    let mut display = Display::new(&args);
    let mut bytes_read = 0u64;
    let mut pending = false;
    let mut last_judged: Option<Instant> = None;
    // Judging a large window takes a while: at most a fifth of the time goes to it.
    let mut gap = refresh;
    let mut error: Option<String> = None;
    loop {
        let polled = follower.poll(&mut |p| match p {
            Piece::Data(d) => {
                bytes_read += d.len() as u64;
                window.push(d);
            }
            Piece::End => window.end_file(),
        });
        match polled {
            Ok(read) => {
                pending |= read;
                if error.take().is_some() {
                    eprintln!("batchlens: reading '{}' again", args.file.display());
                }
            }
            Err(e) => {
                let msg = format!("cannot read '{}': {e}", args.file.display());
                if error.as_deref() != Some(msg.as_str()) {
                    eprintln!("batchlens: {msg} (trying again)");
                    error = Some(msg);
                }
            }
        }
        let up = follower.is_open() && error.is_none();
        let since = last_judged.map(|t| t.elapsed());
        if pending && since.is_none_or(|s| s >= gap) {
            let began = Instant::now();
            let mut j = window.judge(&opts, args.window);
            // Right after the backfill of a file already there, the first
            // judgement held more than the window: the slid window is judged at once.
            if j.over_s > (2.0 * j.report.timeline.bucket_seconds).max(5.0) {
                j = window.judge(&opts, args.window);
            }
            pending = false;
            last_judged = Some(Instant::now());
            gap = refresh.max(began.elapsed() * 4);
            display.show(&j, follower.reopens)?;
            let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
            s.counts = j.counts;
            s.first_line = j.first_line;
            s.report = Some(j.report);
            s.judged_at = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs_f64());
        }
        {
            let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
            s.up = up;
            s.bytes_read = bytes_read;
            s.reopens = follower.reopens;
            s.window_bytes = window.bytes();
        }
        if pending {
            // New lines wait for the next judgement: the file is looked at
            // again then, not at each write.
            let waited = last_judged.map_or(Duration::ZERO, |t| t.elapsed());
            std::thread::sleep(gap.saturating_sub(waited));
        } else if waker.notified() && follower.is_open() {
            // Woken by a change in the directory; the timeout covers changes
            // inotify does not see (a file system shared over the network).
            waker.wait(Duration::from_secs(2));
        } else {
            waker.wait(Duration::from_millis(250));
        }
    }
}

/// The live status: redrawn in place on a terminal; otherwise one line per
/// change of verdict.
struct Display {
    terminal: bool,
    file: String,
    window_s: f64,
    last_kind: Option<String>,
}

impl Display {
    fn new(args: &WatchArgs) -> Self {
        Display {
            terminal: std::io::stdout().is_terminal(),
            file: args.file.display().to_string(),
            window_s: args.window,
            last_kind: None,
        }
    }

    fn show(&mut self, j: &Judged, reopens: Reopens) -> Result<(), Failure> {
        let r = &j.report;
        let (kind, confidence, headline) = match &r.diagnosis {
            Some(d) => (
                d.primary.kind.as_str().to_string(),
                d.primary.confidence,
                d.primary.headline.clone(),
            ),
            None => ("insufficient_data".to_string(), 0.0, String::new()),
        };
        let text = if self.terminal {
            format!("\x1b[H\x1b[2J{}", self.screen(j, reopens))
        } else if self.last_kind.as_deref() != Some(kind.as_str()) {
            format!(
                "{} {kind} confidence {:.2}: {}\n",
                r.last_timestamp.as_deref().unwrap_or("-"),
                confidence,
                plain(&headline)
            )
        } else {
            String::new()
        };
        self.last_kind = Some(kind);
        if text.is_empty() {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
            Ok(()) => Ok(()),
            // The reader went away (`| head`): the watch ends quietly.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure {
                code: 0,
                message: String::new(),
            }),
            Err(e) => Err(Failure {
                code: crate::EXIT_INTERNAL,
                message: format!("could not write to stdout: {e}"),
            }),
        }
    }

    fn screen(&self, j: &Judged, reopens: Reopens) -> String {
        let r = &j.report;
        let s = &r.summary;
        let mean = |d: Option<batchlens_core::report::Distribution>| d.map(|d| d.mean);
        let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("–".to_string(), f);
        let mut out = format!(
            "batchlens watch  {}  ·  window {} ({} judged, {})  ·  last line {}\n\n",
            plain(&self.file),
            duration(self.window_s),
            duration(r.span_seconds),
            batchlens_core::render::count(r.input.stat_lines as f64, "stats line", "stats lines"),
            r.last_timestamp.as_deref().unwrap_or("–"),
        );
        match &r.diagnosis {
            Some(d) => {
                out.push_str(&format!(
                    "verdict     {}  (confidence {})\n            {}\n",
                    d.primary.kind.as_str(),
                    pct(d.primary.confidence),
                    plain(&d.primary.headline)
                ));
            }
            None => out.push_str("verdict     none yet\n"),
        }
        out.push_str(&format!(
            "throughput  {} tok/s generated · {} tok/s prompt\n",
            opt(mean(s.gen_throughput_tok_s), num),
            opt(mean(s.input_throughput_tok_s), num)
        ));
        out.push_str(&format!(
            "requests    {} running · {} waiting · KV {}\n",
            opt(mean(s.running_requests), num),
            opt(mean(s.queued_requests), num),
            opt(mean(s.kv_usage), pct)
        ));
        if let Some(a) = r.diagnosis.as_ref().and_then(|d| d.primary.actions.first()) {
            out.push_str(&format!(
                "top action  {}\n            {}\n",
                plain(&a.flag),
                plain(&a.effect)
            ));
        }
        let c = &j.counts;
        out.push_str(&format!(
            "read        {} ({} stats, {} other, {} unrecognized) · {} rotated · {} truncated\n",
            batchlens_core::render::count(c.lines as f64, "line", "lines"),
            num(c.stats as f64),
            num(c.other as f64),
            num(c.unrecognized as f64),
            reopens.rotations,
            reopens.truncations
        ));
        out
    }
}

/// Text for the terminal with control characters (from the log) removed.
fn plain(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_units_and_a_bare_number_is_seconds() {
        assert_eq!(parse_duration("90"), Ok(90.0));
        assert_eq!(parse_duration("90s"), Ok(90.0));
        assert_eq!(parse_duration("10m"), Ok(600.0));
        assert_eq!(parse_duration("1.5h"), Ok(5400.0));
        assert_eq!(parse_duration("250ms"), Ok(0.25));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("ten minutes").is_err());
        assert!(parse_duration("5d").is_err());
    }
}
