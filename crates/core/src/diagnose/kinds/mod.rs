//! One file per bottleneck kind: its finding (headline, evidence) and its actions.

mod client_underload;
mod decode_saturated;
pub(super) mod insufficient_data;
mod kv_cache_capacity;
mod kv_retraction;
mod prefill_heavy;
mod rank_imbalance;
mod running_request_limit;
mod stalled;

pub(super) use client_underload::client;
pub(super) use decode_saturated::decode_saturated;
pub(super) use kv_cache_capacity::kv_capacity;
pub(super) use kv_retraction::retraction;
pub(super) use prefill_heavy::prefill;
pub(super) use rank_imbalance::rank_imbalance;
pub(super) use running_request_limit::running_limit;
pub(super) use stalled::stalled;
