//! vLLM log lines, V0 (`metrics.py`) and V1 (`loggers.py`), every variant since 0.2.
//!
//! The periodic stats line is read as `Label: value unit` parts split on `, `,
//! never by position: V1 adds parts only when they are non-zero (`Deferred`,
//! `Preemptions`, `KV fetch`), newer builds add hit rates, and V0 says `Pending`
//! where V1 says `Waiting`. Percentages become fractions.
//!
//! Damaged pastes are common: terminal hard wraps (the line stops mid-part; we
//! answer [`Outcome::Incomplete`] and get the joined text back), several records
//! glued on one physical line (split at each record's prefix) and overwrites in
//! the middle of a record (the part that cannot be read marks it damaged).

mod iteration;
pub mod profile;
mod startup;
mod stats;

#[cfg(test)]
pub(crate) use stats::LOOK_ALIKE;

use memchr::memmem;

use super::common::is_access_line;
use super::prefix::last_stamp;
use super::{ahead_of, Ahead, Engine, LineParser, Outcome};
use crate::model::{Event, EventKind, Record};
use crate::text::fields::{trim, uint};
use startup::banner;
use stats::engine_label;

/// vLLM's default KV block size (tokens), used when the log never states one.
const DEFAULT_BLOCK_SIZE: u64 = 16;

pub(crate) const STATS_HEADER: &[u8] = b"Avg prompt throughput: ";

pub struct VllmParser {
    header: memmem::Finder<'static>,
    /// `.py:` of the `[file.py:NN]` tag that ends vLLM's prefix.
    tag: memmem::Finder<'static>,
    preempt: memmem::Finder<'static>,
    /// The preemption warning's start, printed without the logger's format.
    sequence_group: memmem::Finder<'static>,
    lmcache: memmem::Finder<'static>,
    ray_batch: memmem::Finder<'static>,
    connector: memmem::Finder<'static>,
    uvicorn: memmem::Finder<'static>,
    /// A block size was stated (or defaulted) already.
    block_size_known: bool,
    /// The arguments line being read turns the stats lines off (`--disable-log-stats`).
    stats_off: bool,
}

impl Default for VllmParser {
    fn default() -> Self {
        VllmParser {
            header: memmem::Finder::new(STATS_HEADER),
            tag: memmem::Finder::new(b".py:"),
            preempt: memmem::Finder::new(b" is preempted by PreemptionMode."),
            sequence_group: memmem::Finder::new(b"Sequence group "),
            lmcache: memmem::Finder::new(b"LMCache "),
            ray_batch: memmem::Finder::new(b"[vLLM] Elapsed time for batch"),
            connector: memmem::Finder::new(b"block_manager::vllm::connector"),
            uvicorn: memmem::Finder::new(b"INFO:     "),
            block_size_known: false,
            stats_off: false,
        }
    }
}

pub(super) fn has(line: &[u8], pat: &[u8]) -> bool {
    memmem::find(line, pat).is_some()
}

impl VllmParser {
    /// The V0 preemption WARNING; `msg` starts at `Sequence group`.
    fn parse_preemption(
        &mut self,
        line: &[u8],
        msg: &[u8],
        no: u64,
        out: &mut Vec<Record>,
    ) -> Option<Outcome> {
        self.preempt.find(msg)?;
        let cumulative = memmem::find(msg, b"total_num_cumulative_preemption=").and_then(|i| {
            let v = &msg[i + 32..];
            let e = v
                .iter()
                .position(|c| !c.is_ascii_digit())
                .unwrap_or(v.len());
            uint(&v[..e])
        });
        let msg_at = offset_in(line, msg);
        out.push(Record::Event(Event {
            line: no,
            stamp: last_stamp(&line[..msg_at]).map(|f| f.stamp),
            clock_s: None,
            source: String::new(),
            kind: EventKind::Preemption { cumulative },
        }));
        Some(Outcome::Other("preemption"))
    }
    /// The message after a vLLM prefix (`… [file.py:NN] ` or `… file.py:NN] `), if the line has one.
    fn message<'a>(&self, line: &'a [u8]) -> Option<&'a [u8]> {
        for i in self.tag.find_iter(line).take(4) {
            let rest = &line[i + 4..];
            let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 && rest.get(digits) == Some(&b']') {
                return Some(&rest[digits + 1..]);
            }
        }
        None
    }

    /// What else than the preemption warning a line without a vLLM
    /// `file.py:NN]` tag may be, by its label.
    fn untagged_other(&self, line: &[u8]) -> Option<&'static str> {
        let t = trim(line);
        if let Some(i) = self.lmcache.find(line) {
            let lvl = &line[i + 8..];
            if [&b"INFO"[..], b"DEBUG", b"WARNING", b"ERROR"]
                .iter()
                .any(|l| lvl.starts_with(l))
            {
                return Some("lmcache");
            }
        }
        if self.ray_batch.find(line).is_some() {
            return Some("batch_timing");
        }
        if self.connector.find(line).is_some() {
            return Some("kv_connector");
        }
        if let Some(i) = self.uvicorn.find(line) {
            let m = &line[i + 10..];
            if [
                &b"Started server process"[..],
                b"Waiting for application",
                b"Application startup complete",
                b"Shutting down",
                b"Finished server process",
            ]
            .iter()
            .any(|p| m.starts_with(p))
            {
                return Some("startup");
            }
        }
        if t.starts_with(b"$ vllm ") || t.starts_with(b"vllm serve ") {
            return Some("command");
        }
        None
    }

    /// Where the preemption warning starts in a trimmed line that holds it as
    /// printed without the logger's format.
    fn bare_preemption(&self, t: &[u8]) -> Option<usize> {
        // Only a start within the first 8 bytes counts: the search need not go further.
        let head = &t[..t.len().min(8 + self.sequence_group.needle().len())];
        self.sequence_group.find(head).filter(|&i| i < 8)
    }

    /// Lines without a vLLM `file.py:NN]` tag.
    fn untagged(&mut self, line: &[u8], no: u64, out: &mut Vec<Record>) -> Outcome {
        let t = trim(line);
        if let Some(i) = self.bare_preemption(t) {
            if let Some(o) = self.parse_preemption(line, &t[i..], no, out) {
                return o;
            }
        }
        self.untagged_other(line)
            .map_or(Outcome::NotMine, Outcome::Other)
    }
}

/// `Engine 001: ` / `2 Engines Aggregated: ` at the start of a message: (rest, source).
pub(super) fn strip_engine_label(m: &[u8]) -> Option<(&[u8], String)> {
    let colon = memmem::find(&m[..m.len().min(32)], b": ")?;
    let label = &m[..colon + 2];
    let (_, src) = engine_label(label, label.len())?;
    Some((&m[colon + 2..], src))
}

/// Where `part` (a subslice of `line`) starts in it.
pub(super) fn offset_in(line: &[u8], part: &[u8]) -> usize {
    let off = (part.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
    off.min(line.len())
}

/// The label of a known message `m` (after its tag), which an `Engine 000: `
/// may lead (`Iteration`, cache_config_info).
fn known_message(m: &[u8]) -> Option<&'static str> {
    other_known(strip_engine_label(m).map_or(m, |(rest, _)| rest))
}

const ITERATION: &str = "iteration";
const SPEC_DECODING: &str = "spec_decoding";

/// A step line (`Iteration(N): …`, after the prefix `line[..msg]`): its step, or a
/// damaged stats record when its counts or time cannot be read.
fn step(line: &[u8], msg: &[u8], no: u64, out: &mut Vec<Record>) -> Outcome {
    let m = msg.trim_ascii_start();
    let m = strip_engine_label(m).map_or(m, |(rest, _)| rest);
    match iteration::read(m) {
        iteration::Read::Step(mut s) => {
            s.line = no;
            s.stamp = last_stamp(&line[..offset_in(line, msg)]).map(|f| f.stamp);
            out.push(Record::Step(s));
            Outcome::Other(ITERATION)
        }
        iteration::Read::Dummy => Outcome::Other(ITERATION),
        iteration::Read::Damaged => Outcome::Stats {
            full: 0,
            damaged: 1,
        },
    }
}

/// Known vLLM messages that are not stats lines, by how they start.
fn other_known(m: &[u8]) -> Option<&'static str> {
    const KINDS: &[(&[u8], &str)] = &[
        (b"Prefix cache hit rate: GPU: ", "prefix_cache"),
        (b"SpecDecoding metrics: ", SPEC_DECODING),
        (b"Speculative metrics: ", SPEC_DECODING),
        (b"Iteration(", ITERATION),
        (b"Preempted request ", "preemption_resume"),
        (b"Resumed request ", "preemption_resume"),
        (b"Heartbeat successful", "heartbeat"),
        (b"Received request ", "request_log"),
        (b"Added request ", "request_log"),
        (b"Finished request ", "request_log"),
        (b"Aborted request ", "request_log"),
        (b"generate_stream{", "request_log"),
        (b"generate{", "request_log"),
        (b"AsyncLLM created with api_server_count", "stats_disabled"),
        (b"Starting vLLM API server", "startup"),
        (b"Loading model weights took", "startup"),
        (b"Loading weights took", "startup"),
        (b"Model loading took", "startup"),
        (b"Starting to load model", "startup"),
        (b"Memory profiling takes", "startup"),
        (b"Capturing", "startup"),
        (b"Graph capturing finished", "startup"),
        (b"init engine (profile, create kv cache", "startup"),
        (b"Using max model len", "startup"),
        (b"Supported_tasks", "startup"),
        (b"Supported tasks", "startup"),
        (b"Available routes are", "startup"),
        (b"Route: ", "startup"),
        (b"Automatically detected platform", "startup"),
    ];
    KINDS
        .iter()
        .find(|(p, _)| m.starts_with(p))
        .map(|&(_, k)| k)
}

impl LineParser for VllmParser {
    fn engine(&self) -> Engine {
        Engine::Vllm
    }

    fn read_ahead(&mut self, line: &[u8], out: &mut Vec<Record>) -> Option<Ahead> {
        let mark = out.len();
        let stats = self.parse_stats(line, 0, false, out);
        if stats.is_none() {
            // An access line is turned away right after the stats search.
            if is_access_line(line) {
                return Some(Ahead::AccessLine);
            }
            // A known message (a request log, a startup step) is labelled as
            // `parse` labels it, whatever came before.
            let msg = self.message(line);
            if let Some(m) = msg.map(<[u8]>::trim_ascii_start) {
                if !m.starts_with(b"Sequence group ") {
                    if let Some(k) = known_message(m) {
                        // Lines with a record are read in log order, by `parse`.
                        return (k != ITERATION && k != SPEC_DECODING).then_some(Ahead::Other(k));
                    }
                }
            }
            // A line without vLLM's `file.py:NN]` tag and none of the untagged
            // phrases is none of vLLM's (another engine's stats lines are such).
            return (msg.is_none()
                && self.bare_preemption(trim(line)).is_none()
                && self.untagged_other(line).is_none())
            .then_some(Ahead::NotMine);
        }
        ahead_of(stats, out, mark, || false)
    }

    fn parse(&mut self, line: &[u8], no: u64, last_chance: bool, out: &mut Vec<Record>) -> Outcome {
        if let Some(o) = self.parse_stats(line, no, last_chance, out) {
            return o;
        }
        // HTTP access lines are the commonest non-stats lines of every engine; they are
        // common.rs's to label, so skip the searches below for them.
        if is_access_line(line) {
            return Outcome::NotMine;
        }
        let Some(msg) = self.message(line) else {
            return self.untagged(line, no, out);
        };
        let m = msg.trim_ascii_start();
        if m.starts_with(b"Sequence group ") {
            if let Some(o) = self.parse_preemption(line, m, no, out) {
                return o;
            }
        }
        if let Some(k) = known_message(m) {
            if k == ITERATION {
                return step(line, msg, no, out);
            }
            if k == SPEC_DECODING {
                if let Some(t) = iteration::tokens_per_step(m) {
                    out.push(Record::Accepted {
                        line: no,
                        tokens_per_step: t,
                    });
                }
            }
            return Outcome::Other(k);
        }
        if let Some(o) = self.parse_config(m, no, out) {
            return o;
        }
        if let Some(items) = banner(msg) {
            if !items.is_empty() {
                out.push(Record::Config { line: no, items });
            }
            return Outcome::Other("startup");
        }
        if let Some(o) = self.cut_in_header(line, msg, no, last_chance, out) {
            return o;
        }
        Outcome::NotMine
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ConfigItem, Sample, SampleKind};

    fn run(p: &mut VllmParser, line: &str, last_chance: bool) -> (Outcome, Vec<Record>) {
        let mut out = Vec::new();
        let o = p.parse(line.as_bytes(), 7, last_chance, &mut out);
        (o, out)
    }

    fn one(line: &str) -> (Outcome, Vec<Record>) {
        run(&mut VllmParser::default(), line, true)
    }

    fn sample(line: &str) -> Sample {
        match one(line).1.into_iter().next() {
            Some(Record::Sample(s)) => s,
            other => panic!("no sample: {other:?}"),
        }
    }

    fn config(line: &str) -> Vec<ConfigItem> {
        match one(line).1.into_iter().next() {
            Some(Record::Config { items, .. }) => items,
            other => panic!("no config: {other:?}"),
        }
    }

    #[test]
    fn v0_line_with_and_without_the_final_dot() {
        for l in [
            "INFO 01-22 18:27:20 metrics.py:449] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.7 tokens/s, Running: 1 reqs, Swapped: 2 reqs, Pending: 3 reqs, GPU KV cache usage: 2.0%, CPU KV cache usage: 0.5%.",
            "INFO 01-22 18:27:20 metrics.py:449] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.7 tokens/s, Running: 1 reqs, Swapped: 2 reqs, Pending: 3 reqs, GPU KV cache usage: 2.0%, CPU KV cache usage: 0.5%",
        ] {
            let s = sample(l);
            assert!(!s.damaged, "{l}");
            assert_eq!((s.running, s.swapped, s.queued), (Some(1), Some(2), Some(3)));
            assert_eq!(s.kv_usage, Some(0.02));
            assert_eq!(s.gen_tok_s, Some(41.7));
            assert_eq!(s.input_tok_s, Some(0.0));
            assert_eq!(s.kind, Some(SampleKind::Interval));
            assert_eq!(&*s.source, "");
            let st = s.stamp.unwrap();
            assert_eq!((st.year, st.month, st.day), (None, Some(1), Some(22)));
        }
    }

    #[test]
    fn v1_line_with_every_optional_part() {
        let s = sample("(APIServer pid=7) INFO 11-30 12:00:10 [loggers.py:330] Engine 000: Avg prompt throughput: 812.4 tokens/s, Avg generation throughput: 1530.2 tokens/s, Running: 64 reqs, Waiting: 12 reqs, Deferred: 2 reqs, KV fetch: 1 waiting to start, 2 in progress, 0 completed waiting, Preemptions: 3, GPU KV cache usage: 99.1%, Prefix cache hit rate: 12.5%, External prefix cache hit rate: 100.0%, MM cache hit rate: 0.0%");
        assert!(!s.damaged);
        assert_eq!(&*s.source, "Engine 000");
        assert_eq!(
            (s.running, s.queued, s.preempted),
            (Some(64), Some(12), Some(3))
        );
        assert_eq!(s.kv_usage, Some(0.991));
        assert_eq!(s.prefix_hit, Some(0.125));
        assert_eq!(s.input_tok_s, Some(812.4));
        let s = sample("INFO 11-30 12:00:10 [loggers.py:330] 2 Engines Aggregated: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 4 reqs, Waiting: 0 reqs, XPU KV cache usage: 50.0%");
        assert!(!s.damaged);
        assert_eq!(&*s.source, "aggregated");
        assert_eq!(s.kv_usage, Some(0.5));
        // A CPU backend's pool is the `CPU KV cache usage` part in V1.
        let s = sample("INFO 11-30 12:00:10 [loggers.py:330] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 4 reqs, Waiting: 0 reqs, CPU KV cache usage: 40.0%");
        assert_eq!((s.kv_usage, s.damaged), (Some(0.4), false));
        let s = sample("INFO 11-30 12:00:10 [loggers.py:330] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 40.0%, Prefix cache hit rate: nan%, MM cache hit rate: nan%");
        assert_eq!((s.prefix_hit, s.damaged), (None, false));
    }

    #[test]
    fn wrapped_line_is_incomplete_until_joined() {
        let mut p = VllmParser::default();
        let head = "INFO 07-03 23:23:42 [metrics.py:536] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 616.1 tokens/s, Running: 32 r";
        let (o, r) = run(&mut p, head, false);
        assert_eq!(o, Outcome::Incomplete);
        assert!(r.is_empty());
        let joined = format!("{head}eqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 17.6%, CPU KV cache usage: 0.0%.   ");
        let (o, r) = run(&mut p, &joined, false);
        assert_eq!(
            o,
            Outcome::Stats {
                full: 1,
                damaged: 0
            }
        );
        let Record::Sample(s) = &r[0] else { panic!() };
        assert_eq!(s.running, Some(32));
        // At the last chance the cut record is read as damaged, keeping its clean parts.
        let (o, r) = run(&mut p, head, true);
        assert_eq!(
            o,
            Outcome::Stats {
                full: 0,
                damaged: 1
            }
        );
        let Record::Sample(s) = &r[0] else { panic!() };
        assert_eq!(
            (s.gen_tok_s, s.running, s.damaged),
            (Some(616.1), None, true)
        );
        // Wrapped inside the header.
        let (o, _) = run(
            &mut p,
            "(APIServer pid=1) INFO 10-14 17:07:38 [loggers.py:123] Engine 000: Avg promp",
            false,
        );
        assert_eq!(o, Outcome::Incomplete);
    }

    #[test]
    fn glued_records_are_split_at_each_prefix() {
        let (o, r) = one("INFO 07-28 06:41:09 [loggers.py:118] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 239.2 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 91.6%, Prefix cache hit rate: 0.0%2025-10-15T00:07:38.764529167Z (APIServer pid=1) INFO 07-28 06:41:19 [loggers.py:118] Engine 001: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 240.0 tokens/s, Running: 9 reqs, Waiting: 0 reqs, GPU KV cache usage: 91.9%, Prefix cache hit rate: 0.0%");
        assert_eq!(
            o,
            Outcome::Stats {
                full: 2,
                damaged: 0
            }
        );
        let (Record::Sample(a), Record::Sample(b)) = (&r[0], &r[1]) else {
            panic!()
        };
        assert_eq!((a.running, b.running), (Some(8), Some(9)));
        assert_eq!(&*b.source, "Engine 001");
        assert_eq!(
            b.stamp.unwrap().second_of_day,
            (6 * 3600 + 41 * 60 + 19) as f64
        );
        // A garbled overwrite: the first record is damaged, the second read.
        let (o, _) = one("INFO 07-03 23:23:53 [metrics.py:536] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 597.0 tokens/s, Running: 32 $INFO 07-03 23:23:58 [metrics.py:536] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 589.1 tokens/s, Running: 32 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 24.8%, CPU KV cache usage: 0.0%.");
        assert_eq!(
            o,
            Outcome::Stats {
                full: 1,
                damaged: 1
            }
        );
    }

    #[test]
    fn preemption_warning_is_a_cumulative_event() {
        let (o, r) = one(" Sequence group 221 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. total_num_cumulative_preemption=101");
        assert_eq!(o, Outcome::Other("preemption"));
        let Record::Event(e) = &r[0] else { panic!() };
        assert_eq!(
            e.kind,
            EventKind::Preemption {
                cumulative: Some(101)
            }
        );
        assert!(e.stamp.is_none());
        let (_, r) = one("WARNING 08-20 10:18:39 scheduler.py:1141] Sequence group 147 is preempted by PreemptionMode.SWAP mode because there is not enough KV cache space. total_num_cumulative_preemption=50");
        let Record::Event(e) = &r[0] else { panic!() };
        assert!(e.stamp.is_some());
    }

    #[test]
    fn startup_capacity_and_args() {
        let c = config(
            "INFO 05-25 06:50:29 [executor_base.py:112] # cuda blocks: 27000, # CPU blocks: 2048",
        );
        assert_eq!(
            c,
            [
                ConfigItem::KvBlocks(27000),
                ConfigItem::CpuKvBlocks(2048),
                ConfigItem::BlockSize(16)
            ]
        );
        let c = config("(EngineCore_DP0 pid=9) INFO 05-25 06:50:29 [kv_cache_utils.py:1087] GPU KV cache size: 1,234,560 tokens");
        assert_eq!(c, [ConfigItem::KvCapacityTokens(1_234_560)]);
        let c = config("INFO 05-25 06:50:29 [kv_cache_utils.py:1091] Maximum concurrency for 32,768 tokens per request: 37.68x");
        assert_eq!(c, [ConfigItem::MaxConcurrencyX(37.68)]);
        let c = config("(APIServer pid=1) INFO 05-25 06:50:29 [utils.py:233] non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'max_num_seqs': 128, 'gpu_memory_utilization': 0.95, 'enable_prefix_caching': True, 'block_size': 32}");
        assert!(c.contains(&ConfigItem::Model("Qwen/Qwen3-8B".into())));
        assert!(c.contains(&ConfigItem::MaxRunningRequests(128)));
        assert!(c.contains(&ConfigItem::GpuMemoryUtilization(0.95)));
        assert!(c.contains(&ConfigItem::PrefixCaching(true)));
        assert!(c.contains(&ConfigItem::BlockSize(32)));
        let c = config("INFO 01-01 00:00:00 api_server.py:1] args: Namespace(host=None, model='m', tensor_parallel_size=2, max_num_seqs=256, max_model_len=None, swap_space=4, block_size=None)");
        assert!(c.contains(&ConfigItem::TensorParallel(2)));
        assert!(c.contains(&ConfigItem::SwapSpaceGb(4.0)));
        let c = config("INFO 01-01 00:00:00 [core.py:1] Initializing a V1 LLM engine (v0.8.5) with config: model='Qwen/Qwen3-8B', speculative_config=None, max_seq_len=40960, kv_cache_dtype=auto, enable_prefix_caching=True, compilation_config={\"level\": 3}");
        assert!(c.contains(&ConfigItem::EngineVersion("0.8.5".into())));
        assert!(c.contains(&ConfigItem::ContextLength(40960)));
        assert!(c.contains(&ConfigItem::KvCacheDtype("auto".into())));
        let c = config("INFO 01-01 00:00:00 llm_engine.py:1] Initializing an LLM engine with config: model='m', tokenizer='m', tensor_parallel_size=4, seed=0)");
        assert!(c.contains(&ConfigItem::TensorParallel(4)));
        let c = config("(APIServer pid=1) INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model': 'm', 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 1}}");
        assert!(c.contains(&ConfigItem::SpeculativeAlgorithm("mtp".into())));
        let c = config("INFO 01-01 00:00:00 [core.py:1] Initializing a V1 LLM engine (v0.10.1) with config: model='m', speculative_config=SpeculativeConfig(method='eagle', model='e', num_spec_tokens=3), max_seq_len=4096");
        assert!(c.contains(&ConfigItem::SpeculativeAlgorithm("eagle".into())));
        assert!(c.contains(&ConfigItem::ContextLength(4096)));
        let c = config("INFO 01-01 00:00:00 [config.py:1] Chunked prefill is enabled with max_num_batched_tokens=8192.");
        assert_eq!(c, [ConfigItem::MaxBatchedTokens(8192)]);
        let c = config("INFO 01-01 00:00:00 [config.py:1] Defaulting max_num_seqs to 1024 for OPENAI_API_SERVER usage context.");
        assert_eq!(c, [ConfigItem::MaxRunningRequests(1024)]);
    }

    #[test]
    fn a_step_line_is_a_step_and_an_unreadable_one_is_damaged() {
        let (o, r) = one("(EngineCore_DP0 pid=41) INFO 11-30 12:00:11 [core.py:349] Iteration(515): 0 context requests, 0 context tokens, 64 generation requests, 64 generation tokens, iteration elapsed time: 21.33 ms, GPU KV cache usage: 99.1%");
        assert_eq!(o, Outcome::Other("iteration"));
        let [Record::Step(s)] = &r[..] else {
            panic!("{r:?}")
        };
        assert_eq!((s.line, s.gen_requests, s.ctx_tokens), (7, 64, 0));
        assert_eq!(s.stamp.unwrap().second_of_day, (12 * 3600 + 11) as f64);
        let (o, r) = one("INFO 10-08 13:00:00 [loggers.py:182] Engine 000: Iteration(3): 1 context requests, 2048 context tokens, 7 generation requests, 7 generation tokens, iteration elapsed time: 80.00 ms");
        assert_eq!(o, Outcome::Other("iteration"));
        assert!(matches!(&r[..], [Record::Step(s)] if s.ctx_tokens == 2048));
        // A DP rank's idle step is no work.
        let (o, r) = one("(EngineCore_DP1 pid=42) INFO 11-30 12:00:11 [core.py:349] Iteration(9): 0 context requests, 0 context tokens, 0 generation requests, 0 generation tokens, iteration elapsed time: 0.51 ms (dummy)");
        assert_eq!((o, r.is_empty()), (Outcome::Other("iteration"), true));
        let (o, r) = one("(EngineCore_DP0 pid=41) INFO 11-30 12:00:11 [core.py:349] Iteration(516): 0 context requests, 0 context tokens, 64 generation requests, 64 generation tokens, iteration elapsed ti");
        assert_eq!(
            o,
            Outcome::Stats {
                full: 0,
                damaged: 1
            }
        );
        assert!(r.is_empty());
        let (o, r) = one("(APIServer pid=1) INFO 08-14 11:31:25 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 4.00, Accepted: 1871 tokens, Per-position acceptance rate: 1.000, 1.000, Avg Draft acceptance rate: 99.9%");
        assert_eq!(o, Outcome::Other("spec_decoding"));
        assert_eq!(
            r,
            [Record::Accepted {
                line: 7,
                tokens_per_step: 4.0
            }]
        );
        // Left to `parse`, in log order.
        let mut out = Vec::new();
        let l = b"(EngineCore_DP0 pid=41) INFO 11-30 12:00:11 [core.py:349] Iteration(515): 0 context requests, 0 context tokens, 64 generation requests, 64 generation tokens, iteration elapsed time: 21.33 ms";
        assert_eq!(VllmParser::default().read_ahead(l, &mut out), None);
        assert!(out.is_empty());
    }

    #[test]
    fn known_other_lines() {
        for (l, k) in [
            ("INFO 05-25 06:50:29 [metrics.py:502] Prefix cache hit rate: GPU: 0.00%, CPU: 90.00%", "prefix_cache"),
            ("(EngineCore_0 pid=3) [2025-08-21 07:17:09,753] LMCache INFO: Reqid: x, Total tokens 8891 (vllm_v1_adapter.py:1050:lmcache.integration.vllm.vllm_v1_adapter)", "lmcache"),
            ("(APIServer pid=7) INFO:     Started server process [7]", "startup"),
            ("(APIServer pid=1) INFO 04-15 07:22:41 [utils.py:299]      ", "startup"),
        ] {
            let (o, r) = one(l);
            assert_eq!(o, Outcome::Other(k), "{l}");
            // Nothing stated: no config record (it would read as a restart after stats).
            assert!(r.is_empty(), "{l}");
        }
        let c = config("(EngineCore_DP0 pid=8) INFO 07-01 00:00:00 [core.py:1] Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 7261");
        assert_eq!(c, [ConfigItem::KvBlocks(7261), ConfigItem::BlockSize(16)]);
        let c = config("(APIServer pid=1) INFO 04-15 07:22:41 [utils.py:299]   \u{2588}\u{2584}\u{2588}\u{2580} \u{2588}     \u{2588}  model   google/gemma-4-31B-it");
        assert_eq!(c, [ConfigItem::Model("google/gemma-4-31B-it".into())]);
    }

    #[test]
    fn sglang_lines_are_not_mine() {
        for l in [
            "[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, #token: 81290, token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 94",
            "[2026-02-24 10:55:32 TP0] Prefill batch, #new-seq: 1, #new-token: 2, #cached-token: 0, token usage: 0.70, #running-req: 56, #queue-req: 94",
            "[2025-08-11 17:17:03] max_total_num_tokens=665690, chunked_prefill_size=8192",
        ] {
            assert_eq!(one(l).0, Outcome::NotMine, "{l}");
        }
    }
    #[test]
    fn access_lines_are_found_wherever_the_request_sits() {
        for (l, want) in [
            (
                r#"INFO:     127.0.0.1:43436 - "POST /generate HTTP/1.1" 200 OK"#,
                true,
            ),
            (
                r#"INFO:     10.0.0.1:1 - "GET /metrics HTTP/1.0" 404 Not Found"#,
                true,
            ),
            // The last quote is not the request's: the search finds it.
            (
                r#"INFO: "POST /v1/completions HTTP/1.1" 200 OK "agent""#,
                true,
            ),
            (r#" HTTP/1.1""#, true),
            (r#"HTTP/1.1" 200"#, false),
            (r#"" HTTP/1.""#, true),
            (r#""HTTP/1.1""#, false),
            (r#"""#, false),
            ("no request here", false),
            ("", false),
        ] {
            assert_eq!(is_access_line(l.as_bytes()), want, "{l}");
        }
    }
}
