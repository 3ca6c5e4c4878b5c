//! SVG export in the browser.
//!
//! plotters measures text for an SVG through the page's DOM in wasm32 (a
//! `<span style=…>`, refused by the page's CSP). This wrapper estimates text the
//! way plotters does natively (so the page's SVG matches the CLI's `--charts`).

use batchlens_core::charts::{self, Chart, ChartData, Theme};
use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

struct EstimatedText<B>(B);

type Res<B> = Result<(), DrawingErrorKind<<B as DrawingBackend>::ErrorType>>;

impl<B: DrawingBackend> DrawingBackend for EstimatedText<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Res<Self> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Res<Self> {
        self.0.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Res<Self> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Res<Self> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Res<Self> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Res<Self> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Res<Self> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Res<Self> {
        self.0.fill_polygon(vert, style)
    }
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Res<Self> {
        self.0.draw_text(text, style, pos)
    }
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        // plotters' native estimate (style/font/naive.rs).
        let em = style.size() / 1.24 / 1.24;
        let width = (em * 0.7 * text.len() as f64).round();
        let height = (em * 0.24).round() + em.round();
        Ok((width as u32, height as u32))
    }
}

/// `chart` as an SVG document.
pub fn svg(
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
    size: (u32, u32),
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = EstimatedText(SVGBackend::with_string(&mut out, size)).into_drawing_area();
        charts::draw(&root, data, source, chart, theme)?;
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
        for chart in Chart::ALL {
            let theme = Theme::light();
            assert_eq!(
                svg(&data, None, chart, &theme, (960, 420)).unwrap(),
                charts::svg(&data, None, chart, &theme, (960, 420)).unwrap(),
                "{chart:?}"
            );
        }
    }
}
