//! vLLM scheduler models: V1 (unified steps with chunked prefill, preempt-newest) and V0
//! (separate prefill steps with a 1% watermark, preempt-newest, RECOMPUTE); and
//! TensorRT-LLM's, V1's steps with GUARANTEED_NO_EVICT admission (a request only with
//! blocks for its prompt and all of its max_new_tokens beside every running one's),
//! logging each iteration.
mod startup;
mod steps;

use startup::startup;

use core::fmt::Write;
use std::collections::VecDeque;

use crate::client::Req;
use crate::cost::Cost;
use crate::out::Kind;
use crate::{drive, Engine, Rank, Shared};

struct VRun {
    req: Req,
    /// Tokens whose KV is computed.
    computed: u32,
    blocks: u32,
    /// Still computing its (re-)prefill.
    prefilling: bool,
}

pub(crate) struct VllmRank {
    v1: bool,
    /// TensorRT-LLM: admission against reservations, an iteration line a step.
    trt: bool,
    iter: u64,
    /// Requests taken from the queue so far (`currank_total_requests`).
    fetched: u64,
    t: f64,
    bs: u32,
    /// Usable blocks (V1 reserves one null block).
    usable_blocks: u64,
    total_blocks: u64,
    used_blocks: u64,
    kv_tokens: u64,
    max_seqs: usize,
    budget: u64,
    watermark: u64,
    cost: Cost,
    interval: f64,
    waiting: VecDeque<Req>,
    running: Vec<VRun>,
    // stats since the last log
    acc_prompt: u64,
    acc_gen: u64,
    acc_preempt: u64,
    total_preempt: u64,
    last_prompt_thr: f64,
    last_gen_thr: f64,
    next_tick: f64,
    last_log: f64,
    done_buf: Vec<Req>,
    /// Inside an admission stop: no waiting request is admitted this step.
    admit_blocked: bool,
}

/// An empty engine step while requests wait unadmitted.
const IDLE_STEP_S: f64 = 0.05;

#[inline]
fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

impl VllmRank {
    fn new(sh: &Shared, cap: u64) -> Self {
        let c = sh.cfg;
        let trt = c.engine == Engine::Trtllm;
        let v1 = c.engine == Engine::VllmV1 || trt;
        let bs = c.block_size.max(1);
        let total_blocks = cap / bs as u64;
        let usable = if v1 && !trt {
            total_blocks - 1
        } else {
            total_blocks
        };
        let interval = c.effective_log_interval_s();
        let budget = if c.chunked_prefill_size == 0 {
            u64::MAX
        } else if v1 {
            c.chunked_prefill_size as u64
        } else {
            // V0 without chunked prefill: max_num_batched_tokens = max(max_model_len, 2048)
            (c.chunked_prefill_size as u64).max(c.context_len as u64)
        };
        // The first stats tick comes `interval` after the API server starts.
        let start = -c.startup_s.max(0.0);
        VllmRank {
            v1,
            trt,
            iter: 0,
            fetched: 0,
            t: 0.0,
            bs,
            usable_blocks: usable,
            total_blocks,
            used_blocks: 0,
            kv_tokens: 0,
            max_seqs: c.max_running_requests.max(1) as usize,
            budget,
            watermark: if v1 {
                0
            } else {
                (total_blocks as f64 * 0.01) as u64
            },
            cost: Cost::new(c),
            interval,
            waiting: VecDeque::new(),
            running: Vec::new(),
            acc_prompt: 0,
            acc_gen: 0,
            acc_preempt: 0,
            total_preempt: 0,
            last_prompt_thr: 0.0,
            last_gen_thr: 0.0,
            next_tick: start + interval * ((-start / interval).floor() + 1.0),
            last_log: 0.0,
            done_buf: Vec::new(),
            admit_blocked: false,
        }
    }

    /// A finished request leaves the batch: its blocks and tokens are freed.
    fn retire(&mut self, i: usize) {
        let v = self.running.remove(i);
        self.used_blocks -= v.blocks as u64;
        self.kv_tokens -= v.computed as u64;
        self.done_buf.push(v.req);
    }

    fn free_blocks(&self) -> u64 {
        self.usable_blocks - self.used_blocks
    }

    /// Blocks the running requests hold or may still take: each one's prompt
    /// and all of its max_new_tokens (GUARANTEED_NO_EVICT).
    fn reserved_blocks(&self) -> u64 {
        let bs = self.bs as u64;
        self.running
            .iter()
            .map(|r| ceil_div((r.req.prompt + r.req.max_new) as u64, bs))
            .sum()
    }

    /// TensorRT-LLM's iteration line for the step that just ran (printed when
    /// the next loop starts): `scheduled` requests, `prefill_tokens` of prompts.
    fn emit_iteration(
        &mut self,
        t: f64,
        dt: f64,
        prefill_tokens: u64,
        decode_n: u64,
        sh: &mut Shared,
    ) {
        let scheduled = self.running.len() as u64;
        let waiting = self.waiting.len() as u64;
        let util = self.used_blocks as f64 / self.usable_blocks.max(1) as f64;
        let stamp = sh.out.stamp(t);
        let ms = dt * 1000.0;
        let b = sh.out.trtllm(t);
        let _ = write!(
            b,
            "iter = {}, global_rank = 0, rank = 0, num_scheduled_requests = {scheduled}, \
             kv_cache_util = {util:.3}, currank_total_requests = 0/{}, host_step_time = {ms:.3}ms, \
             prev_device_step_time = {:.3}ms, timestamp = {stamp}, states = {{'num_ctx_requests': {}, \
             'num_ctx_tokens': {prefill_tokens}, 'num_generation_tokens': {decode_n}}}, \
             num_active = {}, num_fetched = 0, num_dummy = 0, num_unscheduled = {waiting}",
            self.iter,
            self.fetched,
            ms * 0.97,
            scheduled.saturating_sub(decode_n),
            scheduled + waiting,
        );
        sh.out.flush(Kind::Interval);
        self.iter += 1;
    }

    fn usage_pct(&self) -> f64 {
        100.0 * self.used_blocks as f64 / self.usable_blocks.max(1) as f64
    }

    /// Pops the newest running request back to the front of the queue (RECOMPUTE).
    fn preempt_last(&mut self, sh: &mut Shared) -> usize {
        let idx = self.running.len() - 1;
        let v = self.running.pop().expect("running non-empty");
        self.used_blocks -= v.blocks as u64;
        self.kv_tokens -= v.computed as u64;
        sh.stats.preemptions += 1;
        sh.stats.retracted_requests += 1;
        sh.stats.discarded_tokens += v.req.gen as u64;
        self.acc_preempt += 1;
        self.total_preempt += 1;
        if !self.v1 && (self.total_preempt - 1) % 50 == 0 {
            let b = sh
                .out
                .vllm(self.t, "", 0, "WARNING", "scheduler.py:1560", false);
            let _ = write!(
                b,
                "Sequence group {} is preempted by PreemptionMode.RECOMPUTE mode because there is not \
                 enough KV cache space. This can affect the end-to-end performance. Increase \
                 gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. \
                 total_num_cumulative_preemption={}",
                v.req.id, self.total_preempt
            );
            sh.out.flush(Kind::Retract);
        }
        self.waiting.push_front(v.req);
        idx
    }

    /// Computes `n` more tokens of running request `i` (blocks already reserved) and samples
    /// if its sequence is complete. Returns true if the request produced a token.
    fn advance(&mut self, i: usize, n: u32, sh: &mut Shared) -> bool {
        let r = &mut self.running[i];
        r.computed += n;
        self.kv_tokens += n as u64;
        let total = r.req.prompt + r.req.gen;
        if r.computed < total {
            return false;
        }
        if r.prefilling {
            r.prefilling = false;
            self.acc_prompt += r.req.prompt as u64;
        }
        r.req.gen += 1;
        self.acc_gen += 1;
        sh.stats.generated_tokens += 1;
        true
    }

    fn emit_stats(&mut self, t: f64, elapsed: f64, sh: &mut Shared) {
        let elapsed = elapsed.max(1e-9);
        let p = self.acc_prompt as f64 / elapsed;
        let g = self.acc_gen as f64 / elapsed;
        let show = p > 0.0 || g > 0.0 || self.last_prompt_thr > 0.0 || self.last_gen_thr > 0.0;
        if show {
            let running = self.running.len();
            let waiting = self.waiting.len();
            if self.v1 {
                let pid = sh.cfg.api_pid;
                let b = sh
                    .out
                    .vllm(t, "APIServer", pid, "INFO", "loggers.py:271", true);
                let _ = write!(
                    b,
                    "Engine 000: Avg prompt throughput: {p:.1} tokens/s, Avg generation throughput: \
                     {g:.1} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, "
                );
                if self.acc_preempt > 0 {
                    let _ = write!(b, "Preemptions: {}, ", self.acc_preempt);
                }
                let _ = write!(
                    b,
                    "GPU KV cache usage: {:.1}%, Prefix cache hit rate: 0.0%",
                    self.usage_pct()
                );
            } else {
                let usage = 100.0 * self.used_blocks as f64 / self.total_blocks.max(1) as f64;
                let b = sh.out.vllm(t, "", 0, "INFO", "metrics.py:449", false);
                let _ = write!(
                    b,
                    "Avg prompt throughput: {p:.1} tokens/s, Avg generation throughput: {g:.1} tokens/s, \
                     Running: {running} reqs, Swapped: 0 reqs, Pending: {waiting} reqs, \
                     GPU KV cache usage: {usage:.1}%, CPU KV cache usage: 0.0%."
                );
            }
            sh.out.flush(Kind::Interval);
        }
        self.last_prompt_thr = p;
        self.last_gen_thr = g;
        self.acc_prompt = 0;
        self.acc_gen = 0;
        self.acc_preempt = 0;
        self.last_log = t;
    }

    /// V1: the API server logs every `interval` seconds of wall time.
    /// V0: the OpenAI server polls every 10 s; the logger prints if 5 s have passed.
    fn flush_ticks(&mut self, upto: f64, sh: &mut Shared) {
        if self.trt {
            // A line each iteration, none on a clock.
        } else if self.v1 {
            while self.next_tick <= upto {
                let t = self.next_tick;
                self.emit_stats(t, self.interval, sh);
                self.next_tick += self.interval;
            }
        } else {
            let poll = 10.0;
            let mut p = (self.t / poll).floor() * poll + poll;
            while p <= upto {
                if p - self.last_log >= self.interval {
                    let el = p - self.last_log;
                    self.emit_stats(p, el, sh);
                }
                p += poll;
            }
        }
    }

    /// Books a step of `dt` seconds, `pre` of them the prefill's.
    #[allow(clippy::too_many_arguments)]
    fn finish_step(
        &mut self,
        t0: f64,
        dt: f64,
        pre: f64,
        prefill_tokens: u64,
        decode_n: u64,
        queued: u64,
        sh: &mut Shared,
    ) {
        let running = self.running.len() as u64;
        sh.stats
            .record(t0, dt, running, queued, self.kv_tokens, decode_n);
        if self.trt {
            self.emit_iteration(t0 + dt, dt, prefill_tokens, decode_n, sh);
        }
        sh.stats.prefill_s += pre;
        sh.stats.decode_s += dt - pre;
        sh.stats.decode_tokens += decode_n;
        sh.stats.prompt_tokens_computed += prefill_tokens;
        self.t = t0 + dt;
        let t = self.t;
        // Completions.
        self.done_buf.clear();
        let mut i = 0;
        while i < self.running.len() {
            let r = &mut self.running[i];
            if !r.prefilling && r.req.first_tok_t < 0.0 {
                r.req.first_tok_t = t;
            }
            if !r.prefilling && r.req.gen >= r.req.output_len {
                self.retire(i);
            } else {
                i += 1;
            }
        }
        if !self.v1 && t - self.last_log >= self.interval {
            let el = t - self.last_log;
            self.emit_stats(t, el, sh);
        }
        let mut done = core::mem::take(&mut self.done_buf);
        for req in done.drain(..) {
            sh.complete(req, t);
        }
        self.done_buf = done;
    }

    /// Blocks the running requests need to decode `k` more tokens, from the histogram of
    /// "steps until the next block boundary" (`hist[s]`, s in 0..bs).
    fn blocks_needed(hist: &[u64], bs: u64, k: u64) -> u64 {
        hist.iter()
            .enumerate()
            .filter(|&(s, _)| k > s as u64)
            .map(|(s, &c)| c * ((k - s as u64 - 1) / bs + 1))
            .sum()
    }

    /// Runs several identical decode-only iterations at once when nothing else can happen in
    /// between (no prefill, no admission, no preemption, no completion before the last one,
    /// no stats line). Exactly equivalent to stepping one by one.
    fn try_bulk_decode(&mut self, sh: &mut Shared) -> bool {
        let n = self.running.len() as u64;
        // TensorRT-LLM logs every iteration.
        if n == 0 || self.trt {
            return false;
        }
        let bs = self.bs as u64;
        let mut hist = [0u64; 64];
        let use_hist = bs <= 64;
        if !use_hist {
            return false;
        }
        let mut k_max = u64::MAX;
        for r in &self.running {
            if r.prefilling {
                return false;
            }
            let room = (r.blocks as u64 * bs).saturating_sub(r.computed as u64);
            if room >= bs {
                return false;
            }
            hist[room as usize] += 1;
            k_max = k_max.min(r.req.output_len.saturating_sub(r.req.gen) as u64);
        }
        let hist = &hist[..bs as usize];
        let free = self.free_blocks();
        let need1 = Self::blocks_needed(hist, bs, 1);
        if need1 > free {
            return false;
        }
        // Admission must stay impossible for the whole run (free blocks only shrink).
        if let Some(head) = self.waiting.front() {
            let total = head.input_len() as u64;
            let admissible = if self.v1 {
                let left = self.budget.saturating_sub(n);
                left > 0
                    && self.running.len() < self.max_seqs
                    && ceil_div(total.min(left), bs) <= free - need1
            } else {
                self.running.len() < self.max_seqs && free >= ceil_div(total, bs) + self.watermark
            };
            if admissible {
                return false;
            }
        }
        if self.v1 && self.budget < n {
            return false;
        }
        // The step before the first stats line is stepped normally.
        let deadline = if self.v1 {
            self.next_tick
        } else {
            self.last_log + self.interval
        };
        let fixed = self.cost.decode_fixed(n);
        let c = self.cost.kv_coef();
        let nf = n as f64;
        // Step time uses the KV after the step's token is written (as in `step_v1`).
        let kv0 = (self.kv_tokens + n) as f64;
        let span = |k: u64| -> f64 {
            let kf = k as f64;
            kf * (fixed + c * kv0) + c * nf * kf * (kf - 1.0) / 2.0
        };
        let mut k = k_max.min(4096);
        while k >= 2 && (span(k) >= deadline - self.t || Self::blocks_needed(hist, bs, k) > free) {
            k /= 2;
        }
        if k < 2 {
            return false;
        }
        let new_blocks = Self::blocks_needed(hist, bs, k);
        let dt = span(k);
        let k32 = k as u32;
        let mut gen_tokens = 0u64;
        for r in &mut self.running {
            r.computed += k32;
            r.req.gen += k32;
            r.blocks = ceil_div(r.computed as u64, bs) as u32;
            gen_tokens += k;
        }
        self.used_blocks += new_blocks;
        let queued = self.waiting.len() as u64;
        let kv_mid = self.kv_tokens + n * (k - 1) / 2;
        sh.stats.record(self.t, dt, n, queued, kv_mid, gen_tokens);
        sh.stats.decode_s += dt;
        sh.stats.decode_tokens += gen_tokens;
        sh.stats.generated_tokens += gen_tokens;
        self.acc_gen += gen_tokens;
        self.kv_tokens += gen_tokens;
        self.t += dt;
        let t = self.t;
        self.done_buf.clear();
        let mut i = 0;
        while i < self.running.len() {
            if self.running[i].req.gen >= self.running[i].req.output_len {
                self.retire(i);
            } else {
                i += 1;
            }
        }
        let mut done = core::mem::take(&mut self.done_buf);
        for req in done.drain(..) {
            sh.complete(req, t);
        }
        self.done_buf = done;
        true
    }
}

impl Rank for VllmRank {
    fn pause_until(&mut self, t: f64) {
        self.t = self.t.max(t);
    }

    fn t(&self) -> f64 {
        self.t
    }

    fn busy(&self) -> bool {
        !self.running.is_empty() || !self.waiting.is_empty()
    }

    fn enqueue(&mut self, req: Req, t: f64, sh: &mut Shared) {
        if !self.busy() && t > self.t {
            self.flush_ticks(t, sh);
            sh.stats.idle_s += t - self.t;
            self.t = t;
        }
        self.waiting.push_back(req);
    }

    fn step(&mut self, sh: &mut Shared) {
        let stop = crate::admission_stop_end(sh.cfg, self.t);
        self.admit_blocked = stop.is_some();
        if let Some(end) = stop.filter(|_| self.running.is_empty()) {
            // Nothing to run and nothing admitted: the engine loop steps empty, a
            // few times a second, and goes on logging.
            let t0 = self.t;
            let dt = (end - t0).clamp(1e-6, IDLE_STEP_S);
            if self.v1 {
                self.flush_ticks(t0 + dt, sh);
                self.t = t0 + dt;
            } else {
                let queued = self.waiting.len() as u64;
                self.finish_step(t0, dt, 0.0, 0, 0, queued, sh);
            }
            return;
        }
        if self.v1 {
            let t = self.t;
            self.flush_ticks(t, sh);
            if !self.try_bulk_decode(sh) {
                self.step_v1(sh);
            }
        } else if !self.try_bulk_decode(sh) {
            self.step_v0(sh);
        }
    }

    fn finish(&mut self, t_end: f64, sh: &mut Shared) {
        let upto = t_end + 2.0 * self.interval.max(10.0);
        self.flush_ticks(upto, sh);
    }
}

pub(crate) fn run(sh: &mut Shared, cap: u64) {
    startup(sh, cap);
    let mut ranks = vec![VllmRank::new(sh, cap)];
    drive(&mut ranks, sh);
}
