//! TensorRT-LLM's scheduler (the PyTorch backend's `trtllm-serve`), as the later stages read it.

use crate::model::profile::{Admission, Levers, Profile};

pub const PROFILE: Profile = Profile {
    engine: "trtllm",
    admission: Admission::ReservesWholeRequest,
    // Its scheduler pauses requests to free blocks (MAX_UTILIZATION only).
    eviction: ("pause", "paused"),
    prefill_batches_logged: false,
    pool_per_rank: false,
    levers: Levers {
        running_cap: "--max_batch_size",
        running_cap_words: ("max_batch_size", "FP8 KV cache, higher free_gpu_memory_fraction", "requests"),
        client_tool: "a serving benchmark's",
        fp8_kv: (
            "kv_cache_config.dtype: fp8 (in the YAML of --extra_llm_api_options)",
            "An FP8 KV cache stores about twice the tokens in the same memory; check accuracy on your task",
        ),
        tensor_parallel: "--tp_size 2 (or more GPUs per replica)",
    },
};
