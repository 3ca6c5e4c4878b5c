//! A read kept for the page: another server run's report from what was read is
//! the report `--run N` gives, byte for byte, and a window of the judged run is
//! re-bucketed from its finer series.
// Tests read the bundled logs from disk (the library does no I/O).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

use batchlens_core::{analyze, Analyzer, Kept, Options, Report};

fn read(rel: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).unwrap()
}

/// Reads `log` in slices, keeping it, judging `run`.
fn kept(log: &str, run: Option<u32>) -> (Report, Kept) {
    let mut a = Analyzer::new(Options {
        run,
        keep: true,
        ..Options::default()
    });
    for piece in log.as_bytes().chunks(7919) {
        a.feed(piece);
    }
    let (r, k) = a.finish_keeping();
    (r, k.expect("kept"))
}

fn cli(log: &str, run: Option<u32>) -> String {
    json(&analyze(
        log.as_bytes(),
        Options {
            run,
            ..Options::default()
        },
    ))
}

/// Every run of `log`, from a read that judged each of `reads`, equals `--run N`.
fn every_run_equals_the_cli(name: &str, log: &str, runs: u32, reads: &[Option<u32>]) {
    for &first in reads {
        let (r, k) = kept(log, first);
        assert_eq!(
            json(&r),
            cli(log, first),
            "{name}: the read itself ({first:?})"
        );
        assert_eq!(k.runs_kept(), (1..=runs).collect::<Vec<_>>(), "{name}");
        for run in std::iter::once(None).chain((1..=runs).map(Some)) {
            let got = k
                .report(run)
                .unwrap_or_else(|| panic!("{name}: run {run:?} not kept"));
            assert_eq!(
                json(&got),
                cli(log, run),
                "{name}: run {run:?} from a read of {first:?}"
            );
        }
    }
}

#[test]
fn another_run_from_what_was_read_is_the_report_of_run_n() {
    let kv = read("examples/sglang-kv-bound.log");
    let client = read("examples/sglang-client-limited.log");
    let larger = read("examples/sglang-kv-bound-larger-pool.log");
    let bench = read("tests/fixtures/client/sglang_bench_serving_0.4.0.txt");
    // Two runs, a bigger pool after the restart (the restart check is of the last).
    every_run_equals_the_cli(
        "two runs",
        &(kv.clone() + &larger),
        2,
        &[None, Some(1), Some(2)],
    );
    // A last run too short to judge: the one before is judged unless the last is asked for.
    let short: String = client.lines().take(25).map(|l| format!("{l}\n")).collect();
    let log = kv.clone() + &short;
    assert!(analyze(log.as_bytes(), Options::default()).runs[0].analyzed);
    every_run_equals_the_cli("short last run", &log, 2, &[None, Some(2)]);
    // Three runs, a benchmark summary in the first: its client figures go with it.
    let log = kv.clone() + &bench + &client + &larger;
    let first = analyze(
        log.as_bytes(),
        Options {
            run: Some(1),
            ..Options::default()
        },
    );
    assert!(first.client.is_some());
    every_run_equals_the_cli("three runs", &log, 3, &[None, Some(2)]);
    // A crash loop of short runs.
    let head: String = client.lines().take(80).map(|l| format!("{l}\n")).collect();
    every_run_equals_the_cli("crash loop", &head.repeat(30), 30, &[None]);
}

#[test]
fn a_log_of_one_run_is_its_own_report() {
    let log = read("examples/sglang-dp-ranks.log");
    let (r, k) = kept(&log, None);
    assert_eq!(json(&r), cli(&log, None));
    assert_eq!(json(&k.report(None).unwrap()), json(&r));
    assert_eq!(k.runs_kept(), vec![1]);
}

#[test]
fn runs_the_report_would_not_list_are_read_again() {
    // Past twice the runs listed, which are listed depends on the run asked for.
    let client = read("examples/sglang-client-limited.log");
    let head: String = client.lines().take(30).map(|l| format!("{l}\n")).collect();
    let log = head.repeat(2100);
    let (r, k) = kept(&log, None);
    assert!(r.runs_not_listed > 0);
    assert!(k.report(Some(5)).is_none());
    assert_eq!(json(&k.report(None).unwrap()), json(&r));
    // Memory stays bounded whatever the number of runs.
    assert!(
        k.heap_bytes() <= batchlens_core::KEPT_BYTES + (8 << 20),
        "{}",
        k.heap_bytes()
    );
}

#[test]
fn a_window_of_the_judged_run_has_finer_buckets_than_the_report() {
    let log = read("examples/sglang-retractions.log");
    let (r, k) = kept(&log, None);
    let pts = &r.timeline.points;
    let end = pts.last().unwrap().t_s + r.timeline.bucket_seconds;
    let (t0, t1) = (end * 0.40, end * 0.45);
    let w = k.window(None, t0, t1).unwrap();
    assert!(
        w.bucket_seconds < r.timeline.bucket_seconds,
        "{} s",
        w.bucket_seconds
    );
    let inside = |t: f64| t >= t0 && t < t1;
    let before = pts.iter().filter(|p| inside(p.t_s)).count();
    let after = w.points.iter().filter(|p| inside(p.t_s)).count();
    assert!(
        after > 2 * before,
        "{after} buckets zoomed, {before} in the report"
    );
    // Every stats round in the window is in one of its buckets.
    let whole = k.window(None, 0.0, end).unwrap();
    let rounds =
        |p: &[batchlens_core::report::Point]| p.iter().map(|p| p.samples as u64).sum::<u64>();
    assert_eq!(rounds(&whole.points), rounds(pts));
    let events =
        |p: &[batchlens_core::report::Point]| p.iter().map(|p| p.retractions as u64).sum::<u64>();
    assert_eq!(events(&whole.points), events(pts));

    // Ranks: each source's window, in buckets of the combined one's width.
    let log = read("examples/sglang-dp-ranks.log");
    let (r, k) = kept(&log, None);
    let end = r.timeline.points.last().unwrap().t_s + r.timeline.bucket_seconds;
    let w = k.window(None, 0.0, end / 4.0).unwrap();
    assert_eq!(w.per_source.len(), r.timeline.per_source.len());
    assert!(w.per_source.iter().all(|s| !s.points.is_empty()));
    for s in &w.per_source {
        assert!(s
            .points
            .iter()
            .all(|p| (p.t_s / w.bucket_seconds).fract() == 0.0));
    }
}
