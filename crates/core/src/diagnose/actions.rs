//! What to change, shared by the kinds: an action with its predicted effect,
//! and the levers several kinds pull (more KV memory, an FP8 KV cache, the
//! client's concurrency, the running cap).

use super::context::Ctx;
use crate::report::{Action, Change, Prediction};
use crate::text::num::num;

pub(super) fn change(parameter: &str, value: f64) -> Change {
    Change {
        parameter: parameter.to_string(),
        value,
    }
}

fn predict(c: &Ctx, changes: &[Change]) -> Option<Prediction> {
    c.model.as_ref().map(|m| m.predict(changes))
}

fn effect_of(c: &Ctx, p: &Option<Prediction>, extra: &str) -> String {
    let base = match (p, &c.model) {
        (Some(p), Some(m)) => format!(
            "~{} running and ~{} tok/s (range {}–{}) instead of {} and {}",
            num(p.running_requests),
            num(p.gen_throughput_tok_s),
            num(p.low),
            num(p.high),
            num(m.running),
            num(m.gen_tok_s)
        ),
        _ => String::new(),
    };
    match (base.is_empty(), extra.is_empty()) {
        (true, _) => extra.to_string(),
        (false, true) => base,
        (false, false) => format!("{base}; {extra}"),
    }
}

pub(super) fn action(
    c: &Ctx,
    id: &str,
    flag: String,
    why: String,
    changes: &[Change],
    extra: &str,
) -> Action {
    let predicted = if changes.is_empty() {
        None
    } else {
        predict(c, changes)
    };
    Action {
        id: id.to_string(),
        flag,
        why,
        effect: effect_of(c, &predicted, extra),
        predicted,
    }
}

/// More memory for the KV pool: SGLang's mem_fraction_static, vLLM's gpu_memory_utilization.
pub(super) fn more_kv_memory(c: &Ctx) -> Action {
    let cfg = &c.r.config;
    if c.sglang {
        let m = cfg.mem_fraction_static;
        let avail = cfg.available_gpu_mem_gb;
        let headroom = avail.map(|a| a - 6.0);
        // GB the pool could gain while keeping ~6 GB for activations and graphs.
        let gain = match (headroom, cfg.kv_cache_gb) {
            (Some(h), Some(kv)) if h > 0.0 && kv > 0.0 => Some(1.0 + h / kv),
            _ => None,
        };
        // Little headroom: step by 0.01 as SGLang's guide says; else a bolder step.
        let step = if avail.is_some_and(|a| a < 7.0) {
            0.01
        } else {
            0.04
        };
        let target = m.map(|m| (m + step).min(0.95));
        let flag = match target {
            Some(t) => format!("--mem-fraction-static {t:.2}"),
            None => "--mem-fraction-static 0.90".to_string(),
        };
        let why = match (m, avail) {
            (Some(m), Some(a)) if a < 7.0 => format!(
                "mem_fraction_static is {m} and only {a} GB is left after the pool: little headroom, so raise it in small steps (+0.01) and watch for out-of-memory errors; the docs keep 5–8 GB free"
            ),
            (Some(m), Some(a)) => format!(
                "mem_fraction_static is {m} with {a} GB of GPU memory unused after the pool: keep 5–8 GB for activations and CUDA graphs and give the rest to the KV pool"
            ),
            (Some(m), None) => format!("mem_fraction_static is {m}: a larger fraction grows the KV pool (keep 5–8 GB free; read available_gpu_mem at startup)"),
            _ => "A larger static memory fraction grows the KV pool (keep 5–8 GB free; read available_gpu_mem in the startup line)".to_string(),
        };
        let scale = gain.unwrap_or(1.1);
        let extra = if gain.is_some() {
            ""
        } else {
            "assuming the pool grows ~10%"
        };
        action(
            c,
            "more_kv_memory",
            flag,
            why,
            &[change("kv_scale", scale)],
            extra,
        )
    } else if c.trtllm {
        // Of the memory free after the weights and the activations measured at startup.
        share_of_free_memory(
            c,
            "--kv_cache_free_gpu_memory_fraction",
            "free_gpu_memory_fraction",
            cfg.kv_free_gpu_memory_fraction,
            (0.9, 0.05, 0.97),
            "free after the weights and the activations measured at startup",
        )
    } else if c.lmdeploy {
        share_of_free_memory(
            c,
            "--cache-max-entry-count",
            "cache_max_entry_count",
            cfg.cache_max_entry_count,
            (0.8, 0.1, 0.95),
            "left after the weights",
        )
    } else {
        let u = cfg.gpu_memory_utilization.unwrap_or(0.9);
        let t = (u + 0.05).min(0.97);
        action(
            c,
            "more_kv_memory",
            format!("--gpu-memory-utilization {t:.2}"),
            format!("gpu_memory_utilization is {u}: what is left after weights and activations becomes KV cache, so each +0.05 adds a sizeable share to the pool (watch for out-of-memory)"),
            &[change("kv_scale", 1.12)],
            "assuming weights take about half the GPU, so the pool grows ~12%",
        )
    }
}

/// A larger KV cache on an engine whose cache is a share `u` of the GPU memory
/// free (`after`): the pool grows in proportion to the share. `(default, step,
/// most)`: the engine's default (also for a share outside (0, 1], which it
/// would not take), the step, and the most to advise.
fn share_of_free_memory(
    c: &Ctx,
    flag: &str,
    name: &str,
    u: Option<f64>,
    (default, step, most): (f64, f64, f64),
    after: &str,
) -> Action {
    let u = u.filter(|u| *u > 0.0 && *u <= 1.0).unwrap_or(default);
    let t = (u + step).min(most).max(u);
    action(
        c,
        "more_kv_memory",
        format!("{flag} {t:.2}"),
        format!("{name} is {u}: the KV cache takes that share of the GPU memory {after}, so a larger share grows it in proportion (watch for out-of-memory)"),
        &[change("kv_scale", t / u)],
        "",
    )
}

pub(super) fn fp8_kv(c: &Ctx) -> Option<Action> {
    if c.r
        .config
        .kv_cache_dtype
        .as_deref()
        .is_some_and(|d| d.contains("fp8") || d.contains("float8") || d.contains("int"))
    {
        return None;
    }
    let (flag, why) = if c.trtllm {
        (
            "kv_cache_config.dtype: fp8 (in the YAML of --extra_llm_api_options)",
            "An FP8 KV cache stores about twice the tokens in the same memory; check accuracy on your task",
        )
    } else if c.lmdeploy {
        (
            "--quant-policy 8",
            "An int8 KV cache stores about twice the tokens in the same memory (--quant-policy 4, int4, four times with more accuracy loss); check accuracy on your task",
        )
    } else if c.sglang {
        (
            "--kv-cache-dtype fp8_e4m3",
            "An FP8 KV cache stores about twice the tokens in the same memory. Check accuracy on your task, and use an attention backend with fused FP8 support or decode slows down",
        )
    } else {
        (
            "--kv-cache-dtype fp8",
            "An FP8 KV cache stores about twice the tokens in the same memory; check accuracy on your task",
        )
    };
    Some(action(
        c,
        "fp8_kv_cache",
        flag.to_string(),
        why.to_string(),
        &[change("kv_dtype_fp8", 1.0)],
        "",
    ))
}

pub(super) fn client_concurrency(c: &Ctx, target: f64, why: String) -> Action {
    let n = target.round().max(1.0);
    in_flight(c, n, why, &[change("client_concurrency", n)])
}

/// Client advice: keep `n` requests in flight, predicted with `changes`.
pub(super) fn in_flight(c: &Ctx, n: f64, why: String, changes: &[Change]) -> Action {
    action(
        c,
        "client_concurrency",
        format!(
            "client: keep ~{} requests in flight (e.g. {} --max-concurrency {})",
            num(n),
            if c.sglang {
                "bench_serving"
            } else if c.lmdeploy || c.trtllm {
                "a serving benchmark's"
            } else {
                "vllm bench serve"
            },
            num(n)
        ),
        why,
        changes,
        "",
    )
}

/// The running cap to advise: double the current one, as far as the pool holds
/// (at least a quarter more).
pub(super) fn raised_cap(c: &Ctx) -> f64 {
    let cap = c.cap.unwrap_or(c.run()).max(1.0);
    let room = c.facts.pool_holds_requests.unwrap_or(cap * 2.0);
    (cap * 2.0).min(room.max(cap * 1.25)).round()
}

/// The flag that caps the running requests, on any engine.
pub(super) fn running_cap_flag(c: &Ctx) -> &'static str {
    if c.sglang {
        "--max-running-requests"
    } else {
        batch_cap_flag(c)
    }
}

/// The flag that caps the batch on a paged engine: vLLM's, LMDeploy's or TensorRT-LLM's.
pub(super) fn batch_cap_flag(c: &Ctx) -> &'static str {
    if c.lmdeploy {
        "--max-batch-size"
    } else if c.trtllm {
        "--max_batch_size"
    } else {
        "--max-num-seqs"
    }
}
