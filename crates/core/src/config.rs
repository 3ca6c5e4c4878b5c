//! The server configuration found in startup lines, engine-neutral.

use serde::Serialize;

use crate::model::ConfigItem;

/// Every field is `null` unless the log states it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ServerConfig {
    /// KV pool capacity in tokens (SGLang `max_total_num_tokens`, vLLM `GPU KV cache size` or blocks × block size).
    pub kv_capacity_tokens: Option<u64>,
    /// Cap on concurrently running requests (SGLang `max_running_requests`, vLLM `max_num_seqs`).
    pub max_running_requests: Option<u64>,
    pub chunked_prefill_size: Option<i64>,
    pub max_prefill_tokens: Option<u64>,
    /// vLLM `max_num_batched_tokens`.
    pub max_batched_tokens: Option<u64>,
    pub context_length: Option<u64>,
    pub mem_fraction_static: Option<f64>,
    pub gpu_memory_utilization: Option<f64>,
    /// GPU memory left after weights, KV pool and graphs (SGLang), GB.
    pub available_gpu_mem_gb: Option<f64>,
    pub kv_cache_dtype: Option<String>,
    /// Size of the KV pool in GB, where printed.
    pub kv_cache_gb: Option<f64>,
    pub schedule_conservativeness: Option<f64>,
    pub schedule_policy: Option<String>,
    pub tensor_parallel_size: Option<u64>,
    pub data_parallel_size: Option<u64>,
    pub pipeline_parallel_size: Option<u64>,
    pub hierarchical_cache: Option<bool>,
    pub hicache_size_gb: Option<f64>,
    pub hicache_ratio: Option<f64>,
    pub speculative_algorithm: Option<String>,
    pub cuda_graph_max_bs: Option<u64>,
    pub disaggregation_mode: Option<String>,
    pub model: Option<String>,
    pub kv_blocks: Option<u64>,
    pub cpu_kv_blocks: Option<u64>,
    pub block_size: Option<u64>,
    /// vLLM `Maximum concurrency for N tokens per request: X.XXx`.
    pub max_concurrency_x: Option<f64>,
    pub prefix_caching: Option<bool>,
    pub swap_space_gb: Option<f64>,
    pub engine_version: Option<String>,
    /// LMDeploy `cache_max_entry_count`: the share of free GPU memory its KV cache takes.
    pub cache_max_entry_count: Option<f64>,
    /// TensorRT-LLM `free_gpu_memory_fraction`: the share of free GPU memory its KV cache takes.
    pub kv_free_gpu_memory_fraction: Option<f64>,
    /// Lines the settings were read from (first few).
    pub lines: Vec<u64>,
}

const MAX_CONFIG_LINES: usize = 16;

/// A setting in words, if stated.
type Shown = fn(&ServerConfig) -> Option<String>;

/// The settings that change what a server can admit, in words (compared across restarts).
const CAPACITY_SETTINGS: [(&str, Shown); 12] = [
    ("KV pool (tokens)", |c| {
        c.kv_capacity_tokens.map(|v| crate::render::num(v as f64))
    }),
    ("max running requests", |c| {
        c.max_running_requests.map(|v| v.to_string())
    }),
    ("mem_fraction_static", |c| {
        c.mem_fraction_static.map(|v| v.to_string())
    }),
    ("gpu_memory_utilization", |c| {
        c.gpu_memory_utilization.map(|v| v.to_string())
    }),
    ("KV cache dtype", |c| c.kv_cache_dtype.clone()),
    ("hierarchical cache", |c| {
        c.hierarchical_cache.map(|v| v.to_string())
    }),
    ("schedule_conservativeness", |c| {
        c.schedule_conservativeness.map(|v| v.to_string())
    }),
    ("chunked prefill size", |c| {
        c.chunked_prefill_size.map(|v| v.to_string())
    }),
    ("max batched tokens", |c| {
        c.max_batched_tokens.map(|v| v.to_string())
    }),
    ("tensor parallel size", |c| {
        c.tensor_parallel_size.map(|v| v.to_string())
    }),
    ("data parallel size", |c| {
        c.data_parallel_size.map(|v| v.to_string())
    }),
    ("speculative algorithm", |c| c.speculative_algorithm.clone()),
];

impl ServerConfig {
    /// The capacity settings that differ from `before`'s, as `name a → b`
    /// (`?` where a run did not state it).
    pub fn changes_from(&self, before: &ServerConfig) -> Vec<String> {
        CAPACITY_SETTINGS
            .iter()
            .filter_map(|(name, shown)| {
                let (a, b) = (shown(before), shown(self));
                (a != b).then(|| {
                    let q = |v: Option<String>| v.unwrap_or_else(|| "?".into());
                    format!("{name} {} → {}", q(a), q(b))
                })
            })
            .collect()
    }

    pub fn apply(&mut self, line: u64, items: &[ConfigItem]) {
        use ConfigItem::*;
        if !items.is_empty() && self.lines.len() < MAX_CONFIG_LINES && !self.lines.contains(&line) {
            self.lines.push(line);
        }
        for it in items {
            match it.clone() {
                KvCapacityTokens(v) => self.kv_capacity_tokens = Some(v),
                MaxRunningRequests(v) => self.max_running_requests = Some(v),
                ChunkedPrefillSize(v) => self.chunked_prefill_size = Some(v),
                MaxPrefillTokens(v) => self.max_prefill_tokens = Some(v),
                ContextLength(v) => self.context_length = Some(v),
                MemFractionStatic(v) => self.mem_fraction_static = Some(v),
                GpuMemoryUtilization(v) => self.gpu_memory_utilization = Some(v),
                AvailableGpuMemGb(v) => self.available_gpu_mem_gb = Some(v),
                KvCacheDtype(v) => self.kv_cache_dtype = Some(v),
                KvCacheGb(v) => self.kv_cache_gb = Some(v),
                ScheduleConservativeness(v) => self.schedule_conservativeness = Some(v),
                SchedulePolicy(v) => self.schedule_policy = Some(v),
                TensorParallel(v) => self.tensor_parallel_size = Some(v),
                DataParallel(v) => self.data_parallel_size = Some(v),
                PipelineParallel(v) => self.pipeline_parallel_size = Some(v),
                HierarchicalCache(v) => self.hierarchical_cache = Some(v),
                HicacheSizeGb(v) => self.hicache_size_gb = Some(v),
                HicacheRatio(v) => self.hicache_ratio = Some(v),
                SpeculativeAlgorithm(v) => self.speculative_algorithm = Some(v),
                CudaGraphMaxBs(v) => self.cuda_graph_max_bs = Some(v),
                DisaggregationMode(v) => self.disaggregation_mode = Some(v),
                Model(v) => self.model = Some(v),
                KvBlocks(v) => self.kv_blocks = Some(v),
                CpuKvBlocks(v) => self.cpu_kv_blocks = Some(v),
                BlockSize(v) => self.block_size = Some(v),
                MaxBatchedTokens(v) => self.max_batched_tokens = Some(v),
                MaxConcurrencyX(v) => self.max_concurrency_x = Some(v),
                PrefixCaching(v) => self.prefix_caching = Some(v),
                SwapSpaceGb(v) => self.swap_space_gb = Some(v),
                EngineVersion(v) => self.engine_version = Some(v),
                CacheMaxEntryCount(v) => self.cache_max_entry_count = Some(v),
                KvFreeGpuMemoryFraction(v) => self.kv_free_gpu_memory_fraction = Some(v),
            }
        }
        if self.kv_capacity_tokens.is_none() {
            if let (Some(b), Some(s)) = (self.kv_blocks, self.block_size) {
                self.kv_capacity_tokens = Some(b * s);
            }
        }
    }
}

/// Iterates `key=value` or `'key': value` pairs of a Python repr
/// (`ServerArgs(a=1, b='x', c=[1, 2])`, `{'a': 1}`, `Namespace(a=1)`), yielding
/// raw value text. Nested brackets and quoted strings are skipped over whole.
pub fn python_pairs(text: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    each_python_pair(text, |k, v| out.push((k, v)));
    out
}

/// [`python_pairs`] handed to `f` one at a time, without collecting them (an
/// iteration log has a dict on every line).
pub fn each_python_pair<'t>(text: &'t [u8], mut f: impl FnMut(&'t [u8], &'t [u8])) {
    let mut pairs = 0;
    let mut i = 0;
    let n = text.len();
    // Skip to the first opening bracket.
    while i < n && text[i] != b'(' && text[i] != b'{' {
        i += 1;
    }
    if i >= n {
        return;
    }
    i += 1;
    while i < n {
        while i < n && (text[i] == b' ' || text[i] == b',') {
            i += 1;
        }
        if i >= n || text[i] == b')' || text[i] == b'}' {
            break;
        }
        // Key: bare identifier or quoted.
        let (ks, ke);
        if text[i] == b'\'' || text[i] == b'"' {
            let q = text[i];
            ks = i + 1;
            let mut j = ks;
            while j < n && text[j] != q {
                j += 1;
            }
            if j >= n {
                // An unterminated quoted key: the line was cut; keep what was read.
                break;
            }
            ke = j;
            i = j + 1;
        } else {
            ks = i;
            while i < n && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            ke = i;
        }
        if ke == ks {
            break;
        }
        while i < n && (text[i] == b' ' || text[i] == b':' || text[i] == b'=') {
            i += 1;
        }
        let vs = i;
        let mut depth = 0i32;
        let mut quote: Option<u8> = None;
        while i < n {
            let c = text[i];
            match quote {
                Some(q) => {
                    if c == b'\\' {
                        i += 1;
                    } else if c == q {
                        quote = None;
                    }
                }
                None => match c {
                    b'\'' | b'"' => quote = Some(c),
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => {
                        if depth == 0 {
                            break;
                        }
                        depth -= 1;
                    }
                    b',' if depth == 0 => break,
                    _ => {}
                },
            }
            i += 1;
        }
        let ve = i.min(n);
        f(&text[ks..ke], crate::fields::trim(&text[vs..ve]));
        pairs += 1;
        if pairs > 4096 {
            break;
        }
    }
}

/// A Python value as a plain string: quotes removed; `None` gives `None`.
pub fn py_str(v: &[u8]) -> Option<String> {
    let v = crate::fields::trim(v);
    if v == b"None" || v.is_empty() {
        return None;
    }
    let v = v
        .strip_prefix(b"'")
        .and_then(|s| s.strip_suffix(b"'"))
        .or_else(|| v.strip_prefix(b"\"").and_then(|s| s.strip_suffix(b"\"")))
        .unwrap_or(v);
    Some(String::from_utf8_lossy(v).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_reprs_split_into_pairs() {
        let p = python_pairs(b"server_args=ServerArgs(model_path='a,b', tp_size=2, x=[1, 2], mem_fraction_static=0.85, d={'k': (1, 2)}, n=None)");
        let keys: Vec<_> = p
            .iter()
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
            .collect();
        assert_eq!(
            keys,
            [
                "model_path",
                "tp_size",
                "x",
                "mem_fraction_static",
                "d",
                "n"
            ]
        );
        assert_eq!(p[0].1, b"'a,b'");
        assert_eq!(p[3].1, b"0.85");
        let d =
            python_pairs(b"non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'max_num_seqs': 128}");
        assert_eq!(d.len(), 2);
        assert_eq!(d[1], (&b"max_num_seqs"[..], &b"128"[..]));
        assert_eq!(py_str(b"'a,b'").as_deref(), Some("a,b"));
        assert_eq!(py_str(b"None"), None);
        // A line cut inside a quoted key keeps the pairs before it and does not panic.
        let cut = python_pairs(b"server_args=ServerArgs(tp_size=2, 'model_pa");
        assert_eq!(cut, vec![(&b"tp_size"[..], &b"2"[..])]);
    }
}
