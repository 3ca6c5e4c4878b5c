//! LMDeploy's metrics line, `print()`ed every 10 s while metrics are on
//! (`lmdeploy/metrics/loggers.py`), in its two shapes:
//!
//! - v0.9.2–v0.12.0, a look-alike of vLLM V0's line: `Avg prompt throughput: X
//!   tokens/s, Avg generation throughput: Y tokens/s, Finished: n reqs,
//!   Unfinished: n reqs, Running: n reqs, Waiting: n reqs, GPU KV cache usage:
//!   k%[, Prefix cache hit rate: p%]`;
//! - from v0.12.1, grouped values: `Avg thr (in/out): X / Y tokens/s, API server
//!   (completed/routed/waiting): a / b / c, Engine (running/waiting): r / w, KV
//!   cache: k%, ` (`Server (succeeded/failed/routed/waiting)` from v0.12.3), with
//!   optional `Prefix cache hit rate` and `SpecDecoding metrics` parts.
//!
//! Both carry the prefix `[YYYY-MM-DD HH:MM:SS DP{rank}] `. Parts are read by
//! their labels, never by position. Requests waiting at the API server have not
//! reached the engine but wait all the same: they count as queued. The engine's
//! settings come from the startup line that prints its `TurbomindEngineConfig(…)`
//! or `PytorchEngineConfig(…)`.

pub mod profile;

use memchr::memmem;

use super::common::is_access_line;
use super::prefix::last_stamp;
use super::{Ahead, Engine, LineParser, Outcome};
use crate::model::{ConfigItem, Record, Sample, SampleKind, SourceName};
use crate::text::fields::{float, trim, uint, uint32};
use crate::text::python::python_pairs;

const GROUPED: &[u8] = b"Avg thr (in/out): ";
const FLAT: &[u8] = b"Avg prompt throughput: ";
/// Only LMDeploy's flat line has it (vLLM's never does).
const FLAT_MARK: &[u8] = b"Unfinished: ";
const CONFIG: &[u8] = b"EngineConfig(";

#[derive(Default)]
pub struct LmdeployParser;

/// What a line may be, by the one place that can tell: a metrics record's
/// header (where it starts) or the engine's settings (where they start).
enum Found {
    Metrics(usize),
    Config(usize),
}

/// Both headers start with `A` and the settings with `E` (`TurbomindEngineConfig(`
/// has its `E` inside), which most lines (access lines, SGLang's) lack: one
/// two-byte search rules them out.
#[inline]
fn find(line: &[u8]) -> Option<Found> {
    let first = memchr::memchr2(b'A', b'E', line)?;
    // Never from an access line (see `is_access_line`): checked only past the byte search.
    find_from(line, first).filter(|_| !is_access_line(line))
}

#[inline(never)]
fn find_from(line: &[u8], first: usize) -> Option<Found> {
    memchr::memchr2_iter(b'A', b'E', &line[first..]).find_map(|j| {
        let i = first + j;
        let rest = &line[i..];
        if rest.starts_with(GROUPED) {
            Some(Found::Metrics(i))
        } else if rest.starts_with(FLAT) {
            memmem::find(rest, FLAT_MARK).map(|_| Found::Metrics(i))
        } else if rest.starts_with(CONFIG) {
            Some(Found::Config(i))
        } else {
            None
        }
    })
}

/// The settings of an `…EngineConfig(k=v, …)` repr.
fn config_items(text: &[u8]) -> Vec<ConfigItem> {
    let mut items = Vec::new();
    for (k, v) in python_pairs(text) {
        let v = trim(v);
        match k {
            b"max_batch_size" => items.extend(uint(v).map(ConfigItem::MaxRunningRequests)),
            b"cache_max_entry_count" => items.extend(float(v).map(ConfigItem::CacheMaxEntryCount)),
            b"tp" => items.extend(uint(v).map(ConfigItem::TensorParallel)),
            b"dp" => items.extend(uint(v).map(ConfigItem::DataParallel)),
            b"session_len" => items.extend(uint(v).map(ConfigItem::ContextLength)),
            b"max_prefill_token_num" => items.extend(uint(v).map(ConfigItem::MaxPrefillTokens)),
            b"enable_prefix_caching" => match v {
                b"True" => items.push(ConfigItem::PrefixCaching(true)),
                b"False" => items.push(ConfigItem::PrefixCaching(false)),
                _ => {}
            },
            // 0: 16-bit, 8: int8, 4: int4 KV cache.
            b"quant_policy" => match v {
                b"8" => items.push(ConfigItem::KvCacheDtype("int8".into())),
                b"4" => items.push(ConfigItem::KvCacheDtype("int4".into())),
                _ => {}
            },
            _ => {}
        }
    }
    items
}

/// The rank label of a prefix `[… DP3] `: `DP3`, or empty.
fn rank(prefix: &[u8]) -> SourceName {
    let p = trim(prefix);
    let p = p.strip_suffix(b"]").unwrap_or(p);
    let word = p.rsplit(|&c| c == b' ').next().unwrap_or(b"");
    if word.len() > 2 && word.starts_with(b"DP") && word[2..].iter().all(u8::is_ascii_digit) {
        SourceName::new(std::str::from_utf8(word).unwrap_or_default())
    } else {
        SourceName::default()
    }
}

/// A percentage part's value as a fraction: `21.6%` → 0.216.
fn percent(v: &[u8]) -> Option<f64> {
    float(trim(v).strip_suffix(b"%")?).map(|p| p / 100.0)
}

/// `N reqs` → N.
fn reqs(v: &[u8]) -> Option<u32> {
    uint32(trim(v).strip_suffix(b" reqs")?)
}

/// The values of a grouped part, `a / b / c` (a unit after the last one dropped).
fn grouped_values(v: &[u8]) -> Vec<&[u8]> {
    v.split(|&c| c == b'/')
        .map(|x| {
            let x = trim(x);
            x.strip_suffix(b" tokens").unwrap_or(x)
        })
        .collect()
}

/// Reads the body of a metrics record into `s`; false when a part it knows
/// cannot be read, or the running count is missing.
fn read_body(body: &[u8], s: &mut Sample) -> bool {
    let mut ok = true;
    let mut engine_waiting = None;
    let mut api_waiting = None;
    for part in body.split(|&c| c == b',') {
        let part = trim(part);
        let Some(c) = memmem::find(part, b": ") else {
            continue;
        };
        let (label, value) = (&part[..c], &part[c + 2..]);
        match label {
            b"Avg thr (in/out)" => {
                let v = value.strip_suffix(b"/s").unwrap_or(value);
                match grouped_values(v)[..] {
                    [i, o] => {
                        s.input_tok_s = float(i);
                        s.gen_tok_s = float(o);
                        ok &= s.input_tok_s.is_some() && s.gen_tok_s.is_some();
                    }
                    _ => ok = false,
                }
            }
            b"Avg prompt throughput" | b"Avg generation throughput" => {
                let v = float(trim(value).strip_suffix(b" tokens/s").unwrap_or(b""));
                ok &= v.is_some();
                if label == b"Avg prompt throughput" {
                    s.input_tok_s = v;
                } else {
                    s.gen_tok_s = v;
                }
            }
            b"Engine (running/waiting)" => match grouped_values(value)[..] {
                [r, w] => {
                    s.running = uint32(r);
                    engine_waiting = uint32(w);
                    ok &= s.running.is_some() && engine_waiting.is_some();
                }
                _ => ok = false,
            },
            b"Running" => {
                s.running = reqs(value);
                ok &= s.running.is_some();
            }
            b"Waiting" => {
                engine_waiting = reqs(value);
                ok &= engine_waiting.is_some();
            }
            _ if label.ends_with(b"waiting)") => {
                // `API server (completed/routed/waiting)`, `Server (…/waiting)`: the last value.
                let vs = grouped_values(value);
                api_waiting = vs.last().and_then(|w| uint32(w));
                ok &= api_waiting.is_some();
            }
            b"KV cache" | b"GPU KV cache usage" => {
                s.kv_usage = percent(value);
                ok &= s.kv_usage.is_some();
            }
            b"Prefix cache hit rate" => {
                s.prefix_hit = percent(value);
                ok &= s.prefix_hit.is_some();
            }
            _ => {}
        }
    }
    s.queued = match (engine_waiting, api_waiting) {
        (None, None) => None,
        (e, a) => Some(e.unwrap_or(0).saturating_add(a.unwrap_or(0))),
    };
    ok && s.running.is_some()
}

impl LmdeployParser {
    /// The metrics record starting at `at` pushed on `out`: (full, damaged) records.
    fn metrics(&self, line: &[u8], at: usize, no: u64, out: &mut Vec<Record>) -> (u32, u32) {
        let prefix = &line[..at];
        let mut s = Sample {
            line: no,
            stamp: last_stamp(prefix).map(|f| f.stamp),
            source: rank(prefix),
            kind: Some(SampleKind::Interval),
            ..Sample::default()
        };
        let full = read_body(&line[at..], &mut s);
        s.damaged = !full;
        out.push(Record::Sample(s));
        (full as u32, !full as u32)
    }
}

impl LineParser for LmdeployParser {
    fn engine(&self) -> Engine {
        Engine::Lmdeploy
    }

    fn parse(
        &mut self,
        line: &[u8],
        no: u64,
        _last_chance: bool,
        out: &mut Vec<Record>,
    ) -> Outcome {
        match find(line) {
            Some(Found::Metrics(at)) => {
                let (full, damaged) = self.metrics(line, at, no, out);
                Outcome::Stats { full, damaged }
            }
            Some(Found::Config(at)) => {
                let items = config_items(&line[at..]);
                if items.is_empty() {
                    return Outcome::NotMine;
                }
                out.push(Record::Config { line: no, items });
                Outcome::Other("startup")
            }
            None => Outcome::NotMine,
        }
    }

    fn read_ahead(&mut self, line: &[u8], out: &mut Vec<Record>) -> Option<Ahead> {
        match find(line) {
            // A metrics line holds no state: read as `parse` reads it.
            Some(Found::Metrics(at)) => {
                let (full, damaged) = self.metrics(line, at, 0, out);
                Some(Ahead::Stats { full, damaged })
            }
            // Settings are taken in log order (a restart starts a run).
            Some(Found::Config(_)) => None,
            None => Some(Ahead::NotMine),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::test_support::{parse_one, ONE_DAMAGED, ONE_FULL};

    fn read(line: &str) -> (Outcome, Option<Sample>) {
        parse_one(&mut LmdeployParser, line, true)
    }

    #[test]
    fn reads_the_grouped_line_of_0_12_1() {
        // Verbatim from InternLM/lmdeploy PR #4297.
        let (o, s) = read("[2026-02-05 17:05:17 DP0] Avg thr (in/out): 4618.5 / 2756.3 tokens/s, API server (completed/routed/waiting): 1 / 50 / 50, Engine (running/waiting): 45 / 5, KV cache: 21.6%, ");
        assert_eq!(o, ONE_FULL);
        let s = s.unwrap();
        assert_eq!(s.running, Some(45));
        assert_eq!(s.queued, Some(55));
        assert_eq!(s.input_tok_s, Some(4618.5));
        assert_eq!(s.gen_tok_s, Some(2756.3));
        assert!((s.kv_usage.unwrap() - 0.216).abs() < 1e-9);
        assert_eq!(s.source.as_str(), "DP0");
        assert_eq!(s.kind, Some(SampleKind::Interval));
        assert!(s.stamp.is_some());
    }

    #[test]
    fn reads_the_server_group_and_hit_rate_of_0_12_3() {
        // Verbatim from InternLM/lmdeploy PR #4410, with the optional hit rate.
        let (o, s) = read("[2026-03-13 14:54:59 DP0] Avg thr (in/out): 1445.8 / 68.8 tokens/s, Server (succeeded/failed/routed/waiting): 102 / 100 / 0 / 0, Engine (running/waiting): 0 / 0, KV cache: 17.5%, Prefix cache hit rate: 40.0%, ");
        assert_eq!(o, ONE_FULL);
        let s = s.unwrap();
        assert_eq!((s.running, s.queued), (Some(0), Some(0)));
        assert_eq!(s.prefix_hit, Some(0.4));
        assert!((s.kv_usage.unwrap() - 0.175).abs() < 1e-9);
    }

    #[test]
    fn reads_the_flat_line_of_0_9_to_0_12() {
        let (o, s) = read("[2025-06-05 17:05:10 DP1] Avg prompt throughput: 1200.5 tokens/s, Avg generation throughput: 850.0 tokens/s, Finished: 3 reqs, Unfinished: 60 reqs, Running: 48 reqs, Waiting: 12 reqs, GPU KV cache usage: 91.0%, Prefix cache hit rate: 10.0%");
        assert_eq!(o, ONE_FULL);
        let s = s.unwrap();
        assert_eq!((s.running, s.queued), (Some(48), Some(12)));
        assert_eq!((s.input_tok_s, s.gen_tok_s), (Some(1200.5), Some(850.0)));
        assert_eq!(s.source.as_str(), "DP1");
    }

    #[test]
    fn leaves_vllm_lines_and_counts_a_damaged_line() {
        let vllm = "INFO 01-22 18:27:20 metrics.py:449] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.7 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 2.0%, CPU KV cache usage: 0.0%.";
        assert_eq!(read(vllm).0, Outcome::NotMine);
        let (o, s) = read("[2026-02-05 17:05:17 DP0] Avg thr (in/out): 4618.5 / 2756.3 tokens/s, API server (completed/routed/waiting): 1 / 50 / 50, Engine (running/waiting): 4");
        assert_eq!(o, ONE_DAMAGED);
        assert!(s.unwrap().damaged);
    }

    #[test]
    fn reads_the_engine_settings() {
        // From InternLM/lmdeploy #2724 (tests/fixtures/other/lmdeploy_02…).
        let line = "2024-11-07 12:04:20,426 - lmdeploy - INFO - async_engine.py:142 - input backend=turbomind, backend_config=TurbomindEngineConfig(dtype='float16', model_format=None, tp=2, session_len=None, max_batch_size=256, cache_max_entry_count=0.8, cache_chunk_size=-1, cache_block_seq_len=64, enable_prefix_caching=False, quant_policy=8, max_prefill_token_num=8192)";
        let mut out = Vec::new();
        assert_eq!(
            LmdeployParser.parse(line.as_bytes(), 1, true, &mut out),
            Outcome::Other("startup")
        );
        let Some(Record::Config { items, .. }) = out.first() else {
            panic!("{out:?}")
        };
        for want in [
            ConfigItem::TensorParallel(2),
            ConfigItem::MaxRunningRequests(256),
            ConfigItem::CacheMaxEntryCount(0.8),
            ConfigItem::PrefixCaching(false),
            ConfigItem::KvCacheDtype("int8".into()),
            ConfigItem::MaxPrefillTokens(8192),
        ] {
            assert!(items.contains(&want), "{want:?} in {items:?}");
        }
        // Left to `parse`, in log order.
        assert_eq!(
            LmdeployParser.read_ahead(line.as_bytes(), &mut Vec::new()),
            None
        );
    }
}
