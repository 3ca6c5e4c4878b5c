//! The server configuration found in startup lines, engine-neutral.

use serde::Serialize;

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
    /// The weights' quantization as the server was told (`fp8`, `awq`, `mxfp4`), where stated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantization: Option<String>,
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
