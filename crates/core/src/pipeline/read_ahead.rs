//! Reading ahead: the part of line reading that does not depend on earlier
//! lines (complete stats lines, lines no engine parser claims), done on a chunk
//! of whole lines apart from the [`crate::Analyzer`], so a front end can run it
//! on another thread while the analyzer keeps order and state. A line is read
//! ahead only where the outcome is the one the analyzer would reach itself;
//! every other line is left to it.

use super::options::{engines_tried, Options};
use crate::engines::{common, parser_for, Ahead, Engine, LineParser, Parser};
use crate::input::lines;
use crate::model::Record;
use crate::pipeline::access_layouts::{learnable, AccessLayouts};

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
    /// whether it may be a client line ([`crate::engines::client::may_be_client_line`]).
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
    /// Per line: it was read from the text of a JSON record ([`crate::input::json_lines`]).
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
    /// Access lines read in full, by layout: a line of one is labelled at once.
    access: AccessLayouts,
}

impl ReadAhead {
    pub fn new(opts: &Options) -> Self {
        ReadAhead {
            parsers: engines_tried(opts).iter().map(|&e| parser_for(e)).collect(),
            text: Vec::new(),
            access: AccessLayouts::default(),
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
    ///
    /// Inlined, as is [`ReadAhead::line`]: returned through memory, a line's
    /// reading would be written field by field and read back whole by the
    /// caller, a load the processor cannot forward from those stores (the
    /// largest single cost of the chunk loop when not inlined).
    #[inline(always)]
    pub(crate) fn read_line(
        &mut self,
        l: &[u8],
        escape: bool,
        out: &mut Vec<Record>,
    ) -> (Pre, bool) {
        // ANSI codes are stripped in order by the analyzer (also those a JSON record's text holds).
        if escape || crate::input::cri::may_be_piece(l) {
            // A piece of a cut line is joined by the analyzer, in order.
            (Pre::Unread, false)
        } else if crate::input::json_lines::may_be_record(l) {
            let mut text = std::mem::take(&mut self.text);
            let read = match crate::input::json_lines::read(l, &mut text) {
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

    #[inline(always)]
    fn line(&mut self, line: &[u8], out: &mut Vec<Record>) -> Pre {
        if let Some(client) = self.access.find(line) {
            return Pre::Unclaimed {
                label: Some(common::ACCESS_LOG),
                client,
            };
        }
        let mut access = false;
        // Whether every reading holds for all lines of the line's layout.
        let mut learn = true;
        for p in self.parsers.iter_mut() {
            let ahead = p.read_ahead(line, out);
            if let Some(a) = ahead {
                learn &= learnable(p.engine(), a);
            }
            match ahead {
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
        let client = crate::engines::client::may_be_client_line(line);
        if access && learn {
            self.access.learn(line, client);
        }
        Pre::Unclaimed {
            label: if access {
                Some(common::ACCESS_LOG)
            } else {
                common::classify(line)
            },
            client,
        }
    }
}

#[cfg(test)]
// The tests read the bundled fixture logs from disk.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::pipeline::access_layouts::AccessLayouts;

    /// Every line of the bundled examples and fixtures.
    fn lines() -> Vec<Vec<u8>> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut dirs = vec![format!("{root}/examples")];
        for e in std::fs::read_dir(format!("{root}/tests/fixtures")).expect("fixtures") {
            dirs.push(e.expect("entry").path().to_string_lossy().into_owned());
        }
        let mut files: Vec<_> = dirs
            .iter()
            .filter_map(|d| std::fs::read_dir(d).ok())
            .flatten()
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        files.sort();
        assert!(files.len() > 60, "{}", files.len());
        files
            .iter()
            .flat_map(|f| {
                let text = std::fs::read(f).expect("read");
                text.split(|&c| c == b'\n')
                    .map(<[u8]>::to_vec)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Access lines that hold (or nearly hold) the phrases the parsers look for.
    const HOSTILE: [&str; 8] = [
        r#"[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - "POST /Decode batch HTTP/1.1" 200 OK"#,
        r#"[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - "GET /Avg prompt throughput: HTTP/1.1" 200 OK"#,
        r#"[2026-05-07 13:40:42 TP1] Retract requests 10.0.0.1:5 - "GET / HTTP/1.1" 200 OK"#,
        r#"[2026-05-07 13:40:42 DP0 TP0] Decode batch, #running-req: 5 - "GET / HTTP/1.1" 200 OK"#,
        r#"INFO 05-07 13:40:42 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s - "GET / HTTP/1.1" 200 OK"#,
        r#"Iteration 12: {"GET / HTTP/1.1" 200 OK"#,
        r#"[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - "POST /generate HTTP/1.1" 200 OK"#,
        r#"(APIServer pid=4242) INFO:     10.1.2.3:47182 - "POST /v1/completions HTTP/1.1" 200 OK"#,
    ];

    /// Access lines as long as `HOSTILE`'s plain one, each after it, with a
    /// phrase some reading looks for (or a client line's `=`, `{`) written over
    /// its request or its head.
    fn overwritten() -> Vec<Vec<u8>> {
        let base = HOSTILE[6].as_bytes();
        let quote = memchr::memchr(b'"', base).expect("a quote");
        let mut v = Vec::new();
        for p in [
            &b"Decode batch"[..],
            b"Prefill batch",
            b"Avg prompt throughput: ",
            b"Retract requests",
            b"Iteration",
            b"=",
            b"{",
        ] {
            for at in [quote + 1, quote + 6, 1, quote - p.len()] {
                let mut l = base.to_vec();
                l[at..at + p.len()].copy_from_slice(p);
                v.extend([base.to_vec(), l]);
            }
        }
        v
    }

    /// A line's variants that share its layout: one digit before its first
    /// quote changed at a time, then all of them.
    fn variants(line: &[u8]) -> Vec<Vec<u8>> {
        let Some(quote) = memchr::memchr(b'"', line) else {
            return Vec::new();
        };
        let turn = |c: &mut u8| *c = b'0' + (*c - b'0' + 7) % 10;
        let mut all = line.to_vec();
        let mut v = Vec::new();
        for i in (0..quote).filter(|&i| line[i].is_ascii_digit()) {
            let mut one = line.to_vec();
            turn(&mut one[i]);
            turn(&mut all[i]);
            v.push(one);
        }
        v.push(all);
        v
    }

    #[test]
    fn a_layout_learned_reads_its_lines_as_the_parsers_do() {
        let mut lines = lines();
        lines.extend(HOSTILE.iter().map(|l| l.as_bytes().to_vec()));
        lines.extend(overwritten());
        let forced = Engine::ALL.iter().map(|&e| Some(e));
        for engine in std::iter::once(None).chain(forced) {
            let opts = Options {
                engine,
                ..Options::default()
            };
            let mut learning = ReadAhead::new(&opts);
            let mut asking = ReadAhead::new(&opts);
            let mut checked = 0;
            for line in &lines {
                for l in std::iter::once(line.clone()).chain(variants(line)) {
                    // The reference forgets every layout: the parsers are asked each time.
                    asking.access = AccessLayouts::default();
                    let (mut got, mut want) = (Vec::new(), Vec::new());
                    let shown = String::from_utf8_lossy(&l);
                    assert_eq!(
                        learning.line(&l, &mut got),
                        asking.line(&l, &mut want),
                        "{engine:?}: {shown}"
                    );
                    assert_eq!(got, want, "{engine:?}: {shown}");
                    checked += 1;
                }
            }
            let hits = learning.access.hits();
            assert!(checked > 50_000, "{checked}");
            // Learned where SGLang and vLLM are asked (vLLM names access lines).
            let learns = matches!(engine, None | Some(Engine::Vllm));
            assert_eq!(hits > 1_000, learns, "{engine:?}: {hits} hits");
        }
    }
}
