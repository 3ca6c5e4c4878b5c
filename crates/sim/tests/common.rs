//! Helpers shared by the integration tests: run a config into lines and parse fields.
#![allow(dead_code)]

use batchlens_sim::{simulate, SimConfig, SimOutcome};

pub fn run(cfg: &SimConfig) -> (Vec<String>, SimOutcome) {
    let mut lines = Vec::new();
    let out = simulate(cfg, &mut |l| lines.push(l.to_string()));
    (lines, out)
}

/// Splits an SGLang line into (timestamp, rank prefix, message).
pub fn sgl_prefix(line: &str) -> Option<(&str, &str, &str)> {
    let rest = line.strip_prefix('[')?;
    let close = rest.find("] ")?;
    let inside = &rest[..close];
    let msg = &rest[close + 2..];
    if inside.len() < 19 {
        return None;
    }
    Some((&inside[..19], inside[19..].trim(), msg))
}

/// `key: value` pairs of a stats body (after the header), in order.
pub fn fields(body: &str) -> Vec<(String, String)> {
    body.split(", ")
        .map(|kv| {
            let (k, v) = kv.rsplit_once(": ").unwrap_or((kv, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

pub fn num(fields: &[(String, String)], key: &str) -> f64 {
    let v = &fields
        .iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("missing {key} in {fields:?}"))
        .1;
    v.trim_end_matches('%')
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("bad number {v:?} for {key}"))
}

pub fn keys(fields: &[(String, String)]) -> Vec<&str> {
    fields.iter().map(|(k, _)| k.as_str()).collect()
}

/// Decode lines as parsed field lists, with their timestamps.
pub fn decode_lines(lines: &[String]) -> Vec<(String, Vec<(String, String)>)> {
    lines
        .iter()
        .filter_map(|l| {
            let (ts, _, msg) = sgl_prefix(l)?;
            let body = msg.strip_prefix("Decode batch, ")?;
            Some((ts.to_string(), fields(body)))
        })
        .collect()
}

pub fn prefill_lines(lines: &[String]) -> Vec<(String, Vec<(String, String)>)> {
    lines
        .iter()
        .filter_map(|l| {
            let (ts, _, msg) = sgl_prefix(l)?;
            let body = msg.strip_prefix("Prefill batch, ")?;
            Some((ts.to_string(), fields(body)))
        })
        .collect()
}

/// Seconds since the epoch of a `YYYY-MM-DD HH:MM:SS` stamp.
pub fn secs(ts: &str) -> i64 {
    batchlens_sim::timefmt::parse_datetime(ts).expect("timestamp")
}
