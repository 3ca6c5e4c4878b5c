//! What to change: exact flags for the engine at hand, with the expected effect.

use super::context::Ctx;
use crate::report::{Action, Change, Prediction};
use crate::text::num::num;

fn change(parameter: &str, value: f64) -> Change {
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

fn action(c: &Ctx, id: &str, flag: String, why: String, changes: &[Change], extra: &str) -> Action {
    let predicted = if changes.is_empty() {
        None
    } else {
        predict(c, changes)
    };
    let predicted_gain = predicted
        .as_ref()
        .zip(c.model.as_ref())
        .filter(|(_, m)| m.gen_tok_s > 0.0)
        .map(|(p, m)| crate::text::round::dec(p.gen_throughput_tok_s / m.gen_tok_s - 1.0, 4));
    Action {
        id: id.to_string(),
        flag,
        why,
        effect: effect_of(c, &predicted, extra),
        predicted,
        predicted_gain,
    }
}

/// More memory for the KV pool: SGLang's mem_fraction_static, vLLM's gpu_memory_utilization.
fn more_kv_memory(c: &Ctx) -> Action {
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

fn fp8_kv(c: &Ctx) -> Option<Action> {
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

fn client_concurrency(c: &Ctx, target: f64, why: String) -> Action {
    let n = target.round().max(1.0);
    in_flight(c, n, why, &[change("client_concurrency", n)])
}

/// Client advice: keep `n` requests in flight, predicted with `changes`.
fn in_flight(c: &Ctx, n: f64, why: String, changes: &[Change]) -> Action {
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

/// The size of a host-memory KV tier to suggest, in GB: twice the GPU pool
/// where the log states its size, else 64.
fn host_tier_gb(c: &Ctx) -> f64 {
    c.r.config
        .kv_cache_gb
        .map(|g| (2.0 * g).ceil())
        .unwrap_or(64.0)
}

pub fn kv_capacity(c: &Ctx) -> Vec<Action> {
    // A TensorRT-LLM pool full of reservations admits more with smaller ones at
    // once, where more memory adds a few percent: those come first.
    let mut v = if c.trtllm_reserves {
        trtllm_reservations(c)
    } else {
        Vec::new()
    };
    v.push(more_kv_memory(c));
    v.extend(fp8_kv(c));
    if c.sglang {
        let kv_gb = host_tier_gb(c);
        v.push(action(
            c,
            "hierarchical_cache",
            format!("--enable-hierarchical-cache --hicache-size {}", num(kv_gb)),
            "A host-memory tier behind the GPU pool keeps evicted prefixes (system prompts, earlier turns) in CPU RAM and loads them back instead of recomputing; it helps most when prompts share prefixes".to_string(),
            &[],
            "more prefix-cache hits and shorter prefills; the GPU pool for running requests stays the same size",
        ));
        if c.kv().is_some_and(|u| u < 0.9) && c.waiting() && !c.retracts_often() {
            let cur = c.r.config.schedule_conservativeness.unwrap_or(1.0);
            let t = (cur * 0.3).max(0.1);
            v.push(action(
                c,
                "schedule_conservativeness",
                format!("--schedule-conservativeness {t:.1}"),
                "The pool looks full only because of what SGLang reserves for future tokens. A lower conservativeness reserves less and admits more requests; if they then outgrow the pool, requests are retracted (about one retraction per minute is fine)".to_string(),
                &[change("schedule_conservativeness", t)],
                "risk: retractions if outputs run long",
            ));
        }
    } else if c.trtllm {
        let kv_bytes = host_tier_gb(c) * 1e9;
        v.push(action(
            c,
            "host_kv_cache",
            // A YAML integer: no separators.
            format!("kv_cache_config.host_cache_size: {kv_bytes:.0} (in the YAML of --extra_llm_api_options)"),
            "A host-memory tier behind the GPU blocks (in bytes) keeps reusable blocks of evicted prefixes in CPU RAM instead of dropping them; it helps most when prompts share prefixes".to_string(),
            &[],
            "more block reuse and shorter prefills; the GPU pool for running requests stays the same size",
        ));
        v.push(action(
            c,
            "tensor_parallel",
            "--tp_size 2 (or more GPUs per replica)".to_string(),
            "Sharding the model over more GPUs frees memory per GPU for KV cache".to_string(),
            &[],
            "roughly doubles the KV pool per replica",
        ));
    } else {
        v.push(action(
            c,
            "tensor_parallel",
            if c.lmdeploy {
                "--tp 2 (or more GPUs per replica)"
            } else {
                "--tensor-parallel-size 2 (or more GPUs per replica)"
            }
            .to_string(),
            "Sharding the model over more GPUs frees memory per GPU for KV cache".to_string(),
            &[],
            "roughly doubles the KV pool per replica",
        ));
        if c.r.config.prefix_caching != Some(true) {
            v.push(action(
                c,
                "prefix_caching",
                "--enable-prefix-caching".to_string(),
                "Requests that share a prefix then share its KV blocks instead of storing copies"
                    .to_string(),
                &[],
                "helps only when prompts share prefixes",
            ));
        }
    }
    if c.waiting() {
        // What the server actually admits: with SGLang's or TensorRT-LLM's
        // reservations that is the running count.
        let h = if c.sglang || c.trtllm_reserves {
            Some(c.run())
        } else {
            c.facts.pool_holds_requests.or(Some(c.run()))
        };
        if let Some(h) = h.filter(|h| *h >= 1.0) {
            v.push(client_concurrency(
                c,
                h * 1.1,
                format!(
                    "The pool admits ~{} requests of this size at once: a tenth more in flight keeps it full, and sending more than that only lengthens the queue (same throughput, longer time to first token)",
                    num(h)
                ),
            ));
        }
    }
    v
}

/// TensorRT-LLM's default policy, GUARANTEED_NO_EVICT, admits a request only when
/// the pool can hold its prompt and all of its max_tokens (a whole max_seq_len
/// when the request sets none): while the pool is not full of tokens, it is full
/// of reservations, and smaller ones, or none, admit more.
fn trtllm_reservations(c: &Ctx) -> Vec<Action> {
    let mut v = Vec::new();
    if !(c.waiting() && c.kv().is_some_and(|u| u < 0.9)) {
        return v;
    }
    v.push(action(
        c,
        "max_tokens",
        "client: set max_tokens on every request, near the longest output you need".to_string(),
        format!(
            "The scheduler reserves each request's prompt plus its max_tokens before admitting it — a whole max_seq_len{} when the request sets none — so the pool is full of reservations at {} of it used",
            c.r.config
                .context_length
                .map(|l| format!(" ({})", num(l as f64)))
                .unwrap_or_default(),
            c.kv().map(crate::text::num::pct).unwrap_or_default()
        ),
        &[],
        "more requests admitted at once, as many as the reservations shrink",
    ));
    v.push(action(
        c,
        "capacity_scheduler_policy",
        "scheduler_config.capacity_scheduler_policy: MAX_UTILIZATION (in the YAML of --extra_llm_api_options)".to_string(),
        "Admit as many requests as the blocks in use allow instead of reserving every request's whole length; if outputs then outgrow the pool, requests are paused and resumed".to_string(),
        &[],
        "risk: paused requests if outputs run long",
    ));
    v
}

pub fn running_limit(c: &Ctx) -> Vec<Action> {
    if c.kv_tight() && c.retracts_often() {
        // The pool already overflows at this cap: a higher one would only add
        // retractions (and undo fewer sequences); the pool has to grow first.
        let mut v = vec![more_kv_memory(c)];
        v.extend(fp8_kv(c));
        return v;
    }
    let target = raised_cap(c);
    let mut v = Vec::new();
    if c.sglang {
        let spec = c.r.config.speculative_algorithm.is_some();
        v.push(action(
            c,
            "raise_running_cap",
            format!("{} {}", running_cap_flag(c), num(target)),
            if c.kv_tight() {
                "The cap stops admission, but the KV pool is nearly full too: a higher cap admits only what the pool can hold, so grow the pool with it (FP8 KV cache, more memory)".to_string()
            } else if spec {
                "Speculative decoding lowers the default max_running_requests (e.g. 32 for EAGLE); with KV to spare, a higher cap lets more requests decode at once".to_string()
            } else {
                "The cap, not memory, stops admission; the KV pool has room for more running requests".to_string()
            },
            &[change("max_running", target)],
            "",
        ));
        v.push(action(
            c,
            "cuda_graph_bs",
            format!("--cuda-graph-max-bs {}", num(target)),
            "Keep CUDA graphs covering the larger batch, or decode steps above the captured size run eagerly and slower".to_string(),
            &[],
            "",
        ));
    } else {
        // vLLM and LMDeploy: a batch cap and a KV remedy of their own names.
        let (what, kv_remedy, units) = if c.lmdeploy {
            (
                "max_batch_size",
                "int8 KV cache, higher cache_max_entry_count",
                "requests",
            )
        } else if c.trtllm {
            (
                "max_batch_size",
                "FP8 KV cache, higher free_gpu_memory_fraction",
                "requests",
            )
        } else {
            (
                "max_num_seqs",
                "FP8 KV cache, higher gpu_memory_utilization",
                "sequences",
            )
        };
        v.push(action(
            c,
            "raise_running_cap",
            format!("{} {}", batch_cap_flag(c), num(target)),
            if c.kv_tight() {
                format!("{what} caps the batch, but the KV cache is nearly full too: grow it with the cap ({kv_remedy})")
            } else {
                format!("{what} caps the batch; the KV cache has room for more {units}")
            },
            &[change("max_running", target)],
            "",
        ));
    }
    v
}

/// The running cap to advise: double the current one, as far as the pool holds
/// (at least a quarter more).
fn raised_cap(c: &Ctx) -> f64 {
    let cap = c.cap.unwrap_or(c.run()).max(1.0);
    let room = c.facts.pool_holds_requests.unwrap_or(cap * 2.0);
    (cap * 2.0).min(room.max(cap * 1.25)).round()
}

/// The flag that caps the running requests, on any engine.
fn running_cap_flag(c: &Ctx) -> &'static str {
    if c.sglang {
        "--max-running-requests"
    } else {
        batch_cap_flag(c)
    }
}

/// The flag that caps the batch on a paged engine: vLLM's, LMDeploy's or TensorRT-LLM's.
fn batch_cap_flag(c: &Ctx) -> &'static str {
    if c.lmdeploy {
        "--max-batch-size"
    } else if c.trtllm {
        "--max_batch_size"
    } else {
        "--max-num-seqs"
    }
}

pub fn retraction(c: &Ctx) -> Vec<Action> {
    let mut v = Vec::new();
    if c.sglang {
        // Under about one a minute SGLang's guide calls retractions fine: reserving
        // more would cost admissions, where a larger pool (below) costs none.
        if c.retracts_often() {
            let cur = c.r.config.schedule_conservativeness.unwrap_or(1.0);
            v.push(action(
                c,
                "schedule_conservativeness",
                format!("--schedule-conservativeness {:.1}", (cur * 1.3).max(1.3)),
                "Reserve more room for running requests' future tokens before admitting new ones, so the pool stops overflowing".to_string(),
                &[],
                "fewer retractions; slightly fewer requests running at once",
            ));
        }
        v.push(more_kv_memory(c));
        v.extend(fp8_kv(c));
        return v;
    }
    // vLLM's own order: more KV memory first, then fewer sequences, which stops
    // preemptions by running fewer at once.
    v.push(more_kv_memory(c));
    v.extend(fp8_kv(c));
    if c.trtllm && c.retracts_often() {
        // Pauses come only from MAX_UTILIZATION; the default policy never pauses.
        v.push(action(
            c,
            "capacity_scheduler_policy",
            "scheduler_config.capacity_scheduler_policy: GUARANTEED_NO_EVICT (in the YAML of --extra_llm_api_options)".to_string(),
            "Paused requests come from the MAX_UTILIZATION policy, which admits against the blocks in use and pauses requests when outputs outgrow the pool; the default policy reserves each request's whole length before admitting it, so none is paused and recomputed".to_string(),
            &[],
            "no pauses; fewer requests running at once (set max_tokens on requests to keep reservations small)",
        ));
    }
    // Only against a measured batch: a bare preemption warning does not say how many run.
    if let Some(n) =
        c.w.running
            .map(|run| (run * 0.8).round())
            .filter(|&n| n >= 1.0 && n < c.run())
    {
        v.push(action(
            c,
            "fewer_seqs",
            format!("{} {}", batch_cap_flag(c), num(n)),
            "Fewer concurrent sequences leave KV blocks free for the ones running, so they are not preempted and recomputed".to_string(),
            &[change("max_running", n)],
            "fewer preemptions and steadier latency, at the cost of running fewer at once",
        ));
    }
    v
}

pub fn prefill(c: &Ctx) -> Vec<Action> {
    let mut v = Vec::new();
    let cfg = &c.r.config;
    if c.sglang {
        let cur = cfg.chunked_prefill_size.filter(|v| *v > 0).unwrap_or(8192);
        v.push(action(
            c,
            "chunked_prefill",
            format!("--chunked-prefill-size {}", cur * 2),
            format!("Each prefill batch takes at most {cur} tokens; larger chunks admit waiting requests faster when memory allows (smaller ones if prefill runs out of memory)"),
            &[],
            "faster admission of long prompts",
        ));
        v.push(action(
            c,
            "mixed_chunk",
            "--enable-mixed-chunk".to_string(),
            "Run prefill chunks together with decode steps, so running requests keep generating while new ones are admitted".to_string(),
            &[],
            "",
        ));
        if c.r.summary.cached_prompt_tokens > 0 {
            v.push(action(
                c,
                "lpm",
                "--schedule-policy lpm".to_string(),
                "Prompts share prefixes (the log shows cached tokens): longest-prefix-match scheduling raises cache hits and skips recomputation".to_string(),
                &[],
                "",
            ));
        }
        v.push(action(
            c,
            "more_replicas",
            "--dp-size 2 (or prefill/decode disaggregation: --disaggregation-mode prefill|decode)"
                .to_string(),
            "More prefill compute: data-parallel replicas, or dedicated prefill servers"
                .to_string(),
            &[],
            "",
        ));
    } else if c.trtllm {
        if let Some(share) = c
            .facts
            .prefill_time_share
            .filter(|_| super::context::prefill_time_dominates(c))
        {
            // Prefill is busy, not held back: a larger budget only makes its iterations longer.
            v.push(action(
                c,
                "more_replicas",
                "another replica behind the load balancer (or disaggregated serving: context and generation servers apart)".to_string(),
                format!(
                    "Iterations that prefill take {} of the time: the GPU is busy with prompts, so more prefill compute, not more room for requests, raises throughput",
                    crate::text::num::pct(share)
                ),
                &[],
                "throughput up about in proportion to the prefill compute added",
            ));
        }
        let cur = cfg.max_batched_tokens.unwrap_or(8192);
        v.push(action(
            c,
            "batched_tokens",
            format!("--max_num_tokens {}", cur * 2),
            format!("Each iteration schedules at most {cur} tokens; a larger budget admits long prompts in fewer iterations"),
            &[],
            "",
        ));
        v.push(action(
            c,
            "chunked_prefill",
            "--enable_chunked_prefill".to_string(),
            "Split long prompts into chunks that run beside decode steps, so they neither stall running requests nor wait for a whole-prompt budget".to_string(),
            &[],
            "",
        ));
    } else if c.lmdeploy {
        let cur = cfg.max_prefill_tokens.unwrap_or(8192);
        v.push(action(
            c,
            "prefill_tokens",
            format!("--max-prefill-token-num {}", cur * 2),
            format!("Each prefill step takes at most {cur} tokens; a larger budget admits long prompts in fewer steps"),
            &[],
            "",
        ));
        v.extend(reuse_prefixes(c));
    } else {
        let cur = cfg.max_batched_tokens.unwrap_or(8192);
        v.push(action(
            c,
            "batched_tokens",
            format!("--max-num-batched-tokens {}", cur * 2),
            format!("Each step processes at most {cur} tokens; a larger budget admits long prompts in fewer steps"),
            &[],
            "",
        ));
        v.extend(reuse_prefixes(c));
        v.push(action(
            c,
            "chunked_prefill",
            "--enable-chunked-prefill".to_string(),
            "Interleave prompt chunks with decode steps so long prompts do not stall running requests".to_string(),
            &[],
            "",
        ));
    }
    v
}

/// Prefix caching, where the log does not say it is on (vLLM, LMDeploy).
fn reuse_prefixes(c: &Ctx) -> Option<Action> {
    (c.r.config.prefix_caching != Some(true)).then(|| {
        action(
            c,
            "prefix_caching",
            "--enable-prefix-caching".to_string(),
            "Reuse the KV of shared prompt prefixes instead of recomputing them".to_string(),
            &[],
            "",
        )
    })
}

pub fn decode_saturated(c: &Ctx) -> Vec<Action> {
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

pub fn client(c: &Ctx) -> Vec<Action> {
    if c.client_fills_cap() {
        return client_at_cap(c);
    }
    let run = c.run().max(1.0);
    let room = c.cap.or(c.facts.pool_holds_requests).unwrap_or(run * 4.0);
    let target = (run * 2.0).min(room.max(run)).max(run + 1.0);
    // The model predicts near the batch sizes the log shows: doubling is a step
    // it can vouch for, and the advice says to go on while it pays.
    let step = if target < run * 2.0 {
        ", up to what the server can hold"
    } else if c.sglang {
        ", and keep doubling the concurrency while throughput rises (SGLang's guide: a healthy queue holds 100–2000 waiting)"
    } else {
        ", and keep doubling the concurrency while throughput rises, until requests start to wait"
    };
    vec![client_concurrency(
        c,
        target,
        format!(
            "The server has KV and slots to spare: send more requests at once{step}{}",
            if c.facts.idle_fraction.is_some_and(|f| f > 0.05) {
                "; also remove the gaps where the client sends nothing"
            } else {
                ""
            }
        ),
    )]
}

/// The client keeps exactly as many requests in flight as the running cap
/// admits: more in flight would only wait, and a higher cap would find nothing
/// more to run. The two rise together, and are predicted together.
fn client_at_cap(c: &Ctx) -> Vec<Action> {
    let cap = c.cap.unwrap_or(c.run()).max(1.0);
    let target = raised_cap(c);
    let both = [
        change("max_running", target),
        change("client_concurrency", target),
    ];
    vec![
        action(
            c,
            "raise_running_cap",
            format!("{} {}", running_cap_flag(c), num(target)),
            format!(
                "The client keeps {} requests in flight, exactly the cap: raise the cap and the client's concurrency together (either alone changes nothing)",
                num(cap)
            ),
            &both,
            "",
        ),
        in_flight(
            c,
            target,
            format!("With the cap raised to {}: send that many at once", num(target)),
            &both,
        ),
    ]
}
