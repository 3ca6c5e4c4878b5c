//! The format files' share of the report: their counts, and whether one of
//! them is the log's engine.

use super::Options;
use crate::engines::Engine;
use crate::report::CustomFormat;

/// The counts of formats that share a name (one server's several lines), merged.
pub(super) fn merged(list: Vec<CustomFormat>) -> Vec<CustomFormat> {
    let mut out: Vec<CustomFormat> = Vec::new();
    for f in list {
        match out
            .iter_mut()
            .find(|o| o.name == f.name && o.side == f.side)
        {
            Some(o) => {
                o.like = o.like.take().or(f.like);
                o.matched_lines += f.matched_lines;
                o.samples += f.samples;
                o.config_lines += f.config_lines;
                o.unread_values += f.unread_values;
                if o.empty_match.is_none() {
                    o.empty_match = f.empty_match;
                }
            }
            None => out.push(f),
        }
    }
    out
}

/// The format whose samples outnumber every engine's stats records, unless an
/// engine was forced: the report then names it, and the diagnosis borrows its profile.
pub(super) fn judged(
    formats: &[CustomFormat],
    by_engine: &[(Engine, u64)],
    opts: &Options,
) -> Option<String> {
    if opts.engine.is_some() {
        return None;
    }
    let best = by_engine.iter().map(|(_, n)| *n).max().unwrap_or(0);
    formats
        .iter()
        .filter(|f| f.samples > best)
        .max_by_key(|f| f.samples)
        .map(|f| f.name.clone())
}
