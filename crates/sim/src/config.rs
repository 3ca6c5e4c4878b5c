//! Simulation configuration and named presets.

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// Which server (and log format) to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// SGLang 0.5.11+ scheduler and log format.
    #[default]
    Sglang,
    /// vLLM V1 engine (`Engine 000: …` stats every 10 s).
    VllmV1,
    /// vLLM V0 engine (`metrics.py` stats every 5 s, preemption WARNING every 50th).
    VllmV0,
    /// TensorRT-LLM `trtllm-serve` (PyTorch backend): paged blocks, admission under the
    /// default GUARANTEED_NO_EVICT policy, and its iteration log (`print_iter_log`), a line
    /// each iteration.
    Trtllm,
}

/// A token-length distribution. Samples are deterministic for a seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LenDist {
    /// Always `value`.
    Fixed { value: u32 },
    /// Uniform integer in `[min, max]`.
    Uniform { min: u32, max: u32 },
    /// Log-normal with the given mean and log-space sigma, clamped to `[min, max]`.
    LogNormal {
        mean: f64,
        sigma: f64,
        #[serde(default = "one")]
        min: u32,
        #[serde(default = "u32_max")]
        max: u32,
    },
}

fn one() -> u32 {
    1
}
fn u32_max() -> u32 {
    u32::MAX
}

impl LenDist {
    pub(crate) fn sample(&self, rng: &mut Rng) -> u32 {
        let v = match *self {
            LenDist::Fixed { value } => value,
            LenDist::Uniform { min, max } => rng.range_u32(min, max),
            LenDist::LogNormal {
                mean,
                sigma,
                min,
                max,
            } => {
                let median = mean / (sigma * sigma / 2.0).exp();
                let x = median * (sigma * rng.normal()).exp();
                (x.round().clamp(min as f64, max as f64)) as u32
            }
        };
        v.max(1)
    }

    /// Mean of the distribution (before any later clamping by the simulator).
    pub fn mean(&self) -> f64 {
        match *self {
            LenDist::Fixed { value } => value as f64,
            LenDist::Uniform { min, max } => (min as f64 + max.max(min) as f64) / 2.0,
            LenDist::LogNormal { mean, .. } => mean,
        }
    }
}

/// `count` extra requests submitted at once at `at_s` (never replaced when they finish).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Burst {
    pub at_s: f64,
    pub count: u32,
}

/// A period `[start_s, end_s)` during which the client submits nothing. Closed-loop clients
/// whose request finishes inside the gap send their next request at `end_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleGap {
    pub start_s: f64,
    pub end_s: f64,
}

/// Everything the simulator needs. All times are simulated seconds; time 0 is when the
/// client starts (the startup lines are stamped `startup_s` earlier, at `start_time`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SimConfig {
    // ---- engine / server ----
    pub engine: Engine,
    pub seed: u64,
    pub model_path: String,
    /// KV pool size in tokens (SGLang `max_total_num_tokens`; vLLM `GPU KV cache size`, rounded
    /// down to whole blocks).
    pub kv_capacity_tokens: u64,
    /// SGLang `max_running_requests`; vLLM `max_num_seqs`.
    pub max_running_requests: u32,
    /// Whether `max_running_requests` was given on the command line (shown in `server_args`).
    pub max_running_requests_explicit: bool,
    /// SGLang `chunked_prefill_size` (tokens per prefill batch); vLLM `max_num_batched_tokens`
    /// (per-step token budget). 0 = unlimited.
    pub chunked_prefill_size: u32,
    /// SGLang `max_prefill_tokens`.
    pub max_prefill_tokens: u32,
    /// Model context length (vLLM `max_model_len`).
    pub context_len: u32,
    pub schedule_conservativeness: f64,
    /// SGLang `SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS`.
    pub new_token_ratio_decay_steps: u32,
    /// SGLang `retract_decode_steps` (free tokens kept per remaining request after a retraction).
    pub retract_decode_steps: u32,
    /// SGLang `CLIP_MAX_NEW_TOKENS` used in reservations.
    pub clip_max_new_tokens: u32,
    /// vLLM KV block size.
    pub block_size: u32,
    /// `cuda graph: True` while `#running-req` ≤ this.
    pub cuda_graph_max_bs: u32,
    pub tp_size: u32,
    /// SGLang data-parallel ranks (each its own scheduler and KV pool of `kv_capacity_tokens`).
    pub dp_size: u32,
    /// Decode iteration seconds = `step_a + step_b * running + step_c * kv_tokens_in_use`:
    /// the weights streamed once, a per-request overhead, the KV read by attention.
    pub step_a: f64,
    pub step_b: f64,
    pub step_c: f64,
    /// Prefill batch seconds = `prefill_a + prefill_per_token * tokens + prefill_attn *
    /// pairs`: a per-pass overhead, compute linear in prompt tokens, and attention over
    /// each token's prefix (`pairs` = Σ over tokens of their position in the sequence).
    pub prefill_a: f64,
    pub prefill_per_token: f64,
    pub prefill_attn: f64,
    /// Multiplies every prefill term (0.5: prefill costs half, what faster prefill
    /// kernels, chunks mixed into decode or prefill-decode disaggregation buy).
    pub prefill_cost_scale: f64,
    /// A pass streams the weights once and its matmuls take
    /// `max(step_a, prefill_per_token × tokens in the pass)` (decode tokens included)
    /// instead of the sum (see the `cost` module).
    pub roofline: bool,
    /// SGLang: a `Decode batch` line every this many decode iterations.
    pub decode_log_interval: u32,
    /// vLLM stats interval in seconds; 0 = engine default (V1 10 s, V0 5 s).
    pub log_interval_s: f64,

    // ---- log text ----
    /// Timestamp of the first startup line, `YYYY-MM-DD HH:MM:SS`.
    pub start_time: String,
    /// Seconds between the first startup line and the client's first request.
    pub startup_s: f64,
    /// SGLang `SGLANG_LOG_MS=1`: `.mmm` after the seconds.
    pub log_ms: bool,
    /// Print ` TP0` in the SGLang prefix even when tp_size = 1 (0.3.4–0.4.6 style and the
    /// most common look in reports).
    pub rank_prefix_tp0: bool,
    /// uvicorn access lines at request completion.
    pub access_log: bool,
    /// A client benchmark summary block (`bench_serving` format) at the end.
    pub bench_summary: bool,
    /// vLLM process ids in `(APIServer pid=…)` / `(EngineCore_DP0 pid=…)`.
    pub api_pid: u32,
    pub engine_pid: u32,

    // ---- workload / client ----
    /// Closed loop: this many clients, each sending a new request when theirs finishes.
    /// 0 = open loop at `arrival_rate`.
    pub concurrency: u32,
    /// Open loop Poisson arrivals per second (used when `concurrency` is 0).
    pub arrival_rate: f64,
    /// Total requests to submit (0 = unlimited; then `duration_s` must be set).
    pub num_requests: u64,
    /// No submissions at or after this time (0 = no limit).
    pub duration_s: f64,
    pub bursts: Vec<Burst>,
    pub idle_gaps: Vec<IdleGap>,
    /// Periods during which the server stops stepping (a hung collective, a stuck
    /// worker): requests stay where they are, arrivals queue, and no line is printed.
    pub stalls: Vec<IdleGap>,
    /// vLLM engines: periods during which the scheduler goes on stepping and logging but
    /// admits no waiting request (a scheduler that skips its queue, a head request it
    /// can never place): the batch drains, arrivals queue, nothing runs.
    pub admission_stops: Vec<IdleGap>,
    /// Under DP, the share of arrivals each rank receives (empty: round robin, even).
    pub dp_weights: Vec<f64>,
    pub prompt_len: LenDist,
    /// Output length actually generated (capped at `max_new_tokens`).
    pub output_len: LenDist,
    pub max_new_tokens: u32,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            engine: Engine::Sglang,
            seed: 1,
            model_path: "meta-llama/Llama-3.1-8B-Instruct".into(),
            kv_capacity_tokens: 116_171,
            max_running_requests: 4096,
            max_running_requests_explicit: false,
            chunked_prefill_size: 8192,
            max_prefill_tokens: 16_384,
            context_len: 131_072,
            schedule_conservativeness: 1.0,
            new_token_ratio_decay_steps: 600,
            retract_decode_steps: 20,
            clip_max_new_tokens: 4096,
            block_size: 16,
            cuda_graph_max_bs: 256,
            tp_size: 1,
            dp_size: 1,
            step_a: 0.012,
            step_b: 0.000_25,
            step_c: 2e-8,
            prefill_a: 0.005,
            prefill_per_token: 4e-5,
            prefill_attn: 0.0,
            prefill_cost_scale: 1.0,
            roofline: false,
            decode_log_interval: 40,
            log_interval_s: 0.0,
            start_time: "2026-02-24 10:00:00".into(),
            startup_s: 60.0,
            log_ms: false,
            rank_prefix_tp0: true,
            access_log: true,
            bench_summary: false,
            api_pid: 7,
            engine_pid: 8,
            concurrency: 64,
            arrival_rate: 0.0,
            num_requests: 1000,
            duration_s: 0.0,
            bursts: Vec::new(),
            idle_gaps: Vec::new(),
            stalls: Vec::new(),
            admission_stops: Vec::new(),
            dp_weights: Vec::new(),
            prompt_len: LenDist::Uniform { min: 200, max: 800 },
            output_len: LenDist::Uniform {
                min: 100,
                max: 1000,
            },
            max_new_tokens: 1024,
        }
    }
}

/// Names accepted by [`SimConfig::preset`].
pub const PRESETS: &[&str] = &[
    "kv_bound",
    "running_cap",
    "client_underload",
    "prefill_heavy",
    "retraction",
    "decode_saturated",
    "vllm_kv_bound",
    "vllm_v0_kv_bound",
];

impl SimConfig {
    /// Effective vLLM stats interval.
    pub fn effective_log_interval_s(&self) -> f64 {
        if self.log_interval_s > 0.0 {
            self.log_interval_s
        } else if self.engine == Engine::VllmV0 {
            5.0
        } else {
            10.0
        }
    }

    /// A named scenario (see [`PRESETS`]); `None` for an unknown name.
    pub fn preset(name: &str) -> Option<SimConfig> {
        let d = SimConfig::default();
        let c = match name {
            // The seed story: long outputs against a 116k-token pool. Admission reserves
            // new_token_ratio × max_new_tokens per running request, so the pool (plus
            // reservation) binds with ~55 running and a long queue.
            "kv_bound" => SimConfig {
                kv_capacity_tokens: 116_171,
                concurrency: 150,
                num_requests: 0,
                duration_s: 1800.0,
                prompt_len: LenDist::Uniform { min: 300, max: 700 },
                output_len: LenDist::LogNormal {
                    mean: 3200.0,
                    sigma: 0.3,
                    min: 500,
                    max: 4096,
                },
                max_new_tokens: 4096,
                step_a: 0.028,
                step_b: 0.000_35,
                step_c: 1.2e-7,
                ..d
            },
            // Plenty of KV, a hard cap of 32 running requests, and a queue.
            "running_cap" => SimConfig {
                kv_capacity_tokens: 400_000,
                max_running_requests: 32,
                max_running_requests_explicit: true,
                concurrency: 64,
                num_requests: 0,
                duration_s: 900.0,
                prompt_len: LenDist::Uniform { min: 200, max: 800 },
                output_len: LenDist::Uniform {
                    min: 200,
                    max: 1200,
                },
                max_new_tokens: 2048,
                ..d
            },
            // 8 clients against a huge pool: nothing ever waits.
            "client_underload" => SimConfig {
                kv_capacity_tokens: 600_000,
                concurrency: 8,
                num_requests: 0,
                duration_s: 600.0,
                prompt_len: LenDist::Uniform {
                    min: 200,
                    max: 1000,
                },
                output_len: LenDist::Uniform { min: 100, max: 800 },
                max_new_tokens: 1024,
                ..d
            },
            // ~16K-token prompts, ~64-token outputs; chunked prefill dominates and a queue builds.
            "prefill_heavy" => SimConfig {
                kv_capacity_tokens: 1_500_000,
                concurrency: 0,
                arrival_rate: 1.45,
                num_requests: 0,
                duration_s: 600.0,
                prompt_len: LenDist::Uniform {
                    min: 14_000,
                    max: 18_000,
                },
                output_len: LenDist::Uniform { min: 48, max: 80 },
                max_new_tokens: 128,
                prefill_a: 0.01,
                prefill_per_token: 4e-5,
                ..d
            },
            // Aggressive scheduling (conservativeness 0.3) with outputs that mostly run to
            // max_new_tokens: the pool overflows and requests are retracted repeatedly.
            "retraction" => SimConfig {
                kv_capacity_tokens: 116_171,
                schedule_conservativeness: 0.3,
                concurrency: 150,
                num_requests: 0,
                duration_s: 1800.0,
                prompt_len: LenDist::Uniform { min: 300, max: 700 },
                output_len: LenDist::Uniform {
                    min: 3800,
                    max: 6000,
                },
                max_new_tokens: 4096,
                step_a: 0.028,
                step_b: 0.000_35,
                step_c: 1.2e-7,
                ..d
            },
            // Huge pool, many clients, an expensive per-request step: throughput flattens as
            // running grows; everything is admitted quickly.
            "decode_saturated" => SimConfig {
                kv_capacity_tokens: 2_000_000,
                concurrency: 384,
                num_requests: 0,
                duration_s: 900.0,
                prompt_len: LenDist::Uniform { min: 200, max: 800 },
                output_len: LenDist::Uniform {
                    min: 200,
                    max: 1200,
                },
                max_new_tokens: 2048,
                step_a: 0.010,
                step_b: 0.000_6,
                step_c: 1e-8,
                cuda_graph_max_bs: 512,
                ..d
            },
            // vLLM V1: admission only needs blocks for the prompt, so the pool fills and the
            // newest requests are preempted (recompute).
            "vllm_kv_bound" => SimConfig {
                engine: Engine::VllmV1,
                kv_capacity_tokens: 116_176,
                max_running_requests: 256,
                context_len: 8192,
                concurrency: 150,
                num_requests: 0,
                duration_s: 1800.0,
                prompt_len: LenDist::Uniform { min: 300, max: 700 },
                output_len: LenDist::Uniform {
                    min: 1500,
                    max: 4096,
                },
                max_new_tokens: 4096,
                step_a: 0.030,
                step_b: 0.000_35,
                step_c: 1.2e-7,
                ..d
            },
            // The same workload on the V0 engine (swap/recompute preemption lines).
            "vllm_v0_kv_bound" => SimConfig {
                engine: Engine::VllmV0,
                ..SimConfig::preset("vllm_kv_bound")?
            },
            _ => return None,
        };
        Some(c)
    }
}
