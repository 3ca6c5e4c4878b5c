//! How close to the hardware the server runs: a decode step reads the weights it
//! touches once and the KV of every running request's context, so steps per second
//! times bytes per step is the bandwidth achieved; against the GPU's peak it is the
//! MBU, and the peak over the bytes per step is the ceiling at the same batch.
//! Prefill is compute-bound: its prompt tokens times the FLOPs per token, against
//! the GPU's peak FLOPs, is the MFU.

use crate::analysis::window::{steady, Window};
use crate::model::hardware::Gpu;
use crate::model::shapes::Shape;
use crate::report::{EngineReported, Report, Roofline, RooflineSource, StepSums};
use crate::text::round::{dec, sig};

/// What is known of the hardware and the model, and the user's overrides of
/// what the startup lines say.
pub struct Hardware<'a> {
    pub gpu: &'a Gpu,
    pub shape: &'a Shape,
    pub model_source: &'a str,
    pub tp: Option<u64>,
    pub weight_dtype: Option<&'a str>,
    pub kv_dtype: Option<&'a str>,
}

/// A step at peak bandwidth shorter than this leaves per-step host work
/// (scheduling, sampling, launches: a millisecond or more) a visible share.
const SHORT_STEP_S: f64 = 0.005;
/// Prefill taking this share of the time or more lowers the decode rate the lines report.
const PREFILL_SHARE_MATTERS: f64 = 0.05;
/// Decode-only steps in the window the engine must time before its step time is used.
const MIN_TIMED_STEPS: u32 = 20;
/// The steps' printed times must cover this share of the window's busy time to be
/// the steps' times: vLLM times only the wait for the model's output after the
/// step was launched, which under async scheduling is a fraction of the step.
const MIN_STEP_COVERAGE: f64 = 0.5;

/// Expected distinct experts a batch of `tokens` touches in a layer, each token
/// choosing `k` of `e` (uniformly: real routers are skewed, so this is an upper bound).
pub fn experts_touched(e: f64, k: f64, tokens: f64) -> f64 {
    if e <= 0.0 || tokens <= 0.0 {
        return 0.0;
    }
    e * (1.0 - (1.0 - k / e).powf(tokens))
}

/// Bytes one GPU reads in a decode step of `batch` requests holding `context` KV tokens.
struct StepBytes {
    weights_read: f64,
    kv: f64,
    experts: Option<f64>,
}

pub fn roofline(r: &Report, hw: &Hardware) -> Roofline {
    let w = steady(r);
    let s = hw.shape;
    let c = &r.config;
    let tp = hw.tp.or(c.tensor_parallel_size).unwrap_or(1).max(1);
    let dp = c.data_parallel_size.unwrap_or(0);
    let decode_sources = r
        .sources
        .iter()
        .filter(|x| x.gen_throughput_tok_s_mean.is_some())
        .count() as u64;
    let schedulers = if dp > 0 { dp } else { decode_sources.max(1) };
    // SGLang's DP attention splits its TP group among the DP ranks: attention
    // (and its KV) runs on tp/dp GPUs per rank, the experts on all of them.
    let dp_attention =
        r.engine == "sglang" && schedulers > 1 && tp >= schedulers && tp % schedulers == 0;
    let attn_tp = if dp_attention { tp / schedulers } else { tp };
    let gpus = if dp_attention { tp } else { tp * schedulers };
    let weight_dtype = hw
        .weight_dtype
        .map(str::to_string)
        .or_else(|| weight_dtype_from_config(c.quantization.as_deref()))
        .unwrap_or_else(|| s.weight_dtype.to_string());
    let kv_dtype = hw
        .kv_dtype
        .map(str::to_string)
        .or_else(|| c.kv_cache_dtype.clone().filter(|d| d != "auto"))
        .unwrap_or_else(|| "bf16".to_string());
    let (dense_all, routed) = s.weight_bytes(&weight_dtype, true);
    let (dense_read, _) = s.weight_bytes(&weight_dtype, false);
    let kv_tok = s.kv_bytes_per_token_per_gpu(&kv_dtype, attn_tp);
    let fp8 = crate::model::shapes::dtype_bytes(&weight_dtype) <= 1.0;
    let peak_tflops = match hw.gpu.fp8_tflops {
        Some(f) if fp8 => f,
        _ => hw.gpu.bf16_tflops,
    };
    let peak_bw = hw.gpu.hbm_gb_s * 1e9;

    let per = Scheduler::of(r, &w, schedulers);
    // The experts see every scheduler's tokens under DP attention.
    let moe_tokens = per.batch.map(|b| {
        if dp_attention {
            b * schedulers as f64
        } else {
            b
        }
    });
    let step = |batch: Option<f64>, context: Option<f64>| -> Option<StepBytes> {
        let experts = s
            .moe
            .zip(batch)
            .map(|(m, b)| experts_touched(m.experts as f64, m.per_token as f64, b));
        let routed_read = match (s.moe, experts) {
            (Some(m), Some(x)) => routed * x / m.experts as f64,
            _ => routed,
        };
        Some(StepBytes {
            weights_read: (dense_read + routed_read) / tp as f64,
            // Unknown context (no pool size in the log): the weights alone, a lower bound.
            kv: context.map_or(0.0, |k| kv_tok * k),
            experts,
        })
    };
    let mut upper = Vec::new();
    // Tokens a request commits per step: above 1 under speculative decoding.
    let accepted = (r.summary.accept_len.1 > 0)
        .then(|| r.summary.accept_len.0 / r.summary.accept_len.1 as f64)
        .filter(|a| *a >= 1.0);
    let timed = StepTimes::of(r, &w, schedulers);
    let (batch, context, moe_tokens) = match timed.as_ref().and_then(|t| t.batch) {
        // The bytes of the steps timed: their own batch, at the window's context a request.
        Some(b) => (
            Some(b),
            per.context_per_request().map(|k| k * b).or(per.context),
            Some(if dp_attention {
                b * schedulers as f64
            } else {
                b
            }),
        ),
        None => (per.batch, per.context, moe_tokens),
    };
    let bytes = step(moe_tokens, context);
    let bytes_per_step = bytes.as_ref().map(|b| b.weights_read + b.kv);
    let (steps, steps_from) = match timed
        .as_ref()
        .and_then(|t| t.steps_per_s.map(|v| (v, t.from)))
    {
        Some((v, from)) => (Some(v), from),
        None => {
            let per_request = per
                .gen
                .zip(per.batch)
                .filter(|(_, b)| *b > 0.0)
                .map(|(g, b)| g / b / accepted.unwrap_or(1.0));
            if accepted.is_none() && c.speculative_algorithm.as_deref().is_some_and(spec_on) {
                // Each step commits more than a token a request, by how much the log does not say.
                upper.push("speculative_tokens_per_step_unknown".to_string());
            }
            (per_request, RATE_PER_REQUEST)
        }
    };
    let achieved = steps.zip(bytes_per_step).map(|(st, b)| st * b);
    let ceiling = batch
        .zip(bytes_per_step.filter(|_| context.is_some()))
        .filter(|(_, b)| *b > 0.0)
        .map(|(n, b)| n * schedulers as f64 * peak_bw / b);

    // Prefill: prompt tokens over the time spent prefilling, where that is measured.
    let input = w
        .input_tok_s
        .or(r.summary.input_throughput_tok_s.map(|d| d.mean))
        .filter(|v| *v > 0.0);
    let seq = per
        .context
        .zip(per.batch)
        .filter(|(_, b)| *b > 0.0)
        .map(|(k, b)| k / b);
    let flops_per_token =
        2.0 * s.active_params() + s.attention_flops_per_token(seq.unwrap_or(0.0) / 2.0);
    let peak_flops = peak_tflops * 1e12;
    let prefill_share = r.summary.prefill_time_share.or_else(|| {
        // At least the time its FLOPs take at peak.
        input.map(|i| (i * flops_per_token / (peak_flops * gpus as f64)).min(1.0))
    });
    let prefill_rate = input.map(|i| match r.summary.prefill_time_share {
        Some(sh) if sh > 0.0 => i / sh,
        _ => i,
    });
    // Where the engine times its steps: prompt tokens over the time its prefill
    // steps took beyond a decode step, per scheduler.
    let prefill_per_gpu = match timed.as_ref().and_then(|t| t.prefill_tok_s) {
        Some(p) => Some(p * schedulers as f64 / gpus as f64),
        None => prefill_rate.map(|p| p / gpus as f64),
    };
    let prefill_mfu = prefill_per_gpu.map(|p| p * flops_per_token / peak_flops);

    let mut reasons = Vec::new();
    // Decode-only steps' own times leave prefill out.
    if steps_from != "iteration_times"
        && prefill_share.is_some_and(|sh| sh >= PREFILL_SHARE_MATTERS)
    {
        reasons.push("prefill_shares_interval".to_string());
    }
    let graph_off_share = (r.summary.graph_lines > 0)
        .then(|| r.summary.graph_off_lines as f64 / r.summary.graph_lines as f64);
    if graph_off_share.is_some_and(|g| g >= 0.2) {
        reasons.push("cuda_graph_off".to_string());
    }
    if context.is_none() {
        reasons.push("kv_context_unknown".to_string());
    }
    if bytes_per_step.is_some_and(|b| b / peak_bw < SHORT_STEP_S) {
        reasons.push("small_batch_fast_gpu".to_string());
    }

    let per_source = if r.sources.len() > 1 {
        r.sources
            .iter()
            .filter(|x| x.gen_throughput_tok_s_mean.is_some())
            .map(|x| {
                let batch = x.running_requests_mean.filter(|b| *b > 0.0);
                let context = match (x.kv_usage_mean, c.kv_capacity_tokens) {
                    (Some(u), Some(cap)) => Some(u * cap as f64),
                    _ => per.context_per_request().zip(batch).map(|(k, b)| k * b),
                };
                let tokens = batch.map(|b| {
                    if dp_attention {
                        b * schedulers as f64
                    } else {
                        b
                    }
                });
                let b = step(tokens, context).map(|b| b.weights_read + b.kv);
                let steps = x
                    .gen_throughput_tok_s_mean
                    .zip(batch)
                    .map(|(g, n)| g / n / accepted.unwrap_or(1.0));
                let achieved = steps.zip(b).map(|(st, b)| st * b);
                RooflineSource {
                    source: x.source.clone(),
                    steps_per_s: steps.map(sig),
                    achieved_hbm_gb_s: achieved.map(|a| sig(a / 1e9)),
                    mbu: achieved.map(|a| dec(a / peak_bw, 4)),
                }
            })
            .collect()
    } else {
        Vec::new()
    };

    let est = &r.summary.engine_estimates;
    let mean = |i: usize| (est[i].1 > 0).then(|| est[i].0 / est[i].1 as f64);
    let engine_reported =
        (mean(0).is_some() || mean(1).is_some() || mean(2).is_some()).then(|| {
            let ours_prefill_tflops = prefill_per_gpu.map(|p| p * flops_per_token / 1e12);
            EngineReported {
                hbm_gb_s: mean(0).map(sig),
                tflops: mean(1).map(sig),
                prefill_tflops: mean(2).map(sig),
                hbm_ratio: achieved
                    .zip(mean(0))
                    .filter(|(_, e)| *e > 0.0)
                    .map(|(a, e)| dec(a / 1e9 / e, 3)),
                prefill_tflops_ratio: ours_prefill_tflops
                    .zip(mean(2))
                    .filter(|(_, e)| *e > 0.0)
                    .map(|(a, e)| dec(a / e, 3)),
            }
        });

    Roofline {
        gpu: hw.gpu.name.to_string(),
        model: s.name.clone(),
        model_source: hw.model_source.to_string(),
        peak_hbm_gb_s: hw.gpu.hbm_gb_s,
        peak_tflops,
        tensor_parallel_size: tp,
        schedulers,
        weight_dtype,
        kv_dtype,
        params: sig(s.total_params()),
        active_params: sig(s.active_params()),
        weights_bytes_per_gpu: sig((dense_all + routed) / tp as f64),
        kv_bytes_per_token_per_gpu: kv_tok,
        batch: batch.map(sig),
        context_tokens: context.map(sig),
        experts_touched: bytes.as_ref().and_then(|b| b.experts).map(sig),
        bytes_per_step_per_gpu: bytes_per_step.map(sig),
        steps_per_s: steps.map(sig),
        steps_from: steps.map(|_| steps_from.to_string()).unwrap_or_default(),
        step_time_ms: timed.as_ref().and_then(|t| t.step_s).map(|t| sig(t * 1e3)),
        tokens_per_step: accepted.map(|a| dec(a, 3)),
        achieved_hbm_gb_s: achieved.map(|a| sig(a / 1e9)),
        mbu: achieved.map(|a| dec(a / peak_bw, 4)),
        prefill_tok_s_per_gpu: prefill_per_gpu.map(sig),
        prefill_mfu: prefill_mfu.map(|m| dec(m, 4)),
        decode_ceiling_tok_s: ceiling.map(sig),
        lower_bound_reasons: reasons,
        upper_bound_reasons: upper,
        graph_off_share: graph_off_share.map(|g| dec(g, 4)),
        graph_off_min_batch: r.summary.graph_off_min_running.map(u64::from),
        per_source,
        engine_reported,
    }
}

const RATE_PER_REQUEST: &str = "rate_per_request";

/// A speculative algorithm setting that turns it on.
fn spec_on(a: &str) -> bool {
    let a = a.trim().trim_matches('\'').to_ascii_lowercase();
    !a.is_empty() && a != "none" && a != "null"
}

/// The engine's own step times over the steady window, per scheduler.
struct StepTimes {
    /// Decode-only steps per second, and how they were found.
    steps_per_s: Option<f64>,
    from: &'static str,
    /// A decode-only step's mean time, as printed.
    step_s: Option<f64>,
    /// Requests in a decode-only step.
    batch: Option<f64>,
    /// Prompt tokens per second of prefill steps' time beyond a decode step.
    prefill_tok_s: Option<f64>,
}

impl StepTimes {
    fn of(r: &Report, w: &Window, schedulers: u64) -> Option<StepTimes> {
        let mut t = StepSums::default();
        let width = r.timeline.bucket_seconds;
        // The time the window's step lines span (the window's edges are its stats
        // lines', which may reach past the last step line).
        let (mut from, mut to) = (f64::INFINITY, f64::NEG_INFINITY);
        for b in r
            .timeline
            .steps
            .iter()
            .filter(|b| b.t_s >= w.start_s && b.t_s < w.end_s)
        {
            from = from.min(b.t_s);
            to = to.max(b.t_s + width);
            t.steps += b.steps;
            t.secs += b.secs;
            t.decode_steps += b.decode_steps;
            t.decode_secs += b.decode_secs;
            t.decode_requests += b.decode_requests;
            t.prefill_steps += b.prefill_steps;
            t.prefill_secs += b.prefill_secs;
            t.prompt_tokens += b.prompt_tokens;
        }
        if t.decode_steps < MIN_TIMED_STEPS || t.decode_secs <= 0.0 {
            return None;
        }
        let n = f64::from(t.decode_steps);
        let step_s = t.decode_secs / n;
        let busy_s = (to - from).max(0.0) * (1.0 - w.idle_share) * schedulers as f64;
        let covered = busy_s > 0.0 && t.secs >= MIN_STEP_COVERAGE * busy_s;
        let (steps_per_s, from) = if covered {
            (1.0 / step_s, "iteration_times")
        } else if busy_s > 0.0 {
            // The printed times leave most of the time out: count the steps instead.
            (f64::from(t.steps) / busy_s, "iteration_count")
        } else {
            return None;
        };
        let prefill_s = t.prefill_secs - f64::from(t.prefill_steps) * step_s;
        let prefill_tok_s = (covered && t.prompt_tokens > 0.0 && prefill_s > 0.0)
            .then(|| t.prompt_tokens / prefill_s);
        Some(StepTimes {
            steps_per_s: Some(steps_per_s),
            from,
            step_s: covered.then_some(step_s),
            batch: Some(t.decode_requests / n).filter(|b| *b > 0.0),
            prefill_tok_s,
        })
    }
}

/// One scheduler's share of the steady window: its batch, the KV tokens it
/// holds, its generated tok/s.
struct Scheduler {
    batch: Option<f64>,
    context: Option<f64>,
    gen: Option<f64>,
}

impl Scheduler {
    fn of(r: &Report, w: &Window, schedulers: u64) -> Scheduler {
        let n = schedulers as f64;
        let batch = w.running.filter(|b| *b > 0.0).map(|b| b / n);
        // The pool's capacity is per scheduler; SGLang's `#token` (summed over
        // ranks) where the usage or the capacity is not printed.
        let context = match (w.kv_usage, r.config.kv_capacity_tokens) {
            (Some(u), Some(cap)) => Some(u * cap as f64),
            _ => r.summary.kv_tokens.map(|d| d.mean / n),
        };
        Scheduler {
            batch,
            context,
            gen: w.gen_tok_s.filter(|g| *g > 0.0).map(|g| g / n),
        }
    }
    fn context_per_request(&self) -> Option<f64> {
        self.context.zip(self.batch).map(|(k, b)| k / b)
    }
}

/// The weight format a `quantization` setting names (`None`: the checkpoint's own).
fn weight_dtype_from_config(q: Option<&str>) -> Option<String> {
    let q = q?.trim().trim_matches('\'').to_ascii_lowercase();
    (!q.is_empty() && q != "none").then_some(q)
}
