//! The settings that change what a server can admit, compared across runs.

use crate::report::ServerConfig;

/// A setting in words, if stated.
type Shown = fn(&ServerConfig) -> Option<String>;

/// The settings that change what a server can admit, in words (compared across restarts).
const CAPACITY_SETTINGS: [(&str, Shown); 12] = [
    ("KV pool (tokens)", |c| {
        c.kv_capacity_tokens
            .map(|v| crate::text::num::num(v as f64))
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

/// The capacity settings that differ between two configurations: name, before, after
/// (`None` where a run did not state it).
pub fn differing(
    before: &ServerConfig,
    after: &ServerConfig,
) -> Vec<(&'static str, Option<String>, Option<String>)> {
    CAPACITY_SETTINGS
        .iter()
        .filter_map(|(name, shown)| {
            let (a, b) = (shown(before), shown(after));
            (a != b).then_some((*name, a, b))
        })
        .collect()
}

impl ServerConfig {
    /// The capacity settings that differ from `before`'s, as `name a → b`
    /// (`?` where a run did not state it).
    pub fn changes_from(&self, before: &ServerConfig) -> Vec<String> {
        let q = |v: Option<String>| v.unwrap_or_else(|| "?".into());
        differing(before, self)
            .into_iter()
            .map(|(name, a, b)| format!("{name} {} → {}", q(a), q(b)))
            .collect()
    }
}
