//! Values a log cannot hold are not read as if it did: an impossible date, a
//! count written as a literal, a usage or rate outside its physical range make
//! their line damaged (counted, shown), never part of a figure.

use batchlens_core::{analyze, Options, Report};

fn example(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
    std::fs::read_to_string(p).expect("example log")
}

fn report(text: &str) -> Report {
    analyze(text.as_bytes(), Options::default())
}

/// The log with its `k`-th SGLang decode line changed by `edit`.
fn edit_decode_line(text: &str, k: usize, edit: impl Fn(&str) -> String) -> String {
    let mut seen = 0;
    let mut out = String::new();
    for line in text.lines() {
        if line.contains("Decode batch") {
            if seen == k {
                out.push_str(&edit(line));
                out.push('\n');
                seen += 1;
                continue;
            }
            seen += 1;
        }
        out.push_str(line);
        out.push('\n');
    }
    assert!(seen > k, "the log has {seen} decode lines");
    out
}

#[test]
fn a_count_written_as_a_literal_is_no_count() {
    let log = example("sglang-kv-bound.log");
    let clean = report(&log);
    let edited = edit_decode_line(&log, 100, |l| {
        let at = l.find("#running-req: ").expect("running") + "#running-req: ".len();
        let end = at + l[at..].find(',').expect("comma");
        format!("{}1_000{}", &l[..at], &l[end..])
    });
    let r = report(&edited);
    assert_eq!(r.input.damaged_stat_lines, clean.input.damaged_stat_lines + 1);
    assert_eq!(r.input.stat_lines + 1, clean.input.stat_lines);
    assert!(r.input.damaged_examples.iter().any(|e| e.text.contains("1_000")));
    let most = |r: &Report| r.summary.running_requests.as_ref().map(|d| d.max);
    assert!(most(&r) <= most(&clean), "1_000 read as a thousand running");
}
