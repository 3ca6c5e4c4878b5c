//! Evidence: the statements (with their line numbers) that findings cite.

use super::context::Ctx;
use crate::report::Evidence;
use crate::text::num::{count, num, pct};

// The insufficient-data kind's sentences, where the rules and the crate's face name them.
pub use super::kinds::insufficient_data::stats_disabled_why;
pub(super) use super::kinds::insufficient_data::{no_stats_evidence, no_stats_headline};

pub(super) fn ev(statement: String, lines: Vec<u64>) -> Evidence {
    let mut lines = lines;
    lines.sort_unstable();
    lines.dedup();
    Evidence { statement, lines }
}

/// Which run of several is judged, and how it compares with the one before
/// (a restart with other settings is the experiment the user ran).
fn runs_evidence(c: &Ctx) -> Option<Evidence> {
    let runs = &c.r.runs;
    let judged = runs.iter().position(|r| r.analyzed)?;
    let this = &runs[judged];
    let mut s = format!(
        "The log holds {} server runs (restarted at line{} {}); this diagnosis is of run {} (lines {}–{})",
        runs.len(),
        if runs.len() > 2 { "s" } else { "" },
        runs[1..]
            .iter()
            .map(|r| num(r.first_line as f64))
            .collect::<Vec<_>>()
            .join(", "),
        this.run,
        num(this.first_line as f64),
        num(this.last_line as f64),
    );
    if judged + 1 < runs.len() {
        let last = runs.last().expect("several runs");
        if last.stat_lines < crate::timeline::SHORT_RUN_LINES {
            s.push_str(&format!(
                ", as the last run has only {}",
                count(last.stat_lines as f64, "stats line", "stats lines")
            ));
        } else {
            s.push_str(", as asked");
        }
    }
    let brief = |r: &crate::report::RunSummary| {
        let mut b = format!("run {}", r.run);
        if let Some(g) = r.gen_throughput_tok_s_mean {
            b.push_str(&format!(": {} tok/s", num(g)));
        }
        if let (Some(run), Some(q)) = (r.running_requests_mean, r.queued_requests_mean) {
            b.push_str(&format!(", {} running, {} waiting", num(run), num(q)));
        }
        b
    };
    // Compared with the run before it (or, for the first, the one after).
    let (a, b) = if judged > 0 {
        (&runs[judged - 1], this)
    } else {
        (this, &runs[1])
    };
    s.push_str(&format!("; on average {} and {}", brief(a), brief(b)));
    let changes = b.config.changes_from(&a.config);
    if !changes.is_empty() {
        s.push_str(&format!(" (settings: {})", changes.join(", ")));
    }
    if let Some(rc) = &c.r.restart_check {
        let p = &rc.predicted;
        s.push_str(&format!(
            "; fitted on run {}, the what-if model predicted ~{} tok/s ({}–{}) with ~{} running for run {}'s settings and the same workload",
            rc.fitted_on_run,
            num(p.gen_throughput_tok_s),
            num(p.low),
            num(p.high),
            num(p.running_requests),
            rc.checked_run
        ));
        if let (Some(g), Some(n)) = (rc.measured_gen_tok_s, rc.measured_running_requests) {
            s.push_str(&format!(
                ", and it measured ~{} tok/s with ~{} running",
                num(g),
                num(n)
            ));
            if g < p.low && !c.waiting() {
                s.push_str(" — nothing waits in it, so its client, not the settings, set the pace");
            }
        }
    }
    let overlapping: Vec<String> = runs
        .iter()
        .filter(|r| r.starts_before_previous_ends)
        .map(|r| r.run.to_string())
        .collect();
    if !overlapping.is_empty() {
        s.push_str(&format!(
            ". Run {}'s clock starts before the run before it ended: more likely another server's log (or a rotated one) joined to this one than a restart",
            overlapping.join(", ")
        ));
    }
    let lines = runs[1..].iter().map(|r| r.first_line).collect();
    Some(ev(s, lines))
}

/// Evidence every finding starts from: what the server generates and how busy it is.
pub(super) fn throughput_evidence(c: &Ctx) -> Vec<Evidence> {
    let mut v: Vec<Evidence> = runs_evidence(c).into_iter().collect();
    if let Some(g) = c.w.gen_tok_s {
        let sustained =
            c.r.summary
                .sustained_gen_tok_s
                .map(|s| format!("; {} tok/s sustained over busy time", num(s)))
                .unwrap_or_default();
        v.push(ev(
            format!(
                "The server generates ~{} tok/s in the steady state{} (server-side figure from the scheduler's own lines; a client measuring end to end sees less — warm-up, drain, idle gaps)",
                num(g),
                sustained
            ),
            c.line(),
        ));
    }
    if !c.w.whole_run && (c.w.warmup_s > 0.0 || c.w.drain_s > 0.0) {
        v.push(ev(
            format!(
                "Judged window: {} s to {} s; warm-up ({}) and drain ({}) left out",
                num(c.w.start_s),
                num(c.w.end_s),
                crate::text::num::duration(c.w.warmup_s),
                crate::text::num::duration(c.w.drain_s)
            ),
            Vec::new(),
        ));
    }
    v
}

/// `56 requests run` (`1 request runs`).
fn runs(n: f64) -> String {
    if num(n) == "1" {
        "1 request runs".into()
    } else {
        format!("{} requests run", num(n))
    }
}

/// `56 requests run while` (`1 request runs while`).
pub(super) fn runs_while(n: f64) -> String {
    format!("{} while", runs(n))
}

pub(super) fn concurrency_evidence(c: &Ctx) -> Evidence {
    let mut lines = c.line();
    lines.extend(c.r.timeline.max_queued_line);
    let share =
        c.w.queue_share
            .map(|s| format!(" (requests waited in {} of the time)", pct(s)))
            .unwrap_or_default();
    let peak =
        c.r.summary
            .queued_requests
            .map(|d| format!("; peak queue {}", num(d.max)))
            .unwrap_or_default();
    // Damaged or abbreviated lines can lose either count: say so, not 0.
    if c.w.queued.is_none() {
        // No line of the log says how many wait (TensorRT-LLM's iteration log
        // before 2026, abbreviated lines).
        let running =
            c.w.running
                .map_or_else(|| "the running count is not in the log".into(), runs);
        return ev(format!("{running}; how many wait is not in the log"), lines);
    }
    let running = match c.w.running {
        Some(r) => runs_while(r),
        None => "the running count is not in the log;".into(),
    };
    ev(
        format!("{running} {} wait{share}{peak}", num(c.queued())),
        lines,
    )
}

pub(super) fn kv_evidence(c: &Ctx) -> Option<Evidence> {
    let kv = c.kv()?;
    let mut s = format!("KV cache usage {}", pct(kv));
    if let Some(cap) = c.r.config.kv_capacity_tokens {
        s.push_str(&format!(" of a {}-token pool", num(cap as f64)));
    }
    if let Some(k) = c.facts.kv_tokens_per_request {
        s.push_str(&format!(", ~{} tokens per running request", num(k)));
    }
    if let Some(h) = c.facts.pool_holds_requests {
        s.push_str(&format!(": the pool holds ~{} such requests", num(h)));
    }
    let mut lines = c.line();
    lines.extend(c.r.config.lines.iter().take(1));
    Some(ev(s, lines))
}

pub(super) fn few_lines_note(c: &Ctx) -> Option<Evidence> {
    (c.stat_lines < 3).then(|| {
        ev(
            format!(
                "Only {} in the log: a snapshot, not a run; confidence is low",
                count(c.stat_lines as f64, "stats line", "stats lines")
            ),
            Vec::new(),
        )
    })
}

/// The other inference server whose log this is, when one was recognised.
pub(super) fn other_server_evidence(c: &Ctx) -> Option<Evidence> {
    let o = c.r.input.other_server.as_ref()?;
    Some(ev(
        format!(
            "This looks like {} log ({} with its phrases, the first at line {}): {}",
            o.a_name,
            count(o.lines as f64, "line", "lines"),
            o.first_line,
            o.note
        ),
        vec![o.first_line],
    ))
}

pub(super) fn finish(c: &Ctx, mut evidence: Vec<Evidence>) -> Vec<Evidence> {
    if let Some(n) = few_lines_note(c) {
        evidence.push(n);
    }
    evidence
}
