//! Format files: the built-in ones on the real logs of the servers they read,
//! and a user's format for a made-up engine, on a simulated log, judged as the
//! same simulation in vLLM's own format.
// Tests read the bundled fixture logs from disk.
#![allow(clippy::disallowed_methods)]

use batchlens_core::formats::{builtin, client_figures, Formats};
use batchlens_core::report::Kind;
use batchlens_core::{analyze, Options, Report};
use batchlens_sim::{simulate, Engine, SimConfig};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/other/{name}.log",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn with_formats(bytes: &[u8], formats: Formats) -> Report {
    analyze(
        bytes,
        Options {
            formats,
            ..Options::default()
        },
    )
}

fn built_in(name: &str) -> Formats {
    Formats::parse(builtin(name).unwrap_or_else(|| panic!("no built-in {name}"))).unwrap()
}

fn kind(r: &Report) -> Kind {
    r.diagnosis.as_ref().expect("a diagnosis").primary.kind
}

#[test]
fn llama_cpp_print_timings_are_read_and_judged() {
    let log = fixture("llamacpp_02_server-slow-single-slot");
    let plain = analyze(&log, Options::default());
    assert_eq!(plain.input.stat_lines, 0);
    assert_eq!(
        plain.input.other_server.as_ref().map(|o| o.name.as_str()),
        Some("llama.cpp")
    );
    let r = with_formats(&log, built_in("llama.cpp"));
    assert_eq!(r.engine, "llama.cpp");
    // `prompt eval time … 55.73 tokens per second` and `eval time … 11.94 tokens per second`.
    assert_eq!(r.input.stat_lines, 2);
    assert_eq!(r.summary.input_throughput_tok_s.map(|d| d.max), Some(55.73));
    assert_eq!(r.summary.gen_throughput_tok_s.map(|d| d.max), Some(11.94));
    assert!(r.input.other_server.is_none(), "judged, not only named");
    assert!(r.diagnosis.is_some());
    let f = &r.input.custom_formats[0];
    assert_eq!(
        (f.matched_lines, f.samples, f.like.as_deref()),
        (2, 2, Some("vllm"))
    );
    assert_eq!(r.input.accounted_lines(), r.input.lines);
}

#[test]
fn llama_cpp_prefixed_lines_and_progress_lines_are_read() {
    // `[42027] … n_decoded = 172, tg = 12.00 t/s`, then the timings behind a pid prefix.
    let r = with_formats(
        &fixture("llamacpp_01_new-format-pid-elapsed-mtp"),
        built_in("llama.cpp"),
    );
    assert_eq!(r.input.stat_lines, 3);
    let gen = r.summary.gen_throughput_tok_s.expect("generation rates");
    assert_eq!((gen.count, gen.max), (2, 12.0));
    assert_eq!(r.summary.input_throughput_tok_s.map(|d| d.max), Some(34.22));
}

#[test]
fn ollama_runner_timings_keep_their_epoch_time() {
    let r = with_formats(
        &fixture("ollama_01_json-runner-timings-gin"),
        built_in("ollama"),
    );
    assert_eq!(r.engine, "ollama");
    assert_eq!(r.input.stat_lines, 2);
    assert_eq!(r.summary.gen_throughput_tok_s.map(|d| d.max), Some(17.42));
    // "timestamp":1713786305 is 2024-04-22 11:45:05 UTC.
    assert_eq!(r.first_timestamp.as_deref(), Some("2024-04-22 11:45:05"));
    // Busy slots from the runner's `slot data` line.
    let r = with_formats(
        &fixture("ollama_04_docker-compose-prefix-json-slot-data-idle"),
        built_in("ollama"),
    );
    assert_eq!(r.summary.running_requests.map(|d| d.max), Some(0.0));
}

#[test]
fn tgi_time_per_token_becomes_a_rate() {
    // time_per_token="36.708605ms": 1000 / 36.708605 tokens/s.
    let r = with_formats(
        &fixture("tgi_01_xpu-connected-chat-completions-success"),
        built_in("tgi"),
    );
    assert_eq!(r.engine, "tgi");
    assert_eq!(r.input.stat_lines, 1);
    let g = r.summary.gen_throughput_tok_s.expect("a rate").max;
    assert!((g - 1000.0 / 36.708605).abs() < 0.01, "{g}");
    let r = with_formats(
        &fixture("tgi_02_v1-http-request-span-generate-success"),
        built_in("tgi"),
    );
    let g = r.summary.gen_throughput_tok_s.expect("a rate").max;
    assert!((g - 1000.0 / 49.283162).abs() < 0.01, "{g}");
}

#[test]
fn a_format_that_matches_but_reads_no_number_says_so() {
    let f = Formats::parse(
        r#"
[[format]]
name = "gw"
regex = 'gw stats running=(?P<running>\S+)'
"#,
    )
    .unwrap();
    let r = with_formats(b"gw stats running=many\ngw stats running=lots\n", f);
    let c = &r.input.custom_formats[0];
    assert_eq!((c.matched_lines, c.samples, c.unread_values), (2, 0, 2));
    assert_eq!(c.empty_match.as_ref().map(|e| e.line), Some(1));
    assert_eq!(r.input.stat_lines, 0);
    assert_eq!(r.input.accounted_lines(), 2);
}

/// The gateway's format: its stats line, its pool and cap at start.
const GATEWAY: &str = r#"
[[format]]
name = "mygateway"
like = "vllm"
regex = '^(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) gw stats running=(?P<running>\d+) waiting=(?P<waiting>\d+) kv=(?P<kv_usage>[\d.]+)% gen=(?P<gen_tok_s>[\d.]+) prompt=(?P<prompt_tok_s>[\d.]+) preempted=(?P<preemptions>\d+)'
time_format = "%Y-%m-%d %H:%M:%S"
kv_usage = "percent"

[[format]]
name = "mygateway"
like = "vllm"
regex = 'gw pool tokens=(?P<kv_capacity_tokens>[\d,]+) max_seqs=(?P<max_running>\d+)'
"#;

/// The same gateway printing a running total of generated tokens instead of a rate.
const GATEWAY_TOTALS: &str = r#"
[[format]]
name = "mygateway"
like = "vllm"
regex = '^(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d) .*running=(?P<running>\d+) waiting=(?P<waiting>\d+) kv=(?P<kv_usage>[\d.]+) total=(?P<generated_tokens>\d+) prompt=(?P<prompt_tok_s>[\d.]+) preempted=(?P<preemptions>\d+)'
time_format = "iso8601"
kv_usage = "fraction"
generated_tokens = "cumulative"

[[format]]
name = "mygateway"
regex = 'gw pool tokens=(?P<kv_capacity_tokens>[\d,]+) max_seqs=(?P<max_running>\d+)'
"#;

/// A field of a vLLM V1 stats line: the number after `label`.
fn field(line: &str, label: &str) -> Option<f64> {
    let rest = &line[line.find(label)? + label.len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The simulated vLLM log rewritten as a made-up engine's (`totals`: running
/// generated-token totals instead of rates); every other line is dropped.
fn as_gateway(vllm: &str, totals: bool) -> String {
    let mut out = String::new();
    let mut total = 0.0;
    let mut cap = None;
    for l in vllm.lines() {
        if let Some(n) = l.find("'max_num_seqs': ") {
            cap = l[n + 16..].split([',', '}']).next().map(str::to_string);
        }
        if let Some(i) = l.find("GPU KV cache size: ") {
            let tokens = l[i + 19..].split(' ').next().unwrap_or("");
            out.push_str(&format!(
                "gw pool tokens={tokens} max_seqs={}\n",
                cap.as_deref().unwrap_or("256")
            ));
        }
        if !l.contains("Avg generation throughput") {
            continue;
        }
        // `INFO 02-24 10:01:10 [loggers.py…`: the simulator's year is 2026.
        let i = l.find("INFO ").expect("a level") + 5;
        let (md, hms) = (&l[i..i + 5], &l[i + 6..i + 14]);
        let gen = field(l, "Avg generation throughput: ").expect("gen");
        let prompt = field(l, "Avg prompt throughput: ").expect("prompt");
        let running = field(l, "Running: ").expect("running");
        let waiting = field(l, "Waiting: ").expect("waiting");
        let kv = field(l, "GPU KV cache usage: ").expect("kv");
        let preempted = field(l, "Preemptions: ").unwrap_or(0.0);
        if totals {
            total += gen * 10.0;
            out.push_str(&format!(
                "2026-{md}T{hms} gw[1] running={running} waiting={waiting} kv={:.4} total={total:.0} prompt={prompt} preempted={preempted}\n",
                kv / 100.0
            ));
        } else {
            out.push_str(&format!(
                "2026-{md} {hms} gw stats running={running} waiting={waiting} kv={kv}% gen={gen} prompt={prompt} preempted={preempted}\n"
            ));
        }
    }
    out
}

#[test]
fn a_made_up_engine_gets_the_verdict_of_the_same_run_in_vllm_format() {
    let mut kinds = Vec::new();
    for preset in ["vllm_kv_bound", "running_cap", "client_underload"] {
        let mut cfg = SimConfig::preset(preset).expect("preset");
        cfg.engine = Engine::VllmV1;
        cfg.duration_s = 600.0;
        let mut log = String::new();
        simulate(&cfg, &mut |l| {
            log.push_str(l);
            log.push('\n');
        });
        let vllm = analyze(log.as_bytes(), Options::default());
        for (text, format) in [
            (as_gateway(&log, false), GATEWAY),
            (as_gateway(&log, true), GATEWAY_TOTALS),
        ] {
            let gw = with_formats(text.as_bytes(), Formats::parse(format).unwrap());
            assert_eq!(gw.engine, "mygateway");
            assert_eq!(
                gw.input.stat_lines, vllm.input.stat_lines,
                "{preset}: every stats line read"
            );
            assert_eq!(kind(&gw), kind(&vllm), "{preset}: {:#?}", gw.diagnosis);
            assert_eq!(gw.config.kv_capacity_tokens, vllm.config.kv_capacity_tokens);
            let (a, b) = (
                gw.summary.sustained_gen_tok_s.expect("rate"),
                vllm.summary.sustained_gen_tok_s.expect("rate"),
            );
            assert!((a / b - 1.0).abs() < 0.05, "{preset}: {a} against {b}");
        }
        kinds.push(kind(&vllm));
    }
    // Three different verdicts: the format carries what tells them apart.
    kinds.dedup();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
}

#[test]
fn client_progress_lines_give_the_client_figures() {
    let f = Formats::parse(
        r#"
[[format]]
name = "batchclient"
side = "client"
regex = '^\[(?P<time>[\d-]+ [\d:]+)\] done=(?P<completed_requests>\d+) out_tokens=(?P<generated_tokens>\d+) (?P<requests_per_s>[\d.]+) req/s'
time_format = "%Y-%m-%d %H:%M:%S"
generated_tokens = "cumulative"
"#,
    )
    .unwrap();
    let progress = b"[2026-02-24 10:00:00] done=0 out_tokens=0 0.0 req/s\n\
        [2026-02-24 10:01:00] done=6 out_tokens=24000 0.1 req/s\n\
        [2026-02-24 10:02:00] done=12 out_tokens=48000 0.1 req/s\n";
    let c = client_figures(progress, &f).expect("figures");
    assert_eq!(c.duration_s, Some(120.0));
    assert_eq!(c.total_output_tokens, Some(48_000));
    assert_eq!(c.output_tok_s, Some(400.0));
    assert_eq!(c.requests_per_s, Some(0.1));
    assert_eq!(c.completed_requests, Some(12));
    assert_eq!(c.source, "format:batchclient");
    // A server-side reader leaves client formats alone.
    assert!(client_figures(b"nothing here\n", &f).is_none());
    let r = with_formats(progress, f);
    assert_eq!(r.input.stat_lines, 0);
}

#[test]
fn a_json_format_file_reads_as_its_toml_twin() {
    let json = r#"{"format": [
  {"name": "gw", "like": "vllm",
   "regex": "^(?P<time>\\S+ \\S+) gw running=(?P<running>\\d+) kv=(?P<kv_usage>[\\d.]+)%",
   "time_format": "%Y-%m-%d %H:%M:%S", "kv_usage": "percent"}
]}"#;
    let toml = r#"[[format]]
name = "gw"
like = "vllm"
regex = '^(?P<time>\S+ \S+) gw running=(?P<running>\d+) kv=(?P<kv_usage>[\d.]+)%'
time_format = "%Y-%m-%d %H:%M:%S"
kv_usage = "percent"
"#;
    let log =
        b"2026-02-24 10:00:00 gw running=4 kv=40.0%\n2026-02-24 10:00:10 gw running=6 kv=60.0%\n";
    let a = with_formats(log, Formats::parse(json).unwrap());
    let b = with_formats(log, Formats::parse(toml).unwrap());
    assert_eq!(a.summary.kv_usage.map(|d| d.max), Some(0.6));
    assert_eq!(a.summary.running_requests.map(|d| d.max), Some(6.0));
    assert_eq!(a.span_seconds, b.span_seconds);
    assert_eq!(a.summary.kv_usage, b.summary.kv_usage);
    assert_eq!(a.span_seconds, 10.0);
}

#[test]
fn every_fixture_read_with_every_built_in_format_accounts_for_each_line() {
    let mut all = Formats::default();
    for (name, _) in batchlens_core::formats::BUILTIN {
        all.extend(built_in(name));
    }
    let root = format!("{}/../../tests/fixtures", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let p = f.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            let plain = analyze(&bytes, Options::default());
            let r = with_formats(&bytes, all.clone());
            assert_eq!(r.input.accounted_lines(), r.input.lines, "{}", p.display());
            // The engines' own stats lines are read as without the formats.
            if plain.input.stat_lines > 0 {
                assert_eq!(
                    r.input.stat_lines,
                    plain.input.stat_lines,
                    "{}",
                    p.display()
                );
                assert_eq!(r.engine, plain.engine, "{}", p.display());
            }
            seen += 1;
        }
    }
    assert!(seen > 90, "{seen}");
}
