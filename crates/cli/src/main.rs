//! `batchlens`: reads inputs, feeds the core, prints. All analysis lives in batchlens-core.

mod charts;
mod chunks;
mod client_input;
mod input;
mod ordered;
mod out;
mod progress;
mod simulate;
mod window;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use batchlens_core::render::count;
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
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    Text,
    Json,
    Markdown,
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
    let log_on_stdin = args.files.is_empty() || args.files.iter().any(|f| f.as_os_str() == "-");
    if log_on_stdin && args.client.as_ref().is_some_and(|c| c.as_os_str() == "-") {
        return Err(Failure::input(
            "--client - reads the client summary from stdin, so the log must be given as files.",
        ));
    }
    let client = client_input::read(
        args.client.as_deref(),
        args.client_throughput,
        args.client_requests_per_s,
    )?;
    let mut analyzer = Analyzer::new(Options {
        engine: args.engine,
        client,
        run: args.run,
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
            count(runs as f64, "server run", "server runs")
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
    if !args.what_if.is_empty() {
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
    let text = match args.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&report).map_err(|e| Failure {
                code: EXIT_INTERNAL,
                message: format!("could not write the report: {e}"),
            })?;
            s.push('\n');
            s
        }
        Format::Text if problem.is_some() => String::new(),
        Format::Text => render::text(&report, color) + &what_if_text(&report, ""),
        Format::Markdown if problem.is_some() => String::new(),
        Format::Markdown => render::markdown(&report) + &what_if_text(&report, "## "),
    };
    out::write_stdout(text.as_bytes())?;
    match problem {
        Some(msg) => Err(Failure::input(msg)),
        None => Ok(()),
    }
}

/// The `--what-if` prediction in words (the JSON carries it as `what_if`).
fn what_if_text(r: &Report, heading: &str) -> String {
    let Some(w) = &r.what_if else {
        return String::new();
    };
    let n = render::num;
    let changes: Vec<String> = w
        .changes
        .iter()
        .map(|c| format!("{}={}", c.parameter, c.value))
        .collect();
    let p = &w.predicted;
    let mut s = format!(
        "\n{heading}What if {}\n  ~{} running ({}–{}) and ~{} tok/s ({}–{}) instead of {} and {}",
        changes.join(", "),
        n(p.running_requests),
        n(p.running_low),
        n(p.running_high),
        n(p.gen_throughput_tok_s),
        n(p.low),
        n(p.high),
        n(w.baseline.running_requests),
        n(w.baseline.gen_throughput_tok_s),
    );
    if let Some(q) = p.queued_requests {
        s.push_str(&format!("; ~{} waiting", n(q)));
    }
    s.push_str(&format!(
        "; admission bound by {}\n  model: {}\n",
        p.bound_by, w.model
    ));
    for note in &w.notes {
        s.push_str(&format!("  note: {note}\n"));
    }
    s
}

/// A report with nothing to diagnose is an input problem: say what was read.
fn input_problem(r: &Report, files: &[PathBuf]) -> Option<String> {
    let stats = r.input.stat_lines + r.input.damaged_stat_lines;
    if stats > 0 {
        return None;
    }
    if let Some(t) = &r.input.truncated_while_reading {
        return Some(format!(
            "'{}' shrank while it was read (truncated or rotated) before a stats line was read ({} of its {} bytes read); read it again once it holds the log.",
            t.file,
            render::num(t.bytes_read as f64),
            render::num(t.bytes_at_open as f64)
        ));
    }
    let what = match files {
        [] => "stdin".to_string(),
        [one] if one.as_os_str() == "-" => "stdin".to_string(),
        [one] => format!("'{}'", one.display()),
        many => format!("{} files", many.len()),
    };
    if r.input.bytes == 0 {
        return Some(match files {
            [_, _, ..] => format!("the {what} are empty: there is no log to read."),
            _ => format!("{what} is empty: there is no log to read."),
        });
    }
    // Binary input is told by its first bytes: those of the first file.
    let head = match files {
        [first, _, ..] => format!("'{}' (the first of {} files)", first.display(), files.len()),
        _ => what.clone(),
    };
    if let Some(f) = r
        .input
        .binary_format
        .as_ref()
        .filter(|_| r.input.looks_binary)
    {
        return Some(match (&f.unpack, files) {
            (Some(unpack), [one]) => format!(
                "{head} is packed with {}, not a text log; batchlens reads plain text and gzip. Unpack it first: {unpack} '{}' | batchlens diagnose -",
                f.name,
                one.display()
            ),
            (Some(unpack), _) => format!(
                "{head} is packed with {}, not a text log; batchlens reads plain text and gzip. Unpack it first: {unpack} FILE | batchlens diagnose -",
                f.name
            ),
            (None, _) => format!(
                "{head} is a {}, not a text log; give a server log file (plain text or .gz).",
                f.name
            ),
        });
    }
    if r.input.looks_binary {
        return Some(format!(
            "{head} is not a text log ({} bytes of binary data); give a server log file (plain text or .gz).",
            r.input.bytes
        ));
    }
    if let Some(d) = &r.input.stats_disabled {
        return Some(format!(
            "no scheduler stats lines in {what}: {} (line {}: {}).",
            batchlens_core::diagnose::stats_disabled_why(d),
            d.line,
            d.text
        ));
    }
    // A server batchlens reads, whose log holds none of its stats lines: told how to get them.
    if let Some(o) = r
        .input
        .other_server
        .as_ref()
        .filter(|o| batchlens_core::engines::Engine::from_name(&o.name).is_some())
    {
        return Some(format!(
            "{what} looks like {} log (line {}: {}) but holds none of its stats lines. {}.",
            o.a_name, o.first_line, o.text, o.note
        ));
    }
    if let Some(o) = &r.input.other_server {
        return Some(format!(
            "{what} looks like {} log, not an SGLang, vLLM, LMDeploy or TensorRT-LLM one (line {}: {}). {}. \
             {READS}; none were found in {}.",
            o.a_name,
            o.first_line,
            o.text,
            o.note,
            count(r.input.lines as f64, "line", "lines")
        ));
    }
    Some(format!(
        "no scheduler stats lines found in {what} ({} read: {}, {}). \
         {READS}; make sure the server logged at INFO level{}",
        count(r.input.lines as f64, "line", "lines"),
        count(
            r.input.other_lines as f64,
            "other known line",
            "other known lines"
        ),
        count(
            r.input.unrecognized_lines as f64,
            "unrecognized line",
            "unrecognized lines"
        ),
        match r.input.unrecognized_examples.first() {
            Some(e) => format!(
                ". First line that looks like stats (line {}): {}",
                e.line, e.text
            ),
            None => ".".to_string(),
        }
    ))
}

/// What batchlens reads, for the messages of a log it finds nothing in.
const READS: &str = "batchlens reads SGLang 'Decode batch'/'Prefill batch' lines, vLLM 'Avg prompt throughput … \
     Running: … reqs' lines, LMDeploy's 'Avg thr (in/out) …' metrics lines and TensorRT-LLM's iteration stats";
