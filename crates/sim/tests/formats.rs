//! The emitted lines have exactly the shapes real servers print.

mod common;
use common::*;

use batchlens_sim::{Burst, Engine, IdleGap, SimConfig};

const REAL_DECODE: &str = "[2026-05-24 03:51:45 TP0] Decode batch, #running-req: 4, #token: 2642, token usage: 1.00, cuda graph: True, gen throughput (token/s): 429.52, #queue-req: 3";
const REAL_PREFILL: &str = "[2026-07-21 15:00:13 TP0 EP0] Prefill batch, #new-seq: 8, #new-token: 54400, #cached-token: 482304, token usage: 0.66, #running-req: 16, #queue-req: 2, #pending-token: 0, npu graph: False, input throughput (token/s): 2793.64";
const REAL_V1: &str = "(APIServer pid=3646) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 1055.3 tokens/s, Running: 18 reqs, Waiting: 43 reqs, GPU KV cache usage: 95.9%, Prefix cache hit rate: 0.0%";
const REAL_V0: &str = "INFO 01-22 18:27:20 metrics.py:449] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.7 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 2.0%, CPU KV cache usage: 0.0%.";

fn small(engine: Engine) -> SimConfig {
    SimConfig {
        engine,
        num_requests: 300,
        concurrency: 48,
        kv_capacity_tokens: 60_000,
        ..Default::default()
    }
}

#[test]
fn sglang_decode_line_matches_real_shape() {
    let (lines, out) = run(&small(Engine::Sglang));
    let decodes = decode_lines(&lines);
    assert!(!decodes.is_empty());
    let real = {
        let (_, _, msg) = sgl_prefix(REAL_DECODE).unwrap();
        fields(msg.strip_prefix("Decode batch, ").unwrap())
    };
    for (ts, f) in &decodes {
        assert_eq!(ts.len(), 19);
        assert_eq!(keys(f), keys(&real), "field order");
        // #token / capacity rounds to the printed usage.
        let usage = num(f, "#token") / out.kv_capacity_tokens as f64;
        assert!((usage - num(f, "token usage")).abs() <= 0.005 + 1e-9);
        let g = &f.iter().find(|(k, _)| k == "cuda graph").unwrap().1;
        assert!(g == "True" || g == "False");
        // Two decimals on the float fields.
        let thr = &f
            .iter()
            .find(|(k, _)| k == "gen throughput (token/s)")
            .unwrap()
            .1;
        assert_eq!(thr.split('.').nth(1).map(str::len), Some(2), "{thr}");
    }
    let line = lines.iter().find(|l| l.contains("Decode batch")).unwrap();
    let (_, rank, _) = sgl_prefix(line).unwrap();
    assert_eq!(rank, "TP0");
}

#[test]
fn sglang_prefill_line_matches_real_shape() {
    let (lines, _) = run(&small(Engine::Sglang));
    let real = {
        let (_, _, msg) = sgl_prefix(REAL_PREFILL).unwrap();
        let mut k: Vec<String> = keys(&fields(msg.strip_prefix("Prefill batch, ").unwrap()))
            .into_iter()
            .map(|s| s.replace("npu graph", "cuda graph"))
            .collect();
        k.dedup();
        k
    };
    let pre = prefill_lines(&lines);
    assert!(!pre.is_empty());
    let mut seqs = 0.0;
    for (_, f) in &pre {
        let k: Vec<String> = keys(f).into_iter().map(String::from).collect();
        assert_eq!(k, real);
        assert!(num(f, "#new-token") > 0.0);
        assert!(num(f, "#new-token") <= 8192.0);
        seqs += num(f, "#new-seq");
    }
    assert!(seqs >= 300.0);
}

#[test]
fn sglang_startup_and_access_lines() {
    let cfg = small(Engine::Sglang);
    let (lines, out) = run(&cfg);
    assert!(lines[0].starts_with("[2026-02-24 10:00:00] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "));
    assert!(lines[0].contains(", chunked_prefill_size=8192, "));
    assert!(lines[0].contains(", schedule_conservativeness=1.0, "));
    assert!(lines[0].ends_with(')'));
    assert!(lines.iter().any(|l| l.ends_with(
        "TP0] KV Cache is allocated. #tokens: 60000, K size: 3.66 GB, V size: 3.66 GB"
    )));
    let cap = lines
        .iter()
        .find(|l| l.contains("max_total_num_tokens="))
        .unwrap();
    let (_, rank, msg) = sgl_prefix(cap).unwrap();
    assert_eq!(rank, "TP0");
    assert_eq!(msg, "max_total_num_tokens=60000, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=131072, available_gpu_mem=6.12 GB");
    assert!(lines
        .iter()
        .any(|l| l.ends_with("] The server is fired up and ready to roll!")));
    let access: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("INFO:     127.0.0.1:"))
        .collect();
    assert_eq!(access.len() as u64, out.completed_requests);
    let (_, rank, msg) = sgl_prefix(access[0]).unwrap();
    assert_eq!(rank, "");
    assert!(msg.starts_with("INFO:     127.0.0.1:"));
    assert!(msg.ends_with(" - \"POST /v1/chat/completions HTTP/1.1\" 200 OK"));
    assert_eq!(out.lines.total as usize, lines.len());
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    assert_eq!(out.lines.bytes as usize, bytes);
}

#[test]
fn sglang_timestamps_are_monotonic_and_ms_option() {
    let mut cfg = small(Engine::Sglang);
    let (lines, _) = run(&cfg);
    let mut last = 0;
    for l in &lines {
        let (ts, _, _) = sgl_prefix(l).unwrap();
        let s = secs(ts);
        assert!(s >= last, "{l}");
        last = s;
    }
    cfg.log_ms = true;
    cfg.rank_prefix_tp0 = false;
    let (lines, _) = run(&cfg);
    let d = lines.iter().find(|l| l.contains("Decode batch")).unwrap();
    let b = d.as_bytes();
    assert_eq!(b[20], b'.');
    assert!(b[21..24].iter().all(u8::is_ascii_digit));
    assert_eq!(&d[24..40], "] Decode batch, ");
}

#[test]
fn sglang_gen_throughput_matches_tokens() {
    // Σ gen throughput × interval over the Decode lines ≈ decode tokens.
    let cfg = SimConfig {
        decode_log_interval: 1,
        ..small(Engine::Sglang)
    };
    let (lines, out) = run(&cfg);
    let decodes = decode_lines(&lines);
    let running: f64 = decodes.iter().map(|(_, f)| num(f, "#running-req")).sum();
    assert_eq!(running as u64, out.decode_tokens);
    assert_eq!(out.lines.decode, decodes.len() as u64);
}

#[test]
fn retraction_line_shape() {
    let cfg = SimConfig::preset("retraction").unwrap();
    let cfg = SimConfig {
        duration_s: 400.0,
        ..cfg
    };
    let (lines, out) = run(&cfg);
    let r: Vec<_> = lines
        .iter()
        .filter_map(|l| sgl_prefix(l))
        .filter_map(|(_, _, m)| m.strip_prefix("KV cache pool is full. Retract requests. "))
        .collect();
    assert!(!r.is_empty());
    assert_eq!(r.len() as u64, out.retractions);
    let mut total = 0.0;
    for body in r {
        let f = fields(body);
        assert_eq!(
            keys(&f),
            ["#retracted_reqs", "#new_tokens_gained", "#new_token_ratio"]
        );
        total += num(&f, "#retracted_reqs");
        let ratio = &f[2].1;
        let (a, b) = ratio.split_once(" -> ").unwrap();
        assert_eq!(a.split('.').nth(1).unwrap().len(), 4);
        let (a, b): (f64, f64) = (a.parse().unwrap(), b.parse().unwrap());
        assert!((0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&b));
    }
    assert_eq!(total as u64, out.retracted_requests);
}

fn v1_fields(line: &str) -> Vec<(String, String)> {
    let body = line.split_once("Engine 000: ").unwrap().1;
    fields(body)
}

#[test]
fn vllm_v1_lines() {
    let cfg = SimConfig::preset("vllm_kv_bound").unwrap();
    let cfg = SimConfig {
        duration_s: 600.0,
        ..cfg
    };
    let (lines, out) = run(&cfg);
    assert!(lines.iter().any(|l| l.starts_with("(EngineCore_DP0 pid=8) INFO 02-24 10:00:30 [kv_cache_utils.py:1087] GPU KV cache size: 116,176 tokens")));
    assert!(lines
        .iter()
        .any(|l| l.ends_with("Maximum concurrency for 8,192 tokens per request: 14.18x")));
    assert!(lines.iter().any(|l| l.starts_with("(APIServer pid=7) INFO 02-24 10:00:00 [utils.py:326] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', ")));
    let stats: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("Engine 000: "))
        .collect();
    assert_eq!(stats.len() as u64, out.lines.interval);
    assert!(stats.len() > 50);
    let real_keys: Vec<String> = keys(&v1_fields(REAL_V1))
        .into_iter()
        .map(String::from)
        .collect();
    let mut with_preempt = 0;
    let mut preempt_total = 0.0;
    let mut prev_t = 0;
    for l in &stats {
        assert!(l.starts_with("(APIServer pid=7) INFO 02-24 "));
        assert_eq!(&l[37..55], " [loggers.py:271] ");
        let t = secs(&format!("2026-{}", &l[23..37]));
        if prev_t > 0 {
            assert_eq!(t - prev_t, 10, "{l}");
        }
        prev_t = t;
        let f = v1_fields(l);
        let mut k: Vec<String> = keys(&f).into_iter().map(String::from).collect();
        if let Some(i) = k.iter().position(|x| x == "Preemptions") {
            with_preempt += 1;
            preempt_total += num(&f, "Preemptions");
            k.remove(i);
        }
        assert_eq!(k, real_keys);
        assert!(num(&f, "GPU KV cache usage") <= 100.0);
    }
    assert!(with_preempt > 0);
    // Ticks that fall in the final drain are still reported; all preemptions appear.
    assert_eq!(preempt_total as u64, out.preemptions);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("(APIServer pid=7) INFO:     127.0.0.1:")));
}

#[test]
fn vllm_v0_lines() {
    let cfg = SimConfig::preset("vllm_v0_kv_bound").unwrap();
    let (lines, out) = run(&SimConfig {
        duration_s: 900.0,
        ..cfg
    });
    let real_keys: Vec<String> = {
        let body = REAL_V0.split_once("] ").unwrap().1;
        keys(&fields(body.trim_end_matches('.')))
            .into_iter()
            .map(String::from)
            .collect()
    };
    let stats: Vec<_> = lines
        .iter()
        .filter(|l| l.contains(" metrics.py:449] "))
        .collect();
    assert!(stats.len() > 100);
    for l in &stats {
        assert!(l.starts_with("INFO 02-24 "));
        assert!(l.ends_with("%."));
        let body = l.split_once("] ").unwrap().1.trim_end_matches('.');
        let k: Vec<String> = keys(&fields(body)).into_iter().map(String::from).collect();
        assert_eq!(k, real_keys);
    }
    let warns: Vec<_> = lines.iter().filter(|l| l.starts_with("WARNING ")).collect();
    assert!(out.preemptions > 50);
    assert_eq!(warns.len() as u64, (out.preemptions - 1) / 50 + 1);
    assert!(warns[0].ends_with("total_num_cumulative_preemption=1"));
    assert!(warns[0].contains(" is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "));
    if warns.len() > 1 {
        assert!(warns[1].ends_with("total_num_cumulative_preemption=51"));
    }
    assert!(lines
        .iter()
        .any(|l| l.contains("# GPU blocks: 7261, # CPU blocks: 2048")));
}

#[test]
fn bench_summary_block() {
    let cfg = SimConfig {
        bench_summary: true,
        ..small(Engine::Sglang)
    };
    let (lines, out) = run(&cfg);
    let start = lines
        .iter()
        .position(|l| l == "============ Serving Benchmark Result ============")
        .unwrap();
    assert_eq!(lines.last().unwrap(), &"=".repeat(50));
    let row = |label: &str| -> String {
        lines[start..]
            .iter()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("{label}"))
            .clone()
    };
    let v = row("Successful requests:");
    assert_eq!(v.len(), 51);
    assert_eq!(v[41..].trim(), out.completed_requests.to_string());
    let tput: f64 = row("Output token throughput (tok/s):")[41..]
        .trim()
        .parse()
        .unwrap();
    assert!((tput - out.client_output_tok_s).abs() < 0.01);
    assert!(lines
        .iter()
        .any(|l| l == "----------------End-to-End Latency----------------"));
}

#[test]
fn dp_ranks_have_their_own_prefix() {
    let cfg = SimConfig {
        dp_size: 2,
        ..small(Engine::Sglang)
    };
    let (lines, out) = run(&cfg);
    let ranks: std::collections::BTreeSet<_> = lines
        .iter()
        .filter(|l| l.contains("Decode batch"))
        .map(|l| sgl_prefix(l).unwrap().1.to_string())
        .collect();
    assert_eq!(
        ranks.into_iter().collect::<Vec<_>>(),
        ["DP0 TP0", "DP1 TP1"]
    );
    assert_eq!(out.completed_requests, 300);
}

#[test]
fn idle_gap_and_bursts() {
    let cfg = SimConfig {
        concurrency: 4,
        num_requests: 0,
        duration_s: 300.0,
        idle_gaps: vec![IdleGap {
            start_s: 100.0,
            end_s: 200.0,
        }],
        bursts: vec![Burst {
            at_s: 250.0,
            count: 40,
        }],
        kv_capacity_tokens: 300_000,
        ..Default::default()
    };
    let (lines, out) = run(&cfg);
    assert!(out.idle_s > 60.0, "{}", out.idle_s);
    // No decode lines in the quiet part of the gap (after the drain, before the end).
    let base = secs("2026-02-24 10:01:00");
    for (ts, _) in decode_lines(&lines) {
        let t = secs(&ts) - base;
        assert!(!(140..199).contains(&t), "decode at {t}");
    }
    // The burst shows as a queue or a large prefill.
    let burst_seen = prefill_lines(&lines).iter().any(|(ts, f)| {
        let t = secs(ts) - base;
        (250..=260).contains(&t) && num(f, "#new-seq") + num(f, "#queue-req") >= 10.0
    });
    assert!(burst_seen);
}

/// `trtllm-serve`'s iteration log (the 2026 shape the formats notes quote),
/// one line an iteration, with its startup capacities; admission under
/// GUARANTEED_NO_EVICT never overflows the pool, so nothing is preempted.
#[test]
fn trtllm_iteration_lines() {
    const REAL: &str = "[08/04/2026-19:08:13] [TRT-LLM] [I] iter = 5120, global_rank = 0, rank = 0, num_scheduled_requests = 62, kv_cache_util = 0.014, currank_total_requests = 128/1024, host_step_time = 291.3ms, prev_device_step_time = 289.8ms, timestamp = 2026-08-04 19:08:13, states = {'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 248}, num_active = 70, num_fetched = 0, num_dummy = 0, num_unscheduled = 8";
    let names = |l: &str| -> Vec<String> {
        let l = &l[l.find("iter = ").unwrap()..];
        let (head, rest) = l.split_once("states = {").unwrap();
        let tail = rest.split_once('}').unwrap().1;
        head.split(", ")
            .chain(tail.split(", "))
            .filter_map(|p| p.split_once(" = ").map(|(k, _)| k.to_string()))
            .collect()
    };
    let (lines, out) = run(&small(Engine::Trtllm));
    let iters: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("] [TRT-LLM] [I] iter = "))
        .collect();
    assert_eq!(iters.len() as u64, out.lines.interval);
    assert!(iters.len() > 1000, "{}", iters.len());
    for (i, l) in iters.iter().enumerate() {
        assert_eq!(names(l), names(REAL), "{l}");
        assert!(l.starts_with("[02/24/2026-"), "{l}");
        assert!(l.contains(&format!("iter = {i}, ")), "{l}");
        let util: f64 = l.split("kv_cache_util = ").nth(1).unwrap()[..5]
            .parse()
            .unwrap();
        assert!((0.0..=1.0).contains(&util), "{l}");
    }
    assert_eq!(out.preemptions, 0);
    assert!(lines.iter().any(|l| l
        .starts_with("[TensorRT-LLM][INFO] Max KV cache blocks per sequence: ")
        && l.contains(&format!("primary blocks={}", out.kv_capacity_tokens / 16))));
    assert!(lines
        .iter()
        .any(|l| l.contains("] [TRT-LLM] [I] max_seq_len=")));
    assert!(lines.iter().any(|l| l.starts_with("INFO:     127.0.0.1:")));
}

#[test]
fn sglang_gen_throughput_counts_prefill_time() {
    // SGLang rates a Decode line's tokens over the wall time since the previous one, so
    // prefill batches in between lower it: with long prompts it sits well under the
    // decode-only rate (running ÷ step) and on the run's real decode-token rate.
    let cfg = SimConfig {
        kv_capacity_tokens: 1_000_000,
        concurrency: 24,
        num_requests: 0,
        duration_s: 400.0,
        prompt_len: batchlens_sim::LenDist::Uniform {
            min: 6000,
            max: 8000,
        },
        output_len: batchlens_sim::LenDist::Uniform { min: 60, max: 120 },
        max_new_tokens: 256,
        ..small(Engine::Sglang)
    };
    let (lines, out) = run(&cfg);
    assert!(
        out.prefill_s > 0.5 * (out.prefill_s + out.decode_s),
        "{out:?}"
    );
    let base = secs("2026-02-24 10:01:00");
    let steady: Vec<_> = decode_lines(&lines)
        .into_iter()
        .filter(|(ts, _)| {
            let t = (secs(ts) - base) as f64;
            t >= out.steady_start_s + 30.0 && t <= out.steady_end_s
        })
        .map(|x| x.1)
        .collect();
    assert!(steady.len() > 20);
    let mean = |k: &str| steady.iter().map(|f| num(f, k)).sum::<f64>() / steady.len() as f64;
    let thr = mean("gen throughput (token/s)");
    let n = mean("#running-req");
    let kv = mean("#token");
    let decode_only = n / (cfg.step_a + cfg.step_b * n + cfg.step_c * kv);
    assert!(thr < 0.7 * decode_only, "{thr} vs {decode_only}");
    assert!(
        (thr / out.steady_gen_tok_s - 1.0).abs() < 0.25,
        "{thr} vs {}",
        out.steady_gen_tok_s
    );
}
