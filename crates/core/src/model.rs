//! The engine-neutral records every engine parser produces.
//!
//! No engine's vocabulary lives here: SGLang's `#queue-req` and vLLM's `Waiting:`
//! both become `queued`, SGLang's `token usage` and vLLM's `GPU KV cache usage: x%`
//! both become `kv_usage` (a 0..1 fraction).

use serde::Serialize;

use crate::time::Stamp;

/// A source label (`DP3`, `Engine 001`), carried by every sample: a short
/// string kept inline, so handing it to millions of samples (across threads)
/// neither allocates nor touches a shared reference count.
pub type SourceName = smol_str::SmolStr;

/// Which part of the engine's loop a stats line describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleKind {
    /// A decode-loop line (SGLang `Decode batch`).
    Decode,
    /// A prefill/admission line (SGLang `Prefill batch`, oldest `new fill batch`).
    Prefill,
    /// A periodic line covering both phases over an interval (vLLM stats line).
    Interval,
}

/// One stats line, normalised. Every field is optional: versions drop and add fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// 1-based physical line number where the record starts.
    pub line: u64,
    /// The timestamp as printed; the timeline places it on a monotone clock.
    pub stamp: Option<Stamp>,
    /// Source (rank or engine) label, e.g. `DP3 TP3`, `Engine 001`; empty for a single source.
    pub source: SourceName,
    pub kind: Option<SampleKind>,
    pub running: Option<u32>,
    pub queued: Option<u32>,
    /// Requests swapped out to host memory (vLLM V0) or paused.
    pub swapped: Option<u32>,
    /// KV-cache tokens held by live requests.
    pub kv_tokens: Option<u64>,
    /// KV-cache usage, 0..1.
    pub kv_usage: Option<f64>,
    /// Generation (decode) throughput over the line's interval, tokens/s.
    pub gen_tok_s: Option<f64>,
    /// Prompt (prefill) throughput over the line's interval, tokens/s.
    pub input_tok_s: Option<f64>,
    /// Requests admitted by this prefill batch.
    pub new_seqs: Option<u32>,
    /// Prompt tokens computed by this prefill batch.
    pub prefill_tokens: Option<u64>,
    /// Prompt tokens reused from the prefix cache by this prefill batch.
    pub cached_tokens: Option<u64>,
    /// Prompt tokens still waiting to be prefilled.
    pub pending_tokens: Option<u64>,
    /// Prefix-cache hit rate, 0..1.
    pub prefix_hit: Option<f64>,
    /// Speculative decoding: mean tokens committed per verify step.
    pub accept_len: Option<f64>,
    /// Whether the step replayed a captured (CUDA/NPU/CPU) graph.
    pub graph: Option<bool>,
    /// Requests retracted/preempted during the line's interval.
    pub preempted: Option<u32>,
    /// The line was recognisably a stats line but could not be read in full.
    pub damaged: bool,
}

/// Something that happened at a point in time, as opposed to a periodic sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EventKind {
    /// Running requests were evicted because the KV pool was full (SGLang retraction).
    Retraction { requests: Option<u32> },
    /// vLLM V0 preemption warning; `cumulative` is the engine's running total.
    Preemption { cumulative: Option<u64> },
    /// The engine could not allocate KV memory at all (hard OOM).
    OutOfMemory,
    /// The server (re)started: startup lines after stats lines.
    Restart,
    /// The scheduler crashed or a watchdog fired.
    Crash,
    /// The log's clock jumped backwards (rotated or concatenated logs).
    ClockJump { seconds: f64 },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub line: u64,
    #[serde(skip)]
    pub stamp: Option<Stamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_s: Option<f64>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// One server setting learned from startup lines. Engine parsers emit these; the
/// timeline folds them into [`ServerConfig`].
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigItem {
    KvCapacityTokens(u64),
    MaxRunningRequests(u64),
    ChunkedPrefillSize(i64),
    MaxPrefillTokens(u64),
    ContextLength(u64),
    MemFractionStatic(f64),
    GpuMemoryUtilization(f64),
    AvailableGpuMemGb(f64),
    KvCacheDtype(String),
    KvCacheGb(f64),
    ScheduleConservativeness(f64),
    SchedulePolicy(String),
    TensorParallel(u64),
    DataParallel(u64),
    PipelineParallel(u64),
    HierarchicalCache(bool),
    HicacheSizeGb(f64),
    HicacheRatio(f64),
    SpeculativeAlgorithm(String),
    CudaGraphMaxBs(u64),
    DisaggregationMode(String),
    Model(String),
    KvBlocks(u64),
    CpuKvBlocks(u64),
    BlockSize(u64),
    MaxBatchedTokens(u64),
    MaxConcurrencyX(f64),
    PrefixCaching(bool),
    SwapSpaceGb(f64),
    EngineVersion(String),
}

/// What one physical line (or one record inside it) turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Sample(Sample),
    Event(Event),
    Config {
        line: u64,
        items: Vec<ConfigItem>,
    },
    /// A known line that carries nothing we use (access logs, progress bars, banners…).
    Other,
}
