//! Whole stats lines read against the layouts of earlier lines.
//!
//! A rank prints one line layout millions of times; only its numbers change. A
//! layout (a template: the texts between the values, and which field each value
//! sets) is learned from a line the general reader read in full. A later line
//! whose texts are byte for byte the template's is read by comparing those texts
//! and reading the values, without the header search, the prefix reading or the
//! key lookups.
//!
//! Why the reading is the one the general reader would make:
//! - the stamp occupies the line's first 21 bytes and is read by the same
//!   function, and the text after it up to the first value (the ranks, the
//!   header) is the template's, so the rank label is the template's and the
//!   header search finds the template's one header; values are digits, `.`, `%`
//!   and `True`/`False`, which can neither hide nor form a `batch` header, and the
//!   texts after the first value hold no `batch` at all;
//! - each value is read by the same function as there, the reader of its
//!   slot's kind ([`Slot::kind`]), and stored in the same field; and it must be
//!   followed by the template's next text, which starts with the separator the
//!   general reader checks;
//! - every field is stored the same way, in the same order, so the fields a
//!   record needs are there as in the learned line.
//!
//! Anything else (a value too long, another layout, a damaged line) is a miss,
//! and the general reader reads the line as before.

use super::fields::{
    any_at, count_field, decimal_at, decimal_field, flag_at, plain_fields_marked, tokens_field,
    whole_at, KeyMemo, Kind, Slot,
};
use super::ranks::read_prefix;
use super::stats::{Found, Header};
use crate::engines::prefix::{bracketed_head, bracketed_stamp};
use crate::model::time::Stamp;
use crate::model::{Record, Sample, SampleKind, SourceName};
use crate::text::fields::{starts, trim};

/// `[YYYY-MM-DD HH:MM:SS` and the byte after it, which [`bracketed_head`] reads.
const STAMP_LEN: usize = 21;
/// Bytes after the stamp that pick a template's bucket (ranks and header start).
const KEY_LEN: usize = 16;
const BUCKETS: usize = 256;
const WAYS: usize = 4;
const EMPTY: u16 = u16::MAX;

/// A value's place in a layout: how it reads and where it is stored, decided
/// when the layout is learned ([`Slot::kind`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Hole {
    /// `Decode batch [123]`: skipped, as the general reader skips it.
    Iteration,
    Count(Slot),
    Tokens(Slot),
    Rate(Slot),
    Share(Slot),
    /// One of the engine's own estimates (`Sample::engine_est`).
    Estimate(usize),
    Flag,
    Unused,
}

impl Hole {
    fn of(slot: Slot) -> Hole {
        match slot.kind() {
            Kind::Count => Hole::Count(slot),
            Kind::Tokens => Hole::Tokens(slot),
            Kind::Rate => match slot.estimate() {
                Some(e) => Hole::Estimate(e),
                None => Hole::Rate(slot),
            },
            Kind::Share => Hole::Share(slot),
            Kind::Flag => Hole::Flag,
            Kind::Unused => Hole::Unused,
        }
    }

    /// Reads the value at `i` into its field of `s`, as the general reader
    /// reads and stores it ([`super::fields::store`]): where it ends.
    #[inline(always)]
    fn read(self, line: &[u8], i: usize, s: &mut Sample) -> Option<usize> {
        match self {
            Hole::Iteration => {
                let n = line[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                (n > 0).then_some(i + n)
            }
            Hole::Count(slot) => {
                let (n, end) = whole_at(line, i)?;
                *count_field(s, slot) = Some(u32::try_from(n).ok()?);
                Some(end)
            }
            Hole::Tokens(slot) => {
                let (n, end) = whole_at(line, i)?;
                *tokens_field(s, slot) = Some(n);
                Some(end)
            }
            Hole::Rate(slot) => {
                let (v, end) = decimal_at(line, i, false)?;
                *decimal_field(s, slot) = Some(v);
                Some(end)
            }
            Hole::Estimate(e) => {
                let (v, end) = decimal_at(line, i, false)?;
                s.engine_est[e] = v as f32;
                Some(end)
            }
            Hole::Share(slot) => {
                let (v, end) = decimal_at(line, i, true)?;
                *decimal_field(s, slot) = Some(v);
                Some(end)
            }
            Hole::Flag => {
                let (v, end) = flag_at(line, i)?;
                s.graph = Some(v);
                Some(end)
            }
            Hole::Unused => any_at(line, i),
        }
    }
}

struct Template {
    key: [u8; KEY_LEN],
    kind: SampleKind,
    source: SourceName,
    /// The texts around the values, one after another, from byte 21 on.
    text: Box<[u8]>,
    /// Length of the text before the first value.
    head: usize,
    /// Each value and where the text after it ends in `text`.
    holes: Box<[(Hole, usize)]>,
}

impl Template {
    /// Reads a line into `s`, a sample with every field unset (filled where
    /// it lies: a sample is large). False on a miss, leaving `s` part-filled.
    fn read(&self, line: &[u8], no: u64, stamp: &Stamp, s: &mut Sample) -> bool {
        let mut i = STAMP_LEN;
        if !starts(&line[i..], &self.text[..self.head]) {
            return false;
        }
        i += self.head;
        s.line = no;
        s.stamp = Some(*stamp);
        s.source = self.source;
        s.kind = Some(self.kind);
        let mut from = self.head;
        for &(hole, to) in self.holes.iter() {
            let Some(end) = hole.read(line, i, s) else {
                return false;
            };
            i = end;
            if !starts(&line[i..], &self.text[from..to]) {
                return false;
            }
            i += to - from;
            from = to;
        }
        i == line.len()
    }
}

/// The templates learned so far, in buckets by the text after the stamp.
pub(super) struct Templates {
    list: Vec<Template>,
    buckets: Vec<[u16; WAYS]>,
    hits: u64,
    learned: u64,
    /// The stamp last read, by its text.
    last_stamp: Option<([u8; STAMP_LEN], Stamp)>,
}

impl Default for Templates {
    fn default() -> Self {
        Templates {
            list: Vec::new(),
            buckets: vec![[EMPTY; WAYS]; BUCKETS],
            hits: 0,
            learned: 0,
            last_stamp: None,
        }
    }
}

fn key_of(line: &[u8]) -> Option<[u8; KEY_LEN]> {
    line.get(STAMP_LEN..STAMP_LEN + KEY_LEN)?.try_into().ok()
}

fn bucket_of(key: &[u8; KEY_LEN]) -> usize {
    let a = u64::from_le_bytes(key[..8].try_into().expect("8 bytes"));
    let b = u64::from_le_bytes(key[8..].try_into().expect("8 bytes"));
    ((a ^ b.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize % BUCKETS
}

impl Templates {
    /// Templates that are never learned: the general reader alone.
    #[cfg(test)]
    pub(super) fn off() -> Self {
        Templates {
            learned: u64::MAX,
            ..Templates::default()
        }
    }

    /// Reads a line that matches a learned template into a sample pushed on
    /// `out`; false (and `out` as it was) when none matches.
    pub(super) fn read(&mut self, line: &[u8], no: u64, out: &mut Vec<Record>) -> bool {
        if self.list.is_empty() {
            return false;
        }
        let Some(key) = key_of(line) else {
            return false;
        };
        let b = bucket_of(&key);
        let ways = self.buckets[b];
        let mut stamp = None;
        for (w, &t) in ways.iter().enumerate() {
            if t == EMPTY {
                break;
            }
            let tpl = &self.list[t as usize];
            if tpl.key != key {
                continue;
            }
            let st = match stamp {
                Some(st) => st,
                None => match stamp_of(&mut self.last_stamp, &line[..STAMP_LEN]) {
                    Some(st) => {
                        stamp = Some(st);
                        st
                    }
                    None => return false,
                },
            };
            // Made where it lies: `push` would build it on the stack and copy it.
            out.resize_with(out.len() + 1, || Record::Sample(Sample::default()));
            let Some(Record::Sample(s)) = out.last_mut() else {
                unreachable!("just pushed")
            };
            if tpl.read(line, no, &st, s) {
                self.hits += 1;
                // The layout last read first: a rank keeps its layout.
                self.buckets[b].swap(0, w);
                return true;
            }
            out.pop();
        }
        false
    }

    /// Learns the layout of a line the general reader read in full as one
    /// record with header `h`, where it suits a template.
    pub(super) fn learn(&mut self, line: &[u8], h: &Found, memo: &mut KeyMemo) {
        // A log whose lines never repeat a layout stops paying for learning.
        if self.learned > self.hits / 8 + 64 {
            return;
        }
        if let Some(t) = layout(line, h, memo) {
            self.learned += 1;
            self.insert(t);
        }
    }

    fn insert(&mut self, t: Template) {
        let b = bucket_of(&t.key);
        let ways = &mut self.buckets[b];
        let slot = match ways.iter().position(|&w| w == EMPTY) {
            Some(free) => {
                ways[free] = self.list.len() as u16;
                self.list.push(t);
                return;
            }
            None => ways[WAYS - 1] as usize,
        };
        // A full bucket: the last in its order gives way (a hit moves a layout
        // to the front, so the last is one not read lately).
        self.list[slot] = t;
        ways.swap(0, WAYS - 1);
    }
}

/// [`bracketed_head`] of a line's first bytes, remembered for the next
/// line (a busy log prints many lines within one second).
#[inline]
fn stamp_of(last: &mut Option<([u8; STAMP_LEN], Stamp)>, head: &[u8]) -> Option<Stamp> {
    let head: &[u8; STAMP_LEN] = head.try_into().ok()?;
    match last {
        Some((h, st)) if h == head => Some(*st),
        _ => {
            let st = bracketed_head(head)?.stamp;
            *last = Some((*head, st));
            Some(st)
        }
    }
}

/// The template of a line, if the general reader reads it on the path a
/// template reproduces: the bracketed stamp, no mixed chunk, the plain fields.
fn layout(line: &[u8], h: &Found, memo: &mut KeyMemo) -> Option<Template> {
    let kind = match h.kind {
        Header::Decode => SampleKind::Decode,
        Header::Prefill => SampleKind::Prefill,
        Header::NewFill => return None,
    };
    let key = key_of(line)?;
    let prefix = &line[..h.start];
    bracketed_stamp(prefix)?;
    let mut holes: Vec<(usize, usize, Hole)> = Vec::new();
    let mut body_from = h.end;
    let body = &line[h.end..];
    if body.starts_with(b" [") {
        let e = memchr::memchr(b']', body)?;
        let digits = &body[2..e];
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        holes.push((h.end + 2, h.end + e, Hole::Iteration));
        body_from = h.end + e + 1;
    }
    let b = &line[body_from..];
    if b.starts_with(b"(mixed") {
        return None;
    }
    let b = match b.first() {
        Some(b'.') | Some(b',') => &b[1..],
        _ => b,
    };
    let trimmed = trim(b);
    let trimmed = trimmed.strip_suffix(b",").unwrap_or(trimmed);
    let off = trimmed.as_ptr() as usize - line.as_ptr() as usize;
    let mut scratch = Sample::default();
    let plain = plain_fields_marked(trimmed, &mut scratch, memo, |from, to, slot| {
        holes.push((off + from, off + to, Hole::of(slot)))
    });
    let first = holes.first()?.0;
    if !plain || first < STAMP_LEN + KEY_LEN {
        return None;
    }
    let mut text = line[STAMP_LEN..first].to_vec();
    let head = text.len();
    let mut ends = Vec::with_capacity(holes.len());
    for (k, &(_, to, hole)) in holes.iter().enumerate() {
        let next = holes.get(k + 1).map_or(line.len(), |h| h.0);
        let piece = &line[to..next];
        if memchr::memmem::find(piece, b"batch").is_some() {
            return None;
        }
        text.extend_from_slice(piece);
        ends.push((hole, text.len()));
    }
    Some(Template {
        key,
        kind,
        source: read_prefix(prefix).dp,
        text: text.into(),
        head,
        holes: ends.into(),
    })
}

#[cfg(test)]
// The tests read the bundled fixture logs from disk.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::super::SglangParser;
    use super::*;
    use crate::engines::LineParser;

    /// Every line holding `batch` of the bundled SGLang logs and fixtures.
    fn stats_lines() -> Vec<Vec<u8>> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut files = Vec::new();
        for dir in [
            "examples",
            "tests/fixtures/sglang",
            "tests/fixtures/hostile",
        ] {
            for e in std::fs::read_dir(format!("{root}/{dir}")).expect("dir") {
                let path = e.expect("entry").path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if name.ends_with(".log") && !name.starts_with("vllm") {
                    files.push(path);
                }
            }
        }
        files.sort();
        assert!(files.len() >= 30, "{}", files.len());
        let mut texts: Vec<Vec<u8>> = files
            .iter()
            .map(|f| std::fs::read(f).expect("read"))
            .collect();
        texts.extend(simulated());
        let mut lines = Vec::new();
        for text in texts {
            for l in text.split(|&c| c == b'\n') {
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                if memchr::memmem::find(l, b"batch").is_some() {
                    lines.push(l.to_vec());
                }
            }
        }
        lines
    }

    /// Simulated SGLang logs of every preset, with and without DP ranks,
    /// millisecond stamps and a rank prefix; a few hundred stats lines each.
    fn simulated() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for (k, name) in batchlens_sim::PRESETS.iter().enumerate() {
            let Some(base) = batchlens_sim::SimConfig::preset(name) else {
                continue;
            };
            if base.engine != batchlens_sim::Engine::Sglang {
                continue;
            }
            let cfg = batchlens_sim::SimConfig {
                dp_size: 1 + (k % 3) as u32,
                log_ms: k % 4 == 1,
                rank_prefix_tp0: k % 2 == 0,
                num_requests: 150,
                ..base
            };
            let mut text = Vec::new();
            let mut stats = 0;
            batchlens_sim::simulate(&cfg, &mut |line| {
                if stats < 400 {
                    stats += usize::from(line.contains(" batch"));
                    text.extend_from_slice(line.as_bytes());
                    text.push(b'\n');
                }
            });
            out.push(text);
        }
        assert!(out.len() >= 5, "{}", out.len());
        out
    }

    /// Variants of a line: each run of digits replaced by other values (too
    /// long, too large, fractions, percentages, words), bytes changed at random,
    /// the end cut or padded.
    fn variants(line: &[u8], rng: &mut batchlens_sim::rng::Rng) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < line.len() {
            if !line[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let end = i + line[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            for v in [
                &b"7"[..],
                b"0",
                b"1234567890123456",
                b"99999999999",
                b"",
                b"1.5",
                b"12.5%",
                b"nan",
                b"True",
                b"-3",
            ] {
                let mut l = line[..i].to_vec();
                l.extend_from_slice(v);
                l.extend_from_slice(&line[end..]);
                out.push(l);
            }
            i = end;
        }
        for _ in 0..12 {
            let mut l = line.to_vec();
            let at = rng.below(l.len().max(1));
            let by = b"0123456789,.: %]b[aT"[rng.below(20)];
            match rng.below(3) {
                0 if !l.is_empty() => l[at] = by,
                1 => l.insert(at, by),
                _ if !l.is_empty() => {
                    l.remove(at);
                }
                _ => {}
            }
            out.push(l);
        }
        out.push(line[..line.len().saturating_sub(1)].to_vec());
        let mut padded = line.to_vec();
        padded.extend_from_slice(b", ");
        out.push(padded);
        out
    }

    #[test]
    fn a_template_reads_every_line_as_the_general_reader_does() {
        let mut fast = SglangParser::default();
        let mut general = SglangParser {
            templates: Templates::off(),
            ..SglangParser::default()
        };
        let mut rng = batchlens_sim::rng::Rng::new(7);
        let mut compared = 0;
        for (no, line) in stats_lines().iter().enumerate() {
            for l in std::iter::once(line.clone()).chain(variants(line, &mut rng)) {
                let last_chance = no % 2 == 0;
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let oa = fast.parse(&l, no as u64, last_chance, &mut a);
                let ob = general.parse(&l, no as u64, last_chance, &mut b);
                assert_eq!((oa, &a), (ob, &b), "{}", String::from_utf8_lossy(&l));
                compared += 1;
            }
        }
        assert_eq!(general.templates.hits, 0);
        // Most lines were read by a template, so the comparison covers them.
        assert!(
            fast.templates.hits > compared / 10,
            "{} hits in {compared} lines",
            fast.templates.hits
        );
    }
}
