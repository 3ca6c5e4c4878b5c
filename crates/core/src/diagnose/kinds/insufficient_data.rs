//! Nothing to judge by: a log without stats lines, and why it has none.

use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::ev;
use crate::report::{Evidence, LineExample};
use crate::text::num::count;

/// Why a vLLM log that says it turned its stats off (`line`) holds none, and what to do.
pub fn stats_disabled_why(line: &LineExample) -> &'static str {
    if line.text.contains("api_server_count") {
        "vLLM turned its stats lines off because it runs more than one API server (--api-server-count above 1), so the log cannot show its queue or KV cache: read its Prometheus /metrics endpoint instead, or repeat the run with one API server to get its `Avg prompt throughput … Running: … reqs` lines"
    } else {
        "vLLM was started with --disable-log-stats, so it prints no `Avg prompt throughput … Running: … reqs` lines and the log cannot show its queue or KV cache: start it without that flag, or read its Prometheus /metrics endpoint"
    }
}

/// The verdict on a log without stats lines: why, when the log says.
pub fn no_stats_headline(c: &Ctx) -> String {
    let lines = count(c.r.input.lines as f64, "line", "lines");
    if c.r.input.stats_disabled.is_some() {
        format!("The server turned its stats lines off: none in {lines} read")
    } else if let Some(o) = &c.r.input.other_server {
        format!(
            "This looks like {} log: no scheduler stats lines batchlens reads in {lines}",
            o.a_name
        )
    } else {
        format!("No scheduler stats lines in {lines} read: nothing to judge throughput by")
    }
}

/// What was read instead of stats lines, and where stats lines come from.
pub fn no_stats_evidence(c: &Ctx) -> Evidence {
    if let Some(d) = &c.r.input.stats_disabled {
        return ev(
            format!("{} (line {}: {})", stats_disabled_why(d), d.line, d.text),
            vec![d.line],
        );
    }
    let hint = if c.r.input.other_server.is_some() {
        "batchlens reads SGLang `Decode batch` lines, vLLM `Avg prompt throughput … Running: … reqs` lines, LMDeploy's `Avg thr (in/out) … Engine (running/waiting)` metrics lines and TensorRT-LLM's iteration stats"
    } else {
        c.p.stats_lines_hint.unwrap_or(
            "SGLang prints `Decode batch` lines and vLLM `Avg prompt throughput … Running: … reqs` lines while serving — make sure the log covers a period with load and INFO-level logging",
        )
    };
    ev(
        format!(
            "{} (startup, access log, …) and {}; {hint}",
            count(
                c.r.input.other_lines as f64,
                "known non-stats line",
                "known non-stats lines"
            ),
            count(
                c.r.input.unrecognized_lines as f64,
                "unrecognised line",
                "unrecognised lines"
            ),
        ),
        c.r.input
            .unrecognized_examples
            .iter()
            .map(|e| e.line)
            .take(3)
            .collect(),
    )
}
