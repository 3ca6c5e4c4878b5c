//! What to change, shared by the kinds: an action with its predicted effect,
//! and the levers several kinds pull (more KV memory, an FP8 KV cache, the
//! client's concurrency, the running cap).

use super::context::Ctx;
use crate::model::profile::{FreeShare, KvMemory, Lever, ShareOfFree};
use crate::report::{Action, Change, Prediction};
use crate::text::num::num;

pub(super) fn change(parameter: &str, value: f64) -> Change {
    Change {
        parameter: parameter.to_string(),
        value,
    }
}

fn predict(c: &Ctx, changes: &[Change]) -> Option<Prediction> {
    c.model.as_ref().map(|m| m.predict(changes))
}

fn effect_of(c: &Ctx, p: &Option<Prediction>, extra: &str) -> String {
    let base = match (p, &c.model) {
        (Some(p), Some(m)) => format!(
            "~{} running and ~{} tok/s (range {}–{}) instead of {} and {}",
            num(p.running_requests),
            num(p.gen_throughput_tok_s),
            num(p.low),
            num(p.high),
            num(m.running),
            num(m.gen_tok_s)
        ),
        _ => String::new(),
    };
    match (base.is_empty(), extra.is_empty()) {
        (true, _) => extra.to_string(),
        (false, true) => base,
        (false, false) => format!("{base}; {extra}"),
    }
}

pub(super) fn action(
    c: &Ctx,
    id: &str,
    flag: String,
    why: String,
    changes: &[Change],
    extra: &str,
) -> Action {
    let predicted = if changes.is_empty() {
        None
    } else {
        predict(c, changes)
    };
    let predicted_gain = predicted
        .as_ref()
        .zip(c.model.as_ref())
        .filter(|(_, m)| m.gen_tok_s > 0.0)
        .map(|(p, m)| crate::text::round::dec(p.gen_throughput_tok_s / m.gen_tok_s - 1.0, 4));
    Action {
        id: id.to_string(),
        flag,
        why,
        effect: effect_of(c, &predicted, extra),
        predicted,
        predicted_gain,
    }
}

/// An action of one of the profile's levers: `{}` in its flag filled in with
/// `value`, in why with `current`.
pub(super) fn lever(c: &Ctx, l: &Lever, value: &str, current: &str, changes: &[Change]) -> Action {
    action(
        c,
        l.id,
        l.flag.replace("{}", value),
        l.why.replace("{}", current),
        changes,
        l.effect,
    )
}

/// More GPU memory for the KV pool, by the setting that sizes it.
pub(super) fn more_kv_memory(c: &Ctx) -> Action {
    let cfg = &c.r.config;
    match &c.p.levers.kv_memory {
        &KvMemory::StaticFraction {
            flag,
            name,
            left,
            default,
            step,
            small_step,
            most,
        } => {
            let m = cfg.mem_fraction_static;
            let avail = cfg.available_gpu_mem_gb;
            let headroom = avail.map(|a| a - 6.0);
            // GB the pool could gain while keeping ~6 GB for activations and graphs.
            let gain = match (headroom, cfg.kv_cache_gb) {
                (Some(h), Some(kv)) if h > 0.0 && kv > 0.0 => Some(1.0 + h / kv),
                _ => None,
            };
            // Little headroom: small steps; else a bolder one.
            let step = if avail.is_some_and(|a| a < 7.0) {
                small_step
            } else {
                step
            };
            let target = m.map(|m| (m + step).min(most));
            let flag = format!("{flag} {:.2}", target.unwrap_or(default));
            let why = match (m, avail) {
                (Some(m), Some(a)) if a < 7.0 => format!(
                    "{name} is {m} and only {a} GB is left after the pool: little headroom, so raise it in small steps (+{small_step}) and watch for out-of-memory errors; the docs keep 5–8 GB free"
                ),
                (Some(m), Some(a)) => format!(
                    "{name} is {m} with {a} GB of GPU memory unused after the pool: keep 5–8 GB for activations and CUDA graphs and give the rest to the KV pool"
                ),
                (Some(m), None) => format!("{name} is {m}: a larger fraction grows the KV pool (keep 5–8 GB free; read {left} at startup)"),
                _ => format!("A larger static memory fraction grows the KV pool (keep 5–8 GB free; read {left} in the startup line)"),
            };
            let scale = gain.unwrap_or(1.1);
            let extra = if gain.is_some() {
                ""
            } else {
                "assuming the pool grows ~10%"
            };
            action(
                c,
                "more_kv_memory",
                flag,
                why,
                &[change("kv_scale", scale)],
                extra,
            )
        }
        KvMemory::ShareOfFree(s) => share_of_free_memory(c, s),
        &KvMemory::WholeGpuFraction {
            flag,
            name,
            default,
            step,
            most,
        } => {
            let u = cfg.gpu_memory_utilization.unwrap_or(default);
            let t = (u + step).min(most);
            action(
                c,
                "more_kv_memory",
                format!("{flag} {t:.2}"),
                format!("{name} is {u}: what is left after weights and activations becomes KV cache, so each +{step} adds a sizeable share to the pool (watch for out-of-memory)"),
                &[change("kv_scale", 1.12)],
                "assuming weights take about half the GPU, so the pool grows ~12%",
            )
        }
    }
}

/// A larger KV cache on an engine whose cache is a share `u` of the GPU memory
/// free: the pool grows in proportion to the share.
fn share_of_free_memory(c: &Ctx, s: &ShareOfFree) -> Action {
    let cfg = &c.r.config;
    let u = match s.setting {
        FreeShare::KvFreeGpuMemoryFraction => cfg.kv_free_gpu_memory_fraction,
        FreeShare::CacheMaxEntryCount => cfg.cache_max_entry_count,
    };
    let u = u.filter(|u| *u > 0.0 && *u <= 1.0).unwrap_or(s.default);
    let t = (u + s.step).min(s.most).max(u);
    action(
        c,
        "more_kv_memory",
        format!("{} {t:.2}", s.flag),
        format!(
            "{} is {u}: the KV cache takes that share of the GPU memory {}, so a larger share grows it in proportion (watch for out-of-memory)",
            s.name, s.after
        ),
        &[change("kv_scale", t / u)],
        "",
    )
}

pub(super) fn fp8_kv(c: &Ctx) -> Option<Action> {
    if c.r
        .config
        .kv_cache_dtype
        .as_deref()
        .is_some_and(|d| d.contains("fp8") || d.contains("float8") || d.contains("int"))
    {
        return None;
    }
    let (flag, why) = c.p.levers.fp8_kv;
    Some(action(
        c,
        "fp8_kv_cache",
        flag.to_string(),
        why.to_string(),
        &[change("kv_dtype_fp8", 1.0)],
        "",
    ))
}

pub(super) fn client_concurrency(c: &Ctx, target: f64, why: String) -> Action {
    let n = target.round().max(1.0);
    in_flight(c, n, why, &[change("client_concurrency", n)])
}

/// Client advice: keep `n` requests in flight, predicted with `changes`.
pub(super) fn in_flight(c: &Ctx, n: f64, why: String, changes: &[Change]) -> Action {
    action(
        c,
        "client_concurrency",
        format!(
            "client: keep ~{} requests in flight (e.g. {} --max-concurrency {})",
            num(n),
            c.p.levers.client_tool,
            num(n)
        ),
        why,
        changes,
        "",
    )
}

/// The running cap to advise: double the current one, as far as the pool holds
/// (at least a quarter more).
pub(super) fn raised_cap(c: &Ctx) -> f64 {
    let cap = c.cap.unwrap_or(c.run()).max(1.0);
    let room = c.facts.pool_holds_requests.unwrap_or(cap * 2.0);
    (cap * 2.0).min(room.max(cap * 1.25)).round()
}
