//! Ground-truth bookkeeping: counters and time buckets for time-weighted means.

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Bucket {
    pub running: f64,
    pub queued: f64,
    pub kv: f64,
    pub decode_tokens: f64,
}

const MAX_BUCKETS: usize = 1 << 16;

#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub bucket_w: f64,
    pub buckets: Vec<Bucket>,
    pub generated_tokens: u64,
    pub decode_tokens: u64,
    pub useful_output_tokens: u64,
    pub completed: u64,
    pub aborted: u64,
    pub prompt_tokens_computed: u64,
    pub recomputed_tokens: u64,
    pub discarded_tokens: u64,
    pub retraction_events: u64,
    pub retracted_requests: u64,
    pub preemptions: u64,
    pub prefill_s: f64,
    pub decode_s: f64,
    pub idle_s: f64,
    pub first_submit: f64,
    pub last_submit: f64,
    pub last_completion: f64,
    pub end_t: f64,
    pub running_int: f64,
    pub queued_int: f64,
    /// (e2e, ttft, prompt, output) per completed request, only when a summary is wanted.
    pub latencies: Option<Vec<(f64, f64, u32, u32)>>,
}

impl Stats {
    pub(crate) fn new(keep_latencies: bool) -> Self {
        Stats {
            bucket_w: 1.0,
            buckets: Vec::with_capacity(4096),
            first_submit: f64::INFINITY,
            latencies: keep_latencies.then(Vec::new),
            ..Default::default()
        }
    }

    fn coarsen(&mut self) {
        let old = core::mem::take(&mut self.buckets);
        self.buckets = old
            .chunks(2)
            .map(|c| {
                let mut b = c[0];
                if let Some(x) = c.get(1) {
                    b.running += x.running;
                    b.queued += x.queued;
                    b.kv += x.kv;
                    b.decode_tokens += x.decode_tokens;
                }
                b
            })
            .collect();
        self.bucket_w *= 2.0;
    }

    /// Accounts a step `[t0, t0+dt)` with constant running/queued/kv and `decode_tokens`
    /// spread evenly over it.
    #[inline]
    pub(crate) fn record(
        &mut self,
        t0: f64,
        dt: f64,
        running: u64,
        queued: u64,
        kv: u64,
        decode_tokens: u64,
    ) {
        if dt <= 0.0 {
            return;
        }
        let (r, q, k) = (running as f64, queued as f64, kv as f64);
        self.running_int += r * dt;
        self.queued_int += q * dt;
        let t0 = t0.max(0.0);
        let t1 = t0 + dt;
        let tok_rate = decode_tokens as f64 / dt;
        let mut t = t0;
        while t < t1 {
            let mut idx = (t / self.bucket_w) as usize;
            while idx >= MAX_BUCKETS {
                self.coarsen();
                idx = (t / self.bucket_w) as usize;
            }
            if idx >= self.buckets.len() {
                self.buckets.resize(idx + 1, Bucket::default());
            }
            let edge = (idx + 1) as f64 * self.bucket_w;
            let seg = t1.min(edge) - t;
            let b = &mut self.buckets[idx];
            b.running += r * seg;
            b.queued += q * seg;
            b.kv += k * seg;
            b.decode_tokens += tok_rate * seg;
            if edge <= t {
                break;
            }
            t = edge;
        }
    }

    /// Sums over `[a, b)` (bucket resolution, partial buckets pro-rated).
    pub(crate) fn window(&self, a: f64, b: f64) -> Bucket {
        let mut s = Bucket::default();
        if b <= a {
            return s;
        }
        for (i, bk) in self.buckets.iter().enumerate() {
            let lo = i as f64 * self.bucket_w;
            let hi = lo + self.bucket_w;
            let ov = hi.min(b) - lo.max(a);
            if ov <= 0.0 {
                continue;
            }
            let f = ov / self.bucket_w;
            s.running += bk.running * f;
            s.queued += bk.queued * f;
            s.kv += bk.kv * f;
            s.decode_tokens += bk.decode_tokens * f;
        }
        s
    }
}
