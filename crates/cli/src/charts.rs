//! `--charts DIR`: writes each chart of the report as an SVG file.

use std::path::Path;

use batchlens_core::charts::{self, Chart, ChartData, Theme};
use batchlens_core::Report;

use crate::Failure;

/// Size of the SVG charts, pixels.
const SIZE: (u32, u32) = (960, 420);

/// Writes `throughput.svg`, `concurrency.svg`, `kv_usage.svg` and `prefill.svg` into `dir` (created if missing).
pub fn write(report: &Report, dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::input(format!(
            "could not create the charts directory '{}': {e}",
            dir.display()
        ))
    })?;
    let data = ChartData::from_report(report);
    for chart in Chart::ALL {
        let svg = charts::svg(&data, None, chart, &Theme::light(), SIZE).map_err(Failure::input)?;
        let path = dir.join(format!("{}.svg", chart.name()));
        std::fs::write(&path, svg)
            .map_err(|e| Failure::input(format!("could not write '{}': {e}", path.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_four_svg_charts_into_a_new_directory() {
        let log = std::fs::read("../../examples/sglang-retractions.log").unwrap();
        let report = batchlens_core::analyze(&log, batchlens_core::Options::default());
        let dir = std::env::temp_dir().join(format!("batchlens-charts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write(&report, &dir.join("nested")).ok().unwrap();
        for name in ["throughput", "concurrency", "kv_usage", "prefill"] {
            let svg =
                std::fs::read_to_string(dir.join("nested").join(format!("{name}.svg"))).unwrap();
            assert!(
                svg.starts_with("<svg") && svg.contains("<polyline"),
                "{name}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_directory_is_an_input_error() {
        let report = batchlens_core::analyze(b"", batchlens_core::Options::default());
        let file = std::env::temp_dir().join(format!("batchlens-not-a-dir-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        let err = write(&report, &file.join("charts")).err().unwrap();
        assert_eq!(err.code, 2);
        assert!(err
            .message
            .contains("could not create the charts directory"));
        std::fs::remove_file(&file).unwrap();
    }
}
