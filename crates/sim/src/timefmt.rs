//! Civil-date arithmetic (no chrono) and a cached timestamp formatter.
//!
//! The core reads stamps with a `days_from_civil` of its own; the simulator keeps
//! this one apart on purpose: it writes the stamps the core's tests read back, and a
//! shared formula would let one mistake pass both ways unseen.

/// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`]: (year, month, day).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Parse `YYYY-MM-DD HH:MM:SS` (or with `T`) into Unix seconds.
pub fn parse_datetime(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: core::ops::Range<usize>| -> Option<i64> {
        let mut v = 0i64;
        for &c in &b[r] {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + (c - b'0') as i64;
        }
        Some(v)
    };
    if b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b' ' || b[10] == b'T')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    Some(days_from_civil(y, mo as u32, d as u32) * 86_400 + h * 3600 + mi * 60 + se)
}

/// Formats simulated times as `YYYY-MM-DD HH:MM:SS`, caching the text of the last second.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    /// Unix seconds of simulated time 0 (integer part).
    base: i64,
    /// Fractional offset added to simulated time.
    frac: f64,
    last_sec: i64,
    text: [u8; 19],
}

impl Clock {
    pub(crate) fn new(base_unix: i64, offset_s: f64) -> Self {
        let whole = offset_s.floor();
        let mut c = Clock {
            base: base_unix + whole as i64,
            frac: offset_s - whole,
            last_sec: i64::MIN,
            text: *b"1970-01-01 00:00:00",
        };
        c.set(base_unix);
        c
    }

    fn set(&mut self, sec: i64) {
        self.last_sec = sec;
        let days = sec.div_euclid(86_400);
        let rem = sec.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        let (h, mi, s) = (rem / 3600, (rem / 60) % 60, rem % 60);
        let t = &mut self.text;
        let y = y.clamp(0, 9999) as u32;
        t[0] = b'0' + (y / 1000) as u8;
        t[1] = b'0' + (y / 100 % 10) as u8;
        t[2] = b'0' + (y / 10 % 10) as u8;
        t[3] = b'0' + (y % 10) as u8;
        let two = |t: &mut [u8; 19], at: usize, v: u32| {
            t[at] = b'0' + (v / 10) as u8;
            t[at + 1] = b'0' + (v % 10) as u8;
        };
        two(t, 5, m);
        two(t, 8, d);
        two(t, 11, h as u32);
        two(t, 14, mi as u32);
        two(t, 17, s as u32);
    }

    /// Returns the `YYYY-MM-DD HH:MM:SS` text and the milliseconds for simulated time `t`.
    #[inline]
    pub(crate) fn at(&mut self, t: f64) -> (&str, u32) {
        let x = t + self.frac;
        let whole = x.floor();
        let mut ms = ((x - whole) * 1000.0) as u32;
        if ms > 999 {
            ms = 999;
        }
        let sec = self.base + whole as i64;
        if sec != self.last_sec {
            self.set(sec);
        }
        // The buffer only ever holds ASCII digits and separators.
        (
            core::str::from_utf8(&self.text).unwrap_or("1970-01-01 00:00:00"),
            ms,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for z in [-800_000i64, -1, 0, 1, 10_957, 19_000, 20_508, 2_000_000] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(parse_datetime("2026-02-24 10:00:00"), Some(1_771_927_200));
    }

    #[test]
    fn clock_formats() {
        let base = parse_datetime("2024-02-28 23:59:58").unwrap();
        let mut c = Clock::new(base, 0.0);
        assert_eq!(c.at(0.25), ("2024-02-28 23:59:58", 250));
        assert_eq!(c.at(2.0).0, "2024-02-29 00:00:00");
        assert_eq!(c.at(86_402.0).0, "2024-03-01 00:00:00");
        let mut c = Clock::new(base, 1.5);
        assert_eq!(c.at(0.0), ("2024-02-28 23:59:59", 500));
    }
}
