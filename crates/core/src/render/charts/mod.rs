//! Charts of a report, drawn with plotters on any backend: SVG in the CLI
//! (`--charts DIR`), a canvas in the page.
//!
//! Only the generic "sans-serif" family is used, so text renders the same way in
//! SVG and on a canvas without font files.

mod data;
mod describe;

pub use data::{ChartData, ChartPoint, ReportView};
pub use describe::describe;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::report::Report;

/// The four charts of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// Generation throughput over time.
    Throughput,
    /// Running versus queued requests (with the running-request cap when known).
    Concurrency,
    /// KV cache usage over time, retractions marked.
    KvUsage,
    /// Input (prefill) throughput over time.
    Prefill,
}

impl Chart {
    pub const ALL: [Chart; 4] = [
        Chart::Throughput,
        Chart::Concurrency,
        Chart::KvUsage,
        Chart::Prefill,
    ];

    /// File stem and the name the page uses.
    pub fn name(self) -> &'static str {
        match self {
            Chart::Throughput => "throughput",
            Chart::Concurrency => "concurrency",
            Chart::KvUsage => "kv_usage",
            Chart::Prefill => "prefill",
        }
    }

    pub fn from_name(s: &str) -> Option<Chart> {
        Chart::ALL.into_iter().find(|c| c.name() == s)
    }

    pub fn title(self) -> &'static str {
        match self {
            Chart::Throughput => "Generation throughput (tokens/s)",
            Chart::Concurrency => "Running vs queued requests",
            Chart::KvUsage => "KV cache usage (%)",
            Chart::Prefill => "Input (prefill) throughput (tokens/s)",
        }
    }
}

/// Colours and sizes. `scale` multiplies font sizes and margins (device pixel ratio on a canvas).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    pub dark: bool,
    pub scale: f64,
}

impl Theme {
    pub fn light() -> Theme {
        Theme {
            dark: false,
            scale: 1.0,
        }
    }
    pub fn dark() -> Theme {
        Theme {
            dark: true,
            scale: 1.0,
        }
    }
    pub fn background(&self) -> RGBColor {
        if self.dark {
            RGBColor(0x16, 0x18, 0x1d)
        } else {
            RGBColor(0xff, 0xff, 0xff)
        }
    }
    pub fn foreground(&self) -> RGBColor {
        if self.dark {
            RGBColor(0xe4, 0xe6, 0xeb)
        } else {
            RGBColor(0x1f, 0x23, 0x28)
        }
    }
    fn grid(&self) -> RGBColor {
        if self.dark {
            RGBColor(0x3a, 0x3f, 0x47)
        } else {
            RGBColor(0xdd, 0xe1, 0xe6)
        }
    }
    fn primary(&self) -> RGBColor {
        if self.dark {
            RGBColor(0x6c, 0xb6, 0xff)
        } else {
            RGBColor(0x1f, 0x6f, 0xd1)
        }
    }
    fn secondary(&self) -> RGBColor {
        if self.dark {
            RGBColor(0xff, 0xb0, 0x57)
        } else {
            RGBColor(0xc2, 0x5e, 0x00)
        }
    }
    fn alert(&self) -> RGBColor {
        if self.dark {
            RGBColor(0xff, 0x7b, 0x72)
        } else {
            RGBColor(0xcf, 0x22, 0x2e)
        }
    }
    fn shade(&self) -> RGBAColor {
        if self.dark {
            RGBColor(0x3f, 0xb9, 0x50).mix(0.16)
        } else {
            RGBColor(0x1a, 0x7f, 0x37).mix(0.10)
        }
    }
    fn px(&self, v: f64) -> u32 {
        (v * self.scale).round().max(1.0) as u32
    }
}

/// Draws `chart` of a report on `root`.
pub fn draw_report<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
    chart: Chart,
    theme: &Theme,
) -> Result<(), String> {
    draw(root, &ChartData::from_report(report), None, chart, theme)
}

/// Draws `chart` of one source's series (`None`: all sources combined) on `root`.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
) -> Result<(), String> {
    draw_inner(root, data, source, chart, theme)
        .map_err(|e| format!("could not draw the chart: {e}"))
}

/// The chart as an SVG document.
pub fn svg(
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
    (width, height): (u32, u32),
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        draw(&root, data, source, chart, theme)?;
        root.present()
            .map_err(|e| format!("could not draw the chart: {e}"))?;
    }
    Ok(out)
}

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Values of the chart's lines at each point.
fn values(chart: Chart, p: &ChartPoint) -> [Option<f64>; 2] {
    match chart {
        Chart::Throughput => [p.gen_tok_s, None],
        Chart::Concurrency => [p.running, p.queued],
        Chart::KvUsage => [p.kv_usage.map(|v| v * 100.0), None],
        Chart::Prefill => [p.input_tok_s, None],
    }
}

fn line_names(chart: Chart) -> [&'static str; 2] {
    match chart {
        Chart::Throughput => ["generated tokens/s", ""],
        Chart::Concurrency => ["running", "queued"],
        Chart::KvUsage => ["KV usage %", ""],
        Chart::Prefill => ["input tokens/s", ""],
    }
}

/// Short numbers for axis labels: 950, 1.2k, 3.4M.
pub(crate) fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn draw_inner<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
) -> DrawResult<DB> {
    let fg = theme.foreground();
    let points = data.series(source);
    root.fill(&theme.background())?;

    let t_end = points
        .iter()
        .map(|p| p.t_s + data.bucket_seconds.max(0.0))
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let lines: [Vec<(f64, f64)>; 2] = [0, 1].map(|i| {
        points
            .iter()
            .filter_map(|p| {
                values(chart, p)[i]
                    .filter(|v| v.is_finite())
                    .map(|v| (p.t_s, v))
            })
            .collect()
    });
    let drew_any = lines.iter().any(|l| !l.is_empty());
    let mut y_max = lines.iter().flatten().map(|p| p.1).fold(0.0_f64, f64::max);
    let cap = match chart {
        Chart::Concurrency => data.max_running_requests.filter(|v| v.is_finite()),
        _ => None,
    };
    // The cap is drawn when it is near the data; far above it (a default of
    // thousands), it would flatten the lines, so the legend only names it.
    let cap_on_chart = cap.filter(|&c| y_max > 0.0 && c <= y_max * 2.5);
    if let Some(c) = cap_on_chart {
        y_max = y_max.max(c);
    }
    // The decode ceiling at peak bandwidth (combined series only), drawn dashed
    // when near the data, like the cap.
    let ceiling = match (chart, source) {
        (Chart::Throughput, None) => data
            .decode_ceiling_tok_s
            .filter(|v| v.is_finite() && *v > 0.0),
        _ => None,
    };
    let ceiling_on_chart = ceiling.filter(|&c| y_max > 0.0 && c <= y_max * 4.0);
    if let Some(c) = ceiling_on_chart {
        y_max = y_max.max(c);
    }
    let y_top = match chart {
        Chart::KvUsage => 100.0,
        _ if y_max > 0.0 => y_max * 1.1,
        _ => 1.0,
    };
    let steady = data.steady_window_s.filter(|(s, e)| e > s);
    let marks: Vec<f64> = match chart {
        Chart::KvUsage => points
            .iter()
            .filter(|p| p.retractions > 0)
            .map(|p| p.t_s)
            .collect(),
        _ => Vec::new(),
    };

    // The legend sits in its own rows between the title and the plot.
    let colors = [theme.primary(), theme.secondary()];
    let alert = theme.alert();
    let mut legend: Vec<(String, Mark)> = Vec::new();
    if drew_any {
        if steady.is_some() {
            legend.push(("steady state".to_string(), Mark::Band(theme.shade())));
        }
        for (i, name) in line_names(chart).into_iter().enumerate() {
            if !lines[i].is_empty() {
                legend.push((name.to_string(), Mark::Line(colors[i])));
            }
        }
        match (cap_on_chart, cap) {
            (Some(c), _) => legend.push((
                format!("max running requests ({})", short(c)),
                Mark::Line(alert),
            )),
            (None, Some(c)) => legend.push((
                format!("max running requests: {} (far above)", short(c)),
                Mark::Line(alert),
            )),
            _ => {}
        }
        if let Some(c) = ceiling {
            let mbu = data
                .mbu
                .map_or(String::new(), |m| format!(", {:.0}% MBU", m * 100.0));
            let far = if ceiling_on_chart.is_some() {
                ""
            } else {
                ", far above"
            };
            legend.push((
                format!("decode ceiling at peak bandwidth ({}{mbu}{far})", short(c)),
                Mark::Line(alert),
            ));
        }
        if !marks.is_empty() {
            legend.push(("retraction".to_string(), Mark::Triangle(alert)));
        }
    }
    let margin = theme.px(10.0);
    let (width, _) = root.dim_in_pixel();
    let layout = legend_layout(
        root,
        &legend,
        theme,
        width.saturating_sub(margin * 2) as i32,
    )?;
    let legend_h = layout.iter().map(|l| l.1).max().map_or(0, |r| r + 1) * theme.px(17.0) as i32;

    let title = match source {
        Some(s) if data.sources.iter().any(|(n, _)| n == s) => format!("{} · {s}", chart.title()),
        _ => chart.title().to_string(),
    };
    let area = root.titled(
        &title,
        ("sans-serif", theme.px(15.0)).into_font().color(&fg),
    )?;
    let mut ctx = ChartBuilder::on(&area)
        .margin(margin)
        .margin_top(margin + legend_h as u32)
        .x_label_area_size(theme.px(34.0))
        .y_label_area_size(theme.px(52.0))
        .build_cartesian_2d(0.0..t_end, 0.0..y_top)?;

    let label_font = ("sans-serif", theme.px(12.0)).into_font().color(&fg);
    ctx.configure_mesh()
        .light_line_style(theme.grid().mix(0.5))
        .bold_line_style(theme.grid())
        .axis_style(fg.mix(0.6))
        .x_labels(8)
        .y_labels(6)
        .x_desc("seconds")
        .x_label_formatter(&|v| short(*v))
        .y_label_formatter(&|v| short(*v))
        .label_style(label_font.clone())
        .axis_desc_style(label_font)
        .draw()?;

    // The steady-state window, shaded under the lines.
    if let Some((s, e)) = steady {
        ctx.draw_series(std::iter::once(Rectangle::new(
            [(s.max(0.0), 0.0), (e.min(t_end), y_top)],
            theme.shade().filled(),
        )))?;
    }
    let stroke = theme.px(2.0);
    for (line, color) in lines.into_iter().zip(colors) {
        if line.is_empty() {
            continue;
        }
        if matches!(chart, Chart::Throughput | Chart::Prefill) {
            ctx.draw_series(AreaSeries::new(line.iter().copied(), 0.0, color.mix(0.15)))?;
        }
        ctx.draw_series(LineSeries::new(line, color.stroke_width(stroke)))?;
    }
    if let Some(c) = cap_on_chart {
        ctx.draw_series(LineSeries::new(
            [(0.0, c), (t_end, c)],
            alert.stroke_width(theme.px(1.0)),
        ))?;
    }
    if let Some(c) = ceiling_on_chart {
        // Dashes: 60 along the width.
        let dash = t_end / 120.0;
        ctx.draw_series((0..60).map(|i| {
            let x = i as f64 * 2.0 * dash;
            PathElement::new(
                vec![(x, c), ((x + dash).min(t_end), c)],
                alert.stroke_width(theme.px(1.5)),
            )
        }))?;
    }
    if !marks.is_empty() {
        let size = theme.px(5.0) as i32;
        ctx.draw_series(
            marks
                .iter()
                .map(|&t| PathElement::new(vec![(t, 0.0), (t, y_top)], alert.mix(0.7))),
        )?;
        ctx.draw_series(
            marks
                .iter()
                .map(|&t| TriangleMarker::new((t, y_top * 0.97), size, alert.filled())),
        )?;
    }

    if drew_any {
        let (x0, y0) = ctx.plotting_area().get_base_pixel();
        draw_legend(
            root,
            (x0, y0 - legend_h - margin as i32 / 2),
            &legend,
            &layout,
            theme,
        )?;
    } else {
        let (w, h) = root.dim_in_pixel();
        root.draw(&Text::new(
            "no data for this chart in the log",
            (w as i32 / 2 - theme.px(110.0) as i32, h as i32 / 2),
            ("sans-serif", theme.px(14.0)).into_font().color(&fg),
        ))?;
    }
    root.present()?;
    Ok(())
}

/// How a legend entry is drawn.
enum Mark {
    Line(RGBColor),
    Band(RGBAColor),
    Triangle(RGBColor),
}

fn legend_font(theme: &Theme) -> TextStyle<'static> {
    ("sans-serif", theme.px(12.0))
        .into_font()
        .color(&theme.foreground())
}

/// (x offset, row) of each legend entry, wrapping rows at `width`.
fn legend_layout<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    entries: &[(String, Mark)],
    theme: &Theme,
    width: i32,
) -> Result<Vec<(i32, i32)>, DrawingAreaErrorKind<DB::ErrorType>> {
    let font = legend_font(theme);
    let (mark_w, gap) = (theme.px(18.0) as i32, theme.px(14.0) as i32);
    let mut out = Vec::with_capacity(entries.len());
    let (mut x, mut row) = (0, 0);
    for (label, _) in entries {
        let (tw, _) = root.estimate_text_size(label, &font)?;
        let w = mark_w + gap / 2 + tw as i32;
        if x > 0 && x + w > width {
            x = 0;
            row += 1;
        }
        out.push((x, row));
        x += w + gap;
    }
    Ok(out)
}

/// The legend, drawn by hand: plotters' own legend measures text through the
/// DOM in wasm32, which a strict CSP forbids.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    entries: &[(String, Mark)],
    layout: &[(i32, i32)],
    theme: &Theme,
) -> DrawResult<DB> {
    let font = legend_font(theme);
    let (mark_w, gap, row_h) = (
        theme.px(18.0) as i32,
        theme.px(14.0) as i32,
        theme.px(17.0) as i32,
    );
    for ((label, mark), &(dx, row)) in entries.iter().zip(layout) {
        let (mx, cy) = (x0 + dx, y0 + row * row_h + row_h / 2);
        match mark {
            Mark::Line(c) => root.draw(&PathElement::new(
                vec![(mx, cy), (mx + mark_w, cy)],
                c.stroke_width(theme.px(2.0)),
            ))?,
            Mark::Band(c) => root.draw(&Rectangle::new(
                [(mx, cy - row_h / 3), (mx + mark_w, cy + row_h / 3)],
                c.filled(),
            ))?,
            Mark::Triangle(c) => root.draw(&TriangleMarker::new(
                (mx + mark_w / 2, cy),
                theme.px(5.0),
                c.filled(),
            ))?,
        }
        root.draw(&Text::new(
            label.clone(),
            (mx + mark_w + gap / 2, cy),
            font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Analyzer, Options};

    fn report(log: &str) -> Report {
        let mut a = Analyzer::new(Options::default());
        a.feed(log.as_bytes());
        a.finish()
    }

    const LOG: &str = "\
[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, #token: 81290, token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 94
[2026-02-24 10:55:42 TP0] Decode batch, #running-req: 60, #token: 91290, token usage: 0.80, cuda graph: True, gen throughput (token/s): 950.00, #queue-req: 90
[2026-02-24 10:55:52 TP0] Decode batch, #running-req: 61, #token: 95290, token usage: 0.90, cuda graph: True, gen throughput (token/s): 990.00, #queue-req: 80
";

    #[test]
    fn every_chart_renders_as_svg_with_its_title_and_a_line() {
        let data = ChartData::from_report(&report(LOG));
        for chart in Chart::ALL {
            for theme in [Theme::light(), Theme::dark()] {
                let s = svg(&data, None, chart, &theme, (640, 320)).unwrap();
                assert!(s.starts_with("<svg"), "{chart:?}");
                assert!(
                    s.contains(chart.title().split(' ').next().unwrap()),
                    "{chart:?}"
                );
                if chart != Chart::Prefill {
                    assert!(s.contains("<polyline"), "{chart:?} has no line");
                }
            }
        }
    }

    #[test]
    fn chart_data_from_json_equals_chart_data_from_report() {
        let r = report(LOG);
        let json = serde_json::to_string_pretty(&r).unwrap();
        let view: ReportView = serde_json::from_str(&json).unwrap();
        assert_eq!(ChartData::from(view), ChartData::from_report(&r));
    }

    #[test]
    fn empty_report_draws_a_no_data_message() {
        let data = ChartData::from_report(&report(""));
        let s = svg(&data, None, Chart::Throughput, &Theme::light(), (400, 200)).unwrap();
        assert!(s.contains("no data"));
    }

    #[test]
    fn names_round_trip() {
        for c in Chart::ALL {
            assert_eq!(Chart::from_name(c.name()), Some(c));
        }
        assert_eq!(Chart::from_name("pie"), None);
    }
}
