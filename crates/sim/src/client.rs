//! The load generator: closed loop (N clients) or open loop (Poisson), with bursts and idle gaps.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::config::SimConfig;
use crate::rng::Rng;

/// One request as the server sees it.
#[derive(Debug, Clone)]
pub(crate) struct Req {
    pub id: u64,
    pub prompt: u32,
    pub output_len: u32,
    pub max_new: u32,
    /// Output tokens produced so far (kept across retraction/preemption: they are re-prefilled).
    pub gen: u32,
    pub submit_t: f64,
    /// Time of the first output token (negative until then).
    pub first_tok_t: f64,
    pub port: u16,
    /// Owned by a closed-loop client, which sends a new request when this one ends.
    pub replace: bool,
}

impl Req {
    /// Tokens a (re-)prefill must compute: the prompt plus any output kept from before a retraction.
    #[inline]
    pub fn input_len(&self) -> u32 {
        self.prompt + self.gen
    }
}

pub(crate) struct Client {
    rng: Rng,
    limit: u64,
    duration: f64,
    pub submitted: u64,
    open_rate: f64,
    next_open: f64,
    deferred: BinaryHeap<Reverse<u64>>,
    bursts: Vec<(f64, u32)>,
    burst_idx: usize,
    gaps: Vec<(f64, f64)>,
    next_id: u64,
    // request shaping
    prompt: crate::config::LenDist,
    output: crate::config::LenDist,
    max_new: u32,
    max_prompt: u32,
}

impl Client {
    pub(crate) fn new(cfg: &SimConfig, max_prompt: u32) -> Self {
        let mut rng = Rng::new(cfg.seed);
        let limit = if cfg.num_requests > 0 {
            cfg.num_requests
        } else if cfg.duration_s > 0.0 {
            u64::MAX
        } else {
            1000
        };
        let duration = if cfg.duration_s > 0.0 {
            cfg.duration_s
        } else {
            f64::INFINITY
        };
        let mut gaps: Vec<(f64, f64)> = cfg
            .idle_gaps
            .iter()
            .filter(|g| g.end_s > g.start_s)
            .map(|g| (g.start_s, g.end_s))
            .collect();
        gaps.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut bursts: Vec<(f64, u32)> = cfg
            .bursts
            .iter()
            .filter(|b| b.count > 0)
            .map(|b| (b.at_s.max(0.0), b.count))
            .collect();
        bursts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut c = Client {
            limit,
            duration,
            submitted: 0,
            open_rate: 0.0,
            next_open: f64::INFINITY,
            deferred: BinaryHeap::new(),
            bursts,
            burst_idx: 0,
            gaps,
            next_id: 0,
            prompt: cfg.prompt_len.clone(),
            output: cfg.output_len.clone(),
            max_new: cfg.max_new_tokens.max(1),
            max_prompt: max_prompt.max(1),
            rng: Rng::new(0),
        };
        if cfg.concurrency > 0 {
            let t0 = c.after_gaps(0.0);
            for _ in 0..cfg.concurrency {
                c.deferred.push(Reverse(t0.to_bits()));
            }
        } else if cfg.arrival_rate > 0.0 {
            c.open_rate = cfg.arrival_rate;
            let first = rng.exp(c.open_rate);
            c.next_open = c.after_gaps(first);
        }
        c.rng = rng;
        c
    }

    /// Moves `t` past any idle gap containing it.
    fn after_gaps(&self, mut t: f64) -> f64 {
        for &(s, e) in &self.gaps {
            if t >= s && t < e {
                t = e;
            }
        }
        t
    }

    fn exhausted(&self, t: f64) -> bool {
        self.submitted >= self.limit || t >= self.duration
    }

    /// Times of the next deferred submission and the next burst (infinity for none).
    fn next_deferred_and_burst(&self) -> (f64, f64) {
        let d = self
            .deferred
            .peek()
            .map_or(f64::INFINITY, |r| f64::from_bits(r.0));
        let b = self
            .bursts
            .get(self.burst_idx)
            .map_or(f64::INFINITY, |x| x.0);
        (d, b)
    }

    /// Time of the next submission, or infinity.
    pub(crate) fn next_time(&mut self) -> f64 {
        let (d, b) = self.next_deferred_and_burst();
        let t = d.min(b).min(self.next_open);
        if t.is_finite() && self.exhausted(t) {
            self.deferred.clear();
            self.burst_idx = self.bursts.len();
            self.next_open = f64::INFINITY;
            return f64::INFINITY;
        }
        t
    }

    /// Takes the next submission (call only after `next_time` returned a finite time).
    pub(crate) fn pop(&mut self) -> Req {
        let (d, b) = self.next_deferred_and_burst();
        let (t, replace) = if d <= b && d <= self.next_open {
            self.deferred.pop();
            (d, true)
        } else if b <= self.next_open {
            let entry = &mut self.bursts[self.burst_idx];
            entry.1 -= 1;
            if entry.1 == 0 {
                self.burst_idx += 1;
            }
            (b, false)
        } else {
            let t = self.next_open;
            let gap = self.rng.exp(self.open_rate);
            self.next_open = self.after_gaps(t + gap);
            (t, false)
        };
        self.submitted += 1;
        let id = self.next_id;
        self.next_id += 1;
        let prompt = self.prompt.sample(&mut self.rng).min(self.max_prompt);
        let output_len = self.output.sample(&mut self.rng).min(self.max_new);
        let port = 32768 + (self.rng.next_u64() % 28000) as u16;
        Req {
            id,
            prompt,
            output_len,
            max_new: self.max_new,
            gen: 0,
            submit_t: t,
            first_tok_t: -1.0,
            port,
            replace,
        }
    }

    /// A request ended at `t`: its closed-loop client sends the next one.
    pub(crate) fn on_end(&mut self, replace: bool, t: f64) {
        if replace {
            let t = self.after_gaps(t);
            if !self.exhausted(t) {
                self.deferred.push(Reverse(t.to_bits()));
            }
        }
    }
}
