//! SGLang's scheduler, as the later stages read it.

use crate::model::profile::{Admission, Levers, Profile};

pub const PROFILE: Profile = Profile {
    engine: "sglang",
    admission: Admission::ReservesFutureTokens,
    eviction: ("retraction", "retracted"),
    prefill_batches_logged: true,
    pool_per_rank: true,
    levers: Levers {
        running_cap: "--max-running-requests",
        running_cap_words: ("max_running_requests", "FP8 KV cache, higher mem_fraction_static", "requests"),
        client_tool: "bench_serving",
        fp8_kv: (
            "--kv-cache-dtype fp8_e4m3",
            "An FP8 KV cache stores about twice the tokens in the same memory. Check accuracy on your task, and use an attention backend with fused FP8 support or decode slows down",
        ),
        tensor_parallel: "--tp-size 2 (or more GPUs per replica)",
    },
};
