//! batchlens in the browser: thin wasm-bindgen glue over `batchlens-core`.
//!
//! No analysis logic lives here. [`Session`] hands byte slices to the core's
//! streaming `Analyzer` and returns the report as the same JSON the CLI prints
//! (`batchlens diagnose FILE --format json`), inflating gzip files as they
//! arrive; [`Charts`] draws the report's
//! charts on canvases (or as SVG) from that JSON.

mod canvas;
mod compare;
mod formats;
mod input;
mod measured;
mod roofline;
mod svg;

use batchlens_core::charts::{self, Chart, ChartData, Frame, ReportView, Theme, View};
use batchlens_core::{render, Analyzer, Options, Report};
use plotters::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

/// The JSON report exactly as the CLI prints it: pretty, with a final newline.
pub fn report_json(report: &Report) -> Result<String, String> {
    let mut s = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    s.push('\n');
    Ok(s)
}

fn chart_by_name(name: &str) -> Result<Chart, JsError> {
    Chart::from_name(name).ok_or_else(|| {
        JsError::new(&format!(
            "unknown chart '{name}' (known: throughput, concurrency, kv_usage, prefill)"
        ))
    })
}

fn theme(dark: bool, scale: f64) -> Theme {
    Theme {
        dark,
        scale: if scale.is_finite() && scale > 0.0 {
            scale.clamp(0.5, 4.0)
        } else {
            1.0
        },
    }
}

fn draw_on(
    canvas: HtmlCanvasElement,
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
    view: &View,
) -> Result<Frame, JsError> {
    let backend = canvas::measured_canvas(canvas)
        .ok_or_else(|| JsError::new("the canvas has no 2D context"))?;
    let root = backend.into_drawing_area();
    charts::draw_view(&root, data, source, chart, theme, view).map_err(|e| JsError::new(&e))
}

/// A window of time from the page: both ends finite and in order, else all of it.
fn view(t0: Option<f64>, t1: Option<f64>, caption: Option<String>) -> View {
    View {
        range_s: t0
            .zip(t1)
            .filter(|(a, b)| a.is_finite() && b.is_finite() && b > a),
        caption: caption.filter(|c| !c.is_empty()),
    }
}

fn canvas_by_id(id: &str) -> Result<HtmlCanvasElement, JsError> {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .ok_or_else(|| JsError::new(&format!("no element with id '{id}'")))?
        .dyn_into::<HtmlCanvasElement>()
        .map_err(|_| JsError::new(&format!("element '{id}' is not a canvas")))
}

/// One log being read: feed byte slices in order, then `finish()`. A log that
/// starts with the gzip magic bytes is inflated as it is fed, as the CLI does.
#[wasm_bindgen]
pub struct Session {
    input: Option<input::Input>,
    report: Option<Report>,
    gzip: bool,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

#[wasm_bindgen]
impl Session {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Session {
        Session::judging(None)
    }

    /// A session that judges server run `run` (1 = the first) of a log with
    /// restarts, instead of the last (the CLI's `--run`).
    pub fn judging(run: Option<u32>) -> Session {
        Session {
            input: Some(input::Input::new(Analyzer::new(Options {
                run: run.filter(|&r| r >= 1),
                ..Options::default()
            }))),
            report: None,
            gzip: false,
        }
    }

    /// Reads the next slice of the file (any size; lines may span slices). Fails
    /// when a gzip file is damaged; `finish()` then reports what was read before.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), JsError> {
        let input = self
            .input
            .as_mut()
            .ok_or_else(|| JsError::new("feed() after finish()"))?;
        let fed = input.feed(chunk);
        self.gzip |= input.is_gzip();
        fed.map_err(|e| JsError::new(&e))
    }

    /// Ends the current file and starts the next: several files are read in order
    /// as one log, as the CLI reads them (each may be gzip). Fails when the file
    /// that ends was gzip cut short or damaged.
    pub fn next_file(&mut self) -> Result<(), JsError> {
        let input = self
            .input
            .take()
            .ok_or_else(|| JsError::new("next_file() after finish()"))?;
        let (next, cut) = input.next();
        self.input = Some(next);
        match cut {
            Some(e) => Err(JsError::new(&e)),
            None => Ok(()),
        }
    }

    /// Log bytes read so far (inflated ones for a gzip file).
    pub fn bytes_read(&self) -> f64 {
        match (&self.input, &self.report) {
            (Some(i), _) => i.log_bytes() as f64,
            (None, Some(r)) => r.input.bytes as f64,
            _ => 0.0,
        }
    }

    /// Whether a file read so far is gzip (known after its first two bytes).
    pub fn gzip(&self) -> bool {
        self.gzip
    }

    /// Physical lines read so far.
    pub fn lines_read(&self) -> f64 {
        match (&self.input, &self.report) {
            (Some(i), _) => i.lines() as f64,
            (None, Some(r)) => r.input.lines as f64,
            _ => 0.0,
        }
    }

    /// Ends the log and returns the JSON report (byte for byte the CLI's `--format json`).
    /// A gzip file that ends part-way gives an error; calling it again returns the
    /// report of what was read, as does every later call.
    pub fn finish(&mut self) -> Result<String, JsError> {
        if let Some(i) = self.input.take() {
            let (report, cut) = i.finish();
            self.report = Some(report);
            if let Some(e) = cut {
                return Err(JsError::new(&e));
            }
        }
        report_json(self.report()?).map_err(|e| JsError::new(&e))
    }

    /// The Markdown report (after `finish()`).
    pub fn markdown(&self) -> Result<String, JsError> {
        Ok(render::markdown(self.report()?))
    }

    /// The plain-text report, as the CLI prints it without colour (after `finish()`).
    pub fn text(&self) -> Result<String, JsError> {
        Ok(render::text(self.report()?, false))
    }

    /// Predicted effect of configuration changes (after `finish()`): `changes` is a
    /// comma-separated list of `name=value` (`kv_scale=1.5,client_concurrency=80`; names as
    /// the CLI's `--what-if`). Returns the `what_if` JSON object, or `null` when the log has
    /// nothing to fit the model to.
    pub fn what_if(&self, changes: &str) -> Result<String, JsError> {
        let w = self.predict(changes)?;
        serde_json::to_string(&w).map_err(|e| JsError::new(&e.to_string()))
    }

    fn predict(&self, changes: &str) -> Result<Option<batchlens_core::whatif::WhatIf>, JsError> {
        let parsed = changes
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(batchlens_core::whatif::parse_change)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| JsError::new(&e))?;
        Ok(batchlens_core::whatif::predict(self.report()?, &parsed))
    }

    /// Why the log could not be judged, in the words the CLI uses (after `finish()`):
    /// `name` is the file's name, `files` how many were read; empty when there is a verdict.
    pub fn problem(&self, name: &str, files: u32) -> Result<String, JsError> {
        let what = match files {
            0 | 1 => format!("'{name}'"),
            n => format!("{n} files"),
        };
        let file = (files <= 1).then_some(name);
        Ok(
            render::input_problem(self.report()?, &what, file, None, render::Front::Page)
                .unwrap_or_default(),
        )
    }

    /// A what-if prediction (the JSON `what_if()` returns) in one sentence, as the CLI prints it.
    pub fn what_if_sentence(&self, changes: &str) -> Result<String, JsError> {
        let w: Option<batchlens_core::whatif::WhatIf> = self.predict(changes)?;
        Ok(w.as_ref().map(render::what_if_sentence).unwrap_or_default())
    }

    /// The flag that sets a what-if parameter to `value` on this server (after
    /// `finish()`): `max_running`, 48 → `--max-running-requests 48`; empty where no
    /// server flag sets it (the client's concurrency) or the log cannot say.
    pub fn setting_flag(&self, parameter: &str, value: f64) -> Result<String, JsError> {
        Ok(batchlens_core::setting_flag(self.report()?, parameter, value).unwrap_or_default())
    }

    /// Draws one chart (`throughput`, `concurrency`, `kv_usage`, `prefill`) on the canvas with this id.
    pub fn draw(&self, canvas_id: &str, chart: &str, dark: bool) -> Result<(), JsError> {
        let data = ChartData::from_report(self.report()?);
        draw_on(
            canvas_by_id(canvas_id)?,
            &data,
            None,
            chart_by_name(chart)?,
            &theme(dark, 1.0),
            &View::default(),
        )
        .map(|_| ())
    }

    fn report(&self) -> Result<&Report, JsError> {
        self.report
            .as_ref()
            .ok_or_else(|| JsError::new("call finish() first"))
    }
}

/// Reads a whole log at once and returns the JSON report.
#[wasm_bindgen]
pub fn analyze(bytes: &[u8]) -> Result<String, JsError> {
    let mut s = Session::new();
    s.feed(bytes)?;
    s.finish()
}

/// The charts of a JSON report (as returned by `Session.finish()`).
#[wasm_bindgen]
pub struct Charts {
    data: ChartData,
}

#[wasm_bindgen]
impl Charts {
    #[wasm_bindgen(constructor)]
    pub fn new(report_json: &str) -> Result<Charts, JsError> {
        let view: ReportView = serde_json::from_str(report_json)
            .map_err(|e| JsError::new(&format!("not a batchlens JSON report: {e}")))?;
        Ok(Charts { data: view.into() })
    }

    /// Names of the sources (ranks / engines) with their own series.
    pub fn sources(&self) -> Vec<String> {
        self.data.source_names()
    }

    /// Draws `chart` on `canvas`, at its current pixel size. `source`: a name from
    /// `sources()`, or null/"" for all combined. `scale`: multiplies fonts and margins
    /// (use `devicePixelRatio`).
    pub fn draw(
        &self,
        canvas: HtmlCanvasElement,
        chart: &str,
        dark: bool,
        source: Option<String>,
        scale: f64,
    ) -> Result<(), JsError> {
        draw_on(
            canvas,
            &self.data,
            source.as_deref().filter(|s| !s.is_empty()),
            chart_by_name(chart)?,
            &theme(dark, scale),
            &View::default(),
        )
        .map(|_| ())
    }

    /// [`Charts::draw`] over the window `t0..t1` (seconds from the first stats line;
    /// null: all of it), with an optional caption under the title. Returns where the
    /// plot was drawn, `[left, top, right, bottom, t0, t1, y_top]` (pixels, then the
    /// data range), for the page to map the pointer to a time and a value.
    #[allow(clippy::too_many_arguments)]
    pub fn draw_window(
        &self,
        canvas: HtmlCanvasElement,
        chart: &str,
        dark: bool,
        source: Option<String>,
        scale: f64,
        t0: Option<f64>,
        t1: Option<f64>,
        caption: Option<String>,
    ) -> Result<Vec<f64>, JsError> {
        let f = draw_on(
            canvas,
            &self.data,
            source.as_deref().filter(|s| !s.is_empty()),
            chart_by_name(chart)?,
            &theme(dark, scale),
            &view(t0, t1, caption),
        )?;
        Ok(vec![
            f64::from(f.left),
            f64::from(f.top),
            f64::from(f.right),
            f64::from(f.bottom),
            f.t0,
            f.t1,
            f.y_top,
        ])
    }

    /// The engine's word for the events the KV chart counts (`retractions`, `preemptions`).
    pub fn events_word(&self) -> String {
        self.data.events_word()
    }

    /// The key figures of `chart` in words (for `aria-label` / `figcaption`).
    pub fn describe(&self, chart: &str, source: Option<String>) -> Result<String, JsError> {
        Ok(charts::describe(
            &self.data,
            source.as_deref().filter(|s| !s.is_empty()),
            chart_by_name(chart)?,
        ))
    }

    /// `chart` as an SVG document.
    pub fn svg(
        &self,
        chart: &str,
        dark: bool,
        source: Option<String>,
        width: u32,
        height: u32,
    ) -> Result<String, JsError> {
        self.svg_window(chart, dark, source, width, height, None, None, None)
    }

    /// `chart` over the window `t0..t1` as an SVG document, with a caption
    /// (the page names the file, the verdict and the window).
    #[allow(clippy::too_many_arguments)]
    pub fn svg_window(
        &self,
        chart: &str,
        dark: bool,
        source: Option<String>,
        width: u32,
        height: u32,
        t0: Option<f64>,
        t1: Option<f64>,
        caption: Option<String>,
    ) -> Result<String, JsError> {
        svg::svg(
            &self.data,
            source.as_deref().filter(|s| !s.is_empty()),
            chart_by_name(chart)?,
            &theme(dark, 1.0),
            (width.clamp(100, 4000), height.clamp(100, 4000)),
            &view(t0, t1, caption),
        )
        .map_err(|e| JsError::new(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &[u8] = b"[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, #token: 81290, token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 94\n";

    #[test]
    fn json_matches_the_cli_format() {
        let report = batchlens_core::analyze(LOG, Options::default());
        let mut expected = serde_json::to_string_pretty(&report).unwrap();
        expected.push('\n');
        let mut s = Session::new();
        s.feed(&LOG[..40]).unwrap();
        s.feed(&LOG[40..]).unwrap();
        assert_eq!(s.finish().unwrap(), expected);
        assert_eq!(s.bytes_read(), LOG.len() as f64);
    }

    #[test]
    fn what_if_predicts_from_the_finished_report() {
        let log = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/sglang-kv-bound.log"
        ))
        .unwrap();
        let mut s = Session::new();
        s.feed(&log).unwrap();
        s.finish().unwrap();
        let base: serde_json::Value = serde_json::from_str(&s.what_if("").unwrap()).unwrap();
        let more: serde_json::Value =
            serde_json::from_str(&s.what_if("kv_scale=2").unwrap()).unwrap();
        let tok = |v: &serde_json::Value| v["predicted"]["gen_throughput_tok_s"].as_f64().unwrap();
        assert!(tok(&more) > tok(&base) * 1.2, "{more} vs {base}");
        assert_eq!(more["changes"][0]["parameter"], "kv_scale");
    }
}
