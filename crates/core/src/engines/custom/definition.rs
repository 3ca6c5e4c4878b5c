//! A format file (TOML or JSON) read into [`Format`]s, with errors that name
//! the line of the file they are about.

use std::collections::BTreeMap;

use regex::bytes::Regex;

use super::clock::TimeFormat;
use super::{Captures, Counting, Format, Rate, Side, Usage};
use crate::engines::Engine;
use crate::model::SampleKind;

/// What is wrong with a format file, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// 1-based line of the format file, where it is known.
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// The captures a format's expression may name, and what each is.
pub const CAPTURES: &[(&str, &str)] = &[
    ("time", "the line's time, read with time_format"),
    (
        "source",
        "a rank or instance label: each source is a series of its own",
    ),
    ("running", "requests running"),
    ("waiting", "requests waiting (queued)"),
    (
        "kv_usage",
        "KV-cache usage, as declared by kv_usage = fraction|percent",
    ),
    ("kv_tokens", "KV-cache tokens held"),
    (
        "gen_tok_s",
        "generation throughput, tokens/s (or ms per token, declared)",
    ),
    (
        "prompt_tok_s",
        "prompt throughput, tokens/s (or ms per token, declared)",
    ),
    (
        "generated_tokens",
        "tokens generated, declared cumulative or per_line",
    ),
    (
        "preemptions",
        "requests preempted (per line unless declared cumulative)",
    ),
    (
        "kv_capacity_tokens",
        "the KV pool's size in tokens (a setting)",
    ),
    ("max_running", "the cap on running requests (a setting)"),
    (
        "requests_per_s",
        "client side: requests completed per second",
    ),
    (
        "completed_requests",
        "client side: requests completed so far",
    ),
];

/// Keys a `[[format]]` table may hold.
const KEYS: &[&str] = &[
    "name",
    "regex",
    "like",
    "side",
    "kind",
    "time_format",
    "kv_usage",
    "generated_tokens",
    "preemptions",
    "gen_tok_s",
    "prompt_tok_s",
];

/// One `key = "value"` of a format, with the line it is on.
struct Entry {
    value: String,
    line: Option<usize>,
}

/// A format's entries by key, and the line its table starts on.
struct Raw {
    entries: BTreeMap<String, Entry>,
    line: Option<usize>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

fn err(line: Option<usize>, message: impl Into<String>) -> FormatError {
    FormatError {
        line,
        message: message.into(),
    }
}

/// Reads a format file: JSON when it starts with `{` or a `[` of objects, TOML otherwise.
pub fn parse(text: &str) -> Result<Vec<Format>, FormatError> {
    let t = text.trim_start();
    let json =
        t.starts_with('{') || (t.starts_with('[') && t[1..].trim_start().starts_with(['{', ']']));
    let raws = if json {
        from_json(text)?
    } else {
        from_toml(text)?
    };
    if raws.is_empty() {
        return Err(err(
            None,
            "the file defines no format: add a [[format]] table (JSON: {\"format\": [{…}]})",
        ));
    }
    let mut out: Vec<Format> = Vec::new();
    for raw in raws {
        let f = compile(raw)?;
        out.push(f);
    }
    Ok(out)
}

fn from_toml(text: &str) -> Result<Vec<Raw>, FormatError> {
    type Table = BTreeMap<toml::Spanned<String>, toml::Spanned<toml::Value>>;
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        format: Vec<toml::Spanned<Table>>,
    }
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        err(line, e.message().trim().to_string())
    })?;
    let mut out = Vec::new();
    for t in file.format {
        let line = Some(line_of(text, t.span().start));
        let mut entries = BTreeMap::new();
        for (k, v) in t.into_inner() {
            let kline = Some(line_of(text, k.span().start));
            let value = match v.into_inner() {
                toml::Value::String(s) => s,
                other => {
                    return Err(err(
                        kline,
                        format!("{} must be a string, not {}", k.get_ref(), other.type_str()),
                    ))
                }
            };
            entries.insert(k.into_inner(), Entry { value, line: kline });
        }
        out.push(Raw { entries, line });
    }
    Ok(out)
}

/// JSON has no spans in serde_json: a key's line is that of the occurrence of
/// `"key"` nearest the format's own `"regex"` (the n-th in the file for the n-th format).
fn from_json(text: &str) -> Result<Vec<Raw>, FormatError> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| err(Some(e.line()), format!("not valid JSON: {e}")))?;
    let list = match v {
        serde_json::Value::Array(a) => a,
        serde_json::Value::Object(mut o) => {
            if let Some(k) = o.keys().find(|k| *k != "format") {
                let line = find_key(text, k, 0).map(|p| line_of(text, p));
                return Err(err(
                    line,
                    format!("unknown key '{k}' at the top (expected: format)"),
                ));
            }
            match o.remove("format") {
                Some(serde_json::Value::Array(a)) => a,
                Some(_) => return Err(err(None, "format must be an array of objects")),
                None => Vec::new(),
            }
        }
        _ => return Err(err(Some(1), "expected an object with a format array")),
    };
    let anchors: Vec<usize> = {
        let mut v = Vec::new();
        let mut from = 0;
        while let Some(p) = find_key(text, "regex", from) {
            v.push(p);
            from = p + 1;
        }
        v
    };
    let mut out = Vec::new();
    for (i, f) in list.into_iter().enumerate() {
        let anchor = anchors.get(i).copied().unwrap_or(0);
        let serde_json::Value::Object(o) = f else {
            return Err(err(None, format!("format {} is not an object", i + 1)));
        };
        let mut entries = BTreeMap::new();
        for (k, v) in o {
            let line = nearest_key(text, &k, anchor).map(|p| line_of(text, p));
            let value = match v {
                serde_json::Value::String(s) => s,
                _ => return Err(err(line, format!("{k} must be a string"))),
            };
            entries.insert(k, Entry { value, line });
        }
        let line = anchors.get(i).map(|&p| line_of(text, p));
        out.push(Raw { entries, line });
    }
    Ok(out)
}

/// The offset of the next `"key"` followed by `:` from `from` on.
fn find_key(text: &str, key: &str, from: usize) -> Option<usize> {
    let pat = format!("\"{key}\"");
    let mut at = from;
    while let Some(i) = text.get(at..)?.find(&pat) {
        let p = at + i;
        if text[p + pat.len()..].trim_start().starts_with(':') {
            return Some(p);
        }
        at = p + 1;
    }
    None
}

fn nearest_key(text: &str, key: &str, anchor: usize) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut from = 0;
    while let Some(p) = find_key(text, key, from) {
        if best.is_none_or(|b| p.abs_diff(anchor) < b.abs_diff(anchor)) {
            best = Some(p);
        }
        from = p + 1;
    }
    best
}

fn compile(mut raw: Raw) -> Result<Format, FormatError> {
    if let Some((k, e)) = raw
        .entries
        .iter()
        .find(|(k, _)| !KEYS.contains(&k.as_str()))
    {
        return Err(err(
            e.line,
            format!("unknown key '{k}' (known: {})", KEYS.join(", ")),
        ));
    }
    let name = match raw.entries.remove("name") {
        Some(e) if !e.value.trim().is_empty() => e.value,
        Some(e) => return Err(err(e.line, "name must not be empty")),
        None => return Err(err(raw.line, "a format needs a name")),
    };
    let within = |m: String| format!("format '{name}': {m}");
    let Some(rx) = raw.entries.remove("regex") else {
        return Err(err(raw.line, within("a format needs a regex".into())));
    };
    let regex = Regex::new(&rx.value).map_err(|e| {
        // The regex crate's message draws the expression and a caret under the fault.
        err(rx.line, within(format!("invalid regex:\n{e}")))
    })?;
    let mut caps = Captures::default();
    let mut named = Vec::new();
    for (i, n) in regex.capture_names().enumerate() {
        let Some(n) = n else { continue };
        let slot = caps.slot(n).ok_or_else(|| {
            let known: Vec<&str> = CAPTURES.iter().map(|c| c.0).collect();
            err(
                rx.line,
                within(format!(
                    "unknown capture name '{n}' (known: {})",
                    known.join(", ")
                )),
            )
        })?;
        *slot = Some(i);
        named.push(n.to_string());
    }
    let side = match raw.entries.remove("side") {
        None => Side::Server,
        Some(e) => match e.value.as_str() {
            "server" => Side::Server,
            "client" => Side::Client,
            v => {
                return Err(err(
                    e.line,
                    within(format!("side '{v}': expected server or client")),
                ))
            }
        },
    };
    if side == Side::Server {
        for n in ["requests_per_s", "completed_requests"] {
            if named.iter().any(|x| x == n) {
                return Err(err(
                    rx.line,
                    within(format!(
                        "capture '{n}' is a client figure: set side = \"client\""
                    )),
                ));
            }
        }
    }
    let like = match raw.entries.remove("like") {
        None => None,
        Some(e) => Some(Engine::from_name(&e.value).ok_or_else(|| {
            err(
                e.line,
                within(format!(
                    "like '{}': not an engine batchlens knows (sglang, vllm, lmdeploy, trtllm)",
                    e.value
                )),
            )
        })?),
    };
    let kind = match raw.entries.remove("kind") {
        None => SampleKind::Interval,
        Some(e) => match e.value.as_str() {
            "interval" => SampleKind::Interval,
            "decode" => SampleKind::Decode,
            "prefill" => SampleKind::Prefill,
            v => {
                return Err(err(
                    e.line,
                    within(format!("kind '{v}': expected interval, decode or prefill")),
                ))
            }
        },
    };
    // A declaration without its capture, and a capture that needs a declaration without one.
    let mut declared = |key: &str, needs: bool| -> Result<Option<Entry>, FormatError> {
        let e = raw.entries.remove(key);
        let capture = if key == "time_format" { "time" } else { key };
        let captured = named.iter().any(|n| n == capture);
        match (&e, captured) {
            (Some(e), false) => Err(err(
                e.line,
                within(format!(
                    "{key} is declared but the regex has no (?P<{capture}>…) capture"
                )),
            )),
            (None, true) if needs => Err(err(
                rx.line,
                within(format!(
                    "the regex captures {key}: declare {}",
                    declaration(key)
                )),
            )),
            _ => Ok(e),
        }
    };
    let time = match (declared("time_format", false)?, caps.time.is_some()) {
        (None, true) => {
            return Err(err(
                rx.line,
                within("the regex captures time: declare its time_format".into()),
            ))
        }
        (None, false) => None,
        (Some(e), _) => Some(TimeFormat::parse(&e.value).map_err(|m| err(e.line, within(m)))?),
    };
    let kv_usage = match declared("kv_usage", true)? {
        None => Usage::Fraction,
        Some(e) => match e.value.as_str() {
            "fraction" => Usage::Fraction,
            "percent" => Usage::Percent,
            v => {
                return Err(err(
                    e.line,
                    within(format!("kv_usage '{v}': expected fraction or percent")),
                ))
            }
        },
    };
    let counting = |e: Option<Entry>, key: &str| match e {
        None => Ok(Counting::PerLine),
        Some(e) => match e.value.as_str() {
            "cumulative" => Ok(Counting::Cumulative),
            "per_line" => Ok(Counting::PerLine),
            v => Err(err(
                e.line,
                within(format!("{key} '{v}': expected cumulative or per_line")),
            )),
        },
    };
    let generated_tokens = counting(declared("generated_tokens", true)?, "generated_tokens")?;
    let preemptions = counting(declared("preemptions", false)?, "preemptions")?;
    let rate = |e: Option<Entry>, key: &str| match e {
        None => Ok(Rate::TokensPerS),
        Some(e) => match e.value.as_str() {
            "tokens_per_s" => Ok(Rate::TokensPerS),
            "ms_per_token" => Ok(Rate::MsPerToken),
            v => Err(err(
                e.line,
                within(format!(
                    "{key} '{v}': expected tokens_per_s or ms_per_token"
                )),
            )),
        },
    };
    let gen_rate = rate(declared("gen_tok_s", false)?, "gen_tok_s")?;
    let prompt_rate = rate(declared("prompt_tok_s", false)?, "prompt_tok_s")?;
    if !caps.reads_anything() {
        return Err(err(
            rx.line,
            within(
                "the regex captures nothing batchlens reads: name a capture running, waiting, \
                 kv_usage, gen_tok_s, … (see docs/formats.md)"
                    .into(),
            ),
        ));
    }
    Ok(Format {
        name,
        like,
        side,
        kind,
        regex,
        time,
        kv_usage,
        generated_tokens,
        preemptions,
        gen_rate,
        prompt_rate,
        caps,
    })
}

fn declaration(key: &str) -> &'static str {
    match key {
        "kv_usage" => "kv_usage = \"fraction\" or \"percent\"",
        "generated_tokens" => "generated_tokens = \"cumulative\" or \"per_line\"",
        _ => "it",
    }
}
