//! `batchlens compare BEFORE AFTER`: two logs (or two server runs of one log with
//! restarts) each judged on its own, then compared by the core.

use std::path::{Path, PathBuf};

use batchlens_core::{render, Analyzer, Engine, Options, Report};
use clap::ValueEnum;

use crate::{input, Failure, EXIT_INTERNAL};

#[derive(clap::Args)]
pub struct CompareArgs {
    /// BEFORE and AFTER, each one log (plain or gzip; `-` reads stdin for one of
    /// them), or one log holding several server runs (restarts).
    #[arg(num_args = 1..=2, required = true)]
    logs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    format: CompareFormat,
    /// Read only this engine's format instead of detecting it.
    #[arg(long, value_parser = crate::parse_engine)]
    engine: Option<Engine>,
    /// With one log: the two server runs to compare, `N,M` (1 = the first; default
    /// the last two).
    #[arg(long, value_name = "N,M", value_parser = parse_runs)]
    runs: Option<(u32, u32)>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum CompareFormat {
    Text,
    Json,
    Markdown,
}

fn parse_runs(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{s}' is not two run numbers N,M (1 = the first run)");
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    let n: u32 = a.trim().parse().map_err(|_| bad())?;
    let m: u32 = b.trim().parse().map_err(|_| bad())?;
    if n == 0 || m == 0 {
        return Err(bad());
    }
    if n == m {
        return Err(format!("'{s}': a run compared with itself"));
    }
    Ok((n, m))
}

/// One log read and judged (its run `run`, when given).
fn judge(path: &Path, engine: Option<Engine>, run: Option<u32>) -> Result<Report, Failure> {
    let mut a = Analyzer::new(Options {
        engine,
        run,
        ..Options::default()
    });
    input::read_all(std::slice::from_ref(&path.to_path_buf()), &mut a, false)?;
    let r = a.finish();
    let what = if path.as_os_str() == "-" {
        "stdin".to_string()
    } else {
        format!("'{}'", path.display())
    };
    let file = path.display().to_string();
    match render::input_problem(&r, &what, Some(&file), None, render::Front::Cli) {
        Some(msg) => Err(Failure::input(msg)),
        None => Ok(r),
    }
}

pub fn run(args: CompareArgs) -> Result<(), Failure> {
    let (before, after) = match &args.logs[..] {
        [b, a] => {
            if b.as_os_str() == "-" && a.as_os_str() == "-" {
                return Err(Failure::input(
                    "stdin holds one log: give the other as a file.",
                ));
            }
            if args.runs.is_some() {
                return Err(Failure::input(
                    "--runs picks two server runs of one log; with two logs, each is judged on its own run.",
                ));
            }
            (judge(b, args.engine, None)?, judge(a, args.engine, None)?)
        }
        [log] => runs_of(log, args.engine, args.runs)?,
        _ => unreachable!("clap takes one or two logs"),
    };
    let c = batchlens_core::compare(&before, &after);
    let out = match args.format {
        CompareFormat::Json => {
            let mut s = serde_json::to_string_pretty(&c).map_err(|e| Failure {
                code: EXIT_INTERNAL,
                message: format!("could not write the comparison: {e}"),
            })?;
            s.push('\n');
            s
        }
        CompareFormat::Text => render::compare_text(&c),
        CompareFormat::Markdown => render::compare_markdown(&c),
    };
    crate::out::write_stdout(out.as_bytes())
}

/// Two server runs of one log: the log read once per run judged.
fn runs_of(
    log: &Path,
    engine: Option<Engine>,
    runs: Option<(u32, u32)>,
) -> Result<(Report, Report), Failure> {
    if log.as_os_str() == "-" {
        return Err(Failure::input(
            "comparing the runs of one log reads it once per run: give a file, not stdin.",
        ));
    }
    let shown = log.display();
    let whole = judge(log, engine, runs.map(|r| r.1))?;
    let n = whole.runs.len() as u32;
    if n < 2 {
        return Err(Failure::input(format!(
            "'{shown}' holds one server run: give BEFORE and AFTER as two logs, or a log with a restart."
        )));
    }
    let (b, a) = runs.unwrap_or((n - 1, n));
    if let Some(x) = [b, a].into_iter().find(|x| *x > n) {
        return Err(Failure::input(format!(
            "--runs: '{shown}' holds {n} server runs, there is no run {x}."
        )));
    }
    if runs.is_none() && n > 2 {
        eprintln!("batchlens: '{shown}' holds {n} server runs; comparing runs {b} and {a} (--runs N,M picks others)");
    }
    let judged = |r: &Report| r.runs.iter().find(|x| x.analyzed).map(|x| x.run);
    let after = if judged(&whole) == Some(a) {
        whole
    } else {
        judge(log, engine, Some(a))?
    };
    let before = judge(log, engine, Some(b))?;
    for (r, k) in [(&before, b), (&after, a)] {
        if judged(r) != Some(k) {
            return Err(Failure::input(format!(
                "'{shown}': run {k} has no stats lines to judge."
            )));
        }
    }
    Ok((before, after))
}
