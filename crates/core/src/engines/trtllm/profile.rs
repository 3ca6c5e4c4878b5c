//! TensorRT-LLM's scheduler (the PyTorch backend's `trtllm-serve`), as the later stages read it.

use crate::model::profile::{
    Admission, CapacityPolicy, FreeShare, HostTier, KvMemory, Lever, Levers, PrefillLever, Profile,
    RaiseCap, ShareOfFree, TierSize, TokenBudget,
};

pub const PROFILE: Profile = Profile {
    admission: Admission::ReservesWholeRequest,
    // Its scheduler pauses requests to free blocks (MAX_UTILIZATION only).
    eviction: ("pause", "paused"),
    prefill_batches_logged: false,
    pool_per_rank: false,
    reservation: Some("TensorRT-LLM's default policy (GUARANTEED_NO_EVICT) admits a request only if the pool can hold its prompt and all of its max_tokens, so the pool is full once reservations are counted"),
    guide: None,
    ranks: None,
    stats_lines_hint: None,
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
        host_tier: Some(HostTier {
            lever: Lever {
                id: "host_kv_cache",
                flag: "kv_cache_config.host_cache_size: {} (in the YAML of --extra_llm_api_options)",
                why: "A host-memory tier behind the GPU blocks (in bytes) keeps reusable blocks of evicted prefixes in CPU RAM instead of dropping them; it helps most when prompts share prefixes",
                effect: "more block reuse and shorter prefills; the GPU pool for running requests stays the same size",
            },
            // A YAML integer.
            size: TierSize::Bytes,
        }),
        conservativeness: None,
        tensor_parallel: Some("--tp_size 2 (or more GPUs per replica)"),
        // Blocks are reused across requests by default.
        prefix_caching: None,
        capacity_policy: Some(CapacityPolicy {
            admit_on_blocks: Lever {
                id: "capacity_scheduler_policy",
                flag: "scheduler_config.capacity_scheduler_policy: MAX_UTILIZATION (in the YAML of --extra_llm_api_options)",
                why: "Admit as many requests as the blocks in use allow instead of reserving every request's whole length; if outputs then outgrow the pool, requests are paused and resumed",
                effect: "risk: paused requests if outputs run long",
            },
            reserve_whole: Lever {
                id: "capacity_scheduler_policy",
                flag: "scheduler_config.capacity_scheduler_policy: GUARANTEED_NO_EVICT (in the YAML of --extra_llm_api_options)",
                why: "Paused requests come from the MAX_UTILIZATION policy, which admits against the blocks in use and pauses requests when outputs outgrow the pool; the default policy reserves each request's whole length before admitting it, so none is paused and recomputed",
                effect: "no pauses; fewer requests running at once (set max_tokens on requests to keep reservations small)",
            },
        }),
        prefill: &[
            // Prefill busy, not held back: a larger budget only makes its iterations longer.
            PrefillLever::MoreCompute(Lever {
                id: "more_replicas",
                flag: "another replica behind the load balancer (or disaggregated serving: context and generation servers apart)",
                why: "Iterations that prefill take {} of the time: the GPU is busy with prompts, so more prefill compute, not more room for requests, raises throughput",
                effect: "throughput up about in proportion to the prefill compute added",
            }),
            PrefillLever::Budget {
                lever: Lever {
                    id: "batched_tokens",
                    flag: "--max_num_tokens {}",
                    why: "Each iteration schedules at most {} tokens; a larger budget admits long prompts in fewer iterations",
                    effect: "",
                },
                setting: TokenBudget::MaxBatchedTokens,
                default: 8192,
            },
            PrefillLever::Always(Lever {
                id: "chunked_prefill",
                flag: "--enable_chunked_prefill",
                why: "Split long prompts into chunks that run beside decode steps, so they neither stall running requests nor wait for a whole-prompt budget",
                effect: "",
            }),
        ],
        decode_saturated: &[
            Lever {
                id: "quantize",
                flag: "model: an FP8 checkpoint (e.g. quantized with NVIDIA Model Optimizer)",
                why: "Decode reads every weight each step; FP8 weights halve the bytes per step, and TensorRT-LLM takes the quantization from the checkpoint",
                effect: "",
            },
            Lever {
                id: "speculative",
                flag: "speculative_config.decoding_type: Eagle (in the YAML of --extra_llm_api_options, with a draft model)",
                why: "Speculative decoding commits several tokens per step when drafts are accepted",
                effect: "",
            },
            Lever {
                id: "more_gpus",
                flag: "--tp_size 2 (or more replicas)",
                why: "More GPUs per replica, or more replicas",
                effect: "",
            },
        ],
    },
};
