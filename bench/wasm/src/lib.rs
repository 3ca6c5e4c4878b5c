//! `alloc(n)` a buffer, copy bytes into it, `feed(ptr, n)`; `finish()` returns the
//! stats lines read (and keeps the report's line count for `lines()`).

use batchlens_core::{Analyzer, Options, Prepared, ReadAhead};
use std::cell::RefCell;

thread_local! {
    static STATE: RefCell<(Option<Analyzer>, Vec<u8>, u64)> = const { RefCell::new((None, Vec::new(), 0)) };
}

#[no_mangle]
pub extern "C" fn alloc(n: usize) -> *mut u8 {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.1.resize(n, 0);
        s.1.as_mut_ptr()
    })
}

#[no_mangle]
pub extern "C" fn start() {
    STATE.with(|s| s.borrow_mut().0 = Some(Analyzer::new(Options::default())));
}

#[no_mangle]
pub extern "C" fn feed(n: usize) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let (a, buf, _) = &mut *s;
        a.as_mut().expect("start first").feed(&buf[..n]);
    })
}

#[no_mangle]
pub extern "C" fn finish() -> f64 {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let r = s.0.take().expect("start first").finish();
        s.2 = r.input.lines;
        (r.input.stat_lines + r.input.damaged_stat_lines) as f64
    })
}

#[no_mangle]
pub extern "C" fn lines() -> f64 {
    STATE.with(|s| s.borrow().2 as f64)
}

/// The parser stage alone: lines split, their kind found and stats lines read
/// into records ([`ReadAhead`]), without the analyzer's timeline and report.
/// `parse_start()`, then `parse_feed(n)` per chunk (the `alloc` buffer),
/// `parse_finish()` returns the lines the parser read (the rest it leaves to
/// the analyzer).
struct ParseState {
    ahead: ReadAhead,
    prepared: Prepared,
    carry: Vec<u8>,
    read: u64,
}

thread_local! {
    static PARSE: RefCell<Option<ParseState>> = const { RefCell::new(None) };
}

impl ParseState {
    fn read(&mut self, whole_lines: &[u8]) {
        self.ahead.read_into(whole_lines, &mut self.prepared);
        self.read += self.prepared.lines_read() as u64;
    }
}

#[no_mangle]
pub extern "C" fn parse_start() {
    PARSE.with(|p| {
        *p.borrow_mut() = Some(ParseState {
            ahead: ReadAhead::new(&Options::default()),
            prepared: Prepared::default(),
            carry: Vec::new(),
            read: 0,
        })
    });
}

#[no_mangle]
pub extern "C" fn parse_feed(n: usize) {
    STATE.with(|s| {
        PARSE.with(|p| {
            let s = s.borrow();
            let mut p = p.borrow_mut();
            let p = p.as_mut().expect("parse_start first");
            let buf = &s.1[..n];
            let Some(last) = memchr::memrchr(b'\n', buf) else {
                p.carry.extend_from_slice(buf);
                return;
            };
            let mut from = 0;
            if !p.carry.is_empty() {
                // The line begun in the last chunk, whole.
                let first = memchr::memchr(b'\n', buf).expect("one newline");
                let mut line = std::mem::take(&mut p.carry);
                line.extend_from_slice(&buf[..=first]);
                p.read(&line);
                line.clear();
                p.carry = line;
                from = first + 1;
            }
            p.read(&buf[from..=last]);
            p.carry.extend_from_slice(&buf[last + 1..]);
        })
    })
}

#[no_mangle]
pub extern "C" fn parse_finish() -> f64 {
    PARSE.with(|p| p.borrow_mut().take().map_or(0.0, |p| p.read as f64))
}
