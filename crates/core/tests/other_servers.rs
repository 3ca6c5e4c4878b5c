//! Logs of other inference servers (real pastes in tests/fixtures/other) are
//! named for the server that wrote them; SGLang and vLLM logs, and logs of
//! other programs, are not taken for one.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

mod common;

use std::path::Path;

use batchlens_core::report::Kind;

/// The server a fixture's file name says wrote it.
fn server_of(name: &str) -> &'static str {
    let prefixes = [
        ("llamabox_", "llama-box"),
        ("llamacpp_", "llama.cpp"),
        ("lmdeploy_", "LMDeploy"),
        ("ollama_", "Ollama"),
        ("other_01_vllm-rs", "vllm.rs"),
        ("tei_", "TEI"),
        ("tgi_", "TGI"),
        ("trtllm_", "TensorRT-LLM"),
    ];
    prefixes
        .iter()
        .find(|(p, _)| name.starts_with(p))
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("{name}: which server wrote it?"))
}

#[test]
fn every_other_servers_log_is_named_for_its_server() {
    let logs = common::fixtures_in("other");
    assert!(logs.len() >= 12, "{} logs", logs.len());
    for (name, bytes) in logs {
        let r = common::analyze(&bytes);
        assert_eq!(r.input.stat_lines, 0, "{name}");
        let o = r
            .input
            .other_server
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: no server named"));
        assert_eq!(o.name, server_of(&name), "{name}");
        assert!(o.lines >= 1 && o.first_line >= 1, "{name}: {o:?}");
        assert!(
            !o.text.is_empty() && o.note.contains(&o.name),
            "{name}: {o:?}"
        );
        // The verdict says so, and points at the line.
        let d = r.diagnosis.as_ref().unwrap();
        assert_eq!(d.primary.kind, Kind::InsufficientData);
        assert!(
            d.primary.headline.contains(&format!("{} log", o.a_name)),
            "{name}: {}",
            d.primary.headline
        );
        assert_eq!(d.primary.evidence[0].lines, vec![o.first_line], "{name}");
    }
}

#[test]
fn sglang_vllm_and_other_programs_logs_name_no_other_server() {
    let mut logs = Vec::new();
    for folder in ["sglang", "vllm", "hostile"] {
        // Inputs `cargo fuzz` found are arbitrary mixes of servers' phrases.
        logs.extend(
            common::fixtures_in(folder)
                .into_iter()
                .filter(|(name, _)| !name.starts_with("fuzz-")),
        );
    }
    logs.extend(common::example_logs());
    assert!(logs.len() > 60);
    for (name, bytes) in logs {
        let r = common::analyze(&bytes);
        assert_eq!(r.input.other_server, None, "{name}");
    }
}

#[test]
fn a_server_log_joined_after_a_long_sglang_log_is_still_named() {
    // Only the first lines no engine parser claims are looked at: an SGLang
    // log's access lines come first, a TGI log after them. Both are reported:
    // the SGLang run is judged, and the TGI lines are named.
    let mut log = Vec::new();
    let kv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sglang-kv-bound.log");
    log.extend(std::fs::read(kv).unwrap());
    log.extend(common::fixture(
        "other/tgi_01_xpu-connected-chat-completions-success.log",
    ));
    let r = common::analyze(&log);
    assert!(r.input.stat_lines > 100);
    assert_eq!(
        r.input.other_server.as_ref().map(|o| o.name.as_str()),
        Some("TGI")
    );
    let text = batchlens_core::render::text(&r, false);
    assert!(
        text.contains("2 lines of a TGI server, the first at line"),
        "{text}"
    );
    assert_ne!(r.diagnosis.unwrap().primary.kind, Kind::InsufficientData);
}

#[test]
fn labelled_lines_of_another_server_name_it_too() {
    // Access lines are labelled before anything else reads them (and most of
    // a log's first lines are access lines): with Docker Compose's service
    // prefix they still count toward naming the server, read ahead or line by
    // line alike.
    let mut log = String::new();
    for i in 0..6 {
        log.push_str(&format!(
            "ollama  | INFO:     172.18.0.1:{} - \"GET /api/tags HTTP/1.1\" 200 OK\n",
            51000 + i
        ));
    }
    let r = common::analyze(log.as_bytes());
    assert_eq!(r.input.other_lines_by_kind.get("access_log"), Some(&6));
    let o = r.input.other_server.as_ref().expect("a server named");
    assert_eq!((o.name.as_str(), o.lines, o.first_line), ("Ollama", 6, 1));
    let reference = common::analyze_line_by_line(log.as_bytes(), Default::default());
    assert_eq!(reference.input.other_server, r.input.other_server);
}
