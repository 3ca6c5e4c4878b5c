//! A small HTTP/1.1 server for `batchlens watch --metrics-addr`: `GET /metrics`
//! (OpenMetrics when the client asks for it, as Prometheus does; the older
//! text format otherwise) and `GET /report` (the window's JSON report).
//!
//! One thread takes one connection at a time: scrapes are seconds apart, and
//! a client that stalls is cut off by the timeouts, so no request can hold
//! memory or the thread for long.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// Bytes of a request's head read at most.
const MAX_HEAD: usize = 16 * 1024;
const TIMEOUT: Duration = Duration::from_secs(5);

pub const OPEN_METRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
pub const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What a path answers with: status, content type, body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    /// Further header lines.
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

/// A request as far as the server reads it.
pub struct Request<'a> {
    pub path: &'a str,
    /// The client accepts OpenMetrics (Prometheus' scrapes do).
    pub open_metrics: bool,
}

/// Serves on `listener` until the process ends.
pub fn serve(listener: TcpListener, handle: impl Fn(&Request<'_>) -> Reply) {
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        // A client that goes away mid-request only ends its own connection.
        let _ = answer(stream, &handle);
    }
}

fn answer(mut stream: TcpStream, handle: &impl Fn(&Request<'_>) -> Reply) -> io::Result<()> {
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HEAD {
            return respond(&mut stream, &text(431, "request header too large\n"), false);
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let accept = lines
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.trim().eq_ignore_ascii_case("accept"))
        .map(|(_, v)| v.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(",");
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return respond(&mut stream, &text(405, "only GET is served\n"), false);
    }
    let path = target.split('?').next().unwrap_or("");
    let req = Request {
        path,
        open_metrics: accept.contains("application/openmetrics-text"),
    };
    respond(&mut stream, &handle(&req), head_only)
}

pub fn text(status: u16, body: &str) -> Reply {
    Reply {
        status,
        content_type: "text/plain; charset=utf-8",
        headers: Vec::new(),
        body: body.to_string(),
    }
}

fn respond(stream: &mut TcpStream, r: &Reply, head_only: bool) -> io::Result<()> {
    let reason = match r.status {
        200 => "OK",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        r.content_type,
        r.body.len()
    );
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(r.body.as_bytes())?;
    }
    stream.flush()
}
