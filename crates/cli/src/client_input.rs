//! Reads the client's benchmark figures: `--client FILE` (a pasted summary block or
//! `--save-result` JSON, detected by content) and the bare-figure flags.

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
    let from_file = match file {
        None => None,
        Some(p) => {
            let bytes = std::fs::read(p).map_err(|e| {
                Failure::input(format!(
                    "cannot read the client file '{}': {e}",
                    p.display()
                ))
            })?;
            // A client's own progress lines, where a format file reads them.
            let progress = client_figures(&bytes, formats);
            let figures = match progress {
                Some(f) => f,
                None => parse_client_file(&bytes).map_err(|e| {
                    let hint = if formats.has_client() {
                        " (nor does any side = \"client\" format of the format files match a line)"
                    } else {
                        ""
                    };
                    Failure::input(format!(
                        "'{}' is not a client summary: {e}{hint}.",
                        p.display()
                    ))
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
