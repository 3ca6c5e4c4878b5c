//! SGLang's scheduler, as the later stages read it.

use crate::model::profile::{
    Admission, Conservativeness, Guide, HostTier, KvMemory, Lever, Levers, PrefillLever, Profile,
    RaiseCap, RankRouting, TierSize, TokenBudget,
};

pub const PROFILE: Profile = Profile {
    admission: Admission::ReservesFutureTokens,
    eviction: ("retraction", "retracted"),
    prefill_batches_logged: true,
    pool_per_rank: true,
    reservation: Some("SGLang admits a request only if the pool can also hold the future tokens it reserves for running requests (new_token_ratio × remaining max_new_tokens), so the pool is full once reservations are counted"),
    guide: Some(Guide {
        few_evictions: "SGLang's tuning guide: about one retraction per minute is acceptable; more means admission is too optimistic",
        few_evictions_headline: "fewer than the one a minute SGLang's tuning guide calls fine",
        empty_queue: "SGLang's tuning guide: #queue-req near 0 means the client submits too slowly; a healthy queue is 100–2000",
        keep_doubling: "and keep doubling the concurrency while throughput rises (SGLang's guide: a healthy queue holds 100–2000 waiting)",
    }),
    // sglang/srt/server_args.py: `load_balance_method: str = "round_robin"`; the
    // DP controller (managers/data_parallel_controller.py) also offers
    // shortest_queue and minimum_tokens (PR #7379), and follow_bootstrap_room under PD.
    ranks: Some(RankRouting {
        routing: "SGLang's DP controller routes requests with --load-balance-method: round_robin by default, which ignores each rank's queue; shortest_queue and minimum_tokens follow the ranks' load",
        balance: "--load-balance-method minimum_tokens",
        all_ranks: "start SGLang with --enable-metrics-for-all-schedulers so every DP rank prints its own lines",
    }),
    stats_lines_hint: None,
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
        host_tier: Some(HostTier {
            lever: Lever {
                id: "hierarchical_cache",
                flag: "--enable-hierarchical-cache --hicache-size {}",
                why: "A host-memory tier behind the GPU pool keeps evicted prefixes (system prompts, earlier turns) in CPU RAM and loads them back instead of recomputing; it helps most when prompts share prefixes",
                effect: "more prefix-cache hits and shorter prefills; the GPU pool for running requests stays the same size",
            },
            size: TierSize::Gigabytes,
        }),
        conservativeness: Some(Conservativeness {
            default: 1.0,
            lower: Lever {
                id: "schedule_conservativeness",
                flag: "--schedule-conservativeness {}",
                why: "The pool looks full only because of what SGLang reserves for future tokens. A lower conservativeness reserves less and admits more requests; if they then outgrow the pool, requests are retracted (about one retraction per minute is fine)",
                effect: "risk: retractions if outputs run long",
            },
            raise: Lever {
                id: "schedule_conservativeness",
                flag: "--schedule-conservativeness {}",
                why: "Reserve more room for running requests' future tokens before admitting new ones, so the pool stops overflowing",
                effect: "fewer retractions; slightly fewer requests running at once",
            },
        }),
        // For the pool, the host tier and the reservations come first.
        tensor_parallel: None,
        // The radix cache shares prefixes by default.
        prefix_caching: None,
        capacity_policy: None,
        prefill: &[
            PrefillLever::Budget {
                lever: Lever {
                    id: "chunked_prefill",
                    flag: "--chunked-prefill-size {}",
                    why: "Each prefill batch takes at most {} tokens; larger chunks admit waiting requests faster when memory allows (smaller ones if prefill runs out of memory)",
                    effect: "faster admission of long prompts",
                },
                setting: TokenBudget::ChunkedPrefillSize,
                default: 8192,
            },
            PrefillLever::Always(Lever {
                id: "mixed_chunk",
                flag: "--enable-mixed-chunk",
                why: "Run prefill chunks together with decode steps, so running requests keep generating while new ones are admitted",
                effect: "",
            }),
            PrefillLever::SharedPrefixes(Lever {
                id: "lpm",
                flag: "--schedule-policy lpm",
                why: "Prompts share prefixes (the log shows cached tokens): longest-prefix-match scheduling raises cache hits and skips recomputation",
                effect: "",
            }),
            PrefillLever::Always(Lever {
                id: "more_replicas",
                flag: "--dp-size 2 (or prefill/decode disaggregation: --disaggregation-mode prefill|decode)",
                why: "More prefill compute: data-parallel replicas, or dedicated prefill servers",
                effect: "",
            }),
        ],
        decode_saturated: &[
            Lever {
                id: "quantize",
                flag: "--quantization fp8",
                why: "Decode reads every weight each step; FP8 weights halve the bytes per step",
                effect: "",
            },
            Lever {
                id: "speculative",
                flag: "--speculative-algorithm EAGLE (with a draft model)",
                why: "Speculative decoding commits several tokens per step when the draft is accepted",
                effect: "",
            },
            Lever {
                id: "more_gpus",
                flag: "--dp-size 2 (another replica on more GPUs)",
                why: "More GPUs per replica, or more replicas",
                effect: "",
            },
        ],
    },
};
