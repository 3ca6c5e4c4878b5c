//! SGLang scheduler lines, every variant since 2024 (see docs/formats in README).
//!
//! Fields are read as `key: value` pairs split on `, ` (`. ` for the oldest
//! `new fill batch`), never by position: versions add, drop and reorder them.

mod fields;
pub mod profile;
mod ranks;
mod startup;
mod stats;
mod template;

use std::sync::OnceLock;

use memchr::memmem::Finder;

use super::prefix::Found as StampFound;
use super::prefix_cache::PrefixCache;
use super::{ahead_of, Ahead, Engine, LineParser, Outcome};
use crate::engines::gate::Gate;
use crate::model::{Event, EventKind, Record, SourceName};
use crate::text::fields::uint32;
use fields::KeyMemo;
use ranks::{read_prefix, Ranks};
use startup::parse_config;
use stats::Found;

// Phrases of the lines that are not stats lines.
const RETRACT: &[u8] = b"Retract requests";
const DECODE_OOM: &[u8] = b"Decode out of memory happened";
const OOM: [&[u8]; 2] = [b"out of memory. Try to lower", b"Prefill out of memory"];
const CRASH: [&[u8]; 4] = [
    b"Scheduler hit an exception",
    b"Received sigquit from a child",
    b"watchdog timeout (self.watchdog_timeout",
    b"Watchdog timeout (self.watchdog_timeout",
];
const SERVER_ARGS: &[u8] = b"server_args=";
const MAX_TOTAL: &[u8] = b"max_total_num_tokens=";
const KV_ALLOCATED: &[u8] = b"KV Cache is allocated.";
const HIERARCHICAL: &[u8] = b"hierarchical KV";
const STARTUP: [&[u8]; 10] = [
    b"Load weight",
    b"Memory pool end",
    b"graph end",
    b"graph begin",
    b"fired up and ready to roll",
    b"Init torch distributed",
    b"Capture cuda graph",
    b"Using KV cache dtype",
    b"Start of prefill",
    b"init_distributed",
];
const HICACHE: [&[u8]; 3] = [b"Prefetch operation", b"Backup to storage", b"HiCache"];
const REQUEST_LOG: [&[u8]; 2] = [b"Receive: obj=", b"Finish: obj="];
/// What every stats header holds (`stats.rs` finds `batch` after one of these).
const HEADERS: [&[u8]; 3] = [b"Decode batch", b"Prefill batch", b"new fill batch"];

/// Every phrase searched on every line, compiled once (building a searcher per
/// call cost more than the search).
struct Phrases {
    retract: Finder<'static>,
    decode_oom: Finder<'static>,
    retracted_reqs: Finder<'static>,
    /// What every stats header ends with.
    batch: Finder<'static>,
    oom: [Finder<'static>; 2],
    crash: [Finder<'static>; 4],
    server_args: Finder<'static>,
    max_total: Finder<'static>,
    kv_allocated: Finder<'static>,
    hierarchical: Finder<'static>,
    /// Which of the phrases above a line holds.
    gate: Gate,
    /// The gate's bits of each group of phrases.
    bits: Groups,
}

/// The gate's bits ([`Gate::found`]) of the phrases each reading looks for.
struct Groups {
    headers: u64,
    retraction: u64,
    events: u64,
    config: u64,
    startup: u64,
    hicache: u64,
    request_log: u64,
}

/// The gate's bits of `group`'s phrases.
fn bits_of(group: &[&[u8]]) -> u64 {
    gated_phrases()
        .enumerate()
        .filter(|(_, p)| group.contains(p))
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

/// Every non-stats phrase the parser looks for: the gate must let each through.
pub(crate) fn gated_phrases() -> impl Iterator<Item = &'static &'static [u8]> {
    [
        &RETRACT,
        &DECODE_OOM,
        &SERVER_ARGS,
        &MAX_TOTAL,
        &KV_ALLOCATED,
        &HIERARCHICAL,
    ]
    .into_iter()
    .chain(&OOM)
    .chain(&CRASH)
    .chain(&STARTUP)
    .chain(&HICACHE)
    .chain(&REQUEST_LOG)
    .chain(&HEADERS)
}

/// The gate of SGLang's phrases, for the gate's own tests.
#[cfg(test)]
pub(crate) fn gate() -> &'static Gate {
    &phrases().gate
}

fn phrases() -> &'static Phrases {
    static P: OnceLock<Phrases> = OnceLock::new();
    P.get_or_init(|| {
        let mut gate = Gate::default();
        for p in gated_phrases() {
            gate.add(p);
        }
        Phrases {
            retract: Finder::new(RETRACT),
            decode_oom: Finder::new(DECODE_OOM),
            retracted_reqs: Finder::new(b"#retracted_reqs: "),
            batch: Finder::new(b"batch"),
            oom: OOM.map(Finder::new),
            crash: CRASH.map(Finder::new),
            server_args: Finder::new(SERVER_ARGS),
            max_total: Finder::new(MAX_TOTAL),
            kv_allocated: Finder::new(KV_ALLOCATED),
            hierarchical: Finder::new(HIERARCHICAL),
            gate,
            bits: Groups {
                headers: bits_of(&HEADERS),
                retraction: bits_of(&[RETRACT, DECODE_OOM]),
                events: bits_of(&[OOM[0], OOM[1], CRASH[0], CRASH[1], CRASH[2], CRASH[3]]),
                config: bits_of(&[SERVER_ARGS, MAX_TOTAL, KV_ALLOCATED, HIERARCHICAL]),
                startup: bits_of(&STARTUP),
                hicache: bits_of(&HICACHE),
                request_log: bits_of(&REQUEST_LOG),
            },
        }
    })
}

fn any(fs: &[Finder<'static>], line: &[u8]) -> bool {
    fs.iter().any(|f| f.find(line).is_some())
}

pub struct SglangParser {
    /// Headers of the line being read (reused: no allocation per line).
    hdrs: Vec<Found>,
    /// Recent retraction lines, to count once what every TP rank prints.
    recent_events: Vec<(SourceName, i64, u64)>,
    /// Rank tokens by their text: a handful of distinct texts in millions of lines.
    ranks: PrefixCache<Ranks>,
    /// Field keys seen, in the order they follow one another.
    keys: KeyMemo,
    /// The last stamp, by the 21 bytes it is read from (lines of one second share it).
    stamps: PrefixCache<Option<StampFound>>,
    /// Layouts of earlier stats lines, to read the next ones by.
    templates: template::Templates,
}

impl Default for SglangParser {
    fn default() -> Self {
        SglangParser {
            hdrs: Vec::new(),
            recent_events: Vec::new(),
            ranks: PrefixCache::default(),
            keys: KeyMemo::default(),
            stamps: PrefixCache::with_slots(1),
            templates: template::Templates::default(),
        }
    }
}

impl SglangParser {
    fn parse_retraction(&mut self, line: &[u8], no: u64, out: &mut Vec<Record>) -> Option<Outcome> {
        let ph = phrases();
        let at = ph.retract.find(line).or_else(|| ph.decode_oom.find(line))?;
        let prefix = read_prefix(&line[..at]);
        let msg = &line[at..];
        let requests = ph.retracted_reqs.find(msg).and_then(|i| {
            let v = &msg[i + 17..];
            let e = v
                .iter()
                .position(|c| !c.is_ascii_digit())
                .unwrap_or(v.len());
            uint32(&v[..e])
        });
        const GAINED: &[u8] = b"#new_tokens_gained: ";
        let tokens = msg
            .windows(GAINED.len())
            .position(|w| w == GAINED)
            .and_then(|i| {
                let v = &msg[i + GAINED.len()..];
                let e = v
                    .iter()
                    .position(|c| !c.is_ascii_digit())
                    .unwrap_or(v.len());
                std::str::from_utf8(&v[..e]).ok()?.parse::<u64>().ok()
            });
        // Every TP rank prints the same retraction; count it once per DP group.
        let sec = prefix.stamp.map(|s| s.second_of_day as i64).unwrap_or(-1);
        let h = hash(msg);
        let key = (prefix.dp, sec, h);
        if self.recent_events.contains(&key) && prefix.tp.is_some_and(|t| t != 0) {
            return Some(Outcome::Other("retraction_other_rank"));
        }
        if prefix.tp.is_some_and(|t| t != 0) && prefix.dp.is_empty() {
            // A non-zero TP rank without DP repeats what TP0 says.
            self.remember(key);
            return Some(Outcome::Other("retraction_other_rank"));
        }
        self.remember(key);
        out.push(Record::Event(Event {
            line: no,
            stamp: prefix.stamp,
            clock_s: None,
            source: prefix.dp.to_string(),
            kind: EventKind::Retraction { requests, tokens },
        }));
        Some(Outcome::Other("retraction"))
    }

    fn remember(&mut self, key: (SourceName, i64, u64)) {
        if self.recent_events.len() >= 32 {
            self.recent_events.remove(0);
        }
        self.recent_events.push(key);
    }

    fn parse_other_events(
        &mut self,
        line: &[u8],
        no: u64,
        out: &mut Vec<Record>,
    ) -> Option<Outcome> {
        let ph = phrases();
        let (kind, label) = if any(&ph.oom, line) {
            (EventKind::OutOfMemory, "out_of_memory")
        } else if any(&ph.crash, line) {
            (EventKind::Crash, "crash")
        } else {
            return None;
        };
        let prefix = read_prefix(&line[..line.len().min(80)]);
        if prefix.tp.is_some_and(|t| t != 0) && prefix.dp.is_empty() {
            return Some(Outcome::Other(label));
        }
        out.push(Record::Event(Event {
            line: no,
            stamp: prefix.stamp,
            clock_s: None,
            source: prefix.dp.to_string(),
            kind,
        }));
        Some(Outcome::Other(label))
    }
}

fn hash(b: &[u8]) -> u64 {
    // FNV-1a: tiny and deterministic; only used to spot repeated lines.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &c in b {
        h ^= c as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// The label of a line that holds the `found` phrases (the gate's bits) and
/// none that the readings before claim.
fn other_known(found: u64) -> Option<&'static str> {
    let bits = &phrases().bits;
    if found & bits.startup != 0 {
        return Some("startup");
    }
    if found & bits.hicache != 0 {
        return Some("hicache");
    }
    if found & bits.request_log != 0 {
        return Some("request_log");
    }
    None
}

impl LineParser for SglangParser {
    fn engine(&self) -> Engine {
        Engine::Sglang
    }

    fn read_ahead(&mut self, line: &[u8], out: &mut Vec<Record>) -> Option<Ahead> {
        if self.templates.read(line, 0, out) {
            return Some(Ahead::Stats {
                full: 1,
                damaged: 0,
            });
        }
        // No stats header and none of the other phrases: nothing here is ours.
        let ph = phrases();
        let found = ph.gate.found(line);
        if found == 0 {
            return Some(Ahead::NotMine);
        }
        let b = &ph.bits;
        if found & (b.headers | b.retraction | b.events | b.config) == 0 {
            // Only phrases that label the line: what `parse` returns, whatever came before.
            if let Some(label) = other_known(found) {
                return Some(Ahead::Other(label));
            }
        }
        let mark = out.len();
        let stats = if found & b.headers != 0 {
            self.parse_stats(line, 0, false, out)
        } else {
            None
        };
        // The phrases behind the gate need state (retractions are de-duplicated):
        // left to `parse`, in order.
        ahead_of(stats, out, mark, || false)
    }

    fn parse(&mut self, line: &[u8], no: u64, last_chance: bool, out: &mut Vec<Record>) -> Outcome {
        if self.templates.read(line, no, out) {
            return Outcome::Stats {
                full: 1,
                damaged: 0,
            };
        }
        // Each reading below looks for phrases of its own: one that the line
        // does not hold would find nothing.
        let ph = phrases();
        let found = ph.gate.found(line);
        if found == 0 {
            return Outcome::NotMine;
        }
        if found & ph.bits.headers != 0 {
            if let Some(o) = self.parse_stats(line, no, last_chance, out) {
                return o;
            }
        }
        if found & ph.bits.retraction != 0 {
            if let Some(o) = self.parse_retraction(line, no, out) {
                return o;
            }
        }
        if found & ph.bits.events != 0 {
            if let Some(o) = self.parse_other_events(line, no, out) {
                return o;
            }
        }
        if found & ph.bits.config != 0 {
            if let Some(o) = parse_config(line, no, out) {
                return o;
            }
        }
        match other_known(found) {
            Some(k) => Outcome::Other(k),
            None => Outcome::NotMine,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ranks::dp_label;
    use super::*;
    use crate::model::{ConfigItem, Sample, SampleKind};

    fn one(line: &str) -> (Outcome, Vec<Record>) {
        let mut p = SglangParser::default();
        let mut out = Vec::new();
        let o = p.parse(line.as_bytes(), 7, true, &mut out);
        (o, out)
    }

    fn sample(line: &str) -> Sample {
        match one(line).1.into_iter().next() {
            Some(Record::Sample(s)) => s,
            other => panic!("no sample: {other:?}"),
        }
    }

    #[test]
    fn the_gate_passes_every_phrase_and_dp_labels_read_as_before() {
        let ph = phrases();
        for (i, p) in gated_phrases().enumerate() {
            let shown = String::from_utf8_lossy(p);
            // Every offset: the gate looks at every fourth window only.
            for pad in 0..2 * Gate::STRIDE {
                let mut line = b"[2026-01-01 00:00:00 TP1] x ".to_vec();
                line.extend(std::iter::repeat_n(b'.', pad));
                line.extend_from_slice(p);
                line.extend_from_slice(b" tail");
                assert_eq!(ph.gate.found(&line), 1 << i, "{shown} at +{pad}");
                assert_eq!(ph.gate.found(&line[pad..]), 1 << i, "{shown}");
            }
            assert_eq!(ph.gate.found(p), 1 << i, "{shown}");
        }
        assert_eq!(
            ph.gate.found(
                b"[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - \"POST /generate HTTP/1.1\" 200 OK"
            ),
            0
        );
        // Each phrase is one reading's: a reading is skipped only for lines
        // without its own phrases.
        let b = &ph.bits;
        let groups = [
            b.headers,
            b.retraction,
            b.events,
            b.config,
            b.startup,
            b.hicache,
            b.request_log,
        ];
        assert_eq!(
            groups
                .iter()
                .map(|g| g.count_ones() as usize)
                .sum::<usize>(),
            gated_phrases().count()
        );
        assert_eq!(
            groups.iter().fold(0, |all, g| all | g),
            (1 << gated_phrases().count()) - 1
        );
        for n in [0, 7, 10, 123, u32::MAX] {
            assert_eq!(dp_label(n), format!("DP{n}"));
        }
    }

    #[test]
    fn seed_story_decode_line() {
        let s = sample("[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, #token: 81290, token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 94");
        assert_eq!(s.running, Some(56));
        assert_eq!(s.queued, Some(94));
        assert_eq!(s.kv_tokens, Some(81290));
        assert_eq!(s.kv_usage, Some(0.70));
        assert_eq!(s.gen_tok_s, Some(888.95));
        assert_eq!(s.graph, Some(true));
        assert_eq!(s.kind, Some(SampleKind::Decode));
        assert!(!s.damaged);
    }

    #[test]
    fn every_header_variant_is_read() {
        for l in [
            "[2025-03-14 02:16:14 TP0] Decode batch. #running-req: 509, #token: 180776, token usage: 0.43, gen throughput (token/s): 7897.87, largest-len: 0, #queue-req: 0, ",
            "[2026-02-24 10:55:32 TP0] Decode batch [1234], #running-req: 1, #token: 2, token usage: 0.01, gen throughput (token/s): 3.5, #queue-req: 0",
            "Decode batch. #running-req: 233, #token: 370959, token usage: 0.82, cuda graph: True, gen throughput (token/s): 4594.01, #queue-req: 317",
            "[gpu=0] Decode batch. #running-req: 381, #token: 344397, token usage: 0.96, gen throughput (token/s): 93.97, #queue-req: 1549",
        ] {
            let s = sample(l);
            assert!(!s.damaged, "{l}");
            assert!(s.running.is_some() && s.gen_tok_s.is_some());
        }
        let s = sample("new fill batch. #seq: 1. #cached_token: 330. #new_token: 2172. #remaining_req: 57. #running_req: 9. tree_cache_hit_rate: 69.16%");
        assert_eq!(
            (
                s.new_seqs,
                s.cached_tokens,
                s.prefill_tokens,
                s.queued,
                s.running
            ),
            (Some(1), Some(330), Some(2172), Some(57), Some(9))
        );
        assert_eq!(s.prefix_hit, Some(0.6916));
        assert!(!s.damaged);
    }

    #[test]
    fn dp_rank_is_the_source_and_swa_blocks_read() {
        let s = sample("[2026-05-24 03:51:45 DP3 TP3 EP3] Decode batch, #running-req: 4, #full token: 2642688, full token usage: 1.00, #swa token: 14592, swa token usage: 0.06, cuda graph: True, gen throughput (token/s): 429.52, #queue-req: 3");
        assert_eq!(&*s.source, "DP3");
        assert_eq!(s.kv_tokens, Some(2642688));
        assert_eq!(s.kv_usage, Some(1.0));
        let s = sample("[2025-07-01 00:00:00 TP0] Decode batch. #running-req: 3, #token: full=100, swa=50, token usage: full=0.50, swa=0.20, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0");
        assert_eq!(
            (s.kv_tokens, s.kv_usage, s.damaged),
            (Some(100), Some(0.5), false)
        );
    }

    #[test]
    fn column_truncated_lines_are_damaged_but_keep_clean_fields() {
        let (o, r) = one("[2026-05-28 02:59:59 TP0] Decode batch, #running-req: 45, #token: 44672, token usaccept rate: 0.32, npu graph: False, gen throughput (token/s): 863.65, #queue-req");
        assert_eq!(
            o,
            Outcome::Stats {
                full: 0,
                damaged: 1
            }
        );
        let Record::Sample(s) = &r[0] else { panic!() };
        assert!(s.damaged);
        assert_eq!(s.running, Some(45));
        assert_eq!(s.queued, None);
    }

    #[test]
    fn glued_records_are_split() {
        let (o, r) = one("[2026-01-01 00:00:01 TP0] Decode batch, #running-req: 5, #token: 9, token usage: 0.10, gen throughput (token/s): 10.00, #queue-req: 0[2026-01-01 00:00:02 TP0] Decode batch, #running-req: 6, #token: 9, token usage: 0.10, gen throughput (token/s): 11.00, #queue-req: 1");
        assert_eq!(
            o,
            Outcome::Stats {
                full: 2,
                damaged: 0
            }
        );
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn retraction_printed_by_every_tp_rank_counts_once() {
        let mut p = SglangParser::default();
        let mut out = Vec::new();
        for tp in [0, 5, 7] {
            p.parse(
                format!("[2025-01-06 02:58:44 TP{tp}] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.0980 -> 0.9446").as_bytes(),
                1,
                true,
                &mut out,
            );
        }
        let events = out.iter().filter(|r| matches!(r, Record::Event(_))).count();
        assert_eq!(events, 1);
    }

    #[test]
    fn startup_capacity_lines() {
        let (_, r) = one("[2025-08-11 17:17:03] max_total_num_tokens=665690, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=65536, available_gpu_mem=13.50 GB");
        let Record::Config { items, .. } = &r[0] else {
            panic!()
        };
        assert!(items.contains(&ConfigItem::KvCapacityTokens(665690)));
        assert!(items.contains(&ConfigItem::AvailableGpuMemGb(13.5)));
        let (_, r) = one("[2026-07-01 15:19:55 TP10] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 387968, K size: 5.92 GB, V size: 5.92 GB");
        let Record::Config { items, .. } = &r[0] else {
            panic!()
        };
        assert!(items.contains(&ConfigItem::KvCacheDtype("float8_e4m3fn".into())));
        assert!(items.contains(&ConfigItem::KvCapacityTokens(387968)));
        let (_, r) = one("[2026-10-30 09:00:00] server_args={'model_path': 'x', 'tp_size': 2, 'mem_fraction_static': 0.88, 'max_running_requests': None}");
        let Record::Config { items, .. } = &r[0] else {
            panic!()
        };
        assert!(items.contains(&ConfigItem::MemFractionStatic(0.88)));
        assert!(items.contains(&ConfigItem::TensorParallel(2)));
    }
}
