//! Lines every engine's log carries that are not the engine's own: HTTP access
//! logs, progress bars, tracebacks, blank lines.

use std::sync::OnceLock;

use memchr::memmem::{self, Finder};

/// The phrases [`classify`] looks for, compiled once.
struct Phrases {
    http: [Finder<'static>; 2],
    progress: [Finder<'static>; 4],
    error: [Finder<'static>; 2],
    warning: [Finder<'static>; 2],
}

fn phrases() -> &'static Phrases {
    static P: OnceLock<Phrases> = OnceLock::new();
    P.get_or_init(|| Phrases {
        http: [Finder::new(b"HTTP/1."), Finder::new(b"HTTP/2")],
        progress: [
            Finder::new(b"it/s]"),
            Finder::new(b"s/it]"),
            Finder::new(b"%|"),
            Finder::new(b"it ["),
        ],
        error: [Finder::new(b"Error: "), Finder::new(b"Exception")],
        warning: [Finder::new(b"WARNING"), Finder::new(b"Warning")],
    })
}

fn any(fs: &[Finder<'static>], line: &[u8]) -> bool {
    fs.iter().any(|f| f.find(line).is_some())
}

/// Whether a line is an HTTP access line (`… "POST /generate HTTP/1.1" 200 OK`).
/// No engine reads stats from one: once an engine parser has found one, the
/// parsers after it are not asked ([`super::Ahead::AccessLine`]).
pub(crate) fn is_access_line(line: &[u8]) -> bool {
    const HTTP_1: &[u8] = b" HTTP/1.";
    // The request ends in its last quote, near the line's end (`… HTTP/1.1" 200 OK`):
    // a look there finds most access lines without a search of the whole line.
    if let Some(q) = memchr::memrchr(b'"', line) {
        if line[..q].len() > HTTP_1.len() && line[..q - 1].ends_with(HTTP_1) {
            return true;
        }
    }
    static HTTP: std::sync::OnceLock<memmem::Finder<'static>> = std::sync::OnceLock::new();
    HTTP.get_or_init(|| memmem::Finder::new(b" HTTP/1."))
        .find(line)
        .is_some()
}

/// The label of HTTP access lines.
pub const ACCESS_LOG: &str = "access_log";

/// A label for a known non-stats line, or `None`.
pub fn classify(line: &[u8]) -> Option<&'static str> {
    let t = crate::text::fields::trim(line);
    if t.is_empty() {
        return Some("blank");
    }
    if t.iter()
        .all(|&c| c == b'.' || c == 0xe2 || c == 0x80 || c == 0xa6)
    {
        return Some("elision");
    }
    let ph = phrases();
    if any(&ph.http, line) {
        return Some(ACCESS_LOG);
    }
    if any(&ph.progress, line) {
        return Some("progress_bar");
    }
    if t.starts_with(b"Traceback") || t.starts_with(b"File \"") || any(&ph.error, line) {
        return Some("error");
    }
    if any(&ph.warning, line) {
        return Some("warning");
    }
    None
}

/// Whether an unread line looks like it was meant to be a stats line (so a
/// user can report a format we do not know).
pub fn looks_like_stats(line: &[u8]) -> bool {
    const HINTS: [&[u8]; 8] = [
        b"running-req",
        b"throughput",
        b"token usage",
        b"KV cache usage",
        b"Running:",
        b"queue-req",
        b"Waiting:",
        b"batch",
    ];
    HINTS
        .iter()
        .any(|h| memchr::memmem::find(line, h).is_some())
}
