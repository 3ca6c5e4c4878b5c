//! The glue in a real browser (headless Chromium via wasm-bindgen-test-runner).
#![cfg(target_arch = "wasm32")]

use batchlens_web::{analyze, Charts, Session};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

wasm_bindgen_test_configure!(run_in_browser);

const FIXTURE: &[u8] = include_bytes!(
    "../../../tests/fixtures/sglang/sglang_23_deepseek-v3-kv-full-decode-oom-retract.log"
);

#[wasm_bindgen_test]
fn feeding_in_slices_gives_the_same_json_as_one_slice() {
    let whole = analyze(FIXTURE).unwrap();
    for size in [1, 7, 64, 1000] {
        let mut s = Session::new();
        for chunk in FIXTURE.chunks(size) {
            s.feed(chunk).unwrap();
        }
        assert_eq!(s.bytes_read(), FIXTURE.len() as f64);
        assert_eq!(s.finish().unwrap(), whole, "slices of {size} bytes");
    }
    assert!(whole.contains("\"engine\": \"sglang\""));
    assert!(whole.ends_with("}\n"));
}

fn canvas(id: &str) -> HtmlCanvasElement {
    let doc = web_sys::window().unwrap().document().unwrap();
    let c: HtmlCanvasElement = doc.create_element("canvas").unwrap().dyn_into().unwrap();
    c.set_id(id);
    c.set_width(480);
    c.set_height(240);
    doc.body().unwrap().append_child(&c).unwrap();
    c
}

/// Pixels that differ from the top-left (background) pixel.
fn drawn_pixels(c: &HtmlCanvasElement) -> usize {
    let ctx: CanvasRenderingContext2d = c.get_context("2d").unwrap().unwrap().dyn_into().unwrap();
    let data = ctx
        .get_image_data(0.0, 0.0, c.width() as f64, c.height() as f64)
        .unwrap()
        .data();
    let bg = &data[0..4];
    data.chunks(4).filter(|px| *px != bg).count()
}

#[wasm_bindgen_test]
fn every_chart_draws_pixels_on_a_canvas() {
    let json = analyze(FIXTURE).unwrap();
    let charts = Charts::new(&json).unwrap();
    for (i, name) in ["throughput", "concurrency", "kv_usage", "prefill"]
        .iter()
        .enumerate()
    {
        let c = canvas(&format!("chart-{i}"));
        charts.draw(c.clone(), name, i % 2 == 1, None, 1.0).unwrap();
        let n = drawn_pixels(&c);
        assert!(n > 2000, "{name}: only {n} pixels drawn");
        assert!(!charts.describe(name, None).unwrap().is_empty());
    }
    assert!(charts.draw(canvas("bad"), "pie", false, None, 1.0).is_err());
}

#[wasm_bindgen_test]
fn session_draws_on_a_canvas_by_id() {
    let c = canvas("by-id");
    let mut s = Session::new();
    s.feed(FIXTURE).unwrap();
    s.finish().unwrap();
    s.draw("by-id", "throughput", false).unwrap();
    assert!(drawn_pixels(&c) > 2000);
    assert!(s.markdown().unwrap().contains('#'));
}

#[wasm_bindgen_test]
fn another_run_and_a_window_come_from_what_was_read() {
    let mut log = include_bytes!("../../../examples/sglang-kv-bound.log").to_vec();
    log.extend_from_slice(include_bytes!(
        "../../../examples/sglang-kv-bound-larger-pool.log"
    ));
    let mut s = Session::new();
    s.feed(&log).unwrap();
    let last = s.finish().unwrap();
    let first = s.judge(1).unwrap().unwrap();
    assert_ne!(first, last);
    assert!(first.contains("\"analyzed\": true"));
    assert_eq!(s.judge(2).unwrap().unwrap(), last);
    let mut charts = Charts::new(&last).unwrap();
    let coarse = charts.bucket_seconds();
    let end = coarse * 512.0;
    let before = charts.buckets_in(None, end * 0.1, end * 0.2);
    charts
        .zoom(&s.window(end * 0.1, end * 0.2).unwrap())
        .unwrap();
    assert!(charts.bucket_seconds() < coarse);
    assert!(charts.buckets_in(None, end * 0.1, end * 0.2) > before);
    let c = canvas("zoomed");
    charts
        .draw_window(
            c.clone(),
            "concurrency",
            false,
            None,
            1.0,
            Some(end * 0.1),
            Some(end * 0.2),
            None,
        )
        .unwrap();
    assert!(drawn_pixels(&c) > 1000);
}
