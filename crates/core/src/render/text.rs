use std::fmt::Write;

use super::{duration, num, summary_rows};
use crate::report::Report;

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    fn accent(&self, s: &str) -> String {
        self.paint("1;36", s)
    }
}

/// The report for a terminal: verdict, evidence, what to change, then the facts.
pub fn text(r: &Report, color: bool) -> String {
    let st = Style { on: color };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} {} log, {}, {}",
        st.accent("batchlens:"),
        r.engine,
        super::count(r.input.lines as f64, "line", "lines"),
        super::scope(r)
    );
    if let Some(t) = super::truncation(r) {
        let _ = writeln!(o, "{} {t}", st.bold("Warning:"));
    }
    if let Some(d) = &r.diagnosis {
        let p = &d.primary;
        let _ = writeln!(o);
        let _ = writeln!(o, "{} {}", st.bold("Verdict:"), p.headline);
        let _ = writeln!(
            o,
            "{}",
            st.dim(&format!(
                "  ({}, confidence {:.0}%)",
                kind_name(p.kind),
                p.confidence * 100.0
            ))
        );
        if !p.evidence.is_empty() {
            let _ = writeln!(o, "\n{}", st.bold("Evidence"));
            for e in &p.evidence {
                let _ = writeln!(o, "  - {}{}", e.statement, lines_ref(&e.lines));
            }
        }
        if !p.actions.is_empty() {
            let _ = writeln!(o, "\n{}", st.bold("What to change"));
            for (i, a) in p.actions.iter().enumerate() {
                let _ = writeln!(o, "  {}. {}", i + 1, st.accent(&a.flag));
                let _ = writeln!(o, "     {}", a.why);
                if !a.effect.is_empty() {
                    let _ = writeln!(o, "     Expected: {}", a.effect);
                }
            }
        }
        for f in d.findings.iter().skip(1) {
            let _ = writeln!(o, "\n{} {}", st.bold("Also:"), f.headline);
            // Evidence already shown under the verdict is not repeated.
            let fresh = f.evidence.iter().filter(|e| !p.evidence.contains(e));
            for e in fresh.take(2) {
                let _ = writeln!(o, "  - {}{}", e.statement, lines_ref(&e.lines));
            }
            let shown: Vec<&str> = p.actions.iter().map(|a| a.flag.as_str()).collect();
            for a in f
                .actions
                .iter()
                .filter(|a| !shown.contains(&a.flag.as_str()))
                .take(2)
            {
                let _ = writeln!(o, "  → {}: {}", st.accent(&a.flag), a.why);
            }
        }
    }
    if let Some(rc) = &r.reconciliation {
        let _ = writeln!(o, "\n{}", st.bold("Client versus server"));
        for line in super::reconcile::explain(rc) {
            let _ = writeln!(o, "  {line}");
        }
    }
    if let Some(rf) = &r.roofline {
        let _ = writeln!(o, "\n{}", st.bold("Roofline"));
        for line in super::roofline::lines(rf) {
            let _ = writeln!(o, "  {line}");
        }
    }
    let rows = summary_rows(r);
    if !rows.is_empty() {
        let _ = writeln!(o, "\n{}", st.bold("Figures (all ranks combined)"));
        let _ = writeln!(
            o,
            "  {:<20} {:>10} {:>10} {:>10} {:>10}",
            "", "mean", "p50", "p90", "max"
        );
        for (label, d, f) in rows {
            let _ = writeln!(
                o,
                "  {:<20} {:>10} {:>10} {:>10} {:>10}",
                label,
                f(d.mean),
                f(d.p50),
                f(d.p90),
                f(d.max)
            );
        }
    }
    let _ = writeln!(
        o,
        "  busy {} · idle {} · retractions/preemptions {}{}",
        duration(r.busy_seconds),
        duration(r.idle_seconds),
        r.summary.retractions,
        super::prefill_time(r)
    );
    let c = &r.config;
    let mut cfg = Vec::new();
    if let Some(v) = c.kv_capacity_tokens {
        cfg.push(format!("KV pool {} tokens", num(v as f64)));
    }
    if let Some(v) = c.max_running_requests {
        cfg.push(format!("max running {}", num(v as f64)));
    }
    if let Some(v) = c.mem_fraction_static {
        cfg.push(format!("mem_fraction_static {v}"));
    }
    if let Some(v) = c.gpu_memory_utilization {
        cfg.push(format!("gpu_memory_utilization {v}"));
    }
    if let Some(v) = c.chunked_prefill_size {
        cfg.push(format!("chunked prefill {v}"));
    }
    if !cfg.is_empty() {
        let _ = writeln!(o, "  config: {}", cfg.join(", "));
    }
    let runs = super::run_rows(r);
    if !runs.is_empty() {
        let _ = writeln!(
            o,
            "\n{} {}",
            st.bold("Server runs"),
            st.dim("(* the judged run: the figures above are its own; means)")
        );
        for row in std::iter::once(super::RUN_COLUMNS.map(String::from)).chain(runs) {
            let _ = writeln!(
                o,
                "  {:<5} {:<15} {:>9} {:>10} {:>8} {:>8} {:>10}",
                row[0], row[1], row[2], row[3], row[4], row[5], row[6]
            );
        }
    }
    let i = &r.input;
    let mut notes = Vec::new();
    if i.damaged_stat_lines > 0 {
        notes.push(format!(
            "{} read in part",
            super::count(
                i.damaged_stat_lines as f64,
                "damaged stats line",
                "damaged stats lines"
            )
        ));
    }
    if i.unrecognized_lines > 0 {
        notes.push(format!(
            "{} not recognised",
            super::count(i.unrecognized_lines as f64, "line", "lines")
        ));
    }
    if i.joined_wrapped_lines > 0 {
        notes.push(format!(
            "{} joined",
            super::count(
                i.joined_wrapped_lines as f64,
                "wrapped line",
                "wrapped lines"
            )
        ));
    }
    if i.json_records > 0 {
        notes.push(format!(
            "{} read from JSON records",
            super::count(i.json_records as f64, "line", "lines")
        ));
    }
    if i.joined_pieces > 0 {
        notes.push(format!(
            "{} of lines over 16 KiB joined back",
            super::count(i.joined_pieces as f64, "piece", "pieces")
        ));
    }
    if i.glued_records > 0 {
        notes.push(format!(
            "{} split from run-together lines",
            super::count(i.glued_records as f64, "record", "records")
        ));
    }
    if let Some(o) = &i.other_server {
        notes.push(format!(
            "{} of {} server, the first at line {}",
            super::count(o.lines as f64, "line", "lines"),
            o.a_name,
            o.first_line
        ));
    }
    if !notes.is_empty() {
        let _ = writeln!(o, "  {}", st.dim(&format!("input: {}", notes.join("; "))));
    }
    for x in r.diagnosis.iter().flat_map(|d| &d.not_assessed) {
        let _ = writeln!(
            o,
            "  {}",
            st.dim(&format!("not assessed ({}): {}", x.check, x.why))
        );
    }
    o
}

pub(crate) fn lines_ref(lines: &[u64]) -> String {
    match lines {
        [] => String::new(),
        [one] => format!(" (line {one})"),
        many => format!(
            " (lines {})",
            many.iter()
                .take(4)
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

pub(crate) fn kind_name(k: crate::report::Kind) -> &'static str {
    k.as_str()
}
