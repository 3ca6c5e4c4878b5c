//! vLLM's scheduler (V0 and V1), as the later stages read it.

use crate::model::profile::{
    Admission, KvMemory, Lever, Levers, PrefillLever, Profile, RaiseCap, RankRouting, TokenBudget,
};

pub const PROFILE: Profile = Profile {
    admission: Admission::NoReservation,
    eviction: ("preemption", "preempted"),
    prefill_batches_logged: false,
    pool_per_rank: false,
    reservation: None,
    guide: None,
    // vllm/v1/engine/core_client.py, DPLBAsyncMPClient.get_core_engine_for_request:
    // internal load balancing scores each engine 4 × waiting + running from stats the
    // coordinator refreshes every 100 ms; --data-parallel-hybrid-lb and
    // --data-parallel-external-lb hand the routing to a router in front
    // (docs/serving/data_parallel_deployment.md).
    ranks: Some(RankRouting {
        routing: "vLLM's API server routes each request to the engine with the lowest 4 × waiting + running (internal load balancing, the default); with --data-parallel-hybrid-lb or --data-parallel-external-lb the router in front chooses",
        balance: "route by queue length: keep vLLM's internal load balancing, or point the external router at each engine's waiting count",
        all_ranks: "drop --aggregate-engine-logging so vLLM prints each engine's `Engine 00N:` line",
    }),
    stats_lines_hint: Some("vLLM prints `Avg prompt throughput … Running: … reqs` lines every 5–10 s while serving (not with --disable-log-stats or several API servers) — make sure the log covers a period with load and INFO-level logging"),
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
        host_tier: None,
        conservativeness: None,
        tensor_parallel: Some("--tensor-parallel-size 2 (or more GPUs per replica)"),
        prefix_caching: Some("--enable-prefix-caching"),
        capacity_policy: None,
        prefill: &[
            PrefillLever::Budget {
                lever: Lever {
                    id: "batched_tokens",
                    flag: "--max-num-batched-tokens {}",
                    why: "Each step processes at most {} tokens; a larger budget admits long prompts in fewer steps",
                    effect: "",
                },
                setting: TokenBudget::MaxBatchedTokens,
                default: 8192,
            },
            PrefillLever::PrefixCaching,
            PrefillLever::Always(Lever {
                id: "chunked_prefill",
                flag: "--enable-chunked-prefill",
                why: "Interleave prompt chunks with decode steps so long prompts do not stall running requests",
                effect: "",
            }),
        ],
        decode_saturated: &[
            Lever {
                id: "quantize",
                flag: "--quantization fp8",
                why: "FP8 weights halve the bytes each decode step reads",
                effect: "",
            },
            Lever {
                id: "speculative",
                flag: r#"--speculative-config '{"method": "ngram", "num_speculative_tokens": 4}'"#,
                why: "Speculative decoding commits several tokens per step when drafts are accepted",
                effect: "",
            },
            Lever {
                id: "more_gpus",
                flag: "--data-parallel-size 2 (another replica on more GPUs)",
                why: "More GPUs per replica, or more replicas",
                effect: "",
            },
        ],
    },
};
