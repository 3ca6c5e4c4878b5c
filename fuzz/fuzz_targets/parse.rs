//! Any bytes, fed in two chunks split where the first byte says: the analyzer
//! must not panic, must account for every line, and must give the same report
//! as when fed in one piece, as when every line is read on its own (`feed`
//! reads ahead itself), and the same when the chunks (cut after a newline, as
//! the CLI cuts them) are read ahead first (`ReadAhead` + `feed_prepared`).
#![no_main]

use batchlens_core::{analyze, Analyzer, Options, ReadAhead};
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
    let mut a = Analyzer::new(Options::default()).line_by_line();
    a.feed(rest);
    let reference = a.finish();
    assert_eq!(
        format!("{reference:?}"),
        format!("{whole:?}"),
        "reading ahead inside feed changed the report"
    );

    let at_line = memchr::memrchr(b'\n', &rest[..cut]).map_or(0, |i| i + 1);
    let opts = Options::default();
    let mut ahead = ReadAhead::new(&opts);
    let mut a = Analyzer::new(opts);
    for part in [&rest[..at_line], &rest[at_line..]] {
        let mut p = ahead.read(part);
        a.feed_prepared(part, &mut p);
    }
    let prepared = a.finish();
    assert_eq!(
        format!("{whole:?}"),
        format!("{prepared:?}"),
        "reading ahead changed the report"
    );
});
