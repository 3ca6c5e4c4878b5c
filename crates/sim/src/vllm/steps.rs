//! One scheduler step: V1 (prefill chunks and decodes in one step) and V0
//! (a prefill step, else a decode step), with admission and preemption.

use super::{ceil_div, VRun, VllmRank};
use crate::cost::attn_pairs;
use crate::Shared;

impl VllmRank {
    pub(super) fn step_v1(&mut self, sh: &mut Shared) {
        let bs = self.bs as u64;
        if self.trt && self.running.is_empty() {
            // A request whose reservation exceeds the whole pool can never run.
            if let Some(req) = self.waiting.front() {
                if ceil_div((req.prompt + req.max_new) as u64, bs) > self.usable_blocks {
                    let req = self.waiting.pop_front().expect("front exists");
                    sh.abort(req, self.t);
                    return;
                }
            }
        }
        let mut budget = self.budget;
        let mut preempted = false;
        let mut prefill_tokens = 0u64;
        let mut pairs = 0.0;
        let mut decode_n = 0u64;
        let mut recomputed = 0u64;
        let queued_before = self.waiting.len() as u64;
        let mut i = 0;
        while i < self.running.len() && budget > 0 {
            let r = &self.running[i];
            let total = (r.req.prompt + r.req.gen) as u64;
            let need = (total - r.computed as u64).min(budget);
            let need_blocks =
                ceil_div(r.computed as u64 + need, bs).saturating_sub(r.blocks as u64);
            match self.make_room(i, need_blocks, sh) {
                Some(any) => preempted |= any,
                None => {
                    preempted = true;
                    break;
                }
            }
            self.used_blocks += need_blocks;
            let r = &mut self.running[i];
            r.blocks += need_blocks as u32;
            let was_prefill = r.prefilling;
            if was_prefill {
                prefill_tokens += need;
                pairs += attn_pairs(r.computed as u64, need);
                if r.req.gen > 0 {
                    recomputed += need;
                }
            } else {
                decode_n += 1;
            }
            budget -= need;
            self.advance(i, need as u32, sh);
            i += 1;
        }
        if !preempted && !self.admit_blocked {
            while budget > 0 && self.running.len() < self.max_seqs {
                let Some(req) = self.waiting.front() else {
                    break;
                };
                let total = req.input_len() as u64;
                let need = total.min(budget);
                let blocks = ceil_div(need, bs);
                if blocks > self.free_blocks() {
                    break;
                }
                if self.trt
                    && self.reserved_blocks() + ceil_div((req.prompt + req.max_new) as u64, bs)
                        > self.usable_blocks
                {
                    break;
                }
                self.fetched += 1;
                recomputed += self.admit_front(blocks, need);
                prefill_tokens += need;
                pairs += attn_pairs(0, need);
                budget -= need;
                let idx = self.running.len() - 1;
                self.advance(idx, need as u32, sh);
            }
        }
        sh.stats.recomputed_tokens += recomputed;
        let n = self.running.len() as u64;
        let (dt, pre) = self
            .cost
            .mixed(n, decode_n, self.kv_tokens, prefill_tokens, pairs);
        let t0 = self.t;
        self.finish_step(t0, dt, pre, prefill_tokens, decode_n, queued_before, sh);
    }

    /// Preempts the newest requests until `need` blocks are free for request
    /// `i`: `None` when `i` itself was preempted, else whether any request was.
    fn make_room(&mut self, i: usize, need: u64, sh: &mut Shared) -> Option<bool> {
        let mut any = false;
        while self.free_blocks() < need {
            any = true;
            if self.preempt_last(sh) == i {
                return None;
            }
        }
        Some(any)
    }

    /// Moves the first waiting request into the running batch with `blocks`
    /// blocks; the prompt tokens it recomputes (a preempted request starts over).
    fn admit_front(&mut self, blocks: u64, tokens: u64) -> u64 {
        let req = self.waiting.pop_front().expect("front exists");
        let recomputed = if req.gen > 0 { tokens } else { 0 };
        self.used_blocks += blocks;
        self.running.push(VRun {
            req,
            computed: 0,
            blocks: blocks as u32,
            prefilling: true,
        });
        recomputed
    }

    pub(super) fn step_v0(&mut self, sh: &mut Shared) {
        let bs = self.bs as u64;
        let queued_before = self.waiting.len() as u64;
        // Prefill first.
        let mut prefill_tokens = 0u64;
        let mut pairs = 0.0;
        let mut recomputed = 0u64;
        let mut budget = self.budget;
        let first_new = self.running.len();
        while !self.admit_blocked && self.running.len() < self.max_seqs {
            let Some(req) = self.waiting.front() else {
                break;
            };
            let total = req.input_len() as u64;
            if total > budget && prefill_tokens > 0 {
                break;
            }
            let blocks = ceil_div(total, bs);
            if self.free_blocks() < blocks + self.watermark {
                break;
            }
            recomputed += self.admit_front(blocks, total);
            budget = budget.saturating_sub(total);
            prefill_tokens += total;
            pairs += attn_pairs(0, total);
        }
        if prefill_tokens > 0 {
            for i in first_new..self.running.len() {
                let n = self.running[i].req.input_len();
                self.advance(i, n, sh);
            }
            sh.stats.recomputed_tokens += recomputed;
            let dt = self.cost.prefill(prefill_tokens, pairs);
            let t0 = self.t;
            self.finish_step(t0, dt, dt, prefill_tokens, 0, queued_before, sh);
            return;
        }
        if self.running.is_empty() {
            // Cannot ever fit: drop the head request.
            if let Some(req) = self.waiting.pop_front() {
                sh.abort(req, self.t);
            }
            return;
        }
        // Decode: every running sequence appends one slot; preempt the newest when out of blocks.
        let mut i = 0;
        let mut decode_n = 0u64;
        while i < self.running.len() {
            let r = &self.running[i];
            let need_blocks = ceil_div(r.computed as u64 + 1, bs).saturating_sub(r.blocks as u64);
            if self.make_room(i, need_blocks, sh).is_none() {
                break;
            }
            self.used_blocks += need_blocks;
            self.running[i].blocks += need_blocks as u32;
            self.advance(i, 1, sh);
            decode_n += 1;
            i += 1;
        }
        let n = self.running.len() as u64;
        let dt = self.cost.decode(n, self.kv_tokens);
        let t0 = self.t;
        self.finish_step(t0, dt, 0.0, 0, decode_n, queued_before, sh);
    }
}
