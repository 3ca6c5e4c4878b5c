//! The fleet's tables: `--export` CSV and Parquet read back with DuckDB (its
//! Python package, which scripts/setup.sh installs in target/tools/py) give
//! the sums of the JSON report's timeline; `--each` gives one JSON line per
//! file and an error line for a bad one; the queries of docs/fleet.md run on
//! those outputs and agree with the reports.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, diagnose_json, fixtures, have, repo};

/// A Python that imports duckdb: $BATCHLENS_PYTHON, setup.sh's venv, or python3.
fn duckdb_python() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("BATCHLENS_PYTHON").map(PathBuf::from),
        Some(repo().join("target/tools/py/bin/python")),
        Some(PathBuf::from("python3")),
    ];
    candidates.into_iter().flatten().find(|py| {
        Command::new(py)
            .args(["-c", "import duckdb"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn need_duckdb() -> Option<PathBuf> {
    let py = duckdb_python();
    have("DuckDB's Python package", py.is_some()).then(|| py.unwrap())
}

/// Rows of a DuckDB query, as JSON arrays.
fn sql(py: &Path, query: &str) -> Vec<Vec<serde_json::Value>> {
    let out = Command::new(py)
        .args([
            "-c",
            "import duckdb, json, sys\nrows = duckdb.sql(sys.argv[1]).fetchall()\nprint(json.dumps(rows, default=str))",
            query,
        ])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{query}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("rows as JSON")
}

fn quoted(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "''"))
}

const METRICS: [&str; 7] = [
    "samples",
    "running",
    "queued",
    "kv_usage",
    "gen_tok_s",
    "input_tok_s",
    "retractions",
];

/// Per (source, metric): the sum and the count of the values of the report's
/// timeline series (`all` and each source's).
fn report_sums(r: &serde_json::Value) -> BTreeMap<(String, String), (f64, u64)> {
    let mut series = vec![("all".to_string(), &r["timeline"]["points"])];
    for s in r["timeline"]["per_source"].as_array().unwrap() {
        series.push((s["source"].as_str().unwrap().to_string(), &s["points"]));
    }
    let mut sums = BTreeMap::new();
    for (source, points) in series {
        for p in points.as_array().unwrap() {
            for m in METRICS {
                if let Some(v) = p[m].as_f64() {
                    let e = sums
                        .entry((source.clone(), m.to_string()))
                        .or_insert((0.0, 0));
                    e.0 += v;
                    e.1 += 1;
                }
            }
        }
    }
    sums
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn exports_read_back_with_duckdb_give_the_sums_of_the_json_report() {
    let Some(py) = need_duckdb() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    // Several ranks (per-source series), and a vLLM log with its year-less stamps.
    for log in [
        repo().join("examples/sglang-dp-ranks.log"),
        fixtures().join("vllm/vllm_01_v1-prefill-heavy-waiting90.log"),
    ] {
        let report = diagnose_json(&[log.as_path()]);
        let expected = report_sums(&report);
        assert!(!expected.is_empty());
        for ext in ["parquet", "csv"] {
            let out = dir.path().join(format!("timeline.{ext}"));
            let st = Command::new(bin())
                .args(["diagnose", "--format", "json", "--export"])
                .arg(&out)
                .arg(&log)
                .output()
                .expect("diagnose --export");
            assert!(
                st.status.success(),
                "{}",
                String::from_utf8_lossy(&st.stderr)
            );
            // The report printed is the one exported.
            let printed: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
            assert_eq!(printed, report);
            let from = match ext {
                "parquet" => format!("read_parquet({})", quoted(&out)),
                _ => format!("read_csv({}, header = true)", quoted(&out)),
            };
            let cols = sql(&py, &format!("DESCRIBE SELECT * FROM {from}"));
            let names: Vec<&str> = cols.iter().map(|c| c[0].as_str().unwrap()).collect();
            assert_eq!(
                names,
                [
                    "time_s",
                    "timestamp",
                    "source",
                    "metric",
                    "value",
                    "run",
                    "file"
                ]
            );
            let rows = sql(
                &py,
                &format!(
                    "SELECT source, metric, sum(value), count(*) FROM {from} GROUP BY ALL ORDER BY ALL"
                ),
            );
            let got: BTreeMap<(String, String), (f64, u64)> = rows
                .iter()
                .map(|r| {
                    (
                        (
                            r[0].as_str().unwrap().to_string(),
                            r[1].as_str().unwrap().to_string(),
                        ),
                        (r[2].as_f64().unwrap(), r[3].as_u64().unwrap()),
                    )
                })
                .collect();
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                expected.keys().collect::<Vec<_>>(),
                "{ext} of {}",
                log.display()
            );
            for (k, (sum, n)) in &expected {
                let (gsum, gn) = got[k];
                assert!(
                    close(gsum, *sum) && gn == *n,
                    "{ext} {k:?}: {gsum} over {gn} rows, the report {sum} over {n}"
                );
            }
            // Every row names the file and the judged run; the first point's
            // timestamp is the report's first.
            let meta = sql(&py, &format!("SELECT DISTINCT file, run FROM {from}"));
            assert_eq!(meta.len(), 1);
            assert_eq!(
                meta[0][0].as_str(),
                Some(log.display().to_string().as_str())
            );
            let first = sql(
                &py,
                &format!("SELECT CAST(timestamp AS VARCHAR) FROM {from} WHERE time_s = 0 LIMIT 1"),
            );
            let stamp = first[0][0].as_str().unwrap().replace('T', " ");
            assert_eq!(Some(stamp.as_str()), report["first_timestamp"].as_str());
        }
    }
}

#[test]
fn jsonl_is_the_json_report_on_one_line_and_bad_flags_are_input_errors() {
    let log = fixtures().join("vllm/vllm_05_v1-mtp-kv-95pct-waiting43.log");
    let out = Command::new(bin())
        .args(["diagnose", "--format", "jsonl"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    let line: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(line, diagnose_json(&[log.as_path()]));
    let dir = tempfile::tempdir().expect("temp dir");
    for (args, says) in [
        (vec!["--export", "t.txt"], "name a .csv or a .parquet file"),
        (vec!["--each"], "--format jsonl"),
        (vec!["--each", "--format", "jsonl", "-"], "not stdin"),
    ] {
        let out = Command::new(bin())
            .current_dir(dir.path())
            .arg("diagnose")
            .arg(&log)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A directory of server logs, two of them bad; the files, sorted.
fn fleet_dir(dir: &Path) -> Vec<PathBuf> {
    let logs = dir.join("logs");
    std::fs::create_dir_all(logs.join("rack-2")).unwrap();
    for (name, from) in [
        (
            "a-sglang.log",
            "sglang/sglang_46_docs-reference-healthy-full-load.log",
        ),
        (
            "b-sglang-dp.log",
            "sglang/sglang_41_dp-tp-ep-pd-decode-rank-imbalance-uvicorn.log",
        ),
        ("c-vllm.log", "vllm/vllm_05_v1-mtp-kv-95pct-waiting43.log"),
        (
            "rack-2/d-vllm.log",
            "vllm/vllm_02_v0-heartbeat-kv-92pct-16running.log",
        ),
        (
            "rack-2/e-lmdeploy.log",
            "lmdeploy/synthetic_grouped-kv-full-queue.log",
        ),
        (
            "rack-2/f-trtllm.log",
            "trtllm/synthetic_serve-kv-reserved-queue.log",
        ),
    ] {
        std::fs::copy(fixtures().join(from), logs.join(name)).expect("copy a fixture");
    }
    std::fs::write(logs.join("b-empty.log"), b"").unwrap();
    std::fs::write(
        logs.join("rack-2/notes.txt"),
        b"not a server log\njust notes\n",
    )
    .unwrap();
    let mut files = [
        "a-sglang.log",
        "b-empty.log",
        "b-sglang-dp.log",
        "c-vllm.log",
        "rack-2/d-vllm.log",
        "rack-2/e-lmdeploy.log",
        "rack-2/f-trtllm.log",
        "rack-2/notes.txt",
    ]
    .iter()
    .map(|n| logs.join(n))
    .collect::<Vec<_>>();
    files.sort();
    files
}

fn each(dir: &Path, export: Option<&Path>) -> (i32, Vec<serde_json::Value>) {
    let mut cmd = Command::new(bin());
    cmd.args(["diagnose", "--each", "--format", "jsonl"])
        .arg(dir.join("logs"));
    if let Some(e) = export {
        cmd.arg("--export").arg(e);
    }
    let out = cmd.output().expect("diagnose --each");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

#[test]
fn each_gives_one_report_line_per_file_and_an_error_line_for_a_bad_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = fleet_dir(dir.path());
    let (code, lines) = each(dir.path(), None);
    assert_eq!(code, 2, "two files could not be judged");
    assert_eq!(lines.len(), files.len(), "one line per file");
    for (path, line) in files.iter().zip(&lines) {
        let mut line = line.as_object().expect("an object").clone();
        assert_eq!(
            line.remove("file")
                .and_then(|f| f.as_str().map(String::from)),
            Some(path.display().to_string()),
            "in order, each line names its file"
        );
        let bad = path.ends_with("b-empty.log") || path.ends_with("notes.txt");
        if bad {
            assert_eq!(line["exit_code"], 2, "{line:?}");
            assert!(line["error"].as_str().is_some_and(|e| !e.is_empty()));
            assert_eq!(line.len(), 2);
            // The error diagnose gives on its own.
            let alone = Command::new(bin())
                .arg("diagnose")
                .arg(path)
                .output()
                .unwrap();
            assert_eq!(alone.status.code(), Some(2));
            let said = String::from_utf8_lossy(&alone.stderr);
            assert!(said.contains(line["error"].as_str().unwrap()), "{said}");
        } else {
            // The report diagnose gives of that file alone.
            assert_eq!(
                serde_json::Value::Object(line),
                diagnose_json(&[path.as_path()]),
                "{}",
                path.display()
            );
        }
    }
}

/// The SQL blocks of docs/fleet.md, with their file names pointed at `dir`'s.
fn doc_queries(jsonl: &Path, parquet: &Path) -> Vec<String> {
    let doc = std::fs::read_to_string(repo().join("docs/fleet.md")).expect("docs/fleet.md");
    doc.split("```sql\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .map(|q| {
            q.replace("'fleet.jsonl'", &quoted(jsonl))
                .replace("'timeline.parquet'", &quoted(parquet))
        })
        .collect()
}

#[test]
fn the_fleet_queries_of_the_docs_agree_with_the_reports() {
    let Some(py) = need_duckdb() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    fleet_dir(dir.path());
    let parquet = dir.path().join("timeline.parquet");
    let (code, lines) = each(dir.path(), Some(&parquet));
    assert_eq!(code, 2);
    let jsonl = dir.path().join("fleet.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&jsonl, text).unwrap();
    let queries = doc_queries(&jsonl, &parquet);
    assert_eq!(queries.len(), 3, "docs/fleet.md's queries");

    // Verdicts by kind: the servers of each verdict, as the reports say.
    let mut by_kind: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in lines.iter().filter(|l| l.get("error").is_none()) {
        by_kind
            .entry(
                l["diagnosis"]["primary"]["kind"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
            .or_default()
            .push(l["file"].as_str().unwrap().to_string());
    }
    let rows = sql(&py, &queries[0]);
    assert_eq!(rows.len(), by_kind.len());
    for r in &rows {
        let files: Vec<String> = r[3]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect();
        assert_eq!(Some(&files), by_kind.get(r[0].as_str().unwrap()), "{r:?}");
        assert_eq!(r[1].as_u64(), Some(files.len() as u64));
    }

    // Throughput per server and minute: the mean of the report's points in that minute.
    let rows = sql(&py, &queries[1]);
    let mut expected: BTreeMap<(String, i64), (f64, f64)> = BTreeMap::new();
    for l in lines.iter().filter(|l| l.get("error").is_none()) {
        for p in l["timeline"]["points"].as_array().unwrap() {
            if let Some(v) = p["gen_tok_s"].as_f64() {
                let minute = (p["t_s"].as_f64().unwrap() / 60.0).floor() as i64;
                let e = expected
                    .entry((l["file"].as_str().unwrap().to_string(), minute))
                    .or_insert((0.0, 0.0));
                e.0 += v;
                e.1 += 1.0;
            }
        }
    }
    assert_eq!(rows.len(), expected.len());
    for r in &rows {
        let key = (
            r[0].as_str().unwrap().to_string(),
            r[1].as_f64().unwrap() as i64,
        );
        let (sum, n) = expected[&key];
        let mean = (sum / n * 10.0).round() / 10.0;
        assert!(close(r[2].as_f64().unwrap(), mean), "{r:?}: {mean}");
    }
    // On the wall clock: the logs with dated stamps, each once a minute at most.
    let rows = sql(&py, &queries[2]);
    assert!(!rows.is_empty());
    let dated: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert!(
        dated.iter().all(|f| !f.contains("vllm")),
        "vLLM prints no year: {dated:?}"
    );
}
