//! The prefix of a record: its timestamp and rank tokens (`DP3`, `TP0`).

use super::super::prefix::Found as StampFound;
use super::super::prefix::{bracketed_stamp, last_stamp};
use crate::model::time::Stamp;
use crate::model::SourceName;
use crate::text::fields::uint32;

/// The prefix facts of one record.
#[derive(Debug, Default, Clone)]
pub struct PrefixInfo {
    pub stamp: Option<Stamp>,
    /// `DP3` when the line carries a DP rank, else empty.
    pub dp: SourceName,
    /// Tensor-parallel rank, when printed.
    pub tp: Option<u32>,
}

/// Reads timestamp and rank tokens from the text before the message.
pub fn read_prefix(p: &[u8]) -> PrefixInfo {
    read_prefix_with(p, bracketed_stamp, rank_tokens)
}

/// [`read_prefix`], with the commonest stamp read by `bracketed` and the rank
/// tokens by `ranks` (memos on the hot path).
pub(super) fn read_prefix_with(
    p: &[u8],
    bracketed: impl FnOnce(&[u8]) -> Option<StampFound>,
    ranks: impl FnOnce(&[u8]) -> Ranks,
) -> PrefixInfo {
    let (stamp, tail_from) = match bracketed(p).or_else(|| last_stamp(p)) {
        Some(f) => (Some(f.stamp), f.end),
        None => (None, 0),
    };
    // Rank tokens follow the time inside the same bracket: ` DP0 TP0 EP0`, or `[gpu=0]`.
    let tail = &p[tail_from..];
    let close = memchr::memchr(b']', tail).unwrap_or(tail.len());
    let (dp, tp) = ranks(&tail[..close]);
    PrefixInfo { stamp, dp, tp }
}

/// DP label and TP rank.
pub(super) type Ranks = (SourceName, Option<u32>);

pub(super) fn rank_tokens(tail: &[u8]) -> Ranks {
    let (mut dp, mut tp) = (SourceName::default(), None);
    for tok in tail.split(|&c| c == b' ' || c == b'[') {
        if let Some(n) = tok.strip_prefix(b"DP").and_then(uint32) {
            dp = dp_label(n).into();
        } else if let Some(n) = tok.strip_prefix(b"TP").and_then(uint32) {
            tp = Some(n);
        }
    }
    (dp, tp)
}

/// `DP{n}` without the formatting machinery (read once per distinct rank text).
pub(super) fn dp_label(n: u32) -> String {
    let mut buf = [0; 20];
    let digits = crate::text::fields::decimal_text(n.into(), &mut buf);
    let mut s = String::with_capacity(2 + digits.len());
    s.push_str("DP");
    s.push_str(digits);
    s
}
