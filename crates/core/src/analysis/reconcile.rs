//! Client-side versus server-side throughput.
//!
//! The server prints how fast it generates while it works (`G`, tokens/s); a
//! benchmark client divides the output tokens of completed requests by its whole
//! window (`C = U / W`). The two differ for reasons the log can show. With `B` the
//! server's busy time and `N` the tokens its stats lines account for, inside the
//! client's window `W`:
//!
//! ```text
//! G − C = G·I/W                  idle: the server waited for the client (I = idle time)
//!       + (G·B − N)/W            the busy server generated less than its steady rate:
//!                                  warm-up and drain (the batch fills and empties),
//!                                  retraction/preemption stalls (recomputing discarded work),
//!                                  the prefill before the first decode step
//!       + (N − U)/W              generated but not delivered (negative: each request's
//!                                  first token comes from prefill, which decode lines do not count)
//!       + what is left           unexplained
//! ```
//!
//! `G` is the **steady** rate: the time-weighted mean of the printed generation
//! throughput while the batch is at its plateau (running ≥ 90% of its typical
//! level) and no retraction is in progress — the figure a user reads off the
//! log's decode lines. Every part is in tokens/s of the client's window and
//! positive when it widens the gap; the parts plus `unexplained_tok_s` sum to
//! `server_gen_tok_s − client_tok_s` exactly. `gap_fraction` and
//! `unexplained_fraction` are relative to `server_gen_tok_s`.
//!
//! Pure: computed from the [`Report`] alone (its bucketed timeline, totals and
//! events) plus the client's figures.

use crate::report::{ClientFigures, Part, Point, Reconciliation};

use crate::report::Report;
use crate::text::num::num;
use crate::text::round::sig;
use crate::timeline::IDLE_GAP_S;

/// One time slice of the window, rebuilt from the chart buckets.
#[derive(Debug, Clone, Copy, Default)]
struct Slice {
    t: f64,
    busy: bool,
    gen: f64,
    running: Option<f64>,
    /// A decode/interval value was printed in this slice (not back-filled).
    printed: bool,
    retraction: bool,
}

/// Rebuilds a continuous per-bucket series. A silence shorter than an idle gap
/// between stats lines is busy time; a stats line's generation figure covers the
/// interval since the previous one, so buckets without one take the next printed
/// value (SGLang prints decode lines every 40 steps, vLLM every ~10 s).
fn slices(points: &[Point], w: f64) -> Vec<Slice> {
    let Some(last) = points.last() else {
        return Vec::new();
    };
    let n = (last.t_s / w).round() as usize + 1;
    let mut s = vec![Slice::default(); n];
    for (i, sl) in s.iter_mut().enumerate() {
        sl.t = i as f64 * w;
    }
    let mut have = vec![false; n];
    let mut nothing = vec![false; n];
    for p in points {
        let i = ((p.t_s / w).round() as usize).min(n - 1);
        let sl = &mut s[i];
        sl.retraction |= p.retractions > 0;
        if p.samples == 0 {
            continue;
        }
        have[i] = true;
        sl.running = p.running;
        if let Some(g) = p.gen_tok_s {
            sl.gen = g;
            sl.printed = true;
        }
        nothing[i] = p.running.is_some_and(|r| r < 0.5)
            && p.queued.unwrap_or(0.0) < 0.5
            && p.gen_tok_s.unwrap_or(0.0) <= 0.0
            && p.input_tok_s.unwrap_or(0.0) <= 0.0;
        sl.busy = !nothing[i];
    }
    // Silences: busy when short and not between two idle lines.
    let mut prev: Option<usize> = None;
    for j in 0..n {
        if !have[j] {
            continue;
        }
        if let Some(p) = prev {
            let short = (j - p) as f64 * w <= IDLE_GAP_S;
            let busy = short && !(nothing[p] && nothing[j]);
            for sl in &mut s[p + 1..j] {
                sl.busy = busy;
            }
        }
        prev = Some(j);
    }
    // Running counts: back-fill from the next bucket that has one.
    let mut next_run = None;
    for sl in s.iter_mut().rev() {
        match sl.running {
            Some(r) => next_run = Some(r),
            None => sl.running = next_run,
        }
    }
    // Generation figures: back-fill busy buckets from the next printed value.
    let mut next: Option<f64> = None;
    let first_printed = s.iter().position(|x| x.printed);
    for i in (0..n).rev() {
        if s[i].printed {
            next = Some(s[i].gen);
            continue;
        }
        if first_printed.is_some_and(|f| i > f) && s[i].busy {
            s[i].gen = next.unwrap_or(0.0);
        }
    }
    s
}

fn quantile(mut v: Vec<f64>, q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[((v.len() - 1) as f64 * q).round() as usize])
}

/// Reconciles the client's figure with the server's log. `None` when the client
/// gave no output throughput or the log has no generation throughput.
pub fn reconcile(report: &Report, client: &ClientFigures) -> Option<Reconciliation> {
    let mut notes = Vec::new();
    // A request rate alone becomes tokens/s with the request log's tokens per request.
    let c = match client.output_rate() {
        Some(c) => c,
        None => {
            let rps = client.requests_per_s?;
            let per = report
                .requests
                .as_ref()?
                .completion_tokens_per_request?
                .mean;
            notes.push(format!(
                "The client gave requests/s only: {rps} req/s × {per:.0} output tokens per request (from the request log) = {:.0} tok/s.",
                rps * per
            ));
            rps * per
        }
    };
    let w = report.timeline.bucket_seconds.max(1e-9);
    let mut all = slices(&report.timeline.points, w);
    if !all.iter().any(|s| s.printed && s.gen > 0.0) {
        return None;
    }
    // Interval lines (vLLM) report the seconds before them: the first one covers an
    // interval that starts before the log's first line. Put it back.
    let kinds = &report.input.stat_lines_by_kind;
    let lead = if kinds.contains_key("interval") && !kinds.contains_key("decode") {
        let printed: Vec<usize> = (0..all.len()).filter(|&i| all[i].printed).collect();
        let gaps: Vec<f64> = printed
            .windows(2)
            .map(|p| (p[1] - p[0]) as f64)
            .filter(|g| *g * w <= IDLE_GAP_S)
            .collect();
        let n = quantile(gaps, 0.5).unwrap_or(0.0).round() as usize;
        let first = all[0];
        all.splice(
            0..0,
            std::iter::repeat_n(
                Slice {
                    retraction: false,
                    ..first
                },
                n,
            ),
        );
        n
    } else {
        0
    };
    let span = all.len() as f64 * w;
    let (win, window_assumed) = match client.duration_s.filter(|d| *d > 0.0) {
        Some(d) => (d, false),
        None => {
            notes.push(format!(
                "The client gave no benchmark duration: its window is assumed to be the log's span ({:.0} s).",
                report.span_seconds.max(w)
            ));
            (report.span_seconds.max(w), true)
        }
    };
    // Match the window to the log: the whole log when it fits, else the busiest stretch.
    let mut k = all.len();
    let mut start = 0usize;
    if span > win * 1.05 + w {
        k = ((win / w).round() as usize).clamp(1, all.len());
        let mut best = f64::MIN;
        let mut acc: f64 = all[..k].iter().map(|s| s.gen).sum();
        for i in 0..=(all.len() - k) {
            if i > 0 {
                acc += all[i + k - 1].gen - all[i - 1].gen;
            }
            if acc > best + 1e-9 {
                best = acc;
                start = i;
            }
        }
        notes.push(format!(
            "The log covers {:.0} s, more than the client's {:.0} s window: compared with the busiest {:.0} s of the log (from {:.0} s).",
            span,
            win,
            k as f64 * w,
            start as f64 * w
        ));
    }
    let sl = &all[start..(start + k).min(all.len())];
    let logged = sl.len() as f64 * w;
    // Busy time inside the window but outside the log's stats lines (first request's
    // prefill before the first line, last decode steps after the last one).
    let unlogged = (win - logged).max(0.0);

    let busy: Vec<&Slice> = sl.iter().filter(|s| s.busy).collect();
    let busy_s = busy.len() as f64 * w;
    let idle_s = (logged - busy_s).max(0.0);
    let tokens: f64 = busy.iter().map(|s| s.gen).sum::<f64>() * w;

    // Steady plateau: the typical full batch, the 75th percentile of running requests
    // over busy slices (a long drain pulls the median down).
    let plateau = quantile(
        busy.iter()
            .filter_map(|s| s.running)
            .filter(|r| *r > 0.0)
            .collect(),
        0.75,
    )
    .unwrap_or(0.0);
    // Steady slices: busy ones, except the ramps — stretches below 90% of the plateau
    // that touch idle time or the window's edges (the batch filling or draining).
    // Dips in the middle of busy time (retractions, bursts of prefill) stay in.
    let low = |s: &Slice| s.busy && s.running.is_some_and(|r| r < 0.9 * plateau);
    let mut ramp = vec![false; sl.len()];
    let mut i = 0;
    while i < sl.len() {
        if !low(&sl[i]) {
            i += 1;
            continue;
        }
        let a = i;
        while i < sl.len() && low(&sl[i]) {
            i += 1;
        }
        let b = i - 1;
        let edge = a == 0 || b + 1 == sl.len() || !sl[a - 1].busy || !sl[b + 1].busy;
        if edge {
            ramp[a..=b].iter_mut().for_each(|r| *r = true);
        }
    }
    let near_retraction = |i: usize| -> bool {
        sl[i].retraction
            || (i > 0 && sl[i - 1].retraction)
            || sl.get(i + 1).is_some_and(|s| s.retraction)
    };
    let mut steady_gen = Vec::new();
    let mut clean = Vec::new();
    let mut retr = Vec::new();
    for (i, s) in sl.iter().enumerate() {
        if !s.busy || ramp[i] || s.gen <= 0.0 {
            continue;
        }
        steady_gen.push(s.gen);
        if near_retraction(i) {
            retr.push(s.gen);
        } else {
            clean.push(s.gen);
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let g = mean(&steady_gen).or_else(|| (busy_s > 0.0).then(|| tokens / busy_s))?;
    if g <= 0.0 {
        return None;
    }
    let sustained = if busy_s > 0.0 { tokens / busy_s } else { 0.0 };

    // Prefill before the first decode value: the window's busy slices before the
    // first printed generation figure, at the steady rate.
    let first_printed = sl
        .iter()
        .position(|s| s.printed && s.gen > 0.0)
        .unwrap_or(0);
    let pre_s = sl[..first_printed].iter().filter(|s| s.busy).count() as f64 * w;
    let pre_tokens: f64 = sl[..first_printed]
        .iter()
        .filter(|s| s.busy)
        .map(|s| s.gen)
        .sum::<f64>()
        * w;
    // Retracted/preempted requests keep their output and are recomputed (SGLang and
    // vLLM alike): no token the client counts is lost, and the recompute time is
    // already inside the steady rate. What it cost is reported as evidence.
    let retr_deficit = 0.0;
    let retr_cost = match (mean(&clean), mean(&retr)) {
        (Some(a), Some(_)) if a > g => Some(a - g),
        _ => None,
    };
    let total_deficit = g * busy_s - tokens;
    let prefill_deficit = g * pre_s - pre_tokens;
    // Tail past the last stats line: assume the last printed rate carried on.
    let tail_rate = sl.iter().rev().find(|s| s.printed).map_or(0.0, |s| s.gen);
    let unlogged_deficit = (g - tail_rate) * unlogged;
    let ramp_deficit = total_deficit - retr_deficit - prefill_deficit + unlogged_deficit;
    let generated = tokens + tail_rate * unlogged;
    let u = c * win;
    let requests = client
        .completed_requests
        .or(report.requests.as_ref().map(|r| r.finished_requests));
    let first_tokens = requests.unwrap_or(0) as f64;

    let per = |tok: f64| sig(tok / win);
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let mut parts = Vec::new();
    let idle_part = g * idle_s / win;
    let gaps = report
        .timeline
        .idle_gaps
        .iter()
        .filter(|gp| {
            gp.start_s + gp.seconds > start as f64 * w && gp.start_s < (start + k) as f64 * w
        })
        .count();
    parts.push(Part {
        cause: "idle".into(),
        tok_s: sig(idle_part),
        evidence: format!(
            "The server had nothing to run for {:.0} s of the client's {:.0} s window ({}){}: it was waiting for the client, so those seconds generated nothing.",
            idle_s,
            win,
            pct(idle_s / win),
            if gaps > 0 {
                format!(", including {gaps} silence(s) longer than {IDLE_GAP_S:.0} s")
            } else {
                String::new()
            }
        ),
    });
    let running_mean = report.summary.running_requests.map(|d| d.mean);
    let out_per_req = match (client.total_output_tokens, client.completed_requests) {
        (Some(t), Some(n)) if n > 0 => Some(t as f64 / n as f64),
        _ => report
            .requests
            .as_ref()
            .and_then(|r| r.completion_tokens_per_request.map(|d| d.mean)),
    };
    // Little's law: requests generating at once = request rate × time spent generating.
    let req_rate = client.requests_per_s.or_else(|| {
        client
            .completed_requests
            .map(|n| n as f64 / win)
            .filter(|r| *r > 0.0)
    });
    let gen_time = match (client.mean_e2e_latency_ms, client.mean_ttft_ms) {
        (Some(e), Some(t)) if e > t => Some((e - t) / 1000.0),
        _ => out_per_req
            .filter(|_| plateau > 0.0)
            .map(|o| o / (g / plateau)),
    };
    let little = match (req_rate, gen_time, out_per_req) {
        (Some(l), Some(tg), Some(o)) => {
            let n = l * tg;
            format!(
                " Little's law: {:.2} req/s × {:.0} s generating ≈ {:.0} requests in flight (the log shows ~{:.0}); half-way through ~{:.0}-token outputs on average, they hold ~{} generated tokens that count only when they finish, so completions lag generation while the pipeline fills and the batch shrinks as it drains.",
                l,
                tg,
                n,
                plateau,
                o,
                num(n * o / 2.0)
            )
        }
        _ => String::new(),
    };
    parts.push(Part {
        cause: "warm_up_drain".into(),
        tok_s: per(ramp_deficit),
        evidence: format!(
            "While busy the server averaged {:.0} tok/s against {:.0} tok/s at full batch (~{:.0} running): the batch fills at the start and drains at the end with fewer requests.{}",
            sustained, g, plateau, little
        ),
    });
    let retracted = report.summary.retracted_requests;
    let per_req_kv = match (report.summary.kv_tokens, running_mean) {
        (Some(kv), Some(r)) if r > 0.0 => Some(kv.mean / r),
        _ => None,
    };
    parts.push(Part {
        cause: "retraction".into(),
        tok_s: per(retr_deficit),
        evidence: if retracted > 0 || report.summary.retractions > 0 {
            format!(
                "{} retraction/preemption event(s), {} request(s) evicted{}. Their output was kept and recomputed, so no token the client counts was lost: the cost is inside the server's own rate{}.",
                report.summary.retractions,
                retracted,
                match per_req_kv {
                    Some(t) => format!(
                        " holding ~{} KV tokens each (~{} tokens of work discarded and recomputed)",
                        num(t),
                        num(t * retracted as f64)
                    ),
                    None => String::new(),
                },
                match retr_cost {
                    Some(x) => format!(
                        " (around retractions it printed {:.0} tok/s; without them ~{:.0} tok/s, {:.0} tok/s more)",
                        mean(&retr).unwrap_or(0.0),
                        g + x,
                        x
                    ),
                    None => String::new(),
                }
            )
        } else {
            "No retractions or preemptions in the log: no generated work was thrown away.".into()
        },
    });
    parts.push(Part {
        cause: "prefill".into(),
        tok_s: per(prefill_deficit - first_tokens),
        evidence: format!(
            "{:.0} s of prefill before the first decode step{}; prefill inside the run is already in the server's printed rate.{}",
            pre_s,
            if report.summary.prefill_tokens > 0 {
                format!(
                    " ({} prompt tokens prefilled over the run)",
                    num(report.summary.prefill_tokens as f64)
                )
            } else {
                String::new()
            },
            if first_tokens > 0.0 {
                format!(
                    " Prefill also produces each request's first token, which decode lines do not count: {} tokens the client sees that the server's rate leaves out.",
                    num(first_tokens)
                )
            } else {
                String::new()
            }
        ),
    });
    let explained: f64 = parts.iter().map(|p| p.tok_s).sum();
    let unexplained = (g - c) - explained;
    if (generated - u).abs() > 0.1 * u.max(1.0) && u > 0.0 {
        notes.push(format!(
            "The server's lines account for {} generated tokens in the window, the client received {}{}.",
            num(generated),
            num(u),
            if generated > 1.3 * u {
                ": the server may have served other clients too, or the client's run is not the one in this log"
            } else if u > 1.3 * generated {
                ": the log may not cover the whole client run (a cut log, or a rank missing)"
            } else {
                ""
            }
        ));
    }
    let largest = parts
        .iter()
        .filter(|p| p.tok_s > 0.0)
        .max_by(|a, b| a.tok_s.total_cmp(&b.tok_s))
        .map(|p| p.cause.as_str());
    let fix = match largest {
        _ if g - c <= 0.02 * g => "the two agree, so either serves",
        Some("idle") => "most of the gap is on the client side: send more requests at once (higher concurrency or request rate) so the server never waits",
        Some("warm_up_drain") => "most of the gap is the benchmark's own start and end: a longer run brings the client figure closer to the server's",
        Some("prefill") => "most of the gap is prefill before generation starts: long prompts cost time the decode rate does not show",
        _ => "the log does not show where most of the gap goes",
    };
    let advice = format!(
        "For capacity planning believe the server figure ({:.0} tok/s) for what the GPU can do at full batch, and the client figure ({:.0} tok/s) for what your pipeline gets end to end; {fix}.",
        g, c
    );
    Some(Reconciliation {
        server_gen_tok_s: sig(g),
        client_tok_s: sig(c),
        gap_fraction: sig((g - c) / g),
        parts,
        unexplained_fraction: sig(unexplained / g),
        unexplained_tok_s: sig(unexplained),
        sustained_gen_tok_s: sig(sustained),
        client_window_s: sig(win),
        window_assumed,
        window_start_s: sig((start as f64 - lead as f64) * w),
        server_busy_s: sig(busy_s + unlogged),
        server_idle_s: sig(idle_s),
        server_generated_tokens: sig(generated),
        client_output_tokens: sig(u),
        advice,
        notes,
    })
}
