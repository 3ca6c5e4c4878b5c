//! SVG export in the browser.
//!
//! plotters measures text for an SVG through the page's DOM in wasm32 (a
//! `<span style=…>`, refused by the page's CSP). This wrapper estimates text the
//! way plotters does natively (so the page's SVG matches the CLI's `--charts`).

use batchlens_core::charts::{self, Chart, ChartData, Theme, View};
use plotters::prelude::*;
use plotters_backend::BackendTextStyle;

use crate::measured::{MeasureText, Measured};

/// plotters' native estimate (style/font/naive.rs).
struct NativeEstimate;

impl MeasureText for NativeEstimate {
    fn size<S: BackendTextStyle>(&self, text: &str, style: &S) -> (u32, u32) {
        let em = style.size() / 1.24 / 1.24;
        let width = (em * 0.7 * text.len() as f64).round();
        let height = (em * 0.24).round() + em.round();
        (width as u32, height as u32)
    }
}

/// `chart` as an SVG document.
pub fn svg(
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
    size: (u32, u32),
    view: &View,
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = Measured {
            inner: SVGBackend::with_string(&mut out, size),
            measure: NativeEstimate,
        }
        .into_drawing_area();
        charts::draw_view(&root, data, source, chart, theme, view)?;
        root.present()
            .map_err(|e| format!("could not draw the chart: {e}"))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_svg_equals_the_cli_svg() {
        let log = include_bytes!("../../../examples/sglang-retractions.log");
        let report = batchlens_core::analyze(log, batchlens_core::Options::default());
        let data = ChartData::from_report(&report);
        let window = View {
            range_s: Some((100.0, 900.0)),
            caption: Some("sglang-retractions.log · kv_retraction".into()),
        };
        for chart in Chart::ALL {
            let theme = Theme::light();
            for view in [View::default(), window.clone()] {
                assert_eq!(
                    svg(&data, None, chart, &theme, (960, 420), &view).unwrap(),
                    charts::svg_view(&data, None, chart, &theme, (960, 420), &view).unwrap(),
                    "{chart:?}"
                );
            }
        }
    }
}
