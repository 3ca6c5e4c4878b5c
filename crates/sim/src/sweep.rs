//! Random workloads labelled by the lever that buys the most.
//!
//! [`draw`] makes a server and a workload from a seed, spread widely over the engines,
//! the hardware's step-time constants, prompt and output lengths, pools, caps and
//! clients. [`relax`] applies one [`Lever`]; [`measure`] simulates the configuration
//! and every lever relaxed and reports each one's steady generation-throughput gain,
//! and [`Gains::label`] names the lever that buys the most (none when nothing buys
//! [`LABEL_MIN_GAIN`]). The same seed always gives the same configuration, so a
//! handful of seeds is a fixed test set and thousands are a sweep (`bench/levers.py`).

use serde::Serialize;

use crate::config::{Burst, Engine, LenDist, SimConfig};
use crate::rng::Rng;
use crate::{simulate, SimOutcome};

/// A change that relaxes one limit of the server or its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lever {
    /// The KV pool ×2.
    Kv,
    /// The running-request cap ×2 (SGLang `--max-running-requests`, vLLM
    /// `--max-num-seqs`, TensorRT-LLM `max_batch_size`).
    Cap,
    /// The client ×2: twice the concurrency of a closed loop, twice the arrival rate
    /// (and burst sizes) of an open one.
    Client,
    /// Every prefill cost ×½.
    Prefill,
}

impl Lever {
    pub const ALL: [Lever; 4] = [Lever::Kv, Lever::Cap, Lever::Client, Lever::Prefill];

    pub fn name(self) -> &'static str {
        match self {
            Lever::Kv => "kv",
            Lever::Cap => "cap",
            Lever::Client => "client",
            Lever::Prefill => "prefill",
        }
    }
}

/// A label needs a lever that buys at least this much (0.08 = +8 %).
pub const LABEL_MIN_GAIN: f64 = 0.08;

/// `cfg` with `lever` relaxed.
pub fn relax(cfg: &SimConfig, lever: Lever) -> SimConfig {
    let mut c = cfg.clone();
    match lever {
        Lever::Kv => c.kv_capacity_tokens = c.kv_capacity_tokens.saturating_mul(2),
        Lever::Cap => c.max_running_requests = c.max_running_requests.saturating_mul(2),
        Lever::Client => {
            if c.concurrency > 0 {
                c.concurrency = c.concurrency.saturating_mul(2);
            } else {
                c.arrival_rate *= 2.0;
            }
            for b in &mut c.bursts {
                b.count = b.count.saturating_mul(2);
            }
        }
        Lever::Prefill => c.prefill_cost_scale *= 0.5,
    }
    c
}

/// Steady generation throughput of a configuration and of each lever relaxed.
#[derive(Debug, Clone, Serialize)]
pub struct Gains {
    pub baseline_tok_s: f64,
    /// Relaxed ÷ baseline − 1, in [`Lever::ALL`]'s order.
    pub kv: f64,
    pub cap: f64,
    pub client: f64,
    pub prefill: f64,
}

impl Gains {
    pub fn get(&self, lever: Lever) -> f64 {
        match lever {
            Lever::Kv => self.kv,
            Lever::Cap => self.cap,
            Lever::Client => self.client,
            Lever::Prefill => self.prefill,
        }
    }

    /// The lever that buys the most, if it buys at least [`LABEL_MIN_GAIN`].
    pub fn label(&self) -> Option<Lever> {
        let best = Lever::ALL
            .into_iter()
            .max_by(|a, b| self.get(*a).total_cmp(&self.get(*b)))?;
        (self.get(best) >= LABEL_MIN_GAIN).then_some(best)
    }
}

fn quiet(cfg: &SimConfig) -> SimOutcome {
    simulate(cfg, &mut |_| {})
}

/// Simulates `cfg` and every lever relaxed; the baseline's outcome and the gains.
pub fn measure(cfg: &SimConfig) -> (SimOutcome, Gains) {
    let base = quiet(cfg);
    let b = base.steady_gen_tok_s.max(1e-9);
    let g = |l: Lever| quiet(&relax(cfg, l)).steady_gen_tok_s / b - 1.0;
    let gains = Gains {
        baseline_tok_s: base.steady_gen_tok_s,
        kv: g(Lever::Kv),
        cap: g(Lever::Cap),
        client: g(Lever::Client),
        prefill: g(Lever::Prefill),
    };
    (base, gains)
}

/// The configurations of seeds `0..n` (a fixed set for tests).
pub fn subset(n: u64) -> Vec<SimConfig> {
    (0..n).map(draw).collect()
}

/// Log-uniform in `[lo, hi]`.
fn log_u(r: &mut Rng, lo: f64, hi: f64) -> f64 {
    (lo.ln() + (hi.ln() - lo.ln()) * r.f64()).exp()
}

fn pick<T: Copy>(r: &mut Rng, xs: &[T]) -> T {
    xs[r.below(xs.len())]
}

/// A length distribution around `mean`, in `[1, cap]`; its largest value.
fn lengths(r: &mut Rng, mean: f64, cap: u32) -> (LenDist, u32) {
    let m = mean.round().clamp(1.0, cap as f64);
    match r.below(3) {
        0 => {
            let spread = r.f64() * 0.3;
            let lo = (m * (1.0 - spread)).max(1.0) as u32;
            let hi = ((m * (1.0 + spread)) as u32).clamp(lo, cap);
            (LenDist::Uniform { min: lo, max: hi }, hi)
        }
        1 => {
            let lo = (m * 0.5).max(1.0) as u32;
            let hi = ((m * 1.5) as u32).clamp(lo, cap);
            (LenDist::Uniform { min: lo, max: hi }, hi)
        }
        _ => {
            let max = ((m * 4.0) as u32).clamp(1, cap);
            let min = ((m / 8.0) as u32).max(1);
            let sigma = 0.2 + 0.8 * r.f64();
            (
                LenDist::LogNormal {
                    mean: m,
                    sigma,
                    min,
                    max,
                },
                max,
            )
        }
    }
}

/// A random server and workload: the engine, the step-time constants, the lengths, the
/// pool, the cap and the client are drawn, each placed around what the others allow so
/// that every kind of limit comes up. The traffic lasts long enough for ten request
/// lifetimes and about 1500 requests (300 to 8000 simulated seconds).
pub fn draw(seed: u64) -> SimConfig {
    let mut r = Rng::new(seed ^ 0x9d1c_3f57_a2b4_e601);
    let d = SimConfig::default();
    let engine = match r.below(20) {
        0..=6 => Engine::Sglang,
        7..=11 => Engine::VllmV1,
        12..=14 => Engine::VllmV0,
        _ => Engine::Trtllm,
    };

    // The hardware: from a small model on a big GPU to a big model on a small one.
    let step_a = log_u(&mut r, 0.004, 0.05);
    let step_b = log_u(&mut r, 2e-5, 1e-3);
    let step_c = log_u(&mut r, 3e-9, 3e-7);
    // A token's matmuls cost what the weights' read costs over the GPU's ridge point (its
    // FLOP/s over its bytes/s, in tokens: ~100 for an older GPU at low efficiency, ~1,200
    // for FP8 on a recent one): both scale with the model's size, so a big model's prompt
    // chunk is never hidden under its decode step's weight read.
    let prefill_per_token = step_a / log_u(&mut r, 100.0, 1200.0);
    let prefill_a = log_u(&mut r, 0.001, 0.03);
    // Attention adds up to ~30 % to a 16k-token prompt's linear cost.
    let prefill_attn = if r.f64() < 0.7 {
        prefill_per_token * log_u(&mut r, 1e-6, 4e-5)
    } else {
        0.0
    };
    let roofline = r.f64() < 0.7;

    // The workload.
    let prompt_mean = log_u(&mut r, 64.0, 16_384.0);
    let output_mean = log_u(&mut r, 8.0, 4096.0);
    let (prompt_len, prompt_max) = lengths(&mut r, prompt_mean, 32_768);
    let (output_len, output_max) = lengths(&mut r, output_mean, 16_384);
    // Mostly a limit the outputs stay under; sometimes one they run into.
    let max_new_tokens = if r.f64() < 0.7 {
        (output_max as f64 * (1.0 + 2.0 * r.f64())) as u32
    } else {
        (output_mean * (0.5 + 0.5 * r.f64())) as u32
    }
    .clamp(8, 8192);
    let out_eff = output_mean.min(max_new_tokens as f64);
    let context_len = (prompt_max + max_new_tokens + 16)
        .next_power_of_two()
        .clamp(4096, 131_072);

    // The pool: room for a few to hundreds of requests, never less than one.
    let footprint = prompt_mean + out_eff / 2.0;
    let one = (prompt_max.min(context_len) + max_new_tokens) as f64 + 64.0;
    let kv = (footprint * log_u(&mut r, 4.0, 600.0))
        .max(one * 1.2)
        .min(8e6) as u64;

    let dp = if engine == Engine::Sglang && r.f64() < 0.25 {
        2
    } else {
        1
    };
    // Requests the pool holds at once (per rank), to place caps and clients around it.
    let pool_n = (kv as f64 / footprint).max(1.0);
    let relative_cap = |r: &mut Rng| (pool_n * log_u(r, 0.05, 1.5)).clamp(4.0, 2048.0) as u32;
    let (cap, explicit) = match engine {
        Engine::Sglang => match r.below(20) {
            0..=5 => (4096, false),
            // Speculative decoding's small default, never given on the command line.
            6..=8 => (pick(&mut r, &[16, 24, 32, 48]), false),
            9..=16 => (relative_cap(&mut r), true),
            _ => (log_u(&mut r, 8.0, 512.0) as u32, true),
        },
        Engine::VllmV1 | Engine::VllmV0 => match r.below(10) {
            0..=1 => (256, false),
            2..=7 => (relative_cap(&mut r), true),
            _ => (log_u(&mut r, 8.0, 1024.0) as u32, true),
        },
        Engine::Trtllm => match r.below(10) {
            0..=1 => (2048, false),
            2..=7 => (relative_cap(&mut r), true),
            _ => (log_u(&mut r, 8.0, 1024.0) as u32, true),
        },
    };
    let chunk = match engine {
        Engine::VllmV0 => 2048,
        _ => pick(&mut r, &[2048, 4096, 8192, 8192, 16_384]),
    };

    // What the server sustains, roughly, to place open-loop rates around it.
    let n = (cap.min(4096) as f64).min(pool_n) * dp as f64;
    let n = n.clamp(1.0, 1024.0);
    let step = step_a + step_b * n + step_c * n * footprint;
    let req_s = out_eff * step / n + prefill_per_token * prompt_mean + prefill_a / 4.0;
    let capacity_rps = 1.0 / req_s;
    let lifetime = out_eff * step + prefill_per_token * prompt_mean * 4.0;

    let mut concurrency = 0;
    let mut arrival_rate = 0.0;
    let mut bursts = Vec::new();
    let mut bursty = false;
    match r.below(20) {
        0..=5 => concurrency = log_u(&mut r, 2.0, 1024.0).round() as u32,
        6..=10 => concurrency = (n * log_u(&mut r, 0.25, 8.0)).round().max(1.0) as u32,
        11..=16 => arrival_rate = capacity_rps * log_u(&mut r, 0.3, 4.0),
        _ => {
            // Bursts on a background trickle.
            arrival_rate = capacity_rps * log_u(&mut r, 0.05, 0.5);
            bursty = true;
        }
    }
    // Long enough for ten request lifetimes and ~1500 requests, so that the steady
    // throughput of two runs differs by the levers more than by the sample of request
    // lengths; a TensorRT-LLM log has a line per iteration, so its runs are kept to
    // ~100k iterations.
    let in_flight = if concurrency > 0 {
        concurrency as f64
    } else {
        (arrival_rate * lifetime).max(1.0)
    };
    let served_rps = capacity_rps.min(in_flight / lifetime.max(1e-3));
    let mut duration = (10.0 * lifetime).max(1500.0 / served_rps.max(1e-3));
    duration = (120.0 + duration).clamp(300.0, 8000.0);
    if engine == Engine::Trtllm {
        duration = duration.min((100_000.0 * step).max(300.0));
    }
    if bursty {
        let period = 5.0 + 55.0 * r.f64();
        let per = capacity_rps * period * log_u(&mut r, 0.2, 2.5);
        let count = (per.round() as u32).max(1);
        let mut t = period * r.f64();
        while t < duration {
            bursts.push(Burst { at_s: t, count });
            t += period;
        }
    }

    SimConfig {
        engine,
        seed: r.next_u64() % 1_000_000_007,
        kv_capacity_tokens: kv,
        max_running_requests: cap.max(1),
        max_running_requests_explicit: explicit,
        chunked_prefill_size: chunk,
        max_prefill_tokens: 16_384,
        context_len,
        schedule_conservativeness: if r.f64() < 0.7 {
            1.0
        } else {
            0.3 + 1.3 * r.f64()
        },
        block_size: match engine {
            Engine::Trtllm => 32,
            _ => pick(&mut r, &[16, 16, 16, 32]),
        },
        cuda_graph_max_bs: pick(&mut r, &[160, 256, 512]),
        tp_size: pick(&mut r, &[1, 1, 2, 4, 8]),
        dp_size: dp,
        step_a,
        step_b,
        step_c,
        prefill_a,
        prefill_per_token,
        prefill_attn,
        prefill_cost_scale: 1.0,
        roofline,
        decode_log_interval: if r.f64() < 0.6 {
            40
        } else {
            pick(&mut r, &[10, 20, 50, 100])
        },
        startup_s: 30.0 + 90.0 * r.f64(),
        access_log: r.f64() < 0.5,
        concurrency,
        arrival_rate,
        num_requests: 0,
        duration_s: duration,
        bursts,
        prompt_len,
        output_len,
        max_new_tokens,
        ..d
    }
}
