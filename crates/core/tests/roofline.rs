//! The roofline against figures computed by hand from the models' published
//! shapes and the GPUs' datasheets, and against a simulated server whose decode
//! step time is set from the bytes it reads at a given bandwidth.

// The simulation check prints its figures (the library prints nothing).
#![allow(clippy::disallowed_macros)]

use batchlens_core::report::Roofline;
use batchlens_core::{Analyzer, ModelChoice, Options, Report, RooflineChoice};
use batchlens_sim::{simulate, LenDist, SimConfig};

mod common;

fn analyze(log: &str, choice: RooflineChoice) -> Report {
    let mut a = Analyzer::new(Options {
        roofline: choice,
        ..Options::default()
    });
    a.feed(log.as_bytes());
    a.finish()
}

fn choice(gpu: &str, model: Option<&str>) -> RooflineChoice {
    RooflineChoice {
        gpu: Some(gpu.into()),
        model: model.map(|m| ModelChoice::Name(m.into())),
        ..RooflineChoice::default()
    }
}

/// An SGLang log: startup lines naming the model and TP size, then `lines`
/// decode lines 4 s apart at a steady batch, context and rate.
fn sglang_log(
    model: &str,
    tp: u32,
    pool: u64,
    running: u32,
    tokens: u64,
    gen: f64,
    graph: bool,
) -> String {
    let mut s = format!(
        "[2026-02-24 10:00:00] server_args=ServerArgs(model_path='{model}', kv_cache_dtype='auto', quantization=None, tp_size={tp}, dp_size=1, cuda_graph_max_bs=160)\n\
         [2026-02-24 10:00:33 TP0] max_total_num_tokens={pool}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=131072, available_gpu_mem=6.12 GB\n"
    );
    let usage = tokens as f64 / pool as f64;
    for i in 0..60 {
        let (m, sec) = (1 + i * 4 / 60, i * 4 % 60);
        s += &format!(
            "[2026-02-24 10:{m:02}:{sec:02} TP0] Decode batch, #running-req: {running}, #token: {tokens}, token usage: {usage:.2}, cuda graph: {}, gen throughput (token/s): {gen:.2}, #queue-req: 0\n",
            if graph { "True" } else { "False" }
        );
    }
    s
}

fn roof(r: &Report) -> &Roofline {
    r.roofline
        .as_ref()
        .expect("a roofline with a GPU and a model")
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs()
}

/// Llama-3.1-8B: 32 layers of attention (2·4096² + 2·4096·1024) and a gated
/// MLP (3·4096·14336) plus norms, and two 128256 × 4096 embeddings: 8.03 B
/// parameters, 16.06 GB in BF16; a decode step reads all but the input
/// embedding (15.01 GB). KV: 32 layers × 8 heads × 128 × (K, V) × 2 bytes = 128 KiB.
const LLAMA8_BYTES: f64 = 2.0 * 8_030_257_152.0;
const LLAMA8_READ: f64 = LLAMA8_BYTES - 2.0 * 128_256.0 * 4096.0;

#[test]
fn llama_8b_on_an_h100_reads_16_gb_and_128_kib_a_token() {
    // 64 requests holding 64,000 tokens at 100 steps/s.
    let log = sglang_log(
        "meta-llama/Llama-3.1-8B-Instruct",
        1,
        200_000,
        64,
        64_000,
        6400.0,
        true,
    );
    let r = analyze(&log, choice("h100", None));
    let f = roof(&r);
    assert_eq!(
        (f.gpu.as_str(), f.model.as_str(), f.model_source.as_str()),
        ("H100 SXM", "Llama-3.1-8B", "log")
    );
    assert!(
        close(f.weights_bytes_per_gpu, LLAMA8_BYTES, 1e-3),
        "{}",
        f.weights_bytes_per_gpu
    );
    assert_eq!(f.kv_bytes_per_token_per_gpu, 131_072.0);
    let bytes = LLAMA8_READ + 64_000.0 * 131_072.0; // 23.40 GB
    assert!(
        close(f.bytes_per_step_per_gpu.unwrap(), bytes, 2e-3),
        "{:?}",
        f.bytes_per_step_per_gpu
    );
    assert!(close(f.steps_per_s.unwrap(), 100.0, 1e-3));
    // 2.34 TB/s of 3.35: 70 %.
    assert!(close(
        f.achieved_hbm_gb_s.unwrap(),
        bytes * 100.0 / 1e9,
        2e-3
    ));
    assert!(
        close(f.mbu.unwrap(), bytes * 100.0 / 3.35e12, 2e-3),
        "{:?}",
        f.mbu
    );
    // 64 requests × 3.35 TB/s ÷ 23.40 GB a step: 9,163 tok/s.
    assert!(close(
        f.decode_ceiling_tok_s.unwrap(),
        64.0 * 3.35e12 / bytes,
        2e-3
    ));
    assert!(
        f.lower_bound_reasons.is_empty(),
        "{:?}",
        f.lower_bound_reasons
    );
    // No GPU, no roofline; a GPU and an unnamed model the log does not name: none either.
    assert!(analyze(&log, RooflineChoice::default()).roofline.is_none());
    let other = log.replace("meta-llama/Llama-3.1-8B-Instruct", "facebook/opt-125m");
    assert!(analyze(&other, choice("h100", None)).roofline.is_none());
}

#[test]
fn tensor_parallelism_splits_weights_and_kv_heads_across_gpus() {
    // Llama-3.1-70B: 80 layers × (2·8192² + 2·8192·1024 + 3·8192·28672 + 2·8192)
    // + 2 × 128256 × 8192 = 70.55 B parameters.
    let params = 80.0
        * (2.0 * 8192.0 * 8192.0 + 2.0 * 8192.0 * 1024.0 + 3.0 * 8192.0 * 28672.0 + 2.0 * 8192.0)
        + 2.0 * 128_256.0 * 8192.0;
    for (tp, kv) in [(2u32, 163_840.0), (8, 40_960.0)] {
        // KV heads per GPU: 8 / TP; 80 layers × heads × 128 × 2 × 2 bytes.
        let log = sglang_log(
            "meta-llama/Llama-3.3-70B-Instruct",
            tp,
            400_000,
            128,
            200_000,
            3200.0,
            true,
        );
        let f = analyze(&log, choice("H200", None)).roofline.unwrap();
        assert_eq!(f.tensor_parallel_size, tp as u64);
        assert!(
            close(f.weights_bytes_per_gpu, 2.0 * params / tp as f64, 1e-3),
            "tp {tp}: {}",
            f.weights_bytes_per_gpu
        );
        assert_eq!(f.kv_bytes_per_token_per_gpu, kv);
        let read = (2.0 * params - 2.0 * 128_256.0 * 8192.0) / tp as f64 + kv * 200_000.0;
        assert!(
            close(f.mbu.unwrap(), read * 25.0 / 4.8e12, 2e-3),
            "tp {tp}: {:?}",
            f.mbu
        );
    }
    // --tp overrides the startup lines.
    let log = sglang_log(
        "meta-llama/Llama-3.3-70B-Instruct",
        2,
        400_000,
        128,
        200_000,
        3200.0,
        true,
    );
    let f = analyze(
        &log,
        RooflineChoice {
            tp: Some(8),
            ..choice("h200", None)
        },
    )
    .roofline
    .unwrap();
    assert_eq!(f.kv_bytes_per_token_per_gpu, 40_960.0);
}

#[test]
fn a_moe_with_mla_reads_the_experts_its_batch_touches_and_one_latent_per_token() {
    // DeepSeek-V3 (FP8) on 8 H200s, 32 requests holding 64,000 tokens at 20 steps/s.
    let log = sglang_log(
        "deepseek-ai/DeepSeek-V3-0324",
        8,
        400_000,
        32,
        64_000,
        640.0,
        true,
    );
    let f = analyze(&log, choice("h200", None)).roofline.unwrap();
    assert_eq!(f.weight_dtype, "fp8");
    // MLA: 61 layers × (512 latent + 64 rope) × 2 bytes, on every GPU.
    assert_eq!(f.kv_bytes_per_token_per_gpu, 70_272.0);
    // 32 tokens each choosing 8 of 256 experts touch 256·(1 − (1 − 8/256)^32) = 163.3.
    let touched = 256.0 * (1.0 - (1.0f64 - 8.0 / 256.0).powi(32));
    assert!(
        close(f.experts_touched.unwrap(), touched, 1e-3),
        "{:?}",
        f.experts_touched
    );
    // 58 MoE layers × 256 experts × 3·7168·2048 routed parameters, one byte each.
    let routed = 58.0 * 256.0 * 3.0 * 7168.0 * 2048.0;
    assert!(close(f.params, 671e9, 0.005), "{}", f.params);
    let dense_read = f.params - routed - 129_280.0 * 7168.0; // all but the input embedding
    let bytes = (dense_read + routed * touched / 256.0) / 8.0 + 70_272.0 * 64_000.0;
    assert!(
        close(f.bytes_per_step_per_gpu.unwrap(), bytes, 2e-3),
        "{:?} vs {bytes}",
        f.bytes_per_step_per_gpu
    );
    assert!(close(f.mbu.unwrap(), bytes * 20.0 / 4.8e12, 2e-3));
    // Active: 37 B parameters a token; the FP8 peak is the one prefill is held to.
    assert!(close(f.active_params, 37.5e9, 0.03), "{}", f.active_params);
    assert_eq!(f.peak_tflops, 1978.9);
}

#[test]
fn a_config_json_and_overrides_change_the_bytes() {
    let log = sglang_log("/models/my-finetune", 1, 200_000, 64, 64_000, 6400.0, false);
    let config = r#"{"hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,
        "num_hidden_layers":32,"num_key_value_heads":8,"vocab_size":128256,"_name_or_path":"my-finetune"}"#;
    let c = RooflineChoice {
        gpu: Some("h100".into()),
        model: Some(ModelChoice::ConfigJson(config.into())),
        weight_dtype: Some("fp8".into()),
        kv_dtype: Some("fp8_e4m3".into()),
        ..RooflineChoice::default()
    };
    let f = analyze(&log, c).roofline.unwrap();
    assert_eq!(
        (f.model.as_str(), f.model_source.as_str()),
        ("my-finetune", "config.json")
    );
    assert!(close(f.weights_bytes_per_gpu, LLAMA8_BYTES / 2.0, 1e-3));
    assert_eq!(f.kv_bytes_per_token_per_gpu, 65_536.0);
    // Every line says `cuda graph: False`, and an FP8 8B step at peak takes 4.7 ms.
    assert_eq!(f.graph_off_share, Some(1.0));
    assert!(f
        .lower_bound_reasons
        .contains(&"cuda_graph_off".to_string()));
    assert!(f
        .lower_bound_reasons
        .contains(&"small_batch_fast_gpu".to_string()));
    assert!(RooflineChoice {
        model: Some(ModelChoice::Name("gpt-5".into())),
        ..RooflineChoice::default()
    }
    .check()
    .is_err());
    assert!(choice("tpu-v5", None)
        .check()
        .unwrap_err()
        .contains("unknown GPU"));
}

#[test]
fn the_verdict_says_how_far_from_the_bandwidth_limit_decode_runs() {
    // A batch of 192 holding 180,000 tokens: 38.6 GB a step on an H100. At 13,330
    // tok/s (69 steps/s) that is 80 % of its 3.35 TB/s; at 2,000 tok/s, 12 %.
    for (gen, graph, near) in [(13_330.0, true, true), (2_000.0, false, false)] {
        let log = sglang_log(
            "meta-llama/Llama-3.1-8B-Instruct",
            1,
            200_000,
            192,
            180_000,
            gen,
            graph,
        );
        let r = analyze(&log, choice("h100", None));
        let mbu = roof(&r).mbu.unwrap();
        assert_eq!(mbu >= 0.6, near, "{mbu}");
        let text = batchlens_core::render::text(&r, false);
        assert!(text.contains("Roofline") && text.contains("MBU"), "{text}");
        let d = r.diagnosis.as_ref().unwrap();
        assert_eq!(
            d.primary.kind,
            batchlens_core::report::Kind::DecodeSaturated,
            "{}",
            d.primary.headline
        );
        let h = &d.primary.headline;
        assert!(h.contains(&format!("{:.0}% MBU", mbu * 100.0)), "{h}");
        if near {
            assert!(
                h.contains("only quantization, speculative decoding or more GPUs help"),
                "{h}"
            );
        } else {
            // Every step launched without a graph above the captured 160: that comes first.
            assert!(
                h.contains("far below the hardware") && h.contains("without CUDA graphs"),
                "{h}"
            );
            assert!(d
                .primary
                .evidence
                .iter()
                .any(|e| e.statement.contains("--cuda-graph-max-bs")));
        }
    }
}

/// A simulated SGLang server whose decode step is the time Llama-3.1-8B's bytes
/// take at an H100's bandwidth plus a per-request overhead: the MBU read from
/// its log is the simulator's own within 5 %.
#[test]
fn the_mbu_of_a_bandwidth_timed_simulation_is_recovered_within_5_percent() {
    let bw = 3.35e12;
    let kv_token = 131_072.0;
    for (concurrency, overhead) in [(48u32, 0.000_05), (128, 0.000_02), (24, 0.000_2)] {
        let cfg = SimConfig {
            seed: 11,
            kv_capacity_tokens: 400_000,
            concurrency,
            num_requests: 0,
            duration_s: 600.0,
            prompt_len: LenDist::Fixed { value: 64 },
            output_len: LenDist::Uniform {
                min: 800,
                max: 1200,
            },
            max_new_tokens: 2048,
            step_a: LLAMA8_READ / bw,
            step_b: overhead,
            step_c: kv_token / bw,
            prefill_a: 0.002,
            prefill_per_token: 2e-6,
            ..SimConfig::default()
        };
        let mut log = String::new();
        let out = simulate(&cfg, &mut |l| {
            log.push_str(l);
            log.push('\n');
        });
        let f = analyze(&log, choice("h100", None)).roofline.unwrap();
        // The simulator's bandwidth: a decode step's bytes over its time, over the
        // share of the server's time spent decoding.
        let (n, kv) = (
            out.steady_mean_running,
            out.steady_kv_usage * out.kv_capacity_tokens as f64,
        );
        let bytes = LLAMA8_READ + kv_token * kv;
        let step = cfg.step_a + cfg.step_b * n + cfg.step_c * kv;
        let truth = bytes / step / bw * out.decode_s / (out.decode_s + out.prefill_s);
        let got = f.mbu.unwrap();
        eprintln!("concurrency {concurrency}: simulator MBU {truth:.3}, recovered {got:.3}");
        assert!(
            close(got, truth, 0.05),
            "concurrency {concurrency}: {got} vs {truth}"
        );
    }
}

/// vLLM's `--enable-mfu-metrics` suffix (shape from docs/formats: `…, MFU: 160.6
/// TF/s/GPU 106.9 GB/s/GPU`) is read beside the stats line's other fields, and
/// the report shows batchlens' bandwidth against the engine's.
#[test]
fn the_engines_own_estimates_are_shown_beside_batchlens_figures() {
    let mut log = String::from(
        "INFO 11-30 11:59:00 [api_server.py:1] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_num_seqs': 256}\n\
         INFO 11-30 11:59:10 [kv_cache_utils.py:1] GPU KV cache size: 200,000 tokens\n",
    );
    for i in 0..30 {
        let (m, sec) = (i * 10 / 60, i * 10 % 60);
        log += &format!(
            "(APIServer pid=7) INFO 11-30 12:{m:02}:{sec:02} [loggers.py:330] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 6400.0 tokens/s, Running: 64 reqs, Waiting: 0 reqs, GPU KV cache usage: 32.0%, Prefix cache hit rate: 0.0%, MFU: 160.6 TF/s/GPU 2000.0 GB/s/GPU\n"
        );
    }
    let r = analyze(&log, choice("h100", None));
    assert_eq!(r.input.damaged_stat_lines, 0);
    let f = roof(&r);
    let e = f.engine_reported.as_ref().expect("the engine's figures");
    assert_eq!((e.hbm_gb_s, e.tflops), (Some(2000.0), Some(160.6)));
    // batchlens: 100 steps/s × 23.40 GB = 2,340 GB/s, 1.17 × the engine's 2,000.
    let ours = (LLAMA8_READ + 64_000.0 * 131_072.0) * 100.0 / 1e9;
    assert!(
        close(e.hbm_ratio.unwrap(), ours / 2000.0, 3e-3),
        "{:?}",
        e.hbm_ratio
    );
    assert!(
        batchlens_core::render::text(&r, false).contains("The engine estimates 2.0 TB/s per GPU")
    );

    // SGLang 0.5.10's suffixes on decode and prefill lines.
    let mut log = sglang_log("meta-llama/Llama-3.1-8B-Instruct", 1, 200_000, 64, 64_000, 6400.0, true)
        .replace("#queue-req: 0\n", "#queue-req: 0, est. decode TFLOPS/s (per GPU): 95.5, est. read BW (GB/s per GPU): 2100.0, est. write BW (GB/s per GPU): 3.1\n");
    log += "[2026-02-24 10:05:00 TP0] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.32, #running-req: 64, #queue-req: 0, input throughput (token/s): 9000.00, est. prefill TFLOPS/s (per GPU): 140.0\n";
    let r = analyze(&log, choice("h100", None));
    assert_eq!(r.input.damaged_stat_lines, 0);
    let e = roof(&r).engine_reported.clone().unwrap();
    assert_eq!(
        (e.hbm_gb_s, e.tflops, e.prefill_tflops),
        (Some(2100.0), Some(95.5), Some(140.0))
    );
    assert!(e.hbm_ratio.is_some());
}

#[test]
fn the_throughput_chart_draws_the_decode_ceiling_dashed() {
    use batchlens_core::charts::{svg, Chart, ChartData, Theme};
    let log = sglang_log(
        "meta-llama/Llama-3.1-8B-Instruct",
        1,
        200_000,
        192,
        180_000,
        8000.0,
        true,
    );
    let with = analyze(&log, choice("h100", None));
    let data = ChartData::from_report(&with);
    let ceiling = roof(&with).decode_ceiling_tok_s.unwrap();
    assert_eq!(data.decode_ceiling_tok_s, Some(ceiling));
    // The page draws from the JSON: the same figure.
    let json = serde_json::to_string(&with).unwrap();
    let view: batchlens_core::charts::ReportView = serde_json::from_str(&json).unwrap();
    assert_eq!(ChartData::from(view), data);
    let s = svg(&data, None, Chart::Throughput, &Theme::light(), (800, 400)).unwrap();
    assert!(
        s.contains("decode ceiling at peak bandwidth (17k, 48% MBU)"),
        "{s}"
    );
    let without = analyze(&log, RooflineChoice::default());
    let s = svg(
        &ChartData::from_report(&without),
        None,
        Chart::Throughput,
        &Theme::light(),
        (800, 400),
    )
    .unwrap();
    assert!(!s.contains("decode ceiling"));
    // The concurrency chart does not draw it.
    let s = svg(&data, None, Chart::Concurrency, &Theme::light(), (800, 400)).unwrap();
    assert!(!s.contains("decode ceiling"));
}

fn fixture(rel: &str) -> String {
    String::from_utf8(common::fixture(rel)).expect("a UTF-8 fixture")
}

const ITERATIONS: &str = "vllm/synthetic_v1-iteration-details-llama8b-steady-decode.log";

/// vLLM's `Iteration(N)` lines time each step: 60 decode steps of 15.2/15.4 ms at
/// 128 requests a second, and one 75.3 ms step that prefills 2048 prompt tokens
/// beside them. Steps per second are the decode steps' own (65.4/s), where rate ÷
/// running (7807 ÷ 128 = 61.0/s) counts the prefill step's time as decode's.
#[test]
fn vllm_step_lines_give_the_decode_step_time_and_prefill_its_own_time() {
    let log = fixture(ITERATIONS);
    let r = analyze(&log, choice("h100", None));
    // The cut step line at the end is a parse failure.
    assert_eq!((r.input.stat_lines, r.input.damaged_stat_lines), (11, 1));
    let f = roof(&r);
    assert_eq!(f.model, "Llama-3.1-8B");
    assert_eq!(f.steps_from, "iteration_times");
    assert_eq!(f.step_time_ms, Some(15.3));
    assert!(close(f.steps_per_s.unwrap(), 1000.0 / 15.3, 1e-4), "{f:?}");
    assert_eq!((f.batch, f.context_tokens), (Some(128.0), Some(160_000.0)));
    let bytes = LLAMA8_READ + 160_000.0 * 131_072.0;
    assert!(close(f.bytes_per_step_per_gpu.unwrap(), bytes, 1e-4));
    assert!(close(
        f.achieved_hbm_gb_s.unwrap(),
        bytes * 1000.0 / 15.3 / 1e9,
        1e-4
    ));
    assert!(close(f.mbu.unwrap(), bytes * 1000.0 / 15.3 / 3.35e12, 1e-3));
    // Decode-only steps leave prefill out: no lower bound for it.
    assert!(
        f.lower_bound_reasons.is_empty(),
        "{:?}",
        f.lower_bound_reasons
    );
    // Prefill: 2048 tokens in the 60 ms a prefill step takes beyond a decode step.
    assert!(
        close(f.prefill_tok_s_per_gpu.unwrap(), 2048.0 / 0.060, 1e-4),
        "{f:?}"
    );
    let mfu = 2048.0 / 0.060 * 2.0 * f.active_params / 989.4e12;
    assert!(f.prefill_mfu.unwrap() >= mfu - 1e-4, "{f:?}");
    assert!(f.prefill_mfu.unwrap() < mfu * 1.05, "{f:?}");
    // The share of the time prefill takes, as TensorRT-LLM's iterations give it: each
    // prefill step's time beyond the decode step before it (15.4 ms), the first one's
    // beyond the decode step after it (15.2 ms), there being none before.
    let share = (60.1 + 9.0 * 59.9) / (10.0 * (75.3 + 30.0 * (15.2 + 15.4)));
    assert!(close(r.summary.prefill_time_share.unwrap(), share, 1e-3));
    let text = batchlens_core::render::text(&r, false);
    assert!(
        text.contains("65.4 steps/s (the engine's own step times: 15.3 ms a decode step)"),
        "{text}"
    );

    // The same log without its step lines: rate ÷ running, a lower bound.
    let stats: String = log
        .lines()
        .filter(|l| !l.contains("Iteration("))
        .map(|l| format!("{l}\n"))
        .collect();
    let r = analyze(&stats, choice("h100", None));
    let g = roof(&r);
    assert_eq!(g.steps_from, "rate_per_request");
    assert!(close(g.steps_per_s.unwrap(), 7807.0 / 128.0, 1e-4), "{g:?}");
    assert_eq!(r.summary.prefill_time_share, None);
    assert!(g.mbu.unwrap() < f.mbu.unwrap());
}

/// Under async scheduling vLLM's step time is only the wait for a launched step's
/// output (a few µs where the GPU is ahead): such times are not the steps', which
/// are counted over the time their lines span instead.
#[test]
fn step_times_that_leave_most_of_the_time_out_are_counted_instead() {
    let log = fixture(ITERATIONS)
        .replace("elapsed time: 15.20 ms", "elapsed time: 0.03 ms")
        .replace("elapsed time: 15.40 ms", "elapsed time: 0.02 ms")
        .replace("elapsed time: 75.30 ms", "elapsed time: 0.05 ms");
    let r = analyze(&log, choice("h100", None));
    let f = roof(&r);
    assert_eq!(f.steps_from, "iteration_count");
    assert_eq!(f.step_time_ms, None);
    // 61 steps in each of the 10 seconds the step lines span.
    assert!(close(f.steps_per_s.unwrap(), 61.0, 1e-3), "{f:?}");
    // Nor is prefill's time: no share of the time from them, and the prompt rate
    // stands for prefill's.
    assert_eq!(r.summary.prefill_time_share, None);
    assert!(
        close(f.prefill_tok_s_per_gpu.unwrap(), 2048.0, 0.02),
        "{f:?}"
    );
}

/// Speculative decoding commits several tokens a request per step: rate ÷ running
/// counts that many times too many steps. Divided by the log's own acceptance
/// figure (SGLang's `accept len`, vLLM's mean acceptance length), the steps are the
/// rate ÷ running of the same log read without it, over that figure.
#[test]
fn speculative_decoding_divides_the_steps_by_the_tokens_a_step_commits() {
    let strip_accept = |l: &str| -> String {
        match l.find("accept len: ") {
            Some(i) => {
                let end = i + l[i..].find(", ").expect("a next field") + 2;
                format!("{}{}", &l[..i], &l[end..])
            }
            None => l.to_string(),
        }
    };
    for (rel, gpu, model, accepted) in [
        (
            "sglang/sglang_05_npu-tp-ep-accept-len.log",
            "ascend910b",
            "DeepSeek-V3",
            (3.05 + 2.83 + 2.63) / 3.0,
        ),
        (
            "sglang/sglang_07_swa-spec-dflash-cap-len.log",
            "h200",
            "Qwen3-8B",
            f64::NAN,
        ),
        (
            "vllm/vllm_25_v1-specdecode-100pct-accept-loop.log",
            "rtx4090",
            "Qwen3-32B",
            4.0,
        ),
    ] {
        let log = fixture(rel);
        let with = analyze(&log, choice(gpu, Some(model)));
        let f = roof(&with);
        let tokens = f.tokens_per_step.unwrap_or_else(|| panic!("{rel}: {f:?}"));
        if accepted.is_finite() {
            assert!(close(tokens, accepted, 2e-3), "{rel}: {tokens}");
        }
        assert!(tokens > 1.0, "{rel}");
        let plain: String = log
            .lines()
            .filter(|l| !l.contains("SpecDecoding metrics"))
            .map(|l| strip_accept(l) + "\n")
            .collect();
        let without = analyze(&plain, choice(gpu, Some(model)));
        let g = roof(&without);
        assert_eq!(g.tokens_per_step, None, "{rel}");
        assert_eq!(
            (f.steps_from.as_str(), g.steps_from.as_str()),
            ("rate_per_request", "rate_per_request")
        );
        let (a, b) = (f.steps_per_s.unwrap(), g.steps_per_s.unwrap());
        assert!(
            close(a * tokens, b, 1e-3),
            "{rel}: {a} × {tokens} against {b}"
        );
        assert!(
            close(f.mbu.unwrap() * tokens, g.mbu.unwrap(), 2e-3),
            "{rel}"
        );
    }
}

/// Where the startup lines turn speculative decoding on and no line says how many
/// tokens a step commits, the figure may be too high, and the report says so.
#[test]
fn speculative_decoding_without_an_acceptance_figure_is_flagged_as_overstated() {
    let mut log = String::from(
        "(APIServer pid=1) INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'speculative_config': {'method': 'eagle3', 'num_speculative_tokens': 3}}\n\
         (EngineCore_DP0 pid=9) INFO 01-01 00:00:20 [kv_cache_utils.py:1] GPU KV cache size: 200,000 tokens\n",
    );
    for i in 0..30 {
        let (m, sec) = (1 + i * 10 / 60, i * 10 % 60);
        log += &format!(
            "(APIServer pid=1) INFO 01-01 00:{m:02}:{sec:02} [loggers.py:1] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 6400.0 tokens/s, Running: 64 reqs, Waiting: 0 reqs, GPU KV cache usage: 32.0%, Prefix cache hit rate: 0.0%\n"
        );
    }
    let r = analyze(&log, choice("h100", None));
    let f = roof(&r);
    assert_eq!(
        f.upper_bound_reasons,
        ["speculative_tokens_per_step_unknown"]
    );
    assert!(close(f.steps_per_s.unwrap(), 100.0, 1e-6));
    assert!(batchlens_core::render::text(&r, false)
        .contains("Perhaps too high: speculative decoding is on"));
    // With the acceptance lines the figure is divided and nothing is flagged.
    let with: String = log.lines().map(|l| {
        let mut s = format!("{l}\n");
        if l.contains("Engine 000") {
            s += &l.replace("[loggers.py:1] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 6400.0 tokens/s, Running: 64 reqs, Waiting: 0 reqs, GPU KV cache usage: 32.0%, Prefix cache hit rate: 0.0%", "[metrics.py:1] SpecDecoding metrics: Mean acceptance length: 2.50, Accepted throughput: 3840.00 tokens/s, Drafted throughput: 7680.00 tokens/s, Accepted: 38400 tokens, Drafted: 76800 tokens, Per-position acceptance rate: 0.800, 0.500, 0.200, Avg Draft acceptance rate: 50.0%");
            s.push('\n');
        }
        s
    }).collect();
    let r = analyze(&with, choice("h100", None));
    let f = roof(&r);
    assert!(f.upper_bound_reasons.is_empty());
    assert_eq!(f.tokens_per_step, Some(2.5));
    assert!(close(f.steps_per_s.unwrap(), 40.0, 1e-6));
}

/// Real `--enable-mfu-metrics` lines (vLLM PR #30738, gpt-oss-120b on a B200) and
/// SGLang's `est. prefill TFLOPS/s (per GPU)` (a PD prefill node's paste): the
/// engine's own figure is read and shown beside batchlens', with their ratio.
#[test]
fn real_engine_estimates_are_read_and_shown_beside_batchlens_figures() {
    let r = analyze(
        &fixture("vllm/vllm_44_v1-mfu-metrics-gpt-oss-120b-b200-tp1.log"),
        choice("b200", Some("gpt-oss-120b")),
    );
    assert_eq!((r.input.stat_lines, r.input.damaged_stat_lines), (4, 0));
    let f = roof(&r);
    let e = f.engine_reported.as_ref().expect("the engine's figures");
    assert_eq!(e.hbm_gb_s, Some((772.8 + 269.3 + 344.9 + 349.3) / 4.0));
    assert_eq!(e.tflops, Some((11.3 + 405.0 + 521.0 + 521.2) / 4.0));
    // No pool size in the paste: the weights alone, and said so.
    assert!(f
        .lower_bound_reasons
        .contains(&"kv_context_unknown".to_string()));
    assert_eq!(f.decode_ceiling_tok_s, None);
    let ratio = f.achieved_hbm_gb_s.unwrap() / e.hbm_gb_s.unwrap();
    assert!((e.hbm_ratio.unwrap() - ratio).abs() <= 5e-4, "{e:?}");
    let text = batchlens_core::render::text(&r, false);
    assert!(
        text.contains(&format!(
            "The engine estimates 434 GB/s per GPU; batchlens' figure is {:.2}× it.",
            ratio
        )),
        "{text}"
    );

    let r = analyze(
        &fixture("sglang/sglang_50_pd-prefill-est-prefill-tflops-nixl-disconnect.log"),
        RooflineChoice {
            tp: Some(8),
            ..choice("b200", Some("DeepSeek-V3"))
        },
    );
    // `fwd occupancy: nan%` is the device timer's before it timed a forward, no damage.
    assert_eq!((r.input.stat_lines, r.input.damaged_stat_lines), (2, 0));
    let f = roof(&r);
    let e = f.engine_reported.as_ref().expect("the engine's figures");
    assert_eq!(e.prefill_tflops, Some((9.90 + 11.68) / 2.0));
    // batchlens: 185.5 prompt tok/s over 8 GPUs × 2 × 36.6 B active parameters (the
    // context is not known: no attention term) = 1.70 TFLOPS, 0.157 × the engine's.
    assert_eq!(f.prefill_tok_s_per_gpu, Some((178.18 + 192.82) / 2.0 / 8.0));
    let ours = f.prefill_tok_s_per_gpu.unwrap() * 2.0 * f.active_params / 1e12;
    assert!(
        (e.prefill_tflops_ratio.unwrap() - ours / 10.79).abs() <= 5e-4,
        "{f:?}"
    );
    assert!(batchlens_core::render::text(&r, false)
        .contains("The engine estimates 10.8 prefill TFLOPS per GPU"));
}
