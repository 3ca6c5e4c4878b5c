//! Records to a timeline: per-source state, ranks combined, streaming statistics,
//! bounded chart series, busy/idle time and events.
//!
//! Ranks (SGLang DP attention) and engines (vLLM DP) print one line each per
//! tick. Lines are grouped into rounds: a round closes when a source reports a
//! second time. Counts and throughput are summed over a round, KV usage averaged.

use crate::report::Gap;
use crate::report::ServerConfig;
mod config;
mod finish;
mod gaps;
mod merge;
mod phase;
pub mod series;
mod step_split;

use phase::{main_phase, Phase};

use crate::model::time::{format_stamp, Clock, Stamp};
use crate::model::{ConfigItem, Event, EventKind, Record, Sample, SampleKind, SourceName, Step};
use crate::report::{
    EventSummary, RunSummary, SourceSeries, SourceSummary, Summary, TimelineReport,
};
use crate::text::round::sig;
use crate::timeline::series::{Obs, Series};

/// A silence longer than this between stats lines is idle time: engines log
/// every few seconds while they work.
pub const IDLE_GAP_S: f64 = 30.0;
const MAX_SOURCES: usize = 256;
const MAX_SOURCE_SERIES: usize = 32;
const MAX_EVENTS_LISTED: usize = 50;
const MAX_GAPS_LISTED: usize = 20;
/// Server runs listed at least, the latest (a crash-looping server restarts
/// without end, so the list is bounded): past twice as many, the oldest are
/// let go but the one asked for; the report counts those not listed.
pub const MAX_RUNS_LISTED: usize = 1000;
/// A last run with fewer stats lines than this is too short to judge when an
/// earlier run has [`LONGER_RUN_FACTOR`] times as many: that one is judged.
pub const SHORT_RUN_LINES: u64 = 20;
const LONGER_RUN_FACTOR: u64 = 5;
/// Engine steps a run must time for the share of its time spent prefilling.
const MIN_STEPS_FOR_SHARE: u64 = 20;
/// The share of the time the step lines span that their printed times must cover
/// to be the steps' times (vLLM's, under async scheduling, are only the wait for a
/// launched step's output: a few µs of each step).
const MIN_STEP_COVERAGE: f64 = 0.5;
/// Tokens a speculative step can commit, at most (drafts are a few to a few dozen long).
const MAX_ACCEPT_LEN: f64 = 1000.0;

/// A running mean: all a source's summary shows (no quantiles, so no histogram per source).
#[derive(Debug, Clone, Default)]
struct Mean {
    n: u64,
    sum: f64,
}

impl Mean {
    fn add(&mut self, v: Option<f64>) {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.n += 1;
            self.sum += v;
        }
    }

    fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }
}

#[derive(Debug, Clone, Default)]
struct SourceAcc {
    /// The label as samples carry it: found by comparing whole fixed-size labels.
    name: SourceName,
    stat_lines: u64,
    gen: Mean,
    running: Mean,
    queued: Mean,
    kv: Mean,
    /// Clock of this source's previous decode/interval line.
    prev_t: Option<f64>,
    series: Series,
    /// Iterations not yet merged into a sample.
    merging: merge::Merging,
    /// Its iterations' prefill part.
    split: step_split::StepSplit,
    /// Prompt tokens of this source's prefill lines since its previous decode line.
    prompt_since: f64,
    /// Prompt tokens of this source's previous line when it was a prefill line.
    last_prefill_tokens: Option<u64>,
}

#[derive(Debug, Clone, Default)]
pub struct Timeline {
    clock: Option<Clock>,
    t0: Option<f64>,
    first_stamp: Option<Stamp>,
    last_stamp: Option<Stamp>,
    last_stat_t: Option<f64>,
    last_was_idle_zero: bool,
    sources: Vec<SourceAcc>,
    decode: Phase,
    prefill: Phase,
    series: Series,
    gen_tokens: f64,
    prefill_tokens: u64,
    cached_tokens: u64,
    idle_s: f64,
    gaps: Vec<Gap>,
    gap_count: u64,
    config: ServerConfig,
    /// Some records were engine iterations: they are merged before use ([`merge`]).
    merging: bool,
    /// Merged samples, to be added (a buffer kept for reuse).
    merged: Vec<Sample>,
    /// Seconds of the iterations merged that say whether they prefilled (their
    /// prefill part is each source's `split`).
    iteration_s: f64,
    /// Sum and count of the speculative tokens per step the log states.
    accept_len: (f64, u64),
    /// Back-to-back prefill batches, timed by their lines' input throughput.
    prefill_gaps: gaps::GapSample,
    /// Engine steps (`Record::Step`): how many, their seconds, the part spent
    /// prefilling.
    steps_timed: u64,
    /// The clock of the first and the last of them.
    step_span: Option<(f64, f64)>,
    step_s: f64,
    step_split: step_split::StepSplit,
    /// Decode lines with a graph field, those without a graph, their smallest batch.
    graph_lines: u64,
    graph_off_lines: u64,
    graph_off_min_running: Option<u32>,
    /// Sums and counts of the engine's own estimates (see `Sample::engine_est`).
    engine_est: [(f64, u64); 3],
    samples_since_start: bool,
    events: EventSummary,
    retracted_requests: u64,
    /// KV tokens the retractions freed, where their lines say, and how many said.
    retracted_tokens: u64,
    retractions_with_tokens: u64,
    /// vLLM V0 prints a cumulative preemption counter.
    preempt_cumulative_max: u64,
    pub clock_regressions: u64,
    /// This run: its number (0 for the first), first line, last stats line, stats lines.
    run: u32,
    run_first_line: u64,
    run_last_line: u64,
    run_stat_lines: u64,
    run_prefill_lines: u64,
    /// This run's clock starts before the previous run's ended.
    run_starts_earlier: bool,
    /// Earlier runs in brief, and restarts counted in the whole log.
    runs: Vec<RunSummary>,
    restarts: u64,
    /// The latest earlier run long enough to judge, whole, in case the last is not
    /// (or the run asked for, once it has ended).
    kept: Option<Box<Timeline>>,
    /// The run asked for (0-based), if any.
    wanted: Option<u32>,
    /// Each run is kept (for a front end that judges another run or zooms without
    /// reading again): its series carry finer twins, and each run that ends is
    /// handed out whole ([`Timeline::take_ended`]).
    keep: bool,
    ended: Vec<Timeline>,
}

/// What the timeline hands to the report.
pub struct Finished {
    pub span_s: f64,
    pub busy_s: f64,
    pub idle_s: f64,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    pub config: ServerConfig,
    pub summary: Summary,
    pub sources: Vec<SourceSummary>,
    pub events: EventSummary,
    pub timeline: TimelineReport,
    /// Every run, when the log holds more than one.
    pub runs: Vec<RunSummary>,
    /// The run just before the judged one, when it was long enough to keep
    /// whole: what a change of settings between the two can be checked against.
    pub previous: Option<Box<Finished>>,
}

impl Timeline {
    fn place(&mut self, st: Option<&Stamp>, line: u64) -> Option<f64> {
        let st = st?;
        let clock = self.clock.get_or_insert_with(Clock::new);
        let tick = clock.place(st);
        if let Some(back) = tick.jumped_back_s {
            self.clock_regressions += 1;
            if self.t0.is_none() && self.run > 0 {
                // The run's first stamp is earlier than the last one before it.
                self.run_starts_earlier = true;
            }
            self.push_event(Event {
                line,
                stamp: None,
                clock_s: None,
                source: String::new(),
                kind: EventKind::ClockJump { seconds: sig(back) },
            });
        }
        Some(tick.seconds)
    }

    fn source_index(&mut self, name: &SourceName) -> usize {
        // Whole labels (a few words each): no length-dependent loop, once per stats line.
        if let Some(i) = self.sources.iter().position(|s| s.name == *name) {
            return i;
        }
        if self.sources.len() >= MAX_SOURCES {
            return MAX_SOURCES - 1;
        }
        let series = if self.keep && self.sources.len() < MAX_SOURCE_SERIES {
            Series::detailed(series::SOURCE_DETAIL_BUCKETS)
        } else {
            Series::default()
        };
        self.sources.push(SourceAcc {
            name: *name,
            series,
            ..SourceAcc::default()
        });
        self.sources.len() - 1
    }

    fn push_event(&mut self, mut e: Event) {
        let ev = &mut self.events;
        match e.kind {
            EventKind::Retraction { .. } => ev.retractions += 1,
            EventKind::Preemption { .. } => ev.preemptions += 1,
            EventKind::OutOfMemory => ev.out_of_memory += 1,
            EventKind::Restart => ev.restarts += 1,
            EventKind::Crash => ev.crashes += 1,
            EventKind::ClockJump { .. } => ev.clock_jumps += 1,
        }
        if ev.first.len() < MAX_EVENTS_LISTED {
            if let (Some(t), Some(t0)) = (e.clock_s, self.t0) {
                e.clock_s = Some(sig(t - t0));
            } else {
                e.clock_s = None;
            }
            ev.first.push(e);
        }
    }

    /// Takes a record by reference: samples are large and read where they lie;
    /// events, the only part kept, are rare and cloned.
    pub fn add(&mut self, r: &Record) {
        match r {
            Record::Sample(s) => self.add_sample(s),
            Record::Event(e) => self.add_event(e.clone()),
            Record::Config { line, items } => self.add_config(*line, items),
            Record::Step(st) => self.add_step(st),
            Record::Accepted {
                tokens_per_step, ..
            } => self.add_accepted(*tokens_per_step),
        }
    }

    fn add_accepted(&mut self, tokens: f64) {
        if tokens.is_finite() && (1.0..=MAX_ACCEPT_LEN).contains(&tokens) {
            self.accept_len.0 += tokens;
            self.accept_len.1 += 1;
        }
    }

    /// An engine step the log times (vLLM's `Iteration(N)` lines): its time goes to
    /// its bucket beside the stats lines' rates, and to the share of the time
    /// prefill takes, as TensorRT-LLM's iterations do.
    #[inline(never)]
    fn add_step(&mut self, st: &Step) {
        if !(st.secs.is_finite() && st.secs >= 0.0 && st.secs <= IDLE_GAP_S) {
            return;
        }
        let placed = self.place(st.stamp.as_ref(), st.line);
        // Before the first stats line there is no clock to place it on.
        let (Some(t), Some(t0)) = (placed.or(self.last_stat_t), self.t0) else {
            return;
        };
        self.series.add_step(t - t0, st);
        let span = self.step_span.get_or_insert((t, t));
        span.0 = span.0.min(t);
        span.1 = span.1.max(t);
        self.steps_timed += 1;
        self.step_s += st.secs;
        self.step_split
            .add(st.secs, st.ctx_tokens as f64, st.gen_requests > 0);
    }

    // Rare records, kept out of `add` (inlined where samples are added, which runs
    // for every stats line): the hot code stays small to compile and to cache.
    #[inline(never)]
    fn add_config(&mut self, line: u64, items: &[ConfigItem]) {
        if self.samples_since_start {
            // Startup lines after stats lines: the server restarted.
            self.start_next_run(line);
        }
        self.config.apply(line, items);
    }

    /// A timeline that judges run `run` (1-based) of several, when given.
    pub fn judging(run: Option<u32>) -> Timeline {
        Timeline {
            wanted: run.map(|r| r.saturating_sub(1)),
            ..Timeline::default()
        }
    }

    /// A timeline that keeps every run and finer series ([`Timeline::take_ended`],
    /// [`Timeline::window`]), judging run `run` (1-based) when given.
    pub fn keeping(run: Option<u32>) -> Timeline {
        Timeline {
            keep: true,
            series: Series::detailed(series::DETAIL_BUCKETS),
            ..Timeline::judging(run)
        }
    }

    /// The runs that ended since the last call, each whole as it ended (a
    /// keeping timeline's; none otherwise).
    pub fn take_ended(&mut self) -> Vec<Timeline> {
        std::mem::take(&mut self.ended)
    }

    /// The current run's number (0 for the first): it changes at each restart.
    pub fn run(&self) -> u32 {
        self.run
    }

    /// The number of the earlier run kept whole, if any.
    pub fn kept_run(&self) -> Option<u32> {
        self.kept.as_ref().map(|k| k.run)
    }

    /// Ends this run at a restart: its brief joins the list, and everything that
    /// describes a run (figures, series, config, events) starts afresh, so a
    /// restart with other settings is judged on its own. The clock goes on.
    fn start_next_run(&mut self, line: u64) {
        self.flush_merging();
        let brief = self.brief();
        let mut old = std::mem::take(self);
        self.clock = old.clock.take();
        self.clock_regressions = old.clock_regressions;
        self.runs = std::mem::take(&mut old.runs);
        if self.runs.len() + 1 >= 2 * MAX_RUNS_LISTED {
            // Let go of the oldest at once (not one per restart: each is a shift
            // of the whole list), keeping the run asked for and room for the last.
            let excess = self.runs.len() + 1 - MAX_RUNS_LISTED;
            let mut dropped = 0;
            self.runs.retain(|r| {
                let keep = dropped >= excess || old.wanted == Some(r.run - 1);
                dropped += !keep as usize;
                keep
            });
        }
        self.runs.push(brief);
        self.restarts = old.restarts + 1;
        self.run = old.run + 1;
        self.wanted = old.wanted;
        self.run_first_line = line;
        self.keep = old.keep;
        if old.keep {
            self.series = Series::detailed(series::DETAIL_BUCKETS);
            self.ended = std::mem::take(&mut old.ended);
        }
        let earlier = old.kept.take();
        if old.keep {
            self.ended.push(old.clone());
        }
        let keeps_old = keeps_ended(
            earlier.as_ref().map(|k| (k.run, k.run_stat_lines)),
            (old.run, old.run_stat_lines),
            self.wanted,
        );
        self.kept = if keeps_old {
            Some(Box::new(old))
        } else {
            earlier
        };
        self.push_event(Event {
            line,
            stamp: None,
            clock_s: None,
            source: String::new(),
            kind: EventKind::Restart,
        });
    }

    /// This run in brief.
    fn brief(&self) -> RunSummary {
        let main = main_phase(&self.decode, &self.prefill);
        let (span, idle) = self.span_idle();
        let busy = span - idle;
        RunSummary {
            run: self.run + 1,
            first_line: self.run_first_line.max(1),
            last_line: self.run_last_line,
            first_timestamp: self.first_stamp.as_ref().map(format_stamp),
            last_timestamp: self.last_stamp.as_ref().map(format_stamp),
            span_seconds: sig(span),
            busy_seconds: sig(busy),
            stat_lines: self.run_stat_lines,
            decode_lines: self.run_stat_lines - self.run_prefill_lines,
            prefill_lines: self.run_prefill_lines,
            gen_throughput_tok_s_mean: self.decode.gen.mean().map(sig),
            sustained_gen_tok_s: self.sustained(busy),
            running_requests_mean: main.running.mean().map(sig),
            queued_requests_mean: main.queued.mean().map(sig),
            kv_usage_mean: main.kv_usage.mean().map(sig),
            retractions: self.events.retractions + self.preemptions(),
            out_of_memory: self.events.out_of_memory,
            crashes: self.events.crashes,
            config: self.config.clone(),
            starts_before_previous_ends: self.run_starts_earlier,
            analyzed: false,
        }
    }

    /// Generated tokens ÷ busy seconds.
    fn sustained(&self, busy: f64) -> Option<f64> {
        (busy > 0.0 && self.gen_tokens > 0.0).then(|| sig(self.gen_tokens / busy))
    }

    /// Preemptions: the cumulative counter is the better count when the engine prints one.
    fn preemptions(&self) -> u64 {
        self.events.preemptions.max(self.preempt_cumulative_max)
    }

    /// Span of the stats lines and the idle part of it, seconds.
    fn span_idle(&self) -> (f64, f64) {
        let span = match (self.t0, self.last_stat_t) {
            (Some(a), Some(b)) => (b - a).max(0.0),
            _ => 0.0,
        };
        (span, self.idle_s.min(span))
    }

    #[inline(never)]
    fn add_event(&mut self, mut e: Event) {
        let t = self.place(e.stamp.as_ref(), e.line).or(self.last_stat_t);
        e.clock_s = t;
        match e.kind {
            EventKind::Retraction { requests, tokens } => {
                self.retracted_requests += requests.unwrap_or(1) as u64;
                if let Some(t) = tokens {
                    self.retracted_tokens += t;
                    self.retractions_with_tokens += 1;
                }
                if let (Some(t), Some(t0)) = (t, self.t0) {
                    self.series.add_retraction(t - t0, e.line);
                }
            }
            EventKind::Preemption { cumulative } => {
                if let Some(c) = cumulative {
                    if c > self.preempt_cumulative_max {
                        self.preempt_cumulative_max = c;
                    }
                }
                if let (Some(t), Some(t0)) = (t, self.t0) {
                    self.series.add_retraction(t - t0, e.line);
                }
            }
            _ => {}
        }
        self.push_event(e);
    }

    fn add_sample(&mut self, s: &Sample) {
        if s.interval_s.is_none() && !self.merging {
            return self.add_sample_now(s);
        }
        self.merge(s);
    }

    /// A record of a log with engine iterations: merged with its source's
    /// iterations (or, without an interval, added after them).
    #[inline(never)]
    fn merge(&mut self, s: &Sample) {
        self.merging = true;
        let src = self.source_index(&s.source);
        let mut out = std::mem::take(&mut self.merged);
        let acc = &mut self.sources[src];
        // An iteration of more than the idle gap is no iteration (a damaged or
        // hostile line): its record is taken as it is.
        match s
            .interval_s
            .filter(|t| t.is_finite() && *t > 0.0 && *t <= IDLE_GAP_S)
        {
            Some(secs) => {
                if let Some(input) = s.input_tok_s {
                    // The iteration's own time, in its bucket beside the rates (the step
                    // model reads the decode-only ones): on the clock of the latest line
                    // placed, as merged records are placed once merged.
                    if let (Some(t), Some(t0)) = (self.last_stat_t, self.t0) {
                        let step = Step {
                            line: s.line,
                            stamp: None,
                            ctx_requests: u32::from(input > 0.0),
                            ctx_tokens: (input * secs).round() as u64,
                            gen_requests: s.running.unwrap_or(0),
                            gen_tokens: s.gen_tok_s.map_or(0.0, |g| (g * secs).round()) as u64,
                            secs,
                        };
                        self.series.add_step(t - t0, &step);
                    }
                    self.iteration_s += secs;
                    acc.split
                        .add(secs, input * secs, s.gen_tok_s.is_some_and(|g| g > 0.0));
                }
                acc.merging.add(s, secs, &mut out)
            }
            None => {
                out.extend(acc.merging.take());
                out.push(Sample {
                    interval_s: None,
                    ..s.clone()
                });
            }
        }
        for m in out.drain(..) {
            self.add_sample_now(&m);
        }
        self.merged = out;
    }

    /// Adds every source's iterations not yet merged.
    fn flush_merging(&mut self) {
        if !self.merging {
            return;
        }
        let mut out = std::mem::take(&mut self.merged);
        out.extend(self.sources.iter_mut().filter_map(|a| a.merging.take()));
        for m in out.drain(..) {
            self.add_sample_now(&m);
        }
        self.merged = out;
    }

    fn add_sample_now(&mut self, s: &Sample) {
        self.samples_since_start = true;
        self.run_stat_lines += 1;
        self.run_last_line = s.line;
        let placed = self.place(s.stamp.as_ref(), s.line);
        // Lines without a timestamp inherit the last one: order is what we know.
        let t = placed.or(self.last_stat_t).unwrap_or(0.0);
        if self.t0.is_none() && placed.is_some() {
            self.t0 = Some(t);
        }
        if s.stamp.is_some() {
            if self.first_stamp.is_none() {
                self.first_stamp = s.stamp;
            }
            self.last_stamp = s.stamp;
        }
        let rel = t - self.t0.unwrap_or(t);
        let prefill = s.kind == Some(SampleKind::Prefill);
        self.run_prefill_lines += prefill as u64;

        // Idle accounting: long silences, and intervals that end in a line with nothing to do.
        let mut busy_before = true;
        if let Some(prev) = self.last_stat_t {
            let gap = t - prev;
            busy_before = gap <= IDLE_GAP_S;
            let nothing = s.running == Some(0) && s.queued.unwrap_or(0) == 0 && !prefill;
            if gap > IDLE_GAP_S {
                self.idle_s += gap;
                self.gap_count += 1;
                let g = Gap {
                    start_s: sig(prev - self.t0.unwrap_or(prev)),
                    seconds: sig(gap),
                    line: s.line,
                };
                self.gaps.push(g);
                if self.gaps.len() > MAX_GAPS_LISTED {
                    // Keep the longest.
                    let (i, _) = self
                        .gaps
                        .iter()
                        .enumerate()
                        .min_by(|a, b| a.1.seconds.total_cmp(&b.1.seconds))
                        .expect("non-empty");
                    self.gaps.remove(i);
                }
            } else if nothing && self.last_was_idle_zero {
                self.idle_s += gap.max(0.0);
            }
            self.last_was_idle_zero = nothing;
        }
        self.last_stat_t = Some(t);

        if let Some(a) = s.accept_len.filter(|_| !prefill) {
            self.add_accepted(a);
        }
        for (acc, v) in self.engine_est.iter_mut().zip(s.engine_est) {
            if v.is_finite() && v > 0.0 {
                acc.0 += f64::from(v);
                acc.1 += 1;
            }
        }
        let src = self.source_index(&s.source);
        let mut gen_secs = None;
        let mut prompt_tokens = 0.0;
        {
            let acc = &mut self.sources[src];
            acc.stat_lines += 1;
            if !prefill {
                acc.gen.add(s.gen_tok_s);
                acc.running.add(s.running.map(f64::from));
                acc.queued.add(s.queued.map(f64::from));
                acc.kv.add(s.kv_usage);
                // The time the line's rate covers: merged iterations' own, else
                // since the source's previous line (engines rate the interval since
                // they last logged), unless the server fell silent just before.
                gen_secs = match (s.interval_s, acc.prev_t) {
                    (Some(secs), _) => Some(secs),
                    (None, Some(p)) => {
                        Some(t - p).filter(|dt| *dt > 0.0 && (*dt <= IDLE_GAP_S || busy_before))
                    }
                    _ => None,
                };
                if let (Some(g), Some(secs)) = (s.gen_tok_s, gen_secs) {
                    self.gen_tokens += g * secs;
                }
                acc.prev_t = Some(t);
                prompt_tokens = std::mem::take(&mut acc.prompt_since);
                acc.last_prefill_tokens = None;
            } else {
                let tokens = s.prefill_tokens.unwrap_or(0);
                acc.prompt_since += tokens as f64;
                self.prefill_gaps.add(s, tokens, acc.last_prefill_tokens);
                acc.last_prefill_tokens = Some(tokens);
            }
            if src < MAX_SOURCE_SERIES {
                acc.series.add(
                    rel,
                    s.line,
                    &Obs {
                        running: s.running.map(f64::from),
                        queued: s.queued.map(f64::from),
                        kv_usage: s.kv_usage,
                        gen_tok_s: s.gen_tok_s,
                        input_tok_s: s.input_tok_s,
                        gen_timed: s.gen_tok_s.zip(gen_secs).map(|(g, d)| (g * d, d)),
                        prompt_tokens: 0.0,
                        prefill,
                    },
                );
            }
        }
        if prefill {
            self.prefill_tokens += s.prefill_tokens.unwrap_or(0);
            self.cached_tokens += s.cached_tokens.unwrap_or(0);
            self.prefill.add(src, rel, s, None, &mut self.series, true);
        } else {
            if let Some(p) = s.preempted.filter(|&p| p > 0) {
                // Per-interval preemption counts (vLLM V1) are events too.
                self.events.preemptions += 1;
                self.retracted_requests += p as u64;
                self.series.add_retraction(rel, s.line);
            }
            if let Some(g) = s.graph {
                self.graph_lines += 1;
                if !g {
                    self.graph_off_lines += 1;
                    if let Some(n) = s.running {
                        self.graph_off_min_running =
                            Some(self.graph_off_min_running.map_or(n, |m| m.min(n)));
                    }
                }
            }
            let covered = gen_secs.map(|secs| phase::Covered {
                secs,
                prompt_tokens,
            });
            self.decode
                .add(src, rel, s, covered, &mut self.series, false);
        }
    }
}

/// Whether a run that just ended (`ended`: its number and stats lines) replaces
/// the run kept so far (`kept`) as the one to judge if the last proves too
/// short: the run asked for, else the latest long enough, else the longest
/// short one.
fn keeps_ended(kept: Option<(u32, u64)>, ended: (u32, u64), wanted: Option<u32>) -> bool {
    let (run, lines) = ended;
    match kept {
        _ if wanted == Some(run) => true,
        Some((k, _)) if wanted == Some(k) => false,
        Some((_, k_lines)) if lines < SHORT_RUN_LINES && lines <= k_lines => false,
        _ => lines > 0,
    }
}

impl Timeline {
    /// The run (0-based) a read that asks for none keeps whole besides the last,
    /// from the runs listed: `None` when none is, or some were let go.
    pub fn default_kept_run(&self) -> Option<u32> {
        let mut kept: Option<(u32, u64)> = None;
        for r in &self.runs {
            let ended = (r.run - 1, r.stat_lines);
            if keeps_ended(kept, ended, None) {
                kept = Some(ended);
            }
        }
        kept.map(|(run, _)| run)
    }

    /// Whether every run of the log is listed (none let go past [`MAX_RUNS_LISTED`]).
    pub fn lists_every_run(&self) -> bool {
        self.runs.len() as u64 == self.restarts
    }

    /// The earlier run kept whole, taken out (see [`Timeline::finish_judging`]).
    pub fn take_kept(&mut self) -> Option<Timeline> {
        self.kept.take().map(|k| *k)
    }

    /// Ends the log as a read that asked for run `wanted` (0-based) would, with
    /// `kept` the earlier run such a read keeps whole: the one asked for once it
    /// ended, else [`Timeline::default_kept_run`].
    pub fn finish_judging(mut self, wanted: Option<u32>, kept: Option<Timeline>) -> Finished {
        self.wanted = wanted;
        self.kept = kept.map(Box::new);
        self.finish()
    }

    /// Bytes this run holds on the heap, roughly (its series and statistics).
    pub fn heap_bytes(&self) -> usize {
        let streams = |p: &Phase| {
            [
                &p.running,
                &p.queued,
                &p.kv_usage,
                &p.kv_tokens,
                &p.gen,
                &p.input,
            ]
            .iter()
            .map(|st| st.heap_bytes())
            .sum::<usize>()
        };
        std::mem::size_of::<Timeline>()
            + self.series.heap_bytes()
            + self
                .sources
                .iter()
                .map(|s| std::mem::size_of::<SourceAcc>() + s.series.heap_bytes())
                .sum::<usize>()
            + streams(&self.decode)
            + streams(&self.prefill)
            + self.runs.capacity() * std::mem::size_of::<RunSummary>()
            + self.events.first.capacity() * std::mem::size_of::<Event>()
            + self.gaps.capacity() * std::mem::size_of::<Gap>()
    }

    /// The run's series over `[t0_s, t1_s)` (seconds from its first stats line) at
    /// chart resolution, from the finer twins a keeping timeline holds (see
    /// [`Series::window`]): the combined series and each source's, all in
    /// buckets of one width. The report's `timeline` shape, without its gaps.
    pub fn window(self, t0_s: f64, t1_s: f64) -> TimelineReport {
        let mut t = self;
        t.kept = None;
        t.ended = Vec::new();
        t.flush_merging();
        t.decode.close(&mut t.series, false);
        t.prefill.close(&mut t.series, true);
        let has_decode = t.decode.rounds > 0;
        let shown = if t.sources.len() > 1 {
            &t.sources[..t.sources.len().min(MAX_SOURCE_SERIES)]
        } else {
            &[]
        };
        // One width for all, so a rank's chart breaks its lines where the combined one would.
        let min_width = shown
            .iter()
            .map(|s| s.series.detail_width())
            .fold(0.0, f64::max);
        let (width, points) = t.series.window(t0_s, t1_s, has_decode, min_width);
        let per_source = shown
            .iter()
            .map(|s| SourceSeries {
                source: s.name.to_string(),
                points: s.series.window(t0_s, t1_s, has_decode, width).1,
            })
            .collect();
        TimelineReport {
            bucket_seconds: width,
            points,
            per_source,
            idle_gaps: Vec::new(),
            idle_gap_count: 0,
            max_queued_line: None,
            max_running_line: None,
            // A window is drawn, not judged: the roofline reads the whole run's steps.
            steps: Vec::new(),
            prefill_gaps: Default::default(),
            iterations: false,
        }
    }
}
