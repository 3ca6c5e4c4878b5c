//! Any bytes, fed in two chunks split where the first byte says: the analyzer
//! must not panic, must account for every line, and must give the same report
//! as when fed in one piece.
#![no_main]

use batchlens_core::{analyze, Analyzer, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let cut = if rest.is_empty() {
        0
    } else {
        first as usize % (rest.len() + 1)
    };
    let mut a = Analyzer::new(Options::default());
    a.feed(&rest[..cut]);
    a.feed(&rest[cut..]);
    let split = a.finish();
    let i = &split.input;
    assert_eq!(
        i.accounted_lines(),
        i.lines,
        "line accounting"
    );
    let whole = analyze(rest, Options::default());
    assert_eq!(
        format!("{whole:?}"),
        format!("{split:?}"),
        "chunking changed the report"
    );
});
