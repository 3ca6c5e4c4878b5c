//! `alloc(n)` a buffer, copy bytes into it, `feed(ptr, n)`; `finish()` returns the
//! stats lines read (and keeps the report's line count for `lines()`).

use batchlens_core::{Analyzer, Options};
use std::cell::RefCell;

thread_local! {
    static STATE: RefCell<(Option<Analyzer>, Vec<u8>, u64)> = RefCell::new((None, Vec::new(), 0));
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
