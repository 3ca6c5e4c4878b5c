//! Two server runs compared: what changed, by how much, and whether the change or
//! the workload explains it.
//!
//! Each side is judged on its own steady window (`window::steady`), so warm-up and
//! drain do not dilute either. The workloads are compared per request: a faster run
//! with shorter outputs is not a win of any flag. The model fitted on `before` is
//! asked about `after`'s settings, as `whatif::check_restart` does for a restart.

use crate::analysis::whatif::{self, Bound, Model};
use crate::analysis::window::{steady, Window};
use crate::model::profile::Profile;
use crate::report::{
    Change, Comparison, Effect, PerRequest, Point, PredictionCheck, Report, SettingChange, Side,
    Workload, COMPARE_SCHEMA_VERSION,
};

/// Per-request lengths further apart than this are another workload.
const SIMILAR: f64 = 0.15;
/// Requests in flight further apart than this are another client setting.
const IN_FLIGHT: f64 = 0.15;
/// The name of the client's change in `changes`.
pub const IN_FLIGHT_SETTING: &str = "client requests in flight";
/// About 95 % of a normal spread.
const Z95: f64 = 1.96;

/// The window's figures and per-request estimates of one run.
struct Judged {
    w: Window,
    in_flight: Option<f64>,
    /// A client at a fixed number in flight keeps running + waiting flat; one that
    /// sends at its own pace makes it vary or lets the server idle.
    closed_loop: bool,
    client: Option<(f64, f64)>,
    requests: Option<(f64, f64)>,
    /// Lengths split from the KV held per request, where the prompt work is not
    /// inflated by recomputing evicted requests.
    kv: Option<(f64, f64)>,
    prompt_per_output: Option<f64>,
    kv_per_request: Option<f64>,
}

fn points_in<'a>(r: &'a Report, w: &Window) -> impl Iterator<Item = &'a Point> + 'a {
    let (a, b) = (w.start_s, w.end_s);
    r.timeline
        .points
        .iter()
        .filter(move |p| p.t_s >= a - 1e-9 && p.t_s < b - 1e-9)
}

fn judge(r: &Report) -> Judged {
    let w = steady(r);
    let in_flight = match (w.running, w.queued) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    // (Not the window's idle share: a server that logs every ten seconds leaves
    // buckets empty while it is busy.)
    let closed_loop = w
        .demand_cv
        .is_some_and(|cv| cv <= 0.05_f64.max(0.5 / in_flight.unwrap_or(1.0).max(1.0).sqrt()));
    // Token counts over the whole run: a ratio of totals is the workload's, where the
    // window's rates move with warm-up and drain. SGLang counts the prompt tokens of
    // each prefill batch; elsewhere the prompt and generation rates of the same lines.
    let sm = &r.summary;
    let prompt_per_output = if sm.prefill_tokens > 0 && sm.generated_tokens_estimate > 0.0 {
        Some(sm.prefill_tokens as f64 / sm.generated_tokens_estimate)
    } else {
        match (&sm.input_throughput_tok_s, &sm.gen_throughput_tok_s) {
            (Some(i), Some(g)) if i.mean > 0.0 && g.mean > 0.0 => Some(i.mean / g.mean),
            _ => match (w.input_tok_s, w.gen_tok_s) {
                (Some(i), Some(g)) if i > 0.0 && g > 0.0 => Some(i / g),
                _ => None,
            },
        }
    };
    // The KV tokens the log counts (SGLang's `#token`) over the running requests of the
    // same lines, else the window's usage of the stated pool.
    let counted = match (&sm.kv_tokens, &sm.running_requests) {
        (Some(k), Some(n)) if k.mean > 0.0 && n.mean > 0.0 => Some(k.mean / n.mean),
        _ => None,
    };
    let kv_per_request =
        counted.or_else(
            || match (w.kv_usage, r.config.kv_capacity_tokens, w.running) {
                (Some(u), Some(c), Some(n)) if u > 0.0 && n > 0.0 => {
                    let ranks = r.config.data_parallel_size.unwrap_or(1).max(1) as f64;
                    // A pool stated per rank under DP attention holds that many per rank; the
                    // usage is the ranks' mean and running their sum.
                    let pool = if r.sources.len() > 1 {
                        c as f64 * ranks
                    } else {
                        c as f64
                    };
                    Some(u * pool / n)
                }
                _ => None,
            },
        );
    // An evicted request is prefilled again, prompt and output so far: where that is
    // more than a twentieth of the prompt work, the ratio says more about the pool
    // than about the requests.
    let evicted = sm
        .retracted_requests
        .max(sm.retractions)
        .max(r.events.preemptions) as f64;
    let recompute = match (kv_per_request, prompt_per_output) {
        (Some(k), Some(q)) => evicted * k > 0.05 * q * sm.generated_tokens_estimate,
        _ => true,
    };
    // A request holds its prompt and what it has generated so far: over its life about
    // prompt + output / 2, and prompt = output × (prompt tokens per output token).
    let kv = match (kv_per_request, prompt_per_output) {
        (Some(k), Some(q)) if k > 0.0 && !recompute => {
            let out = k / (q + 0.5);
            Some((q * out, out))
        }
        _ => None,
    };
    let client = r.client.as_ref().and_then(|c| {
        let n = c.completed_requests.filter(|n| *n > 0)? as f64;
        Some((
            c.total_input_tokens? as f64 / n,
            c.total_output_tokens? as f64 / n,
        ))
    });
    let requests = r.requests.as_ref().and_then(|q| {
        let n = q.finished_requests;
        (n > 0).then(|| {
            (
                q.prompt_tokens as f64 / n as f64,
                q.completion_tokens as f64 / n as f64,
            )
        })
    });
    Judged {
        w,
        in_flight,
        closed_loop,
        client,
        requests,
        kv,
        prompt_per_output,
        kv_per_request,
    }
}

/// The per-request figures both sides give, from the best source: the client's
/// summaries, the server's completion lines, lengths split from the KV held per
/// request, else the KV held per request alone. Each: name, before, after.
type Measures = Vec<(&'static str, f64, f64)>;

fn pick_lengths(b: &Judged, a: &Judged) -> Option<(&'static str, Measures)> {
    let lengths = |x: (f64, f64), y: (f64, f64)| {
        vec![
            ("prompt tokens per request", x.0, y.0),
            ("output tokens per request", x.1, y.1),
        ]
    };
    [
        ("client", b.client, a.client),
        ("requests", b.requests, a.requests),
        ("kv", b.kv, a.kv),
    ]
    .into_iter()
    .find_map(|(s, x, y)| Some((s, lengths(x?, y?))))
    .or_else(|| {
        Some((
            "kv_held",
            vec![(
                "KV tokens held per running request",
                b.kv_per_request?,
                a.kv_per_request?,
            )],
        ))
    })
}

fn lengths_of(j: &Judged, source: Option<&str>) -> Option<(f64, f64)> {
    match source {
        Some("client") => j.client,
        Some("requests") => j.requests,
        Some("kv") => j.kv,
        _ => None,
    }
}

fn side(r: &Report, j: &Judged, source: Option<&str>) -> Side {
    let lengths = lengths_of(j, source);
    let round = |v: Option<f64>| v.map(crate::text::round::sig);
    Side {
        engine: r.engine.clone(),
        run: r.runs.iter().find(|x| x.analyzed).map(|x| x.run),
        config: r.config.clone(),
        gen_throughput_tok_s: round(j.w.gen_tok_s),
        running_requests: round(j.w.running),
        queued_requests: round(j.w.queued),
        kv_usage: j.w.kv_usage.map(|u| crate::text::round::dec(u, 3)),
        verdict: None,
        headline: r.diagnosis.as_ref().map(|d| d.primary.headline.clone()),
        window_start_s: j.w.start_s,
        window_end_s: j.w.end_s,
        in_flight_requests: round(j.in_flight),
        per_request: PerRequest {
            prompt_tokens: lengths.map(|l| crate::text::round::sig(l.0)),
            output_tokens: lengths.map(|l| crate::text::round::sig(l.1)),
            source: source.map(str::to_string),
            prompt_per_output: j.prompt_per_output.map(|v| crate::text::round::dec(v, 3)),
            kv_tokens_per_request: round(j.kv_per_request),
        },
    }
}

/// `b / a - 1`.
fn rel(a: f64, b: f64) -> f64 {
    b / a - 1.0
}

/// The relative standard error of a window's mean generation throughput: the
/// buckets' rates in consecutive blocks, whose means vary less than neighbouring
/// buckets do (a batch's requests finish together), so their spread is the honest one.
fn relative_error(r: &Report, w: &Window) -> Option<f64> {
    let rates: Vec<f64> = points_in(r, w)
        .filter_map(|p| {
            if p.gen_secs > 0.0 {
                Some(p.gen_tokens / p.gen_secs)
            } else {
                p.gen_tok_s
            }
        })
        .filter(|v| v.is_finite())
        .collect();
    if rates.len() < 4 {
        return None;
    }
    let blocks = (rates.len() / 4).clamp(2, 10);
    let size = rates.len() / blocks;
    let means: Vec<f64> = rates
        .chunks(size)
        .filter(|c| c.len() == size)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let k = means.len() as f64;
    let m = means.iter().sum::<f64>() / k;
    if m <= 0.0 {
        return None;
    }
    let var = means.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (k - 1.0);
    Some((var / k).sqrt() / m)
}

/// The what-if changes that take `before`'s settings to `after`'s.
fn model_changes(b: &Report, a: &Report, in_flight: Option<f64>) -> Vec<Change> {
    let (x, y) = (&b.config, &a.config);
    let mut out = Vec::new();
    let mut push = |parameter: &str, value: f64| {
        out.push(Change {
            parameter: parameter.to_string(),
            value,
        })
    };
    let pools = x.kv_capacity_tokens.zip(y.kv_capacity_tokens);
    match pools {
        Some((p, q)) if p != q => push("kv_tokens", q as f64),
        Some(_) => {}
        // Without both pools stated, the flag that sizes the pool.
        None => {
            if let Some(f) = y
                .mem_fraction_static
                .filter(|f| x.mem_fraction_static.is_some_and(|e| e != *f))
            {
                push("mem_fraction_static", f);
            }
            if let Some(f) = y
                .gpu_memory_utilization
                .filter(|f| x.gpu_memory_utilization.is_some_and(|e| e != *f))
            {
                push("gpu_memory_utilization", f);
            }
            let fp8 = |d: &Option<String>| d.as_deref().is_some_and(|d| d.contains("fp8"));
            if fp8(&y.kv_cache_dtype) && !fp8(&x.kv_cache_dtype) {
                push("kv_dtype_fp8", 1.0);
            }
        }
    }
    if let Some((p, q)) = x.max_running_requests.zip(y.max_running_requests) {
        if p != q {
            push("max_running", q as f64);
        }
    }
    if let Some(c) = y.schedule_conservativeness {
        if (c - x.schedule_conservativeness.unwrap_or(1.0)).abs() > 1e-9 && c > 0.0 {
            push("schedule_conservativeness", c);
        }
    }
    if let Some(n) = in_flight {
        push("client_concurrency", n.round().max(1.0));
    }
    out
}

/// Compares `before` and `after` (each judged on its own steady window); `p` is
/// `before`'s engine profile, for the model. The verdicts and the explanation are
/// filled in by the caller, from the stages after this one.
pub fn compare(before: &Report, after: &Report, p: &Profile) -> Comparison {
    let (jb, ja) = (judge(before), judge(after));
    let mut notes = Vec::new();
    let mut similar = true;

    // Per-request figures, from the best source both sides have.
    let pick = pick_lengths(&jb, &ja);
    let what = |s: &str| {
        match s {
        "client" => "the client's benchmark summaries (tokens over completed requests)",
        "requests" => "the servers' per-request completion lines",
        "kv" => "the KV held per running request and the prompt tokens prefilled per generated token",
        _ => "the KV the log counts per running request (prompt tokens per output token are not compared: evicted requests were prefilled again)",
    }
    };

    if before.engine != after.engine {
        similar = false;
        notes.push(format!(
            "different engines: {} before, {} after",
            before.engine, after.engine
        ));
    } else if let (Some(v), Some(u)) = (
        before.config.engine_version.as_ref(),
        after.config.engine_version.as_ref(),
    ) {
        if v != u {
            similar = false;
            notes.push(format!("{} {v} before, {u} after", before.engine));
        }
    }
    match &pick {
        Some((source, measures)) => {
            let mut differs = false;
            let mut same = Vec::new();
            for (name, x, y) in measures {
                let shown = |v: f64| crate::text::num::num(crate::text::round::sig(v));
                if *x > 0.0 && rel(*x, *y).abs() > SIMILAR {
                    differs = true;
                    notes.push(format!(
                        "{name} ~{} before, ~{} after ({:+.0} %), from {}",
                        shown(*x),
                        shown(*y),
                        rel(*x, *y) * 100.0,
                        what(source)
                    ));
                } else {
                    same.push(format!("{name} ~{} and ~{}", shown(*x), shown(*y)));
                }
            }
            if differs {
                similar = false;
            } else {
                notes.push(format!(
                    "within {:.0} %: {}, from {}",
                    SIMILAR * 100.0,
                    same.join("; "),
                    what(source)
                ));
            }
        }
        None => notes.push(
            "the per-request lengths could not be compared: a side gives no prompt, output or KV figures per request".into(),
        ),
    }

    // The server's settings, then the client's requests in flight where both clients
    // keep a fixed number in flight and it moved.
    let mut changes: Vec<SettingChange> =
        crate::analysis::settings::differing(&before.config, &after.config)
            .into_iter()
            .map(|(name, a, b)| SettingChange {
                setting: name.to_string(),
                before: a.unwrap_or_else(|| "?".into()),
                after: b.unwrap_or_else(|| "?".into()),
            })
            .collect();
    let server_changed = !changes.is_empty();
    let in_flight_moved = match (jb.in_flight, ja.in_flight) {
        (Some(x), Some(y)) if x > 0.0 => (rel(x, y)).abs() > IN_FLIGHT,
        _ => false,
    };
    let fitted = Model::fit(before, p);
    let client_bound = fitted
        .as_ref()
        .is_some_and(|m| m.bound == Bound::Client || m.arrival_bound);
    let mut client_change = None;
    if in_flight_moved {
        let (x, y) = (jb.in_flight.unwrap_or(0.0), ja.in_flight.unwrap_or(0.0));
        // One side's demand may waver (evicted requests leave and rejoin the queue);
        // the other's holds still at what its client keeps in flight.
        if jb.closed_loop || ja.closed_loop {
            changes.push(SettingChange {
                setting: IN_FLIGHT_SETTING.into(),
                before: crate::text::num::num(x.round()),
                after: crate::text::num::num(y.round()),
            });
            client_change = Some(y);
        }
        // A client-bound server sends out what arrives: with a server setting changed
        // as well, more requests in flight could explain it alone.
        if client_bound && server_changed {
            similar = false;
            notes.push(format!(
                "the client kept ~{} requests in flight before and ~{} after, and the server was client-bound before",
                crate::text::num::num(x.round()),
                crate::text::num::num(y.round())
            ));
        }
    }

    let effect = match (jb.w.gen_tok_s, ja.w.gen_tok_s) {
        (Some(x), Some(y)) if x > 0.0 && y > 0.0 => {
            let ratio = y / x;
            let e = (relative_error(before, &jb.w).unwrap_or(0.0).powi(2)
                + relative_error(after, &ja.w).unwrap_or(0.0).powi(2))
            .sqrt();
            Some(Effect {
                gen_throughput_ratio: crate::text::round::dec(ratio, 4),
                low: crate::text::round::dec(ratio * (-Z95 * e).exp(), 4),
                high: crate::text::round::dec(ratio * (Z95 * e).exp(), 4),
            })
        }
        _ => None,
    };

    let asked = model_changes(before, after, client_change);
    let prediction_check = whatif::predict(before, p, &asked).map(|w| {
        let measured = ja.w.gen_tok_s;
        let pr = &w.predicted;
        PredictionCheck {
            changes: asked.clone(),
            predicted_gen_tok_s: pr.gen_throughput_tok_s,
            low: pr.low,
            high: pr.high,
            predicted_running_requests: pr.running_requests,
            measured_gen_tok_s: measured.map(crate::text::round::sig),
            error: measured
                .filter(|m| *m > 0.0)
                .map(|m| crate::text::round::dec(pr.gen_throughput_tok_s / m - 1.0, 4)),
            within_range: measured.map(|m| pr.low <= m && m <= pr.high),
            bound_by: pr.bound_by,
            notes: w.notes,
        }
    });

    let moved = effect.as_ref().is_some_and(|e| e.low > 1.0 || e.high < 1.0);
    let attribution = if !similar {
        "workload"
    } else if !moved {
        "none"
    } else if !changes.is_empty() {
        "setting"
    } else {
        "unexplained"
    };

    let source = pick.as_ref().map(|p| p.0);
    Comparison {
        schema_version: COMPARE_SCHEMA_VERSION,
        before: side(before, &jb, source),
        after: side(after, &ja, source),
        changes,
        workload: Workload { similar, notes },
        effect,
        prediction_check,
        attribution,
        explanation: Vec::new(),
    }
}
