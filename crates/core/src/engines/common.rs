//! Lines every engine's log carries that are not the engine's own: HTTP access
//! logs, progress bars, tracebacks, blank lines.

use memchr::memmem;

/// A label for a known non-stats line, or `None`.
pub fn classify(line: &[u8]) -> Option<&'static str> {
    let t = crate::fields::trim(line);
    if t.is_empty() {
        return Some("blank");
    }
    if t.iter()
        .all(|&c| c == b'.' || c == 0xe2 || c == 0x80 || c == 0xa6)
    {
        return Some("elision");
    }
    if memmem::find(line, b"HTTP/1.").is_some() || memmem::find(line, b"HTTP/2").is_some() {
        return Some("access_log");
    }
    if memmem::find(line, b"it/s]").is_some()
        || memmem::find(line, b"s/it]").is_some()
        || memmem::find(line, b"%|").is_some()
        || memmem::find(line, b"it [").is_some()
    {
        return Some("progress_bar");
    }
    if t.starts_with(b"Traceback")
        || t.starts_with(b"File \"")
        || memmem::find(line, b"Error: ").is_some()
        || memmem::find(line, b"Exception").is_some()
    {
        return Some("error");
    }
    if memmem::find(line, b"WARNING").is_some() || memmem::find(line, b"Warning").is_some() {
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
    HINTS.iter().any(|h| memmem::find(line, h).is_some())
}
