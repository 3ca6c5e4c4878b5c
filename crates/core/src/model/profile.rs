//! What later stages need to know of the engine that wrote a log, as data: how it
//! admits requests, what it calls an eviction, and the flag for each lever. Each
//! engine fills one in its own folder (`engines/<engine>/profile.rs`); the analysis,
//! the diagnosis and the what-if read it and never branch on an engine's name.

/// How a scheduler decides whether a waiting request fits in the KV pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Room for the running requests' future tokens is reserved before a request is
    /// admitted (SGLang: `new_token_ratio` × each request's remaining `max_new_tokens`,
    /// the ratio decaying between retractions): the pool stops admitting well before
    /// its usage reaches 1, the more so the longer the outputs.
    ReservesFutureTokens,
    /// A request is admitted only with room for its prompt and all of its `max_tokens`
    /// (TensorRT-LLM's default GUARANTEED_NO_EVICT). Under its MAX_UTILIZATION policy,
    /// seen by paused requests, nothing is reserved.
    ReservesWholeRequest,
    /// Admitted while blocks are free, nothing reserved; a pool that overflows evicts a
    /// running request and recomputes it later (vLLM, LMDeploy).
    NoReservation,
}

/// An engine's words and levers.
// Read by the diagnosis' findings as they move from engine names to the profile.
#[allow(dead_code)]
#[derive(Debug)]
pub struct Profile {
    /// The engine's name in the report (`sglang`, `vllm`, …).
    pub engine: &'static str,
    pub admission: Admission,
    /// What the engine calls evicting a running request, and the participle
    /// (`retraction`/`retracted`, `preemption`/`preempted`, `pause`/`paused`).
    pub eviction: (&'static str, &'static str),
    /// Each data-parallel rank schedules its share of requests against a KV pool of its
    /// own, and the startup line states one rank's pool (SGLang's DP attention).
    pub pool_per_rank: bool,
    /// The log prints a line per prefill batch with its new tokens, whose rate runs since
    /// the previous prefill line, and the decode lines' generation rate is over wall
    /// time, prefill included (SGLang).
    pub prefill_batches_logged: bool,
    /// The flags and texts of the advice.
    pub levers: Levers,
}

/// The flag (with its value's unit or form) for each lever an action may pull.
#[allow(dead_code)]
#[derive(Debug)]
pub struct Levers {
    /// Caps the running requests.
    pub running_cap: &'static str,
    /// The cap's name in the engine's own words, the KV remedies to grow beside it,
    /// and what it counts (`max_num_seqs`, …, `sequences`).
    pub running_cap_words: (&'static str, &'static str, &'static str),
    /// The benchmark client named for the client's concurrency.
    pub client_tool: &'static str,
    /// An FP8 (or int8) KV cache: the flag and why.
    pub fp8_kv: (&'static str, &'static str),
    /// More GPUs per replica for KV cache.
    pub tensor_parallel: &'static str,
}
