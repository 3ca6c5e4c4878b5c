//! plotters' canvas backend, with text measured by the canvas itself
//! (`CanvasRenderingContext2d.measureText`; see [`crate::measured`]).

use plotters_backend::BackendTextStyle;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::measured::{MeasureText, Measured};

pub struct CanvasText(CanvasRenderingContext2d);

pub type MeasuredCanvas = Measured<CanvasBackend, CanvasText>;

pub fn measured_canvas(canvas: HtmlCanvasElement) -> Option<MeasuredCanvas> {
    let context = canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()?;
    let inner = CanvasBackend::with_canvas_object(canvas)?;
    Some(Measured {
        inner,
        measure: CanvasText(context),
    })
}

impl MeasureText for CanvasText {
    fn size<S: BackendTextStyle>(&self, text: &str, style: &S) -> (u32, u32) {
        self.0.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            style.size(),
            style.family().as_str(),
        ));
        let width = self
            .0
            .measure_text(text)
            .map(|m| m.width())
            .unwrap_or(style.size() * 0.6 * text.len() as f64);
        (width.ceil() as u32, (style.size() * 1.15).ceil() as u32)
    }
}
