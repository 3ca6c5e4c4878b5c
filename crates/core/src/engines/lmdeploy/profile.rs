//! LMDeploy's TurboMind/PyTorch scheduler, as the later stages read it.

use crate::model::profile::{
    Admission, FreeShare, KvMemory, Levers, Profile, RaiseCap, ShareOfFree,
};

pub const PROFILE: Profile = Profile {
    engine: "lmdeploy",
    admission: Admission::NoReservation,
    eviction: ("preemption", "preempted"),
    prefill_batches_logged: false,
    pool_per_rank: false,
    levers: Levers {
        running_cap: "--max-batch-size",
        raise_cap: RaiseCap {
            kv_tight: "max_batch_size caps the batch, but the KV cache is nearly full too: grow it with the cap (int8 KV cache, higher cache_max_entry_count)",
            speculative: None,
            room: "max_batch_size caps the batch; the KV cache has room for more requests",
        },
        with_cap: None,
        client_tool: "a serving benchmark's",
        fp8_kv: (
            "--quant-policy 8",
            "An int8 KV cache stores about twice the tokens in the same memory (--quant-policy 4, int4, four times with more accuracy loss); check accuracy on your task",
        ),
        kv_memory: KvMemory::ShareOfFree(ShareOfFree {
            flag: "--cache-max-entry-count",
            name: "cache_max_entry_count",
            setting: FreeShare::CacheMaxEntryCount,
            default: 0.8,
            step: 0.1,
            most: 0.95,
            after: "left after the weights",
        }),
    },
};
