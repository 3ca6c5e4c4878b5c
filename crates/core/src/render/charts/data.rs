//! What the charts draw, taken from a [`Report`] or from its JSON.
//!
//! The page's worker sends the JSON report to the main thread, which draws from
//! it: [`ReportView`] reads just the chart fields of that JSON (unknown fields are
//! ignored), so both routes give the same [`ChartData`].

use serde::Deserialize;

use crate::report::Report;

/// One bucket of the timeline, as the charts need it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ChartPoint {
    pub t_s: f64,
    #[serde(default)]
    pub running: Option<f64>,
    #[serde(default)]
    pub queued: Option<f64>,
    #[serde(default)]
    pub kv_usage: Option<f64>,
    #[serde(default)]
    pub gen_tok_s: Option<f64>,
    #[serde(default)]
    pub input_tok_s: Option<f64>,
    #[serde(default)]
    pub retractions: u32,
}

impl From<&crate::report::Point> for ChartPoint {
    fn from(p: &crate::report::Point) -> Self {
        ChartPoint {
            t_s: p.t_s,
            running: p.running,
            queued: p.queued,
            kv_usage: p.kv_usage,
            gen_tok_s: p.gen_tok_s,
            input_tok_s: p.input_tok_s,
            retractions: p.retractions,
        }
    }
}

/// Everything a chart draws: the combined series, the per-source series, and
/// the reference figures (caps, steady-state window).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChartData {
    pub points: Vec<ChartPoint>,
    /// Per source (rank / engine) series, in report order.
    pub sources: Vec<(String, Vec<ChartPoint>)>,
    pub bucket_seconds: f64,
    /// `config.max_running_requests`, drawn as a line on the concurrency chart.
    pub max_running_requests: Option<f64>,
    pub kv_capacity_tokens: Option<f64>,
    /// `diagnosis.facts.steady_start_s .. steady_end_s`, shaded on every chart.
    pub steady_window_s: Option<(f64, f64)>,
    /// The engine's word for an eviction (`retraction`, `preemption`), for the event bars.
    pub eviction: String,
    /// `roofline.decode_ceiling_tok_s` and `roofline.mbu`: the ceiling is drawn
    /// dashed on the throughput chart, the MBU named in its legend.
    pub decode_ceiling_tok_s: Option<f64>,
    pub mbu: Option<f64>,
}

impl ChartData {
    pub fn from_report(r: &Report) -> Self {
        let facts = r.diagnosis.as_ref().map(|d| &d.facts);
        ChartData {
            points: r.timeline.points.iter().map(ChartPoint::from).collect(),
            sources: r
                .timeline
                .per_source
                .iter()
                .map(|s| {
                    (
                        s.source.clone(),
                        s.points.iter().map(ChartPoint::from).collect(),
                    )
                })
                .collect(),
            bucket_seconds: r.timeline.bucket_seconds,
            max_running_requests: r.config.max_running_requests.map(|v| v as f64),
            kv_capacity_tokens: r.config.kv_capacity_tokens.map(|v| v as f64),
            steady_window_s: facts.and_then(|f| f.steady_start_s.zip(f.steady_end_s)),
            eviction: r.events.eviction.clone(),
            decode_ceiling_tok_s: r.roofline.as_ref().and_then(|x| x.decode_ceiling_tok_s),
            mbu: r.roofline.as_ref().and_then(|x| x.mbu),
        }
    }

    /// The series of one source, or the combined series for `None` (or an unknown name).
    pub fn series(&self, source: Option<&str>) -> &[ChartPoint] {
        source
            .and_then(|name| self.sources.iter().find(|(s, _)| s == name))
            .map(|(_, p)| p.as_slice())
            .unwrap_or(&self.points)
    }

    /// The engine's word for an eviction, plural: `retractions` (SGLang), `preemptions` (vLLM).
    pub fn events_word(&self) -> String {
        match self.eviction.as_str() {
            "" => "retractions".to_string(),
            w => format!("{w}s"),
        }
    }

    /// Draws other series of the run: a window of its timeline at a finer
    /// width (the report's caps, steady window and words stay).
    pub fn set_timeline(&mut self, t: TimelineView) {
        self.points = t.points;
        self.sources = t
            .per_source
            .into_iter()
            .map(|s| (s.source, s.points))
            .collect();
        self.bucket_seconds = t.bucket_seconds;
    }

    pub fn source_names(&self) -> Vec<String> {
        self.sources.iter().map(|(s, _)| s.clone()).collect()
    }
}

/// The chart fields of the JSON report (`timeline`, `config`, `diagnosis.facts`).
#[derive(Debug, Default, Deserialize)]
pub struct ReportView {
    #[serde(default)]
    events: EventsView,
    #[serde(default)]
    timeline: TimelineView,
    #[serde(default)]
    config: ConfigView,
    #[serde(default)]
    diagnosis: Option<DiagnosisView>,
    #[serde(default)]
    roofline: Option<RooflineView>,
}

#[derive(Debug, Default, Deserialize)]
struct RooflineView {
    #[serde(default)]
    decode_ceiling_tok_s: Option<f64>,
    #[serde(default)]
    mbu: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
struct EventsView {
    #[serde(default)]
    eviction: String,
}

/// The report's `timeline` (its series), as JSON gives it: the report's, or a
/// window of it re-bucketed finer (`Kept::window`) for [`ChartData::set_timeline`].
#[derive(Debug, Default, Deserialize)]
pub struct TimelineView {
    #[serde(default)]
    bucket_seconds: f64,
    #[serde(default)]
    points: Vec<ChartPoint>,
    #[serde(default)]
    per_source: Vec<SourceView>,
}

#[derive(Debug, Deserialize)]
struct SourceView {
    source: String,
    #[serde(default)]
    points: Vec<ChartPoint>,
}

#[derive(Debug, Default, Deserialize)]
struct ConfigView {
    #[serde(default)]
    max_running_requests: Option<f64>,
    #[serde(default)]
    kv_capacity_tokens: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
struct DiagnosisView {
    #[serde(default)]
    facts: FactsView,
}

#[derive(Debug, Default, Deserialize)]
struct FactsView {
    #[serde(default)]
    steady_start_s: Option<f64>,
    #[serde(default)]
    steady_end_s: Option<f64>,
}

impl From<ReportView> for ChartData {
    fn from(v: ReportView) -> Self {
        let facts = v.diagnosis.map(|d| d.facts).unwrap_or_default();
        ChartData {
            points: v.timeline.points,
            sources: v
                .timeline
                .per_source
                .into_iter()
                .map(|s| (s.source, s.points))
                .collect(),
            bucket_seconds: v.timeline.bucket_seconds,
            max_running_requests: v.config.max_running_requests,
            kv_capacity_tokens: v.config.kv_capacity_tokens,
            steady_window_s: facts.steady_start_s.zip(facts.steady_end_s),
            eviction: v.events.eviction,
            decode_ceiling_tok_s: v.roofline.as_ref().and_then(|x| x.decode_ceiling_tok_s),
            mbu: v.roofline.as_ref().and_then(|x| x.mbu),
        }
    }
}
