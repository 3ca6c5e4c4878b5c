//! Reads the client's benchmark figures: `--client FILE` (a pasted summary block or
//! `--save-result` JSON, detected by content) and the bare-figure flags.

use std::io::Read;
use std::path::Path;

use batchlens_core::client::{parse_client_file, ClientFigures};
use batchlens_core::formats::{client_figures, Formats};

use crate::Failure;

/// The client figures from the flags, `None` when none was given.
pub fn read(
    file: Option<&Path>,
    throughput: Option<f64>,
    requests_per_s: Option<f64>,
    formats: &Formats,
) -> Result<Option<ClientFigures>, Failure> {
    for (name, v) in [
        ("--client-throughput", throughput),
        ("--client-requests-per-s", requests_per_s),
    ] {
        if let Some(v) = v {
            if !v.is_finite() || v <= 0.0 {
                return Err(Failure::input(format!(
                    "{name} must be a positive number, got {v}."
                )));
            }
        }
    }
    let flags = ClientFigures::from_flags(throughput, requests_per_s);
    let from_file =
        match file {
            None => None,
            Some(p) => {
                let bytes = read_capped(p)?;
                // A client's own progress lines, where a format file reads them.
                let figures = match client_figures(&bytes, formats) {
                Some(f) => f,
                None => parse_client_file(&bytes).map_err(|e| {
                    let hint = if formats.has_client() {
                        " (nor does any side = \"client\" format of the format files match a line)"
                    } else {
                        ""
                    };
                    Failure::input(format!("'{}' is not a client summary: {e}{hint}.", shown(p)))
                })?,
            };
                Some(figures)
            }
        };
    Ok(match (flags, from_file) {
        (Some(mut f), Some(file)) => {
            f.merge_missing(&file);
            f.source = file.source;
            Some(f)
        }
        (f, file) => f.or(file),
    })
}

/// The most a client file may hold. A benchmark's summary block is a few KB
/// and its `--save-result` JSON, even with every request's lengths and
/// latencies, a few MB; what is larger is something else, read no further.
pub const CLIENT_FILE_CAP: u64 = 16 * 1024 * 1024;

fn shown(p: &Path) -> String {
    if p.as_os_str() == "-" {
        "stdin".to_string()
    } else {
        format!("'{}'", p.display())
    }
}

/// The client file (`-`: stdin), read up to [`CLIENT_FILE_CAP`] and no
/// further: a larger one (or an endless one such as `/dev/zero`) is refused
/// without reading it whole.
fn read_capped(p: &Path) -> Result<Vec<u8>, Failure> {
    let cannot = |e: std::io::Error| {
        Failure::input(format!("cannot read the client file {}: {e}", shown(p)))
    };
    let too_big = || {
        Failure::input(format!(
            "the client file {} is larger than {} MiB: not a benchmark summary \
             (give the summary block or the --save-result JSON).",
            shown(p),
            CLIENT_FILE_CAP >> 20
        ))
    };
    let mut bytes = Vec::new();
    if p.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(CLIENT_FILE_CAP + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
    } else {
        let f = std::fs::File::open(p).map_err(cannot)?;
        let meta = f.metadata().map_err(cannot)?;
        if meta.is_dir() {
            return Err(Failure::input(format!(
                "the client file '{}' is a directory.",
                p.display()
            )));
        }
        if meta.is_file() && meta.len() > CLIENT_FILE_CAP {
            return Err(too_big());
        }
        f.take(CLIENT_FILE_CAP + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
    }
    if bytes.len() as u64 > CLIENT_FILE_CAP {
        return Err(too_big());
    }
    Ok(bytes)
}
