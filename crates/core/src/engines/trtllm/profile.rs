//! TensorRT-LLM's scheduler (the PyTorch backend's `trtllm-serve`), as the later stages read it.

use crate::model::profile::{
    Admission, FreeShare, KvMemory, Levers, Profile, RaiseCap, ShareOfFree,
};

pub const PROFILE: Profile = Profile {
    engine: "trtllm",
    admission: Admission::ReservesWholeRequest,
    // Its scheduler pauses requests to free blocks (MAX_UTILIZATION only).
    eviction: ("pause", "paused"),
    prefill_batches_logged: false,
    pool_per_rank: false,
    levers: Levers {
        running_cap: "--max_batch_size",
        raise_cap: RaiseCap {
            kv_tight: "max_batch_size caps the batch, but the KV cache is nearly full too: grow it with the cap (FP8 KV cache, higher free_gpu_memory_fraction)",
            speculative: None,
            room: "max_batch_size caps the batch; the KV cache has room for more requests",
        },
        with_cap: None,
        client_tool: "a serving benchmark's",
        fp8_kv: (
            "kv_cache_config.dtype: fp8 (in the YAML of --extra_llm_api_options)",
            "An FP8 KV cache stores about twice the tokens in the same memory; check accuracy on your task",
        ),
        kv_memory: KvMemory::ShareOfFree(ShareOfFree {
            flag: "--kv_cache_free_gpu_memory_fraction",
            name: "free_gpu_memory_fraction",
            setting: FreeShare::KvFreeGpuMemoryFraction,
            default: 0.9,
            step: 0.05,
            most: 0.97,
            after: "free after the weights and the activations measured at startup",
        }),
    },
};
