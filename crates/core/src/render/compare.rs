//! `batchlens compare` in words: the sentences that attribute the change, and the
//! side-by-side tables as text and Markdown, ready to paste into a ticket.

use std::fmt::Write;

use crate::analysis::compare::IN_FLIGHT_SETTING;
use crate::report::{Comparison, SettingChange, Side};
use crate::text::num::num;

/// `+16 %`, `−8.5 %` from a ratio: one decimal below ten per cent.
fn signed_pct(ratio: f64) -> String {
    let v = (ratio - 1.0) * 100.0;
    let shown = if v.abs() < 9.95 {
        format!("{:.1}", v.abs())
    } else {
        num(v.abs().round())
    };
    format!("{}{shown} %", if v < 0.0 { "−" } else { "+" })
}

/// A setting's value as a number, where it is one (`116,171` → 116171).
fn value(s: &str) -> Option<f64> {
    s.replace(',', "").parse().ok()
}

/// The change in a few words: "the larger pool", "the lower running cap".
fn phrase(c: &SettingChange) -> String {
    let up = match (value(&c.before), value(&c.after)) {
        (Some(a), Some(b)) => Some(b > a),
        _ => None,
    };
    let pick = |more: &str, less: &str| match up {
        Some(true) => more.to_string(),
        Some(false) => less.to_string(),
        None => format!("the change of {} ({} → {})", c.setting, c.before, c.after),
    };
    match c.setting.as_str() {
        "KV pool (tokens)" => pick("the larger pool", "the smaller pool"),
        "max running requests" => pick("the higher running cap", "the lower running cap"),
        s if s == IN_FLIGHT_SETTING => pick(
            "more requests in flight from the client",
            "fewer requests in flight from the client",
        ),
        "schedule_conservativeness" => pick(
            "the higher schedule_conservativeness",
            "the lower schedule_conservativeness",
        ),
        "mem_fraction_static" | "gpu_memory_utilization" => pick(
            &format!("the higher {}", c.setting),
            &format!("the lower {}", c.setting),
        ),
        _ => format!("the change of {} ({} → {})", c.setting, c.before, c.after),
    }
}

fn settings_phrase(changes: &[SettingChange]) -> String {
    match changes {
        [] => "any setting".into(),
        [one] => phrase(one),
        many => format!(
            "the changes ({})",
            many.iter()
                .map(|c| format!("{} {} → {}", c.setting, c.before, c.after))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The sentences of `explanation`: the workload first when it differs, then what the
/// difference is credited to, then the model's prediction against the measurement.
pub fn explanation(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let effect = c.effect.as_ref().map(|e| {
        format!(
            "{} ({} to {})",
            signed_pct(e.gen_throughput_ratio),
            signed_pct(e.low),
            signed_pct(e.high)
        )
    });
    let check = c.prediction_check.as_ref();
    let predicted_ok = check
        .is_some_and(|p| p.within_range == Some(true) || p.error.is_some_and(|e| e.abs() <= 0.10));
    let error = check
        .and_then(|p| p.error)
        .map(|e| format!("error {}", signed_pct(1.0 + e)));
    match c.attribution {
        "workload" => {
            out.push(format!(
                "The workloads differ — {} — so the change in throughput{} is not credited to {}.",
                c.workload.notes.join("; "),
                effect.as_ref().map_or(String::new(), |e| format!(", {e},")),
                settings_phrase(&c.changes)
            ));
        }
        "none" => {
            let what = match &c.changes[..] {
                [] => "Nothing changed".to_string(),
                ch => format!("{} made no difference", upper_first(&settings_phrase(ch))),
            };
            out.push(format!(
                "{what} beyond the spread of the two windows: {}.",
                effect.unwrap_or_else(|| "no throughput to compare".into())
            ));
        }
        "setting" => {
            let over = check.and_then(|p| p.error).is_some_and(|e| e > 0.0);
            let tail = match (predicted_ok, &error) {
                (true, Some(e)) => format!(", as predicted ({e})"),
                (false, Some(e)) => format!(
                    ", {} than the model expected from it ({e}): something else changed too, or the model misses this case",
                    if over { "less" } else { "more" }
                ),
                _ => String::new(),
            };
            out.push(format!(
                "{} did it: {}{tail}.",
                upper_first(&settings_phrase(&c.changes)),
                effect.unwrap_or_default()
            ));
        }
        _ => out.push(format!(
            "Throughput moved {} with no setting changed and a workload alike by the figures compared: something the logs do not show changed (model, GPU, prompts, prefix-cache hits).",
            effect.unwrap_or_default()
        )),
    }
    if let Some(p) = check {
        if let Some(m) = p.measured_gen_tok_s {
            let asked = if p.changes.is_empty() {
                "the same settings".to_string()
            } else {
                p.changes
                    .iter()
                    .map(|x| format!("{}={}", x.parameter, x.value))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.push(format!(
                "The model fitted on before, asked about {asked}, predicted ~{} tok/s ({}–{}); after measured {}{}.",
                num(p.predicted_gen_tok_s),
                num(p.low),
                num(p.high),
                num(m),
                error.as_ref().map_or(String::new(), |e| format!(" ({e})"))
            ));
        }
    }
    out
}

/// Rows of the figures table: label, before, after.
fn figure_rows(c: &Comparison) -> Vec<[String; 3]> {
    let o = |v: Option<f64>| v.map_or_else(|| "–".to_string(), num);
    let pct = |v: Option<f64>| v.map_or_else(|| "–".to_string(), crate::text::num::pct);
    let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "–".into());
    let row =
        |label: &str, f: &dyn Fn(&Side) -> String| [label.to_string(), f(&c.before), f(&c.after)];
    let mut rows = vec![row("engine", &|x| match &x.config.engine_version {
        Some(v) => format!("{} {v}", x.engine),
        None => x.engine.clone(),
    })];
    if c.before.run.is_some() || c.after.run.is_some() {
        rows.push(row("server run", &|x| {
            x.run.map_or("–".into(), |r| r.to_string())
        }));
    }
    rows.extend([
        row("steady window", &|x| {
            format!(
                "{}–{}",
                crate::text::num::duration(x.window_start_s),
                crate::text::num::duration(x.window_end_s)
            )
        }),
        row("gen tok/s", &|x| o(x.gen_throughput_tok_s)),
        row("running", &|x| o(x.running_requests)),
        row("queued", &|x| o(x.queued_requests)),
        row("KV usage", &|x| pct(x.kv_usage)),
        row("in flight", &|x| o(x.in_flight_requests)),
        row("prompt tok/request", &|x| o(x.per_request.prompt_tokens)),
        row("output tok/request", &|x| o(x.per_request.output_tokens)),
        row("verdict", &|x| s(&x.verdict)),
    ]);
    rows
}

fn pad(s: &str, w: usize) -> String {
    let n = s.chars().count();
    format!("{s}{}", " ".repeat(w.saturating_sub(n)))
}

fn text_table(out: &mut String, head: [&str; 3], rows: &[[String; 3]]) {
    let mut w = head.map(|h| h.chars().count());
    for r in rows {
        for (k, cell) in r.iter().enumerate() {
            w[k] = w[k].max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 3]| {
        format!(
            "  {}  {}  {}\n",
            pad(cells[0], w[0]),
            pad(cells[1], w[1]),
            cells[2]
        )
    };
    out.push_str(&line(head));
    for r in rows {
        out.push_str(&line([&r[0], &r[1], &r[2]]));
    }
}

fn change_rows(c: &Comparison) -> Vec<[String; 3]> {
    c.changes
        .iter()
        .map(|x| [x.setting.clone(), x.before.clone(), x.after.clone()])
        .collect()
}

/// The comparison for a terminal.
pub fn compare_text(c: &Comparison) -> String {
    let mut o = String::from("batchlens compare\n\n");
    for s in &c.explanation {
        let _ = writeln!(o, "{s}");
    }
    o.push('\n');
    text_table(&mut o, ["", "before", "after"], &figure_rows(c));
    o.push_str("\nSettings changed\n");
    if c.changes.is_empty() {
        o.push_str("  none that the logs state\n");
    } else {
        text_table(&mut o, ["setting", "before", "after"], &change_rows(c));
    }
    let _ = writeln!(
        o,
        "\nWorkload: {}",
        if c.workload.similar {
            "similar"
        } else {
            "differs"
        }
    );
    for n in &c.workload.notes {
        let _ = writeln!(o, "  {n}");
    }
    if let Some(e) = &c.effect {
        let _ = writeln!(
            o,
            "\nEffect: gen throughput × {:.3} ({:.3}–{:.3})",
            e.gen_throughput_ratio, e.low, e.high
        );
    }
    if let Some(p) = &c.prediction_check {
        let _ = writeln!(
            o,
            "Prediction: ~{} tok/s ({}–{}), measured {}{}",
            num(p.predicted_gen_tok_s),
            num(p.low),
            num(p.high),
            p.measured_gen_tok_s.map_or("–".into(), num),
            p.error.map_or(String::new(), |e| format!(
                ", error {}",
                signed_pct(1.0 + e)
            ))
        );
        for n in &p.notes {
            let _ = writeln!(o, "  note: {n}");
        }
    }
    for (name, s) in [("before", &c.before), ("after", &c.after)] {
        if let Some(h) = &s.headline {
            let _ = writeln!(o, "Verdict {name}: {h}");
        }
    }
    o
}

fn md_table(out: &mut String, head: [&str; 3], rows: &[[String; 3]]) {
    let esc = super::markdown::esc;
    let _ = writeln!(out, "| {} | {} | {} |", head[0], head[1], head[2]);
    out.push_str("|---|---:|---:|\n");
    for r in rows {
        let _ = writeln!(out, "| {} | {} | {} |", esc(&r[0]), esc(&r[1]), esc(&r[2]));
    }
}

/// The comparison as Markdown, to paste into an issue or a ticket.
pub fn compare_markdown(c: &Comparison) -> String {
    let esc = super::markdown::esc;
    let mut o = String::from("## batchlens compare\n\n");
    for s in &c.explanation {
        let _ = writeln!(o, "{}\n", esc(s));
    }
    md_table(&mut o, ["", "before", "after"], &figure_rows(c));
    o.push_str("\n### Settings changed\n\n");
    if c.changes.is_empty() {
        o.push_str("None that the logs state.\n");
    } else {
        md_table(&mut o, ["setting", "before", "after"], &change_rows(c));
    }
    let _ = writeln!(
        o,
        "\n### Workload: {}\n",
        if c.workload.similar {
            "similar"
        } else {
            "differs"
        }
    );
    for n in &c.workload.notes {
        let _ = writeln!(o, "- {}", esc(n));
    }
    if let Some(p) = &c.prediction_check {
        o.push_str("\n### Prediction check\n\n| | gen tok/s |\n|---|---:|\n");
        let _ = writeln!(
            o,
            "| predicted | {} ({}–{}) |",
            num(p.predicted_gen_tok_s),
            num(p.low),
            num(p.high)
        );
        let _ = writeln!(
            o,
            "| measured | {} |",
            p.measured_gen_tok_s.map_or("–".into(), num)
        );
        if let Some(e) = p.error {
            let _ = writeln!(o, "| error | {} |", signed_pct(1.0 + e));
        }
    }
    o.push('\n');
    for (name, s) in [("Before", &c.before), ("After", &c.after)] {
        if let Some(h) = &s.headline {
            let _ = writeln!(o, "**{name}:** {}\n", esc(h));
        }
    }
    o
}
