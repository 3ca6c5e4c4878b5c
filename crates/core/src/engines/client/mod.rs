//! What the client saw: benchmark summary blocks (SGLang `bench_serving`,
//! `vllm bench serve` / `benchmark_serving.py`), their `--save-result` JSON, and
//! SGLang per-request `Finish:` lines (`--log-requests`).
//!
//! Summary rows are `"{:<40} {:<10}"`: the label padded to 40 characters, the
//! value padded with trailing spaces. A row is split at its first `:` and both
//! sides are trimmed. SGLang's block carries `Backend:` and `Traffic request
//! rate:` rows, vLLM's does not: that tells the two apart.

use memchr::memmem;

use crate::model::stats::Stream;
use crate::report::{ClientFigures, RequestStats};
use crate::text::fields::{float, trim, uint};

impl ClientFigures {
    /// A bare figure from the command line (`--client-throughput`, `--client-requests-per-s`).
    pub fn from_flags(output_tok_s: Option<f64>, requests_per_s: Option<f64>) -> Option<Self> {
        if output_tok_s.is_none() && requests_per_s.is_none() {
            return None;
        }
        Some(ClientFigures {
            source: "command_line".into(),
            tool: "unknown".into(),
            output_tok_s,
            requests_per_s,
            ..ClientFigures::default()
        })
    }

    /// Output tokens per second, from the printed figure or from totals ÷ duration.
    pub fn output_rate(&self) -> Option<f64> {
        self.output_tok_s
            .filter(|v| v.is_finite() && *v > 0.0)
            .or_else(|| match (self.total_output_tokens, self.duration_s) {
                (Some(n), Some(d)) if d > 0.0 && n > 0 => Some(n as f64 / d),
                _ => None,
            })
    }

    /// Fills gaps in `self` from `other` (figures given twice: flags win over files).
    pub fn merge_missing(&mut self, other: &ClientFigures) {
        macro_rules! take {
            ($($f:ident),*) => { $( if self.$f.is_none() { self.$f = other.$f.clone(); } )* };
        }
        take!(
            output_tok_s,
            requests_per_s,
            duration_s,
            completed_requests,
            failed_requests,
            total_input_tokens,
            total_output_tokens,
            input_tok_s,
            total_tok_s,
            peak_output_tok_s,
            max_concurrency,
            request_rate,
            mean_concurrency,
            mean_ttft_ms,
            median_ttft_ms,
            p99_ttft_ms,
            mean_tpot_ms,
            mean_itl_ms,
            mean_e2e_latency_ms,
            median_e2e_latency_ms,
            p99_e2e_latency_ms,
            line
        );
        if self.tool.is_empty() || self.tool == "unknown" {
            self.tool = other.tool.clone();
        }
    }

    fn is_empty(&self) -> bool {
        self.output_tok_s.is_none()
            && self.requests_per_s.is_none()
            && self.duration_s.is_none()
            && self.total_output_tokens.is_none()
            && self.completed_requests.is_none()
    }

    /// Applies one `label: value` row of a summary block.
    fn apply_row(&mut self, label: &str, value: &str) {
        let l = label.trim().to_ascii_lowercase();
        let v = value.trim();
        let f = || float(v.as_bytes());
        let u = || uint(v.as_bytes()).or_else(|| float(v.as_bytes()).map(|x| x as u64));
        match l.as_str() {
            "backend" => {
                self.tool = "sglang".into();
            }
            "traffic request rate" => {
                self.tool = "sglang".into();
                self.request_rate = Some(v.to_string());
            }
            "request rate configured (rps)" => self.request_rate = Some(v.to_string()),
            "max request concurrency"
            | "max reqeuest concurrency"
            | "maximum request concurrency" => self.max_concurrency = u(),
            "successful requests" => self.completed_requests = u(),
            "failed requests" => self.failed_requests = u(),
            "benchmark duration (s)" => self.duration_s = f(),
            "total input tokens" => self.total_input_tokens = u(),
            "total generated tokens" => self.total_output_tokens = u(),
            "request throughput (req/s)" => self.requests_per_s = f(),
            "input token throughput (tok/s)" => self.input_tok_s = f(),
            "output token throughput (tok/s)" => self.output_tok_s = f(),
            "peak output token throughput (tok/s)" => self.peak_output_tok_s = f(),
            "total token throughput (tok/s)" => self.total_tok_s = f(),
            "concurrency" => self.mean_concurrency = f(),
            "mean ttft (ms)" => self.mean_ttft_ms = f(),
            "median ttft (ms)" => self.median_ttft_ms = f(),
            "p99 ttft (ms)" => self.p99_ttft_ms = f(),
            "mean tpot (ms)" => self.mean_tpot_ms = f(),
            "mean itl (ms)" => self.mean_itl_ms = f(),
            "mean e2e latency (ms)" | "mean e2el (ms)" => self.mean_e2e_latency_ms = f(),
            "median e2e latency (ms)" | "median e2el (ms)" => self.median_e2e_latency_ms = f(),
            "p99 e2e latency (ms)" | "p99 e2el (ms)" => self.p99_e2e_latency_ms = f(),
            // The many other rows (`Total generated tokens (retokenized)`, percentiles,
            // cache details, goodput…) are read past.
            _ => {}
        }
    }
}

/// Recognises client-side lines inside a log as they stream past.
#[derive(Debug, Clone, Default)]
pub struct ClientLines {
    block: Option<ClientFigures>,
    /// Rows seen in the open block.
    rows: u32,
    blocks: Vec<ClientFigures>,
    req: RequestAcc,
}

#[derive(Debug, Clone, Default)]
struct RequestAcc {
    stats: RequestStats,
    e2e: Stream,
    ttft: Stream,
    per_req: Stream,
    clock: Option<crate::model::time::Clock>,
    first_start: Option<f64>,
    last_finish: Option<f64>,
}

const BANNER: &[u8] = b"Serving Benchmark Result";
/// Rows a summary block can hold before it is taken for a cut paste and closed.
const MAX_BLOCK_ROWS: u32 = 80;

/// The phrases searched on request-log lines, compiled once: a one-off
/// search builds its searcher each time, and a log with `--log-requests` has
/// a `Receive:` and a `Finish:` line per request.
struct Finders {
    banner: memmem::Finder<'static>,
    obj: memmem::Finder<'static>,
    event: memmem::Finder<'static>,
    finish: memmem::Finder<'static>,
    finished: memmem::Finder<'static>,
    receive: [memmem::Finder<'static>; 2],
    received: memmem::Finder<'static>,
    event_key: memmem::Finder<'static>,
    /// `Finish:` alone, where the timestamp ends.
    finish_head: memmem::Finder<'static>,
    /// The keys [`parse_finish`] reads, in its order.
    figures: [memmem::Finder<'static>; 6],
}

fn finders() -> &'static Finders {
    static F: std::sync::OnceLock<Finders> = std::sync::OnceLock::new();
    F.get_or_init(|| Finders {
        banner: memmem::Finder::new(BANNER),
        obj: memmem::Finder::new(b" obj="),
        event: memmem::Finder::new(b"\"request."),
        finish: memmem::Finder::new(b"Finish: obj="),
        finished: memmem::Finder::new(b"request.finished"),
        receive: [
            memmem::Finder::new(b"Receive: obj="),
            memmem::Finder::new(b"Receive OpenAI: obj="),
        ],
        received: memmem::Finder::new(b"request.received"),
        event_key: memmem::Finder::new(b"\"event\""),
        finish_head: memmem::Finder::new(b"Finish:"),
        figures: [
            b"prompt_tokens".as_slice(),
            b"completion_tokens",
            b"cached_tokens",
            b"e2e_latency",
            b"first_token_latency",
            b"ttft",
        ]
        .map(memmem::Finder::new),
    })
}

/// Whether `label` reads like a summary row's label (`Mean TTFT (ms)`), not the
/// start of a log line (`INFO 02-24 10`, `[2026-02-24 10`).
fn row_label(label: &str) -> bool {
    let l = label.trim();
    let (Some(first), Some(last)) = (l.chars().next(), l.chars().last()) else {
        return false;
    };
    l.len() <= 60
        && first.is_ascii_alphabetic()
        && (last.is_ascii_alphabetic() || last == ')')
        && !l.contains(['[', ']', '{', '}', '=', '"', '\'', '|'])
        && !l.contains("batch")
}

/// False for a line that neither opens a summary block nor is a request log
/// line: every marker holds a '=' (the banner's rule, ` obj=`) or a '{' (JSON
/// request logs), so one byte scan turns away access lines and most others.
#[inline]
pub fn may_be_client_line(line: &[u8]) -> bool {
    memchr::memchr2(b'=', b'{', line).is_some()
}

impl ClientLines {
    /// Looks at one line (log prefix and all). Returns a label for
    /// `other_lines_by_kind` when the line belongs to a client summary or request log.
    #[inline]
    pub fn line(&mut self, no: u64, line: &[u8]) -> Option<&'static str> {
        if self.block.is_none() && !may_be_client_line(line) {
            return None;
        }
        self.line_slow(no, line)
    }

    /// Whether a summary block is open: then every line is looked at.
    pub fn in_block(&self) -> bool {
        self.block.is_some()
    }

    #[inline(never)]
    fn line_slow(&mut self, no: u64, line: &[u8]) -> Option<&'static str> {
        if self.block.is_some() {
            return self.block_line(line);
        }
        let f = finders();
        if f.banner.find(line).is_some() {
            self.block = Some(ClientFigures {
                source: "bench_block".into(),
                tool: "unknown".into(),
                line: Some(no),
                ..ClientFigures::default()
            });
            self.rows = 0;
            return Some("client_summary");
        }
        let obj = f.obj.find(line).is_some();
        let event = !obj && f.event.find(line).is_some();
        if !obj && !event {
            return None;
        }
        let has = |m: &memmem::Finder<'static>| m.find(line).is_some();
        if (obj && has(&f.finish)) || (event && has(&f.finished)) {
            self.req.finish_line(line);
            return Some("request_log");
        }
        if (obj && f.receive.iter().any(has)) || (event && has(&f.received)) {
            self.req.stats.received_requests += 1;
            return Some("request_log");
        }
        None
    }

    fn block_line(&mut self, line: &[u8]) -> Option<&'static str> {
        let t = trim(line);
        if t.len() >= 10 && t.iter().all(|&c| c == b'=') {
            self.close();
            return Some("client_summary");
        }
        if t.len() >= 10 && t.starts_with(b"---") && t.ends_with(b"---") {
            return Some("client_summary");
        }
        let text = String::from_utf8_lossy(t);
        if let Some((label, value)) = text.split_once(':') {
            // A row: a short label, not a log line (those start with a timestamp).
            if row_label(label) && self.rows < MAX_BLOCK_ROWS {
                let b = self.block.as_mut().expect("open block");
                b.apply_row(label, value);
                self.rows += 1;
                return Some("client_summary");
            }
        }
        if t.is_empty() {
            return Some("blank");
        }
        // Anything else ends the block (a cut paste); keep what was read.
        self.close();
        None
    }

    fn close(&mut self) {
        if let Some(mut b) = self.block.take() {
            if b.tool == "sglang" {
                b.source = "sglang_bench_serving".into();
            } else if self.rows > 0 {
                b.tool = "vllm".into();
                b.source = "vllm_bench_serve".into();
            }
            if !b.is_empty() {
                self.blocks.push(b);
            }
        }
    }

    /// The last complete summary block, and request statistics when `Finish:` lines were seen.
    pub fn finish(mut self) -> (Option<ClientFigures>, Option<RequestStats>) {
        self.close();
        let block = self.blocks.pop();
        let r = self.req;
        let mut s = r.stats;
        if s.finished_requests == 0 {
            return (block, None);
        }
        s.e2e_latency_s = r.e2e.distribution();
        s.ttft_s = r.ttft.distribution();
        s.completion_tokens_per_request = r.per_req.distribution();
        if let (Some(a), Some(b)) = (r.first_start, r.last_finish) {
            if b > a {
                s.window_s = Some(crate::text::round::sig(b - a));
                s.completion_tok_s = Some(crate::text::round::sig(
                    s.completion_tokens as f64 / (b - a),
                ));
            }
        }
        (block, Some(s))
    }
}

/// The number after `key` (`'key': n` or `"key": n`).
fn number_after(line: &[u8], key: &memmem::Finder<'_>) -> Option<f64> {
    let mut from = 0;
    std::iter::from_fn(|| {
        let i = from + key.find(&line[from..])?;
        // Past the match, as `find_iter` goes (occurrences do not overlap).
        from = i + key.needle().len().max(1);
        Some(i)
    })
    .find_map(|i| {
        // The key must be quoted on both sides (not `x_prompt_tokens_details`).
        if i == 0 || !matches!(line[i - 1], b'\'' | b'"') {
            return None;
        }
        let rest = &line[i + key.needle().len()..];
        let rest = rest
            .strip_prefix(b"'")
            .or_else(|| rest.strip_prefix(b"\""))?;
        let rest = trim_start(rest.strip_prefix(b":")?);
        let end = rest
            .iter()
            .position(|&c| !(c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'-' | b'+')))
            .unwrap_or(rest.len());
        float(&rest[..end])
    })
}

fn trim_start(mut b: &[u8]) -> &[u8] {
    while let [c, rest @ ..] = b {
        if c.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    b
}

/// What one `Finish:` line (or JSON `request.finished` record) says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finished {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub e2e_latency_s: Option<f64>,
    pub ttft_s: Option<f64>,
}

/// Reads the token counts and latencies of one SGLang `Finish:` line.
pub fn parse_finish(line: &[u8]) -> Finished {
    let [prompt, completion, cached, e2e, first, ttft] = &finders().figures;
    let n = |k| number_after(line, k).filter(|v| *v >= 0.0);
    Finished {
        prompt_tokens: n(prompt).map(|v| v as u64),
        completion_tokens: n(completion).map(|v| v as u64),
        cached_tokens: n(cached).map(|v| v as u64),
        e2e_latency_s: n(e2e),
        ttft_s: n(first).or_else(|| n(ttft)),
    }
}

impl RequestAcc {
    fn finish_line(&mut self, line: &[u8]) {
        let f = parse_finish(line);
        let s = &mut self.stats;
        s.finished_requests += 1;
        s.prompt_tokens += f.prompt_tokens.unwrap_or(0);
        s.cached_tokens += f.cached_tokens.unwrap_or(0);
        if let Some(c) = f.completion_tokens {
            s.completion_tokens += c;
            self.per_req.add(c as f64);
        }
        if let Some(e) = f.e2e_latency_s {
            self.e2e.add(e);
        }
        if let Some(t) = f.ttft_s {
            self.ttft.add(t);
        }
        // The timestamp: `[ts] Finish:` prefix, or the JSON `"timestamp"`; only look before
        // the payload so dates inside the request text are not taken.
        let phrases = finders();
        let head_end = phrases
            .finish_head
            .find(line)
            .or_else(|| phrases.event_key.find(line))
            .unwrap_or(line.len().min(64));
        let head = &line[..head_end.min(line.len())];
        if let Some(found) = crate::engines::prefix::last_stamp(head) {
            let clock = self
                .clock
                .get_or_insert_with(crate::model::time::Clock::new);
            let t = clock.place(&found.stamp).seconds;
            let start = t - f.e2e_latency_s.unwrap_or(0.0);
            self.first_start = Some(self.first_start.map_or(start, |v: f64| v.min(start)));
            self.last_finish = Some(self.last_finish.map_or(t, |v: f64| v.max(t)));
        }
    }
}

/// Reads a client file: a pasted summary block (text) or `--save-result` JSON.
pub fn parse_client_file(bytes: &[u8]) -> Result<ClientFigures, String> {
    let t = trim(bytes);
    if t.first() == Some(&b'{') || t.first() == Some(&b'[') {
        return parse_save_result(t);
    }
    let mut p = ClientLines::default();
    for (i, line) in bytes.split(|&c| c == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        p.line(i as u64 + 1, line);
    }
    match p.finish() {
        (Some(b), _) => Ok(b),
        (None, Some(r)) if r.completion_tok_s.is_some() => Ok(from_requests(&r).expect("rate")),
        _ => Err(
            "no benchmark summary found: expected a '==== Serving Benchmark Result ====' block \
             (SGLang bench_serving or vllm bench serve) or its --save-result JSON"
                .into(),
        ),
    }
}

/// Client figures from the server's own request log (completion-based throughput).
pub fn from_requests(r: &RequestStats) -> Option<ClientFigures> {
    let rate = r.completion_tok_s?;
    let w = r.window_s?;
    Some(ClientFigures {
        source: "request_log".into(),
        tool: "sglang".into(),
        output_tok_s: Some(rate),
        requests_per_s: Some(crate::text::round::sig(r.finished_requests as f64 / w)),
        duration_s: Some(w),
        completed_requests: Some(r.finished_requests),
        total_input_tokens: Some(r.prompt_tokens),
        total_output_tokens: Some(r.completion_tokens),
        mean_e2e_latency_ms: r.e2e_latency_s.map(|d| d.mean * 1000.0),
        ..ClientFigures::default()
    })
}

/// `--save-result` JSON of SGLang `bench_serving` or `vllm bench serve`. A JSON-lines
/// file (SGLang appends one object per run) gives its last object.
pub fn parse_save_result(bytes: &[u8]) -> Result<ClientFigures, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "the client file is not UTF-8 text")?;
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            // JSON lines: take the last object that parses.
            text.lines()
                .rev()
                .filter(|l| !l.trim().is_empty())
                .find_map(|l| serde_json::from_str(l).ok())
                .ok_or_else(|| format!("the client file looks like JSON but does not parse: {e}"))?
        }
    };
    let obj = match &value {
        serde_json::Value::Array(a) => a.iter().rev().find(|v| v.is_object()),
        serde_json::Value::Object(_) => Some(&value),
        _ => None,
    }
    .and_then(|v| v.as_object())
    .ok_or("the client JSON is not an object")?;
    let f = |k: &str| {
        obj.get(k)
            .and_then(|v| v.as_f64())
            .filter(|v| v.is_finite())
    };
    let u = |k: &str| f(k).filter(|v| *v >= 0.0).map(|v| v as u64);
    let tool = if obj.contains_key("backend")
        && obj.contains_key("request_rate")
        && obj.contains_key("sharegpt_output_len")
    {
        "sglang"
    } else if obj.contains_key("tokenizer_id")
        || obj.contains_key("endpoint_type")
        || obj.contains_key("model_id")
    {
        "vllm"
    } else if obj.contains_key("backend") {
        "sglang"
    } else {
        "unknown"
    };
    let c = ClientFigures {
        source: "save_result_json".into(),
        tool: tool.into(),
        output_tok_s: f("output_throughput"),
        requests_per_s: f("request_throughput"),
        duration_s: f("duration"),
        completed_requests: u("completed"),
        failed_requests: u("failed"),
        total_input_tokens: u("total_input_tokens").or_else(|| u("total_input")),
        total_output_tokens: u("total_output_tokens").or_else(|| u("total_output")),
        input_tok_s: f("input_throughput"),
        total_tok_s: f("total_token_throughput"),
        peak_output_tok_s: f("max_output_tokens_per_s"),
        max_concurrency: u("max_concurrency"),
        request_rate: obj.get("request_rate").map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        mean_concurrency: f("concurrency"),
        mean_ttft_ms: f("mean_ttft_ms"),
        median_ttft_ms: f("median_ttft_ms"),
        p99_ttft_ms: f("p99_ttft_ms"),
        mean_tpot_ms: f("mean_tpot_ms"),
        mean_itl_ms: f("mean_itl_ms"),
        mean_e2e_latency_ms: f("mean_e2e_latency_ms").or_else(|| f("mean_e2el_ms")),
        median_e2e_latency_ms: f("median_e2e_latency_ms").or_else(|| f("median_e2el_ms")),
        p99_e2e_latency_ms: f("p99_e2e_latency_ms").or_else(|| f("p99_e2el_ms")),
        line: None,
    };
    if c.output_rate().is_none() {
        return Err("the client JSON has no 'output_throughput' (nor 'total_output_tokens' and 'duration'): \
                    is it a bench_serving / vllm bench serve --save-result file?"
            .into());
    }
    Ok(c)
}

/// The figures to reconcile against: flags/`--client` file first, gaps filled from a
/// summary block in the log, else the server's own request log.
pub fn combine(
    given: Option<ClientFigures>,
    block: Option<ClientFigures>,
    requests: Option<&RequestStats>,
) -> Option<ClientFigures> {
    let mut out = match (given, block) {
        (Some(mut g), Some(b)) => {
            g.merge_missing(&b);
            Some(g)
        }
        (g, b) => g.or(b),
    };
    // The request log stands in only when the client gave no rate at all (a request
    // rate alone is turned into tokens/s by the reconciliation).
    if out
        .as_ref()
        .is_none_or(|c| c.output_rate().is_none() && c.requests_per_s.is_none())
    {
        if let Some(r) = requests.and_then(from_requests) {
            match out.as_mut() {
                Some(o) => o.merge_missing(&r),
                None => out = Some(r),
            }
        }
    }
    out
}
