//! `batchlens simulate`: write the log of a simulated continuous-batching server.
//!
//! The workload and server come from a preset (`--preset`) or a JSON `SimConfig`
//! (`--config`), with a few common fields overridable by flags. The output depends only
//! on the configuration and the seed.

use std::io::Write;
use std::path::PathBuf;

use batchlens_sim::{Engine as SimEngine, SimConfig, PRESETS};
use clap::ValueEnum;

use crate::{Failure, EXIT_INPUT, EXIT_INTERNAL};

#[derive(clap::Args)]
pub struct SimulateArgs {
    /// Named scenario (kv_bound, running_cap, client_underload, prefill_heavy, retraction,
    /// decode_saturated, vllm_kv_bound, vllm_v0_kv_bound). Default: kv_bound.
    #[arg(long, value_parser = parse_preset, conflicts_with = "config")]
    preset: Option<String>,
    /// A JSON simulator configuration (any field of batchlens_sim::SimConfig; missing fields
    /// take their defaults) instead of a preset.
    #[arg(long, value_name = "FILE.json")]
    config: Option<PathBuf>,
    /// Log format and scheduler to simulate (default: the preset's or config's).
    #[arg(long, value_enum)]
    engine: Option<EngineArg>,
    /// Random seed (same seed, same log).
    #[arg(long)]
    seed: Option<u64>,
    /// KV pool size in tokens (SGLang max_total_num_tokens, vLLM GPU KV cache size).
    #[arg(long, value_name = "N")]
    kv_tokens: Option<u64>,
    /// Maximum running requests (SGLang --max-running-requests, vLLM --max-num-seqs).
    #[arg(long, value_name = "N")]
    max_running: Option<u32>,
    /// Closed-loop client concurrency (clients each keeping one request in flight).
    #[arg(long, value_name = "N")]
    concurrency: Option<u32>,
    /// SGLang --schedule-conservativeness.
    #[arg(long, value_name = "X")]
    schedule_conservativeness: Option<f64>,
    /// Seconds during which the client submits requests.
    #[arg(long, value_name = "S")]
    duration: Option<f64>,
    /// Write the log here instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also write the simulation's ground truth (JSON) here.
    #[arg(long, value_name = "FILE")]
    outcome_json: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum EngineArg {
    Sglang,
    /// vLLM V1.
    Vllm,
    /// vLLM V0.
    VllmV0,
    /// TensorRT-LLM (`trtllm-serve`, iteration log).
    Trtllm,
}

fn parse_preset(s: &str) -> Result<String, String> {
    if PRESETS.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "unknown preset '{s}' (known: {})",
            PRESETS.join(", ")
        ))
    }
}

fn bad(message: String) -> Failure {
    Failure::input(message)
}

/// The configuration the flags describe.
fn config(args: &SimulateArgs) -> Result<SimConfig, Failure> {
    let mut cfg = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| bad(format!("cannot read '{}': {e}", path.display())))?;
            serde_json::from_str::<SimConfig>(&text).map_err(|e| {
                bad(format!(
                    "'{}' is not a simulator config: {e}",
                    path.display()
                ))
            })?
        }
        None => {
            let name = args.preset.as_deref().unwrap_or("kv_bound");
            SimConfig::preset(name).ok_or_else(|| bad(format!("unknown preset '{name}'")))?
        }
    };
    if let Some(e) = args.engine {
        cfg.engine = match e {
            EngineArg::Sglang => SimEngine::Sglang,
            EngineArg::Vllm => SimEngine::VllmV1,
            EngineArg::VllmV0 => SimEngine::VllmV0,
            EngineArg::Trtllm => SimEngine::Trtllm,
        };
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    if let Some(k) = args.kv_tokens {
        if k == 0 {
            return Err(bad("--kv-tokens must be positive".into()));
        }
        cfg.kv_capacity_tokens = k;
    }
    if let Some(m) = args.max_running {
        if m == 0 {
            return Err(bad("--max-running must be positive".into()));
        }
        cfg.max_running_requests = m;
        cfg.max_running_requests_explicit = true;
    }
    if let Some(c) = args.concurrency {
        if c == 0 {
            return Err(bad("--concurrency must be positive".into()));
        }
        cfg.concurrency = c;
    }
    if let Some(s) = args.schedule_conservativeness {
        if !(s.is_finite() && s > 0.0) {
            return Err(bad("--schedule-conservativeness must be positive".into()));
        }
        cfg.schedule_conservativeness = s;
    }
    if let Some(d) = args.duration {
        if !(d.is_finite() && d > 0.0) {
            return Err(bad("--duration must be positive".into()));
        }
        cfg.duration_s = d;
    }
    if cfg.concurrency == 0 && cfg.arrival_rate <= 0.0 {
        return Err(bad(
            "the client sends nothing: set concurrency or arrival_rate".into(),
        ));
    }
    if cfg.num_requests == 0 && cfg.duration_s <= 0.0 {
        return Err(bad(
            "the run never ends: set num_requests or duration_s (--duration)".into(),
        ));
    }
    within_limits(&cfg)?;
    Ok(cfg)
}

/// Clients in flight at once, at most: each holds a request's state.
pub const MAX_CONCURRENCY: u32 = 100_000;
/// Requests a run may submit, at most (by count, by arrival rate over the
/// duration, or in bursts): the simulator keeps each one's latencies for the
/// client's summary, and queued requests wait in memory.
pub const MAX_REQUESTS: f64 = 1_000_000.0;
/// Simulated seconds of client traffic, at most (a week, past any benchmark
/// and the longest log the benchmarks make): a closed loop submits, and keeps
/// each finished request's latencies, for as long as it runs.
pub const MAX_DURATION_S: f64 = 7.0 * 86_400.0;

/// The simulator holds every client, queued request and finished request's
/// latencies in memory: inputs beyond what a real benchmark reaches are
/// refused rather than let grow without bound.
fn within_limits(cfg: &SimConfig) -> Result<(), Failure> {
    if cfg.concurrency > MAX_CONCURRENCY {
        return Err(bad(format!(
            "--concurrency {} is more than the {MAX_CONCURRENCY} clients a simulation holds",
            cfg.concurrency
        )));
    }
    if cfg.duration_s > MAX_DURATION_S {
        return Err(bad(format!(
            "--duration {} s is longer than the {MAX_DURATION_S} s a simulation runs",
            cfg.duration_s
        )));
    }
    let open_loop = if cfg.concurrency == 0 && cfg.duration_s > 0.0 {
        cfg.arrival_rate * cfg.duration_s
    } else {
        0.0
    };
    let bursts: f64 = cfg.bursts.iter().map(|b| f64::from(b.count)).sum();
    let requests = (cfg.num_requests as f64).max(open_loop) + bursts;
    if requests.is_nan() || requests > MAX_REQUESTS || !cfg.arrival_rate.is_finite() {
        return Err(bad(format!(
            "the run would submit about {requests:.0} requests, more than the {MAX_REQUESTS} a simulation holds \
             (lower num_requests, arrival_rate × duration or the bursts)"
        )));
    }
    Ok(())
}

pub fn run(args: SimulateArgs) -> Result<(), Failure> {
    let cfg = config(&args)?;
    let sink: Box<dyn Write> = match &args.out {
        Some(p) if p.is_dir() => {
            return Err(bad(format!(
                "--out '{}' is a directory; give the path of the log file to write.",
                p.display()
            )))
        }
        Some(p) => Box::new(std::fs::File::create(p).map_err(|e| {
            let code = match e.kind() {
                // The path given cannot be a file: the input is wrong.
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => EXIT_INPUT,
                _ => EXIT_INTERNAL,
            };
            Failure {
                code,
                message: format!("cannot create '{}': {e}", p.display()),
            }
        })?),
        None => Box::new(crate::out::Stdout),
    };
    let mut w = std::io::BufWriter::with_capacity(1 << 20, sink);
    let mut err: Option<std::io::Error> = None;
    let outcome = batchlens_sim::simulate(&cfg, &mut |line| {
        if err.is_none() {
            if let Err(e) = w
                .write_all(line.as_bytes())
                .and_then(|_| w.write_all(b"\n"))
            {
                err = Some(e);
            }
        }
    });
    let res = match err {
        Some(e) => Err(e),
        None => w.flush(),
    };
    if let Err(e) = res {
        let what = match &args.out {
            Some(p) => format!("'{}'", p.display()),
            None => "stdout".to_string(),
        };
        return Err(crate::out::write_failure(&e, &what));
    }
    if let Some(p) = &args.outcome_json {
        let mut s = serde_json::to_string_pretty(&outcome).map_err(|e| Failure {
            code: EXIT_INTERNAL,
            message: format!("could not write the outcome: {e}"),
        })?;
        s.push('\n');
        std::fs::write(p, s).map_err(|e| Failure {
            code: EXIT_INTERNAL,
            message: format!("cannot write '{}': {e}", p.display()),
        })?;
    }
    Ok(())
}
