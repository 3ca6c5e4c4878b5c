//! The entry point: bytes in, [`Report`] out.

pub mod access_layouts;
mod finish;
pub mod kept;
mod options;
mod pieces;
mod ranges;
pub mod read_ahead;
pub mod roofline;

use options::engines_tried;
pub use options::Options;
mod custom;
mod records;

use std::collections::BTreeMap;

use crate::engines::{parser_for, Engine, LineParser, Parser};
use crate::input::encoding::Decode;
use crate::input::lines::{physical, strip_ansi, Line, LineSplitter, MAX_LINE};
use crate::model::Record;
use crate::pipeline::read_ahead::{Pre, Prepared, ReadAhead};
use crate::report::{InputStats, Report};
use crate::timeline::Timeline;

const MAX_EXAMPLES: usize = 5;
/// Physical lines joined into one wrapped record at most. Terminals wrap a stats
/// line into a handful; the cap keeps a held line followed by thousands of short
/// tails linear instead of re-reading the growing join each time.
const MAX_WRAPPED_JOINS: u32 = 16;
const EXAMPLE_CHARS: usize = 120;
/// The label of a line where the server says it prints no stats lines.
const STATS_DISABLED: &str = "stats_disabled";
/// Bytes inspected to decide whether the input is text.
const SNIFF_BYTES: usize = 64 * 1024;

/// Feed it bytes in chunks of any size, then [`Analyzer::finish`].
pub struct Analyzer {
    opts: Options,
    splitter: LineSplitter,
    parsers: Vec<Parser>,
    timeline: Timeline,
    input: InputStats,
    /// Stats records by engine (indexed by `Engine as usize`), when any line was one's.
    stats_by_engine: [Option<u64>; Engine::ALL.len()],
    /// A stats line that stopped short, waiting to see if the next line is its wrapped tail.
    held: Option<(u64, Vec<u8>)>,
    /// Lines already joined into the held one.
    held_joins: u32,
    scratch: Vec<u8>,
    /// The text of a JSON-wrapped line, and the record it came from (the line
    /// number is set while the text is read).
    json_text: Vec<u8>,
    json_record: Vec<u8>,
    json_record_no: Option<u64>,
    /// A line cut into pieces (Docker's JSON records, CRI's `P` lines), joined
    /// so far (see [`crate::input::pieces`]).
    piece: Option<pieces::Piece>,
    /// Lines joined from pieces that came out longer than [`MAX_LINE`].
    overlong_joined: u64,
    join: Vec<u8>,
    recs: Vec<Record>,
    sniffed: usize,
    odd_bytes: usize,
    /// The first bytes, to name a binary input's format.
    head: Vec<u8>,
    /// UTF-8 as it is, or UTF-16 decoded (into `decoded`) as it comes; the
    /// first encoding decoded, for the report.
    decode: Decode,
    decoded: Vec<u8>,
    encoding: Option<&'static str>,
    /// Benchmark summary blocks and per-request lines, of the timeline's current
    /// run (`client_run`), and of the earlier run it keeps in case the last is short.
    client_lines: crate::engines::client::ClientLines,
    client_run: u32,
    client_kept: Option<(u32, crate::engines::client::ClientLines)>,
    /// The line being fed, as read ahead ([`Analyzer::feed_prepared`]).
    ahead: Option<Ahead>,
    /// The records of the chunk being fed (each line's `Ahead` says which are its own).
    ahead_recs: Vec<Record>,
    /// Stats records by kind: decode, prefill, interval.
    stat_kinds: [u64; 3],
    other_kinds: Tally,
    other_servers: crate::engines::others::OtherServers,
    /// Reads whole lines ahead inside `feed` (`None`: line by line).
    own_ahead: Option<ReadAhead>,
    /// The format files' line formats (`None` without any).
    custom: Option<Box<crate::engines::custom::Reader>>,
    /// Each run that ended, with its client lines ([`Options::keep`]).
    archive: Option<Box<kept::Archive>>,
}

/// A line as read ahead: its reading, and where its records lie in `ahead_recs`.
struct Ahead {
    no: u64,
    pre: Pre,
    recs: std::ops::Range<usize>,
    /// Read from the text of a JSON record.
    json: bool,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer::new(Options::default())
    }
}

impl Analyzer {
    pub fn new(opts: Options) -> Self {
        let timeline = if opts.keep {
            Timeline::keeping(opts.run)
        } else {
            Timeline::judging(opts.run)
        };
        let archive = opts.keep.then(Box::default);
        let parsers = engines_tried(&opts).into_iter().map(parser_for).collect();
        let own_ahead = Some(ReadAhead::new(&opts));
        let custom = crate::engines::custom::Reader::new(&opts.formats).map(Box::new);
        Analyzer {
            custom,
            opts,
            splitter: LineSplitter::default(),
            parsers,
            timeline,
            input: InputStats::default(),
            stats_by_engine: [None; Engine::ALL.len()],
            held: None,
            held_joins: 0,
            scratch: Vec::new(),
            json_text: Vec::new(),
            piece: None,
            overlong_joined: 0,
            json_record: Vec::new(),
            json_record_no: None,
            join: Vec::new(),
            recs: Vec::new(),
            sniffed: 0,
            odd_bytes: 0,
            head: Vec::new(),
            decode: Decode::default(),
            decoded: Vec::new(),
            encoding: None,
            client_lines: crate::engines::client::ClientLines::default(),
            client_run: 0,
            client_kept: None,
            ahead: None,
            ahead_recs: Vec::new(),
            stat_kinds: [0; 3],
            other_kinds: Tally::default(),
            other_servers: Default::default(),
            own_ahead,
            archive,
        }
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Bytes fed so far.
    pub fn bytes(&self) -> u64 {
        self.input.bytes
    }

    /// Physical lines seen so far.
    pub fn lines(&self) -> u64 {
        self.splitter.lines()
    }

    /// Stats lines recognised so far (read in full or in part).
    pub fn stat_lines(&self) -> u64 {
        self.input.stat_lines + self.input.damaged_stat_lines
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.input.bytes += chunk.len() as u64;
        if self.decode.plain_for(chunk) {
            return self.read_text(chunk);
        }
        let mut decoded = std::mem::take(&mut self.decoded);
        let mut decode = std::mem::take(&mut self.decode);
        self.read_text(decode.text(chunk, &mut decoded));
        self.decode = decode;
        self.decoded = decoded;
    }

    /// The next file of several read as one log begins: its own first bytes
    /// tell its encoding. Its text follows the last file's, as `cat` joins them.
    pub fn next_input(&mut self) {
        let next = self.decode.next_input();
        self.end_input();
        self.decode = next;
    }

    /// What the decoder holds at the end of an input.
    fn end_input(&mut self) {
        let mut decoded = std::mem::take(&mut self.decoded);
        let tail = self.decode.finish(&mut decoded);
        if !tail.is_empty() {
            self.read_text(tail);
        }
        self.decoded = decoded;
        self.encoding = self.encoding.or(self.decode.name());
    }

    fn read_text(&mut self, text: &[u8]) {
        self.sniff(text);
        let Some(mut ahead) = self.own_ahead.take() else {
            return self.split_lines(text);
        };
        let rest = if self.splitter.at_line_start() {
            text
        } else {
            match self.end_line_begun(text) {
                Some(rest) => rest,
                None => {
                    self.own_ahead = Some(ahead);
                    return;
                }
            }
        };
        // Each whole line is read ahead and taken in at once: the steps of
        // `feed_prepared`, without holding a chunk's readings and records.
        let (lines, after) = rest.split_at(whole_lines(rest));
        let mut splitter = std::mem::take(&mut self.splitter);
        crate::input::lines::each_line(lines, |start, end, line, escape| {
            self.ahead_recs.clear();
            let (pre, json) = ahead.read_line(line, escape, &mut self.ahead_recs);
            let n = pre.records().min(self.ahead_recs.len());
            let no = splitter.count_whole(end - start);
            self.line_read_ahead(no, &lines[start..end], pre, json, 0..n);
        });
        self.splitter = splitter;
        self.ahead_recs.clear();
        // What follows the last newline waits for the next chunk.
        self.split_lines(after);
        self.own_ahead = Some(ahead);
    }

    /// The line begun in the last chunk ends first: what follows it, if it ends here.
    // Once per chunk, out of line, as is `whole_lines`: the per-line loop of
    // `read_text` stays small (wasm engines compile it sooner).
    #[inline(never)]
    fn end_line_begun<'t>(&mut self, text: &'t [u8]) -> Option<&'t [u8]> {
        let Some(i) = memchr::memchr(b'\n', text) else {
            self.split_lines(text);
            return None;
        };
        self.split_lines(&text[..=i]);
        Some(&text[i + 1..])
    }

    fn split_lines(&mut self, text: &[u8]) {
        let mut splitter = std::mem::take(&mut self.splitter);
        splitter.feed(text, &mut |l: Line<'_>| self.on_line(l.no, l.bytes));
        self.splitter = splitter;
    }

    /// Reads every line on its own, without reading ahead: the same report,
    /// slower; the reference the reading ahead is tested against.
    #[doc(hidden)]
    pub fn line_by_line(mut self) -> Self {
        self.own_ahead = None;
        self
    }

    /// Feeds a chunk read ahead by a [`crate::ReadAhead`] (possibly on another
    /// thread): the same report as [`Analyzer::feed`], with the lines' reading
    /// already done. The reading is used up (its memory can be reused). Chunks
    /// follow one another as with `feed`; a reading that does not fit (the
    /// previous chunk ended mid-line, other engines) is ignored.
    pub fn feed_prepared(&mut self, chunk: &[u8], prepared: &mut Prepared) {
        let same_engines = prepared
            .engines
            .iter()
            .copied()
            .eq(self.parsers.iter().map(|p| p.engine()));
        if !self.splitter.at_line_start()
            || !same_engines
            || prepared.len != chunk.len()
            || !self.decode.plain_for(chunk)
        {
            return self.feed(chunk);
        }
        self.input.bytes += chunk.len() as u64;
        self.sniff(chunk);
        self.feed_lines_read_ahead(chunk, prepared);
    }

    /// The lines of `chunk`, which starts a line, as `prepared` read them.
    fn feed_lines_read_ahead(&mut self, chunk: &[u8], prepared: &mut Prepared) {
        debug_assert!(self.splitter.at_line_start() && prepared.len == chunk.len());
        // The records stay where they were read; each line gets its range.
        std::mem::swap(&mut self.ahead_recs, &mut prepared.records);
        let mut pres = prepared.lines.drain(..);
        let mut jsons = prepared.json.drain(..);
        let mut next_rec = 0;
        let mut splitter = std::mem::take(&mut self.splitter);
        let newlines = std::mem::take(&mut prepared.newlines);
        splitter.feed_spans(chunk, &newlines, &mut |no, span| {
            let pre = pres.next().unwrap_or(Pre::Unread);
            let json = jsons.next().unwrap_or(false);
            let end = (next_rec + pre.records()).min(self.ahead_recs.len());
            let recs = next_rec..end;
            next_rec = end;
            self.line_read_ahead(no, &chunk[span], pre, json, recs);
        });
        self.splitter = splitter;
        prepared.newlines = newlines;
        drop(pres);
        drop(jsons);
        std::mem::swap(&mut self.ahead_recs, &mut prepared.records);
        prepared.records.clear();
    }

    /// A whole line as read ahead (on another thread, [`Analyzer::feed_prepared`],
    /// or just now, [`Analyzer::feed`]): `between` is its text between its
    /// newlines (read only where needed), `recs` where its records lie in `ahead_recs`.
    #[inline]
    fn line_read_ahead(
        &mut self,
        no: u64,
        between: &[u8],
        pre: Pre,
        json: bool,
        recs: std::ops::Range<usize>,
    ) {
        if let Pre::Stats {
            engine,
            full,
            damaged,
        } = pre
        {
            if self.held.is_none() && self.piece.is_none() {
                // What `on_line` would do, without reading the line's bytes again.
                self.held_joins = 0;
                // Read only to show a damaged record: read ahead on another
                // thread, a line's bytes are rarely still in cache, and one load would miss.
                let raw = || physical(between).0;
                if !json {
                    self.stats_read_ahead(no, engine, full, damaged, recs, raw);
                    return;
                }
                return self.json_stats_read_ahead(no, raw(), engine, full, damaged, recs);
            }
        }
        if let Pre::Unclaimed {
            label: Some(label),
            client: false,
        } = pre
        {
            let sampling = self.other_servers.sampling();
            if self.held.is_none()
                && self.piece.is_none()
                && !self.client_lines.in_block()
                && !(sampling && json)
                && self.custom.is_none()
            {
                // A labelled line nothing else reads (most are access lines),
                // but for the search for other servers in the log's first lines
                // (as written: a JSON record is looked at whole, by `on_line`).
                self.held_joins = 0;
                self.input.json_records += json as u64;
                if sampling {
                    self.other_servers.line(no, physical(between).0);
                }
                self.count_other(label);
                return;
            }
        }
        let reading = Ahead {
            no,
            pre,
            recs,
            json,
        };
        self.line_with_reading(between, reading);
    }

    /// A stats line read ahead from a JSON record's text.
    // Out of line, as is the next: `line_read_ahead` is inlined into the loop over
    // a chunk's lines, which wasm engines compile sooner the smaller it is.
    #[inline(never)]
    fn json_stats_read_ahead(
        &mut self,
        no: u64,
        raw: &[u8],
        engine: Engine,
        full: u32,
        damaged: u32,
        recs: std::ops::Range<usize>,
    ) {
        self.input.json_records += 1;
        // Only a damaged record's example shows the text: unwrapped again then.
        let mut text = std::mem::take(&mut self.json_text);
        let shown = damaged > 0 && crate::input::json_lines::unwrap(raw, &mut text);
        let line: &[u8] = if shown { &text } else { raw };
        self.stats_read_ahead(no, engine, full, damaged, recs, || line);
        self.json_text = text;
    }

    /// A line taken in on its own, with what was read ahead of it.
    #[inline(never)]
    fn line_with_reading(&mut self, between: &[u8], reading: Ahead) {
        let no = reading.no;
        self.ahead = Some(reading);
        self.on_line(no, physical(between).0);
        self.ahead = None;
    }

    #[inline]
    fn sniff(&mut self, chunk: &[u8]) {
        if self.sniffed < SNIFF_BYTES {
            self.sniff_head(chunk);
        }
    }

    /// The input's first bytes, kept and checked for binary bytes.
    #[inline(never)]
    fn sniff_head(&mut self, chunk: &[u8]) {
        let take = &chunk[..chunk.len().min(SNIFF_BYTES - self.sniffed)];
        self.sniffed += take.len();
        let room = crate::input::file_format::HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&take[..take.len().min(room)]);
        self.odd_bytes += take
            .iter()
            .filter(|&&c| c == 0 || (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r' | 0x1b | 0x0c)))
            .count();
    }

    fn on_line(&mut self, no: u64, raw: &[u8]) {
        // A line read ahead holds no ANSI code (those are left unread); one read
        // from a JSON record's text is unwrapped again.
        let (read_ahead, json) = match &self.ahead {
            Some(a) if a.pre != Pre::Unread => (true, a.json),
            _ => (false, false),
        };
        if read_ahead && !json {
            if !self.plain_piece(no, raw) {
                self.on_clean_line(no, raw);
            }
            return;
        }
        if json || crate::input::json_lines::may_be_record(raw) {
            let mut text = std::mem::take(&mut self.json_text);
            if let Some(u) = crate::input::json_lines::read(raw, &mut text) {
                self.input.json_records += 1;
                if self.join_piece(no, &text, u, true) {
                    self.json_text = text;
                    return;
                }
                // Other servers are told by their records as written (llama.cpp's
                // JSON lines), while they are looked for.
                if self.other_servers.sampling() || self.custom.is_some() {
                    self.json_record.clear();
                    self.json_record.extend_from_slice(raw);
                    self.json_record_no = Some(no);
                }
                if read_ahead {
                    self.on_clean_line(no, &text);
                } else {
                    self.on_text(no, &text);
                }
                self.json_record_no = None;
                self.json_text = text;
                return;
            }
            self.json_text = text;
        }
        if !self.plain_piece(no, raw) {
            self.on_text(no, raw);
        }
    }

    /// A line as text: ANSI codes are removed before it is read.
    fn on_text(&mut self, no: u64, raw: &[u8]) {
        if memchr::memchr(0x1b, raw).is_some() {
            let mut s = std::mem::take(&mut self.scratch);
            strip_ansi(raw, &mut s);
            self.on_clean_line(no, &s);
            self.scratch = s;
        } else {
            self.on_clean_line(no, raw);
        }
    }

    fn on_clean_line(&mut self, no: u64, line: &[u8]) {
        if let Some((held_no, held)) = self.held.take() {
            let starts = self.parsers.iter().any(|p| p.starts_record(line));
            if !starts && held.len() + line.len() <= MAX_LINE {
                let mut j = std::mem::take(&mut self.join);
                j.clear();
                j.extend_from_slice(&held);
                j.extend_from_slice(line);
                self.input.joined_wrapped_lines += 1;
                let joins = self.held_joins + 1;
                self.process(held_no, &j, joins >= MAX_WRAPPED_JOINS);
                self.held_joins = joins;
                self.join = j;
                return;
            }
            self.process(held_no, &held, true);
        }
        self.held_joins = 0;
        self.process(no, line, false);
    }
}

/// The length of `text` up to and with its last newline (0 without one).
#[inline(never)]
fn whole_lines(text: &[u8]) -> usize {
    memchr::memrchr(b'\n', text).map_or(0, |i| i + 1)
}

/// Counts by label. Labels are a handful of static strings, so a short list
/// found by address beats a map keyed by `String` on every line; the counts go
/// into the report's map at the end.
#[derive(Default)]
struct Tally {
    counts: Vec<(&'static str, u64)>,
}

impl Tally {
    fn bump(&mut self, key: &'static str) {
        let i = match self.counts.iter().position(|(k, _)| std::ptr::eq(*k, key)) {
            Some(i) => i,
            None => match self.counts.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    self.counts.push((key, 0));
                    self.counts.len() - 1
                }
            },
        };
        self.counts[i].1 += 1;
    }

    fn into_map(self, map: &mut BTreeMap<String, u64>) {
        for (k, n) in self.counts {
            *map.entry(k.to_string()).or_insert(0) += n;
        }
    }
}

/// Analyse a whole buffer at once.
pub fn analyze(bytes: &[u8], opts: Options) -> Report {
    let mut a = Analyzer::new(opts);
    a.feed(bytes);
    a.finish()
}
