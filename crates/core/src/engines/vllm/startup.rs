//! Startup lines: engine arguments, KV cache size and the banner.

use memchr::memmem;

use super::super::Outcome;
use super::{has, VllmParser, DEFAULT_BLOCK_SIZE};
use crate::model::{ConfigItem, Record};
use crate::text::fields::{boolean, float, trim, uint};
use crate::text::python::{py_str, python_pairs};

impl VllmParser {
    /// Startup lines that state capacity or settings; `m` is the message after the prefix.
    pub(super) fn parse_config(
        &mut self,
        m: &[u8],
        no: u64,
        out: &mut Vec<Record>,
    ) -> Option<Outcome> {
        let mut items = Vec::new();
        let after_word = memchr::memchr(b' ', m).map(|i| &m[i + 1..]);
        if let Some(v) = m.strip_prefix(b"non-default args: ") {
            // The arguments open a (re)start: its block size is to be read afresh.
            self.block_size_known = false;
            for (k, v) in python_pairs(v) {
                self.arg(k, v, &mut items);
            }
        } else if let Some(v) = m.strip_prefix(b"args: ") {
            // `args: Namespace(…)` (≤0.9).
            self.block_size_known = false;
            for (k, v) in python_pairs(v) {
                self.arg(k, v, &mut items);
            }
        } else if m.starts_with(b"# ") {
            // `# GPU blocks: 27000, # CPU blocks: 2048` / `# cuda blocks: …`.
            for part in m.split(|&c| c == b',') {
                let part = trim(part);
                let Some(p) = part.strip_prefix(b"# ") else {
                    continue;
                };
                let Some(c) = memmem::find(p, b" blocks: ") else {
                    continue;
                };
                let n = uint(&p[c + 9..]);
                if p[..c].eq_ignore_ascii_case(b"CPU") {
                    items.extend(n.map(ConfigItem::CpuKvBlocks));
                } else {
                    items.extend(n.map(ConfigItem::KvBlocks));
                }
            }
            if items.is_empty() {
                return None;
            }
            self.default_block_size(&mut items);
        } else if let Some(i) = m
            .starts_with(b"Engine ")
            .then(|| memmem::find(m, b"num_gpu_blocks is: "))
            .flatten()
        {
            // `Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: N`
            items.extend(uint(trim(&m[i + 19..])).map(ConfigItem::KvBlocks));
            if items.is_empty() {
                return None;
            }
            self.default_block_size(&mut items);
        } else if after_word.is_some_and(|r| r.starts_with(b"KV cache size: "))
            || m.starts_with(b"Maximum concurrency for ")
        {
            // ≤0.22 two lines; 0.33 one: `GPU KV cache size: 1,234,560 tokens, Maximum concurrency …`.
            if let Some(i) = memmem::find(m, b"KV cache size: ") {
                let v = &m[i + 15..];
                let e = memmem::find(v, b" tokens").unwrap_or(v.len());
                items.extend(uint(&v[..e]).map(ConfigItem::KvCapacityTokens));
            }
            if let Some(i) = memmem::find(m, b" per request: ") {
                let v = trim(&m[i + 14..]);
                let v = v.strip_suffix(b".").unwrap_or(v);
                items.extend(
                    v.strip_suffix(b"x")
                        .and_then(float)
                        .map(ConfigItem::MaxConcurrencyX),
                );
            }
        } else if let Some(v) =
            m.strip_prefix(b"Chunked prefill is enabled with max_num_batched_tokens=")
        {
            items.extend(leading_uint(v).map(ConfigItem::MaxBatchedTokens));
        } else if let Some(v) = m.strip_prefix(b"Defaulting max_num_seqs to ") {
            items.extend(leading_uint(v).map(ConfigItem::MaxRunningRequests));
        } else if let Some(v) = m.strip_prefix(b"Available KV cache memory: ") {
            let e = memchr::memchr(b' ', v).unwrap_or(v.len());
            items.extend(float(&v[..e]).map(ConfigItem::KvCacheGb));
        } else if m.starts_with(b"Initializing a") && has(m, b"LLM engine") {
            // `Initializing a V1 LLM engine (v0.8.5) with config: model='…', …`
            // (V0: `an LLM engine (v0.6.3)`; ≤0.2 without the version).
            if let Some(i) = memmem::find(m, b"LLM engine (v") {
                let v = &m[i + 13..];
                if let Some(e) = memchr::memchr(b')', v) {
                    items.push(ConfigItem::EngineVersion(
                        String::from_utf8_lossy(&v[..e]).into_owned(),
                    ));
                }
            }
            if let Some(c) = memmem::find(m, b"with config: ") {
                let mut wrapped = Vec::with_capacity(m.len() - c);
                wrapped.push(b'(');
                wrapped.extend_from_slice(&m[c + 13..]);
                wrapped.push(b')');
                for (k, v) in python_pairs(&wrapped) {
                    self.arg(k, v, &mut items);
                }
            }
        } else if let Some(v) = m.strip_prefix(b"vLLM API server version ") {
            let v = trim(v);
            let e = memchr::memchr(b' ', v).unwrap_or(v.len());
            items.push(ConfigItem::EngineVersion(
                String::from_utf8_lossy(&v[..e]).into_owned(),
            ));
        } else {
            return None;
        }
        // Only lines that state something: a config record after stats lines
        // reads as a restart.
        if !items.is_empty() {
            out.push(Record::Config { line: no, items });
        }
        if std::mem::take(&mut self.stats_off) {
            return Some(Outcome::Other("stats_disabled"));
        }
        Some(Outcome::Other("startup"))
    }

    fn default_block_size(&mut self, items: &mut Vec<ConfigItem>) {
        if !self.block_size_known {
            self.block_size_known = true;
            items.push(ConfigItem::BlockSize(DEFAULT_BLOCK_SIZE));
        }
    }

    /// One `key=value` of `args: Namespace(…)`, `non-default args: {…}` or the engine config.
    fn arg(&mut self, k: &[u8], v: &[u8], items: &mut Vec<ConfigItem>) {
        let f = || float(v);
        let u = || uint(v);
        let s = || py_str(v);
        let b = || boolean(v);
        match k {
            b"model" | b"model_tag" => items.extend(s().map(ConfigItem::Model)),
            b"max_num_seqs" => items.extend(u().map(ConfigItem::MaxRunningRequests)),
            b"gpu_memory_utilization" => items.extend(f().map(ConfigItem::GpuMemoryUtilization)),
            b"max_num_batched_tokens" => items.extend(u().map(ConfigItem::MaxBatchedTokens)),
            b"kv_cache_dtype" => items.extend(s().map(ConfigItem::KvCacheDtype)),
            b"quantization" => items.extend(
                s().filter(|q| !q.is_empty() && q != "None")
                    .map(ConfigItem::Quantization),
            ),
            b"enable_prefix_caching" => items.extend(b().map(ConfigItem::PrefixCaching)),
            b"tensor_parallel_size" => items.extend(u().map(ConfigItem::TensorParallel)),
            b"data_parallel_size" => items.extend(u().map(ConfigItem::DataParallel)),
            b"pipeline_parallel_size" => items.extend(u().map(ConfigItem::PipelineParallel)),
            b"max_model_len" | b"max_seq_len" => items.extend(u().map(ConfigItem::ContextLength)),
            b"swap_space" => items.extend(f().map(ConfigItem::SwapSpaceGb)),
            b"disable_log_stats" => self.stats_off |= b() == Some(true),
            b"speculative_config" => {
                // `{'method': 'mtp', …}` or `SpeculativeConfig(method='eagle', …)`.
                let method = python_pairs(v)
                    .into_iter()
                    .find(|(k, _)| *k == b"method")
                    .and_then(|(_, m)| py_str(m));
                items.extend(method.map(ConfigItem::SpeculativeAlgorithm));
            }
            b"block_size" => {
                if let Some(n) = u() {
                    self.block_size_known = true;
                    items.push(ConfigItem::BlockSize(n));
                }
            }
            _ => {}
        }
    }
}

fn leading_uint(v: &[u8]) -> Option<u64> {
    let e = v
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(v.len());
    uint(&v[..e])
}

/// The 0.19+ startup banner: block-art lines (U+2580–U+259F), some carrying
/// `version X` or `model Y`, and blank message lines.
pub(super) fn banner(m: &[u8]) -> Option<Vec<ConfigItem>> {
    let t = trim(m);
    let art = t.is_empty() || has(&t[..t.len().min(64)], b"\xe2\x96");
    if !art {
        return None;
    }
    let mut items = Vec::new();
    let word_after = |key: &[u8]| -> Option<String> {
        let i = memmem::find(t, key)?;
        let v = trim(&t[i + key.len()..]);
        let e = memchr::memchr(b' ', v).unwrap_or(v.len());
        (e > 0).then(|| String::from_utf8_lossy(&v[..e]).into_owned())
    };
    items.extend(word_after(b" version ").map(ConfigItem::EngineVersion));
    items.extend(word_after(b" model ").map(ConfigItem::Model));
    Some(items)
}
