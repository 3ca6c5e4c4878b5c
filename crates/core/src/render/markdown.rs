use std::fmt::Write;

use super::text::{kind_name, lines_ref};
use super::{duration, summary_rows};
use crate::report::Report;

/// Markdown-special characters in log-derived text are escaped so a pasted
/// report renders as the text it quotes.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#'
        ) {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// The report as Markdown, to paste into an issue or a ticket.
pub fn markdown(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "## batchlens report ({})\n", esc(&r.engine));
    let _ = writeln!(
        o,
        "{}, {} ({} busy, {} idle{}).\n",
        super::count(r.input.lines as f64, "line", "lines"),
        super::scope(r),
        duration(r.busy_seconds),
        duration(r.idle_seconds),
        super::prefill_time(r).replace(" ·", ",")
    );
    if let Some(t) = super::truncation(r) {
        let _ = writeln!(o, "**Warning:** {}\n", esc(&t));
    }
    if let Some(d) = &r.diagnosis {
        let p = &d.primary;
        let _ = writeln!(
            o,
            "**Verdict:** {} (`{}`, confidence {:.0}%)\n",
            esc(&p.headline),
            kind_name(p.kind),
            p.confidence * 100.0
        );
        if !p.evidence.is_empty() {
            let _ = writeln!(o, "### Evidence\n");
            for e in &p.evidence {
                let _ = writeln!(o, "- {}{}", esc(&e.statement), lines_ref(&e.lines));
            }
            let _ = writeln!(o);
        }
        if !p.actions.is_empty() {
            let _ = writeln!(o, "### What to change\n");
            for (i, a) in p.actions.iter().enumerate() {
                let _ = writeln!(
                    o,
                    "{}. `{}` — {}",
                    i + 1,
                    a.flag.replace('`', "'"),
                    esc(&a.why)
                );
                if !a.effect.is_empty() {
                    let _ = writeln!(o, "   Expected: {}", esc(&a.effect));
                }
            }
            let _ = writeln!(o);
        }
        for f in d.findings.iter().skip(1) {
            let _ = writeln!(
                o,
                "**Also ({}):** {}\n",
                kind_name(f.kind),
                esc(&f.headline)
            );
        }
        for x in &d.not_assessed {
            let _ = writeln!(o, "*Not assessed ({}):* {}\n", x.check, esc(&x.why));
        }
    }
    if let Some(rc) = &r.reconciliation {
        let _ = writeln!(o, "### Client versus server\n");
        for line in super::reconcile::explain(rc) {
            match line.strip_prefix("- ") {
                Some(item) => {
                    let _ = writeln!(o, "- {}", esc(item));
                }
                None => {
                    let _ = writeln!(o, "\n{}\n", esc(&line));
                }
            }
        }
    }
    if let Some(rf) = &r.roofline {
        let _ = writeln!(o, "### Roofline\n");
        for line in super::roofline::lines(rf) {
            match line.strip_prefix("- ") {
                Some(item) => {
                    let _ = writeln!(o, "- {}", esc(item));
                }
                None => {
                    let _ = writeln!(o, "{}\n", esc(&line));
                }
            }
        }
        let _ = writeln!(o);
    }
    let rows = summary_rows(r);
    if !rows.is_empty() {
        let _ = writeln!(
            o,
            "### Figures\n\n| | mean | p50 | p90 | max |\n|---|---:|---:|---:|---:|"
        );
        for (label, d, f) in rows {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                label,
                f(d.mean),
                f(d.p50),
                f(d.p90),
                f(d.max)
            );
        }
        let _ = writeln!(o);
    }
    let runs = super::run_rows(r);
    if !runs.is_empty() {
        let _ = writeln!(
            o,
            "### Server runs\n\nThe judged run is starred; the figures above are its own (means here).\n"
        );
        let _ = writeln!(o, "| {} |", super::RUN_COLUMNS.join(" | "));
        let _ = writeln!(o, "|---|---|---:|---:|---:|---:|---:|");
        for row in runs {
            let _ = writeln!(o, "| {} |", row.map(|c| esc(&c)).join(" | "));
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(
        o,
        "Retractions/preemptions: {}. Damaged stats lines: {}. Unrecognised lines: {}.",
        r.summary.retractions, r.input.damaged_stat_lines, r.input.unrecognized_lines
    );
    if r.input.json_records > 0 {
        let _ = writeln!(
            o,
            "Lines read from JSON records (Docker, journald, a collector): {}.",
            r.input.json_records
        );
    }
    if r.input.joined_pieces > 0 {
        let _ = writeln!(
            o,
            "Pieces of lines over 16 KiB joined back (Docker and Kubernetes cut them): {}.",
            r.input.joined_pieces
        );
    }
    o
}
