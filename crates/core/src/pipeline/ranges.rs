//! Values outside what a server can print: an impossible date, a usage outside
//! 0..1, a negative or superhuman rate. Such a record is damaged — counted and
//! shown like a cut line — and the value is dropped, never part of a figure.

use crate::model::time::Stamp;
use crate::model::{Record, Sample};

/// Tokens per second no single stats line can reach: a deployment of a
/// thousand GPUs each decoding or prefilling 10^5 tokens/s logs 10^8.
pub const MAX_RATE_TOK_S: f64 = 1e8;
/// Tokens a speculative step can commit: drafts are a few to a few dozen long.
const MAX_ACCEPT_LEN: f64 = 1000.0;
/// A fraction computed by a division may round a hair above 1.
const FRACTION_SLACK: f64 = 1e-6;

/// Drops the impossible values of `recs` (samples and event stamps); how many
/// samples read in full it damaged.
pub fn damage_impossible(recs: &mut [Record]) -> u32 {
    let mut damaged = 0;
    for r in recs {
        match r {
            Record::Sample(s) => damaged += damage(s) as u32,
            Record::Event(e) => {
                let bad = e.stamp.as_ref().is_some_and(|st| !possible_stamp(st));
                e.stamp = e.stamp.filter(|_| !bad);
            }
            Record::Step(st) => st.stamp = st.stamp.filter(possible_stamp),
            _ => {}
        }
    }
    damaged
}

/// Drops a sample's impossible values; whether that damaged it (it was read in full).
fn damage(s: &mut Sample) -> bool {
    let newly = drop_impossible(s) && !s.damaged;
    s.damaged |= newly;
    newly
}

/// Whether the sample held an impossible value (now dropped).
fn drop_impossible(s: &mut Sample) -> bool {
    let mut bad = false;
    let mut check = |v: &mut Option<f64>, ok: &dyn Fn(f64) -> bool| {
        if v.is_some_and(|x| !ok(x)) {
            *v = None;
            bad = true;
        }
    };
    let fraction = |x: f64| (0.0..=1.0 + FRACTION_SLACK).contains(&x);
    let rate = |x: f64| (0.0..=MAX_RATE_TOK_S).contains(&x);
    check(&mut s.kv_usage, &fraction);
    check(&mut s.prefix_hit, &fraction);
    check(&mut s.gen_tok_s, &rate);
    check(&mut s.input_tok_s, &rate);
    check(&mut s.accept_len, &|x| (0.0..=MAX_ACCEPT_LEN).contains(&x));
    check(&mut s.interval_s, &|x| x >= 0.0 && x.is_finite());
    if s.stamp.as_ref().is_some_and(|st| !possible_stamp(st)) {
        s.stamp = None;
        bad = true;
    }
    bad
}

/// A date that is on the calendar and a time within a day (a leap second allowed).
pub fn possible_stamp(s: &Stamp) -> bool {
    let day_ok = match (s.month, s.day) {
        (Some(m), Some(d)) => (1..=12).contains(&m) && d >= 1 && d <= days_in_month(s.year, m),
        (None, None) => true,
        _ => false,
    };
    day_ok && (0.0..86_401.0).contains(&s.second_of_day)
}

/// Days of month `m`; February has 29 when the year is not told.
fn days_in_month(year: Option<i32>, m: u32) -> u32 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 => match year {
            Some(y) if !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) => 28,
            _ => 29,
        },
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(y: Option<i32>, m: u32, d: u32) -> Stamp {
        Stamp {
            year: y,
            month: Some(m),
            day: Some(d),
            second_of_day: 3600.0,
        }
    }

    #[test]
    fn only_calendar_dates_are_possible() {
        for (y, m, d, ok) in [
            (Some(2026), 2, 28, true),
            (Some(2026), 2, 29, false),
            (Some(2024), 2, 29, true),
            (Some(1900), 2, 29, false),
            (Some(2000), 2, 29, true),
            (None, 2, 29, true),
            (None, 2, 30, false),
            (Some(2026), 13, 1, false),
            (Some(2026), 0, 1, false),
            (Some(2026), 4, 31, false),
            (Some(2026), 12, 31, true),
            (Some(2026), 1, 32, false),
            (Some(2026), 1, 0, false),
        ] {
            assert_eq!(possible_stamp(&stamp(y, m, d)), ok, "{y:?}-{m}-{d}");
        }
    }

    #[test]
    fn a_sample_out_of_range_is_damaged_and_keeps_its_possible_values() {
        let s = Sample {
            kv_usage: Some(1e18),
            gen_tok_s: Some(1234.5),
            running: Some(7),
            ..Sample::default()
        };
        let mut recs = [Record::Sample(s)];
        assert_eq!(damage_impossible(&mut recs), 1);
        let Record::Sample(s) = &recs[0] else {
            unreachable!()
        };
        assert!(s.damaged);
        assert_eq!(
            (s.kv_usage, s.gen_tok_s, s.running),
            (None, Some(1234.5), Some(7))
        );
        // Damaged once only.
        assert_eq!(damage_impossible(&mut recs), 0);
    }
}
