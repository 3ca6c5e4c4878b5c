//! Reads the client's benchmark figures: `--client FILE` (a pasted summary block or
//! `--save-result` JSON, detected by content) and the bare-figure flags.

use std::path::Path;

use batchlens_core::client::{parse_client_file, ClientFigures};

use crate::Failure;

/// The client figures from the flags, `None` when none was given.
pub fn read(
    file: Option<&Path>,
    throughput: Option<f64>,
    requests_per_s: Option<f64>,
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
            let figures = parse_client_file(&bytes).map_err(|e| {
                Failure::input(format!("'{}' is not a client summary: {e}.", p.display()))
            })?;
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
