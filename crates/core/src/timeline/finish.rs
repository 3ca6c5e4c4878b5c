//! The end of the log: the judged run's figures, series and events, for the report.

use super::phase::{main_phase, Phase};
use super::{Finished, Timeline, LONGER_RUN_FACTOR, MAX_SOURCE_SERIES, SHORT_RUN_LINES};
use crate::model::stats::Stream;
use crate::model::time::format_stamp;
use crate::report::{SourceSeries, SourceSummary, Summary, TimelineReport};
use crate::text::round::{dec, sig};

impl Timeline {
    /// The share of the time engine steps (vLLM's `Iteration(N)` lines) spent
    /// prefilling, where enough were timed and their times are the steps' (they
    /// cover most of the time their lines span, per scheduler: stamps are whole
    /// seconds, so the span is a second longer than its stamps say).
    fn step_share(&self) -> Option<f64> {
        let (first, last) = self.step_span?;
        let schedulers = self.config.data_parallel_size.unwrap_or(1).max(1) as f64;
        let covered = self.step_s / schedulers >= super::MIN_STEP_COVERAGE * (last - first + 1.0);
        (self.steps_timed >= super::MIN_STEPS_FOR_SHARE && self.step_s > 0.0 && covered)
            .then(|| dec(self.step_split.prefill_s() / self.step_s, 4))
    }

    /// The report's figures: of the only run, or, when the log holds several,
    /// of the last (or of the latest long one when the last is too short), with
    /// every run in brief.
    pub fn finish(mut self) -> Finished {
        self.flush_merging();
        if self.runs.is_empty() {
            return self.finish_run();
        }
        let mut runs = std::mem::take(&mut self.runs);
        runs.push(self.brief());
        let restarts = self.restarts;
        let kept = self.kept.take();
        let judge_kept = kept.as_ref().is_some_and(|k| self.judges_kept(k));
        let (judged, other) = match kept {
            Some(k) if judge_kept => (*k, None),
            k => (self, k),
        };
        let previous = other
            .filter(|p| p.run + 1 == judged.run)
            .map(|p| Box::new(p.finish_run()));
        if let Some(r) = runs.iter_mut().find(|r| r.run == judged.run + 1) {
            r.analyzed = true;
        }
        let mut f = judged.finish_run();
        f.events.restarts = restarts;
        f.summary.restarts = restarts;
        f.runs = runs;
        f.previous = previous;
        f
    }

    /// Whether the earlier run `kept` is judged rather than this, the last: it was
    /// asked for, or this one is too short and it is long.
    fn judges_kept(&self, kept: &Timeline) -> bool {
        let last_lines = self.run_stat_lines;
        self.wanted == Some(kept.run)
            || (self.wanted != Some(self.run)
                && last_lines < SHORT_RUN_LINES
                && kept.run_stat_lines >= LONGER_RUN_FACTOR * last_lines.max(1))
    }

    /// The run [`Timeline::finish_judging`] judges, whole.
    pub fn into_judged(mut self, wanted: Option<u32>, kept: Option<Timeline>) -> Timeline {
        self.flush_merging();
        self.wanted = wanted;
        match kept {
            Some(k) if !self.runs.is_empty() && self.judges_kept(&k) => k,
            _ => self,
        }
    }

    fn finish_run(mut self) -> Finished {
        self.decode.close(&mut self.series, false);
        self.prefill.close(&mut self.series, true);
        let has_decode = self.decode.rounds > 0;
        let (span, idle) = self.span_idle();
        let busy = span - idle;
        let preemptions = self.preemptions();
        if self.preempt_cumulative_max > 0 {
            self.retracted_requests = self.retracted_requests.max(self.preempt_cumulative_max);
        }
        self.events.preemptions = preemptions;
        let main = main_phase(&self.decode, &self.prefill);
        let input_stream = if self.decode.input.count() > 0 {
            &self.decode.input
        } else {
            &self.prefill.input
        };
        // A figure the main phase lacks (cut lines, old formats) comes from the other phase.
        let either = |f: fn(&Phase) -> &Stream| {
            f(main)
                .distribution()
                .or_else(|| f(&self.prefill).distribution())
        };
        let summary = Summary {
            gen_throughput_tok_s: self.decode.gen.distribution(),
            input_throughput_tok_s: input_stream.distribution(),
            running_requests: either(|p| &p.running),
            queued_requests: either(|p| &p.queued),
            kv_usage: either(|p| &p.kv_usage),
            kv_tokens: either(|p| &p.kv_tokens),
            generated_tokens_estimate: sig(self.gen_tokens),
            sustained_gen_tok_s: self.sustained(busy),
            prefill_tokens: self.prefill_tokens,
            cached_prompt_tokens: self.cached_tokens,
            retractions: self.events.retractions + preemptions,
            retracted_requests: self.retracted_requests,
            // Scaled to every retraction where only some lines said what they freed.
            retracted_tokens: (self.retractions_with_tokens > 0).then(|| {
                let all = self.events.retractions.max(self.retractions_with_tokens);
                self.retracted_tokens * all / self.retractions_with_tokens
            }),
            out_of_memory_events: self.events.out_of_memory,
            restarts: self.events.restarts,
            prefill_time_share: if self.iteration_s > 0.0 {
                let prefill_s: f64 = self.sources.iter().map(|s| s.split.prefill_s()).sum();
                Some(dec(prefill_s / self.iteration_s, 4))
            } else {
                self.step_share()
            },
            graph_lines: self.graph_lines,
            graph_off_lines: self.graph_off_lines,
            graph_off_min_running: self.graph_off_min_running,
            engine_estimates: self.engine_est,
            accept_len: self.accept_len,
        };
        let sources = self
            .sources
            .iter()
            .map(|s| SourceSummary {
                source: s.name.to_string(),
                stat_lines: s.stat_lines,
                gen_throughput_tok_s_mean: s.gen.mean().map(sig),
                running_requests_mean: s.running.mean().map(sig),
                queued_requests_mean: s.queued.mean().map(sig),
                kv_usage_mean: s.kv.mean().map(sig),
            })
            .collect();
        let per_source = if self.sources.len() > 1 {
            self.sources
                .iter()
                .take(MAX_SOURCE_SERIES)
                .map(|s| SourceSeries {
                    source: s.name.to_string(),
                    points: s.series.points(has_decode),
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut gaps = self.gaps;
        gaps.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        Finished {
            span_s: sig(span),
            busy_s: sig(busy),
            idle_s: sig(idle),
            first_timestamp: self.first_stamp.as_ref().map(format_stamp),
            last_timestamp: self.last_stamp.as_ref().map(format_stamp),
            config: self.config,
            summary,
            sources,
            events: self.events,
            timeline: TimelineReport {
                bucket_seconds: self.series.bucket_seconds(),
                points: self.series.points(has_decode),
                per_source,
                idle_gaps: gaps,
                idle_gap_count: self.gap_count,
                max_queued_line: main.max_queued_line.map(|(_, l)| l),
                max_running_line: main.max_running_line.map(|(_, l)| l),
                steps: self.series.steps(),
                prefill_gaps: self.prefill_gaps.report(),
                iterations: self.merging,
            },
            runs: Vec::new(),
            previous: None,
        }
    }
}
