//! `Decode batch` / `Prefill batch` lines: their headers, prefixes and bodies,
//! several records to a line when newlines went missing.

use super::super::prefix::Found as StampFound;
use super::super::prefix::{bracketed_head, bracketed_stamp_with};
use super::super::prefix_cache::PrefixCache;
use super::super::Outcome;
use super::fields::{apply_field, plain_fields, KeyMemo};
use super::ranks::{rank_tokens, read_prefix_with, PrefixInfo, Ranks};
use super::SglangParser;
use crate::model::{Record, Sample, SampleKind};
use crate::text::fields::{trim, uint32};

/// Records found in one line; more than one only when newlines went missing.
const MAX_RECORDS_PER_LINE: usize = 64;

/// The first two-byte separator (`, `, `. `, `: `) in a field list. Fields are a
/// few bytes long, so a plain scan beats setting up a vector search per field.
fn find_sep(hay: &[u8], sep: [u8; 2]) -> Option<usize> {
    hay.windows(2)
        .position(|w| w[0] == sep[0] && w[1] == sep[1])
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Header {
    Decode,
    Prefill,
    NewFill,
}

pub(super) struct Found {
    /// Start of the header word ("Decode", "Prefill", "new").
    pub(super) start: usize,
    /// Just after "batch".
    pub(super) end: usize,
    pub(super) kind: Header,
}

impl SglangParser {
    fn headers(&self, line: &[u8], v: &mut Vec<Found>) {
        v.clear();
        // A search for `batch` itself, not a step from `b` to `b`: a long line
        // of text (a request's prompt) holds a `b` every few dozen bytes.
        // ("batch" cannot overlap itself, so these are all its occurrences.)
        let batch = &super::phrases().batch;
        let mut from = 0;
        while let Some(i) = batch.find(&line[from..]) {
            let pos = from + i;
            from = pos + 1;
            let before = &line[..pos];
            let (kind, start) = if before.ends_with(b"Decode ") {
                (Header::Decode, pos - 7)
            } else if before.ends_with(b"Prefill ") {
                (Header::Prefill, pos - 8)
            } else if before.ends_with(b"new fill ") {
                (Header::NewFill, pos - 9)
            } else {
                continue;
            };
            let end = pos + 5;
            let after = &line[end..];
            let ok = after.starts_with(b". ")
                || after.starts_with(b", ")
                || after.starts_with(b" [")
                || after.starts_with(b"(mixed")
                || after == b"."
                || after == b",";
            if ok {
                v.push(Found { start, end, kind });
                if v.len() >= MAX_RECORDS_PER_LINE {
                    break;
                }
            }
        }
    }

    pub(super) fn parse_stats(
        &mut self,
        line: &[u8],
        no: u64,
        last_chance: bool,
        out: &mut Vec<Record>,
    ) -> Option<Outcome> {
        let mut hs = std::mem::take(&mut self.hdrs);
        self.headers(line, &mut hs);
        let o = if hs.is_empty() {
            None
        } else {
            read_records(&hs, line, no, last_chance, &mut self.memos(), out)
        };
        if let ([h], Some(Outcome::Stats { full: 1, .. })) = (&hs[..], &o) {
            self.templates.learn(line, h, &mut self.keys);
        }
        self.hdrs = hs;
        o
    }
}

/// What the parser remembers from line to line to read the next faster.
struct Memos<'a> {
    ranks: &'a mut PrefixCache<Ranks>,
    keys: &'a mut KeyMemo,
    stamps: &'a mut PrefixCache<Option<StampFound>>,
}

impl SglangParser {
    fn memos(&mut self) -> Memos<'_> {
        Memos {
            ranks: &mut self.ranks,
            keys: &mut self.keys,
            stamps: &mut self.stamps,
        }
    }
}

/// Reads the records whose headers were found in a line.
fn read_records(
    hs: &[Found],
    line: &[u8],
    no: u64,
    last_chance: bool,
    memos: &mut Memos<'_>,
    out: &mut Vec<Record>,
) -> Option<Outcome> {
    let mut full = 0;
    let mut damaged = 0;
    let mut seg_start = 0;
    for (k, h) in hs.iter().enumerate() {
        let body_end = match hs.get(k + 1) {
            Some(next) => cut_before_prefix(line, h.end, next.start),
            None => line.len(),
        };
        let prefix = read_prefix_with(
            &line[seg_start..h.start],
            |p| bracketed_stamp_with(p, |h| memos.stamps.get(h, bracketed_head)),
            |t| memos.ranks.get(t, rank_tokens),
        );
        let body = &line[h.end..body_end];
        let is_last = k + 1 == hs.len();
        out.push(Record::Sample(new_sample(h.kind, no, prefix)));
        let Some(Record::Sample(s)) = out.last_mut() else {
            unreachable!("just pushed")
        };
        let (complete, truncated) = read_body(h.kind, body, s, memos.keys);
        if !complete && truncated && is_last && hs.len() == 1 && !last_chance {
            out.pop();
            return Some(Outcome::Incomplete);
        }
        if complete {
            full += 1;
        } else {
            damaged += 1;
        }
        s.damaged = !complete;
        seg_start = body_end;
    }
    Some(Outcome::Stats { full, damaged })
}

/// Where the next record's prefix begins, so a glued record's body stops there.
fn cut_before_prefix(line: &[u8], body_start: usize, next_header: usize) -> usize {
    let lo = body_start.max(next_header.saturating_sub(96));
    match memchr::memrchr(b'[', &line[lo..next_header]) {
        Some(i) => lo + i,
        None => next_header,
    }
}

/// The sample of a record before its body is read.
fn new_sample(kind: Header, no: u64, prefix: PrefixInfo) -> Sample {
    Sample {
        line: no,
        source: prefix.dp,
        stamp: prefix.stamp,
        kind: Some(match kind {
            Header::Decode => SampleKind::Decode,
            _ => SampleKind::Prefill,
        }),
        ..Sample::default()
    }
}

/// Reads a record body into `s` (from [`new_sample`]; filled where it lies, a
/// sample is large). Returns (read in full, ends cut short).
fn read_body(kind: Header, body: &[u8], s: &mut Sample, memo: &mut KeyMemo) -> (bool, bool) {
    let mut b = body;
    // " [123]" iteration number.
    if b.starts_with(b" [") {
        if let Some(e) = memchr::memchr(b']', b) {
            b = &b[e + 1..];
        }
    }
    // Pre-0.3.6 mixed chunk: "(mixed #running-req: N)".
    let mixed = b.starts_with(b"(mixed #running-req: ");
    if let Some(rest) = b.strip_prefix(b"(mixed #running-req: ") {
        if let Some(e) = memchr::memchr(b')', rest) {
            s.running = uint32(&rest[..e]);
            b = &rest[e + 1..];
        }
    }
    let b = match b.first() {
        Some(b'.') | Some(b',') => &b[1..],
        _ => b,
    };
    let sep: [u8; 2] = if kind == Header::NewFill {
        *b". "
    } else {
        *b", "
    };
    let mut ok = true;
    let mut cut_short = false;
    let trimmed = trim(b);
    let trimmed = trimmed.strip_suffix(b",").unwrap_or(trimmed);
    if sep == *b", " && !mixed && plain_fields(trimmed, s, memo) {
        return finish_body(kind, s, true, false);
    }
    if !mixed {
        // The plain reading stopped part-way: start again from a clean sample.
        *s = Sample {
            line: s.line,
            source: std::mem::take(&mut s.source),
            stamp: s.stamp,
            kind: s.kind,
            ..Sample::default()
        };
    }
    let mut from = 0;
    loop {
        let (seg, last) = match find_sep(&trimmed[from..], sep) {
            Some(i) => {
                let seg = &trimmed[from..from + i];
                from += i + sep.len();
                (seg, false)
            }
            None => (&trimmed[from..], true),
        };
        let seg = trim(seg);
        if !seg.is_empty() {
            match find_sep(seg, *b": ") {
                Some(c) => {
                    let key = &seg[..c];
                    let val = trim(&seg[c + 2..]);
                    if !apply_field(s, key, val) {
                        ok = false;
                        if last {
                            cut_short = true;
                        }
                    }
                }
                // `full=12, swa=34` continuation of the 0.4.9 hybrid usage block.
                None if memchr::memchr(b'=', seg).is_some() && !last => {}
                None => {
                    ok = false;
                    if last {
                        cut_short = true;
                    }
                }
            }
        }
        if last {
            break;
        }
    }
    finish_body(kind, s, ok, cut_short)
}

/// Whether the fields every record of its kind carries were read; returns
/// (read in full, ends cut short).
fn finish_body(kind: Header, s: &Sample, mut ok: bool, mut cut_short: bool) -> (bool, bool) {
    let required = match kind {
        Header::Decode => s.running.is_some() && s.gen_tok_s.is_some(),
        Header::Prefill | Header::NewFill => {
            (s.new_seqs.is_some() || s.prefill_tokens.is_some())
                && (s.running.is_some() || s.queued.is_some())
        }
    };
    if !required {
        ok = false;
        cut_short = true;
    }
    (ok, cut_short)
}
