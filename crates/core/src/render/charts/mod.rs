//! Charts of a report, drawn with plotters on any backend: SVG in the CLI
//! (`--charts DIR`), a canvas in the page.
//!
//! Only the generic "sans-serif" family is used, so text renders the same way in
//! SVG and on a canvas without font files.

mod data;
mod describe;

pub use data::{ChartData, ChartPoint, ReportView, TimelineView};

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

/// What a front end adds to a chart: the time window shown (seconds from the
/// first stats line; `None`: all of it) and a caption under the title (an export
/// names the file, the verdict and the window with it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    pub range_s: Option<(f64, f64)>,
    pub caption: Option<String>,
}

/// Where a chart was drawn, for a front end that maps the pointer to time and
/// value: the plot area in pixels and the data range it shows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Frame {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
    pub t0: f64,
    pub t1: f64,
    pub y_top: f64,
}

/// Draws `chart` of one source's series (`None`: all sources combined) on `root`.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
) -> Result<(), String> {
    draw_view(root, data, source, chart, theme, &View::default()).map(|_| ())
}

/// [`draw`] over a window of time, with a caption; returns where the plot lies.
pub fn draw_view<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
    view: &View,
) -> Result<Frame, String> {
    draw_inner(root, data, source, chart, theme, view)
        .map_err(|e| format!("could not draw the chart: {e}"))
}

/// The chart as an SVG document.
pub fn svg(
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
    size: (u32, u32),
) -> Result<String, String> {
    svg_view(data, source, chart, theme, size, &View::default())
}

/// [`svg`] over a window of time, with a caption.
pub fn svg_view(
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
    (width, height): (u32, u32),
    view: &View,
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        draw_view(&root, data, source, chart, theme, view)?;
        root.present()
            .map_err(|e| format!("could not draw the chart: {e}"))?;
    }
    Ok(out)
}

type DrawResult<DB, T = ()> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

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

/// A count's axis label: whole numbers only (a tick between them is left blank).
fn count_label(v: f64) -> String {
    if (v - v.round()).abs() > 1e-6 {
        String::new()
    } else if v.abs() >= 1e4 {
        short(v)
    } else {
        format!("{v:.0}")
    }
}

/// The unit of the time axis for a span: seconds, minutes, hours or days, so a
/// day-long run reads in hours and a week in days (never millions of seconds).
pub fn time_unit(span_s: f64) -> (f64, &'static str) {
    if span_s >= 3.0 * 86_400.0 {
        (86_400.0, "days")
    } else if span_s >= 3.0 * 3_600.0 {
        (3_600.0, "hours")
    } else if span_s >= 15.0 * 60.0 {
        (60.0, "minutes")
    } else {
        (1.0, "seconds")
    }
}

/// The points of one line, cut into runs of consecutive buckets: a bucket
/// without a value, or a silence of several buckets, ends a run, so a line
/// never joins readings across time the log says nothing of.
fn segments(
    points: &[ChartPoint],
    value: impl Fn(&ChartPoint) -> Option<f64>,
    bucket: f64,
) -> Vec<Vec<(f64, f64)>> {
    let gap = if bucket > 0.0 {
        2.5 * bucket
    } else {
        f64::INFINITY
    };
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for p in points {
        match value(p).filter(|v| v.is_finite()) {
            Some(v) => {
                if cur.last().is_some_and(|&(t, _)| p.t_s - t > gap) {
                    out.push(std::mem::take(&mut cur));
                }
                cur.push((p.t_s, v));
            }
            None if !cur.is_empty() => out.push(std::mem::take(&mut cur)),
            None => {}
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Events (retractions, preemptions) counted into `bins` equal bars over `t0..t1`.
fn event_bars(points: &[ChartPoint], t0: f64, t1: f64, bins: usize) -> Vec<(f64, f64, u64)> {
    let width = (t1 - t0) / bins.max(1) as f64;
    let mut counts = vec![0_u64; bins.max(1)];
    for p in points.iter().filter(|p| p.retractions > 0) {
        let i = ((p.t_s - t0) / width).floor();
        if i >= 0.0 && (i as usize) < counts.len() {
            counts[i as usize] += u64::from(p.retractions);
        }
    }
    counts
        .into_iter()
        .enumerate()
        .filter(|(_, n)| *n > 0)
        .map(|(i, n)| (t0 + i as f64 * width, t0 + (i + 1) as f64 * width, n))
        .collect()
}

fn draw_inner<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData,
    source: Option<&str>,
    chart: Chart,
    theme: &Theme,
    view: &View,
) -> DrawResult<DB, Frame> {
    let fg = theme.foreground();
    let all = data.series(source);
    root.fill(&theme.background())?;

    let t_end = all
        .iter()
        .map(|p| p.t_s + data.bucket_seconds.max(0.0))
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let (t0, t1) = match view.range_s {
        Some((a, b)) if a.is_finite() && b.is_finite() && b > a => (a.max(0.0), b.min(t_end)),
        _ => (0.0, t_end),
    };
    let (t0, t1) = if t1 > t0 { (t0, t1) } else { (0.0, t_end) };
    // The window's buckets, and one either side so lines run to the edges.
    let from = all.partition_point(|p| p.t_s < t0).saturating_sub(1);
    let to = (all.partition_point(|p| p.t_s <= t1) + 1).min(all.len());
    let points = &all[from..to];
    let inside = |p: &&ChartPoint| p.t_s >= t0 && p.t_s <= t1;

    let lines: [Vec<Vec<(f64, f64)>>; 2] =
        [0, 1].map(|i| segments(points, |p| values(chart, p)[i], data.bucket_seconds));
    let drew_any = lines.iter().any(|l| !l.is_empty());
    let mut y_max = points
        .iter()
        .filter(inside)
        .flat_map(|p| values(chart, p))
        .flatten()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
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
        Chart::Concurrency if y_max > 0.0 => (y_max * 1.1).ceil().max(2.0),
        _ if y_max > 0.0 => y_max * 1.1,
        _ => 1.0,
    };
    let steady = data.steady_window_s.filter(|(s, e)| e > s);
    // Evictions as counts per bar (about 6 px wide at 600 px), in the bottom
    // fifth of the KV chart: a line per bucket would paint it solid.
    let bars = match chart {
        Chart::KvUsage => event_bars(points, t0, t1, 100),
        _ => Vec::new(),
    };
    let bar_max = bars.iter().map(|b| b.2).max().unwrap_or(0);

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
        if bar_max > 0 {
            legend.push((
                format!("{} per bar (tallest {bar_max})", data.events_word()),
                Mark::Bar(alert),
            ));
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
    let mut area = root.titled(
        &title,
        ("sans-serif", theme.px(15.0)).into_font().color(&fg),
    )?;
    if let Some(c) = view.caption.as_deref().filter(|c| !c.is_empty()) {
        area = area.titled(
            c,
            ("sans-serif", theme.px(11.0))
                .into_font()
                .color(&fg.mix(0.8)),
        )?;
    }
    let (unit, unit_name) = time_unit(t1 - t0);
    let mut ctx = ChartBuilder::on(&area)
        .margin(margin)
        .margin_top(margin + legend_h as u32)
        .x_label_area_size(theme.px(34.0))
        .y_label_area_size(theme.px(52.0))
        .build_cartesian_2d(t0..t1, 0.0..y_top)?;

    let label_font = ("sans-serif", theme.px(12.0)).into_font().color(&fg);
    let x_fmt = |v: &f64| short(*v / unit);
    let y_fmt = |v: &f64| {
        if chart == Chart::Concurrency {
            count_label(*v)
        } else {
            short(*v)
        }
    };
    ctx.configure_mesh()
        .light_line_style(theme.grid().mix(0.5))
        .bold_line_style(theme.grid())
        .axis_style(fg.mix(0.6))
        .x_labels(8)
        .y_labels(6)
        .x_desc(unit_name)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(label_font.clone())
        .axis_desc_style(label_font)
        .draw()?;

    // The steady-state window, shaded under the lines.
    if let Some((s, e)) = steady {
        let (s, e) = (s.max(t0), e.min(t1));
        if e > s {
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(s, 0.0), (e, y_top)],
                theme.shade().filled(),
            )))?;
        }
    }
    if bar_max > 0 {
        let h = y_top * 0.2;
        ctx.draw_series(bars.iter().map(|&(a, b, n)| {
            Rectangle::new(
                [(a, 0.0), (b, h * n as f64 / bar_max as f64)],
                alert.mix(0.75).filled(),
            )
        }))?;
    }
    let stroke = theme.px(2.0);
    for (segs, color) in lines.into_iter().zip(colors) {
        for line in segs {
            if line.len() == 1 {
                ctx.draw_series(std::iter::once(Circle::new(
                    line[0],
                    theme.px(2.0),
                    color.filled(),
                )))?;
                continue;
            }
            if matches!(chart, Chart::Throughput | Chart::Prefill) {
                ctx.draw_series(AreaSeries::new(line.iter().copied(), 0.0, color.mix(0.15)))?;
            }
            ctx.draw_series(LineSeries::new(line, color.stroke_width(stroke)))?;
        }
    }
    if let Some(c) = cap_on_chart {
        ctx.draw_series(LineSeries::new(
            [(t0, c), (t1, c)],
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

    let (xr, yr) = ctx.plotting_area().get_pixel_range();
    let frame = Frame {
        left: xr.start,
        right: xr.end,
        top: yr.start,
        bottom: yr.end,
        t0,
        t1,
        y_top,
    };
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
    Ok(frame)
}

/// How a legend entry is drawn.
enum Mark {
    Line(RGBColor),
    Band(RGBAColor),
    Bar(RGBColor),
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
            Mark::Bar(c) => root.draw(&Rectangle::new(
                [
                    (mx + mark_w / 3, cy - row_h / 3),
                    (mx + 2 * mark_w / 3, cy + row_h / 3),
                ],
                c.mix(0.75).filled(),
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
    fn a_day_long_run_reads_in_hours_and_a_week_in_days() {
        assert_eq!(time_unit(90.0).1, "seconds");
        assert_eq!(time_unit(3_600.0).1, "minutes");
        assert_eq!(time_unit(88_000.0).1, "hours");
        assert_eq!(time_unit(86_400.0).1, "hours");
        assert_eq!(time_unit(7_098_837.0).1, "days");
    }

    #[test]
    fn lines_break_at_buckets_without_a_value_and_at_silences() {
        let p = |t: f64, v: Option<f64>| ChartPoint {
            t_s: t,
            input_tok_s: v,
            ..ChartPoint::default()
        };
        let pts = [
            p(0.0, Some(1.0)),
            p(1.0, Some(2.0)),
            p(2.0, None),
            p(3.0, Some(3.0)),
            p(4.0, Some(4.0)),
            p(40.0, Some(5.0)),
        ];
        let segs = segments(&pts, |p| p.input_tok_s, 1.0);
        let lens: Vec<usize> = segs.iter().map(Vec::len).collect();
        assert_eq!(lens, [2, 2, 1]);
    }

    #[test]
    fn events_are_counted_per_bar_and_named_as_the_engine_names_them() {
        let pts: Vec<ChartPoint> = (0..1000)
            .map(|i| ChartPoint {
                t_s: f64::from(i),
                kv_usage: Some(0.9),
                retractions: 3,
                ..ChartPoint::default()
            })
            .collect();
        let bars = event_bars(&pts, 0.0, 1000.0, 100);
        assert_eq!(bars.len(), 100);
        assert!(bars.iter().all(|b| b.2 == 30), "{bars:?}");
        let vllm = ChartData {
            points: pts.clone(),
            eviction: "preemption".into(),
            bucket_seconds: 1.0,
            ..ChartData::default()
        };
        assert_eq!(vllm.events_word(), "preemptions");
        let s = svg(&vllm, None, Chart::KvUsage, &Theme::light(), (640, 320)).unwrap();
        assert!(s.contains("preemptions per bar"), "{s}");
        // One bar each, not a line per bucket.
        assert!(s.matches("<rect").count() < 200);
    }

    #[test]
    fn a_window_draws_only_its_range_and_a_caption() {
        let data = ChartData::from_report(&report(LOG));
        let view = View {
            range_s: Some((5.0, 15.0)),
            caption: Some("run.log · window 5–15 s".into()),
        };
        let mut out = String::new();
        let frame = {
            let root = SVGBackend::with_string(&mut out, (640, 320)).into_drawing_area();
            draw_view(
                &root,
                &data,
                None,
                Chart::Throughput,
                &Theme::light(),
                &view,
            )
            .unwrap()
        };
        assert_eq!((frame.t0, frame.t1), (5.0, 15.0));
        assert!(frame.right > frame.left && frame.bottom > frame.top);
        assert!(out.contains("run.log"));
    }

    #[test]
    fn request_counts_have_whole_ticks() {
        assert_eq!(count_label(2.0), "2");
        assert_eq!(count_label(2.5), "");
    }

    #[test]
    fn names_round_trip() {
        for c in Chart::ALL {
            assert_eq!(Chart::from_name(c.name()), Some(c));
        }
        assert_eq!(Chart::from_name("pie"), None);
    }
}
