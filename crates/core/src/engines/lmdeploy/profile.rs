//! LMDeploy's TurboMind/PyTorch scheduler, as the later stages read it.

use crate::model::profile::{Admission, Levers, Profile};

pub const PROFILE: Profile = Profile {
    engine: "lmdeploy",
    admission: Admission::NoReservation,
    eviction: ("preemption", "preempted"),
    prefill_batches_logged: false,
    pool_per_rank: false,
    levers: Levers {
        running_cap: "--max-batch-size",
        running_cap_words: ("max_batch_size", "int8 KV cache, higher cache_max_entry_count", "requests"),
        client_tool: "a serving benchmark's",
        fp8_kv: (
            "--quant-policy 8",
            "An int8 KV cache stores about twice the tokens in the same memory (--quant-policy 4, int4, four times with more accuracy loss); check accuracy on your task",
        ),
        tensor_parallel: "--tp 2 (or more GPUs per replica)",
    },
};
