//! The sentences a front end shows for an input with nothing to judge.

use crate::report::Report;

/// Who shows the message: the command line is told the command that unpacks a file
/// into batchlens, the page to unpack it and drop the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Front {
    Cli,
    Page,
}
use crate::text::num::count;

/// The servers whose stats lines batchlens reads, by the names `other_server` gives them:
/// a log of theirs without stats lines is told how to get them.
const READ_ENGINES: [&str; 4] = ["SGLang", "vLLM", "LMDeploy", "TensorRT-LLM"];

/// A report with nothing to diagnose is an input problem: what was read, and why
/// nothing could be judged. `what` names the input for the sentence (`'server.log'`,
/// `stdin`, `2 files`); `file` is the one file's path, for the command that unpacks it.
/// `first` is the first file's path when several were read: binary input is told by
/// the first bytes, those of the first file.
pub fn input_problem(
    r: &Report,
    what: &str,
    file: Option<&str>,
    first: Option<&str>,
    front: Front,
) -> Option<String> {
    let stats = r.input.stat_lines + r.input.damaged_stat_lines;
    if stats > 0 {
        return None;
    }
    if let Some(t) = &r.input.truncated_while_reading {
        return Some(format!(
            "'{}' shrank while it was read (truncated or rotated) before a stats line was read ({} of its {} bytes read); read it again once it holds the log.",
            t.file,
            crate::text::num::num(t.bytes_read as f64),
            crate::text::num::num(t.bytes_at_open as f64)
        ));
    }
    if r.input.bytes == 0 {
        return Some(match first {
            Some(_) => format!("the {what} are empty: there is no log to read."),
            None => format!("{what} is empty: there is no log to read."),
        });
    }
    let head = match first {
        Some(f) => format!("'{f}' (the first of {what})"),
        None => what.to_string(),
    };
    if let Some(f) = r
        .input
        .binary_format
        .as_ref()
        .filter(|_| r.input.looks_binary)
    {
        return Some(match (&f.unpack, file) {
            (Some(unpack), one) if front == Front::Page => format!(
                "{head} is packed with {}, not a text log; batchlens reads plain text and gzip. Unpack it first ({unpack} {} > server.log) and drop the log.",
                f.name,
                one.unwrap_or("FILE")
            ),
            (Some(unpack), Some(one)) => format!(
                "{head} is packed with {}, not a text log; batchlens reads plain text and gzip. Unpack it first: {unpack} '{}' | batchlens diagnose -",
                f.name, one
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
            crate::diagnose::stats_disabled_why(d),
            d.line,
            d.text
        ));
    }
    // A server batchlens reads, whose log holds none of its stats lines: told how to get them.
    if let Some(o) = r
        .input
        .other_server
        .as_ref()
        .filter(|o| READ_ENGINES.contains(&o.name.as_str()))
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
