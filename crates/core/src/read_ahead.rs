//! Reading ahead: the part of line reading that does not depend on earlier
//! lines (complete stats lines, lines no engine parser claims), done on a chunk
//! of whole lines apart from the [`crate::Analyzer`], so a front end can run it
//! on another thread while the analyzer keeps order and state. A line is read
//! ahead only where the outcome is the one the analyzer would reach itself;
//! every other line is left to it.

use crate::analyzer::Options;
use crate::engines::{common, parser_for, Ahead, Engine, LineParser, Parser};
use crate::lines;
use crate::model::Record;

/// One line's reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pre {
    /// Left to the analyzer.
    Unread,
    /// Stats records of `engine`; the next `full + damaged` records are this line's.
    Stats {
        engine: Engine,
        full: u32,
        damaged: u32,
    },
    /// An engine parser's known non-stats line, labelled (its outcome
    /// `Other(label)`: the parsers are not asked again).
    Other { label: &'static str },
    /// No engine parser claims the line; the generic label, if any, and
    /// whether it may be a client line ([`crate::client::may_be_client_line`]).
    Unclaimed {
        label: Option<&'static str>,
        client: bool,
    },
}

impl Pre {
    /// How many records the line's reading holds (a stats line's, read ahead).
    pub(crate) fn records(self) -> usize {
        match self {
            Pre::Stats { full, damaged, .. } => (full + damaged) as usize,
            _ => 0,
        }
    }
}

/// The reading of a chunk's whole lines, in order.
#[derive(Default)]
pub struct Prepared {
    pub(crate) lines: Vec<Pre>,
    /// Per line: it was read from the text of a JSON record ([`crate::json_lines`]).
    pub(crate) json: Vec<bool>,
    /// Offsets of the chunk's newlines (one per line), so the analyzer need not search again.
    pub(crate) newlines: Vec<u32>,
    pub(crate) records: Vec<Record>,
    /// The engines tried, in order: the analyzer uses a reading only if its own match.
    pub(crate) engines: Vec<Engine>,
    /// Bytes of the chunk read.
    pub(crate) len: usize,
}

impl Prepared {
    /// Lines read ahead (the rest are left to the analyzer).
    pub fn lines_read(&self) -> usize {
        self.lines.iter().filter(|p| **p != Pre::Unread).count()
    }
}

/// Reads chunks ahead with its own parsers. Create one per thread.
pub struct ReadAhead {
    parsers: Vec<Parser>,
    /// The text of the JSON record being read.
    text: Vec<u8>,
}

impl ReadAhead {
    pub fn new(opts: &Options) -> Self {
        ReadAhead {
            parsers: crate::analyzer::engines_tried(opts)
                .iter()
                .map(|&e| parser_for(e))
                .collect(),
            text: Vec::new(),
        }
    }

    /// Reads the whole lines of `chunk` (up to its last newline). Feed the same
    /// chunk to [`crate::Analyzer::feed_prepared`] with the result.
    pub fn read(&mut self, chunk: &[u8]) -> Prepared {
        let mut p = Prepared::default();
        self.read_into(chunk, &mut p);
        p
    }

    /// [`ReadAhead::read`] into a reused `Prepared` (its memory is kept).
    pub fn read_into(&mut self, chunk: &[u8], p: &mut Prepared) {
        p.lines.clear();
        p.json.clear();
        p.newlines.clear();
        p.records.clear();
        p.engines.clear();
        p.len = chunk.len();
        if u32::try_from(chunk.len()).is_err() {
            // Left to the analyzer whole (newline offsets are kept as u32).
            return;
        }
        p.engines.extend(self.parsers.iter().map(|p| p.engine()));
        lines::newlines(chunk, &mut p.newlines, |l, escape| {
            let (pre, json) = self.read_line(l, escape, &mut p.records);
            p.lines.push(pre);
            p.json.push(json);
        });
    }

    /// The reading of one whole line `l` (`escape`: it holds an escape byte),
    /// its records pushed on `out`; and whether it was read from the text of a
    /// JSON record.
    #[inline]
    pub(crate) fn read_line(
        &mut self,
        l: &[u8],
        escape: bool,
        out: &mut Vec<Record>,
    ) -> (Pre, bool) {
        // ANSI codes are stripped in order by the analyzer (also those a JSON record's text holds).
        if escape || crate::cri::may_be_piece(l) {
            // A piece of a cut line is joined by the analyzer, in order.
            (Pre::Unread, false)
        } else if crate::json_lines::may_be_record(l) {
            let mut text = std::mem::take(&mut self.text);
            let read = match crate::json_lines::read(l, &mut text) {
                None => (self.line(l, out), false),
                // A piece of a cut line is joined by the analyzer, in order.
                Some(u) if u.piece => (Pre::Unread, false),
                Some(_) if memchr::memchr(0x1b, &text).is_some() => (Pre::Unread, false),
                Some(_) => (self.line(&text, out), true),
            };
            self.text = text;
            read
        } else {
            (self.line(l, out), false)
        }
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<Record>) -> Pre {
        let mut access = false;
        for p in self.parsers.iter_mut() {
            match p.read_ahead(line, out) {
                Some(Ahead::Stats { full, damaged }) => {
                    return Pre::Stats {
                        engine: p.engine(),
                        full,
                        damaged,
                    }
                }
                Some(Ahead::Other(label)) => return Pre::Other { label },
                Some(Ahead::NotMine) => {}
                Some(Ahead::AccessLine) => {
                    access = true;
                    break;
                }
                None => return Pre::Unread,
            }
        }
        Pre::Unclaimed {
            label: if access {
                Some(common::ACCESS_LOG)
            } else {
                common::classify(line)
            },
            client: crate::client::may_be_client_line(line),
        }
    }
}
