//! Startup lines' settings folded into the run's configuration.

use crate::model::ConfigItem;
use crate::report::ServerConfig;

const MAX_CONFIG_LINES: usize = 16;

impl ServerConfig {
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
                Quantization(v) => self.quantization = Some(v),
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
