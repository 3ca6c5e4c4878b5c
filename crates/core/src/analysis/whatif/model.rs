//! The fitted model and its predictions: step time, KV footprint, admission.

use super::prefill_share::{prefill_share, ShareInputs};
use super::step_time::{StepInputs, StepTime, PRIOR_N0};
use super::Bound;
use crate::model::profile::{Admission, Profile};
use crate::report::Report;
use crate::report::{Change, Prediction};

/// Fitted model and the steady state it was fitted around.
#[derive(Debug, Clone)]
pub struct Model {
    /// Steady-state running requests (all ranks).
    pub running: f64,
    /// Steady-state generation throughput, tok/s (all ranks).
    pub gen_tok_s: f64,
    pub queued: f64,
    /// KV pool in tokens, all ranks together.
    pub kv_capacity: Option<f64>,
    /// KV tokens held per running request in the steady state (not reserved).
    pub kv_per_request: Option<f64>,
    /// Steady-state KV usage (0..1).
    pub kv_usage: Option<f64>,
    /// The batch and KV usage the server holds when it has more than it admits: the
    /// steady state's, or for a client that sends at its own pace, those of the moments
    /// requests wait (its lulls say nothing of the limits).
    pub saturated_running: f64,
    pub saturated_kv_usage: Option<f64>,
    /// Generation rate at that batch, measured (arrival-bound servers only).
    pub saturated_gen_tok_s: Option<f64>,
    /// Decode step seconds = `a + b·running` at the steady-state KV tokens per request
    /// (`b` includes `c × kv_per_request` and prefill time per step per request).
    pub a: f64,
    pub b: f64,
    /// Seconds per KV token in use (0 when the fit could not separate it).
    pub c: f64,
    /// The step model was fitted (not the prior).
    pub fitted: bool,
    /// Fitted to the engine's own times of its decode steps (not the buckets' rates).
    pub timed: bool,
    /// R² of the fit (0 for the prior).
    pub r2: f64,
    /// Timeline buckets the fit used.
    pub points: usize,
    pub bound: Bound,
    /// The scheduler reserves room for running requests' future tokens (SGLang).
    pub reserves: bool,
    /// What a request takes of the pool at admission against what it holds on average,
    /// where the scheduler reserves each request's whole length before admitting it
    /// (TensorRT-LLM's default); 1 elsewhere.
    pub whole_request: f64,
    /// The client sends at its own pace (its requests in the server vary, or the server
    /// idles) and the queue empties now and then: throughput is what arrives.
    pub arrival_bound: bool,
    /// Share of the judged window with nothing running.
    pub idle_share: f64,
    /// What a client at its own pace sends, tok/s, where it sends more than the server
    /// serves (its queue grows): no change on the server's side serves more than that.
    pub arrivals_tok_s: Option<f64>,
    /// Max running requests, all ranks together.
    pub max_running: Option<f64>,
    /// Ranks with their own pool and cap (SGLang data parallelism).
    pub ranks: f64,
    /// Current schedule_conservativeness (SGLang), when the log shows it.
    pub conservativeness: Option<f64>,
    /// KV pool memory in GB and an estimate of the GPU's memory (for the memory flags).
    pub kv_cache_gb: Option<f64>,
    pub gpu_mem_gb: Option<f64>,
    pub mem_fraction_static: Option<f64>,
    pub gpu_memory_utilization: Option<f64>,
    /// Cache dtype is already 8-bit.
    pub kv_fp8: bool,
    /// Prefill seconds per step per running request in the steady state (part of `b`; 0 when
    /// the fit could not separate it).
    pub pf_per_request: f64,
    /// That prefill part is placed by the compute/memory ridge, not measured.
    pub pf_prior: bool,
    /// That prefill part is the step beyond the most decode can take.
    pub decode_bound: bool,
    /// Share of that prefill spent recomputing evicted requests, which stops when the pool
    /// no longer binds.
    pub recompute_share: f64,
    /// Covariance of (a, b) after anchoring, for the prediction range.
    cov_ab: [[f64; 2]; 2],
}

impl Model {
    /// Fits the model to a report's steady state.
    pub fn fit(r: &Report, p: &Profile) -> Option<Model> {
        // The same steady window the diagnosis judges.
        let w = crate::analysis::window::steady(r);
        let running = w.running.filter(|v| *v > 0.0)?;
        let gen = w.gen_tok_s.filter(|v| *v > 0.0)?;
        let reserves = p.admission == Admission::ReservesFutureTokens;
        // Sources that print their own batch: each schedules its own (DP ranks, engines).
        let printing = r
            .sources
            .iter()
            .filter(|s| s.running_requests_mean.is_some())
            .count();
        // Each rank schedules against a pool of its own: as many as the startup lines
        // state, or as print their own batch (a paste without the startup lines).
        let ranks = if p.pool_per_rank {
            r.config
                .data_parallel_size
                .unwrap_or(1)
                .max(printing as u64)
                .max(1) as f64
        } else {
            1.0
        };
        let cap_rank = r
            .config
            .kv_capacity_tokens
            .map(|c| c as f64)
            .filter(|c| *c > 0.0);
        let cap = cap_rank.map(|c| c * ranks);
        let kv_usage = w.kv_usage.filter(|u| *u >= 0.0);
        let kv_per_request = match (kv_usage, cap) {
            (Some(u), Some(c)) if u > 0.0 => Some(u * c / running),
            _ => r
                .summary
                .kv_tokens
                .as_ref()
                .map(|d| d.mean / running)
                .filter(|v| *v > 0.0),
        };
        let queued = w.queued.unwrap_or(0.0);
        // The cap the startup lines state, else one the run shows as a hard plateau
        // (speculative decoding's small default, a cap in a config file the log omits).
        let max_running = crate::analysis::cap::running_cap(r, &w)
            .0
            .filter(|v| *v > 0.0);
        let queue_bound = w.typical_queue() >= 1.0 && w.queue_share.unwrap_or(0.0) >= 0.3;
        // A client at a fixed number in flight keeps running + waiting flat; one that
        // sends at its own pace makes it vary (Poisson: about 1/√mean) or lets the server
        // idle. Below what the server can take its queue keeps emptying.
        let open_loop = w.idle_share > 0.05
            || w.demand_cv
                .is_some_and(|cv| cv > 0.05_f64.max(0.5 / (running + queued).max(1.0).sqrt()));
        // The queue empties now and then and does not grow: what arrives is served.
        // A median queue of half the batch or more is a server saturated most of the
        // time, whatever the client's pace, unless the queue empties in a fifth of it
        // all the same: a bursty client's bursts wait, and are cleared before the next.
        let waits = w.queue_share.unwrap_or(0.0);
        let arrival_bound = open_loop
            && waits < 0.95
            && !w.queue_growing
            && (w.queued_p50.unwrap_or(0.0) < 0.5 * running || waits <= 0.8);
        // An overloaded client at its own pace: its queue grows by what arrives less what
        // is admitted. Requests served per second from the tokens: a running request holds
        // its prompt and on average half its output, and brings `ppg` prompt tokens per
        // generated one, so its output is `held / (ppg + ½)`.
        let ppg = if p.prefill_batches_logged {
            w.counted_prompt_per_gen
        } else {
            w.input_tok_s.map(|i| i / gen)
        };
        // A request admitted with its whole length reserved takes its prompt and all its
        // output at once; on average over its life it holds its prompt and half its output.
        // Its max_tokens is not in the log: at least the output it made.
        let whole_request = match ppg {
            Some(q) if p.admission == Admission::ReservesWholeRequest && q >= 0.0 => {
                (q + 1.0) / (q + 0.5)
            }
            _ => 1.0,
        };
        let arrivals_tok_s = match (w.queue_slope, kv_per_request, ppg) {
            (Some(slope), Some(held), Some(ppg))
                if open_loop && !arrival_bound && w.queue_growing && slope > 0.0 =>
            {
                let output = (held / (ppg.max(0.0) + 0.5)).max(1.0);
                Some(gen * (1.0 + slope * output / gen))
            }
            _ => None,
        };
        let (saturated_running, saturated_kv_usage) = if arrival_bound {
            (
                w.running_queued.map_or(running, |s| s.max(running)),
                w.kv_usage_queued.or(kv_usage),
            )
        } else {
            (running, kv_usage)
        };
        let at_cap = max_running
            .is_some_and(|m| saturated_running >= 0.93 * m || saturated_running >= m - 1.0);
        let bound = if !queue_bound {
            Bound::Client
        } else if at_cap {
            Bound::MaxRunning
        } else {
            Bound::KvCache
        };

        let window_steps: Vec<_> = r
            .timeline
            .steps
            .iter()
            .filter(|b| b.t_s >= w.start_s && b.t_s < w.end_s)
            .copied()
            .collect();
        // Each rank or engine that prints its own batch schedules its own: a paste of DP
        // ranks without the startup lines that state their number counts them.
        let step_ranks = ranks.max(printing as f64);
        let mut step = StepTime::fit(&StepInputs {
            points: &r.timeline.points,
            running,
            gen,
            cap,
            kv_per_request,
            prefill_lines: p.prefill_batches_logged,
            input_tok_s: w.input_tok_s,
            ranks: step_ranks,
            steps: &window_steps,
        });

        // Prefill's share of the time, measured: the step's prefill part is set to it and
        // the decode part keeps the fit's split between its fixed and per-request costs.
        let share = prefill_share(&ShareInputs {
            points: &r.timeline.points,
            start_s: w.start_s,
            end_s: w.end_s,
            prefill_lines: p.prefill_batches_logged,
            measured: r.summary.prefill_time_share,
            gaps: &r.timeline.prefill_gaps,
            schedulers: printing as f64,
        });
        // The fit reads each bucket as busy throughout: a server that idles between a
        // client's arrivals has its rates diluted by the idle time, prompt and generation
        // alike, so there only a share the engine's own timings measure is used.
        if let Some(s) = share.filter(|s| !arrival_bound || s.direct) {
            step.set_prefill_share(s.share, running);
        }
        // Where the prior splits the step, nothing timed prefill and the server is busy
        // throughout, a step longer than decode can take is prefill. Busy: requests wait in
        // nearly every bucket, or a closed loop keeps its number in flight; idle time would
        // lengthen the step too. A fitted intercept is no weight read to bound by: where
        // the batch moves with the pool's churn it comes out near zero.
        let busy = w.queue_share.unwrap_or(0.0) >= 0.9 || !open_loop;
        if !step.fitted
            && busy
            && !arrival_bound
            && !share.is_some_and(|s| s.direct)
            && ppg.is_some_and(|q| q > 0.0)
        {
            step.bound_decode(running, running / step_ranks.max(1.0));
        }

        // Share of the prefill work that recomputes retracted/preempted requests: each
        // eviction re-prefills a request (vLLM evicts the newest, with little output), each
        // completion was prefilled once. Completions are counted from access-log lines.
        let evicted = r.summary.retracted_requests as f64;
        let completed = r
            .input
            .other_lines_by_kind
            .get("access_log")
            .copied()
            .unwrap_or(0) as f64;
        let recompute_share = if evicted > 0.0 && completed > 0.0 {
            evicted / (evicted + completed)
        } else {
            0.0
        };
        let mfs = r
            .config
            .mem_fraction_static
            .filter(|v| *v > 0.0 && *v < 1.0);
        let gmu = r
            .config
            .gpu_memory_utilization
            .filter(|v| *v > 0.0 && *v < 1.0);
        let kv_gb = r.config.kv_cache_gb.filter(|v| *v > 0.0);
        // SGLang leaves (1 − mem_fraction_static) of the GPU for activations and CUDA graphs;
        // what is left after startup is at most that, so this underestimates the GPU (and
        // the gain from raising the fraction) rather than overstating it.
        let gpu_mem_gb = match (mfs, r.config.available_gpu_mem_gb) {
            (Some(m), Some(avail)) if avail > 0.0 => Some(avail / (1.0 - m)),
            _ => None,
        };
        let kv_fp8 = r
            .config
            .kv_cache_dtype
            .as_deref()
            .is_some_and(|d| d.contains("fp8") || d.contains("int8"));
        Some(Model {
            running,
            gen_tok_s: gen,
            queued,
            kv_capacity: cap,
            kv_per_request,
            kv_usage,
            saturated_running,
            saturated_kv_usage,
            saturated_gen_tok_s: w.gen_tok_s_queued.filter(|_| arrival_bound),
            a: step.a,
            b: step.b,
            c: step.c,
            fitted: step.fitted,
            timed: step.timed,
            r2: step.r2,
            points: step.points,
            bound,
            reserves,
            whole_request,
            arrival_bound,
            idle_share: w.idle_share,
            arrivals_tok_s,
            max_running,
            ranks,
            conservativeness: r.config.schedule_conservativeness.filter(|v| *v > 0.0),
            kv_cache_gb: kv_gb,
            gpu_mem_gb,
            mem_fraction_static: mfs,
            gpu_memory_utilization: gmu,
            kv_fp8,
            pf_per_request: step.pf,
            pf_prior: step.pf_prior,
            decode_bound: step.decode_bound,
            recompute_share,
            cov_ab: step.cov_ab,
        })
    }

    /// Effective seconds per decode step with `running` requests (at the steady state's KV
    /// tokens per request, prefill time included).
    pub fn step(&self, running: f64) -> f64 {
        self.a + self.b * running
    }

    /// Pool utilisation at which admission stops, relative to the held tokens, for an engine
    /// that is not pool-bound now: SGLang reserves future tokens (about 14 % of the pool at
    /// the default conservativeness), vLLM fills the pool.
    fn usable_share(&self, cons_factor: f64) -> f64 {
        if self.reserves {
            (1.0 - 0.14 * cons_factor).clamp(0.5, 0.98)
        } else {
            0.98
        }
    }

    /// Steady-state running requests, queue and throughput after the changes.
    pub fn predict(&self, changes: &[Change]) -> Prediction {
        self.predict_with_notes(changes).0
    }

    pub(super) fn predict_with_notes(&self, changes: &[Change]) -> (Prediction, Vec<String>) {
        let mut notes = Vec::new();
        let mut kv_scale = 1.0;
        let mut cap = self.max_running;
        let mut clients: Option<f64> = None;
        let mut cons_factor = 1.0;
        // Prefill's cost per prompt token, against today's (chunked prefill, mixed chunks
        // or disaggregation take prefill off the decode steps' time).
        let mut prefill_scale = 1.0;
        for ch in changes {
            let v = ch.value;
            match ch.parameter.as_str() {
                "kv_tokens" => match self.kv_capacity.filter(|k| *k > 0.0) {
                    // Per rank, as the engine reports it.
                    Some(k) => kv_scale *= v * self.ranks / k,
                    None => notes.push(
                        "kv_tokens: the log does not show the current KV pool size".to_string(),
                    ),
                },
                "kv_scale" if v > 0.0 => kv_scale *= v,
                "kv_dtype_fp8" => {
                    if v > 0.0 && !self.kv_fp8 {
                        kv_scale *= 2.0;
                    } else if v > 0.0 {
                        notes.push("kv_dtype_fp8: the KV cache is already 8-bit".to_string());
                    }
                }
                "mem_fraction_static" | "gpu_memory_utilization" => {
                    let cur = if ch.parameter == "mem_fraction_static" {
                        self.mem_fraction_static
                    } else {
                        self.gpu_memory_utilization
                    };
                    match (cur, self.kv_cache_gb, self.gpu_mem_gb) {
                        (Some(m), Some(kv), Some(gpu)) => {
                            let new_kv = (kv + (v - m) * gpu).max(0.0);
                            kv_scale *= new_kv / kv;
                        }
                        _ => notes.push(format!(
                            "{}: the startup lines do not give the GPU memory and the pool's \
                             size in GB, so the new pool size is unknown; use kv_tokens",
                            ch.parameter
                        )),
                    }
                }
                "max_running" if v > 0.0 => cap = Some(v * self.ranks),
                "client_concurrency" if v > 0.0 => clients = Some(v),
                "client_scale" if v > 0.0 => {
                    clients = Some(v * clients.unwrap_or(self.running + self.queued))
                }
                "prefill_cost_scale" if v > 0.0 => prefill_scale *= v,
                "schedule_conservativeness" if v > 0.0 => {
                    // The new setting, against the current one (SGLang's default is 1.0).
                    cons_factor *= v / self.conservativeness.unwrap_or(1.0);
                    if !self.reserves {
                        notes.push("schedule_conservativeness: SGLang only".to_string());
                        cons_factor = 1.0;
                    }
                }
                _ => {}
            }
        }

        // Demand: what the client keeps in flight (running + waiting), unless changed.
        // Unchanged, a client-bound server's few waiting requests are on their way in, not
        // held back: what it runs is what the client keeps in flight.
        let demand = clients.unwrap_or(if self.bound == Bound::Client {
            self.running
        } else {
            self.running + self.queued
        });
        // Supply from the KV pool.
        let mut kv_err = 0.0;
        // A whole-request reservation's max_tokens may be well beyond the output made: a
        // wider range below.
        let whole = self.whole_request > 1.0;
        let kv_limit = match self.bound {
            Bound::KvCache => {
                // The pool is full now at capacity ÷ running per request: the usage share is
                // held, the rest (SGLang) reserved, and the reservation scales with
                // conservativeness.
                let held = self.saturated_kv_usage.unwrap_or(0.85).clamp(0.05, 1.0);
                let footprint = if self.reserves {
                    held + (1.0 - held) * cons_factor
                } else {
                    1.0
                };
                let mut l = self.saturated_running * kv_scale / footprint.max(0.05);
                // Never more than the pool can hold outright.
                if let (Some(h), Some(k)) = (self.kv_per_request, self.kv_capacity) {
                    l = l.min(0.99 * k * kv_scale / h.max(1.0));
                }
                kv_err = 0.03 + 0.05 * kv_scale.ln().abs() + 0.1 * (cons_factor - 1.0).abs();
                Some(l)
            }
            _ => match (self.kv_per_request.zip(self.kv_capacity), self.kv_usage) {
                (Some((h, k)), _) => {
                    kv_err = if whole { 0.15 } else { 0.08 };
                    Some(
                        k * kv_scale * self.usable_share(cons_factor)
                            / (h * self.whole_request).max(1.0),
                    )
                }
                // The pool's size unstated, its usage printed: the running requests hold
                // that share of it.
                (None, Some(u)) if u > 0.0 => {
                    kv_err = if whole { 0.15 } else { 0.1 };
                    Some(
                        self.running * kv_scale * self.usable_share(cons_factor)
                            / (u * self.whole_request),
                    )
                }
                _ => None,
            },
        };
        let mut running = demand;
        let mut bound = Bound::Client;
        if let Some(l) = kv_limit {
            if l < running {
                running = l;
                bound = Bound::KvCache;
            }
        }
        if let Some(c) = cap {
            if c < running {
                running = c;
                bound = Bound::MaxRunning;
            }
        }
        let running = running.max(0.0);
        // Uncertainty of running: exact for a cap or the client, the KV model's error else.
        let run_err = match bound {
            Bound::KvCache => kv_err,
            _ => 0.01,
        };
        // Out of the pool-bound regime, evicted requests are no longer recomputed.
        let mut b = if self.bound == Bound::KvCache && bound != Bound::KvCache {
            self.b - self.pf_per_request * self.recompute_share
        } else {
            self.b
        };
        // Prefill's part of a step is per running request (each request's prompt spread
        // over its outputs): cheaper prefill takes its share off every step.
        b -= self.pf_per_request * (1.0 - prefill_scale);
        let mut running = running;
        let mut step = self.a + b * running;
        let mut gen = if running > 0.0 { running / step } else { 0.0 };
        if self.arrival_bound {
            // A client that sends at its own pace, below what the server can take: the
            // server generates what arrives. More of the client's requests (its rate, as
            // in flight) buy in proportion, up to what the server then admits and runs
            // (`gen` above, every limit after the change); nothing on the server's side
            // buys throughput until then.
            let pace = self.running + self.queued;
            let arrival = match clients {
                Some(c) if pace > 0.0 => self.gen_tok_s * c / pace,
                _ => self.gen_tok_s,
            };
            // What the server runs with requests always waiting, limits as changed.
            let mut full = 16.0 * self.running.max(1.0);
            if let Some(l) = kv_limit {
                full = full.min(l);
            }
            if let Some(c) = cap {
                full = full.min(c);
            }
            let ceiling = {
                let n = full;
                // A server fed at the client's pace has its batch follow the arrivals, so
                // the fit's split of the step between its fixed and per-request parts
                // mixes the two; the memory-bound prior splits the decode part instead
                // (prefill's part stays per request). Its seconds per step are measured
                // over wall time, idle included: the busy step is that much shorter.
                let busy = (1.0 - self.idle_share).clamp(0.2, 1.0);
                let decode = (self.a + (b - self.pf_per_request) * self.running).max(0.0);
                let per_rank = self.running / self.ranks.max(1.0);
                // The engine's own decode-step times split it as it is, arrivals or not.
                let fixed = if self.timed {
                    self.a
                } else {
                    decode * (1.0 - per_rank / (per_rank + PRIOR_N0))
                };
                let per_request = (self.a + b * self.running - fixed) / self.running.max(1.0);
                let rate = |n: f64| n / ((fixed + per_request * n) * busy);
                // Full, it made what the buckets with requests waiting show; the step
                // model carries that to the batch the changed limits allow.
                let measured = self
                    .saturated_gen_tok_s
                    .map_or(0.0, |g| g * rate(n) / rate(self.saturated_running.max(1.0)));
                // It serves what arrives now, whatever the prior says.
                rate(n).max(measured).max(self.gen_tok_s)
            };
            if arrival <= ceiling {
                gen = arrival;
                running = self.batch_making(gen, b, full, running);
                step = self.a + b * running;
                bound = Bound::Client;
            } else if ceiling > gen {
                // More arrives than the server can take: requests pile up, however few the
                // client had in flight before, and the server runs as full as its limits
                // let it, at what its steps then make.
                gen = ceiling;
                bound = if cap.is_some_and(|c| c <= full) {
                    Bound::MaxRunning
                } else if kv_limit.is_some_and(|l| l <= full) {
                    Bound::KvCache
                } else {
                    Bound::Client
                };
                running = full;
                step = running / gen;
            }
        }
        if let Some(arrive) = self.arrivals_tok_s {
            // An overloaded client's own pace, scaled as the client is.
            let pace = self.running + self.queued;
            let arrive = match clients {
                Some(c) if pace > 0.0 => arrive * c / pace,
                _ => arrive,
            };
            if gen > arrive {
                gen = arrive;
                running = self.batch_making(gen, b, running, running);
                step = self.a + b * running;
                bound = Bound::Client;
            }
        }
        let queued = (demand - running).max(0.0);
        // Throughput range: the step fit's error at the new batch, the running error (which
        // moves throughput by the step's per-request elasticity) and a model floor.
        let se_step = (self.cov_ab[0][0]
            + 2.0 * running * self.cov_ab[0][1]
            + running * running * self.cov_ab[1][1])
            .max(0.0)
            .sqrt();
        let elasticity = if step > 0.0 { self.a / step } else { 1.0 };
        let rel = ((se_step / step.max(1e-12)).powi(2)
            + (run_err * elasticity).powi(2)
            + 0.03f64.powi(2))
        .sqrt();
        let half = (1.645 * rel).min(0.6);
        let d1 = |v: f64| crate::text::round::dec(v, 1);
        (
            Prediction {
                running_requests: d1(running),
                gen_throughput_tok_s: d1(gen),
                low: d1(gen * (1.0 - half)),
                high: d1(gen * (1.0 + half)),
                queued_requests: Some(d1(queued)),
                per_request_tok_s: crate::text::round::dec(
                    if running > 0.0 { gen / running } else { 0.0 },
                    2,
                ),
                running_low: d1(running * (1.0 - 1.645 * run_err)),
                running_high: d1(match bound {
                    Bound::KvCache => running * (1.0 + 1.645 * run_err),
                    _ => running,
                }),
                bound_by: bound.as_str(),
            },
            notes,
        )
    }

    /// The batch that generates `gen` at `b` seconds per request (`n / (a + b·n) = gen`),
    /// at most `most`; `otherwise` where no batch does.
    fn batch_making(&self, gen: f64, b: f64, most: f64, otherwise: f64) -> f64 {
        if gen * b < 1.0 {
            (gen * self.a / (1.0 - gen * b)).min(most)
        } else {
            otherwise
        }
    }

    pub fn describe(&self) -> String {
        const DECODE_BOUND: &str = "is the step beyond the most memory-bound decode takes (one weight read and at most one more per request), at least that much";
        const RIDGE_PLACED: &str = "placed by the prompt tokens per step at ~300 tokens per weight read (a GPU's compute/memory ridge), not measured";
        let kv = if self.c > 0.0 {
            format!(" + {:.3e} s × KV token", self.c)
        } else {
            String::new()
        };
        format!(
            "decode step = {:.4} s + {:.6} s × running{kv} ({}); steady state {:.1} running, {:.1} tok/s, bound by {}",
            self.a,
            self.b,
            if self.fitted {
                let prefill = if self.pf_prior && self.pf_per_request > 0.0 {
                    format!(
                        ", of which prefill's {:.6} s × running is {RIDGE_PLACED}",
                        self.pf_per_request
                    )
                } else if self.pf_per_request > 0.0 {
                    format!(", of which prefill's {:.6} s × running", self.pf_per_request)
                } else {
                    String::new()
                };
                format!(
                    "least squares over {} timeline buckets, R² {:.2}{prefill}",
                    self.points, self.r2
                )
            } else if self.pf_prior {
                format!(
                    "prior: too little spread in batch size to fit, and prefill's {:.6} s × running {RIDGE_PLACED}",
                    self.pf_per_request
                )
            } else if self.decode_bound {
                format!(
                    "prior: too little spread in batch size to fit, and prefill's {:.6} s × running {DECODE_BOUND}",
                    self.pf_per_request
                )
            } else if self.pf_per_request > 0.0 {
                format!(
                    "prior: too little spread in batch size to fit, but for prefill's {:.6} s × running, fitted to the prompt work",
                    self.pf_per_request
                )
            } else {
                "prior: too little spread in batch size to fit".to_string()
            },
            self.running,
            self.gen_tok_s,
            self.bound.as_str()
        )
    }
}
