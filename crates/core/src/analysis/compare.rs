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
    let closed_loop = w.idle_share <= 0.05
        && w.demand_cv
            .is_some_and(|cv| cv <= 0.05_f64.max(0.5 / in_flight.unwrap_or(1.0).max(1.0).sqrt()));
    // Prompt work counted between decode lines, over the tokens generated in the same
    // intervals; where the log counts none, the two rates' ratio.
    let (pt, gt) = points_in(r, &w)
        .filter(|p| p.gen_secs > 0.0)
        .fold((0.0, 0.0), |(a, b), p| {
            (a + p.prompt_tokens, b + p.gen_tokens)
        });
    let prompt_per_output = if pt > 0.0 && gt > 0.0 {
        Some(pt / gt)
    } else {
        match (w.input_tok_s, w.gen_tok_s) {
            (Some(i), Some(g)) if i > 0.0 && g > 0.0 => Some(i / g),
            _ => None,
        }
    };
    let kv_per_request = match (w.kv_usage, r.config.kv_capacity_tokens, w.running) {
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
        _ => r
            .summary
            .kv_tokens
            .as_ref()
            .zip(w.running)
            .filter(|(_, n)| *n > 0.0)
            .map(|(d, n)| d.mean / n),
    };
    // A request holds its prompt and what it has generated so far: over its life about
    // prompt + output / 2, and prompt = output × (prompt tokens per output token).
    let kv = match (kv_per_request, prompt_per_output) {
        (Some(k), Some(q)) if k > 0.0 => {
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

fn side(r: &Report, j: &Judged, lengths: Option<(f64, f64)>, source: Option<&str>) -> Side {
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

    // Per-request lengths, from the best source both sides have.
    let pick: Option<(&str, (f64, f64), (f64, f64))> = [
        ("client", jb.client, ja.client),
        ("requests", jb.requests, ja.requests),
        ("kv", jb.kv, ja.kv),
    ]
    .into_iter()
    .find_map(|(s, x, y)| Some((s, x?, y?)));
    let what = |s: &str| match s {
        "client" => "the client's benchmark summaries (tokens over completed requests)",
        "requests" => "the servers' per-request completion lines",
        _ => "the KV held per running request and the prompt tokens prefilled per generated token",
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
    match pick {
        Some((source, (bp, bo), (ap, ao))) => {
            let mut differs = false;
            for (name, x, y) in [("prompt", bp, ap), ("output", bo, ao)] {
                if x > 0.0 && (rel(x, y)).abs() > SIMILAR {
                    differs = true;
                    notes.push(format!(
                        "{name} tokens per request ~{} before, ~{} after ({:+.0} %), from {}",
                        crate::text::num::num(crate::text::round::sig(x)),
                        crate::text::num::num(crate::text::round::sig(y)),
                        rel(x, y) * 100.0,
                        what(source)
                    ));
                }
            }
            if differs {
                similar = false;
            } else {
                notes.push(format!(
                    "prompt and output tokens per request within {:.0} % (~{} and ~{} before, ~{} and ~{} after), from {}",
                    SIMILAR * 100.0,
                    crate::text::num::num(crate::text::round::sig(bp)),
                    crate::text::num::num(crate::text::round::sig(bo)),
                    crate::text::num::num(crate::text::round::sig(ap)),
                    crate::text::num::num(crate::text::round::sig(ao)),
                    what(source)
                ));
            }
        }
        None => notes.push(
            "the per-request lengths could not be compared: a side gives no prompt and output figures".into(),
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
        if jb.closed_loop && ja.closed_loop {
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

    let lengths = |j: &Judged| match pick.map(|p| p.0) {
        Some("client") => j.client,
        Some("requests") => j.requests,
        Some(_) => j.kv,
        None => j.client.or(j.requests).or(j.kv),
    };
    let source = |j: &Judged| {
        pick.map(|p| p.0).or(if j.client.is_some() {
            Some("client")
        } else if j.requests.is_some() {
            Some("requests")
        } else if j.kv.is_some() {
            Some("kv")
        } else {
            None
        })
    };
    Comparison {
        schema_version: COMPARE_SCHEMA_VERSION,
        before: side(before, &jb, lengths(&jb), source(&jb)),
        after: side(after, &ja, lengths(&ja), source(&ja)),
        changes,
        workload: Workload { similar, notes },
        effect,
        prediction_check,
        attribution,
        explanation: Vec::new(),
    }
}
