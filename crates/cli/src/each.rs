//! `batchlens diagnose … --each --format jsonl`: every file judged as its own
//! server, one JSON report per line (with its `file` first), so that a
//! directory of server logs becomes one table in DuckDB or ClickHouse.
//!
//! A file that cannot be judged gets an error object on its line,
//! `{"file": …, "error": …, "exit_code": 2}`, and the rest go on; the exit
//! code is then 2.

use std::path::{Path, PathBuf};

use batchlens_core::{whatif, Analyzer, Options};

use crate::export::{Export, Table};
use crate::{input, DiagnoseArgs, Failure, Format, EXIT_INTERNAL};

/// Directories are walked this deep at most (a symlink loop ends there).
const MAX_DEPTH: usize = 16;

pub fn run(args: &DiagnoseArgs) -> Result<(), Failure> {
    if args.format != Format::Jsonl {
        return Err(Failure::input(
            "--each prints one JSON report per line: add --format jsonl.",
        ));
    }
    if args.charts.is_some() {
        return Err(Failure::input(
            "--charts draws one report's charts; it does not go with --each.",
        ));
    }
    if args.files.is_empty() || args.files.iter().any(|f| f.as_os_str() == "-") {
        return Err(Failure::input(
            "--each judges files one by one: give their paths (or directories), not stdin.",
        ));
    }
    let formats = crate::formats::load(&args.format_file)?;
    let client = crate::client_input::read(
        args.client.as_deref(),
        args.client_throughput,
        args.client_requests_per_s,
        &formats,
    )?;
    let opts = Options {
        engine: args.engine,
        client,
        run: args.run,
        formats,
        roofline: args.hardware.choice()?,
        ..Options::default()
    };
    let mut export = args.export.as_deref().map(Export::create).transpose()?;
    let mut files = Vec::new();
    for f in &args.files {
        expand(f, 0, &mut files);
    }
    let mut failed = 0;
    for entry in &files {
        let line = match entry {
            Ok(path) => match judge(path, &opts, args) {
                Ok((json, table)) => {
                    if let Some(e) = export.as_mut() {
                        e.add(&table)?;
                    }
                    json
                }
                Err(f) => {
                    failed += 1;
                    error_line(path, &f)
                }
            },
            Err((path, f)) => {
                failed += 1;
                error_line(path, f)
            }
        };
        crate::out::write_stdout(format!("{line}\n").as_bytes())?;
    }
    if let Some(e) = export {
        e.finish()?;
    }
    if failed > 0 {
        return Err(Failure::input(format!(
            "{failed} of {} files could not be judged (their lines say why).",
            files.len()
        )));
    }
    Ok(())
}

/// One file's report as a JSON line, with its path first, and its timeline rows.
fn judge(path: &Path, opts: &Options, args: &DiagnoseArgs) -> Result<(String, Table), Failure> {
    let mut analyzer = Analyzer::new(opts.clone());
    let files = [path.to_path_buf()];
    input::read_all(&files, &mut analyzer, false)?;
    let mut report = analyzer.finish();
    if let Some(problem) = crate::input_problem(&report, &files) {
        return Err(Failure::input(problem));
    }
    if !args.what_if.is_empty() {
        report.what_if = whatif::predict(&report, &args.what_if);
    }
    let name = path.display().to_string();
    let json = serde_json::to_string(&report).map_err(|e| Failure {
        code: EXIT_INTERNAL,
        message: format!("could not write the report of '{name}': {e}"),
    })?;
    let table = Table::of(&report, &name);
    // The report's own fields follow the file's: `{"file":…,` then the rest.
    let file = serde_json::to_string(&name).unwrap_or_else(|_| "\"\"".to_string());
    let line = match json.strip_prefix('{') {
        Some(rest) if rest != "}" => format!("{{\"file\":{file},{rest}"),
        _ => format!("{{\"file\":{file}}}"),
    };
    Ok((line, table))
}

fn error_line(path: &Path, f: &Failure) -> String {
    // Written by hand so that `file` comes first, as on the report lines.
    let text = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string());
    format!(
        "{{\"file\":{},\"error\":{},\"exit_code\":{}}}",
        text(&path.display().to_string()),
        text(&f.message),
        f.code
    )
}

type Entry = Result<PathBuf, (PathBuf, Failure)>;

/// A path as the files it stands for: a directory's files, sorted, walked
/// into (names starting with a dot are skipped there).
fn expand(path: &Path, depth: usize, out: &mut Vec<Entry>) {
    if !path.is_dir() {
        out.push(Ok(path.to_path_buf()));
        return;
    }
    if depth >= MAX_DEPTH {
        return;
    }
    let entries = match std::fs::read_dir(path) {
        Ok(d) => d,
        Err(e) => {
            let f = Failure::input(format!(
                "the directory '{}' cannot be read: {e}.",
                path.display()
            ));
            out.push(Err((path.to_path_buf(), f)));
            return;
        }
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    names.sort();
    for p in names {
        expand(&p, depth + 1, out);
    }
}
