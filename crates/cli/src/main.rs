//! `batchlens`: reads inputs, feeds the core, prints. All analysis lives in batchlens-core.

mod charts;
mod chunks;
mod client_input;
mod compare;
mod each;
mod export;
mod follow;
mod formats;
mod hardware_args;
mod http;
mod input;
mod mapping;
mod metrics;
mod ordered;
mod out;
mod progress;
mod simulate;
mod watch;
mod window;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use batchlens_core::{render, whatif, Analyzer, Engine, Options, Report};
use clap::{Parser, Subcommand, ValueEnum};

/// Exit code for problems with the input (unreadable, empty, not a log).
const EXIT_INPUT: u8 = 2;
/// Exit code for a bug in batchlens.
const EXIT_INTERNAL: u8 = 1;

#[derive(Parser)]
#[command(
    name = "batchlens",
    version,
    about = "Why your LLM server's throughput is what it is, from its own logs."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read server logs and say what limits throughput.
    Diagnose(DiagnoseArgs),
    /// Write the log of a simulated SGLang or vLLM server (deterministic for a seed).
    Simulate(simulate::SimulateArgs),
    /// Follow a growing log, judge its last --window live, and serve it as metrics.
    Watch(watch::WatchArgs),
    /// Compare two logs (before and after a change), or two server runs of one log.
    Compare(compare::CompareArgs),
}

#[derive(clap::Args)]
struct DiagnoseArgs {
    /// Log files (plain or gzip), read in order as one log; `-` or nothing reads stdin.
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Read only this engine's format instead of detecting it.
    #[arg(long, value_parser = parse_engine)]
    engine: Option<Engine>,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Never draw a progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Also write the charts as SVG files into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    charts: Option<PathBuf>,
    /// The client's benchmark result (bench_serving / vllm bench serve summary text, or
    /// its --save-result JSON, at most 16 MiB; `-` reads stdin) to reconcile with the
    /// server's throughput.
    #[arg(long, value_name = "FILE")]
    client: Option<PathBuf>,
    /// Output tokens/s your client measured (reconciled with the server's rate).
    #[arg(long, value_name = "TOK_S")]
    client_throughput: Option<f64>,
    /// Requests/s your client measured.
    #[arg(long, value_name = "RPS")]
    client_requests_per_s: Option<f64>,
    /// Predict the steady state after a change, e.g. `kv_tokens=159000`, `max_running=64`,
    /// `client_concurrency=32`, `kv_dtype_fp8=1`, `mem_fraction_static=0.9`,
    /// `schedule_conservativeness=0.5` (repeat for several changes at once). Adds `what_if`
    /// to the report.
    #[arg(long = "what-if", value_name = "NAME=VALUE", value_parser = whatif::parse_change)]
    what_if: Vec<whatif::Change>,
    /// When the log holds several server runs (restarts), judge run N (1 = the first)
    /// instead of the last; the report lists every run.
    // Negative numbers are taken as the value, so `--run -1` is told it is out of range.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..))]
    run: Option<u32>,
    /// Also write the timeline in long format (time_s, timestamp, source, metric,
    /// value, run, file) to this .csv or .parquet file.
    #[arg(long, value_name = "FILE")]
    export: Option<PathBuf>,
    /// Judge each file (a directory: each file in it) as its own server: one JSON
    /// report per line (with --format jsonl); a file that fails gets an error line.
    #[arg(long)]
    each: bool,
    /// Line formats for a log batchlens does not know: a TOML or JSON format file, or a
    /// built-in one by name (llama.cpp, ollama, tgi); repeatable. See docs/formats.md.
    #[arg(long = "format-file", value_name = "FILE")]
    format_file: Vec<String>,
    #[command(flatten)]
    hardware: hardware_args::HardwareArgs,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    Text,
    Json,
    Markdown,
    /// The JSON report on one line (one line per file with --each).
    Jsonl,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

fn parse_engine(s: &str) -> Result<Engine, String> {
    Engine::from_name(s)
        .ok_or_else(|| format!("unknown engine '{s}' (known: sglang, vllm, lmdeploy, trtllm)"))
}

/// A failure to report: the message and the exit code.
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn input(message: impl Into<String>) -> Self {
        Failure {
            code: EXIT_INPUT,
            message: message.into(),
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    let outcome = std::panic::catch_unwind(|| match cli.command {
        Command::Diagnose(args) => diagnose(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Watch(args) => watch::run(args),
        Command::Compare(args) => compare::run(args),
    });
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(f)) => {
            if !f.message.is_empty() {
                out::warn(&f.message);
            }
            ExitCode::from(f.code)
        }
        Err(_) => {
            out::warn(
                "internal error (this is a bug; please report it with the input that caused it)",
            );
            ExitCode::from(EXIT_INTERNAL)
        }
    }
}

/// Help and version go to stdout, where a failed write is an error as for a
/// report; usage errors go to stderr (exit 2).
fn clap_exit(e: &clap::Error) -> ExitCode {
    if e.use_stderr() {
        let styled = e.render();
        out::stderr_text(&if std::io::stderr().is_terminal() {
            styled.ansi().to_string()
        } else {
            styled.to_string()
        });
        return ExitCode::from(EXIT_INPUT);
    }
    let styled = e.render();
    let text = if std::io::stdout().is_terminal() {
        styled.ansi().to_string()
    } else {
        styled.to_string()
    };
    match out::write_stdout(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                out::warn(&f.message);
            }
            ExitCode::from(f.code)
        }
    }
}

fn diagnose(args: DiagnoseArgs) -> Result<(), Failure> {
    if args.each {
        return each::run(&args);
    }
    let log_on_stdin = args.files.is_empty() || args.files.iter().any(|f| f.as_os_str() == "-");
    if log_on_stdin && args.client.as_ref().is_some_and(|c| c.as_os_str() == "-") {
        return Err(Failure::input(
            "--client - reads the client summary from stdin, so the log must be given as files.",
        ));
    }
    let formats = formats::load(&args.format_file)?;
    let client = client_input::read(
        args.client.as_deref(),
        args.client_throughput,
        args.client_requests_per_s,
        &formats,
    )?;
    let mut analyzer = Analyzer::new(Options {
        engine: args.engine,
        client,
        run: args.run,
        formats,
        roofline: args.hardware.choice()?,
        ..Options::default()
    });
    let show_progress = !args.no_progress && std::io::stderr().is_terminal();
    let truncated = input::read_all(&args.files, &mut analyzer, show_progress)?;
    let mut report = analyzer.finish();
    if let Some(t) = truncated {
        // The text and Markdown reports say it themselves.
        if args.format == Format::Json {
            out::warn(&format!(
            "'{}' shrank while it was read (truncated or rotated): the report covers the {} bytes read of the {} it held when opened.",
            t.file,
            render::num(t.bytes_read as f64),
            render::num(t.bytes_at_open as f64)
        ));
        }
        report.input.truncated_while_reading = Some(t);
    }
    if let Some(n) = args.run {
        // Every restart starts a run, listed or not.
        let runs = report.events.restarts + 1;
        let held = format!(
            "the log holds {}",
            render::count(runs as f64, "server run", "server runs")
        );
        if u64::from(n) > runs {
            return Err(Failure::input(format!(
                "--run {n}: {held}; give a run from 1 to {runs}."
            )));
        }
        let judged = report.runs.iter().find(|r| r.analyzed).map(|r| r.run);
        if judged.unwrap_or(1) != n {
            out::warn(&format!(
                "--run {n}: run {n} has no stats lines to judge ({held}); judging {}",
                judged.map_or("it".to_string(), |j| format!("run {j}"))
            ));
        }
    }
    if let (false, Some(why)) = (args.what_if.is_empty(), whatif::withheld(&report)) {
        out::warn(&format!("--what-if: {why}"));
    } else if !args.what_if.is_empty() {
        report.what_if = whatif::predict(&report, &args.what_if);
        if report.what_if.is_none() {
            out::warn(
                "--what-if: no prediction, the log shows no steady state with running requests and a generation throughput to fit",
            );
        }
    }
    if let Some(dir) = &args.charts {
        charts::write(&report, dir)?;
    }
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let problem = input_problem(&report, &args.files);
    if let (Some(path), None) = (&args.export, &problem) {
        export::one(&report, &args.files, path)?;
    }
    let text = match args.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&report).map_err(|e| Failure {
                code: EXIT_INTERNAL,
                message: format!("could not write the report: {e}"),
            })?;
            s.push('\n');
            s
        }
        Format::Jsonl => {
            let mut s = serde_json::to_string(&report).map_err(|e| Failure {
                code: EXIT_INTERNAL,
                message: format!("could not write the report: {e}"),
            })?;
            s.push('\n');
            s
        }
        Format::Text if problem.is_some() => String::new(),
        Format::Text => render::text(&report, color) + &render::what_if_text(&report, ""),
        Format::Markdown if problem.is_some() => String::new(),
        Format::Markdown => render::markdown(&report) + &render::what_if_text(&report, "## "),
    };
    out::write_stdout(text.as_bytes())?;
    match problem {
        Some(msg) => Err(Failure::input(msg)),
        None => Ok(()),
    }
}

/// A report with nothing to diagnose is an input problem: say what was read.
fn input_problem(r: &Report, files: &[PathBuf]) -> Option<String> {
    let what = match files {
        [] => "stdin".to_string(),
        [one] if one.as_os_str() == "-" => "stdin".to_string(),
        [one] => format!("'{}'", one.display()),
        many => format!("{} files", many.len()),
    };
    let file = match files {
        [one] => Some(one.display().to_string()),
        _ => None,
    };
    let first = match files {
        [first, _, ..] => Some(first.display().to_string()),
        _ => None,
    };
    render::input_problem(
        r,
        &what,
        file.as_deref(),
        first.as_deref(),
        render::Front::Cli,
    )
}
