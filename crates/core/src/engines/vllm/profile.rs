//! vLLM's scheduler (V0 and V1), as the later stages read it.

use crate::model::profile::{Admission, KvMemory, Levers, Profile, RaiseCap};

pub const PROFILE: Profile = Profile {
    engine: "vllm",
    admission: Admission::NoReservation,
    eviction: ("preemption", "preempted"),
    prefill_batches_logged: false,
    pool_per_rank: false,
    levers: Levers {
        running_cap: "--max-num-seqs",
        raise_cap: RaiseCap {
            kv_tight: "max_num_seqs caps the batch, but the KV cache is nearly full too: grow it with the cap (FP8 KV cache, higher gpu_memory_utilization)",
            speculative: None,
            room: "max_num_seqs caps the batch; the KV cache has room for more sequences",
        },
        with_cap: None,
        client_tool: "vllm bench serve",
        fp8_kv: (
            "--kv-cache-dtype fp8",
            "An FP8 KV cache stores about twice the tokens in the same memory; check accuracy on your task",
        ),
        kv_memory: KvMemory::WholeGpuFraction {
            flag: "--gpu-memory-utilization",
            name: "gpu_memory_utilization",
            default: 0.9,
            step: 0.05,
            most: 0.97,
        },
    },
};
