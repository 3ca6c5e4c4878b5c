//! Timestamps and rank labels in the text before a record's message.

use crate::model::time::Stamp;
use crate::text::fields::digits_at;

/// A timestamp found in a prefix, with where its text lies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub stamp: Stamp,
    pub start: usize,
    pub end: usize,
}

fn two(b: &[u8], i: usize) -> Option<u32> {
    if i + 2 <= b.len() && b[i].is_ascii_digit() && b[i + 1].is_ascii_digit() {
        Some((b[i] - b'0') as u32 * 10 + (b[i + 1] - b'0') as u32)
    } else {
        None
    }
}

/// `HH:MM:SS` at `i`, returning seconds of day.
fn hms(b: &[u8], i: usize) -> Option<u32> {
    let h = two(b, i)?;
    let m = two(b, i + 3)?;
    let s = two(b, i + 6)?;
    (b.get(i + 2) == Some(&b':') && b.get(i + 5) == Some(&b':') && h < 24 && m < 60 && s < 61)
        .then_some(h * 3600 + m * 60 + s)
}

/// The last timestamp in `text` (the one nearest the message: collectors and
/// docker put theirs first). Understands `YYYY-MM-DD HH:MM:SS[.fff]`,
/// `YYYY-MM-DDTHH:MM:SS[.fffZ]`, `MM-DD HH:MM:SS` and `HH:MM:SS[.fff]`.
pub fn last_stamp(text: &[u8]) -> Option<Found> {
    let mut i = text.len();
    while i > 5 {
        i -= 1;
        // Look for the ':' that separates minutes and seconds, then back up.
        if text[i] != b':' || i < 5 {
            continue;
        }
        let start = i - 5;
        let Some(sod) = hms(text, start) else {
            continue;
        };
        if start > 0 && text[start - 1].is_ascii_digit() {
            continue;
        }
        let mut end = start + 8;
        let mut frac = 0.0;
        if end + 1 < text.len()
            && (text[end] == b'.' || text[end] == b',')
            && text[end + 1].is_ascii_digit()
        {
            let mut j = end + 1;
            let mut scale = 0.1;
            while j < text.len() && text[j].is_ascii_digit() {
                if scale > 1e-9 {
                    frac += (text[j] - b'0') as f64 * scale;
                    scale /= 10.0;
                }
                j += 1;
            }
            end = j;
        }
        let mut st = Stamp {
            year: None,
            month: None,
            day: None,
            second_of_day: sod as f64 + frac,
        };
        let mut s0 = start;
        // Date before it: "YYYY-MM-DD " / "YYYY-MM-DDT" / "MM-DD ".
        if start >= 6 && (text[start - 1] == b' ' || text[start - 1] == b'T') {
            let d = start - 6;
            if let (Some(mo), Some(dd)) = (two(text, d), two(text, d + 3)) {
                // Any two digits: an impossible date (month 13, day 32) is told
                // as it is, and judged where the record is (never a time alone).
                if text[d + 2] == b'-' {
                    st.month = Some(mo);
                    st.day = Some(dd);
                    s0 = d;
                    if d >= 5 && text[d - 1] == b'-' {
                        if let Some((y, _)) = digits_at(text, d - 5, 4) {
                            if y >= 1970 && text[d - 5..d - 1].iter().all(u8::is_ascii_digit) {
                                st.year = Some(y as i32);
                                s0 = d - 5;
                            }
                        }
                    }
                }
            }
        }
        return Some(Found {
            stamp: st,
            start: s0,
            end,
        });
    }
    None
}

/// [`last_stamp`] for the commonest prefix, `[YYYY-MM-DD HH:MM:SS` followed by
/// ` ` or `]` and no other `:`, read at fixed places instead of searched for.
/// `None` (ask `last_stamp`) for anything else, including out-of-range fields.
pub fn bracketed_stamp(p: &[u8]) -> Option<Found> {
    bracketed_stamp_with(p, bracketed_head)
}

/// [`bracketed_stamp`], with its first 21 bytes (which alone decide the stamp)
/// read by `head` — [`bracketed_head`], or a memo of it: a busy log prints many
/// lines within one second.
pub fn bracketed_stamp_with(p: &[u8], head: impl FnOnce(&[u8]) -> Option<Found>) -> Option<Found> {
    // Another `:` after the stamp: `last_stamp` may find a later time there.
    if p.len() < 21 || memchr::memchr(b':', &p[20..]).is_some() {
        return None;
    }
    head(&p[..21])
}

/// The stamp of a prefix's first 21 bytes, `[YYYY-MM-DD HH:MM:SS` then ` ` or `]`.
pub fn bracketed_head(b: &[u8]) -> Option<Found> {
    let b = b.get(..21)?;
    let num = |i: usize, n: usize| {
        b[i..i + n].iter().try_fold(0u32, |v, &c| {
            c.is_ascii_digit().then(|| v * 10 + (c - b'0') as u32)
        })
    };
    let shape = b[0] == b'['
        && b[5] == b'-'
        && b[8] == b'-'
        && b[11] == b' '
        && b[14] == b':'
        && b[17] == b':'
        && (b[20] == b' ' || b[20] == b']');
    if !shape {
        return None;
    }
    let (y, mo, d) = (num(1, 4)?, num(6, 2)?, num(9, 2)?);
    let (h, mi, s) = (num(12, 2)?, num(15, 2)?, num(18, 2)?);
    // Month and day as printed, possible or not: see `last_stamp`.
    let ok = y >= 1970 && h < 24 && mi < 60 && s < 61;
    ok.then(|| Found {
        stamp: Stamp {
            year: Some(y as i32),
            month: Some(mo),
            day: Some(d),
            second_of_day: (h * 3600 + mi * 60 + s) as f64,
        },
        start: 1,
        end: 20,
    })
}

/// Whether a line begins like a log record rather than a wrapped continuation.
pub fn starts_like_record(line: &[u8]) -> bool {
    let b = crate::text::fields::trim(line);
    let Some(&c) = b.first() else { return false };
    if line.first().is_some_and(|c| c.is_ascii_whitespace()) {
        return false;
    }
    match c {
        b'[' | b'(' | b'{' => true,
        b'0'..=b'9' => last_stamp(&b[..b.len().min(40)]).is_some(),
        _ => {
            const LEVELS: [&[u8]; 6] = [
                b"INFO",
                b"WARNING",
                b"DEBUG",
                b"ERROR",
                b"CRITICAL",
                b"TRACE",
            ];
            LEVELS.iter().any(|l| b.starts_with(l))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_timestamp_nearest_the_message() {
        let f = last_stamp(b"[2025-03-11 16:44:27] [2025-03-11 01:44:27 TP0] ").unwrap();
        assert_eq!(f.stamp.year, Some(2025));
        assert_eq!(f.stamp.second_of_day, 3600.0 + 44.0 * 60.0 + 27.0);
        let f = last_stamp(b"2025-10-15T00:07:38.764529167Z (APIServer pid=1) INFO 10-14 17:07:38 [loggers.py:123] ").unwrap();
        assert_eq!(
            (f.stamp.year, f.stamp.month, f.stamp.day),
            (None, Some(10), Some(14))
        );
        let f = last_stamp(b"[2026-04-01 20:42:53.998] ").unwrap();
        assert!((f.stamp.second_of_day - (20.0 * 3600.0 + 42.0 * 60.0 + 53.998)).abs() < 1e-9);
        let f = last_stamp(b"[16:43:29 TP0] ").unwrap();
        assert_eq!((f.stamp.year, f.stamp.month), (None, None));
        assert!(last_stamp(b"[gpu=0] ").is_none());
        assert!(last_stamp(b"abc 99:99:99 ").is_none());
    }

    #[test]
    fn the_bracketed_reading_is_what_the_search_finds() {
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for stamp in [
            "2026-05-07 13:40:01",
            "1969-05-07 13:40:01",
            "2026-13-07 13:40:01",
            "2026-00-07 13:40:01",
            "2026-05-32 13:40:01",
            "2026-05-07 24:40:01",
            "2026-05-07 13:60:01",
            "2026-05-07 13:40:61",
            "2026-05-07 13:40:60",
            "2026-5-07 13:40:01x",
            "2026-05-07T13:40:01",
            "2a26-05-07 13:40:01",
        ] {
            for tail in [
                " DP0 TP0 EP0] ",
                "] ",
                " TP1] x",
                ".123 TP0] ",
                " 12:00:00] ",
                "]",
                " [gpu=0] ",
            ] {
                cases.push(format!("[{stamp}{tail}").into_bytes());
            }
        }
        cases.push(b"[2026-05-07 13:40:01".to_vec());
        let mut fast = 0;
        for c in &cases {
            if let Some(f) = bracketed_stamp(c) {
                fast += 1;
                assert_eq!(Some(f), last_stamp(c), "{}", String::from_utf8_lossy(c));
            }
        }
        assert!(fast >= 10, "{fast}");
        // Remembered: every case after every other reads as it does afresh.
        for a in &cases {
            for b in &cases {
                let mut memo = crate::engines::prefix_cache::PrefixCache::with_slots(1);
                let mut memoised =
                    |p: &[u8]| bracketed_stamp_with(p, |h| memo.get(h, bracketed_head));
                assert_eq!(memoised(a), bracketed_stamp(a));
                assert_eq!(
                    memoised(b),
                    bracketed_stamp(b),
                    "{} after {}",
                    String::from_utf8_lossy(b),
                    String::from_utf8_lossy(a)
                );
            }
        }
    }

    #[test]
    fn wrapped_tails_do_not_start_records() {
        assert!(starts_like_record(b"[2026-01-01 00:00:00 TP0] Decode"));
        assert!(starts_like_record(
            b"INFO 07-03 23:23:42 [metrics.py:536] Avg"
        ));
        assert!(starts_like_record(
            b"2025-10-15T00:07:38.764529167Z (APIServer pid=1)"
        ));
        assert!(!starts_like_record(b"eqs, Swapped: 0 reqs"));
        assert!(!starts_like_record(b"t: 569.6 tokens/s, Running: 27 reqs"));
        assert!(!starts_like_record(b"   padded"));
    }
}
