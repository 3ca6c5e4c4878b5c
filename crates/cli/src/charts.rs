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
