//! SGLang scheduler model (non-overlapped event loop, PrefillAdder admission, retraction).

use core::fmt::Write;
use std::collections::VecDeque;

use crate::client::Req;
use crate::cost::{attn_pairs, Cost};
use crate::out::Kind;
use crate::{drive, Rank, Shared};

/// A request in the running (decode) batch. Its output count is `iter + off`.
struct Run {
    req: Req,
    off: i64,
    finish_iter: u64,
}

pub(crate) struct SglRank {
    prefix: String,
    t: f64,
    cap: u64,
    max_running: usize,
    chunk_size: u64,
    max_prefill: u64,
    clip: u32,
    retract_steps: u64,
    cuda_graph_max_bs: usize,
    log_interval: u64,
    cost: Cost,

    waiting: VecDeque<Req>,
    waiting_tokens: u64,
    /// Sorted by `finish_iter`, descending (the next to finish is last).
    running: Vec<Run>,
    /// A request being prefilled in chunks and the tokens done so far.
    chunk: Option<(Req, u32)>,
    iter: u64,
    sum_prompt: u64,
    sum_off: i64,
    sum_max_new: u64,
    big: u32,

    ratio: f64,
    init_ratio: f64,
    min_ratio: f64,
    decay: f64,

    forward_ct: u64,
    gen_since_log: u64,
    last_decode_log_t: f64,
    last_prefill_log_t: f64,

    admit_buf: Vec<Req>,
    done_buf: Vec<Req>,
}

impl SglRank {
    fn new(sh: &Shared, cap: u64, prefix: String) -> Self {
        let c = sh.cfg;
        let init = (0.7 * c.schedule_conservativeness).clamp(0.0, 1.0);
        let min = (init * 0.14).min(1.0);
        let decay = (init - min) / c.new_token_ratio_decay_steps.max(1) as f64;
        SglRank {
            prefix,
            t: 0.0,
            cap,
            max_running: c.max_running_requests as usize,
            chunk_size: if c.chunked_prefill_size == 0 {
                u64::MAX
            } else {
                c.chunked_prefill_size as u64
            },
            max_prefill: if c.max_prefill_tokens == 0 {
                u64::MAX
            } else {
                c.max_prefill_tokens as u64
            },
            clip: c.clip_max_new_tokens.max(1),
            retract_steps: c.retract_decode_steps as u64,
            cuda_graph_max_bs: c.cuda_graph_max_bs as usize,
            log_interval: c.decode_log_interval.max(1) as u64,
            cost: Cost::new(c),
            waiting: VecDeque::new(),
            waiting_tokens: 0,
            running: Vec::new(),
            chunk: None,
            iter: 0,
            sum_prompt: 0,
            sum_off: 0,
            sum_max_new: 0,
            big: 0,
            ratio: init,
            init_ratio: init,
            min_ratio: min,
            decay,
            forward_ct: 0,
            gen_since_log: 0,
            last_decode_log_t: 0.0,
            last_prefill_log_t: 0.0,
            admit_buf: Vec::new(),
            done_buf: Vec::new(),
        }
    }

    #[inline]
    fn sum_gen(&self) -> i64 {
        self.running.len() as i64 * self.iter as i64 + self.sum_off
    }

    /// KV tokens in use: running requests' prompt + output, plus a partial chunked prefill.
    #[inline]
    fn used(&self) -> u64 {
        let partial = self.chunk.as_ref().map_or(0, |c| c.1 as u64);
        (self.sum_prompt as i64 + self.sum_gen()) as u64 + partial
    }

    /// Σ over running of min(max_new − output, CLIP) (before × new_token_ratio).
    fn future_tokens(&self) -> f64 {
        if self.big == 0 {
            (self.sum_max_new as i64 - self.sum_gen()) as f64
        } else {
            let it = self.iter as i64;
            self.running
                .iter()
                .map(|r| {
                    let g = it + r.off;
                    (r.req.max_new as i64 - g).clamp(0, self.clip as i64) as f64
                })
                .sum()
        }
    }

    fn add_running(&mut self, req: Req) {
        let off = req.gen as i64 - self.iter as i64;
        let finish_iter = (req.output_len as i64 - off) as u64;
        self.sum_prompt += req.prompt as u64;
        self.sum_off += off;
        self.sum_max_new += req.max_new as u64;
        if req.max_new > self.clip {
            self.big += 1;
        }
        let pos = self
            .running
            .partition_point(|r| r.finish_iter > finish_iter);
        self.running.insert(
            pos,
            Run {
                req,
                off,
                finish_iter,
            },
        );
    }

    fn take_running(&mut self, idx: usize) -> Req {
        let r = self.running.remove(idx);
        self.detach(r)
    }

    fn detach(&mut self, r: Run) -> Req {
        let mut req = r.req;
        req.gen = (self.iter as i64 + r.off) as u32;
        self.sum_prompt -= req.prompt as u64;
        self.sum_off -= r.off;
        self.sum_max_new -= req.max_new as u64;
        if req.max_new > self.clip {
            self.big -= 1;
        }
        req
    }

    /// PrefillAdder: build a prefill batch if possible and run it. Returns false if nothing
    /// could be admitted.
    fn try_prefill(&mut self, sh: &mut Shared) -> bool {
        if self.waiting.is_empty() && self.chunk.is_none() {
            return false;
        }
        let running_bs = self.running.len();
        if running_bs >= self.max_running && self.chunk.is_none() {
            return false;
        }
        let avail = self.cap.saturating_sub(self.used()) as f64;
        let mut offset = self.future_tokens() * self.ratio;
        let mut rem_chunk = self.chunk_size;
        let mut rem_input = self.max_prefill;
        let mut new_tokens: u64 = 0;
        let mut pairs = 0.0;
        let mut new_seq: u64 = 0;
        let mut recomputed: u64 = 0;
        self.admit_buf.clear();
        let clip = self.clip;
        let mnr = |r: &Req| r.max_new.saturating_sub(r.gen).min(clip) as u64;

        if let Some((req, done)) = self.chunk.take() {
            let rem = (req.input_len() - done) as u64;
            let take = rem.min(rem_chunk);
            new_tokens += take;
            pairs += attn_pairs(done as u64, take);
            new_seq += 1;
            rem_chunk -= take;
            rem_input = rem_input.saturating_sub(take);
            if req.gen > 0 {
                recomputed += take;
            }
            if take == rem {
                offset += take as f64 + mnr(&req) as f64 * self.ratio;
                self.admit_buf.push(req);
            } else {
                offset += take as f64;
                self.chunk = Some((req, done + take as u32));
            }
        }
        while self.chunk.is_none() {
            if running_bs + new_seq as usize >= self.max_running {
                break;
            }
            let Some(req) = self.waiting.front() else {
                break;
            };
            // As in PrefillAdder.add_one_req: the candidate needs its input plus its whole
            // (clipped) remaining max_new_tokens free, on top of the ratio-scaled reservation
            // of the running requests and of those already added to this batch.
            let input = req.input_len() as u64;
            let total = (input + mnr(req)) as f64;
            if total >= avail - offset {
                break;
            }
            if input >= rem_input && new_seq > 0 {
                break;
            }
            if rem_chunk == 0 {
                break;
            }
            let req = self.waiting.pop_front().expect("front exists");
            self.waiting_tokens -= input;
            new_seq += 1;
            let take = input.min(rem_chunk);
            new_tokens += take;
            pairs += attn_pairs(0, take);
            if req.gen > 0 {
                recomputed += take;
            }
            rem_chunk -= take;
            rem_input = rem_input.saturating_sub(take);
            if take == input {
                offset += input as f64 + mnr(&req) as f64 * self.ratio;
                self.admit_buf.push(req);
            } else {
                offset += take as f64;
                self.chunk = Some((req, take as u32));
            }
        }
        if new_seq == 0 {
            return false;
        }

        // Run the batch.
        let dt = self.cost.prefill(new_tokens, pairs);
        let t0 = self.t;
        let queued = self.waiting.len() as u64 + self.chunk.is_some() as u64;
        sh.stats
            .record(t0, dt, running_bs as u64, queued, self.used(), 0);
        sh.stats.prefill_s += dt;
        sh.stats.prompt_tokens_computed += new_tokens;
        sh.stats.recomputed_tokens += recomputed;
        self.t += dt;
        let t = self.t;
        let mut admitted = core::mem::take(&mut self.admit_buf);
        self.done_buf.clear();
        for mut req in admitted.drain(..) {
            req.gen += 1; // the prefill samples the next token
            sh.stats.generated_tokens += 1;
            if req.first_tok_t < 0.0 {
                req.first_tok_t = t;
            }
            if req.gen >= req.output_len {
                self.done_buf.push(req);
            } else {
                self.add_running(req);
            }
        }
        self.admit_buf = admitted;

        // Log (0.5.11+ format, at result processing).
        let usage = self.used() as f64 / self.cap as f64;
        let pending = self.waiting_tokens
            + self
                .chunk
                .as_ref()
                .map_or(0, |(r, d)| (r.input_len() - d) as u64);
        let gap = (t - self.last_prefill_log_t).max(dt).max(1e-9);
        self.last_prefill_log_t = t;
        let b = sh.out.sgl(t, &self.prefix);
        let _ = write!(
            b,
            "Prefill batch, #new-seq: {new_seq}, #new-token: {new_tokens}, #cached-token: 0, \
             token usage: {usage:.2}, #running-req: {running_bs}, #queue-req: {}, \
             #pending-token: {pending}, cuda graph: False, input throughput (token/s): {:.2}",
            self.waiting.len(),
            new_tokens as f64 / gap
        );
        sh.out.flush(Kind::Prefill);
        let mut done = core::mem::take(&mut self.done_buf);
        for req in done.drain(..) {
            sh.complete(req, t);
        }
        self.done_buf = done;
        true
    }

    /// Frees KV by retracting requests (fewest outputs first, longest prompt on ties) back to
    /// the front of the queue; raises new_token_ratio.
    fn retract(&mut self, sh: &mut Shared) {
        let old_ratio = self.ratio;
        let mut freed: u64 = 0;
        let mut retracted: Vec<Req> = Vec::new();
        loop {
            let n = self.running.len() as u64;
            if n <= 1 {
                break;
            }
            let free = self.cap.saturating_sub(self.used());
            if !retracted.is_empty() && free >= self.retract_steps * n {
                break;
            }
            let mut best = 0usize;
            for (i, r) in self.running.iter().enumerate() {
                let b = &self.running[best];
                if r.off < b.off || (r.off == b.off && r.req.prompt > b.req.prompt) {
                    best = i;
                }
            }
            let req = self.take_running(best);
            freed += req.input_len() as u64;
            sh.stats.discarded_tokens += req.gen as u64;
            retracted.push(req);
        }
        let n = self.running.len() as f64;
        let decoded = self.sum_gen() as f64;
        let max_new = self.sum_max_new as f64;
        self.ratio = if max_new > 0.0 {
            ((decoded + self.retract_steps as f64 * n) / max_new).min(1.0)
        } else {
            1.0
        };
        sh.stats.retraction_events += 1;
        sh.stats.retracted_requests += retracted.len() as u64;
        let b = sh.out.sgl(self.t, &self.prefix);
        let _ = write!(
            b,
            "KV cache pool is full. Retract requests. #retracted_reqs: {}, #new_tokens_gained: {freed}, \
             #new_token_ratio: {old_ratio:.4} -> {:.4}",
            retracted.len(),
            self.ratio
        );
        sh.out.flush(Kind::Retract);
        for req in retracted.into_iter().rev() {
            self.waiting_tokens += req.input_len() as u64;
            self.waiting.push_front(req);
        }
    }

    fn decode(&mut self, sh: &mut Shared) {
        if self.cap.saturating_sub(self.used()) < self.running.len() as u64 {
            self.retract(sh);
        } else {
            self.ratio = (self.ratio - self.decay).max(self.min_ratio);
        }
        let n = self.running.len() as u64;
        let used = self.used();
        let dt = self.cost.decode(n, used);
        sh.stats
            .record(self.t, dt, n, self.waiting.len() as u64, used, n);
        sh.stats.decode_s += dt;
        sh.stats.decode_tokens += n;
        sh.stats.generated_tokens += n;
        self.gen_since_log += n;
        self.t += dt;
        self.iter += 1;
        let t = self.t;
        self.done_buf.clear();
        while self
            .running
            .last()
            .is_some_and(|r| r.finish_iter <= self.iter)
        {
            let r = self.running.pop().expect("non-empty");
            let req = self.detach(r);
            self.done_buf.push(req);
        }
        self.forward_ct += 1;
        if self.forward_ct % self.log_interval == 0 {
            let used = self.used();
            let usage = used as f64 / self.cap as f64;
            let gap = (t - self.last_decode_log_t).max(1e-9);
            let thr = self.gen_since_log as f64 / gap;
            self.gen_since_log = 0;
            self.last_decode_log_t = t;
            let graph = if (n as usize) <= self.cuda_graph_max_bs {
                "True"
            } else {
                "False"
            };
            let q = self.waiting.len();
            let b = sh.out.sgl(t, &self.prefix);
            let _ = write!(
                b,
                "Decode batch, #running-req: {n}, #token: {used}, token usage: {usage:.2}, \
                 cuda graph: {graph}, gen throughput (token/s): {thr:.2}, #queue-req: {q}"
            );
            sh.out.flush(Kind::Decode);
        }
        let mut done = core::mem::take(&mut self.done_buf);
        for req in done.drain(..) {
            sh.complete(req, t);
        }
        self.done_buf = done;
    }
}

impl Rank for SglRank {
    fn pause_until(&mut self, t: f64) {
        self.t = self.t.max(t);
    }

    fn t(&self) -> f64 {
        self.t
    }

    fn busy(&self) -> bool {
        !self.running.is_empty() || !self.waiting.is_empty() || self.chunk.is_some()
    }

    fn enqueue(&mut self, req: Req, t: f64, sh: &mut Shared) {
        if !self.busy() {
            if t > self.t {
                sh.stats.idle_s += t - self.t;
                self.t = t;
            }
            // self_check_during_idle
            self.ratio = self.init_ratio;
        }
        self.waiting_tokens += req.input_len() as u64;
        self.waiting.push_back(req);
    }

    fn step(&mut self, sh: &mut Shared) {
        if self.try_prefill(sh) {
            return;
        }
        if !self.running.is_empty() {
            self.decode(sh);
            return;
        }
        // Nothing runs and the head of the queue cannot be admitted into an empty pool.
        if let Some(req) = self.waiting.pop_front() {
            self.waiting_tokens -= req.input_len() as u64;
            sh.abort(req, self.t);
        }
    }
}

fn startup(sh: &mut Shared, cap: u64, prefixes: &[String]) {
    let c = sh.cfg;
    let t0 = -c.startup_s.max(0.0);
    let at = |f: f64| t0 + (-t0) * f;
    let mrr = if c.max_running_requests_explicit {
        c.max_running_requests.to_string()
    } else {
        "None".to_string()
    };
    let m = &c.model_path;
    let b = sh.out.sgl(t0, "");
    let _ = write!(
        b,
        "server_args=ServerArgs(model_path='{m}', tokenizer_path='{m}', tokenizer_mode='auto', \
         skip_tokenizer_init=False, load_format='auto', trust_remote_code=False, dtype='auto', \
         kv_cache_dtype='auto', quantization=None, context_length=None, device='cuda', \
         served_model_name='{m}', chat_template=None, is_embedding=False, revision=None, \
         host='0.0.0.0', port=30000, mem_fraction_static=0.85, max_running_requests={mrr}, \
         max_queued_requests=None, max_total_tokens=None, chunked_prefill_size={}, \
         max_prefill_tokens={}, schedule_policy='fcfs', schedule_conservativeness={:?}, \
         page_size=1, tp_size={}, pp_size=1, stream_interval=1, random_seed={}, \
         log_level='info', log_requests=False, decode_log_interval={}, dp_size={}, \
         enable_dp_attention={}, cuda_graph_max_bs={}, disable_cuda_graph=False, \
         enable_mixed_chunk=False, enable_metrics=False)",
        c.chunked_prefill_size,
        c.max_prefill_tokens,
        c.schedule_conservativeness,
        c.tp_size.max(1),
        c.seed % 1_000_000_000,
        c.decode_log_interval,
        c.dp_size.max(1),
        if c.dp_size > 1 { "True" } else { "False" },
        c.cuda_graph_max_bs,
    );
    sh.out.flush(Kind::Other);
    // Llama-3.1-8B geometry: 32 layers × 8 KV heads × 128 dims × 2 bytes.
    let kv_gb = cap as f64 * 32.0 * 8.0 * 128.0 * 2.0 / (1u64 << 30) as f64;
    let avail_after = 6.12;
    for p in prefixes {
        let b = sh.out.sgl(at(0.15), p);
        let _ = write!(
            b,
            "Load weight end. elapsed=5.21 s, type=LlamaForCausalLM, avail mem={:.2} GB, mem usage=14.99 GB.",
            avail_after + 2.0 * kv_gb + 0.57
        );
        sh.out.flush(Kind::Other);
        let b = sh.out.sgl(at(0.2), p);
        let _ = write!(
            b,
            "KV Cache is allocated. #tokens: {cap}, K size: {kv_gb:.2} GB, V size: {kv_gb:.2} GB"
        );
        sh.out.flush(Kind::Other);
        let b = sh.out.sgl(at(0.2), p);
        let _ = write!(b, "Memory pool end. avail mem={:.2} GB", avail_after + 0.57);
        sh.out.flush(Kind::Other);
        let b = sh.out.sgl(at(0.5), p);
        let _ = write!(
            b,
            "Capture cuda graph end. Time elapsed: 8.12 s. mem usage=0.57 GB. avail mem={avail_after:.2} GB."
        );
        sh.out.flush(Kind::Other);
    }
    for p in prefixes {
        let b = sh.out.sgl(at(0.55), p);
        let _ = write!(
            b,
            "max_total_num_tokens={cap}, chunked_prefill_size={}, max_prefill_tokens={}, \
             max_running_requests={}, context_len={}, available_gpu_mem={avail_after:.2} GB",
            c.chunked_prefill_size, c.max_prefill_tokens, c.max_running_requests, c.context_len
        );
        sh.out.flush(Kind::Other);
    }
    let b = sh.out.sgl(at(0.97), "");
    b.push_str("The server is fired up and ready to roll!");
    sh.out.flush(Kind::Other);
}

pub(crate) fn run(sh: &mut Shared, cap: u64) {
    let c = sh.cfg;
    let dp = c.dp_size.max(1);
    let prefixes: Vec<String> = (0..dp)
        .map(|k| {
            if dp > 1 {
                format!(" DP{k} TP{k}")
            } else if c.tp_size > 1 || c.rank_prefix_tp0 {
                " TP0".to_string()
            } else {
                String::new()
            }
        })
        .collect();
    startup(sh, cap, &prefixes);
    let mut ranks: Vec<SglRank> = prefixes
        .into_iter()
        .map(|p| SglRank::new(sh, cap, p))
        .collect();
    drive(&mut ranks, sh);
}
