//! Text alternatives for the charts: the key figures in words.

use super::{short, Chart, ChartData, ChartPoint};

struct Figures {
    mean: f64,
    max: f64,
    max_at: f64,
    last: f64,
}

fn figures(points: &[ChartPoint], f: impl Fn(&ChartPoint) -> Option<f64>) -> Option<Figures> {
    let vals: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|p| f(p).filter(|v| v.is_finite()).map(|v| (p.t_s, v)))
        .collect();
    let last = vals.last()?.1;
    let mean = vals.iter().map(|v| v.1).sum::<f64>() / vals.len() as f64;
    let (max_at, max) = vals
        .iter()
        .copied()
        .fold((0.0, f64::MIN), |a, v| if v.1 > a.1 { v } else { a });
    Some(Figures {
        mean,
        max,
        max_at,
        last,
    })
}

/// A time into the log for people: seconds, minutes, hours, or days for a long run.
fn when(s: f64) -> String {
    if s >= 3.0 * 86_400.0 {
        format!("{:.1} days", s / 86_400.0)
    } else {
        crate::text::num::duration(s)
    }
}

/// One or two sentences with the chart's key figures, for `aria-label` / `figcaption`.
pub fn describe(data: &ChartData, source: Option<&str>, chart: Chart) -> String {
    let points = data.series(source);
    let span = points.last().map(|p| p.t_s).unwrap_or(0.0);
    let whose = match source {
        Some(s) if data.sources.iter().any(|(n, _)| n == s) => format!(" for {s}"),
        _ => String::new(),
    };
    let mut out = match chart {
        Chart::Throughput => match figures(points, |p| p.gen_tok_s) {
            Some(f) => format!(
                "Generation throughput{whose} over {}: mean {} tokens/s, peak {} tokens/s at {}, last {} tokens/s.",
                when(span), short(f.mean), short(f.max), when(f.max_at), short(f.last)
            ),
            None => format!("Generation throughput{whose}: no data in the log."),
        },
        Chart::Concurrency => {
            let r = figures(points, |p| p.running);
            let q = figures(points, |p| p.queued);
            let mut s = match (&r, &q) {
                (None, None) => format!("Running and queued requests{whose}: no data in the log."),
                _ => format!("Requests{whose} over {}:", when(span)),
            };
            if let Some(r) = r {
                s += &format!(" running mean {}, peak {};", short(r.mean), short(r.max));
            }
            if let Some(q) = q {
                s += &format!(" queued mean {}, peak {};", short(q.mean), short(q.max));
            }
            if let Some(c) = data.max_running_requests {
                s += &format!(" the running-request cap is {}.", short(c));
            }
            let mut s = s.trim_end_matches(';').to_string();
            if !s.ends_with('.') {
                s.push('.');
            }
            s
        }
        Chart::KvUsage => {
            let mut s = match figures(points, |p| p.kv_usage.map(|v| v * 100.0)) {
                Some(f) => format!(
                    "KV cache usage{whose} over {}: mean {:.0}%, peak {:.0}% at {}.",
                    when(span),
                    f.mean,
                    f.max,
                    when(f.max_at)
                ),
                None => format!("KV cache usage{whose}: no data in the log."),
            };
            let retractions: u64 = points.iter().map(|p| p.retractions as u64).sum();
            if retractions > 0 {
                let word = data.events_word();
                let word = if retractions == 1 {
                    word.trim_end_matches('s')
                } else {
                    &word
                };
                s += &format!(" {retractions} {word} counted in the bars.");
            }
            s
        }
        Chart::Prefill => match figures(points, |p| p.input_tok_s) {
            Some(f) => format!(
                "Input (prefill) throughput{whose} over {}: mean {} tokens/s, peak {} tokens/s at {}.",
                when(span), short(f.mean), short(f.max), when(f.max_at)
            ),
            None => format!("Input (prefill) throughput{whose}: no data in the log."),
        },
    };
    if let Some((s, e)) = data.steady_window_s {
        out += &format!(" Steady state from {} to {} is shaded.", when(s), when(e));
    }
    out
}
