//! The rules: each kind's condition, confidence, headline and evidence.

use super::actions;
use super::window::{steady, Window};
use super::{Evidence, Facts, Finding, Kind};
use crate::model::EventKind;
use crate::render::{count, num, pct};
use crate::report::{LineExample, Report};
use crate::round::{dec, sig};
use crate::whatif::Model;

/// Everything the rules look at, computed once.
pub struct Ctx<'a> {
    pub r: &'a Report,
    pub w: Window,
    pub facts: Facts,
    pub sglang: bool,
    pub stat_lines: u64,
    pub has_decode: bool,
    pub prefill_lines: u64,
    pub decode_lines: u64,
    /// The running-request cap, configured or seen as a hard plateau.
    pub cap: Option<f64>,
    pub cap_inferred: bool,
    pub model: Option<Model>,
}

impl<'a> Ctx<'a> {
    pub fn new(r: &'a Report) -> Ctx<'a> {
        let w = steady(r);
        let k = &r.input.stat_lines_by_kind;
        let (stat_lines, decode_lines, prefill_lines) = match r.runs.iter().find(|x| x.analyzed) {
            // Of several server runs, the judged one's lines.
            Some(run) => (run.stat_lines, run.decode_lines, run.prefill_lines),
            None => (
                r.input.stat_lines + r.input.damaged_stat_lines,
                k.get("decode").copied().unwrap_or(0) + k.get("interval").copied().unwrap_or(0),
                k.get("prefill").copied().unwrap_or(0),
            ),
        };
        let has_decode = r.summary.gen_throughput_tok_s.is_some();
        let sglang = r.engine == "sglang";
        let run = w.running.unwrap_or(0.0);
        let capacity = r.config.kv_capacity_tokens.map(|v| v as f64);
        let kv_per_request = match (w.kv_usage, capacity) {
            (Some(u), Some(c)) if run > 0.0 && u > 0.0 => Some(u * c / run),
            _ if run > 0.0 => r
                .summary
                .kv_tokens
                .map(|d| d.mean / run)
                .filter(|v| *v > 0.0),
            _ => None,
        };
        let (cap, cap_inferred) = running_cap(r, &w);
        let busy_min = (r.busy_seconds / 60.0).max(1.0 / 60.0);
        let input = w
            .input_tok_s
            .or(r.summary.input_throughput_tok_s.map(|d| d.mean));
        let facts = Facts {
            steady_start_s: Some(dec(w.start_s, 1)),
            steady_end_s: Some(dec(w.end_s, 1)),
            server_gen_tok_s: w.gen_tok_s.map(sig),
            running_requests: w.running.map(sig),
            queued_requests: w.queued.map(sig),
            kv_usage: w.kv_usage.map(|v| dec(v, 4)),
            per_request_tok_s: w
                .gen_tok_s
                .zip(w.running)
                .filter(|(_, n)| *n > 0.0)
                .map(|(g, n)| sig(g / n)),
            kv_tokens_per_request: kv_per_request.map(sig),
            pool_holds_requests: capacity.zip(kv_per_request).map(|(c, k)| sig(c / k)),
            prefill_time_share: None,
            idle_fraction: (r.span_seconds > 0.0).then(|| dec(r.idle_seconds / r.span_seconds, 4)),
            // A rate needs time to spread over: none without busy time, and at least a minute.
            retractions_per_minute: (r.summary.retractions > 0 && r.busy_seconds > 0.0)
                .then(|| sig(r.summary.retractions as f64 / busy_min.max(1.0))),
            // SGLang prints a prefill line per batch, its rate over the gap since the
            // last one: averaged over the lines it says how fast prefill runs, not
            // how much of the work it is. The token counts say that, given enough
            // decode lines to sum generated tokens over. vLLM's interval lines give
            // both rates over the same interval.
            prefill_token_share: prefill_volume_share(r, sglang, decode_lines).or_else(|| {
                input
                    .zip(w.gen_tok_s)
                    .filter(|(i, g)| i + g > 0.0)
                    .map(|(i, g)| dec(i / (i + g), 4))
            }),
            warmup_s: Some(dec(w.warmup_s, 1)),
            drain_s: Some(dec(w.drain_s, 1)),
            running_cap: cap,
        };
        Ctx {
            r,
            facts,
            sglang,
            stat_lines,
            has_decode,
            prefill_lines,
            decode_lines,
            cap,
            cap_inferred,
            model: Model::fit(r),
            w,
        }
    }

    pub fn run(&self) -> f64 {
        self.w.running.unwrap_or(0.0)
    }
    pub fn queued(&self) -> f64 {
        self.w.queued.unwrap_or(0.0)
    }
    pub fn kv(&self) -> Option<f64> {
        self.w.kv_usage
    }
    /// Requests wait for a good part of the judged window.
    pub fn waiting(&self) -> bool {
        let q = self.queued();
        q >= 1.0_f64.max(0.15 * self.run()) && self.w.queue_share.unwrap_or(0.0) >= 0.3
    }
    /// KV usage above which a queue means the pool stops admission. SGLang
    /// reserves room for running requests' future tokens, so its pool is full
    /// well before `token usage` reaches 1.
    pub fn kv_bound_threshold(&self) -> f64 {
        if self.sglang {
            // The reservation is for future output tokens: large when outputs are long
            // (the threshold drops to 0.5), small when prompts dwarf outputs (0.85).
            let share = self.facts.prefill_token_share.unwrap_or(0.0);
            0.5 + 0.35 * ((share - 0.5) / 0.45).clamp(0.0, 1.0)
        } else {
            0.75
        }
    }
    /// The pool is all but full (usage as printed, reservations aside).
    pub fn kv_tight(&self) -> bool {
        self.kv().is_some_and(|u| u >= 0.85)
    }
    pub fn at_cap(&self) -> bool {
        match (self.cap, self.w.running_max) {
            (Some(c), Some(m)) => m >= 0.95 * c && self.w.running_p50.unwrap_or(0.0) >= 0.85 * c,
            _ => false,
        }
    }
    pub fn line(&self) -> Vec<u64> {
        self.w.line.into_iter().collect()
    }
}

/// The configured cap when the run reaches it, else a hard plateau at a round number.
fn running_cap(r: &Report, w: &Window) -> (Option<f64>, bool) {
    if let Some(c) = r.config.max_running_requests {
        // The cap is per scheduler: each SGLang DP rank and each vLLM engine has its
        // own, while the running count is summed over them.
        let ranks = r
            .sources
            .iter()
            .filter(|s| !s.source.is_empty() && s.source != "aggregated")
            .count()
            .max(1);
        return (Some(c as f64 * ranks as f64), false);
    }
    let (Some(max), Some(p50)) = (w.running_max, w.running_p50) else {
        return (None, false);
    };
    let round = max >= 8.0 && (max.fract() == 0.0) && (max as u64) % 8 == 0;
    let flat = p50 >= 0.97 * max;
    let queue = w.queued.unwrap_or(0.0) >= 1.0 && w.queue_share.unwrap_or(0.0) >= 0.5;
    let kv_spare = w.kv_usage.is_none_or(|u| u < 0.6);
    if round && flat && queue && kv_spare {
        (Some(max), true)
    } else {
        (None, false)
    }
}

/// Prompt tokens ÷ (prompt + generated tokens), from the counts: SGLang logs
/// only, with 10 or more decode lines to estimate the generated tokens from.
fn prefill_volume_share(r: &Report, sglang: bool, decode_lines: u64) -> Option<f64> {
    let s = &r.summary;
    let (p, g) = (s.prefill_tokens as f64, s.generated_tokens_estimate);
    (sglang && decode_lines >= 10 && p > 0.0 && g > 0.0).then(|| dec(p / (p + g), 4))
}

fn ev(statement: String, lines: Vec<u64>) -> Evidence {
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
fn throughput_evidence(c: &Ctx) -> Vec<Evidence> {
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
                crate::render::duration(c.w.warmup_s),
                crate::render::duration(c.w.drain_s)
            ),
            Vec::new(),
        ));
    }
    v
}

/// `56 requests run while` (`1 request runs while`).
fn runs_while(n: f64) -> String {
    if num(n) == "1" {
        "1 request runs while".into()
    } else {
        format!("{} requests run while", num(n))
    }
}

fn concurrency_evidence(c: &Ctx) -> Evidence {
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
    let running = match c.w.running {
        Some(r) => runs_while(r),
        // Damaged or abbreviated lines can lose the running count: say so, not 0.
        None => "the running count is not in the log;".into(),
    };
    ev(
        format!("{running} {} wait{share}{peak}", num(c.queued())),
        lines,
    )
}

fn kv_evidence(c: &Ctx) -> Option<Evidence> {
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

fn few_lines_note(c: &Ctx) -> Option<Evidence> {
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

fn confidence(c: &Ctx, v: f64) -> f64 {
    let v = if c.stat_lines < 3 { v.min(0.45) } else { v };
    dec(v.clamp(0.0, 0.99), 2)
}

/// The other inference server whose log this is, when one was recognised.
fn other_server_evidence(c: &Ctx) -> Option<Evidence> {
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

/// Why a vLLM log that says it turned its stats off (`line`) holds none, and what to do.
pub fn stats_disabled_why(line: &LineExample) -> &'static str {
    if line.text.contains("api_server_count") {
        "vLLM turned its stats lines off because it runs more than one API server (--api-server-count above 1), so the log cannot show its queue or KV cache: read its Prometheus /metrics endpoint instead, or repeat the run with one API server to get its `Avg prompt throughput … Running: … reqs` lines"
    } else {
        "vLLM was started with --disable-log-stats, so it prints no `Avg prompt throughput … Running: … reqs` lines and the log cannot show its queue or KV cache: start it without that flag, or read its Prometheus /metrics endpoint"
    }
}

/// The verdict on a log without stats lines: why, when the log says.
fn no_stats_headline(c: &Ctx) -> String {
    let lines = count(c.r.input.lines as f64, "line", "lines");
    if c.r.input.stats_disabled.is_some() {
        format!("The server turned its stats lines off: none in {lines} read")
    } else if let Some(o) = &c.r.input.other_server {
        format!(
            "This looks like {} log: no SGLang or vLLM scheduler stats lines in {lines} read",
            o.a_name
        )
    } else {
        format!("No scheduler stats lines in {lines} read: nothing to judge throughput by")
    }
}

/// What was read instead of stats lines, and where stats lines come from.
fn no_stats_evidence(c: &Ctx) -> Evidence {
    if let Some(d) = &c.r.input.stats_disabled {
        return ev(
            format!("{} (line {}: {})", stats_disabled_why(d), d.line, d.text),
            vec![d.line],
        );
    }
    let hint = if c.r.input.other_server.is_some() {
        "batchlens reads SGLang `Decode batch` lines and vLLM `Avg prompt throughput … Running: … reqs` lines"
    } else if c.r.engine == "vllm" {
        "vLLM prints `Avg prompt throughput … Running: … reqs` lines every 5–10 s while serving (not with --disable-log-stats or several API servers) — make sure the log covers a period with load and INFO-level logging"
    } else {
        "SGLang prints `Decode batch` lines and vLLM `Avg prompt throughput … Running: … reqs` lines while serving — make sure the log covers a period with load and INFO-level logging"
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

pub fn findings(c: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    let retractions = c.r.summary.retractions;
    if c.stat_lines == 0 {
        if retractions > 0 {
            out.push(retraction(c, 0.55));
        } else {
            out.push(Finding {
                kind: Kind::InsufficientData,
                confidence: 0.9,
                headline: no_stats_headline(c),
                evidence: other_server_evidence(c)
                    .into_iter()
                    .chain([no_stats_evidence(c)])
                    .collect(),
                actions: Vec::new(),
            });
        }
        return out;
    }
    let waiting = c.waiting();
    let kv = c.kv();
    let kv_full = kv.is_some_and(|u| u >= 0.9);
    let kv_thr = c.kv_bound_threshold();
    let at_cap = c.at_cap();

    if retractions > 0 {
        let rate = c.facts.retractions_per_minute.unwrap_or(0.0);
        // About one retraction a minute is normal (SGLang's guide); many more is the problem itself.
        let mut conf = if rate < 1.0 {
            0.45
        } else if rate < 5.0 {
            0.6 + 0.04 * rate
        } else {
            0.85 + (rate / 200.0).min(0.1)
        };
        if kv_full || c.r.summary.kv_usage.is_some_and(|d| d.max >= 0.97) {
            conf += 0.1;
        }
        out.push(retraction(c, confidence(c, conf)));
    }

    if waiting && at_cap && !c.kv_tight() {
        let conf = if c.cap_inferred { 0.7 } else { 0.85 };
        out.push(running_limit(c, confidence(c, conf)));
    } else if waiting && at_cap {
        // Both bind: the cap is reached with the pool all but full. A higher cap
        // admits only what the pool can still hold, so the one with less room
        // beyond the current batch leads.
        let pool_room = c
            .facts
            .pool_holds_requests
            .zip(c.cap)
            .map(|(h, cap)| h / cap);
        let cap_first = pool_room.is_some_and(|r| r >= 1.2);
        let (kv_conf, cap_conf) = if cap_first { (0.6, 0.8) } else { (0.8, 0.6) };
        out.push(kv_capacity(c, confidence(c, kv_conf)));
        out.push(running_limit(c, confidence(c, cap_conf)));
    }

    if waiting && !at_cap && kv.is_some_and(|u| u >= kv_thr) {
        let u = kv.unwrap_or(0.0);
        let conf = 0.65
            + 0.25 * ((u - kv_thr) / (1.0 - kv_thr)).clamp(0.0, 1.0)
            + 0.05 * c.w.queue_share.unwrap_or(0.0);
        out.push(kv_capacity(c, confidence(c, conf)));
    } else if kv_full && !waiting {
        out.push(kv_capacity(c, confidence(c, 0.6)));
    }

    let prefill_dominated = c.prefill_lines > c.decode_lines
        || c.facts.prefill_token_share.is_some_and(|s| s > 0.5)
        || c.r
            .summary
            .input_throughput_tok_s
            .zip(c.r.summary.gen_throughput_tok_s)
            .is_some_and(|(i, g)| i.mean > 2.0 * g.mean);
    let stalled = c.has_decode
        && c.run() > 0.0
        && c.r
            .summary
            .gen_throughput_tok_s
            .is_some_and(|g| g.max < 1.0);
    let starved = c.has_decode && c.stat_lines >= 20 && prefill_time_dominates(c);
    if starved && waiting {
        // Prompts dwarf outputs: prefill takes nearly all the time, so decode is starved
        // and requests pile up (and hold the pool) whatever the pool's size.
        out.push(prefill(c, confidence(c, 0.95)));
    } else if waiting && !at_cap && kv.is_none_or(|u| u < kv_thr) {
        let conf = 0.6 + if prefill_dominated { 0.2 } else { 0.0 };
        out.push(prefill(c, confidence(c, conf)));
    } else if !c.has_decode && c.prefill_lines > 0 {
        out.push(prefill(c, confidence(c, if waiting { 0.7 } else { 0.55 })));
        if !waiting && !kv_full {
            // Prefill lines only, nothing waiting: with several requests running the client is the limit.
            let conf = 0.5 + if c.run() >= 4.0 { 0.15 } else { 0.0 };
            out.push(client(c, confidence(c, conf)));
        }
    } else if stalled {
        out.push(prefill(c, confidence(c, 0.5)));
    } else if starved {
        // Nothing waits, but long prompts take most of the server's time: decode is starved.
        out.push(prefill(c, confidence(c, 0.7)));
    } else if c.has_decode && c.stat_lines >= 20 && prompt_heavy(c) {
        // Beside what binds, prefill is a large part of the work.
        out.push(prefill(c, confidence(c, 0.6)));
    }

    let per_req = c.facts.per_request_tok_s;
    let mut saturated = 0.0;
    // SGLang's gen throughput includes time spent in prefill, so only a
    // decode-dominated log can show decode itself is slow.
    let prefill_share = c.facts.prefill_token_share.unwrap_or(0.0);
    let decode_dominated =
        c.decode_lines >= 5 && (prefill_share < 0.6 || c.decode_lines >= 2 * c.prefill_lines);
    if !waiting && c.has_decode && decode_dominated && !kv_full && c.run() >= 8.0 {
        if per_req.is_some_and(|p| p < 5.0) {
            saturated = 0.6
                + if per_req.is_some_and(|p| p < 2.0) {
                    0.1
                } else {
                    0.0
                };
        } else if let Some(m) = c.model.as_ref().filter(|m| m.fitted) {
            let share = m.b * m.running / m.step(m.running);
            if share >= 0.6 {
                saturated = 0.5;
            }
        }
    }
    if saturated > 0.0 {
        out.push(decode_saturated(c, confidence(c, saturated)));
    }

    if c.has_decode && !waiting && !kv_full && !stalled {
        let mut conf: f64 = 0.6;
        let room = c.cap.or(c.facts.pool_holds_requests);
        if room.is_some_and(|h| c.run() < 0.5 * h) || c.run() <= 4.0 {
            conf += 0.15;
        }
        if c.facts.idle_fraction.is_some_and(|f| f > 0.2) {
            conf += 0.1;
        }
        if c.w.drain_s > 0.15 * c.r.span_seconds {
            conf += 0.05;
        }
        if saturated >= 0.55 || (c.stat_lines >= 20 && prefill_time_dominates(c)) {
            conf = conf.min(0.5);
        }
        out.push(client(c, confidence(c, conf.min(0.9))));
    }

    if out.is_empty() {
        out.push(Finding {
            kind: Kind::InsufficientData,
            confidence: 0.5,
            headline: match (c.w.running, c.w.queued) {
                (Some(run), Some(q)) => format!(
                    "{} stats lines, but no known limit fits them ({} running, {} waiting in the judged window)",
                    c.stat_lines,
                    num(run),
                    num(q)
                ),
                _ => format!(
                    "{} stats lines, but too little in them to say what binds (no running/queue figures in the judged window)",
                    c.stat_lines
                ),
            },
            evidence: few_lines_note(c).into_iter().collect(),
            actions: Vec::new(),
        });
    } else if let Some(n) = few_lines_note(c) {
        out.push(Finding {
            kind: Kind::InsufficientData,
            confidence: 0.3,
            headline: format!(
                "Only {}: a snapshot, not a run",
                count(c.stat_lines as f64, "stats line", "stats lines")
            ),
            evidence: vec![n],
            actions: Vec::new(),
        });
    }
    out
}

/// Prompt tokens outnumber generated ones so far that prefill must take most of
/// the time, even though a prompt token is much cheaper than a decode step.
/// Prompt tokens so far beyond generated ones that prefill takes nearly all the time.
fn prefill_time_dominates(c: &Ctx) -> bool {
    c.facts.prefill_token_share.unwrap_or(0.0) > 0.95
}

/// Prompts dwarf outputs, though prefill need not take most of the time: prompt
/// tokens go through several times faster than generated ones. (Line counts do
/// not show time: SGLang logs every prefill batch but only every 40th decode step.)
fn prompt_heavy(c: &Ctx) -> bool {
    c.facts.prefill_token_share.unwrap_or(0.0) > 0.9 && c.prefill_lines >= 5 * c.decode_lines
}

fn finish(c: &Ctx, mut evidence: Vec<Evidence>) -> Vec<Evidence> {
    if let Some(n) = few_lines_note(c) {
        evidence.push(n);
    }
    evidence
}

fn retraction(c: &Ctx, confidence: f64) -> Finding {
    let s = &c.r.summary;
    let lines: Vec<u64> =
        c.r.events
            .first
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::Retraction { .. } | EventKind::Preemption { .. }
                )
            })
            .map(|e| e.line)
            .take(4)
            .collect();
    let rate = c.facts.retractions_per_minute;
    let per_min = |fmt: &str| rate.map(|r| fmt.replace("{}", &num(r))).unwrap_or_default();
    let what = if c.sglang { "retracted" } else { "preempted" };
    let mut evidence = throughput_evidence(c);
    evidence.push(ev(
        format!(
            "{} {} event{}{}, {} request(s) {}: their KV is freed, their tokens recomputed, and they go back to the queue",
            num(s.retractions as f64),
            if c.sglang { "retraction" } else { "preemption" },
            if s.retractions == 1 { "" } else { "s" },
            per_min(" ({} per minute of busy time)"),
            num(s.retracted_requests.max(s.retractions) as f64),
            what
        ),
        lines,
    ));
    if let Some(d) = s.kv_usage {
        evidence.push(ev(
            format!("KV usage peaks at {} (mean {})", pct(d.max), pct(d.mean)),
            c.line(),
        ));
    }
    if c.sglang && rate.is_some_and(|r| r < 1.0) {
        evidence.push(ev(
            "SGLang's tuning guide: about one retraction per minute is acceptable; more means admission is too optimistic".to_string(),
            Vec::new(),
        ));
    }
    Finding {
        kind: Kind::KvRetraction,
        confidence,
        headline: format!(
            "The KV pool overflows: running requests were {} {}{}, wasting work and delaying them",
            what,
            if s.retractions == 1 {
                "once".to_string()
            } else {
                format!("{} times", num(s.retractions as f64))
            },
            per_min(" ({} per minute)")
        ),
        evidence: finish(c, evidence),
        actions: actions::retraction(c),
    }
}

fn running_limit(c: &Ctx, confidence: f64) -> Finding {
    let cap = c.cap.unwrap_or(c.run());
    let mut evidence = throughput_evidence(c);
    evidence.push(concurrency_evidence(c));
    evidence.push(ev(
        if c.cap_inferred {
            format!(
                "Running stays flat at {} — a hard ceiling (e.g. a max_running_requests / max_num_seqs setting, or speculative decoding's small default) — while requests wait",
                num(cap)
            )
        } else {
            format!("The configured cap on running requests is {}, and the run sits at it", num(cap))
        },
        c.r.config.lines.iter().take(1).copied().chain(c.r.timeline.max_running_line).collect(),
    ));
    if let Some(e) = kv_evidence(c) {
        evidence.push(e);
    }
    Finding {
        kind: Kind::RunningRequestLimit,
        confidence,
        headline: format!(
            "{} requests run — the cap of {} — while {} wait with KV {} used: the running-request limit binds, {}",
            num(c.run()),
            num(cap),
            num(c.queued()),
            c.kv().map(pct).unwrap_or_else(|| "not".into()),
            if c.kv_tight() {
                "and the pool is nearly full too"
            } else {
                "not memory"
            }
        ),
        evidence: finish(c, evidence),
        actions: actions::running_limit(c),
    }
}

fn kv_capacity(c: &Ctx, confidence: f64) -> Finding {
    let kv = c.kv().unwrap_or(0.0);
    let mut evidence = throughput_evidence(c);
    evidence.push(concurrency_evidence(c));
    if let Some(e) = kv_evidence(c) {
        evidence.push(e);
    }
    if c.sglang && kv < 0.9 && c.waiting() {
        evidence.push(ev(
            format!(
                "Usage sits at {} yet nothing more is admitted: SGLang admits a request only if the pool can also hold the future tokens it reserves for running requests (new_token_ratio × remaining max_new_tokens), so the pool is full once reservations are counted",
                pct(kv)
            ),
            c.line(),
        ));
    }
    if let Some(m) = c.r.config.mem_fraction_static {
        let avail =
            c.r.config
                .available_gpu_mem_gb
                .map(|a| format!(", {a} GB of GPU memory left after the pool"))
                .unwrap_or_default();
        evidence.push(ev(
            format!("mem_fraction_static = {m}{avail}"),
            c.r.config.lines.iter().take(2).copied().collect(),
        ));
    }
    let headline = if c.waiting() {
        format!(
            "The KV cache pool binds: {} {} wait, and the pool ({} used{}) cannot admit more",
            runs_while(c.run()),
            num(c.queued()),
            pct(kv),
            if c.sglang { " plus reserved" } else { "" }
        )
    } else {
        format!(
            "The KV cache is {} full with {} running requests: the pool, not compute, caps how many requests fit",
            pct(kv),
            num(c.run())
        )
    };
    Finding {
        kind: Kind::KvCacheCapacity,
        confidence,
        headline,
        evidence: finish(c, evidence),
        actions: actions::kv_capacity(c),
    }
}

fn prefill(c: &Ctx, confidence: f64) -> Finding {
    let mut evidence = throughput_evidence(c);
    let s = &c.r.summary;
    if c.queued() > 0.0 || c.run() > 0.0 {
        evidence.push(concurrency_evidence(c));
    }
    if let Some(i) = s.input_throughput_tok_s {
        let gen = s
            .gen_throughput_tok_s
            .map(|g| format!(" vs {} tok/s generated", num(g.mean)))
            .unwrap_or_default();
        evidence.push(ev(
            format!(
                "Prompt processing runs at {} tok/s on average{}",
                num(i.mean),
                gen
            ),
            c.line(),
        ));
    }
    if c.prefill_lines > 0 {
        evidence.push(ev(
            format!(
                "{} and {}; {} prompt tokens computed, {} reused from the prefix cache",
                count(c.prefill_lines as f64, "prefill batch", "prefill batches"),
                count(c.decode_lines as f64, "decode line", "decode lines"),
                num(s.prefill_tokens as f64),
                num(s.cached_prompt_tokens as f64)
            ),
            Vec::new(),
        ));
    }
    if let Some(e) = kv_evidence(c) {
        evidence.push(e);
    }
    let stalled =
        c.r.summary
            .gen_throughput_tok_s
            .is_some_and(|g| g.max < 1.0);
    let headline = if !c.has_decode {
        format!(
            "Prefill is all the log shows: {}, {} requests waiting on average, no decode lines — prompt processing is where the time goes",
            count(c.prefill_lines as f64, "prefill batch", "prefill batches"),
            num(c.queued())
        )
    } else if stalled {
        format!("Requests are running ({}) but almost no tokens are generated: a long prefill is in progress", num(c.run()))
    } else if c.stat_lines >= 20 && prefill_time_dominates(c) {
        format!(
            "Prefill takes most of the server's time: prompts outweigh generated tokens {}:1, so {} running requests decode at only {} tok/s each{}",
            num(c.facts.prefill_token_share.map(|s| s / (1.0 - s).max(1e-9)).unwrap_or(0.0)),
            num(c.run()),
            num(c.facts.per_request_tok_s.unwrap_or(0.0)),
            if c.waiting() {
                format!(" and {} requests wait", num(c.queued()))
            } else {
                String::new()
            }
        )
    } else {
        format!(
            "Admission is limited by prefill: {} requests wait while {} run and KV is only {} used",
            num(c.queued()),
            num(c.run()),
            c.kv().map(pct).unwrap_or_else(|| "lightly".into())
        )
    };
    Finding {
        kind: Kind::PrefillHeavy,
        confidence,
        headline,
        evidence: finish(c, evidence),
        actions: actions::prefill(c),
    }
}

fn decode_saturated(c: &Ctx, confidence: f64) -> Finding {
    let mut evidence = throughput_evidence(c);
    let per = c.facts.per_request_tok_s.unwrap_or(0.0);
    evidence.push(ev(
        format!(
            "{} requests share {} tok/s: {} tok/s per request",
            num(c.run()),
            num(c.w.gen_tok_s.unwrap_or(0.0)),
            num(per)
        ),
        c.line(),
    ));
    if let Some(m) = &c.model {
        evidence.push(ev(format!("Step-time model: {}", m.describe()), Vec::new()));
    }
    Finding {
        kind: Kind::DecodeSaturated,
        confidence,
        headline: format!(
            "Decode is saturated: {} running requests get {} tok/s each; a bigger batch would not add much — faster kernels, quantization or more GPUs would",
            num(c.run()),
            num(per)
        ),
        evidence: finish(c, evidence),
        actions: actions::decode_saturated(c),
    }
}

fn client(c: &Ctx, confidence: f64) -> Finding {
    let mut evidence = throughput_evidence(c);
    evidence.push(concurrency_evidence(c));
    if let Some(e) = kv_evidence(c) {
        evidence.push(e);
    }
    if let Some(f) = c.facts.idle_fraction.filter(|f| *f > 0.05) {
        let longest =
            c.r.timeline
                .idle_gaps
                .iter()
                .max_by(|a, b| a.seconds.total_cmp(&b.seconds));
        evidence.push(ev(
            format!(
                "The server sat idle {} of the time ({} silences over 30 s{})",
                pct(f),
                c.r.timeline.idle_gap_count,
                longest
                    .map(|g| format!(", the longest {}", crate::render::duration(g.seconds)))
                    .unwrap_or_default()
            ),
            c.r.timeline
                .idle_gaps
                .iter()
                .take(3)
                .map(|g| g.line)
                .collect(),
        ));
    }
    if c.w.drain_s > 0.15 * c.r.span_seconds {
        evidence.push(ev(
            format!(
                "The run ends with a {} drain: the queue is empty and running falls as the last requests finish",
                crate::render::duration(c.w.drain_s)
            ),
            Vec::new(),
        ));
    }
    if c.sglang {
        evidence.push(ev(
            "SGLang's tuning guide: #queue-req near 0 means the client submits too slowly; a healthy queue is 100–2000".to_string(),
            Vec::new(),
        ));
    }
    let idle_all = c.run() == 0.0 && c.queued() == 0.0;
    let headline = if idle_all {
        format!(
            "The server was idle: nothing ran or waited in {} stats lines",
            c.stat_lines
        )
    } else {
        format!(
            "{}: the server runs {} with KV {} used — the client does not send enough concurrent work",
            if c.queued() >= 0.5 {
                format!("Few requests wait ({} on average)", num(c.queued()))
            } else {
                "Nothing waits".to_string()
            },
            count(c.run(), "request", "requests"),
            c.kv().map(pct).unwrap_or_else(|| "lightly".into())
        )
    };
    Finding {
        kind: Kind::ClientUnderload,
        confidence,
        headline,
        evidence: finish(c, evidence),
        actions: actions::client(c),
    }
}
