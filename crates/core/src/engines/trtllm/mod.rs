//! TensorRT-LLM's per-iteration stats, in the three shapes its servers print:
//!
//! - `trtllm-serve` (PyTorch backend) with `print_iter_log`, one line an
//!   iteration (`_torch/pyexecutor/py_executor.py`): `[MM/DD/YYYY-HH:MM:SS]
//!   [TRT-LLM] [I] iter = N, global_rank = g, rank = r, …, states =
//!   {'num_ctx_requests': c, 'num_ctx_tokens': t, 'num_generation_tokens': n}`,
//!   whose parts moved and were renamed over the versions (`elapsed_time = Xs`
//!   became `host_step_time = Xms`; `num_scheduled_requests: N` became `= N`;
//!   `kv_cache_util` and a tail of counts, `num_unscheduled` among them, came in
//!   2026), so parts are read by their names, never by place;
//! - the Triton backend's stats JSON (`--log-verbose`), after a glog prefix
//!   `I1218 03:35:37.688135 20559 file.cc:1205] `, bare or, from Triton 24, as
//!   a quoted string with escaped quotes;
//! - the executor's iteration stats as served by `GET /metrics` (`iterLatencyMS`,
//!   `inflightBatchingStats`, `kvCacheStats`), saved one object a line or as
//!   the endpoint answers, an array on one line.
//!
//! An iteration's rates are its tokens over its own step time: generation
//! requests make one token each a step (`num_generation_tokens` counts draft
//! tokens, and likely CUDA-graph padding, too, so it is used only where nothing
//! else tells how many requests generate), prompt tokens are those of its
//! context requests. Triton's JSON tells no step time: its rate is measured
//! between consecutive records' times, so its records are read in order.

pub mod profile;

use memchr::memmem;
use serde_json::Value;

use super::common::is_access_line;
use super::prefix::last_stamp;
use super::{Ahead, Engine, LineParser, Outcome};
use crate::model::time::Stamp;
use crate::model::{ConfigItem, Record, Sample, SampleKind, SourceName};
use crate::text::fields::{float, trim, uint, uint32};
use crate::text::python::each_python_pair;

const ITER: &[u8] = b"iter = ";
const TRITON_KEY: &[u8] = b"Active Request Count";
const METRICS_KEY: &[u8] = b"\"iterLatencyMS\"";

#[derive(Default)]
pub struct TrtllmParser {
    /// Triton's previous stats record: its iteration counter and time
    /// ([`fine_time`]), which the next one's generation rate is measured from.
    last_triton: Option<(u64, (i64, f64))>,
}

/// What a line may be.
enum Found {
    /// The iteration log; its message starts at the offset.
    Iteration(usize),
    /// A JSON record of stats, Triton's or `/metrics`', starting at the offset.
    Json(usize, Json),
    /// A startup line that states a capacity.
    Startup,
}

/// Every stats shape holds `=` or `{`, which many lines of other servers lack:
/// one two-byte search rules those out before any phrase is looked for; a
/// startup line is looked for by the server's name.
#[inline]
fn find(line: &[u8]) -> Option<Found> {
    match memchr::memchr2(b'=', b'{', line) {
        Some(_) => find_slow(line),
        None => startup(line),
    }
    // Never from an access line (see `is_access_line`): checked only on a match.
    .filter(|_| !is_access_line(line))
}

/// The phrases searched on every line the parser is asked about, compiled once
/// (a one-off search builds its searcher each time, which costs more than the search).
struct Finders {
    iter: memmem::Finder<'static>,
    rank: memmem::Finder<'static>,
    triton: memmem::Finder<'static>,
    metrics: memmem::Finder<'static>,
    names: [memmem::Finder<'static>; 2],
}

fn finders() -> &'static Finders {
    static F: std::sync::OnceLock<Finders> = std::sync::OnceLock::new();
    F.get_or_init(|| Finders {
        iter: memmem::Finder::new(ITER),
        rank: memmem::Finder::new(b"rank = "),
        triton: memmem::Finder::new(TRITON_KEY),
        metrics: memmem::Finder::new(METRICS_KEY),
        names: [
            memmem::Finder::new(b"TensorRT-LLM"),
            memmem::Finder::new(b"TRT-LLM"),
        ],
    })
}

#[inline(never)]
fn find_slow(line: &[u8]) -> Option<Found> {
    let f = finders();
    if let Some(i) = f.iter.find(line) {
        let digits = line[i + ITER.len()..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        // `iter = 12, global_rank = …`: the word starts there.
        let word_start = i == 0 || !line[i - 1].is_ascii_alphanumeric() && line[i - 1] != b'_';
        if digits > 0 && word_start && f.rank.find(&line[i..]).is_some() {
            return Some(Found::Iteration(i));
        }
    }
    let kind = if f.triton.find(line).is_some() {
        Some(Json::Triton)
    } else if f.metrics.find(line).is_some() {
        Some(Json::Metrics)
    } else {
        None
    };
    if let Some(kind) = kind {
        return memchr::memchr(b'{', line).map(|at| Found::Json(at, kind));
    }
    startup(line)
}

/// A line of the server's own (C++ `[TensorRT-LLM][INFO]` or `[TRT-LLM] [I]`):
/// it may state a capacity.
#[inline(never)]
fn startup(line: &[u8]) -> Option<Found> {
    finders()
        .names
        .iter()
        .any(|n| n.find(line).is_some())
        .then_some(Found::Startup)
}

/// `MM/DD/YYYY-HH:MM:SS` (the logger's prefix) or `MM-DD-YYYY HH:MM:SS[.ffffff]`
/// (the JSON stats' `Timestamp`) at the start of `b`.
fn month_first_stamp(b: &[u8]) -> Option<Stamp> {
    let b = trim(b);
    let b = b.strip_prefix(b"[").unwrap_or(b);
    if b.len() < 19 || !matches!(b[2], b'/' | b'-') || b[5] != b[2] || !matches!(b[10], b'-' | b' ')
    {
        return None;
    }
    let num = |i: usize, n: usize| -> Option<u32> {
        b[i..i + n].iter().try_fold(0u32, |v, &c| {
            c.is_ascii_digit().then(|| v * 10 + (c - b'0') as u32)
        })
    };
    let (mo, d, y) = (num(0, 2)?, num(3, 2)?, num(6, 4)?);
    let found = last_stamp(&b[11..b.len().min(40)])?;
    // Month and day as printed, possible or not: judged where the record is.
    let ok = y >= 1970 && found.start == 0;
    ok.then_some(Stamp {
        year: Some(y as i32),
        month: Some(mo),
        day: Some(d),
        second_of_day: found.stamp.second_of_day,
    })
}

/// A duration part's seconds: `291.3ms`, `0.0050s`; `N/A` is none.
fn seconds(v: &[u8]) -> Option<f64> {
    let v = trim(v);
    if let Some(ms) = v.strip_suffix(b"ms") {
        float(ms).map(|x| x / 1000.0)
    } else {
        float(v.strip_suffix(b"s").unwrap_or(v))
    }
}

/// A part's name and value, split at the earlier of its first usable `= `
/// (`eq`: where the name ends, 3 bytes) and its first `: ` (`colon`, 2 bytes).
fn name_value(
    part: &[u8],
    eq: Option<(usize, usize)>,
    colon: Option<(usize, usize)>,
) -> Option<(&[u8], &[u8])> {
    let (i, n) = match (eq, colon) {
        (Some(a), Some(b)) => Some(if a.0 < b.0 { a } else { b }),
        (a, b) => a.or(b),
    }?;
    Some((trim(&part[..i]), trim(&part[i + n..])))
}

/// The parts of an iteration line's message, each handed to `f`: `name =
/// value` or `name: value`, split at `, ` outside the `states` dict (returned
/// whole, braces and all). A part's name ends at its first `: ` or at its first
/// `= ` where a space comes before it, whichever is earlier.
///
/// One pass over the line, not three searches a part: a line is one
/// iteration, and a busy server logs thousands a second.
fn iteration_parts<'m>(msg: &'m [u8], mut f: impl FnMut(&'m [u8], &'m [u8])) -> Option<&'m [u8]> {
    let mut states = None;
    let mut rest = msg;
    while !rest.is_empty() {
        if rest.starts_with(b"states = {") {
            // Never empty: the dict is at least its opening text.
            let close = memchr::memchr(b'}', rest).map_or(rest.len(), |c| c + 1);
            states = Some(&rest[b"states = ".len()..close]);
            rest = rest[close..].strip_prefix(b", ").unwrap_or(&rest[close..]);
            continue;
        }
        // The first `= ` (usable only with a space before it) and `: ` of the part.
        let (mut eq, mut eq_seen, mut colon) = (None, false, None);
        let mut end = rest.len();
        // A byte loop: the marks come every few bytes, too often for a vector search.
        for i in 0..rest.len().saturating_sub(1) {
            if rest[i + 1] != b' ' {
                continue;
            }
            match rest[i] {
                b',' => {
                    end = i;
                    break;
                }
                b'=' if !eq_seen => {
                    eq_seen = true;
                    eq = (i > 0 && rest[i - 1] == b' ').then(|| (i - 1, 3));
                }
                b':' if colon.is_none() => colon = Some((i, 2)),
                _ => {}
            }
        }
        let part = &rest[..end];
        if !part.starts_with(b"states = ") {
            if let Some((name, value)) = name_value(part, eq, colon) {
                f(name, value);
            }
        }
        rest = rest[end..].strip_prefix(b", ").unwrap_or(&rest[end..]);
        if end == 0 {
            break;
        }
    }
    states
}

/// Reads an iteration line whose message starts at `at` into `s`: false when
/// a part it knows cannot be read, or no batch size can be told.
fn read_iteration(line: &[u8], at: usize, s: &mut Sample) -> bool {
    let mut ok = true;
    let mut step = None;
    let mut device_step = None;
    let mut scheduled = None;
    let mut rank = None;
    let states = iteration_parts(&line[at..], |name, v| match name {
        b"global_rank" => rank = uint(v),
        b"num_scheduled_requests" => {
            scheduled = uint32(v);
            ok &= scheduled.is_some();
        }
        b"kv_cache_util" if v != b"N/A" => {
            s.kv_usage = float(v).filter(|u| (0.0..=1.0).contains(u));
            ok &= s.kv_usage.is_some();
        }
        b"num_unscheduled" => {
            s.queued = uint32(v);
            ok &= s.queued.is_some();
        }
        b"elapsed_time" | b"host_step_time" => step = seconds(v),
        b"prev_device_step_time" => device_step = seconds(v),
        b"timestamp" => s.stamp = last_stamp(v).map(|f| f.stamp).or(s.stamp),
        _ => {}
    });
    if let Some(r) = rank {
        s.source = rank_name(r);
    }
    let mut ctx_requests = None;
    let mut ctx_tokens = None;
    let mut gen_tokens = None;
    match states {
        Some(st) if st.ends_with(b"}") => {
            each_python_pair(st, |k, v| match k {
                b"num_ctx_requests" => ctx_requests = uint32(v),
                b"num_ctx_tokens" => ctx_tokens = uint(v),
                b"num_generation_tokens" => gen_tokens = uint(v),
                _ => {}
            });
        }
        // Cut inside the dict.
        Some(_) => ok = false,
        None => {}
    }
    // The step this iteration took; the device's previous step where the
    // host's is not printed (the first iteration prints `N/A`).
    let step = step.or(device_step).filter(|t| *t > 0.0);
    let generating = match (scheduled, ctx_requests) {
        (Some(n), Some(c)) => Some(n.saturating_sub(c) as f64),
        _ => gen_tokens.map(|g| g as f64),
    };
    s.running = scheduled.or(match (ctx_requests, gen_tokens) {
        (Some(c), Some(g)) => u32::try_from(g).ok().map(|g| g.saturating_add(c)),
        _ => None,
    });
    if let Some(t) = step {
        s.gen_tok_s = generating.map(|g| g / t);
        s.input_tok_s = ctx_tokens.map(|c| c as f64 / t);
        s.interval_s = Some(t);
    }
    ok && s.running.is_some()
}

/// `rank N`, written without allocating or formatting (it labels every line).
fn rank_name(r: u64) -> SourceName {
    let mut digits = [0; 20];
    let digits = crate::text::fields::decimal_text(r, &mut digits).as_bytes();
    let mut label = [0u8; 25];
    label[..5].copy_from_slice(b"rank ");
    label[5..5 + digits.len()].copy_from_slice(digits);
    SourceName::new(std::str::from_utf8(&label[..5 + digits.len()]).unwrap_or_default())
}

/// Looks a value up by its name at the top level or one object down (the
/// `/metrics` object nests its batch and KV figures).
fn json_num(v: &Value, name: &str) -> Option<f64> {
    v.get(name).and_then(Value::as_f64).or_else(|| {
        v.as_object()?
            .values()
            .filter(|x| x.is_object())
            .find_map(|x| x.get(name).and_then(Value::as_f64))
    })
}

fn json_u32(v: &Value, name: &str) -> Option<u32> {
    json_num(v, name)
        .filter(|x| *x >= 0.0 && x.fract() == 0.0)
        .and_then(|x| u32::try_from(x as u64).ok())
}

/// The JSON object starting at `at`, unescaped when Triton printed it as a
/// quoted string (`"{\"Active Request Count\":3,…}"`).
fn json_object(line: &[u8], at: usize) -> Option<Value> {
    let text = trim(&line[at..]);
    let quoted = at > 0 && line[at - 1] == b'"';
    if quoted {
        let inner = text.strip_suffix(b"\"").unwrap_or(text);
        let unescaped: Vec<u8> = {
            let mut out = Vec::with_capacity(inner.len());
            let mut i = 0;
            while i < inner.len() {
                if inner[i] == b'\\' && i + 1 < inner.len() {
                    i += 1;
                }
                out.push(inner[i]);
                i += 1;
            }
            out
        };
        serde_json::from_slice(&unescaped).ok()
    } else {
        serde_json::from_slice(text).ok()
    }
}

/// Whose stats record a line holds (told by its keys).
#[derive(Clone, Copy, PartialEq)]
enum Json {
    Triton,
    Metrics,
}

/// A JSON record as read: one object, or `/metrics`' array of them.
enum Parsed {
    Object(Value),
    Array(Vec<Value>),
}

/// The JSON record starting at `at`; `None` when it does not read (cut short).
fn json_record(line: &[u8], at: usize) -> Option<Parsed> {
    json_array(line, at)
        .map(Parsed::Array)
        .or_else(|| json_object(line, at).map(Parsed::Object))
}

/// The objects of a JSON array whose first object starts at `at` (`/metrics`
/// saved as it answers: `[{…},{…}]`); `None` for anything else.
fn json_array(line: &[u8], at: usize) -> Option<Vec<Value>> {
    let open = trim(&line[..at]).strip_suffix(b"[").map(|p| p.len())?;
    let start = line[..at]
        .iter()
        .rposition(|&c| c == b'[')
        .filter(|&i| i >= open)?;
    match serde_json::from_slice::<Value>(trim(&line[start..])).ok()? {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            Some(items)
        }
        _ => None,
    }
}

/// Reads a stats object into `s`: false when it holds no batch size.
fn read_json(v: &Value, kind: Json, prefix: &[u8], s: &mut Sample) -> bool {
    // The iteration's own time where the object has one (glog's is when it was printed).
    s.stamp = v
        .get("Timestamp")
        .or_else(|| v.get("timestamp"))
        .and_then(Value::as_str)
        .and_then(|t| month_first_stamp(t.as_bytes()))
        .or_else(|| last_stamp(prefix).map(|f| f.stamp));
    if kind == Json::Triton {
        let active = json_u32(v, "Active Request Count");
        // Older backends print no `Scheduled Requests`: the batch is its context
        // and generation requests, or, where only the count of requests in the
        // batch manager is printed, that count.
        s.running = json_u32(v, "Scheduled Requests")
            .or(
                match (
                    json_u32(v, "Context Requests"),
                    json_u32(v, "Generation Requests"),
                ) {
                    (Some(c), Some(g)) => Some(c.saturating_add(g)),
                    _ => None,
                },
            )
            .or(active);
        // Requests the executor holds but did not schedule this iteration.
        s.queued = json_u32(v, "Waiting Requests").or(match (active, s.running) {
            (Some(a), Some(r)) => Some(a.saturating_sub(r)),
            _ => None,
        });
        // Requests the scheduler paused in this iteration to free KV blocks (its
        // MAX_UTILIZATION policy): preemptions, counted per iteration.
        s.preempted = json_u32(v, "Paused Requests");
        s.kv_usage = json_num(v, "Fraction used KV cache blocks").or(
            match (
                json_num(v, "Used KV cache blocks"),
                json_num(v, "Max KV cache blocks"),
            ) {
                (Some(u), Some(m)) if m > 0.0 => Some(u / m),
                _ => None,
            },
        );
    } else {
        s.running = json_u32(v, "numScheduledRequests");
        s.queued = json_u32(v, "numQueuedRequests");
        s.preempted = json_u32(v, "numPausedRequests");
        s.kv_usage = match (json_num(v, "usedNumBlocks"), json_num(v, "maxNumBlocks")) {
            (Some(u), Some(m)) if m > 0.0 => Some(u / m),
            _ => None,
        };
        if let Some(t) = json_num(v, "iterLatencyMS")
            .map(|ms| ms / 1000.0)
            .filter(|t| *t > 0.0)
        {
            s.gen_tok_s = json_num(v, "numGenRequests").map(|g| g / t);
            s.input_tok_s = json_num(v, "numCtxTokens").map(|c| c / t);
            s.interval_s = Some(t);
        }
        if let Some(r) = json_num(v, "attentionDpRank").filter(|r| *r >= 0.0) {
            s.source = rank_name(r as u64);
        }
    }
    s.kv_usage = s.kv_usage.filter(|u| (0.0..=1.0).contains(u));
    s.running.is_some()
}

/// A stamp with a date and a fraction of a second (a whole second is too
/// coarse to time an iteration by): its day since 1970 and second of the day,
/// kept apart so a difference of two keeps its microseconds.
fn fine_time(st: &Stamp) -> Option<(i64, f64)> {
    let days = crate::model::time::days_from_civil(st.year?, st.month?, st.day?);
    (st.second_of_day.fract() != 0.0).then_some((days, st.second_of_day))
}

/// Whether a line ends where a JSON record does (`}`, or `}"` when quoted).
fn ends_object(line: &[u8]) -> bool {
    let t = trim(line);
    t.ends_with(b"}") || t.ends_with(b"}\"")
}

/// glog's prefix, `I1218 03:35:37.688135 `: a level letter, the month and day.
fn glog_prefix(line: &[u8]) -> bool {
    line.len() > 14
        && matches!(line[0], b'I' | b'W' | b'E' | b'F')
        && line[1..5].iter().all(u8::is_ascii_digit)
        && line[5] == b' '
        && line[8] == b':'
}

/// The settings a startup line states. The KV cache lines come twice in a
/// PyTorch-backend log (for the small cache that profiles memory, then for the
/// real one): the later ones win, as every setting does.
fn startup_items(line: &[u8]) -> Vec<ConfigItem> {
    let mut items = Vec::new();
    let digits_after = |key: &[u8]| -> Option<&[u8]> {
        let i = memmem::find(line, key)? + key.len();
        let n = line[i..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b'.')
            .count();
        Some(line[i..i + n].strip_suffix(b".").unwrap_or(&line[i..i + n]))
    };
    let int = |key: &[u8]| digits_after(key).and_then(uint);
    let real = |key: &[u8]| digits_after(key).and_then(float);
    // `Max KV cache blocks per sequence: 65 [window size=2051], tokens per
    // block=32, primary blocks=116617, secondary blocks=0`
    if let (Some(b), Some(t)) = (int(b"primary blocks="), int(b"tokens per block=")) {
        items.push(ConfigItem::KvBlocks(b));
        items.push(ConfigItem::BlockSize(t));
        items.push(ConfigItem::KvCapacityTokens(b * t));
        if let Some(c) = int(b"secondary blocks=") {
            items.push(ConfigItem::CpuKvBlocks(c));
        }
    }
    // `Number of tokens per block: 32.`
    items.extend(int(b"Number of tokens per block: ").map(ConfigItem::BlockSize));
    // `[MemUsageChange] Allocated 14.18 GiB for max tokens in paged KV cache (116160).`
    if memmem::find(line, b"for max tokens in paged KV cache").is_some() {
        items.extend(real(b"Allocated ").map(ConfigItem::KvCacheGb));
        items.extend(int(b"paged KV cache (").map(ConfigItem::KvCapacityTokens));
    }
    // `Peak memory during memory usage profiling …, available KV cache memory when
    // calculating max tokens: 9.06 GiB, fraction is set 0.9, kv size is 131072`
    if memmem::find(line, b"available KV cache memory").is_some() {
        items.extend(real(b"fraction is set ").map(ConfigItem::KvFreeGpuMemoryFraction));
    }
    // The executor's settings, `max_seq_len=8192, max_num_requests=2048,
    // max_num_tokens=8192` (the requests are the batch size), and Triton's C++
    // model's, `TRTGptModel maxNumSequences: 64`. Only those whole lines: a
    // warning that quotes a setting while serving is no restart.
    if memmem::find(line, b"max_seq_len=").is_some()
        && memmem::find(line, b"max_num_tokens=").is_some()
    {
        items.extend(int(b"max_num_requests=").map(ConfigItem::MaxRunningRequests));
        items.extend(int(b"max_num_tokens=").map(ConfigItem::MaxBatchedTokens));
        items.extend(int(b"max_seq_len=").map(ConfigItem::ContextLength));
    }
    items.extend(int(b"TRTGptModel maxNumSequences: ").map(ConfigItem::MaxRunningRequests));
    items.extend(int(b"TRTGptModel maxNumTokens: ").map(ConfigItem::MaxBatchedTokens));
    items
}

impl TrtllmParser {
    /// The iteration line's record pushed on `out`: (full, damaged) records.
    fn iteration(&self, line: &[u8], at: usize, no: u64, out: &mut Vec<Record>) -> (u32, u32) {
        let mut s = Sample {
            line: no,
            kind: Some(SampleKind::Interval),
            stamp: month_first_stamp(&line[..at]),
            ..Sample::default()
        };
        let full = read_iteration(line, at, &mut s);
        s.damaged = !full;
        out.push(Record::Sample(s));
        (full as u32, !full as u32)
    }

    /// The records of a JSON record of `kind` starting at `at` (`parsed`, as
    /// read) pushed on `out`: (full, damaged) records.
    fn json(
        &mut self,
        line: &[u8],
        at: usize,
        kind: Json,
        parsed: Option<Parsed>,
        no: u64,
        out: &mut Vec<Record>,
    ) -> (u32, u32) {
        let mut s = Sample {
            line: no,
            kind: Some(SampleKind::Interval),
            ..Sample::default()
        };
        let full = match parsed {
            Some(Parsed::Array(objects)) => return self.metrics_array(&objects, kind, no, out),
            Some(Parsed::Object(v)) => {
                let full = read_json(&v, kind, &line[..at], &mut s);
                if kind == Json::Triton {
                    self.triton_rate(&v, &line[..at], &mut s);
                }
                full
            }
            // Cut short (a pasted or hard-wrapped record): recognised, not read.
            None => false,
        };
        s.damaged = !full;
        out.push(Record::Sample(s));
        (full as u32, !full as u32)
    }

    /// `GET /metrics` as it answers, a JSON array of iteration objects saved on
    /// one line: a record each.
    fn metrics_array(
        &self,
        objects: &[Value],
        kind: Json,
        no: u64,
        out: &mut Vec<Record>,
    ) -> (u32, u32) {
        let mut full = 0;
        for v in objects {
            let mut s = Sample {
                line: no,
                kind: Some(SampleKind::Interval),
                ..Sample::default()
            };
            let read = read_json(v, kind, b"", &mut s);
            s.damaged = !read;
            full += read as u32;
            out.push(Record::Sample(s));
        }
        (full, objects.len() as u32 - full)
    }

    /// Triton's backend prints every iteration's stats, timed to the
    /// microsecond: the generation requests of one make a token each over the
    /// time since the one before. Older backends print whole seconds and only
    /// the latest iteration at each poll: glog's time of the poll (`prefix`)
    /// then times the iterations between two.
    fn triton_rate(&mut self, v: &Value, prefix: &[u8], s: &mut Sample) {
        let time = s.stamp.as_ref().and_then(|st| {
            fine_time(st).or_else(|| {
                let polled = last_stamp(prefix)?.stamp;
                fine_time(&Stamp {
                    second_of_day: polled.second_of_day,
                    ..*st
                })
                // Printed within a second of the iteration (a poll is every 100 ms).
                .filter(|_| (polled.second_of_day - st.second_of_day).abs() < 2.0)
            })
        });
        let now = json_num(v, "Iteration Counter")
            .filter(|i| *i >= 0.0)
            .map(|i| i as u64)
            .zip(time);
        if let (Some((i0, (d0, t0))), Some((i1, (d1, t1)))) = (self.last_triton, now) {
            let dt = (d1 - d0) as f64 * 86_400.0 + (t1 - t0);
            if i1 > i0 && dt > 0.0 && dt < 60.0 {
                s.gen_tok_s = json_num(v, "Generation Requests").map(|g| g * (i1 - i0) as f64 / dt);
                s.interval_s = Some(dt);
                if i1 == i0 + 1 {
                    // One iteration timed: its prompt tokens too (polls between
                    // whole seconds say nothing of the iterations they skip).
                    s.input_tok_s = json_num(v, "Total Context Tokens").map(|c| c / dt);
                }
            }
        }
        self.last_triton = now;
    }
}

impl LineParser for TrtllmParser {
    fn engine(&self) -> Engine {
        Engine::Trtllm
    }

    fn parse(&mut self, line: &[u8], no: u64, last_chance: bool, out: &mut Vec<Record>) -> Outcome {
        let (full, damaged) = match find(line) {
            None => return Outcome::NotMine,
            Some(Found::Iteration(at)) => self.iteration(line, at, no, out),
            Some(Found::Json(at, kind)) => {
                let parsed = json_record(line, at);
                // Hard-wrapped by a terminal: joined with the lines after it, which
                // do not start like records.
                if parsed.is_none() && !last_chance && !ends_object(line) {
                    return Outcome::Incomplete;
                }
                self.json(line, at, kind, parsed, no, out)
            }
            Some(Found::Startup) => {
                let items = startup_items(line);
                if items.is_empty() {
                    return Outcome::NotMine;
                }
                out.push(Record::Config { line: no, items });
                return Outcome::Other("startup");
            }
        };
        Outcome::Stats { full, damaged }
    }

    fn read_ahead(&mut self, line: &[u8], out: &mut Vec<Record>) -> Option<Ahead> {
        let (full, damaged) = match find(line) {
            // A stats line holds no state: read as `parse` reads it.
            Some(Found::Iteration(at)) => self.iteration(line, at, 0, out),
            // Triton's records are timed against the one before: in order.
            Some(Found::Json(_, Json::Triton)) => return None,
            // A record that does not read may be wrapped: joined in order.
            Some(Found::Json(at, Json::Metrics)) => {
                let parsed = json_record(line, at)?;
                self.json(line, at, Json::Metrics, Some(parsed), 0, out)
            }
            // Settings are taken in log order (a restart starts a run).
            Some(Found::Startup) => return None,
            None => return Some(Ahead::NotMine),
        };
        Some(Ahead::Stats { full, damaged })
    }

    fn starts_record(&self, line: &[u8]) -> bool {
        glog_prefix(line) || super::prefix::starts_like_record(line)
    }
}

#[cfg(test)]
mod tests {
    // The three-search splitter the one-pass one replaced: the reference.
    /// Where `a` first occurs followed by `b` (the separators are two bytes: a
    /// byte search and a look at the next is all they need).
    fn ref_separator(hay: &[u8], a: u8, b: u8) -> Option<usize> {
        memchr::memchr_iter(a, hay).find(|&i| hay.get(i + 1) == Some(&b))
    }

    /// The parts of an iteration line's message, each handed to `f`: `name =
    /// value` or `name: value`, split at `, ` outside the `states` dict (returned
    /// whole, braces and all).
    fn ref_iteration_parts<'m>(
        msg: &'m [u8],
        mut f: impl FnMut(&'m [u8], &'m [u8]),
    ) -> Option<&'m [u8]> {
        let mut states = None;
        let mut rest = msg;
        while !rest.is_empty() {
            let end = if rest.starts_with(b"states = {") {
                let close = memchr::memchr(b'}', rest).map_or(rest.len(), |c| c + 1);
                states = Some(&rest[b"states = ".len()..close]);
                close
            } else {
                ref_separator(rest, b',', b' ').unwrap_or(rest.len())
            };
            let part = &rest[..end];
            if !part.starts_with(b"states = ") {
                let eq = ref_separator(part, b'=', b' ')
                    .filter(|&i| i > 0 && part[i - 1] == b' ')
                    .map(|i| (i - 1, 3));
                let colon = ref_separator(part, b':', b' ').map(|i| (i, 2));
                if let Some((name, value)) = name_value(part, eq, colon) {
                    f(name, value);
                }
            }
            rest = rest[end..].strip_prefix(b", ").unwrap_or(&rest[end..]);
            if end == 0 {
                break;
            }
        }
        states
    }

    #[test]
    fn rank_names_read_as_formatted() {
        for r in [0, 7, 10, 99, 123_456, u32::MAX as u64, u64::MAX] {
            // Cut, as every label, past SourceName::MAX bytes.
            assert_eq!(rank_name(r), SourceName::new(&format!("rank {r}")));
        }
    }

    #[test]
    fn iteration_parts_are_split_as_by_three_searches() {
        let base: &[&[u8]] = &[
            b"iter = 5120, global_rank = 0, rank = 0, num_scheduled_requests = 62, kv_cache_util = 0.014, currank_total_requests = 128/1024, host_step_time = 291.3ms, prev_device_step_time = 289.8ms, timestamp = 2026-08-04 19:08:13, states = {'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 248}, num_active = 70",
            b"iter = 198, global_rank = 0, rank = 0, currank_total_requests = 0/0, elapsed_time = 0.005s, timestamp = 2025-04-28 09:56:44, num_scheduled_requests: 10, states = {'num_ctx_requests': 0, 'num_ctx_to",
            b"a=b, c= d, e =f, g: h:i, j = k: l, m : n = o, , p = q",
        ];
        let marks = b",=: {}'sx";
        let mut rng = batchlens_sim::rng::Rng::new(3);
        let mut checked = 0;
        for b in base {
            for k in 0..3000 {
                let mut l = b.to_vec();
                for _ in 0..(k % 6) {
                    let at = rng.below(l.len() + 1);
                    match rng.below(3) {
                        0 if at < l.len() => l[at] = marks[rng.below(marks.len())],
                        1 => l.insert(at, marks[rng.below(marks.len())]),
                        _ if at < l.len() => {
                            l.remove(at);
                        }
                        _ => {}
                    }
                }
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let sa = iteration_parts(&l, |n, v| a.push((n, v)));
                let sb = ref_iteration_parts(&l, |n, v| b.push((n, v)));
                assert_eq!((sa, &a), (sb, &b), "{}", String::from_utf8_lossy(&l));
                checked += a.len();
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    use super::*;
    use crate::engines::test_support::{parse_one as read_with, ONE_DAMAGED, ONE_FULL};

    fn read(line: &str) -> (Outcome, Option<Sample>) {
        read_with(&mut TrtllmParser::default(), line, true)
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-6 * b.abs().max(1.0))
    }

    #[test]
    fn reads_the_iteration_line_with_elapsed_time() {
        // Verbatim from NVIDIA/TensorRT-LLM PR #3914.
        let (o, s) = read("[04/28/2025-09:56:44] [TRT-LLM] [I] iter = 198, global_rank = 0, rank = 0, currank_total_requests = 0/0, elapsed_time = 0.005060911178588867s, timestamp = 2025-04-28 09:56:44, num_scheduled_requests: 10, states = {'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 16}");
        assert_eq!(o, ONE_FULL);
        let s = s.unwrap();
        assert_eq!(s.running, Some(10));
        // Ten generation requests make a token each over the step (the 16 tokens hold padding or drafts).
        assert!(close(s.gen_tok_s, 10.0 / 0.005060911178588867));
        assert_eq!(s.input_tok_s, Some(0.0));
        assert_eq!(s.queued, None);
        assert_eq!(s.source.as_str(), "rank 0");
        let st = s.stamp.unwrap();
        assert_eq!((st.year, st.month, st.day), (Some(2025), Some(4), Some(28)));
        assert_eq!(st.second_of_day, (9 * 3600 + 56 * 60 + 44) as f64);
    }

    #[test]
    fn reads_the_2026_line_with_its_utilisation_and_queue() {
        let (o, s) = read("[08/04/2026-19:08:13] [TRT-LLM] [I] iter = 5120, global_rank = 0, rank = 0, num_scheduled_requests = 62, kv_cache_util = 0.014, currank_total_requests = 128/1024, host_step_time = 291.3ms, prev_device_step_time = 289.8ms, timestamp = 2026-08-04 19:08:13, states = {'num_ctx_requests': 2, 'num_ctx_tokens': 4096, 'num_generation_tokens': 248}, num_active = 70, num_fetched = 0, num_dummy = 0, num_unscheduled = 8");
        assert_eq!(o, ONE_FULL);
        let s = s.unwrap();
        assert_eq!((s.running, s.queued), (Some(62), Some(8)));
        assert_eq!(s.kv_usage, Some(0.014));
        assert!(close(s.gen_tok_s, 60.0 / 0.2913));
        assert!(close(s.input_tok_s, 4096.0 / 0.2913));
        assert_eq!(s.kind, Some(SampleKind::Interval));
    }

    #[test]
    fn reads_a_ranked_prefix_the_adp_fields_and_a_first_iteration() {
        // `[RANK n]` after the logger's name; ADP's dummy counts; `N/A` times on
        // the first iteration: running is read, no rate is made up.
        let (o, s) = read("[12/04/2025-18:38:28] [TRT-LLM] [RANK 3] [I] iter = 0, global_rank = 3, rank = 3, num_scheduled_requests = 4, adp_dummy_ctx_tokens = 0, adp_dummy_gen_tokens = 0, kv_cache_util = N/A, currank_total_requests = 4/16, host_step_time = N/A, prev_device_step_time = N/A, timestamp = 2025-12-04 18:38:28, states = {'num_ctx_requests': 4, 'num_ctx_tokens': 8192, 'num_generation_tokens': 0, 'cached_kv_tokens': 0}");
        assert_eq!(o, ONE_FULL);
        let s = s.unwrap();
        assert_eq!(s.running, Some(4));
        assert_eq!((s.kv_usage, s.gen_tok_s, s.input_tok_s), (None, None, None));
        assert_eq!(s.source.as_str(), "rank 3");
    }

    #[test]
    fn a_line_cut_inside_its_states_is_damaged() {
        let (o, s) = read("[04/28/2025-09:56:44] [TRT-LLM] [I] iter = 198, global_rank = 0, rank = 0, currank_total_requests = 0/0, elapsed_time = 0.005s, timestamp = 2025-04-28 09:56:44, num_scheduled_requests: 10, states = {'num_ctx_requests': 0, 'num_ctx_to");
        assert_eq!(o, ONE_DAMAGED);
        assert!(s.unwrap().damaged);
    }

    #[test]
    fn reads_triton_stats_bare_and_quoted_and_times_iterations() {
        // Verbatim from triton-inference-server/tensorrtllm_backend #217 (joined).
        let (o, s) = read(
            r#"I1218 03:35:37.688135 20559 libtensorrtllm.cc:1205] {"Active Request Count":1,"Context Requests":1,"Free KV cache blocks":480,"Generation Requests":0,"Iteration Counter":0,"Max KV cache blocks":513,"Max Request Count":64,"MicroBatch ID":0,"Runtime CPU Memory Usage":156,"Runtime GPU Memory Usage":3648012,"Runtime Pinned Memory Usage":16,"Scheduled Requests":1,"Timestamp":"12-18-2023 03:35:37","Tokens per KV cache block":64,"Total Context Tokens":2048,"Used KV cache blocks":1}"#,
        );
        assert_eq!(o, ONE_FULL);
        let s = s.unwrap();
        assert_eq!((s.running, s.queued), (Some(1), Some(0)));
        assert!(close(s.kv_usage, 1.0 / 513.0));
        assert_eq!(s.stamp.unwrap().year, Some(2023));
        // Triton 24 quotes and escapes the record; each iteration's is printed,
        // timed to the microsecond: the generation rate is measured between two.
        let mut p = TrtllmParser::default();
        let line = |it: u32, t: &str| {
            format!(
                r#"I0410 16:58:09.101112 1 model_instance_state.cc:1510] "{{\"Active Request Count\":12,\"Iteration Counter\":{it},\"Timestamp\":\"04-10-2026 16:58:{t}\",\"Context Requests\":0,\"Generation Requests\":10,\"Scheduled Requests\":10,\"Waiting Requests\":2,\"Paused Requests\":1,\"Total Context Tokens\":512,\"Fraction used KV cache blocks\":0.133926}}""#
            )
        };
        let (o, first) = read_with(&mut p, &line(41, "09.050000"), false);
        assert_eq!(o, ONE_FULL);
        let first = first.unwrap();
        assert_eq!(
            (first.running, first.queued, first.preempted),
            (Some(10), Some(2), Some(1))
        );
        assert_eq!(first.kv_usage, Some(0.133926));
        assert_eq!(first.gen_tok_s, None);
        let (_, next) = read_with(&mut p, &line(42, "09.075000"), false);
        let next = next.unwrap();
        assert!(close(next.gen_tok_s, 10.0 / 0.025), "{next:?}");
        assert!(close(next.input_tok_s, 512.0 / 0.025), "{next:?}");
        assert!(close(next.interval_s, 0.025), "{next:?}");
        // Whole-second timestamps (older backends, the latest iteration per
        // poll): glog's microseconds time the iterations between two polls.
        let mut p = TrtllmParser::default();
        let polled = |it: u32, glog: &str| {
            format!(
                r#"I0410 16:58:{glog} 1 libtensorrtllm.cc:1205] {{"Active Request Count":10,"Iteration Counter":{it},"Timestamp":"04-10-2026 16:58:09","Generation Requests":10,"Scheduled Requests":10,"Total Context Tokens":512}}"#
            )
        };
        read_with(&mut p, &polled(100, "09.100000"), false);
        let (_, s) = read_with(&mut p, &polled(104, "09.200000"), false);
        let s = s.unwrap();
        assert!(close(s.gen_tok_s, 10.0 * 4.0 / 0.1));
        // Four iterations, one printed: their prompt tokens are not known.
        assert_eq!(s.input_tok_s, None);
        // Left to `parse`: the rate needs the record before.
        assert_eq!(
            TrtllmParser::default().read_ahead(line(43, "09.1").as_bytes(), &mut Vec::new()),
            None
        );
    }

    #[test]
    fn a_wrapped_record_waits_for_its_tail_and_glog_lines_start_records() {
        let mut p = TrtllmParser::default();
        let head = r#"I1218 03:35:37.688135 20559 libtensorrtllm.cc:1205] {"Active Request Count":1,"Context Requests":1,"Free KV cache "#;
        assert_eq!(read_with(&mut p, head, false).0, Outcome::Incomplete);
        assert!(p.starts_record(head.as_bytes()));
        assert!(!p.starts_record(br#"blocks":480,"Generation Requests":0"#));
        // Nothing follows: read as damaged.
        let (o, _) = read_with(&mut p, head, true);
        assert_eq!(o, ONE_DAMAGED);
    }

    #[test]
    fn reads_the_metrics_object() {
        let (o, s) = read(
            r#"{"cpuMemUsage":0,"gpuMemUsage":25330607135,"inflightBatchingStats":{"avgNumDecodedTokensPerIter":0.0,"microBatchId":0,"numContextRequests":2,"numCtxTokens":4000,"numGenRequests":30,"numPausedRequests":0,"numScheduledRequests":32},"iter":812,"iterLatencyMS":40.0,"kvCacheStats":{"freeNumBlocks":1745,"maxNumBlocks":7240,"tokensPerBlock":64,"usedNumBlocks":5495},"maxNumActiveRequests":64,"numActiveRequests":32,"numQueuedRequests":7,"timestamp":"04-15-2025 12:34:56.123456"}"#,
        );
        assert_eq!(o, ONE_FULL);
        let s = s.unwrap();
        assert_eq!(
            (s.running, s.queued, s.preempted),
            (Some(32), Some(7), Some(0))
        );
        assert!(close(s.kv_usage, 5495.0 / 7240.0));
        assert!(close(s.gen_tok_s, 30.0 / 0.04));
        assert!(close(s.input_tok_s, 4000.0 / 0.04));
        assert!(
            (s.stamp.unwrap().second_of_day - (12.0 * 3600.0 + 34.0 * 60.0 + 56.123456)).abs()
                < 1e-6
        );
    }

    #[test]
    fn reads_a_metrics_array_saved_on_one_line() {
        let obj = |it: u32, gen: u32| {
            format!(
                r#"{{"iter":{it},"iterLatencyMS":20.0,"numActiveRequests":{gen},"numQueuedRequests":3,"timestamp":"04-15-2025 12:34:56.{it:06}","inflightBatchingStats":{{"numScheduledRequests":{gen},"numContextRequests":0,"numGenRequests":{gen},"numCtxTokens":0,"numPausedRequests":0}},"kvCacheStats":{{"maxNumBlocks":100,"usedNumBlocks":50}}}}"#
            )
        };
        let line = format!("[{},{},{}]", obj(1, 10), obj(2, 12), obj(3, 14));
        let mut out = Vec::new();
        let o = TrtllmParser::default().parse(line.as_bytes(), 5, false, &mut out);
        assert_eq!(
            o,
            Outcome::Stats {
                full: 3,
                damaged: 0
            }
        );
        let running: Vec<Option<u32>> = out
            .iter()
            .map(|r| match r {
                Record::Sample(s) => s.running,
                _ => None,
            })
            .collect();
        assert_eq!(running, [Some(10), Some(12), Some(14)]);
        let mut ahead = Vec::new();
        assert_eq!(
            TrtllmParser::default().read_ahead(line.as_bytes(), &mut ahead),
            Some(Ahead::Stats {
                full: 3,
                damaged: 0
            })
        );
        assert_eq!(ahead.len(), 3);
    }

    #[test]
    fn reads_capacities_from_startup_lines() {
        let items = |line: &str| -> Vec<ConfigItem> {
            let mut out = Vec::new();
            let o = TrtllmParser::default().parse(line.as_bytes(), 1, true, &mut out);
            match out.pop() {
                Some(Record::Config { items, .. }) => {
                    assert_eq!(o, Outcome::Other("startup"));
                    items
                }
                _ => Vec::new(),
            }
        };
        // A warning while serving that quotes a setting states none (a config
        // record after stats lines would be read as a restart).
        assert!(items("[08/04/2026-19:30:00] [TRT-LLM] [W] Prompt of 9000 tokens exceeds max_seq_len=8192, rejected").is_empty());
        assert!(
            items("[08/04/2026-19:30:00] [TRT-LLM] [W] fraction is set 0.5 by the user").is_empty()
        );
        let kv = items("[TensorRT-LLM][INFO] Max KV cache blocks per sequence: 65 [window size=2051], tokens per block=32, primary blocks=116617, secondary blocks=0");
        assert!(
            kv.contains(&ConfigItem::KvCapacityTokens(116617 * 32)),
            "{kv:?}"
        );
        assert!(kv.contains(&ConfigItem::BlockSize(32)));
        let mem = items("[TensorRT-LLM][INFO] [MemUsageChange] Allocated 14.18 GiB for max tokens in paged KV cache (116160).");
        assert_eq!(
            mem,
            vec![
                ConfigItem::KvCacheGb(14.18),
                ConfigItem::KvCapacityTokens(116160)
            ]
        );
        let exec = items("[08/04/2026-19:00:00] [TRT-LLM] [I] max_seq_len=8192, max_num_requests=256, max_num_tokens=8192");
        for want in [
            ConfigItem::MaxRunningRequests(256),
            ConfigItem::MaxBatchedTokens(8192),
            ConfigItem::ContextLength(8192),
        ] {
            assert!(exec.contains(&want), "{want:?} in {exec:?}");
        }
        let peak = items("[08/04/2026-19:00:00] [TRT-LLM] [I] Peak memory during memory usage profiling (torch + non-torch): 20.51 GiB, available KV cache memory when calculating max tokens: 9.06 GiB, fraction is set 0.85, kv size is 131072");
        assert!(
            peak.contains(&ConfigItem::KvFreeGpuMemoryFraction(0.85)),
            "{peak:?}"
        );
        let triton = items(
            r#"I0410 16:57:40.101112 1 model_instance_state.cc:310] "[TensorRT-LLM][INFO] TRTGptModel maxNumSequences: 64""#,
        );
        assert_eq!(triton, vec![ConfigItem::MaxRunningRequests(64)]);
        // A line of the server's that states no capacity is not claimed.
        let mut out = Vec::new();
        let o = TrtllmParser::default().parse(
            b"[TensorRT-LLM][INFO] Loaded engine size: 12 MiB",
            1,
            true,
            &mut out,
        );
        assert_eq!((o, out.len()), (Outcome::NotMine, 0));
    }

    #[test]
    fn other_servers_lines_are_not_claimed() {
        for line in [
            "[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, #token: 81290, token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 94",
            "INFO 01-22 18:27:20 metrics.py:449] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.7 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 2.0%, CPU KV cache usage: 0.0%.",
            "[2026-02-24 10:55:32] INFO:     127.0.0.1:30819 - \"POST /generate HTTP/1.1\" 200 OK",
            "for i in range(10): iter = i, rank = 0",
            r#"{"log":"hello","stream":"stdout"}"#,
            // No engine reads stats from an access line (the parsers after the
            // one that finds it are not asked).
            r#"[2026-02-05 01:02:03] INFO: 127.0.0.1:5 - "GET /x?{"Active Request Count":1} HTTP/1.1" 200 OK"#,
        ] {
            assert_eq!(read(line).0, Outcome::NotMine, "{line}");
        }
    }
}
