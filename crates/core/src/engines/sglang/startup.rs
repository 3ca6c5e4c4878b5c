//! Startup lines: server arguments, pool size and cache settings.

use memchr::memmem;

use super::super::Outcome;
use super::phrases;
use crate::model::{ConfigItem, Record};
use crate::text::fields::{boolean, float, trim, uint};
use crate::text::python::{py_str, python_pairs};

/// Config items from startup lines.
pub(super) fn parse_config(line: &[u8], no: u64, out: &mut Vec<Record>) -> Option<Outcome> {
    let ph = phrases();
    let mut items = Vec::new();
    if let Some(i) = ph.server_args.find(line) {
        for (k, v) in python_pairs(&line[i + 12..]) {
            server_arg(k, v, &mut items);
        }
    } else if let Some(i) = ph.max_total.find(line) {
        for part in line[i..].split(|&c| c == b',') {
            let part = trim(part);
            let Some(eq) = memchr::memchr(b'=', part) else {
                continue;
            };
            let (k, v) = (&part[..eq], &part[eq + 1..]);
            let num = v.split(|&c| c == b' ').next().unwrap_or(v);
            match k {
                b"max_total_num_tokens" => {
                    items.extend(uint(num).map(ConfigItem::KvCapacityTokens))
                }
                b"chunked_prefill_size" => {
                    items.extend(float(num).map(|v| ConfigItem::ChunkedPrefillSize(v as i64)))
                }
                b"max_prefill_tokens" => items.extend(uint(num).map(ConfigItem::MaxPrefillTokens)),
                b"max_running_requests" => {
                    items.extend(uint(num).map(ConfigItem::MaxRunningRequests))
                }
                b"context_len" => items.extend(uint(num).map(ConfigItem::ContextLength)),
                b"available_gpu_mem" => items.extend(float(num).map(ConfigItem::AvailableGpuMemGb)),
                _ => {}
            }
        }
    } else if let Some(i) = ph.kv_allocated.find(line) {
        let rest = &line[i + 22..];
        let mut gb = 0.0;
        for part in rest.split(|&c| c == b',') {
            let part = trim(part);
            let Some(c) = memmem::find(part, b": ") else {
                continue;
            };
            let (k, v) = (&part[..c], trim(&part[c + 2..]));
            let num = v.split(|&c| c == b' ').next().unwrap_or(v);
            match k {
                b"#tokens" => items.extend(uint(num).map(ConfigItem::KvCapacityTokens)),
                b"dtype" => items.push(ConfigItem::KvCacheDtype(
                    String::from_utf8_lossy(v.strip_prefix(b"torch.").unwrap_or(v)).into_owned(),
                )),
                b"K size" | b"V size" | b"KV size" => gb += float(num).unwrap_or(0.0),
                _ => {}
            }
        }
        if gb > 0.0 {
            items.push(ConfigItem::KvCacheGb(crate::text::round::dec(gb, 2)));
        }
    } else if ph.hierarchical.find(line).is_some() {
        items.push(ConfigItem::HierarchicalCache(true));
    } else {
        return None;
    }
    out.push(Record::Config { line: no, items });
    Some(Outcome::Other("startup"))
}

fn server_arg(k: &[u8], v: &[u8], items: &mut Vec<ConfigItem>) {
    let f = || float(v);
    let u = || uint(v);
    let s = || py_str(v);
    let b = || boolean(v);
    match k {
        b"model_path" => items.extend(s().map(ConfigItem::Model)),
        b"mem_fraction_static" => items.extend(f().map(ConfigItem::MemFractionStatic)),
        b"max_running_requests" => items.extend(u().map(ConfigItem::MaxRunningRequests)),
        b"max_total_tokens" => items.extend(u().map(ConfigItem::KvCapacityTokens)),
        b"chunked_prefill_size" => {
            items.extend(f().map(|v| ConfigItem::ChunkedPrefillSize(v as i64)))
        }
        b"max_prefill_tokens" => items.extend(u().map(ConfigItem::MaxPrefillTokens)),
        b"schedule_policy" => items.extend(s().map(ConfigItem::SchedulePolicy)),
        b"schedule_conservativeness" => items.extend(f().map(ConfigItem::ScheduleConservativeness)),
        b"tp_size" => items.extend(u().map(ConfigItem::TensorParallel)),
        b"dp_size" => items.extend(u().map(ConfigItem::DataParallel)),
        b"pp_size" => items.extend(u().map(ConfigItem::PipelineParallel)),
        b"kv_cache_dtype" => items.extend(s().map(ConfigItem::KvCacheDtype)),
        b"quantization" => items.extend(
            s().filter(|q| !q.is_empty() && q != "None")
                .map(ConfigItem::Quantization),
        ),
        b"enable_hierarchical_cache" => items.extend(b().map(ConfigItem::HierarchicalCache)),
        b"hicache_size" => items.extend(f().map(ConfigItem::HicacheSizeGb)),
        b"hicache_ratio" => items.extend(f().map(ConfigItem::HicacheRatio)),
        b"speculative_algorithm" => items.extend(s().map(ConfigItem::SpeculativeAlgorithm)),
        b"cuda_graph_max_bs" => items.extend(u().map(ConfigItem::CudaGraphMaxBs)),
        b"disaggregation_mode" => items.extend(s().map(ConfigItem::DisaggregationMode)),
        b"context_length" => items.extend(u().map(ConfigItem::ContextLength)),
        _ => {}
    }
}
