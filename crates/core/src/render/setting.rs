//! A what-if value as the setting that makes it: `max_running=48` →
//! `--max-running-requests 48`, `kv_scale=1.5` → `--mem-fraction-static 0.91`, in
//! the engine's own flags (from its profile). `None` where no server flag sets it
//! (the client's concurrency, prefill's cost) or the log lacks what the flag's
//! value follows from.

use crate::model::profile::{KvMemory, Levers};
use crate::report::Report;

/// The flag (with its value) that sets `parameter` to `value` on this report's server,
/// whose engine's levers are `levers`.
pub fn setting_flag(r: &Report, levers: &Levers, parameter: &str, value: f64) -> Option<String> {
    if !value.is_finite() || value <= 0.0 {
        return None;
    }
    match parameter {
        "max_running" => Some(format!("{} {}", levers.running_cap, value.round())),
        "schedule_conservativeness" => levers
            .conservativeness
            .as_ref()
            .map(|c| c.lower.flag.replace("{}", &format!("{value:.2}"))),
        "kv_scale" if (value - 2.0).abs() < 0.02 => Some(levers.fp8_kv.0.to_string()),
        "kv_scale" => match &levers.kv_memory {
            // The fraction covers weights and pool; what is left after the pool
            // (`available_gpu_mem`) is the rest of the GPU: GPU = left ÷ (1 − fraction),
            // and the pool grows by (scale − 1) × its size out of it.
            &KvMemory::StaticFraction { flag, most, .. } => {
                let c = &r.config;
                let (m, kv, left) = (
                    c.mem_fraction_static?,
                    c.kv_cache_gb?,
                    c.available_gpu_mem_gb?,
                );
                if !(0.0..1.0).contains(&m) || kv <= 0.0 || left <= 0.0 {
                    return None;
                }
                let gpu = left / (1.0 - m);
                let target = m + (value - 1.0) * kv / gpu;
                (target > 0.0).then(|| {
                    if target > most {
                        format!("{flag} {target:.2} (more than the {most} that leaves room for activations: FP8 KV or more GPUs instead)")
                    } else {
                        format!("{flag} {target:.2}")
                    }
                })
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sglang(m: f64, kv: f64, left: f64) -> Report {
        let mut r = crate::analyze(b"", crate::Options::default());
        r.engine = "sglang".into();
        r.config.mem_fraction_static = Some(m);
        r.config.kv_cache_gb = Some(kv);
        r.config.available_gpu_mem_gb = Some(left);
        r
    }

    const LEVERS: &Levers = &crate::engines::sglang::profile::PROFILE.levers;

    #[test]
    fn each_lever_is_the_engines_flag() {
        let r = sglang(0.8, 16.0, 16.0);
        assert_eq!(
            setting_flag(&r, LEVERS, "max_running", 48.0).as_deref(),
            Some("--max-running-requests 48")
        );
        assert_eq!(
            setting_flag(&r, LEVERS, "schedule_conservativeness", 0.5).as_deref(),
            Some("--schedule-conservativeness 0.50")
        );
        // An 80 GB GPU (16 GB left at 0.8): 8 GB more pool is 0.1 of it.
        assert_eq!(
            setting_flag(&r, LEVERS, "kv_scale", 1.5).as_deref(),
            Some("--mem-fraction-static 0.90")
        );
        assert_eq!(
            setting_flag(&r, LEVERS, "kv_scale", 2.0).as_deref(),
            Some("--kv-cache-dtype fp8_e4m3")
        );
        assert_eq!(setting_flag(&r, LEVERS, "client_concurrency", 8.0), None);
    }
}
