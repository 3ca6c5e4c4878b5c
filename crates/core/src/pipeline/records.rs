//! What a line's reading becomes: counted, its records added to the timeline.

use super::{Analyzer, EXAMPLE_CHARS, MAX_EXAMPLES, STATS_DISABLED};
use crate::engines::custom::Read;
use crate::engines::{common, Engine, LineParser, Outcome};
use crate::model::{Record, SampleKind};
use crate::pipeline::read_ahead::Pre;
use crate::report::LineExample;
use crate::text::fields::excerpt;

/// The labels of lines a format file's format matched: settings only, and no number at all.
const CUSTOM_FORMAT: &str = "custom_format";
const CUSTOM_FORMAT_EMPTY: &str = "custom_format_no_numbers";

impl Analyzer {
    pub(super) fn process(&mut self, no: u64, line: &[u8], last_chance: bool) {
        let mut outcome = Outcome::NotMine;
        let mut engine = None;
        // The reading done ahead holds for this physical line read on its own.
        let (pre, recs) = match self.ahead.take_if(|a| a.no == no && !last_chance) {
            Some(a) => (a.pre, a.recs),
            None => (Pre::Unread, 0..0),
        };
        let mut unclaimed_label = None;
        match pre {
            Pre::Stats {
                engine,
                full,
                damaged,
            } => return self.stats_read_ahead(no, engine, full, damaged, recs, || line),
            Pre::Unclaimed { label, .. } => unclaimed_label = Some(label),
            Pre::Other { label } => outcome = Outcome::Other(label),
            Pre::Unread => {
                for p in self.parsers.iter_mut() {
                    outcome = p.parse(line, no, last_chance, &mut self.recs);
                    if outcome != Outcome::NotMine {
                        engine = Some(p.engine());
                        break;
                    }
                }
            }
        }
        // Values no server prints make their record damaged, never a figure.
        let impossible = super::ranges::damage_impossible(&mut self.recs);
        match outcome {
            Outcome::Incomplete => {
                self.held = Some((no, line.to_vec()));
                return;
            }
            Outcome::Stats { full, damaged } => {
                let full = full.saturating_sub(impossible);
                self.count_stats(no, engine, full, damaged + impossible, || line);
            }
            Outcome::Other(label) => {
                if label == STATS_DISABLED && self.input.stats_disabled.is_none() {
                    self.input.stats_disabled = Some(LineExample {
                        line: no,
                        text: excerpt(line, EXAMPLE_CHARS),
                    });
                }
                self.client_lines.line(no, line);
                // A server's startup lines name it too: its log may hold nothing else.
                self.other_servers.line(no, line);
                self.count_other(label)
            }
            Outcome::NotMine if self.custom.is_some() && self.custom_line(no, line) => return,
            Outcome::NotMine => {
                let as_written = match self.json_record_no {
                    Some(n) if n == no => &self.json_record[..],
                    _ => line,
                };
                self.other_servers.line(no, as_written);
                match self
                    .client_lines
                    .line(no, line)
                    .or_else(|| unclaimed_label.unwrap_or_else(|| common::classify(line)))
                {
                    Some(label) => self.count_other(label),
                    None => {
                        self.input.unrecognized_lines += 1;
                        if self.input.unrecognized_examples.len() < MAX_EXAMPLES
                            && common::looks_like_stats(line)
                        {
                            self.input.unrecognized_examples.push(LineExample {
                                line: no,
                                text: excerpt(line, EXAMPLE_CHARS),
                            });
                        }
                    }
                }
            }
        }
        let recs = std::mem::take(&mut self.recs);
        self.add_records(&recs);
        self.recs = recs;
        self.recs.clear();
    }

    /// A line no engine claims, tried with the format files' formats (and,
    /// from a JSON record, as written): whether one read it.
    #[inline(never)]
    fn custom_line(&mut self, no: u64, line: &[u8]) -> bool {
        let Some(mut reader) = self.custom.take() else {
            return false;
        };
        let mut recs = std::mem::take(&mut self.recs);
        let mut got = reader.read(line, no, &mut recs);
        if got.is_none() && self.json_record_no == Some(no) {
            got = reader.read(&self.json_record, no, &mut recs);
        }
        self.custom = Some(reader);
        let Some((_, read)) = got else {
            self.recs = recs;
            return false;
        };
        match Some(read) {
            None => {}
            Some(Read::Sample) => self.count_stats(no, None, 1, 0, || line),
            Some(Read::Config) => self.count_other(CUSTOM_FORMAT),
            Some(Read::Empty) => self.count_other(CUSTOM_FORMAT_EMPTY),
        }
        self.add_records(&recs);
        recs.clear();
        self.recs = recs;
        true
    }

    /// A stats line read ahead: its records are in `ahead_recs[recs]`, numbered here.
    pub(super) fn stats_read_ahead<'l>(
        &mut self,
        no: u64,
        engine: Engine,
        full: u32,
        damaged: u32,
        recs: std::ops::Range<usize>,
        line: impl FnOnce() -> &'l [u8],
    ) {
        let mut ahead = std::mem::take(&mut self.ahead_recs);
        let impossible = super::ranges::damage_impossible(&mut ahead[recs.clone()]);
        let full = full.saturating_sub(impossible);
        self.count_stats(no, Some(engine), full, damaged + impossible, line);
        for r in &mut ahead[recs.clone()] {
            if let Record::Sample(s) = r {
                s.line = no;
            }
        }
        self.add_records(&ahead[recs]);
        self.ahead_recs = ahead;
    }

    /// Counts a stats line of `full` whole and `damaged` partly read records;
    /// `line` is read only to show a damaged one.
    fn count_stats<'l>(
        &mut self,
        no: u64,
        engine: Option<Engine>,
        full: u32,
        damaged: u32,
        line: impl FnOnce() -> &'l [u8],
    ) {
        self.input.stat_lines += full as u64;
        self.input.damaged_stat_lines += damaged as u64;
        let n = (full + damaged) as u64;
        if n > 1 {
            self.input.glued_records += n - 1;
        }
        if let Some(e) = engine {
            *self.stats_by_engine[e as usize].get_or_insert(0) += n;
        }
        if damaged > 0 && self.input.damaged_examples.len() < MAX_EXAMPLES {
            self.damaged_example(no, line());
        }
    }

    // Rare: out of the per-line loop it would be inlined into.
    #[inline(never)]
    fn damaged_example(&mut self, no: u64, line: &[u8]) {
        self.input.damaged_examples.push(LineExample {
            line: no,
            text: excerpt(line, EXAMPLE_CHARS),
        });
    }

    fn add_records(&mut self, recs: &[Record]) {
        for r in recs {
            if let Record::Sample(s) = r {
                let k = match s.kind {
                    Some(SampleKind::Decode) => 0,
                    Some(SampleKind::Prefill) => 1,
                    Some(SampleKind::Interval) | None => 2,
                };
                self.stat_kinds[k] += 1;
            }
            self.timeline.add(r);
        }
        if self.timeline.run() != self.client_run {
            self.client_next_run();
        }
    }

    /// A restart: the client lines seen so far belong to the run that ended,
    /// kept with it when the timeline keeps it.
    fn client_next_run(&mut self) {
        let ended = std::mem::take(&mut self.client_lines);
        if let Some(archive) = self.archive.as_mut() {
            for t in self.timeline.take_ended() {
                let client = if t.run() == self.client_run {
                    ended.clone()
                } else {
                    Default::default()
                };
                archive.push(t, client);
            }
        }
        if self.timeline.kept_run() == Some(self.client_run) {
            self.client_kept = Some((self.client_run, ended));
        }
        self.client_run = self.timeline.run();
    }

    pub(super) fn count_other(&mut self, label: &'static str) {
        self.input.other_lines += 1;
        self.other_kinds.bump(label);
    }
}
