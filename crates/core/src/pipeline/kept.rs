//! What a finished read keeps for a front end that judges another server run or
//! zooms into the judged one without reading the log again (the page): every
//! run's timeline as it ended and its client lines, within [`KEPT_BYTES`], and
//! the finer series a keeping timeline holds.

use std::collections::VecDeque;

use super::finish::Judge;
use crate::engines::client::ClientLines;
use crate::report::{Report, TimelineReport};
use crate::timeline::Timeline;

/// Bytes the ended runs may hold at most: past this the oldest are let go (and
/// judged again only by reading the log again, as `--run N` does).
pub const KEPT_BYTES: usize = 64 << 20;
/// What a run's client lines hold at most, counted as such (their streams).
const CLIENT_BYTES: usize = 48 << 10;

/// The runs that ended, oldest first, within [`KEPT_BYTES`].
#[derive(Default)]
pub(super) struct Archive {
    runs: VecDeque<Ended>,
    bytes: usize,
    /// Runs let go for memory.
    let_go: u32,
}

struct Ended {
    timeline: Timeline,
    client: ClientLines,
    bytes: usize,
}

impl Archive {
    pub(super) fn push(&mut self, timeline: Timeline, client: ClientLines) {
        let bytes = timeline.heap_bytes() + std::mem::size_of::<ClientLines>() + CLIENT_BYTES;
        self.bytes += bytes;
        self.runs.push_back(Ended {
            timeline,
            client,
            bytes,
        });
        while self.bytes > KEPT_BYTES {
            let Some(e) = self.runs.pop_front() else {
                break;
            };
            self.bytes -= e.bytes;
            self.let_go += 1;
        }
    }

    fn get(&self, run: u32) -> Option<&Ended> {
        self.runs.iter().find(|e| e.timeline.run() == run)
    }
}

/// A finished read, kept ([`crate::Analyzer::finish_keeping`]).
pub struct Kept {
    pub(super) judge: Judge,
    /// The run the read asked for (0-based), the earlier run it kept whole and
    /// that run's client lines.
    pub(super) read_wanted: Option<u32>,
    pub(super) read_kept: Option<Timeline>,
    pub(super) read_client_kept: Option<(u32, ClientLines)>,
    /// The last run as the log ended (its kept run taken out), and its client lines.
    pub(super) last: Timeline,
    pub(super) last_client: ClientLines,
    pub(super) archive: Archive,
}

impl Kept {
    /// The report `--run run` gives (`None`: no `--run`), byte for byte; `None`
    /// when a run it needs was let go for memory (read the log again then).
    pub fn report(&self, run: Option<u32>) -> Option<Report> {
        let (wanted, kept) = self.timelines(run)?;
        let f = self.last.clone().finish_judging(wanted, kept.cloned());
        let last_run = self.last.run();
        Some(self.judge.report(f, |judged| match judged {
            None => self.last_client.clone(),
            Some(j) if j == last_run => self.last_client.clone(),
            Some(j) => self.client_lines(j).unwrap_or_default(),
        }))
    }

    /// The series of the run `report(run)` judges over `[t0_s, t1_s)` (seconds from
    /// its first stats line) at chart resolution: the report's `timeline` shape,
    /// re-bucketed from the finer series (see `timeline::series::Series::window`).
    pub fn window(&self, run: Option<u32>, t0_s: f64, t1_s: f64) -> Option<TimelineReport> {
        let (wanted, kept) = self.timelines(run)?;
        let judged = self.last.clone().into_judged(wanted, kept.cloned());
        Some(judged.window(t0_s, t1_s))
    }

    /// The runs (1-based) judged without reading again: all but those let go.
    pub fn runs_kept(&self) -> Vec<u32> {
        (1..=self.last.run() + 1)
            .filter(|&r| self.timelines(Some(r)).is_some())
            .collect()
    }

    /// Runs let go for memory ([`KEPT_BYTES`]).
    pub fn runs_let_go(&self) -> u32 {
        self.archive.let_go
    }

    /// Bytes held, roughly.
    pub fn heap_bytes(&self) -> usize {
        self.archive.bytes
            + self.last.heap_bytes()
            + self.read_kept.as_ref().map_or(0, Timeline::heap_bytes)
    }

    /// The run asked for (0-based) and the earlier run a read asking for it
    /// keeps whole; `None` when that run was let go.
    fn timelines(&self, run: Option<u32>) -> Option<(Option<u32>, Option<&Timeline>)> {
        let wanted = run.map(|r| r.saturating_sub(1));
        if wanted == self.read_wanted {
            return Some((wanted, self.read_kept.as_ref()));
        }
        if !self.last.lists_every_run() {
            // Which runs are listed depends on the run asked for.
            return None;
        }
        let kept_run = match wanted {
            Some(w) if w < self.last.run() => Some(w),
            _ => self.last.default_kept_run(),
        };
        let Some(k) = kept_run else {
            return Some((wanted, None));
        };
        let kept = match &self.read_kept {
            Some(t) if t.run() == k => t,
            _ => &self.archive.get(k)?.timeline,
        };
        Some((wanted, Some(kept)))
    }

    fn client_lines(&self, run: u32) -> Option<ClientLines> {
        if let Some(e) = self.archive.get(run) {
            return Some(e.client.clone());
        }
        match &self.read_client_kept {
            Some((r, lines)) if *r == run => Some(lines.clone()),
            _ => None,
        }
    }
}
