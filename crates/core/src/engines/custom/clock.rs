//! The time formats a format file may declare for its `time` capture: a
//! strftime-like pattern (`%Y-%m-%d %H:%M:%S`, `%f`, an ISO `T`) or seconds
//! since the epoch. A zone suffix (`Z`, `+02:00`) is accepted and not applied:
//! batchlens keeps the log's wall clock, as it does for every engine.

use crate::model::time::Stamp;

/// One piece of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    Year,
    Month,
    /// A month's English name or its first three letters (`%b`).
    MonthName,
    Day,
    Hour,
    Minute,
    /// Seconds, with any `.`/`,` fraction that follows.
    Second,
    /// The digits of a fraction of a second (`%f`, after a literal `.` or `,`).
    Fraction,
    Literal(char),
    /// Any run of spaces (a space in the pattern: logs pad with one or more).
    Spaces,
}

/// A compiled time format.
#[derive(Debug, Clone, PartialEq)]
pub enum TimeFormat {
    Pattern(Vec<Piece>),
    /// Seconds since 1970-01-01 (UTC), with any fraction.
    Epoch,
    /// Milliseconds since 1970-01-01 (UTC).
    EpochMillis,
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

impl TimeFormat {
    /// Compiles `spec`: `epoch`, `epoch_ms`, `iso8601` (`%Y-%m-%dT%H:%M:%S`,
    /// fraction and zone optional) or a pattern of `%Y %m %b %d %H %M %S %f %%`
    /// and literal text.
    pub fn parse(spec: &str) -> Result<TimeFormat, String> {
        match spec {
            "epoch" | "%s" => return Ok(TimeFormat::Epoch),
            "epoch_ms" => return Ok(TimeFormat::EpochMillis),
            "iso8601" | "rfc3339" => return TimeFormat::parse("%Y-%m-%dT%H:%M:%S"),
            _ => {}
        }
        let mut out = Vec::new();
        let mut chars = spec.chars();
        while let Some(c) = chars.next() {
            if c == ' ' {
                if out.last() != Some(&Piece::Spaces) {
                    out.push(Piece::Spaces);
                }
                continue;
            }
            if c != '%' {
                out.push(Piece::Literal(c));
                continue;
            }
            out.push(match chars.next() {
                Some('Y') => Piece::Year,
                Some('m') => Piece::Month,
                Some('b') => Piece::MonthName,
                Some('d') => Piece::Day,
                Some('H') => Piece::Hour,
                Some('M') => Piece::Minute,
                Some('S') => Piece::Second,
                Some('f') => Piece::Fraction,
                Some('%') => Piece::Literal('%'),
                Some(o) => {
                    return Err(format!(
                        "time_format '{spec}': unknown directive %{o} (known: %Y %m %b %d %H %M %S %f %%, or epoch, epoch_ms, iso8601)"
                    ))
                }
                None => return Err(format!("time_format '{spec}' ends with a lone %")),
            });
        }
        if !out.contains(&Piece::Hour) && !out.contains(&Piece::Second) {
            return Err(format!(
                "time_format '{spec}' has no time of day (%H, %S): batchlens needs seconds to place samples"
            ));
        }
        Ok(TimeFormat::Pattern(out))
    }

    /// The stamp `text` gives, `None` when it does not fit the format.
    pub fn read(&self, text: &str) -> Option<Stamp> {
        match self {
            TimeFormat::Epoch => epoch(text.trim().parse::<f64>().ok()?),
            TimeFormat::EpochMillis => epoch(text.trim().parse::<f64>().ok()? / 1000.0),
            TimeFormat::Pattern(p) => pattern(p, text.trim()),
        }
    }
}

fn epoch(s: f64) -> Option<Stamp> {
    if !s.is_finite() || !(0.0..1e11).contains(&s) {
        return None;
    }
    let days = (s / 86_400.0).floor();
    let (y, m, d) = civil_from_days(days as i64);
    Some(Stamp {
        year: Some(y),
        month: Some(m),
        day: Some(d),
        second_of_day: s - days * 86_400.0,
    })
}

/// The civil date of a day count since 1970-01-01 (the inverse of
/// [`crate::model::time::days_from_civil`]).
fn civil_from_days(z: i64) -> (i32, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = (yoe + era * 400) as i32 + (m <= 2) as i32;
    (y, m, d)
}

/// Digits at the start of `s`, at most `max`: their value and the rest.
fn digits(s: &str, max: usize) -> Option<(u32, &str)> {
    let n = s
        .bytes()
        .take(max)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if n == 0 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// A fraction's digits: its value and the rest.
fn fraction(s: &str) -> Option<(f64, &str)> {
    let n = s.bytes().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 {
        return None;
    }
    let v: f64 = format!("0.{}", &s[..n.min(12)]).parse().ok()?;
    Some((v, &s[n..]))
}

fn pattern(p: &[Piece], mut s: &str) -> Option<Stamp> {
    let (mut y, mut mo, mut d) = (None, None, None);
    let (mut h, mut mi, mut sec, mut frac) = (0u32, 0u32, 0u32, 0.0);
    for piece in p {
        match *piece {
            Piece::Year => {
                let (v, r) = digits(s, 4)?;
                y = Some(v as i32);
                s = r;
            }
            Piece::Month => {
                let (v, r) = digits(s, 2)?;
                mo = Some(v);
                s = r;
            }
            Piece::MonthName => {
                let head = s.get(..3)?.to_ascii_lowercase();
                let i = MONTHS.iter().position(|m| *m == head)?;
                mo = Some(i as u32 + 1);
                s = s[3..].trim_start_matches(|c: char| c.is_ascii_alphabetic());
            }
            Piece::Day => {
                let (v, r) = digits(s.trim_start_matches(' '), 2)?;
                d = Some(v);
                s = r;
            }
            Piece::Hour => (h, s) = digits(s, 2)?,
            Piece::Minute => (mi, s) = digits(s, 2)?,
            Piece::Second => {
                (sec, s) = digits(s, 2)?;
                let fraction_next = p.contains(&Piece::Fraction);
                if !fraction_next && (s.starts_with('.') || s.starts_with(',')) {
                    if let Some((f, r)) = fraction(&s[1..]) {
                        (frac, s) = (f, r);
                    }
                }
            }
            Piece::Fraction => (frac, s) = fraction(s)?,
            Piece::Literal(c) => s = s.strip_prefix(c)?,
            Piece::Spaces => {
                let t = s.trim_start_matches(' ');
                if t.len() == s.len() {
                    return None;
                }
                s = t;
            }
        }
    }
    if !zone(s) {
        return None;
    }
    if mo.is_some_and(|m| !(1..=12).contains(&m))
        || d.is_some_and(|d| !(1..=31).contains(&d))
        || h > 23
        || mi > 59
        || sec > 60
    {
        return None;
    }
    Some(Stamp {
        year: y,
        month: mo,
        day: d,
        second_of_day: (h * 3600 + mi * 60 + sec) as f64 + frac,
    })
}

/// Whether what follows the stamp is nothing or a zone (`Z`, `+02:00`, `-0500`, ` UTC`).
fn zone(s: &str) -> bool {
    let s = s.trim();
    if s.is_empty() || s == "Z" || s.eq_ignore_ascii_case("utc") {
        return true;
    }
    let Some(rest) = s.strip_prefix('+').or_else(|| s.strip_prefix('-')) else {
        return false;
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    (digits.len() == 4 || digits.len() == 2) && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::time::days_from_civil;

    fn read(spec: &str, text: &str) -> Option<Stamp> {
        TimeFormat::parse(spec).unwrap().read(text)
    }

    #[test]
    fn patterns_read_dates_times_and_fractions() {
        let s = read("%Y-%m-%d %H:%M:%S", "2026-02-24 10:55:32").unwrap();
        assert_eq!((s.year, s.month, s.day), (Some(2026), Some(2), Some(24)));
        assert_eq!(s.second_of_day, 10.0 * 3600.0 + 55.0 * 60.0 + 32.0);
        // A fraction after %S is read without being declared.
        let s = read("%Y-%m-%d %H:%M:%S", "2026-02-24 10:55:32.250").unwrap();
        assert!((s.second_of_day - 39_332.25).abs() < 1e-9);
        let s = read("%Y-%m-%d %H:%M:%S,%f", "2026-02-24 10:55:32,5").unwrap();
        assert!((s.second_of_day - 39_332.5).abs() < 1e-9);
        let s = read("iso8601", "2024-12-10T21:50:03.478010Z").unwrap();
        assert_eq!(s.day, Some(10));
        assert!((s.second_of_day - (21.0 * 3600.0 + 50.0 * 60.0 + 3.47801)).abs() < 1e-6);
        assert!(read("iso8601", "2024-12-10T21:50:03+02:00").is_some());
        let s = read("%Y/%m/%d - %H:%M:%S", "2024/04/22 - 19:45:05").unwrap();
        assert_eq!(s.month, Some(4));
        let s = read("%b %d %H:%M:%S", "Feb  4 18:00:01").unwrap();
        assert_eq!((s.year, s.month, s.day), (None, Some(2), Some(4)));
    }

    #[test]
    fn text_that_does_not_fit_is_no_stamp() {
        assert_eq!(read("%Y-%m-%d %H:%M:%S", "2026-02-24"), None);
        assert_eq!(read("%Y-%m-%d %H:%M:%S", "2026-13-24 10:55:32"), None);
        assert_eq!(read("%Y-%m-%d %H:%M:%S", "2026-02-24 25:55:32"), None);
        assert_eq!(
            read("%Y-%m-%d %H:%M:%S", "2026-02-24 10:55:32 trailing"),
            None
        );
        assert_eq!(read("epoch", "soon"), None);
        assert_eq!(read("epoch", "-5"), None);
    }

    #[test]
    fn epoch_seconds_become_the_civil_date() {
        let s = read("epoch", "1713786305").unwrap();
        let (y, m, d) = (s.year.unwrap(), s.month.unwrap(), s.day.unwrap());
        assert_eq!((y, m, d), (2024, 4, 22));
        let back = days_from_civil(y, m, d) * 86_400 + s.second_of_day as i64;
        assert_eq!(back, 1_713_786_305);
        let ms = read("epoch_ms", "1713786305500").unwrap();
        assert!((ms.second_of_day - s.second_of_day - 0.5).abs() < 1e-6);
        for days in [-1, 0, 59, 365 * 30 + 7, 20_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn unknown_directives_are_refused_by_name() {
        let e = TimeFormat::parse("%Y-%q").unwrap_err();
        assert!(e.contains("%q"), "{e}");
        assert!(TimeFormat::parse("%Y-%m-%d")
            .unwrap_err()
            .contains("time of day"));
    }
}
