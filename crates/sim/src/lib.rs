//! `batchlens-sim`: a deterministic simulator of continuous-batching LLM servers (SGLang and
//! vLLM V1/V0) that writes the log text those servers print.
//!
//! It models the schedulers' admission, KV accounting, retraction/preemption and step timing
//! in discrete iterations, and emits startup, periodic-stats, prefill, retraction and access
//! lines through a callback. No I/O, no clock, no threads: the output depends only on the
//! [`SimConfig`] (including its seed).
//!
//! The schedulers: SGLang admits a request only if the pool also holds the future tokens
//! of the running ones (`new_token_ratio` × remaining `max_new_tokens`, the ratio starting
//! at 0.7 × `schedule_conservativeness`, decaying each decode step to a tenth of that and
//! raised again by a retraction), prefills in chunks of `chunked_prefill_size`, and rates
//! a Decode line's `gen throughput` over the wall time since the previous one, prefill
//! included. vLLM V1 reserves nothing, shares each step's `max_num_batched_tokens`
//! between decodes and prompt chunks (a request being prefilled counts as running) and
//! preempts the newest request (recompute) when blocks run out; V0 runs prompt steps
//! apart. TensorRT-LLM admits under GUARANTEED_NO_EVICT (blocks for prompt + max tokens).
//! Step times come from the `cost` module (decode memory-bound, prefill compute-bound;
//! see [`SimConfig::step_a`] and [`SimConfig::roofline`]). [`sweep`] draws random
//! workloads and measures what each lever buys.
//!
//! Presets ([`SimConfig::preset`]), measured with seed 1 (steady window; DP/TP 1):
//!
//! | preset | engine | running | queued | gen tok/s | KV usage | retract/preempt |
//! |---|---|---|---|---|---|---|
//! | `kv_bound` | SGLang | 49.9 | 100.1 | 848 | 0.90 | 78 retractions |
//! | `running_cap` | SGLang | 31.9 (cap 32) | 32.0 | 1473 | 0.07 | 0 |
//! | `client_underload` | SGLang | 8.0 | 0.0 | 546 | 0.01 | 0 |
//! | `prefill_heavy` | SGLang | 61.2 | 6.4 | 89 | 0.66 | 0 (prefill ~90% of time) |
//! | `retraction` | SGLang | 42.4 | 107.6 | 742 | 0.88 | 219 retractions |
//! | `decode_saturated` | SGLang | 383.9 | 0.0 | 1500 | 0.17 | 0 |
//! | `vllm_kv_bound` | vLLM V1 | 60.1 | 90.2 | 873 | 0.99 | 2293 preemptions |
//! | `vllm_v0_kv_bound` | vLLM V0 | 59.8 | 90.3 | 881 | 0.99 | 1545 preemptions |
//!
//! ```
//! let cfg = batchlens_sim::SimConfig { num_requests: 20, ..Default::default() };
//! let mut text = String::new();
//! let out = batchlens_sim::simulate(&cfg, &mut |line| {
//!     text.push_str(line);
//!     text.push('\n');
//! });
//! assert_eq!(out.completed_requests, 20);
//! assert!(text.contains("Decode batch, #running-req: "));
//! ```

mod client;
mod config;
mod cost;
mod out;
pub mod rng;
mod sglang;
mod stats;
pub mod sweep;
pub mod timefmt;
mod vllm;

use core::fmt::Write;

use serde::Serialize;

pub use config::{Burst, Engine, IdleGap, LenDist, SimConfig, PRESETS};
pub use out::LineCounts;

use client::{Client, Req};
use out::{Kind, Out};
use stats::Stats;

/// Ground truth of one simulated run. Times are seconds from the client's start.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SimOutcome {
    /// From the first submission (time 0) to the last event.
    pub duration_s: f64,
    pub submitted_requests: u64,
    pub completed_requests: u64,
    /// Requests dropped because they could never fit in the KV pool.
    pub aborted_requests: u64,
    /// Every output token sampled by the server: decode tokens plus the first token of each
    /// (re-)prefill.
    pub generated_tokens: u64,
    /// Tokens produced by decode iterations (what SGLang's `gen throughput` counts).
    pub decode_tokens: u64,
    /// Output tokens of completed requests.
    pub useful_output_tokens: u64,
    /// Prefill tokens computed, including recomputation after retraction/preemption.
    pub prompt_tokens_computed: u64,
    /// Prefill tokens spent re-computing retracted/preempted requests (prompt + kept output).
    pub recomputed_tokens: u64,
    /// Generated tokens whose KV was discarded by retraction/preemption (the tokens are kept
    /// as output and re-prefilled, as real SGLang and vLLM do).
    pub discarded_tokens: u64,
    /// Time-weighted mean of running requests over the whole run (summed over DP ranks).
    pub mean_running: f64,
    /// Time-weighted mean of queued (waiting) requests over the whole run.
    pub mean_queued: f64,
    /// Steady window: from when running first reaches 90% of its plateau to the last submission.
    pub steady_start_s: f64,
    pub steady_end_s: f64,
    pub steady_mean_running: f64,
    pub steady_mean_queued: f64,
    /// Decode tokens per second over the steady window (the quantity SGLang's
    /// `gen throughput` estimates).
    pub steady_gen_tok_s: f64,
    /// Mean KV usage (used / capacity) over the steady window.
    pub steady_kv_usage: f64,
    /// SGLang retraction events (log lines); vLLM: 0.
    pub retractions: u64,
    /// Requests retracted (SGLang) or preempted (vLLM), counted per eviction.
    pub retracted_requests: u64,
    /// vLLM preemptions (same as `retracted_requests` for vLLM; 0 for SGLang).
    pub preemptions: u64,
    /// Useful output tokens ÷ (last completion − first submission).
    pub client_output_tok_s: f64,
    /// Server time with nothing running and nothing queued (mean over DP ranks).
    pub idle_s: f64,
    /// Server time spent in prefill (mean over DP ranks).
    pub prefill_s: f64,
    /// Server time spent in decode iterations (mean over DP ranks).
    pub decode_s: f64,
    pub first_submit_s: f64,
    pub last_submit_s: f64,
    pub last_completion_s: f64,
    /// Effective KV capacity per rank in tokens (vLLM: whole blocks).
    pub kv_capacity_tokens: u64,
    pub lines: LineCounts,
}

/// State shared by the ranks of one run.
pub(crate) struct Shared<'a> {
    pub cfg: &'a SimConfig,
    pub out: Out<'a>,
    pub client: Client,
    pub stats: Stats,
}

impl Shared<'_> {
    /// A request finished at `t`.
    pub(crate) fn complete(&mut self, req: Req, t: f64) {
        let st = &mut self.stats;
        st.completed += 1;
        st.useful_output_tokens += req.output_len as u64;
        st.last_completion = st.last_completion.max(t);
        if let Some(l) = st.latencies.as_mut() {
            let ttft = if req.first_tok_t >= 0.0 {
                req.first_tok_t - req.submit_t
            } else {
                t - req.submit_t
            };
            l.push((t - req.submit_t, ttft, req.prompt, req.output_len));
        }
        if self.cfg.access_log {
            self.access_line(t, req.port);
        }
        self.client.on_end(req.replace, t);
    }

    /// A request that can never be scheduled is dropped at `t`.
    pub(crate) fn abort(&mut self, req: Req, t: f64) {
        self.stats.aborted += 1;
        self.client.on_end(req.replace, t);
    }

    fn access_line(&mut self, t: f64, port: u16) {
        let b = match self.cfg.engine {
            Engine::Sglang => self.out.sgl(t, ""),
            Engine::VllmV1 => self.out.bare("APIServer", self.cfg.api_pid),
            Engine::VllmV0 | Engine::Trtllm => self.out.bare("", 0),
        };
        let _ = write!(
            b,
            "INFO:     127.0.0.1:{port} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK"
        );
        self.out.flush(Kind::Access);
    }
}

/// One scheduler (an SGLang DP rank or a vLLM engine).
pub(crate) trait Rank {
    fn t(&self) -> f64;
    /// Has something to run (running, waiting or a partial prefill).
    fn busy(&self) -> bool;
    /// A request arrives at `t`.
    fn enqueue(&mut self, req: Req, t: f64, sh: &mut Shared);
    /// Run one batch (prefill or decode). Must advance time or shrink the work.
    fn step(&mut self, sh: &mut Shared);
    /// End of the run at `t_end`.
    fn finish(&mut self, _t_end: f64, _sh: &mut Shared) {}
    /// The server does not step before `t`.
    fn pause_until(&mut self, t: f64);
}

/// The end of the stall `t` falls in, if any.
fn stall_end(cfg: &SimConfig, t: f64) -> Option<f64> {
    cfg.stalls
        .iter()
        .find(|g| t >= g.start_s && t < g.end_s)
        .map(|g| g.end_s)
}

/// The end of the admission stop `t` falls in, if any.
pub(crate) fn admission_stop_end(cfg: &SimConfig, t: f64) -> Option<f64> {
    cfg.admission_stops
        .iter()
        .find(|g| t >= g.start_s && t < g.end_s)
        .map(|g| g.end_s)
}

/// The rank the next arrival goes to: round robin, or the rank furthest below its
/// share of `dp_weights` (a client or router that favours some ranks).
fn route(cfg: &SimConfig, sent: &[u64], rr: usize) -> usize {
    let n = sent.len();
    if cfg.dp_weights.len() != n || cfg.dp_weights.iter().any(|w| w.is_nan() || *w <= 0.0) {
        return rr;
    }
    (0..n)
        .min_by(|&a, &b| {
            let ka = (sent[a] + 1) as f64 / cfg.dp_weights[a];
            let kb = (sent[b] + 1) as f64 / cfg.dp_weights[b];
            ka.total_cmp(&kb).then(a.cmp(&b))
        })
        .unwrap_or(rr)
}

const MAX_SIM_S: f64 = 1e8;

/// Event loop: deliver arrivals in time order, always stepping the busy rank that is furthest behind.
pub(crate) fn drive<R: Rank>(ranks: &mut [R], sh: &mut Shared) {
    let n = ranks.len();
    let mut rr = 0usize;
    let mut sent = vec![0u64; n];
    loop {
        let mut best: Option<(usize, f64)> = None;
        for (i, r) in ranks.iter().enumerate() {
            if r.busy() && best.map(|(_, t)| r.t() < t).unwrap_or(true) {
                best = Some((i, r.t()));
            }
        }
        let next_arr = sh.client.next_time();
        match best {
            None if !next_arr.is_finite() => break,
            Some((i, bt)) if bt < next_arr => {
                if bt > MAX_SIM_S {
                    break;
                }
                if let Some(end) = stall_end(sh.cfg, bt) {
                    ranks[i].pause_until(end);
                    continue;
                }
                ranks[i].step(sh);
            }
            _ => {
                let req = sh.client.pop();
                let st = &mut sh.stats;
                st.first_submit = st.first_submit.min(next_arr);
                st.last_submit = st.last_submit.max(next_arr);
                let to = route(sh.cfg, &sent, rr);
                sent[to] += 1;
                ranks[to].enqueue(req, next_arr, sh);
                rr = (rr + 1) % n;
            }
        }
    }
    let t_end = ranks.iter().map(|r| r.t()).fold(0.0, f64::max);
    sh.stats.end_t = t_end;
    for r in ranks.iter_mut() {
        r.finish(t_end, sh);
    }
}

/// Runs the simulation, calling `emit` once per log line (without the trailing newline).
pub fn simulate(cfg: &SimConfig, emit: &mut dyn FnMut(&str)) -> SimOutcome {
    let base = timefmt::parse_datetime(&cfg.start_time)
        .or_else(|| timefmt::parse_datetime("2026-02-24 10:00:00"))
        .unwrap_or(0);
    let startup = cfg.startup_s.max(0.0);
    let clock = timefmt::Clock::new(base, startup);
    let out = Out::new(emit, clock, cfg.log_ms);
    let cap = effective_capacity(cfg);
    // A request must fit in an empty pool together with its (clipped) output reservation.
    let clip = cfg
        .clip_max_new_tokens
        .max(1)
        .min(cfg.max_new_tokens.max(1)) as u64;
    let max_prompt = cap
        .saturating_sub(clip + 2)
        .min(cfg.context_len.max(2) as u64 - 1)
        .clamp(1, u32::MAX as u64) as u32;
    let mut sh = Shared {
        cfg,
        out,
        client: Client::new(cfg, max_prompt),
        stats: Stats::new(cfg.bench_summary),
    };
    match cfg.engine {
        Engine::Sglang => sglang::run(&mut sh, cap),
        Engine::VllmV1 | Engine::VllmV0 | Engine::Trtllm => vllm::run(&mut sh, cap),
    }
    if cfg.bench_summary {
        bench_summary(&mut sh);
    }
    finalize(&sh, cap)
}

/// KV capacity per rank in tokens as the engine reports it.
pub(crate) fn effective_capacity(cfg: &SimConfig) -> u64 {
    match cfg.engine {
        Engine::Sglang => cfg.kv_capacity_tokens.max(16),
        Engine::VllmV1 | Engine::VllmV0 | Engine::Trtllm => {
            let bs = cfg.block_size.max(1) as u64;
            (cfg.kv_capacity_tokens / bs).max(4) * bs
        }
    }
}

fn finalize(sh: &Shared, cap: u64) -> SimOutcome {
    let st = &sh.stats;
    let ranks = if sh.cfg.engine == Engine::Sglang {
        sh.cfg.dp_size.max(1) as f64
    } else {
        1.0
    };
    let dur = st.end_t.max(1e-9);
    let first_submit = if st.first_submit.is_finite() {
        st.first_submit
    } else {
        0.0
    };
    // Steady window: plateau = mean running over the second half of the submission period.
    let last_submit = st.last_submit;
    let (mut a, mut b) = (0.0, dur);
    if last_submit > 4.0 * st.bucket_w {
        let half = st.window(last_submit / 2.0, last_submit);
        let plateau = half.running / (last_submit / 2.0);
        let mut start = 0.0;
        for (i, bk) in st.buckets.iter().enumerate() {
            if bk.running / st.bucket_w >= 0.9 * plateau {
                start = i as f64 * st.bucket_w;
                break;
            }
        }
        if start < last_submit {
            a = start;
            b = last_submit;
        }
    }
    let w = st.window(a, b);
    let wl = (b - a).max(1e-9);
    let client_span = st.last_completion - first_submit;
    SimOutcome {
        duration_s: st.end_t,
        submitted_requests: sh.client.submitted,
        completed_requests: st.completed,
        aborted_requests: st.aborted,
        generated_tokens: st.generated_tokens,
        decode_tokens: st.decode_tokens,
        useful_output_tokens: st.useful_output_tokens,
        prompt_tokens_computed: st.prompt_tokens_computed,
        recomputed_tokens: st.recomputed_tokens,
        discarded_tokens: st.discarded_tokens,
        mean_running: st.running_int / dur,
        mean_queued: st.queued_int / dur,
        steady_start_s: a,
        steady_end_s: b,
        steady_mean_running: w.running / wl,
        steady_mean_queued: w.queued / wl,
        steady_gen_tok_s: w.decode_tokens / wl,
        steady_kv_usage: w.kv / wl / (cap as f64 * ranks),
        retractions: st.retraction_events,
        retracted_requests: st.retracted_requests,
        preemptions: st.preemptions,
        client_output_tok_s: if client_span > 0.0 {
            st.useful_output_tokens as f64 / client_span
        } else {
            0.0
        },
        idle_s: st.idle_s / ranks,
        prefill_s: st.prefill_s / ranks,
        decode_s: st.decode_s / ranks,
        first_submit_s: first_submit,
        last_submit_s: last_submit,
        last_completion_s: st.last_completion,
        kv_capacity_tokens: cap,
        lines: sh.out.lines.clone(),
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

/// SGLang `bench_serving` summary block (client view), printed after the run.
fn bench_summary(sh: &mut Shared) {
    let Some(lat) = sh.stats.latencies.take() else {
        return;
    };
    let st = &sh.stats;
    let first = if st.first_submit.is_finite() {
        st.first_submit
    } else {
        0.0
    };
    let dur = (st.last_completion - first).max(1e-9);
    let n = lat.len();
    let in_tok: u64 = lat.iter().map(|x| x.2 as u64).sum();
    let out_tok: u64 = lat.iter().map(|x| x.3 as u64).sum();
    let mut e2e: Vec<f64> = lat.iter().map(|x| x.0 * 1000.0).collect();
    let mut ttft: Vec<f64> = lat.iter().map(|x| x.1 * 1000.0).collect();
    let mut tpot: Vec<f64> = lat
        .iter()
        .filter(|x| x.3 > 1)
        .map(|x| (x.0 - x.1) * 1000.0 / (x.3 - 1) as f64)
        .collect();
    for v in [&mut e2e, &mut ttft, &mut tpot] {
        v.sort_by(f64::total_cmp);
    }
    let mean = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let cfg = sh.cfg;
    let rate = if cfg.concurrency == 0 && cfg.arrival_rate > 0.0 {
        format!("{}", cfg.arrival_rate)
    } else {
        "inf".to_string()
    };
    let conc = if cfg.concurrency > 0 {
        cfg.concurrency.to_string()
    } else {
        "not set".to_string()
    };
    let backend = match cfg.engine {
        Engine::Sglang => "sglang-oai-chat",
        Engine::Trtllm => "openai-chat",
        _ => "vllm",
    };
    let mut rows: Vec<String> = Vec::new();
    rows.push(format!("{:=^50}", " Serving Benchmark Result "));
    let s = |rows: &mut Vec<String>, k: &str, v: String| rows.push(format!("{k:<40} {v:<10}"));
    let f = |rows: &mut Vec<String>, k: &str, v: f64| rows.push(format!("{k:<40} {v:<10.2}"));
    s(&mut rows, "Backend:", backend.into());
    s(&mut rows, "Traffic request rate:", rate);
    s(&mut rows, "Max request concurrency:", conc);
    s(&mut rows, "Successful requests:", n.to_string());
    f(&mut rows, "Benchmark duration (s):", dur);
    s(&mut rows, "Total input tokens:", in_tok.to_string());
    s(&mut rows, "Total generated tokens:", out_tok.to_string());
    s(
        &mut rows,
        "Total generated tokens (retokenized):",
        out_tok.to_string(),
    );
    f(&mut rows, "Request throughput (req/s):", n as f64 / dur);
    f(
        &mut rows,
        "Input token throughput (tok/s):",
        in_tok as f64 / dur,
    );
    f(
        &mut rows,
        "Output token throughput (tok/s):",
        out_tok as f64 / dur,
    );
    f(
        &mut rows,
        "Total token throughput (tok/s):",
        (in_tok + out_tok) as f64 / dur,
    );
    f(
        &mut rows,
        "Concurrency:",
        e2e.iter().sum::<f64>() / 1000.0 / dur,
    );
    rows.push(format!("{:-^50}", "End-to-End Latency"));
    f(&mut rows, "Mean E2E Latency (ms):", mean(&e2e));
    f(
        &mut rows,
        "Median E2E Latency (ms):",
        percentile(&e2e, 50.0),
    );
    f(&mut rows, "P90 E2E Latency (ms):", percentile(&e2e, 90.0));
    f(&mut rows, "P99 E2E Latency (ms):", percentile(&e2e, 99.0));
    rows.push(format!("{:-^50}", "Time to First Token"));
    f(&mut rows, "Mean TTFT (ms):", mean(&ttft));
    f(&mut rows, "Median TTFT (ms):", percentile(&ttft, 50.0));
    f(&mut rows, "P99 TTFT (ms):", percentile(&ttft, 99.0));
    rows.push(format!(
        "{:-^50}",
        "Time per Output Token (excl. 1st token)"
    ));
    f(&mut rows, "Mean TPOT (ms):", mean(&tpot));
    f(&mut rows, "Median TPOT (ms):", percentile(&tpot, 50.0));
    f(&mut rows, "P99 TPOT (ms):", percentile(&tpot, 99.0));
    rows.push(format!("{:-^50}", "Inter-Token Latency"));
    f(&mut rows, "Mean ITL (ms):", mean(&tpot));
    f(&mut rows, "Median ITL (ms):", percentile(&tpot, 50.0));
    f(&mut rows, "P95 ITL (ms):", percentile(&tpot, 95.0));
    f(&mut rows, "P99 ITL (ms):", percentile(&tpot, 99.0));
    f(
        &mut rows,
        "Max ITL (ms):",
        tpot.last().copied().unwrap_or(0.0),
    );
    rows.push("=".repeat(50));
    for r in rows {
        sh.out.buf.clear();
        sh.out.buf.push_str(&r);
        sh.out.flush(Kind::Other);
    }
}
