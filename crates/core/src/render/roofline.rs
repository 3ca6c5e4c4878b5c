//! The roofline in words: what a decode step reads, the bandwidth it achieves
//! against the GPU's peak, prefill's FLOPs, and the ceiling.

use crate::report::Roofline;
use crate::text::num::{num, pct};

fn gb(bytes: f64) -> String {
    format!("{} GB", num(bytes / 1e9))
}

fn bandwidth(gb_s: f64) -> String {
    if gb_s >= 1000.0 {
        format!("{:.1} TB/s", gb_s / 1000.0)
    } else {
        format!("{} GB/s", num(gb_s))
    }
}

/// What each lower-bound reason means, for people.
pub fn reason_words(code: &str) -> &'static str {
    match code {
        "prefill_shares_interval" => "prefill runs in the intervals the decode rate covers",
        "cuda_graph_off" => "decode steps ran without a captured CUDA graph",
        "kv_context_unknown" => {
            "the log gives no KV pool size, so a step's bytes count the weights alone"
        }
        "small_batch_fast_gpu" => {
            "a step at peak would take under 5 ms: per-step host work (scheduling, sampling, launches) weighs"
        }
        _ => "other",
    }
}

/// The decode bandwidth in one phrase: "decode reads 3.9 TB/s of H200 SXM's 4.8: 81% MBU".
pub fn mbu_phrase(r: &Roofline) -> Option<String> {
    let (a, m) = (r.achieved_hbm_gb_s?, r.mbu?);
    let peak = if r.peak_hbm_gb_s >= 1000.0 {
        format!("{:.1}", r.peak_hbm_gb_s / 1000.0)
    } else {
        num(r.peak_hbm_gb_s)
    };
    let a = if r.peak_hbm_gb_s >= 1000.0 {
        format!("{:.1} TB/s", a / 1000.0)
    } else {
        format!("{} GB/s", num(a))
    };
    Some(format!(
        "decode reads {a} of {}'s {peak}: {} MBU",
        r.gpu,
        pct(m)
    ))
}

/// The section's lines: the first is a sentence, the rest list items (`- …`).
pub fn lines(r: &Roofline) -> Vec<String> {
    let mut o = vec![format!(
        "{} on {} ({} GPU{} of TP {}{}; weights {}, KV {}): {} of weights and {} of KV per token on each GPU.",
        r.model,
        r.gpu,
        r.tensor_parallel_size * r.schedulers.max(1),
        if r.tensor_parallel_size * r.schedulers.max(1) == 1 { "" } else { "s" },
        r.tensor_parallel_size,
        if r.schedulers > 1 { format!(" × {} schedulers", r.schedulers) } else { String::new() },
        r.weight_dtype,
        r.kv_dtype,
        gb(r.weights_bytes_per_gpu),
        if r.kv_bytes_per_token_per_gpu >= 1024.0 {
            format!("{} KiB", num(r.kv_bytes_per_token_per_gpu / 1024.0))
        } else {
            format!("{} B", num(r.kv_bytes_per_token_per_gpu))
        }
    )];
    if let (Some(b), Some(st)) = (r.bytes_per_step_per_gpu, r.steps_per_s) {
        let mut step = match r.context_tokens {
            Some(k) => format!(
                "- A decode step of {} requests holding {} KV tokens reads {} per GPU",
                num(r.batch.unwrap_or(0.0)),
                num(k),
                gb(b)
            ),
            None => format!(
                "- A decode step of {} requests reads at least {} per GPU (its KV is not in the log)",
                num(r.batch.unwrap_or(0.0)),
                gb(b)
            ),
        };
        if let Some(x) = r.experts_touched {
            step.push_str(&format!(" (about {} experts per layer touched)", num(x)));
        }
        step.push_str(&format!("; {} steps/s", num(st)));
        match (r.steps_from.as_str(), r.step_time_ms, r.tokens_per_step) {
            ("iteration_times", Some(ms), _) => step.push_str(&format!(
                " (the engine's own step times: {} ms a decode step)",
                num(ms)
            )),
            ("iteration_count", ..) => step.push_str(
                " (the engine's step lines counted over the busy time: their printed times leave most of it out)",
            ),
            (_, _, Some(t)) if t > 1.0 => step.push_str(&format!(
                " (generated tok/s ÷ running ÷ {} tokens a speculative step commits)",
                num(t)
            )),
            _ => {}
        }
        step.push('.');
        o.push(step);
    }
    if let Some(p) = mbu_phrase(r) {
        let mut s = format!("- MBU: {p}");
        if r.mbu.is_some_and(|m| m > 1.0) {
            s.push_str(
                " — above the peak: the GPU, model, TP size or dtypes given are not the server's",
            );
        }
        o.push(s + ".");
    }
    if let Some(c) = r.decode_ceiling_tok_s {
        o.push(format!(
            "- Decode ceiling at this batch and context: {} tok/s (every step at {}).",
            num(c),
            bandwidth(r.peak_hbm_gb_s)
        ));
    }
    if let (Some(m), Some(t)) = (r.prefill_mfu, r.prefill_tok_s_per_gpu) {
        o.push(format!(
            "- Prefill: {} prompt tok/s per GPU, {} MFU of {} dense TFLOPS.",
            num(t),
            pct(m),
            num(r.peak_tflops)
        ));
    }
    if let Some(e) = &r.engine_reported {
        if let (Some(g), Some(ratio)) = (e.hbm_gb_s, e.hbm_ratio) {
            o.push(format!(
                "- The engine estimates {} per GPU; batchlens' figure is {:.2}× it.",
                bandwidth(g),
                ratio
            ));
        }
        if let (Some(t), Some(ratio)) = (e.prefill_tflops, e.prefill_tflops_ratio) {
            o.push(format!(
                "- The engine estimates {} prefill TFLOPS per GPU; batchlens' figure is {:.2}× it.",
                num(t),
                ratio
            ));
        }
    }
    for s in &r.per_source {
        if let (Some(a), Some(m)) = (s.achieved_hbm_gb_s, s.mbu) {
            o.push(format!("- {}: {}, {} MBU.", s.source, bandwidth(a), pct(m)));
        }
    }
    if !r.lower_bound_reasons.is_empty() {
        let why: Vec<&str> = r
            .lower_bound_reasons
            .iter()
            .map(|c| reason_words(c))
            .collect();
        o.push(format!("- A lower bound: {}.", why.join("; ")));
    }
    if r.upper_bound_reasons
        .iter()
        .any(|c| c == "speculative_tokens_per_step_unknown")
    {
        o.push("- Perhaps too high: speculative decoding is on and the log does not say how many tokens a step commits, so generated tok/s ÷ running counts too many steps.".to_string());
    }
    o
}
