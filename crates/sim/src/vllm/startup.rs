//! The startup lines a vLLM server prints before serving: version, arguments,
//! engine config, KV cache size.

use core::fmt::Write;

use crate::out::{commas, Kind};
use crate::{Engine, Shared};

/// `trtllm-serve`'s lines that state its capacities: the executor's settings and
/// the C++ KV cache manager's pool.
fn trtllm_startup(sh: &mut Shared, cap: u64) {
    let c = sh.cfg;
    let t0 = -c.startup_s.max(0.0);
    let bs = c.block_size.max(1) as u64;
    let blocks = cap / bs;
    let gib = cap as f64 * 32.0 * 8.0 * 128.0 * 2.0 * 2.0 / (1u64 << 30) as f64;
    let b = sh.out.trtllm(t0);
    let _ = write!(
        b,
        "max_seq_len={}, max_num_requests={}, max_num_tokens={}, max_batch_size={}",
        c.context_len, c.max_running_requests, c.chunked_prefill_size, c.max_running_requests
    );
    sh.out.flush(Kind::Other);
    for msg in [
        format!("[TensorRT-LLM][INFO] Number of tokens per block: {bs}."),
        format!(
            "[TensorRT-LLM][INFO] [MemUsageChange] Allocated {gib:.2} GiB for max tokens in paged KV cache ({cap})."
        ),
        format!(
            "[TensorRT-LLM][INFO] Max KV cache blocks per sequence: {} [window size={}], tokens per block={bs}, primary blocks={blocks}, secondary blocks=0",
            (c.context_len as u64).div_ceil(bs),
            c.context_len
        ),
    ] {
        let b = sh.out.bare("", 0);
        b.push_str(&msg);
        sh.out.flush(Kind::Other);
    }
}

pub(super) fn startup(sh: &mut Shared, cap: u64) {
    let c = sh.cfg;
    if c.engine == Engine::Trtllm {
        trtllm_startup(sh, cap);
        return;
    }
    let t0 = -c.startup_s.max(0.0);
    let at = |f: f64| t0 + (-t0) * f;
    let m = &c.model_path;
    let ctx = c.context_len;
    let conc = cap as f64 / ctx.max(1) as f64;
    let kv_gib = cap as f64 * 32.0 * 8.0 * 128.0 * 2.0 * 2.0 / (1u64 << 30) as f64;
    if c.engine == Engine::VllmV1 {
        let (api, eng) = (c.api_pid, c.engine_pid);
        let lines: [(f64, &str, u32, &str, String); 9] = [
            (at(0.0), "APIServer", api, "api_server.py:1896", "vLLM API server version 0.11.0".into()),
            (
                at(0.0),
                "APIServer",
                api,
                "utils.py:326",
                format!(
                    "non-default args: {{'model_tag': '{m}', 'max_model_len': {ctx}, 'max_num_seqs': {}, \
                     'max_num_batched_tokens': {}, 'gpu_memory_utilization': 0.9}}",
                    c.max_running_requests, c.chunked_prefill_size
                ),
            ),
            (
                at(0.1),
                "EngineCore_DP0",
                eng,
                "core.py:77",
                format!(
                    "Initializing a V1 LLM engine (v0.11.0) with config: model='{m}', \
                     speculative_config=None, tokenizer='{m}', dtype=torch.bfloat16, \
                     max_seq_len={ctx}, tensor_parallel_size={}, kv_cache_dtype=auto, \
                     enable_prefix_caching=True, enable_chunked_prefill=True",
                    c.tp_size.max(1)
                ),
            ),
            (
                at(0.3),
                "EngineCore_DP0",
                eng,
                "gpu_model_runner.py:2653",
                "Model loading took 14.99 GiB and 5.12 seconds".into(),
            ),
            (
                at(0.5),
                "EngineCore_DP0",
                eng,
                "gpu_worker.py:298",
                format!("Available KV cache memory: {kv_gib:.2} GiB"),
            ),
            (
                at(0.5),
                "EngineCore_DP0",
                eng,
                "kv_cache_utils.py:1087",
                format!("GPU KV cache size: {} tokens", commas(cap)),
            ),
            (
                at(0.5),
                "EngineCore_DP0",
                eng,
                "kv_cache_utils.py:1091",
                format!(
                    "Maximum concurrency for {} tokens per request: {conc:.2}x",
                    commas(ctx as u64)
                ),
            ),
            (
                at(0.9),
                "EngineCore_DP0",
                eng,
                "core.py:218",
                "init engine (profile, create kv cache, warmup model) took 35.12 seconds".into(),
            ),
            (
                at(0.95),
                "APIServer",
                api,
                "api_server.py:1971",
                "Starting vLLM API server 0 on http://0.0.0.0:8000".into(),
            ),
        ];
        for (t, p, pid, file, msg) in lines {
            let b = sh.out.vllm(t, p, pid, "INFO", file, true);
            b.push_str(&msg);
            sh.out.flush(Kind::Other);
        }
        for msg in [
            format!("INFO:     Started server process [{api}]"),
            "INFO:     Waiting for application startup.".to_string(),
            "INFO:     Application startup complete.".to_string(),
        ] {
            let b = sh.out.bare("APIServer", api);
            b.push_str(&msg);
            sh.out.flush(Kind::Other);
        }
    } else {
        let blocks = cap / c.block_size.max(1) as u64;
        let lines: [(f64, &str, String); 4] = [
            (
                at(0.0),
                "api_server.py:712",
                "vLLM API server version 0.6.6".into(),
            ),
            (
                at(0.0),
                "api_server.py:713",
                format!(
                    "args: Namespace(host=None, port=8000, model='{m}', max_model_len={ctx}, \
                     gpu_memory_utilization=0.9, max_num_seqs={}, max_num_batched_tokens=None, \
                     enable_chunked_prefill=False, disable_log_stats=False)",
                    c.max_running_requests
                ),
            ),
            (
                at(0.5),
                "gpu_executor.py:122",
                format!("# GPU blocks: {blocks}, # CPU blocks: 2048"),
            ),
            (
                at(0.5),
                "gpu_executor.py:126",
                format!("Maximum concurrency for {ctx} tokens per request: {conc:.2}x"),
            ),
        ];
        for (t, file, msg) in lines {
            let b = sh.out.vllm(t, "", 0, "INFO", file, false);
            b.push_str(&msg);
            sh.out.flush(Kind::Other);
        }
        for msg in [
            format!("INFO:     Started server process [{}]", c.api_pid),
            "INFO:     Waiting for application startup.".to_string(),
            "INFO:     Application startup complete.".to_string(),
        ] {
            let b = sh.out.bare("", 0);
            b.push_str(&msg);
            sh.out.flush(Kind::Other);
        }
    }
}
