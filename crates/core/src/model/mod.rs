//! The engine-neutral records every engine parser produces.
//!
//! No engine's vocabulary lives here: SGLang's `#queue-req` and vLLM's `Waiting:`
//! both become `queued`, SGLang's `token usage` and vLLM's `GPU KV cache usage: x%`
//! both become `kv_usage` (a 0..1 fraction).

use serde::Serialize;

pub mod hardware;
pub mod line;
pub mod profile;
pub mod shapes;
pub mod stats;
pub mod time;

use crate::model::time::Stamp;

/// A source label (`DP3`, `Engine 001`), carried by every sample: up to
/// [`SourceName::MAX`] bytes kept inline and `Copy`, so handing it to millions
/// of samples neither allocates nor needs dropping (a sample has no drop glue,
/// and clearing a chunk's records costs nothing per sample). Engines' labels are
/// a rank or engine number (`DP4294967295`, `Engine 123456`, `aggregated`): far shorter.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceName {
    len: u8,
    bytes: [u8; SourceName::MAX],
}

impl SourceName {
    pub const MAX: usize = 23;

    /// The label, cut at a character boundary past [`SourceName::MAX`] bytes.
    pub fn new(s: &str) -> Self {
        let mut len = s.len().min(Self::MAX);
        while !s.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0; Self::MAX];
        bytes[..len].copy_from_slice(&s.as_bytes()[..len]);
        SourceName {
            len: len as u8,
            bytes,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    pub fn as_str(&self) -> &str {
        // Built from a `str` cut at a character boundary.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}

impl std::ops::Deref for SourceName {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for SourceName {
    fn from(s: &str) -> Self {
        SourceName::new(s)
    }
}

impl From<String> for SourceName {
    fn from(s: String) -> Self {
        SourceName::new(&s)
    }
}

impl std::fmt::Debug for SourceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for SourceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    /// Requests swapped out to host memory (vLLM V0's `Swapped`: a state, not events).
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
    /// The engine's own estimates per GPU, where it prints them: HBM GB/s read,
    /// TFLOPS (decode, or the interval's), prefill TFLOPS; 0 where not printed
    /// or idle (f32 keeps a sample small: these are rare fields).
    pub engine_est: [f32; 3],
    /// Whether the step replayed a captured (CUDA/NPU/CPU) graph.
    pub graph: Option<bool>,
    /// Requests retracted/preempted during the line's interval.
    pub preempted: Option<u32>,
    /// Seconds the line's rates cover, where it is one engine iteration (or a
    /// few) rather than a periodic line: such records are merged into samples
    /// of about a second, so their rates are weighted by time.
    pub interval_s: Option<f64>,
    /// The line was recognisably a stats line but could not be read in full.
    pub damaged: bool,
}

/// Something that happened at a point in time, as opposed to a periodic sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EventKind {
    /// Running requests were evicted because the KV pool was full (SGLang retraction).
    Retraction {
        requests: Option<u32>,
        /// The KV tokens the retraction freed (`#new_tokens_gained`): the retracted
        /// requests' prompts and outputs so far, which are prefilled again.
        #[serde(skip_serializing_if = "Option::is_none")]
        tokens: Option<u64>,
    },
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
    /// The weights' quantization (`--quantization`).
    Quantization(String),
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
    /// LMDeploy `cache_max_entry_count`: the share of free GPU memory its KV cache takes.
    CacheMaxEntryCount(f64),
    /// TensorRT-LLM `free_gpu_memory_fraction`: the share of free GPU memory its KV cache takes.
    KvFreeGpuMemoryFraction(f64),
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
    Step(Step),
    /// Speculative decoding: the tokens a request commits per step, over the
    /// interval a line reports (vLLM's `SpecDecoding metrics` line).
    Accepted {
        line: u64,
        tokens_per_step: f64,
    },
}

/// One engine step as the engine times it (vLLM's `Iteration(N): …` lines): what it
/// scheduled and how long it took. Not a stats line: the periodic lines still give
/// the rates; a step gives the step time at its batch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Step {
    pub line: u64,
    pub stamp: Option<Stamp>,
    /// Requests prefilling in the step and the prompt tokens they compute.
    pub ctx_requests: u32,
    pub ctx_tokens: u64,
    /// Requests decoding in the step and the tokens scheduled for them (draft
    /// tokens included under speculative decoding).
    pub gen_requests: u32,
    pub gen_tokens: u64,
    /// The step's time as printed.
    pub secs: f64,
}

#[cfg(test)]
mod tests {
    use super::SourceName;

    #[test]
    fn source_names_keep_engine_labels_whole_and_cut_long_ones_at_a_character() {
        for label in ["", "DP3", "DP4294967295", "Engine 123456", "aggregated"] {
            let n = SourceName::from(label);
            assert_eq!(&*n, label);
            assert_eq!(n, SourceName::from(label.to_string()));
            assert_eq!(format!("{n}"), label);
        }
        assert_ne!(SourceName::from("DP1"), SourceName::from("DP10"));
        let long = "x".repeat(22) + "é";
        assert_eq!(long.len(), 24);
        // 23 bytes would split `é`: cut before it.
        assert_eq!(&*SourceName::from(long.as_str()), "x".repeat(22));
        assert_eq!(SourceName::default().as_bytes(), b"");
    }
}

/// mean / p50 / p90 / max of one metric over the stats lines that carry it.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Distribution {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
    /// How many values the figures are drawn from.
    pub count: u64,
}
