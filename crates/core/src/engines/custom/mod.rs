//! Line formats a user defines in a format file (`--format-file`): regular
//! expressions whose named captures are the engine-neutral sample fields. They
//! are tried only on lines no built-in parser claims, in log order, so the
//! engines' fast paths never see them. Built-in format files for servers whose
//! logs carry the quantities (llama.cpp, TGI, Ollama) ship in `formats/`.

mod builtin;
pub mod client;
pub mod clock;
pub mod definition;

use std::collections::BTreeMap;
use std::sync::Arc;

use regex::bytes::Regex;

use crate::engines::Engine;
use crate::model::time::{days_from_civil, Stamp};
use crate::model::{ConfigItem, Record, Sample, SampleKind, SourceName};
use crate::report::{CustomFormat, LineExample};
use crate::text::fields::excerpt;

pub use builtin::{builtin, BUILTIN};
pub use clock::TimeFormat;
pub use definition::{FormatError, CAPTURES};

/// Whose figures a format's lines are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The server's: samples of its timeline.
    Server,
    /// A client's progress lines: its figures, reconciled with the server's.
    Client,
}

/// How a count is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// A running total since start: the change between lines is what happened.
    Cumulative,
    /// What happened since the line before (or in the request the line ends).
    PerLine,
}

/// How KV usage is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    Fraction,
    Percent,
}

/// How a throughput is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    TokensPerS,
    /// Milliseconds per token (TGI's `time_per_token`): 1000 ÷ it is tokens/s.
    MsPerToken,
}

/// The group index of each capture the expression names.
#[derive(Debug, Clone, Default)]
pub struct Captures {
    pub time: Option<usize>,
    pub source: Option<usize>,
    pub running: Option<usize>,
    pub waiting: Option<usize>,
    pub kv_usage: Option<usize>,
    pub kv_tokens: Option<usize>,
    pub gen_tok_s: Option<usize>,
    pub prompt_tok_s: Option<usize>,
    pub generated_tokens: Option<usize>,
    pub preemptions: Option<usize>,
    pub kv_capacity_tokens: Option<usize>,
    pub max_running: Option<usize>,
    pub requests_per_s: Option<usize>,
    pub completed_requests: Option<usize>,
}

impl Captures {
    fn slot(&mut self, name: &str) -> Option<&mut Option<usize>> {
        Some(match name {
            "time" => &mut self.time,
            "source" => &mut self.source,
            "running" => &mut self.running,
            "waiting" => &mut self.waiting,
            "kv_usage" => &mut self.kv_usage,
            "kv_tokens" => &mut self.kv_tokens,
            "gen_tok_s" => &mut self.gen_tok_s,
            "prompt_tok_s" => &mut self.prompt_tok_s,
            "generated_tokens" => &mut self.generated_tokens,
            "preemptions" => &mut self.preemptions,
            "kv_capacity_tokens" => &mut self.kv_capacity_tokens,
            "max_running" => &mut self.max_running,
            "requests_per_s" => &mut self.requests_per_s,
            "completed_requests" => &mut self.completed_requests,
            _ => return None,
        })
    }

    /// Whether any capture is a figure (`time` and `source` only place one).
    fn reads_anything(&self) -> bool {
        [
            self.running,
            self.waiting,
            self.kv_usage,
            self.kv_tokens,
            self.gen_tok_s,
            self.prompt_tok_s,
            self.generated_tokens,
            self.preemptions,
            self.kv_capacity_tokens,
            self.max_running,
            self.requests_per_s,
            self.completed_requests,
        ]
        .iter()
        .any(Option::is_some)
    }
}

/// One line format, compiled.
#[derive(Debug, Clone)]
pub struct Format {
    pub name: String,
    pub like: Option<Engine>,
    pub side: Side,
    pub kind: SampleKind,
    pub regex: Regex,
    pub time: Option<TimeFormat>,
    pub kv_usage: Usage,
    pub generated_tokens: Counting,
    pub preemptions: Counting,
    pub gen_rate: Rate,
    pub prompt_rate: Rate,
    pub caps: Captures,
}

/// The formats given, in the order they are tried. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Formats {
    list: Arc<Vec<Format>>,
}

impl Formats {
    /// The formats of a format file's text (TOML or JSON).
    pub fn parse(text: &str) -> Result<Formats, FormatError> {
        Ok(Formats {
            list: Arc::new(definition::parse(text)?),
        })
    }

    /// Adds `other`'s formats after these.
    pub fn extend(&mut self, other: Formats) {
        let mut v = (*self.list).clone();
        v.extend(other.list.iter().cloned());
        self.list = Arc::new(v);
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn list(&self) -> &[Format] {
        &self.list
    }

    /// Whether any format reads the server's log.
    pub fn has_server(&self) -> bool {
        self.list.iter().any(|f| f.side == Side::Server)
    }

    /// Whether any format reads a client's progress lines.
    pub fn has_client(&self) -> bool {
        self.list.iter().any(|f| f.side == Side::Client)
    }
}

/// What the previous line of a format and source said, for rates between lines.
#[derive(Default)]
struct Last {
    seconds: Option<f64>,
    generated: Option<f64>,
    preemptions: Option<f64>,
}

/// The seconds a stamp stands for on one scale (dates where given).
fn seconds(s: &Stamp) -> f64 {
    match (s.year, s.month, s.day) {
        (y, Some(m), Some(d)) => {
            days_from_civil(y.unwrap_or(2000), m, d) as f64 * 86_400.0 + s.second_of_day
        }
        _ => s.second_of_day,
    }
}

/// A number as logs print it: thousands separators and a `%` allowed.
fn number(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    let s: String = s
        .trim()
        .trim_end_matches('%')
        .chars()
        .filter(|c| *c != ',' && *c != '_')
        .collect();
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

fn count(v: f64) -> Option<u64> {
    (0.0..1e15).contains(&v).then(|| v.round() as u64)
}

/// The server-side formats applied to lines in log order, with their counts.
pub struct Reader {
    formats: Formats,
    /// Per format: its counts, and the previous line per source.
    stats: Vec<CustomFormat>,
    last: Vec<BTreeMap<String, Last>>,
}

/// What a format made of a line it matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// A sample (and maybe settings), pushed.
    Sample,
    /// Settings only, pushed.
    Config,
    /// Matched, but no capture gave a number.
    Empty,
}

impl Reader {
    /// A reader of `formats`' server-side formats, `None` when there are none.
    pub fn new(formats: &Formats) -> Option<Reader> {
        if !formats.has_server() {
            return None;
        }
        let stats = formats
            .list
            .iter()
            .map(|f| CustomFormat {
                name: f.name.clone(),
                like: f.like.map(|e| e.name().to_string()),
                side: match f.side {
                    Side::Server => "server",
                    Side::Client => "client",
                }
                .to_string(),
                ..CustomFormat::default()
            })
            .collect();
        Some(Reader {
            last: formats.list.iter().map(|_| BTreeMap::new()).collect(),
            formats: formats.clone(),
            stats,
        })
    }

    /// Tries each server-side format on `line` (line number `no`): the first
    /// that matches reads it; its index and what it read.
    pub fn read(&mut self, line: &[u8], no: u64, out: &mut Vec<Record>) -> Option<(usize, Read)> {
        let formats = Arc::clone(&self.formats.list);
        for (i, f) in formats.iter().enumerate() {
            if f.side != Side::Server {
                continue;
            }
            let Some(c) = f.regex.captures(line) else {
                continue;
            };
            let st = &mut self.stats[i];
            st.matched_lines += 1;
            let got = read_match(f, &c, no, &mut self.last[i], &mut st.unread_values, out);
            match got {
                Read::Sample => st.samples += 1,
                Read::Config => st.config_lines += 1,
                Read::Empty => {
                    if st.empty_match.is_none() {
                        st.empty_match = Some(LineExample {
                            line: no,
                            text: excerpt(line, 120),
                        });
                    }
                }
            }
            return Some((i, got));
        }
        None
    }

    /// What each format read, in the order given (client formats included,
    /// with nothing read: their lines are the client file's).
    pub fn finish(self) -> Vec<CustomFormat> {
        self.stats
    }
}

/// The values of one match: a sample and settings pushed on `out`.
fn read_match(
    f: &Format,
    c: &regex::bytes::Captures<'_>,
    no: u64,
    last: &mut BTreeMap<String, Last>,
    unread: &mut u64,
    out: &mut Vec<Record>,
) -> Read {
    let mut value = |idx: Option<usize>| -> Option<f64> {
        let m = c.get(idx?)?;
        let v = number(m.as_bytes());
        *unread += v.is_none() as u64;
        v
    };
    let running = value(f.caps.running).and_then(count);
    let waiting = value(f.caps.waiting).and_then(count);
    let kv_tokens = value(f.caps.kv_tokens).and_then(count);
    let kv_usage = value(f.caps.kv_usage).map(|v| match f.kv_usage {
        Usage::Fraction => v,
        Usage::Percent => v / 100.0,
    });
    let rate = |v: Option<f64>, r: Rate| match r {
        Rate::TokensPerS => v,
        Rate::MsPerToken => v.filter(|&x| x > 0.0).map(|x| 1000.0 / x),
    };
    let gen = rate(value(f.caps.gen_tok_s), f.gen_rate);
    let prompt = rate(value(f.caps.prompt_tok_s), f.prompt_rate);
    let generated = value(f.caps.generated_tokens);
    let preempt = value(f.caps.preemptions);
    let capacity = value(f.caps.kv_capacity_tokens).and_then(count);
    let max_running = value(f.caps.max_running).and_then(count);
    let stamp = f.time.as_ref().and_then(|t| {
        let m = c.get(f.caps.time?)?;
        let s = t.read(std::str::from_utf8(m.as_bytes()).ok()?);
        *unread += s.is_none() as u64;
        s
    });
    let source = f
        .caps
        .source
        .and_then(|i| c.get(i))
        .map(|m| SourceName::new(&String::from_utf8_lossy(m.as_bytes())))
        .unwrap_or_default();

    let mut items = Vec::new();
    if let Some(n) = capacity {
        items.push(ConfigItem::KvCapacityTokens(n));
    }
    if let Some(n) = max_running {
        items.push(ConfigItem::MaxRunningRequests(n));
    }
    // Rates between lines of the same source: tokens over the time between them.
    let prev = last.entry(source.as_str().to_string()).or_default();
    let now = stamp.as_ref().map(seconds);
    let dt = match (prev.seconds, now) {
        (Some(a), Some(b)) if b > a => Some(b - a),
        _ => None,
    };
    let since = |cur: Option<f64>, before: Option<f64>, counting: Counting| -> Option<f64> {
        let cur = cur?;
        match counting {
            Counting::PerLine => Some(cur),
            // A total that fell is a restart of the counter: nothing is known of the step.
            Counting::Cumulative => before.map(|b| cur - b).filter(|d| *d >= 0.0),
        }
    };
    let gen_from_tokens = match (since(generated, prev.generated, f.generated_tokens), dt) {
        (Some(t), Some(dt)) => Some(t / dt),
        _ => None,
    };
    let preempted = since(preempt, prev.preemptions, f.preemptions).and_then(count);
    if now.is_some() {
        prev.seconds = now;
    }
    if generated.is_some() {
        prev.generated = generated;
    }
    if preempt.is_some() {
        prev.preemptions = preempt;
    }
    let gen = gen.or(gen_from_tokens);
    let any_sample = running.is_some()
        || waiting.is_some()
        || kv_tokens.is_some()
        || kv_usage.is_some()
        || gen.is_some()
        || prompt.is_some()
        || preempted.is_some()
        // A first cumulative count has no rate yet, but the line is a reading.
        || (generated.is_some() && f.caps.generated_tokens.is_some());
    let has_config = !items.is_empty();
    if has_config {
        out.push(Record::Config { line: no, items });
    }
    if !any_sample {
        return if has_config {
            Read::Config
        } else {
            Read::Empty
        };
    }
    out.push(Record::Sample(Sample {
        line: no,
        stamp,
        source,
        kind: Some(f.kind),
        running: running.map(|n| n.min(u32::MAX as u64) as u32),
        queued: waiting.map(|n| n.min(u32::MAX as u64) as u32),
        kv_tokens,
        kv_usage,
        gen_tok_s: gen,
        input_tok_s: prompt,
        preempted: preempted.map(|n| n.min(u32::MAX as u64) as u32),
        ..Sample::default()
    }));
    Read::Sample
}
