//! SGLang's scheduler, as the later stages read it.

use crate::model::profile::{Admission, KvMemory, Lever, Levers, Profile, RaiseCap};

pub const PROFILE: Profile = Profile {
    engine: "sglang",
    admission: Admission::ReservesFutureTokens,
    eviction: ("retraction", "retracted"),
    prefill_batches_logged: true,
    pool_per_rank: true,
    levers: Levers {
        running_cap: "--max-running-requests",
        raise_cap: RaiseCap {
            kv_tight: "The cap stops admission, but the KV pool is nearly full too: a higher cap admits only what the pool can hold, so grow the pool with it (FP8 KV cache, more memory)",
            speculative: Some("Speculative decoding lowers the default max_running_requests (e.g. 32 for EAGLE); with KV to spare, a higher cap lets more requests decode at once"),
            room: "The cap, not memory, stops admission; the KV pool has room for more running requests",
        },
        // CUDA graphs are captured up to a batch size of their own.
        with_cap: Some(Lever {
            id: "cuda_graph_bs",
            flag: "--cuda-graph-max-bs {}",
            why: "Keep CUDA graphs covering the larger batch, or decode steps above the captured size run eagerly and slower",
            effect: "",
        }),
        client_tool: "bench_serving",
        fp8_kv: (
            "--kv-cache-dtype fp8_e4m3",
            "An FP8 KV cache stores about twice the tokens in the same memory. Check accuracy on your task, and use an attention backend with fused FP8 support or decode slows down",
        ),
        // `available_gpu_mem` in the startup line is what the pool leaves; the
        // tuning guide steps the fraction by 0.01 when little is left.
        kv_memory: KvMemory::StaticFraction {
            flag: "--mem-fraction-static",
            name: "mem_fraction_static",
            left: "available_gpu_mem",
            default: 0.90,
            step: 0.04,
            small_step: 0.01,
            most: 0.95,
        },
    },
};
