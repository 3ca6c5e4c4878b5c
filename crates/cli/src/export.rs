//! `--export timeline.csv|timeline.parquet`: the report's timeline in long
//! format, one row per point and metric, for DuckDB, ClickHouse or a
//! spreadsheet: `time_s, timestamp, source, metric, value, run, file`.
//!
//! The points are the report's own (`timeline.points` for all ranks together,
//! source `all`; `timeline.per_source` for each rank or engine when there are
//! several), so the sum of a metric's values over a source's rows is the sum
//! over that series in the JSON report. Metrics are the points' fields:
//! `samples`, `running`, `queued`, `kv_usage`, `gen_tok_s`, `input_tok_s`,
//! `retractions`; a point without a value for one has no row for it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use batchlens_core::report::Report;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

use crate::metrics::ALL_SOURCES;
use crate::{Failure, EXIT_INTERNAL};

pub const COLUMNS: [&str; 7] = [
    "time_s",
    "timestamp",
    "source",
    "metric",
    "value",
    "run",
    "file",
];

const SCHEMA: &str = "message timeline {
    required double time_s;
    optional binary timestamp (STRING);
    required binary source (STRING);
    required binary metric (STRING);
    required double value;
    required int32 run;
    required binary file (STRING);
}";

/// One report's rows, column by column (its run and file are the same for all).
#[derive(Default)]
pub struct Table {
    pub time_s: Vec<f64>,
    pub timestamp: Vec<Option<String>>,
    pub source: Vec<String>,
    pub metric: Vec<&'static str>,
    pub value: Vec<f64>,
    pub run: i32,
    pub file: String,
}

impl Table {
    pub fn of(r: &Report, file: &str) -> Table {
        let mut t = Table {
            run: r
                .runs
                .iter()
                .find(|x| x.analyzed)
                .map_or(1, |x| x.run as i32),
            file: file.to_string(),
            ..Table::default()
        };
        let first = r.first_timestamp.as_deref().and_then(Stamp::parse);
        // The points' type is the report's (named by its path in the core only).
        let series = std::iter::once((ALL_SOURCES, &r.timeline.points)).chain(
            r.timeline
                .per_source
                .iter()
                .map(|s| (s.source.as_str(), &s.points)),
        );
        for (source, points) in series {
            for p in points {
                let stamp = first.as_ref().map(|f| f.plus(p.t_s));
                t.point(
                    source,
                    p.t_s,
                    stamp,
                    [
                        ("samples", Some(p.samples as f64)),
                        ("running", p.running),
                        ("queued", p.queued),
                        ("kv_usage", p.kv_usage),
                        ("gen_tok_s", p.gen_tok_s),
                        ("input_tok_s", p.input_tok_s),
                        ("retractions", Some(p.retractions as f64)),
                    ],
                );
            }
        }
        t
    }

    fn point(
        &mut self,
        source: &str,
        t_s: f64,
        stamp: Option<String>,
        values: [(&'static str, Option<f64>); 7],
    ) {
        for (metric, v) in values {
            let Some(v) = v.filter(|v| v.is_finite()) else {
                continue;
            };
            self.time_s.push(t_s);
            self.timestamp.push(stamp.clone());
            self.source.push(source.to_string());
            self.metric.push(metric);
            self.value.push(v);
        }
    }

    pub fn len(&self) -> usize {
        self.value.len()
    }
}

/// Writes one report's rows: its files read as one log are named together.
pub fn one(r: &Report, files: &[PathBuf], path: &Path) -> Result<(), Failure> {
    let name = match files {
        [] => "-".to_string(),
        many => many
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(","),
    };
    let mut e = Export::create(path)?;
    e.add(&Table::of(r, &name))?;
    e.finish()
}

/// Where rows go: a CSV or a Parquet file, told by the path's extension.
pub struct Export {
    path: PathBuf,
    sink: Sink,
}

enum Sink {
    Csv(BufWriter<File>),
    Parquet(Box<SerializedFileWriter<File>>),
}

impl Export {
    pub fn create(path: &Path) -> Result<Export, Failure> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        let shown = path.display();
        let open = || {
            File::create(path)
                .map_err(|e| Failure::input(format!("--export: cannot write '{shown}': {e}.")))
        };
        let sink = match ext.as_deref() {
            Some("csv") => {
                let mut w = BufWriter::new(open()?);
                writeln!(w, "{}", COLUMNS.join(",")).map_err(|e| write_error(path, e))?;
                Sink::Csv(w)
            }
            Some("parquet") => {
                let schema = parquet::schema::parser::parse_message_type(SCHEMA)
                    .map_err(|e| write_error(path, e))?;
                let props = WriterProperties::builder()
                    .set_created_by(format!("batchlens {}", env!("CARGO_PKG_VERSION")))
                    .build();
                let w = SerializedFileWriter::new(open()?, Arc::new(schema), Arc::new(props))
                    .map_err(|e| write_error(path, e))?;
                Sink::Parquet(Box::new(w))
            }
            _ => {
                return Err(Failure::input(format!(
                    "--export '{shown}': name a .csv or a .parquet file."
                )))
            }
        };
        Ok(Export {
            path: path.to_path_buf(),
            sink,
        })
    }

    /// Adds one report's rows (a Parquet row group of their own).
    pub fn add(&mut self, t: &Table) -> Result<(), Failure> {
        let path = self.path.clone();
        match &mut self.sink {
            Sink::Csv(w) => csv_rows(w, t).map_err(|e| write_error(&path, e)),
            Sink::Parquet(w) => parquet_rows(w, t).map_err(|e| write_error(&path, e)),
        }
    }

    pub fn finish(self) -> Result<(), Failure> {
        let path = self.path;
        match self.sink {
            Sink::Csv(mut w) => w.flush().map_err(|e| write_error(&path, e)),
            Sink::Parquet(w) => w.close().map(|_| ()).map_err(|e| write_error(&path, e)),
        }
    }
}

fn write_error(path: &Path, e: impl std::fmt::Display) -> Failure {
    Failure {
        code: EXIT_INTERNAL,
        message: format!("--export: could not write '{}': {e}", path.display()),
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

fn csv_rows(w: &mut impl Write, t: &Table) -> std::io::Result<()> {
    let file = csv_field(&t.file);
    for i in 0..t.len() {
        writeln!(
            w,
            "{},{},{},{},{},{},{}",
            t.time_s[i],
            csv_field(t.timestamp[i].as_deref().unwrap_or("")),
            csv_field(&t.source[i]),
            t.metric[i],
            t.value[i],
            t.run,
            file
        )?;
    }
    Ok(())
}

fn parquet_rows(w: &mut SerializedFileWriter<File>, t: &Table) -> parquet::errors::Result<()> {
    if t.len() == 0 {
        return Ok(());
    }
    let bytes = |v: &[&str]| -> Vec<ByteArray> { v.iter().map(|s| ByteArray::from(*s)).collect() };
    let stamps: Vec<ByteArray> = t
        .timestamp
        .iter()
        .flatten()
        .map(|s| ByteArray::from(s.as_str()))
        .collect();
    let defined: Vec<i16> = t.timestamp.iter().map(|s| s.is_some() as i16).collect();
    let sources: Vec<&str> = t.source.iter().map(String::as_str).collect();
    let runs = vec![t.run; t.len()];
    let files = vec![t.file.as_str(); t.len()];
    let mut rg = w.next_row_group()?;
    let mut k = 0;
    while let Some(mut col) = rg.next_column()? {
        match k {
            0 => {
                col.typed::<DoubleType>()
                    .write_batch(&t.time_s, None, None)?;
            }
            1 => {
                col.typed::<ByteArrayType>()
                    .write_batch(&stamps, Some(&defined), None)?;
            }
            2 => {
                col.typed::<ByteArrayType>()
                    .write_batch(&bytes(&sources), None, None)?;
            }
            3 => {
                col.typed::<ByteArrayType>()
                    .write_batch(&bytes(&t.metric), None, None)?;
            }
            4 => {
                col.typed::<DoubleType>()
                    .write_batch(&t.value, None, None)?;
            }
            5 => {
                col.typed::<Int32Type>().write_batch(&runs, None, None)?;
            }
            _ => {
                col.typed::<ByteArrayType>()
                    .write_batch(&bytes(&files), None, None)?;
            }
        }
        col.close()?;
        k += 1;
    }
    rg.close()?;
    Ok(())
}

/// A report's first timestamp, to which a point's seconds are added: written
/// back in the form the log used (with the date when it had one).
#[derive(Debug, Clone, PartialEq)]
struct Stamp {
    /// Days since 1970-01-01 (of the year 2000 when the log gives no year).
    days: Option<i64>,
    has_year: bool,
    second_of_day: f64,
}

impl Stamp {
    /// `YYYY-MM-DD HH:MM:SS[.fff]`, `MM-DD HH:MM:SS[.fff]` or `HH:MM:SS[.fff]`:
    /// the forms the report writes its timestamps in.
    fn parse(s: &str) -> Option<Stamp> {
        let (date, time) = match s.rsplit_once(' ') {
            Some((d, t)) => (Some(d), t),
            None => (None, s),
        };
        let mut hms = time.splitn(3, ':');
        let h: u32 = hms.next()?.parse().ok()?;
        let m: u32 = hms.next()?.parse().ok()?;
        let sec: f64 = hms.next()?.parse().ok()?;
        if h > 23 || m > 59 || !(0.0..61.0).contains(&sec) {
            return None;
        }
        let second_of_day = f64::from(h * 3600 + m * 60) + sec;
        let Some(date) = date else {
            return Some(Stamp {
                days: None,
                has_year: false,
                second_of_day,
            });
        };
        let parts: Vec<&str> = date.split('-').collect();
        let num = |s: &str| s.parse::<i64>().ok();
        let (y, mo, d, has_year) = match parts[..] {
            [y, mo, d] => (num(y)?, num(mo)?, num(d)?, true),
            [mo, d] => (2000, num(mo)?, num(d)?, false),
            _ => return None,
        };
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
            return None;
        }
        Some(Stamp {
            days: Some(days_from_civil(y, mo, d)),
            has_year,
            second_of_day,
        })
    }

    /// This stamp `secs` later, as text.
    fn plus(&self, secs: f64) -> String {
        let total = self.second_of_day + secs;
        let day_shift = (total / 86_400.0).floor();
        let sod = total - day_shift * 86_400.0;
        let whole = sod.floor() as u64;
        let ms = ((sod - whole as f64) * 1000.0).round() as u64;
        let (whole, ms) = if ms >= 1000 {
            (whole + 1, 0)
        } else {
            (whole, ms)
        };
        let (h, m, s) = ((whole / 3600) % 24, (whole / 60) % 60, whole % 60);
        let time = if ms > 0 {
            format!("{h:02}:{m:02}:{s:02}.{ms:03}")
        } else {
            format!("{h:02}:{m:02}:{s:02}")
        };
        let Some(days) = self.days else {
            return time;
        };
        let (y, mo, d) = civil_from_days(days + day_shift as i64 + (whole / 86_400) as i64);
        if self.has_year {
            format!("{y:04}-{mo:02}-{d:02} {time}")
        } else {
            format!("{mo:02}-{d:02} {time}")
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (the inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_points_seconds_move_the_first_timestamp_across_days_and_years() {
        let s = Stamp::parse("2025-12-31 23:59:30").expect("parses");
        assert_eq!(s.plus(0.0), "2025-12-31 23:59:30");
        assert_eq!(s.plus(45.5), "2026-01-01 00:00:15.500");
        assert_eq!(
            Stamp::parse("2024-02-28 12:00:00").unwrap().plus(86_400.0),
            "2024-02-29 12:00:00"
        );
        assert_eq!(
            Stamp::parse("03-17 15:38:10").unwrap().plus(20.0),
            "03-17 15:38:30"
        );
        assert_eq!(
            Stamp::parse("23:59:59.250").unwrap().plus(1.0),
            "00:00:00.250"
        );
        assert_eq!(Stamp::parse("not a time"), None);
        for d in [-800_000, -1, 0, 59, 10_956, 20_000, 2_000_000] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }

    #[test]
    fn csv_fields_from_the_log_are_quoted() {
        assert_eq!(csv_field("DP0"), "DP0");
        assert_eq!(csv_field("a,\"b\"\n"), "\"a,\"\"b\"\"\n\"");
    }
}
