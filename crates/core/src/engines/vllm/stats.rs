//! The periodic stats line (`Avg prompt throughput: …`): its records, their
//! prefixes and parts, several records to a line when newlines went missing.

use memchr::memmem;

use super::super::prefix::last_stamp;
use super::super::Outcome;
use super::{has, offset_in, strip_engine_label, VllmParser, STATS_HEADER};
use crate::model::{Record, Sample, SampleKind};
use crate::text::fields::{boolean, float, trim, uint32};

/// Records read from one physical line; more than one only when newlines went missing.
const MAX_RECORDS_PER_LINE: usize = 64;
/// What LMDeploy's look-alike of a stats line holds (and vLLM's never does).
pub(crate) const LOOK_ALIKE: &[u8] = b"Unfinished: ";
/// How far before a glued record's header its prefix may start.
const MAX_PREFIX: usize = 256;

/// One stats record found in a line.
struct Head {
    /// Where the record's own text starts (`Engine 000: ` or `Avg prompt…`).
    start: usize,
    /// Where `Avg prompt throughput: ` starts.
    body: usize,
    /// `Engine 001`, `aggregated`, or empty (V0).
    source: String,
    v1: bool,
}

/// Reads the V1 engine label that ends right before `at`: `Engine 001: ` or
/// `2 Engines Aggregated: `. Returns (label start, source).
pub(super) fn engine_label(line: &[u8], at: usize) -> Option<(usize, String)> {
    let before = &line[..at];
    if let Some(b) = before.strip_suffix(b" Engines Aggregated: ") {
        let digits = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            return Some((b.len() - digits, "aggregated".to_string()));
        }
        return Some((b.len() + 1, "aggregated".to_string()));
    }
    let b = before.strip_suffix(b": ")?;
    let digits = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 6 {
        return None;
    }
    let num = &b[b.len() - digits..];
    let word = b[..b.len() - digits].strip_suffix(b"Engine ")?;
    let start = word.len();
    Some((start, format!("Engine {}", String::from_utf8_lossy(num))))
}

/// Where the prefix of a record whose own text starts at `start` begins, searching
/// no further back than `lo`: the level word, any `(Proc pid=N) ` groups before it
/// and a docker RFC3339 stamp before those. Used to end the previous glued record.
fn prefix_start(line: &[u8], lo: usize, start: usize) -> usize {
    let lo = lo.max(start.saturating_sub(MAX_PREFIX));
    let window = &line[lo..start];
    let mut best: Option<usize> = None;
    for lvl in [
        &b"INFO "[..],
        b"DEBUG ",
        b"WARNING ",
        b"ERROR ",
        b"CRITICAL ",
    ] {
        if let Some(i) = memmem::rfind(window, lvl) {
            if best.is_none_or(|b| i > b) {
                best = Some(i);
            }
        }
    }
    let mut pos = match best {
        Some(i) => lo + i,
        None => {
            // `[file.py:NN] ` with no level: cut at the bracket.
            match memchr::memrchr(b'[', window) {
                Some(i) => lo + i,
                None => return start,
            }
        }
    };
    // `(APIServer pid=1) `, `(EngineCore pid=925) (RayWorkerProc pid=8272) `.
    while pos > lo + 1 && line[pos - 1] == b' ' && line[pos - 2] == b')' {
        let mut depth = 0i32;
        let mut j = pos - 2;
        let open = loop {
            match line[j] {
                b')' => depth += 1,
                b'(' => {
                    depth -= 1;
                    if depth == 0 {
                        break Some(j);
                    }
                }
                _ => {}
            }
            if j == lo {
                break None;
            }
            j -= 1;
        };
        match open {
            Some(o) if has(&line[o..pos], b" pid=") => pos = o,
            _ => break,
        }
    }
    // Docker `--timestamps`: `2026-05-12T08:01:39.331095044Z `.
    if pos > lo + 1 && line[pos - 1] == b' ' && line[pos - 2] == b'Z' {
        if let Some(s) = rfc3339_start(&line[lo..pos - 2]) {
            pos = lo + s;
        }
    }
    pos
}

/// Where an RFC3339 stamp `YYYY-MM-DDTHH:MM:SS[.fff]` that ends `text` starts.
fn rfc3339_start(text: &[u8]) -> Option<usize> {
    let mut end = text.len();
    let digits = text.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && digits < end && text[end - digits - 1] == b'.' {
        end -= digits + 1;
    }
    let start = end.checked_sub(19)?;
    let t = &text[start..end];
    let shape = b"dddd-dd-ddTdd:dd:dd";
    t.iter()
        .zip(shape)
        .all(|(&c, &k)| {
            if k == b'd' {
                c.is_ascii_digit()
            } else {
                c == k
            }
        })
        .then_some(start)
}

/// A part's value with its unit removed, or `None` when the unit is missing.
fn unit<'a>(v: &'a [u8], u: &[u8]) -> Option<&'a [u8]> {
    v.strip_suffix(u)
}

fn tok_s(v: &[u8]) -> Option<f64> {
    float(unit(v, b" tokens/s")?)
}

fn reqs(v: &[u8]) -> Option<u32> {
    uint32(unit(v, b" reqs")?)
}

fn pct(v: &[u8]) -> Option<f64> {
    float(unit(v, b"%")?).map(|p| p / 100.0)
}

/// A value of a part we do not use: a number, optionally with a unit or `%`.
fn is_value(v: &[u8]) -> bool {
    let first = v.split(|&c| c == b' ').next().unwrap_or(v);
    let first = first.strip_suffix(b"%").unwrap_or(first);
    float(first).is_some() || first == b"nan" || boolean(first).is_some()
}

/// What reading one record's parts found.
struct Body {
    sample: Sample,
    /// Every part read cleanly and the required ones are there.
    complete: bool,
    /// The record stops short (its last part is cut or a required part is missing).
    cut_short: bool,
}

fn read_body(body: &[u8], v1: bool, mut s: Sample) -> Body {
    let mut b = trim(body);
    // V0 ends with "." (not in 0.2/0.3).
    if let Some(x) = b.strip_suffix(b".") {
        b = x;
    }
    let mut ok = true;
    let mut cut_short = false;
    // A trailing separator means the record was cut right after a part.
    if let Some(x) = b.strip_suffix(b",") {
        b = x;
        cut_short = true;
    }
    let mut cpu_usage = None;
    let mut saw_cpu_usage = false;
    let mut in_list = false;
    let mut parts = memmem::find_iter(b, b", ").peekable();
    let mut from = 0;
    loop {
        let (part, last) = match parts.next() {
            Some(i) => {
                let p = &b[from..i];
                from = i + 2;
                (p, false)
            }
            None => (&b[from..], true),
        };
        let part = trim(part);
        let good = match memmem::find(part, b": ") {
            Some(c) => {
                let key = &part[..c];
                let val = trim(&part[c + 2..]);
                in_list = false;
                macro_rules! set {
                    ($field:ident, $parse:expr) => {
                        match $parse(val) {
                            Some(v) => {
                                s.$field = Some(v);
                                true
                            }
                            None => false,
                        }
                    };
                }
                match key {
                    b"Avg prompt throughput" => set!(input_tok_s, tok_s),
                    b"Avg generation throughput" => set!(gen_tok_s, tok_s),
                    b"Running" => set!(running, reqs),
                    b"Waiting" | b"Pending" => set!(queued, reqs),
                    b"Swapped" => set!(swapped, reqs),
                    b"Preemptions" => set!(preempted, uint32),
                    // `nan%` when no request queried the cache: printed, but no rate.
                    b"Prefix cache hit rate" if val == b"nan%" => true,
                    b"Prefix cache hit rate" => set!(prefix_hit, pct),
                    b"GPU KV cache usage" => set!(kv_usage, pct),
                    // `--enable-mfu-metrics`: "160.6 TF/s/GPU 106.9 GB/s/GPU".
                    b"MFU" => match mfu(val) {
                        Some((tf, gb)) => {
                            s.engine_est[1] = tf as f32;
                            s.engine_est[0] = gb as f32;
                            true
                        }
                        None => false,
                    },
                    b"CPU KV cache usage" => {
                        // V0: swap space in host memory. V1 on a CPU backend: the pool.
                        saw_cpu_usage = true;
                        cpu_usage = pct(val);
                        cpu_usage.is_some()
                    }
                    k if k.ends_with(b" KV cache usage") => set!(kv_usage, pct),
                    b"KV fetch" => {
                        // "KV fetch: 1 waiting to start, 2 in progress, 0 completed waiting"
                        in_list = true;
                        is_value(val)
                    }
                    _ => is_value(val),
                }
            }
            // The rest of a list value (`KV fetch`).
            None => in_list && is_value(part),
        };
        if !good {
            ok = false;
            if last {
                cut_short = true;
            }
        }
        if last {
            break;
        }
    }
    if s.kv_usage.is_none() && v1 {
        s.kv_usage = cpu_usage;
    }
    let mut required = s.input_tok_s.is_some()
        && s.gen_tok_s.is_some()
        && s.running.is_some()
        && s.queued.is_some()
        && s.kv_usage.is_some();
    if !v1 {
        // V0 always prints Swapped and the CPU (swap) usage last.
        required &= s.swapped.is_some() && saw_cpu_usage;
    }
    if !required {
        ok = false;
        cut_short = true;
    }
    Body {
        sample: s,
        complete: ok && !cut_short,
        cut_short,
    }
}

impl VllmParser {
    fn heads(&self, line: &[u8]) -> Vec<Head> {
        let mut v = Vec::new();
        for pos in self.header.find_iter(line) {
            let (start, source, v1) = match engine_label(line, pos) {
                Some((s, src)) => (s, src, true),
                None => (pos, String::new(), false),
            };
            v.push(Head {
                start,
                body: pos,
                source,
                v1,
            });
            if v.len() >= MAX_RECORDS_PER_LINE {
                break;
            }
        }
        v
    }

    /// Small, so the engines' optimizing compilers (V8's in wasm) compile it soon:
    /// it runs on every line no engine before it claimed; the rest runs on few.
    #[inline]
    pub(super) fn parse_stats(
        &mut self,
        line: &[u8],
        no: u64,
        last_chance: bool,
        out: &mut Vec<Record>,
    ) -> Option<Outcome> {
        // One byte scan turns away most other lines (the header's `A` is rare).
        memchr::memchr(b'A', line)?;
        self.parse_stats_headed(line, no, last_chance, out)
    }

    #[inline(never)]
    fn parse_stats_headed(
        &mut self,
        line: &[u8],
        no: u64,
        last_chance: bool,
        out: &mut Vec<Record>,
    ) -> Option<Outcome> {
        let hs = self.heads(line);
        if hs.is_empty() {
            return None;
        }
        // LMDeploy ≤0.12 prints a look-alike line with `Finished:` / `Unfinished:`.
        if has(line, LOOK_ALIKE) {
            return None;
        }
        let mark = out.len();
        let (mut full, mut damaged) = (0, 0);
        let mut seg_start = 0;
        for (k, h) in hs.iter().enumerate() {
            let body_end = match hs.get(k + 1) {
                Some(next) => prefix_start(line, h.body + STATS_HEADER.len(), next.start),
                None => line.len(),
            };
            let stamp = last_stamp(&line[seg_start..h.start]).map(|f| f.stamp);
            let s = Sample {
                line: no,
                stamp,
                source: h.source.as_str().into(),
                kind: Some(SampleKind::Interval),
                ..Sample::default()
            };
            let r = read_body(&line[h.body..body_end], h.v1, s);
            let is_last = k + 1 == hs.len();
            if is_last && r.cut_short && !last_chance {
                out.truncate(mark);
                return Some(Outcome::Incomplete);
            }
            let mut s = r.sample;
            s.damaged = !r.complete;
            if r.complete {
                full += 1;
            } else {
                damaged += 1;
            }
            out.push(Record::Sample(s));
            seg_start = body_end;
        }
        Some(Outcome::Stats { full, damaged })
    }

    /// A line wrapped inside the record header itself (`… Engine 000: Avg pro`).
    /// `m` is the message after the vLLM prefix.
    pub(super) fn cut_in_header(
        &mut self,
        line: &[u8],
        m: &[u8],
        no: u64,
        last_chance: bool,
        out: &mut Vec<Record>,
    ) -> Option<Outcome> {
        let m = trim(m);
        let (rest, source) = match strip_engine_label(m) {
            Some((rest, src)) => (rest, src),
            None => (m, String::new()),
        };
        let ok = if rest.is_empty() {
            !source.is_empty()
        } else {
            rest.len() >= 3 && rest.len() < STATS_HEADER.len() && STATS_HEADER.starts_with(rest)
        };
        if !ok {
            return None;
        }
        if !last_chance {
            return Some(Outcome::Incomplete);
        }
        let msg_at = offset_in(line, m);
        out.push(Record::Sample(Sample {
            line: no,
            stamp: last_stamp(&line[..msg_at]).map(|f| f.stamp),
            source: source.into(),
            kind: Some(SampleKind::Interval),
            damaged: true,
            ..Sample::default()
        }));
        Some(Outcome::Stats {
            full: 0,
            damaged: 1,
        })
    }
}

/// vLLM's `MFU:` value: TF/s and GB/s per GPU.
fn mfu(v: &[u8]) -> Option<(f64, f64)> {
    let mut w = v.split(|b| *b == b' ').filter(|x| !x.is_empty());
    let tf = crate::text::fields::float(w.next()?)?;
    (w.next()? == b"TF/s/GPU").then_some(())?;
    let gb = crate::text::fields::float(w.next()?)?;
    (w.next()? == b"GB/s/GPU").then_some((tf, gb))
}
