//! Decode itself is saturated: a bigger batch would add little.

use crate::diagnose::actions::action;
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{ev, finish, throughput_evidence};
use crate::report::{Action, Finding, Kind};
use crate::text::num::num;

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
    Finding {
        kind: Kind::DecodeSaturated,
        confidence,
        headline: format!(
            "Decode is saturated: {} running requests get {} tok/s each; a bigger batch would not add much — faster kernels, quantization or more GPUs would",
            num(c.run()),
            num(per)
        ),
        evidence: finish(c, evidence),
        actions: actions(c),
    }
}

fn actions(c: &Ctx) -> Vec<Action> {
    let mut v = Vec::new();
    if c.sglang {
        v.push(action(
            c,
            "quantize",
            "--quantization fp8".to_string(),
            "Decode reads every weight each step; FP8 weights halve the bytes per step".to_string(),
            &[],
            "",
        ));
        v.push(action(
            c,
            "speculative",
            "--speculative-algorithm EAGLE (with a draft model)".to_string(),
            "Speculative decoding commits several tokens per step when the draft is accepted"
                .to_string(),
            &[],
            "",
        ));
        v.push(action(
            c,
            "more_gpus",
            "--tp-size 2 or --dp-size 2".to_string(),
            "More GPUs per replica, or more replicas".to_string(),
            &[],
            "",
        ));
    } else if c.trtllm {
        v.push(action(
            c,
            "quantize",
            "model: an FP8 checkpoint (e.g. quantized with NVIDIA Model Optimizer)".to_string(),
            "Decode reads every weight each step; FP8 weights halve the bytes per step, and TensorRT-LLM takes the quantization from the checkpoint".to_string(),
            &[],
            "",
        ));
        v.push(action(
            c,
            "speculative",
            "speculative_config.decoding_type: Eagle (in the YAML of --extra_llm_api_options, with a draft model)".to_string(),
            "Speculative decoding commits several tokens per step when drafts are accepted"
                .to_string(),
            &[],
            "",
        ));
        v.push(action(
            c,
            "more_gpus",
            "--tp_size 2 (or more replicas)".to_string(),
            "More GPUs per replica, or more replicas".to_string(),
            &[],
            "",
        ));
    } else if c.lmdeploy {
        v.push(action(
            c,
            "quantize",
            "--model-format awq (a 4-bit AWQ model, e.g. from lmdeploy lite auto_awq)".to_string(),
            "Decode reads every weight each step; 4-bit weights read a quarter of the bytes"
                .to_string(),
            &[],
            "",
        ));
        v.push(action(
            c,
            "more_gpus",
            "--tp 2 or --dp 2".to_string(),
            "More GPUs per replica, or more replicas".to_string(),
            &[],
            "",
        ));
    } else {
        v.push(action(
            c,
            "quantize",
            "--quantization fp8".to_string(),
            "FP8 weights halve the bytes each decode step reads".to_string(),
            &[],
            "",
        ));
        v.push(action(
            c,
            "speculative",
            "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 4}'"
                .to_string(),
            "Speculative decoding commits several tokens per step when drafts are accepted"
                .to_string(),
            &[],
            "",
        ));
        v.push(action(
            c,
            "more_gpus",
            "--tensor-parallel-size 2 or --data-parallel-size 2".to_string(),
            "More GPUs per replica, or more replicas".to_string(),
            &[],
            "",
        ));
    }
    v
}
