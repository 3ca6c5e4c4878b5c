//! The roofline against figures computed by hand from the models' published
//! shapes and the GPUs' datasheets, and against a simulated server whose decode
//! step time is set from the bytes it reads at a given bandwidth.

// The simulation check prints its figures (the library prints nothing).
#![allow(clippy::disallowed_macros)]

use batchlens_core::report::Roofline;
use batchlens_core::{Analyzer, ModelChoice, Options, Report, RooflineChoice};
use batchlens_sim::{simulate, LenDist, SimConfig};

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
