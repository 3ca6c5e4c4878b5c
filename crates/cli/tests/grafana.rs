//! deploy/grafana/batchlens-dashboard.json against what Grafana's import of a
//! classic dashboard model needs (a datasource input for each `${DS_…}`, no
//! fixed `id`, a valid `uid`, panels with unique ids that tile the 24-column
//! grid without overlap, each with its datasource and queries), and its queries
//! against what `batchlens watch` serves: every metric and label they name is
//! in a real exposition. (tests/prometheus.rs runs each query on scraped data.)

mod common;

use std::collections::BTreeSet;

use common::{repo, value_in, Watch};
use serde_json::Value;

const PANEL_TYPES: &[&str] = &[
    "timeseries",
    "stat",
    "bargauge",
    "gauge",
    "state-timeline",
    "table",
    "text",
    "row",
];

fn dashboard() -> Value {
    let text = std::fs::read_to_string(repo().join("deploy/grafana/batchlens-dashboard.json"))
        .expect("the dashboard");
    serde_json::from_str(&text).expect("the dashboard is JSON")
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is a string in {v}"))
}

/// `${NAME}` references in any string of the dashboard.
fn references(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(i) = rest.find("${") {
                let tail = &rest[i + 2..];
                let end = tail.find('}').expect("a closed ${…}");
                out.insert(tail[..end].to_string());
                rest = &tail[end..];
            }
        }
        Value::Array(a) => a.iter().for_each(|x| references(x, out)),
        Value::Object(o) => o.values().for_each(|x| references(x, out)),
        _ => {}
    }
}

#[test]
fn the_dashboard_is_a_classic_model_grafana_imports() {
    let d = dashboard();
    assert!(!str_of(&d, "title").is_empty());
    let uid = str_of(&d, "uid");
    assert!(
        (1..=40).contains(&uid.len())
            && uid
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "uid {uid}"
    );
    // An import creates a dashboard: no id of another Grafana's.
    assert!(d.get("id").is_none_or(Value::is_null));
    assert!(d["schemaVersion"].as_u64().is_some_and(|v| v >= 36));
    assert!(d["time"]["from"].is_string() && d["time"]["to"].is_string());
    assert!(d["annotations"]["list"].is_array());

    // Each ${…} is a datasource input of the import, or a template variable.
    let inputs: BTreeSet<String> = d["__inputs"]
        .as_array()
        .expect("__inputs")
        .iter()
        .map(|i| {
            assert_eq!(i["type"], "datasource");
            assert_eq!(i["pluginId"], "prometheus");
            str_of(i, "name").to_string()
        })
        .collect();
    let vars: BTreeSet<String> = d["templating"]["list"]
        .as_array()
        .expect("templating.list")
        .iter()
        .map(|v| {
            assert!(["query", "custom", "datasource", "interval", "constant"]
                .contains(&str_of(v, "type")));
            str_of(v, "name").to_string()
        })
        .collect();
    let mut refs = BTreeSet::new();
    references(&d, &mut refs);
    for r in &refs {
        assert!(
            inputs.contains(r) || vars.contains(r),
            "${{{r}}} is not defined"
        );
    }

    let required: BTreeSet<(String, String)> = d["__requires"]
        .as_array()
        .expect("__requires")
        .iter()
        .map(|r| (str_of(r, "type").to_string(), str_of(r, "id").to_string()))
        .collect();
    let panels = d["panels"].as_array().expect("panels");
    assert!(!panels.is_empty());
    let mut ids = BTreeSet::new();
    let mut cells = BTreeSet::new();
    for p in panels {
        let title = str_of(p, "title");
        let id = p["id"].as_u64().expect("a panel id");
        assert!(ids.insert(id), "panel id {id} twice");
        let ty = str_of(p, "type");
        assert!(PANEL_TYPES.contains(&ty), "{title}: type {ty}");
        assert!(
            required.contains(&("panel".to_string(), ty.to_string())),
            "{title}: __requires lists panel {ty}"
        );
        let g = &p["gridPos"];
        let (x, y, w, h) = (
            g["x"].as_u64().unwrap(),
            g["y"].as_u64().unwrap(),
            g["w"].as_u64().unwrap(),
            g["h"].as_u64().unwrap(),
        );
        assert!(w >= 1 && h >= 1 && x + w <= 24, "{title}: gridPos {g}");
        for cx in x..x + w {
            for cy in y..y + h {
                assert!(cells.insert((cx, cy)), "{title} overlaps another panel");
            }
        }
        assert_eq!(p["datasource"]["type"], "prometheus", "{title}");
        assert!(p["fieldConfig"]["defaults"].is_object(), "{title}");
        assert!(p["options"].is_object(), "{title}");
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{title}: no query");
        let refids: BTreeSet<&str> = targets.iter().map(|t| str_of(t, "refId")).collect();
        assert_eq!(refids.len(), targets.len(), "{title}: refIds repeat");
        for t in targets {
            assert!(!str_of(t, "expr").is_empty(), "{title}");
        }
    }
}

/// The `batchlens_…` names in a query, and the labels matched on each.
fn names_and_labels(expr: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("batchlens_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let name = tail[..end].to_string();
        let mut labels = Vec::new();
        if let Some(m) = tail[end..].strip_prefix('{') {
            let m = &m[..m.find('}').expect("a closed matcher")];
            for part in m.split(',') {
                let label: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                labels.push(label);
            }
        }
        out.push((name, labels));
        rest = &tail[end..];
    }
    out
}

#[test]
fn every_metric_and_label_the_dashboard_queries_is_served() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("server.log");
    std::fs::copy(repo().join("examples/sglang-dp-ranks.log"), &log).expect("copy");
    let w = Watch::start(&log, &["--window", "1000h", "--refresh", "100ms"]);
    let m = w.until(20, "a judgement", |m| {
        value_in(m, "batchlens_window_stat_lines").is_some_and(|v| v > 0.0)
    });
    // Prometheus adds these to every series it scrapes.
    let added = ["instance", "job"];
    let d = dashboard();
    let mut queried = 0;
    for p in d["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            let expr = str_of(t, "expr");
            for (name, labels) in names_and_labels(expr) {
                queried += 1;
                let samples: Vec<&str> = m
                    .lines()
                    .filter(|l| {
                        l.strip_prefix(name.as_str())
                            .is_some_and(|r| r.starts_with('{') || r.starts_with(' '))
                    })
                    .collect();
                assert!(!samples.is_empty(), "{expr}: {name} is not served");
                for l in labels.iter().filter(|l| !added.contains(&l.as_str())) {
                    assert!(
                        samples.iter().any(|s| s.contains(&format!("{l}=\""))),
                        "{expr}: {name} has no label {l}"
                    );
                }
            }
        }
    }
    assert!(queried >= 10, "{queried} metrics queried");
    // The template variable's query names a served metric.
    let var = &d["templating"]["list"][0]["definition"];
    let (name, _) = &names_and_labels(var.as_str().unwrap())[0];
    assert!(m.contains(&format!("\n{name} ")), "{name}");
}
