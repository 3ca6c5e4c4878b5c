//! A crash-looping server: a log of more runs than the report lists still
//! counts every run, says how many are not listed, and judges any run asked for.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

use batchlens_core::{analyze, render, Options, Report};

/// One short server run (startup lines, then 25 decode lines), `n` times.
fn restarts(n: usize) -> String {
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sglang-kv-bound.log");
    let text = std::fs::read_to_string(p).expect("example log");
    let mut run = String::new();
    let mut decodes = 0;
    for line in text.lines() {
        run.push_str(line);
        run.push('\n');
        decodes += line.contains("Decode batch") as usize;
        if decodes == 25 {
            break;
        }
    }
    run.repeat(n)
}

fn judged(r: &Report) -> Option<u32> {
    r.runs.iter().find(|x| x.analyzed).map(|x| x.run)
}

#[test]
fn every_run_is_counted_and_those_not_listed_are_said() {
    let log = restarts(2300);
    let r = analyze(log.as_bytes(), Options::default());
    assert_eq!(r.events.restarts, 2299);
    assert!(r.runs_not_listed > 0, "{} listed", r.runs.len());
    assert_eq!(r.runs.len() as u64 + r.runs_not_listed, 2300);
    // The latest are listed, in order, the last judged.
    assert_eq!(r.runs.last().map(|x| x.run), Some(2300));
    assert!(r.runs.windows(2).all(|w| w[0].run + 1 == w[1].run));
    assert_eq!(judged(&r), Some(2300));
    let text = render::text(&r, false);
    assert!(
        text.contains(&format!(
            "in 2,300 server runs ({} of the earliest not listed)",
            render::num(r.runs_not_listed as f64)
        )),
        "{}",
        &text[..text.len().min(400)]
    );
    // An early run asked for is judged and listed, though older than the rest.
    for wanted in [5, 500, 1999] {
        let r = analyze(
            log.as_bytes(),
            Options {
                run: Some(wanted),
                ..Options::default()
            },
        );
        assert_eq!(judged(&r), Some(wanted));
        assert_eq!(r.runs.len() as u64 + r.runs_not_listed, 2300);
    }
    // Under the bound, every run is listed.
    let r = analyze(restarts(300).as_bytes(), Options::default());
    assert_eq!((r.runs.len(), r.runs_not_listed), (300, 0));
}
