//! vLLM's scheduler (V0 and V1), as the later stages read it.

use crate::model::profile::{Admission, Levers, Profile};

pub const PROFILE: Profile = Profile {
    engine: "vllm",
    admission: Admission::NoReservation,
    eviction: ("preemption", "preempted"),
    prefill_batches_logged: false,
    pool_per_rank: false,
    levers: Levers {
        running_cap: "--max-num-seqs",
        running_cap_words: ("max_num_seqs", "FP8 KV cache, higher gpu_memory_utilization", "sequences"),
        client_tool: "vllm bench serve",
        fp8_kv: (
            "--kv-cache-dtype fp8",
            "An FP8 KV cache stores about twice the tokens in the same memory; check accuracy on your task",
        ),
        tensor_parallel: "--tensor-parallel-size 2 (or more GPUs per replica)",
    },
};
