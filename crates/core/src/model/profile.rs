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
    /// What admission reserves, in the engine's words (ending "so the pool is
    /// full once reservations are counted"), where it reserves: why a pool that
    /// admits nothing more can be well short of full.
    pub reservation: Option<&'static str>,
    /// What the engine's tuning guide says of evictions and queues, where
    /// batchlens quotes it.
    pub guide: Option<Guide>,
    /// Where the engine's stats lines come from, said of a log that holds none;
    /// `None`: the hint that names every engine's lines.
    pub stats_lines_hint: Option<&'static str>,
    /// The flags and texts of the advice.
    pub levers: Levers,
    /// How requests are routed to data-parallel ranks, where the engine runs several.
    pub ranks: Option<RankRouting>,
}

/// Data-parallel routing, in the engine's words.
#[derive(Debug)]
pub struct RankRouting {
    /// The setting that routes requests to ranks, its default and alternatives.
    pub routing: &'static str,
    /// The alternative to set against uneven queues.
    pub balance: &'static str,
    /// How to make the log print every rank's lines.
    pub all_ranks: &'static str,
}

/// The tuning guide's words.
#[derive(Debug)]
pub struct Guide {
    /// Fewer evictions than about one a minute are fine: the evidence to cite.
    pub few_evictions: &'static str,
    /// The same, as the headline's closing clause.
    pub few_evictions_headline: &'static str,
    /// A queue near empty means the client submits too slowly: the evidence to cite.
    pub empty_queue: &'static str,
    /// The client's advice to go on doubling its concurrency (after a comma).
    pub keep_doubling: &'static str,
}

/// One change to advise, in the engine's words: the action's id, the flag (or
/// setting) to set, why, and the effect to expect beside what the what-if model
/// predicts. Where the change has a value (a size, a budget), `{}` in the flag
/// stands for the value to set and `{}` in why for the current one.
#[derive(Debug)]
pub struct Lever {
    pub id: &'static str,
    pub flag: &'static str,
    pub why: &'static str,
    pub effect: &'static str,
}

/// The levers an action may pull, in the engine's flags and words.
#[derive(Debug)]
pub struct Levers {
    /// The flag that caps the running requests (followed by the cap).
    pub running_cap: &'static str,
    /// Why to raise that cap.
    pub raise_cap: RaiseCap,
    /// What else grows with a raised cap (`{}`: the new cap), where the engine
    /// sizes something of its own to the largest batch it expects.
    pub with_cap: Option<Lever>,
    /// The benchmark client named for the client's concurrency.
    pub client_tool: &'static str,
    /// An FP8 (or int8) KV cache: the flag and why.
    pub fp8_kv: (&'static str, &'static str),
    /// The setting that gives the KV pool more of the GPU's memory.
    pub kv_memory: KvMemory,
    /// A host-memory tier behind the GPU pool for evicted prefixes, where the
    /// engine has one.
    pub host_tier: Option<HostTier>,
    /// A knob that scales what admission reserves for running requests' future
    /// tokens, where the engine reserves them.
    pub conservativeness: Option<Conservativeness>,
    /// More GPUs per replica, advised for more KV cache (where the advice for
    /// the pool does not name other remedies first).
    pub tensor_parallel: Option<&'static str>,
    /// The flag that turns prefix caching on, where it is off by default.
    pub prefix_caching: Option<&'static str>,
    /// The policy that chooses between reserving each request's whole length
    /// and admitting against the blocks in use, where the engine offers both.
    pub capacity_policy: Option<CapacityPolicy>,
    /// What to change when prefill binds, in order.
    pub prefill: &'static [PrefillLever],
    /// What to change when decode itself is saturated, in order.
    pub decode_saturated: &'static [Lever],
}

/// A host-memory KV tier: `{}` in the lever's flag is its size.
#[derive(Debug)]
pub struct HostTier {
    pub lever: Lever,
    pub size: TierSize,
}

/// The unit a host tier's size is set in.
#[derive(Debug, Clone, Copy)]
pub enum TierSize {
    /// A number of GB.
    Gigabytes,
    /// An integer number of bytes, without separators.
    Bytes,
}

/// The reservation knob (`{}` in the flags: its value, `default` where the log
/// does not state it): lower admits more requests and risks evictions, higher
/// evicts less and admits fewer.
#[derive(Debug)]
pub struct Conservativeness {
    pub default: f64,
    pub lower: Lever,
    pub raise: Lever,
}

/// The two admission policies' settings: admitting against the blocks in use
/// (requests are evicted when outputs outgrow the pool), and reserving each
/// request's whole length (none is).
#[derive(Debug)]
pub struct CapacityPolicy {
    pub admit_on_blocks: Lever,
    pub reserve_whole: Lever,
}

/// One change advised when prefill binds.
#[derive(Debug)]
pub enum PrefillLever {
    /// Always.
    Always(Lever),
    /// Twice a per-step token budget, read from `setting` (`default` where the
    /// log does not state it): `{}` in the flag is the doubled budget, in why the
    /// current one.
    Budget {
        lever: Lever,
        setting: TokenBudget,
        default: u64,
    },
    /// Where the log shows cached prompt tokens: prompts share prefixes.
    SharedPrefixes(Lever),
    /// Prefix caching (`Levers::prefix_caching`), where the log does not say it is on.
    PrefixCaching,
    /// Where prefill takes most of the time, as the log times its iterations
    /// (`{}` in why: its share): more prefill compute, not more room for
    /// requests, raises throughput.
    MoreCompute(Lever),
}

/// Which of the report's settings states a per-step token budget.
#[derive(Debug, Clone, Copy)]
pub enum TokenBudget {
    /// `config.chunked_prefill_size` (not positive: unset).
    ChunkedPrefillSize,
    /// `config.max_prefill_tokens`.
    MaxPrefillTokens,
    /// `config.max_batched_tokens`.
    MaxBatchedTokens,
}

/// Why to raise the running cap, in the engine's names for it and the KV remedies beside it.
#[derive(Debug)]
pub struct RaiseCap {
    /// The KV pool is nearly full too.
    pub kv_tight: &'static str,
    /// The run decodes speculatively, where that lowers the engine's default cap.
    pub speculative: Option<&'static str>,
    /// The cap binds and the pool has room.
    pub room: &'static str,
}

/// How the size of the KV pool is set, which says how to grow it.
#[derive(Debug)]
pub enum KvMemory {
    /// The weights and the KV pool take a static fraction (`name`) of the GPU's
    /// memory, and the startup line says what is left after the pool (`left`):
    /// that headroom says how far the fraction can grow. Steps of `step`, or of
    /// `small_step` when little is left; `default` where the log does not state
    /// the fraction, never above `most`.
    StaticFraction {
        flag: &'static str,
        name: &'static str,
        left: &'static str,
        default: f64,
        step: f64,
        small_step: f64,
        most: f64,
    },
    /// The KV cache takes a share of the GPU memory free after the weights: it
    /// grows in proportion to the share.
    ShareOfFree(ShareOfFree),
    /// The engine takes a fraction (`name`) of the whole GPU's memory, and what
    /// is left after weights and activations becomes KV cache.
    WholeGpuFraction {
        flag: &'static str,
        name: &'static str,
        default: f64,
        step: f64,
        most: f64,
    },
}

/// A KV cache sized as a share of the free GPU memory (`after`: free after what).
/// `default`: the engine's own, also for a stated share outside (0, 1], which it
/// would not take; `step` and `most`: how much more to advise.
#[derive(Debug)]
pub struct ShareOfFree {
    pub flag: &'static str,
    pub name: &'static str,
    /// The report's setting that states the share.
    pub setting: FreeShare,
    pub default: f64,
    pub step: f64,
    pub most: f64,
    pub after: &'static str,
}

/// Which of the report's settings states a KV cache's share of the free GPU memory.
#[derive(Debug, Clone, Copy)]
pub enum FreeShare {
    /// `config.kv_free_gpu_memory_fraction`.
    KvFreeGpuMemoryFraction,
    /// `config.cache_max_entry_count`.
    CacheMaxEntryCount,
}
