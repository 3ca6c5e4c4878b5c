//! LMDeploy's TurboMind/PyTorch scheduler, as the later stages read it.

use crate::model::profile::{
    Admission, FreeShare, KvMemory, Lever, Levers, PrefillLever, Profile, RaiseCap, ShareOfFree,
    TokenBudget,
};

pub const PROFILE: Profile = Profile {
    admission: Admission::NoReservation,
    eviction: ("preemption", "preempted"),
    prefill_batches_logged: false,
    pool_per_rank: false,
    reservation: None,
    guide: None,
    ranks: None,
    stats_lines_hint: None,
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
        host_tier: None,
        conservativeness: None,
        tensor_parallel: Some("--tp 2 (or more GPUs per replica)"),
        prefix_caching: Some("--enable-prefix-caching"),
        capacity_policy: None,
        prefill: &[
            PrefillLever::Budget {
                lever: Lever {
                    id: "prefill_tokens",
                    flag: "--max-prefill-token-num {}",
                    why: "Each prefill step takes at most {} tokens; a larger budget admits long prompts in fewer steps",
                    effect: "",
                },
                setting: TokenBudget::MaxPrefillTokens,
                default: 8192,
            },
            PrefillLever::PrefixCaching,
        ],
        decode_saturated: &[
            Lever {
                id: "quantize",
                flag: "--model-format awq (a 4-bit AWQ model, e.g. from lmdeploy lite auto_awq)",
                why: "Decode reads every weight each step; 4-bit weights read a quarter of the bytes",
                effect: "",
            },
            Lever {
                id: "more_gpus",
                flag: "--dp 2 (another replica on more GPUs)",
                why: "More GPUs per replica, or more replicas",
                effect: "",
            },
        ],
    },
};
