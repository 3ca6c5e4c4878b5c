//! Every fixture under `tests/fixtures/` has a reviewed snapshot of what batchlens makes of it.
//!
//! - Server logs of every engine folder, other servers' logs and the hostile inputs (images,
//!   archives, a fuzz crash: any bytes a user may hand over) give their JSON report, as
//!   `batchlens diagnose FILE --format json` prints it.
//! - Client benchmark summaries (`client/`) are not server logs: they enter through `--client`,
//!   so their snapshot is the figures read from them.
//! - Notes and the scripts that write synthetic fixtures (`.md`, `.py`) are not inputs.
//!
//! A fixture without a snapshot fails here (under `CI=true` nothing is written; locally insta
//! leaves a `.snap.new` to review), and so does a snapshot whose fixture is gone. Accept reviewed
//! snapshots with `INSTA_UPDATE=always` or `cargo insta review`.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use batchlens_core::client::parse_client_file;
use batchlens_core::{analyze, Options};

/// File endings of fixture notes and generators, which no front end reads.
const NOT_INPUTS: &[&str] = &["md", "py"];

/// This file's snapshots are named `fixture_snapshots__<name>.snap`.
const PREFIX: &str = "fixture_snapshots__";

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn snapshots_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// Every file under `dir`, sorted, as paths relative to `root`.
fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path()
        })
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(root, &p, out);
        } else {
            out.push(p.strip_prefix(root).unwrap().to_path_buf());
        }
    }
}

/// The fixture inputs, relative to the fixtures folder.
fn inputs() -> Vec<PathBuf> {
    let root = fixtures_dir();
    let mut all = Vec::new();
    walk(&root, &root, &mut all);
    all.retain(|p| {
        let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
        !NOT_INPUTS.contains(&ext)
    });
    all
}

/// The snapshot's name: the path with `/` as `__`, and without `.log` (other endings stay:
/// `hostile/tiny.png` and `hostile/tiny.zip` differ only there).
fn snapshot_name(rel: &Path) -> String {
    let s = rel.to_string_lossy().replace(['/', '\\'], "__");
    s.strip_suffix(".log").map(str::to_owned).unwrap_or(s)
}

fn is_client_summary(rel: &Path) -> bool {
    rel.components()
        .next()
        .is_some_and(|c| c.as_os_str() == "client")
}

fn check(rel: &Path) {
    let bytes = std::fs::read(fixtures_dir().join(rel))
        .unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
    let mut settings = insta::Settings::clone_current();
    settings.set_description(format!("tests/fixtures/{}", rel.display()));
    settings.set_omit_expression(true);
    let name = snapshot_name(rel);
    settings.bind(|| {
        if is_client_summary(rel) {
            let figures = parse_client_file(&bytes)
                .unwrap_or_else(|e| panic!("{}: not a client summary: {e}", rel.display()));
            insta::assert_json_snapshot!(name, figures);
        } else {
            insta::assert_json_snapshot!(name, analyze(&bytes, Options::default()));
        }
    });
}

#[test]
fn every_fixture_matches_its_reviewed_snapshot() {
    let inputs = inputs();
    for folder in [
        "sglang", "vllm", "lmdeploy", "trtllm", "other", "hostile", "client",
    ] {
        assert!(
            inputs.iter().any(|p| p.starts_with(folder)),
            "no fixture in tests/fixtures/{folder}"
        );
    }
    let failed: Vec<String> = inputs
        .iter()
        .filter(|rel| catch_unwind(AssertUnwindSafe(|| check(rel))).is_err())
        .map(|rel| rel.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} fixtures do not match their snapshot: {failed:#?}",
        failed.len(),
        inputs.len()
    );
}

#[test]
fn every_snapshot_has_its_fixture() {
    let names: Vec<String> = inputs().iter().map(|p| snapshot_name(p)).collect();
    let stale: Vec<String> = std::fs::read_dir(snapshots_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| {
            let name = f.strip_prefix(PREFIX)?.strip_suffix(".snap")?.to_owned();
            (!names.contains(&name)).then_some(f)
        })
        .collect();
    assert!(stale.is_empty(), "snapshots without a fixture: {stale:#?}");
}
