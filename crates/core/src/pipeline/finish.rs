//! The end of the input: the report, with the diagnosis, predictions and client figures.

use super::kept::Kept;
use super::Analyzer;
use crate::engines::client::ClientLines;
use crate::engines::Engine;
use crate::input::lines::Line;
use crate::report::{ClientFigures, InputStats, Report, SCHEMA_VERSION};

impl Analyzer {
    pub fn finish(self) -> Report {
        self.finish_keeping().0
    }

    /// [`Analyzer::finish`], and with [`super::Options::keep`] what the read kept:
    /// another run's report ([`Kept::report`]) and windows of the judged run's
    /// series ([`Kept::window`]), without reading the log again.
    pub fn finish_keeping(mut self) -> (Report, Option<Kept>) {
        let (input, engine) = self.end_of_input();
        let judge = Judge {
            input,
            engine,
            client: self.opts.client.take(),
            roofline: std::mem::take(&mut self.opts.roofline),
            diagnose: !self.opts.no_diagnosis,
        };
        let current = std::mem::take(&mut self.client_lines);
        let last_run = self.client_run;
        let Some(archive) = self.archive.take() else {
            let kept = self.client_kept.take();
            let f = self.timeline.finish();
            let report = judge.report(f, |judged| match (judged, kept) {
                (Some(j), Some((k, kept))) if j == k => kept,
                (Some(j), _) if j != last_run => ClientLines::default(),
                _ => current,
            });
            return (report, None);
        };
        let mut last = self.timeline;
        let read_kept = last.take_kept();
        let kept = Kept {
            judge,
            read_wanted: self.opts.run.map(|r| r.saturating_sub(1)),
            read_kept,
            read_client_kept: self.client_kept.take(),
            last,
            last_client: current,
            archive: *archive,
        };
        let report = kept
            .report(self.opts.run)
            .expect("the run the read judged is kept");
        (report, Some(kept))
    }

    /// The end of the input: what it says of itself, and the engine judged
    /// (the same whichever run is).
    fn end_of_input(&mut self) -> (InputStats, String) {
        self.end_input();
        let mut splitter = std::mem::take(&mut self.splitter);
        splitter.finish(&mut |l: Line<'_>| self.on_line(l.no, l.bytes));
        self.end_piece();
        if let Some((no, held)) = self.held.take() {
            self.process(no, &held, true);
        }
        let mut input = std::mem::take(&mut self.input);
        for (kind, n) in ["decode", "prefill", "interval"]
            .into_iter()
            .zip(self.stat_kinds)
        {
            if n > 0 {
                input.stat_lines_by_kind.insert(kind.to_string(), n);
            }
        }
        std::mem::take(&mut self.other_kinds).into_map(&mut input.other_lines_by_kind);
        input.lines = splitter.lines();
        input.overlong_lines = splitter.overlong_lines + self.overlong_joined;
        input.clock_regressions = self.timeline.clock_regressions;
        input.encoding = self.encoding.map(str::to_string);
        input.looks_binary = self.sniffed > 0 && self.odd_bytes * 100 > self.sniffed;
        input.other_server = std::mem::take(&mut self.other_servers).finish();
        if input.looks_binary {
            input.binary_format = crate::input::file_format::detect(&self.head);
        }
        let mut by_engine: Vec<(Engine, u64)> = Engine::ALL
            .iter()
            .filter_map(|&e| self.stats_by_engine[e as usize].map(|n| (e, n)))
            .collect();
        by_engine.sort();
        input.stat_lines_by_engine = by_engine
            .iter()
            .map(|(e, n)| (e.name().to_string(), *n))
            .collect();
        let mut engine = match self.opts.engine {
            Some(e) => e.name().to_string(),
            None => by_engine
                .iter()
                .max_by_key(|(e, n)| (*n, std::cmp::Reverse(*e)))
                .filter(|(_, n)| *n > 0)
                .map(|(e, _)| e.name().to_string())
                .unwrap_or_else(|| "unknown".to_string()),
        };
        if let Some(reader) = self.custom.take() {
            input.custom_formats = super::custom::merged(reader.finish());
            if let Some(name) = super::custom::judged(&input.custom_formats, &by_engine, &self.opts)
            {
                engine = name;
                // Its lines name another server (llama.cpp, TGI, …): read now, it is judged.
                input.other_server = None;
            }
            for f in input.custom_formats.iter().filter(|f| f.samples > 0) {
                input.stat_lines_by_engine.insert(f.name.clone(), f.samples);
            }
        }
        // A server batchlens reads is no other server once its stats lines are read.
        if input
            .other_server
            .as_ref()
            .is_some_and(|o| Engine::from_name(&o.name).is_some_and(|e| e.name() == engine))
        {
            input.other_server = None;
        }
        (input, engine)
    }
}

/// What judges a run's timeline once the input has ended: the same for every run.
pub(super) struct Judge {
    input: InputStats,
    engine: String,
    client: Option<ClientFigures>,
    roofline: super::roofline::RooflineChoice,
    diagnose: bool,
}

impl Judge {
    /// The report of a finished timeline; `client_lines` gives the client lines
    /// of the run judged (0-based; `None` for a log of one run).
    pub(super) fn report(
        &self,
        mut f: crate::timeline::Finished,
        client_lines: impl FnOnce(Option<u32>) -> ClientLines,
    ) -> Report {
        let previous = f.previous.take();
        let mut report = report_of(f, self.engine.clone(), self.input.clone());
        let profile = crate::engines::profile_for(&report);
        if report.engine != "unknown" {
            report.events.eviction = profile.eviction.0.to_string();
        }
        // A restart with other settings: the what-if model fitted on the run before
        // predicts the judged run, which measured it.
        report.restart_check = previous.and_then(|p| {
            let before = report_of(*p, report.engine.clone(), InputStats::default());
            crate::analysis::whatif::check_restart(&before, &report, profile)
        });
        // The client figures of the judged run.
        let judged = report.runs.iter().find(|r| r.analyzed).map(|r| r.run - 1);
        let (block, requests) = client_lines(judged).finish();
        report.client =
            crate::engines::client::combine(self.client.clone(), block, requests.as_ref());
        report.requests = requests;
        if let Some(c) = &report.client {
            report.reconciliation = crate::analysis::reconcile::reconcile(&report, c);
        }
        report.roofline = super::roofline::apply(&report, &self.roofline);
        if self.diagnose {
            report.diagnosis = crate::diagnose::diagnose(&report, profile);
        }
        report
    }
}

/// A report of a run's timeline (diagnosis, client figures and predictions are added after).
fn report_of(f: crate::timeline::Finished, engine: String, input: InputStats) -> Report {
    let runs_not_listed = match f.runs.len() as u64 {
        0 => 0,
        listed => (f.events.restarts + 1).saturating_sub(listed),
    };
    Report {
        schema_version: SCHEMA_VERSION,
        engine,
        input,
        span_seconds: f.span_s,
        busy_seconds: f.busy_s,
        idle_seconds: f.idle_s,
        first_timestamp: f.first_timestamp,
        last_timestamp: f.last_timestamp,
        config: f.config,
        summary: f.summary,
        sources: f.sources,
        events: f.events,
        timeline: f.timeline,
        diagnosis: None,
        runs_not_listed,
        runs: f.runs,
        restart_check: None,
        what_if: None,
        reconciliation: None,
        client: None,
        requests: None,
        roofline: None,
    }
}
