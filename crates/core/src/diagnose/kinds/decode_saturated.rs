//! Decode itself is saturated: a bigger batch would add little.
//!
//! Where the GPU and the model are known (`report.roofline`), the claim is
//! checked against physics: a decode step reads the weights it touches and the
//! batch's KV once, so near the peak bandwidth only fewer bytes per token
//! (quantization), more tokens per step (speculative decoding) or more bandwidth
//! (more GPUs) help; far below it, the steps are held by something else.

use crate::diagnose::actions::lever;
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{ev, finish, throughput_evidence};
use crate::report::{Action, Evidence, Finding, Kind, Roofline};
use crate::text::num::{num, pct};

/// At this share of peak bandwidth or more, decode runs at the memory roofline.
const NEAR_PEAK_MBU: f64 = 0.6;
/// Below this share with a batch this large, the steps are not bandwidth-bound.
const LOW_MBU: f64 = 0.4;
const LARGE_BATCH: f64 = 32.0;

pub fn decode_saturated(c: &Ctx, confidence: f64) -> Finding {
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
    let roof = c.r.roofline.as_ref().filter(|r| r.mbu.is_some());
    let mut headline = format!(
        "Decode is saturated: {} running requests get {} tok/s each; a bigger batch would not add much — faster kernels, quantization or more GPUs would",
        num(c.run()),
        num(per)
    );
    if let Some(r) = roof {
        let mbu = r.mbu.unwrap_or(0.0);
        let reads = reads_phrase(r);
        evidence.push(ev(
            format!(
                "{reads}; at this batch and context the ceiling is {} tok/s (a step of {} GB per GPU at peak bandwidth)",
                num(r.decode_ceiling_tok_s.unwrap_or(0.0)),
                num(r.bytes_per_step_per_gpu.unwrap_or(0.0) / 1e9)
            ),
            c.line(),
        ));
        headline = format!(
            "Decode is saturated: {reads} with {} requests per step; a bigger batch would not add much — faster kernels, quantization or more GPUs would",
            num(r.batch.unwrap_or(0.0))
        );
        if mbu >= NEAR_PEAK_MBU {
            headline = format!(
                "Decode is saturated: {reads} — only quantization, speculative decoding or more GPUs help"
            );
        } else if mbu < LOW_MBU && r.batch.unwrap_or(0.0) >= LARGE_BATCH {
            let why = elsewhere(c, r);
            headline = format!(
                "Decode runs far below the hardware: {reads} with {} requests per step — the steps are held by {}, not by memory bandwidth",
                num(r.batch.unwrap_or(0.0)),
                why.first().map_or("something else", |(w, _)| w.as_str())
            );
            evidence.extend(why.into_iter().map(|(_, e)| e));
        }
    }
    Finding {
        kind: Kind::DecodeSaturated,
        confidence,
        headline,
        evidence: finish(c, evidence),
        actions: actions(c),
        predicted_gain: None,
    }
}

/// "decode reads 3.9 TB/s of H200 SXM's 4.8: 81% MBU".
fn reads_phrase(r: &Roofline) -> String {
    let tb = r.peak_hbm_gb_s >= 1000.0;
    let f = |gb: f64| {
        if tb {
            format!("{:.1}", gb / 1000.0)
        } else {
            num(gb)
        }
    };
    format!(
        "decode reads {} {} of {}'s {}: {} MBU",
        f(r.achieved_hbm_gb_s.unwrap_or(0.0)),
        if tb { "TB/s" } else { "GB/s" },
        r.gpu,
        f(r.peak_hbm_gb_s),
        pct(r.mbu.unwrap_or(0.0))
    )
}

/// What holds a large batch's steps below the bandwidth roofline, most telling
/// first: steps launched without graphs, prefill interleaved with decode, or
/// the host scheduling each step.
fn elsewhere(c: &Ctx, r: &Roofline) -> Vec<(String, Evidence)> {
    let mut v = Vec::new();
    if r.lower_bound_reasons.iter().any(|x| x == "cuda_graph_off") {
        let above = r
            .graph_off_min_batch
            .map_or(String::new(), |b| format!(" from {b} running requests"));
        let cap =
            c.r.config
                .cuda_graph_max_bs
                .map_or(String::new(), |m| format!(" (captured up to {m})"));
        v.push((
            "steps launched without CUDA graphs".to_string(),
            ev(
                format!(
                    "{} of decode lines say `cuda graph: False`{above}{cap}: those steps launch every kernel from the host; capturing graphs up to the running batch (--cuda-graph-max-bs) removes that",
                    pct(r.graph_off_share.unwrap_or(0.0))
                ),
                c.line(),
            ),
        ));
    }
    if r.lower_bound_reasons
        .iter()
        .any(|x| x == "prefill_shares_interval")
    {
        v.push((
            "prefill interleaved with decode".to_string(),
            ev(
                "Prefill runs in the intervals the decode rate covers: decode steps wait for prompt chunks (chunked prefill, prefill-decode disaggregation or a smaller chunk size spread it)".to_string(),
                c.line(),
            ),
        ));
    }
    v.push((
        "CPU-bound scheduling".to_string(),
        ev(
            format!(
                "At {} of peak bandwidth the GPU waits between steps: the host's scheduling, sampling and detokenization for {} requests per step take a share of each step (overlap scheduling, fewer, larger steps)",
                pct(r.mbu.unwrap_or(0.0)),
                num(r.batch.unwrap_or(0.0))
            ),
            c.line(),
        ),
    ));
    v
}

fn actions(c: &Ctx) -> Vec<Action> {
    c.p.levers
        .decode_saturated
        .iter()
        .map(|l| lever(c, l, "", "", &[]))
        .collect()
}
