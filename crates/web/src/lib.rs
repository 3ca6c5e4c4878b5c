//! batchlens in the browser: thin wasm-bindgen glue over `batchlens-core`.
//!
//! No analysis logic lives here. [`Session`] hands byte slices to the core's
//! streaming `Analyzer` and returns the report as the same JSON the CLI prints
//! (`batchlens diagnose FILE --format json`), inflating gzip files as they
//! arrive, and keeps what it read (bounded: `batchlens_core::Kept`) so another
//! server run is judged, and a window of the charts re-bucketed, without
//! reading the file again; [`Charts`] draws the report's charts on canvases (or
//! as SVG) from that JSON, or from such a window.

mod canvas;
mod compare;
mod formats;
mod input;
mod measured;
mod roofline;
mod svg;

use batchlens_core::charts::{
    self, Chart, ChartData, Frame, ReportView, Theme, TimelineView, View,
};
use batchlens_core::{render, Analyzer, Kept, Options, Report};
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
    /// What the read kept, after `finish()`.
    kept: Option<Kept>,
    /// The run the report judges as asked (the CLI's `--run`; `None`: as the CLI without it).
    run: Option<u32>,
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
        Session::reading(Options {
            run: run.filter(|&r| r >= 1),
            ..Options::default()
        })
    }

    /// The report of server run `run` (1 = the first) of what was read, after
    /// `finish()`: the JSON `--run run` gives, without reading the file again, and
    /// the session's report from then on. `None` when that run was let go for
    /// memory (`runs_kept()` lists those kept): read the file again to judge it.
    pub fn judge(&mut self, run: u32) -> Result<Option<String>, JsError> {
        let kept = self
            .kept
            .as_ref()
            .ok_or_else(|| JsError::new("call finish() first"))?;
        let Some(report) = kept.report(Some(run)) else {
            return Ok(None);
        };
        let json = report_json(&report).map_err(|e| JsError::new(&e))?;
        self.report = Some(report);
        self.run = Some(run);
        Ok(Some(json))
    }

    /// The judged run's series over `t0..t1` (seconds from its first stats line),
    /// re-bucketed from the finer series kept, at chart resolution: JSON of the
    /// report's `timeline` shape (`bucket_seconds`, `points`, `per_source`), for
    /// [`Charts::zoom`]. After `finish()`.
    pub fn window(&self, t0: f64, t1: f64) -> Result<String, JsError> {
        let w = self
            .kept
            .as_ref()
            .and_then(|k| k.window(self.run, t0, t1))
            .ok_or_else(|| JsError::new("nothing kept to zoom into: call finish() first"))?;
        serde_json::to_string(&w).map_err(|e| JsError::new(&e.to_string()))
    }

    /// The server runs (1-based) `judge()` gives without reading again.
    pub fn runs_kept(&self) -> Vec<u32> {
        self.kept.as_ref().map(Kept::runs_kept).unwrap_or_default()
    }

    /// Runs let go for memory (the oldest, past `batchlens_core::KEPT_BYTES`).
    pub fn runs_let_go(&self) -> u32 {
        self.kept.as_ref().map_or(0, Kept::runs_let_go)
    }
}

impl Session {
    /// A session reading with `opts`, keeping what it reads.
    fn reading(opts: Options) -> Session {
        Session {
            run: opts.run,
            input: Some(input::Input::new(Analyzer::new(Options {
                keep: true,
                ..opts
            }))),
            report: None,
            gzip: false,
            kept: None,
        }
    }
}

#[wasm_bindgen]
impl Session {
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
            let (report, kept, cut) = i.finish_keeping();
            self.report = Some(report);
            self.kept = kept;
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
    /// nothing to fit the model to or its verdict is `stalled` (no what-if is offered).
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
    /// The report's own series while a window is shown ([`Charts::zoom`]).
    full: Option<ChartData>,
}

#[wasm_bindgen]
impl Charts {
    #[wasm_bindgen(constructor)]
    pub fn new(report_json: &str) -> Result<Charts, JsError> {
        let view: ReportView = serde_json::from_str(report_json)
            .map_err(|e| JsError::new(&format!("not a batchlens JSON report: {e}")))?;
        Ok(Charts {
            data: view.into(),
            full: None,
        })
    }

    /// Draws from then on the series of a window (the JSON `Session.window()`
    /// returns) instead of the report's, until `unzoom()`.
    pub fn zoom(&mut self, window_json: &str) -> Result<(), JsError> {
        let t: TimelineView = serde_json::from_str(window_json)
            .map_err(|e| JsError::new(&format!("not a timeline window: {e}")))?;
        let full = self.full.get_or_insert_with(|| self.data.clone());
        let mut data = full.clone();
        data.set_timeline(t);
        self.data = data;
        Ok(())
    }

    /// The report's own series again.
    pub fn unzoom(&mut self) {
        if let Some(full) = self.full.take() {
            self.data = full;
        }
    }

    /// The width of the buckets drawn, seconds (finer while zoomed).
    pub fn bucket_seconds(&self) -> f64 {
        self.data.bucket_seconds
    }

    /// Buckets with data in `t0..t1` of the series drawn (`source` as for `draw`).
    pub fn buckets_in(&self, source: Option<String>, t0: f64, t1: f64) -> u32 {
        self.data
            .series(source.as_deref().filter(|s| !s.is_empty()))
            .iter()
            .filter(|p| p.t_s >= t0 && p.t_s < t1)
            .count() as u32
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

    fn example(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../../examples/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn another_run_is_judged_from_what_was_read_as_the_cli_judges_it() {
        let mut log = example("sglang-kv-bound.log");
        log.extend(example("sglang-kv-bound-larger-pool.log"));
        let mut s = Session::new();
        s.feed(&log).unwrap();
        let last = s.finish().unwrap();
        let run1 = batchlens_core::analyze(
            &log,
            Options {
                run: Some(1),
                ..Options::default()
            },
        );
        assert_eq!(s.judge(1).unwrap().unwrap(), report_json(&run1).unwrap());
        // The session's report is now run 1's; run 2 is the last again.
        assert_eq!(s.markdown().unwrap(), render::markdown(&run1));
        assert_eq!(s.judge(2).unwrap().unwrap(), last);
        assert_eq!(s.runs_kept(), vec![1, 2]);
    }

    #[test]
    fn a_window_is_drawn_from_finer_buckets_and_unzoomed_back() {
        let mut s = Session::new();
        s.feed(&example("sglang-retractions.log")).unwrap();
        let json = s.finish().unwrap();
        let mut charts = Charts::new(&json).unwrap();
        let coarse = charts.bucket_seconds();
        let end = coarse * 512.0;
        let all = charts.buckets_in(None, 0.0, end);
        let before = charts.buckets_in(None, end * 0.2, end * 0.3);
        charts
            .zoom(&s.window(end * 0.2, end * 0.3).unwrap())
            .unwrap();
        assert!(charts.bucket_seconds() < coarse);
        let after = charts.buckets_in(None, end * 0.2, end * 0.3);
        assert!(after > before, "{after} buckets zoomed, {before} before");
        charts.unzoom();
        assert_eq!(
            (charts.bucket_seconds(), charts.buckets_in(None, 0.0, end)),
            (coarse, all)
        );
    }
}
