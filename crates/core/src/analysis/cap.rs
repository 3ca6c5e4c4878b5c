//! The running-request cap: stated in the startup lines, or seen as a hard plateau.

use super::window::Window;
use crate::report::Report;

/// The configured cap when the run reaches it, else a hard plateau at a round number.
pub fn running_cap(r: &Report, w: &Window) -> (Option<f64>, bool) {
    if let Some(c) = r.config.max_running_requests {
        // The cap is per scheduler: each SGLang DP rank and each vLLM engine has its
        // own, while the running count is summed over them.
        let ranks = r
            .sources
            .iter()
            .filter(|s| !s.source.is_empty() && s.source != "aggregated")
            .count()
            .max(1);
        return (Some(c as f64 * ranks as f64), false);
    }
    let (Some(max), Some(p50)) = (w.running_max, w.running_p50) else {
        return (None, false);
    };
    let round = max >= 8.0 && (max.fract() == 0.0) && (max as u64) % 8 == 0;
    let flat = p50 >= 0.97 * max;
    let queue = w.typical_queue() >= 1.0 && w.queue_share.unwrap_or(0.0) >= 0.5;
    let kv_spare = w.kv_usage.is_none_or(|u| u < 0.6);
    if round && flat && queue && kv_spare {
        (Some(max), true)
    } else {
        (None, false)
    }
}
