//! The stage order of `crates/core/src` (docs/architecture.md), checked: each
//! stage names only the stages before it and the leaves, so data flows one way.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeSet;
use std::path::Path;

/// Each top-level module of the crate and the modules it may name (`crate::X`).
/// `text` and `model` are leaves every stage may use; `report` is the serde
/// contract, which names nothing but `model`.
const ALLOWED: &[(&str, &[&str])] = &[
    ("text", &[]),
    ("model", &["text"]),
    ("report", &["model"]),
    ("input", &["text", "model", "report"]),
    ("engines", &["text", "model", "report", "input"]),
    ("timeline", &["text", "model", "report"]),
    ("analysis", &["text", "model", "report", "timeline"]),
    (
        "diagnose",
        &["text", "model", "report", "timeline", "analysis"],
    ),
    (
        "render",
        &[
            "text", "model", "report", "timeline", "analysis", "diagnose",
        ],
    ),
    (
        "pipeline",
        &[
            "text", "model", "report", "input", "engines", "timeline", "analysis", "diagnose",
            "render",
        ],
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The crate modules a file names in code (comments left out), `crate::X`. A file's
/// unit tests (from its `#[cfg(test)]` on) may build a report through the pipeline:
/// they are not part of the data flow.
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines().take_while(|l| l.trim() != "#[cfg(test)]") {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let tail = &rest[i + "crate::".len()..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
            rest = tail;
        }
    }
    out
}

fn violations() -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let Some(stage) = rel.components().next().and_then(|c| c.as_os_str().to_str()) else {
            continue;
        };
        if rel.components().count() == 1 {
            // lib.rs: the public face, which re-exports from every stage.
            continue;
        }
        let allowed = ALLOWED
            .iter()
            .find(|(s, _)| *s == stage)
            .unwrap_or_else(|| {
                panic!("{stage}/ is not a known stage: add it to ALLOWED and docs/architecture.md")
            })
            .1;
        let text = std::fs::read_to_string(&f).unwrap();
        for m in named_modules(&text) {
            if m != stage && !allowed.contains(&m.as_str()) {
                bad.push(format!("{} names crate::{m}", rel.display()));
            }
        }
    }
    bad
}

#[test]
fn stages_import_only_stages_before_them() {
    let bad = violations();
    assert!(
        bad.is_empty(),
        "imports against the data flow:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_sees_an_import_in_code_but_not_in_a_comment() {
    let named = named_modules(
        "use crate::engines::Engine;\n// see crate::render\nlet x = crate::text::num::num(1.0);",
    );
    assert_eq!(named.into_iter().collect::<Vec<_>>(), ["engines", "text"]);
}
