//! Timestamps: civil dates to seconds, and a monotone clock for the timeline.
//!
//! Logs print wall-clock text without a zone, sometimes without a date (SGLang
//! 0.2/0.3 `HH:MM:SS`) or a year (vLLM `MM-DD HH:MM:SS`). Samples keep their log
//! order; the [`Clock`] turns timestamps into seconds that never run backwards.

/// A timestamp as far as the line tells it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamp {
    pub year: Option<i32>,
    pub month: Option<u32>,
    pub day: Option<u32>,
    /// Seconds since midnight, with any fraction.
    pub second_of_day: f64,
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i32, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y } as i64;
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Turns stamps into monotone seconds.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    /// Raw seconds of the previous stamp (before offset) of each kind: dated,
    /// year-less, time-only ([`lane`]). Lines of two kinds are two servers'
    /// (SGLang's and vLLM's in one file), each going forward on its own: a
    /// step back is looked for between lines of one kind.
    last_raw: [Option<f64>; 3],
    /// Year assumed for stamps without one: the last dated stamp's, bumped on a
    /// December→January rollover.
    year_guess: i32,
    last_month: Option<u32>,
    last_day: Option<u32>,
    /// The last stamp with a month and day had no year.
    last_was_yearless: bool,
    /// Days added to time-only stamps after midnight rollovers.
    day_offset: i64,
    /// Correction that keeps the clock continuous across backward jumps.
    offset: f64,
    /// Highest clock value handed out.
    high: f64,
    started: bool,
    /// The last date turned into days: consecutive lines share their date.
    last_date: Option<((i32, u32, u32), i64)>,
}

/// Result of placing one stamp on the clock.
pub struct Tick {
    pub seconds: f64,
    /// Set when the raw time went backwards by more than the tolerance.
    pub jumped_back_s: Option<f64>,
}

/// Backward steps smaller than this are rank interleaving, not a new log.
const JITTER_S: f64 = 120.0;

impl Clock {
    pub fn new() -> Self {
        Clock {
            year_guess: 2000,
            ..Clock::default()
        }
    }

    fn raw_seconds(&mut self, s: &Stamp) -> f64 {
        match (s.year, s.month, s.day) {
            (Some(y), Some(m), Some(d)) => {
                // Year-less stamps (vLLM's `MM-DD`) between dated ones (SGLang's)
                // are of the year the dated lines tell, not of a guess.
                if y != self.year_guess {
                    if let (Some(lm), Some(ld), Some(prev)) =
                        (self.last_month, self.last_day, self.last_raw[1])
                    {
                        if self.last_was_yearless {
                            // The year-less stamps placed so far move to the year told,
                            // so the step from the last one is its own, not the years between.
                            let shift = (days_from_civil(y, lm, ld)
                                - days_from_civil(self.year_guess, lm, ld))
                                as f64
                                * 86_400.0;
                            self.last_raw[1] = Some(prev + shift);
                            self.offset -= shift;
                        }
                    }
                    self.year_guess = y;
                }
                self.last_month = Some(m);
                self.last_day = Some(d);
                self.last_was_yearless = false;
                self.days(y, m, d) as f64 * 86_400.0 + s.second_of_day
            }
            (None, Some(m), Some(d)) => {
                self.last_was_yearless = true;
                self.last_day = Some(d);
                if let Some(lm) = self.last_month {
                    if m + 6 < lm {
                        self.year_guess += 1;
                    }
                }
                self.last_month = Some(m);
                self.days(self.year_guess, m, d) as f64 * 86_400.0 + s.second_of_day
            }
            _ => {
                let t = self.day_offset as f64 * 86_400.0 + s.second_of_day;
                if let Some(prev) = self.last_raw[2] {
                    // A time-only stamp far behind the previous one crossed midnight.
                    if prev - t > 43_200.0 {
                        self.day_offset += 1;
                        return t + 86_400.0;
                    }
                }
                t
            }
        }
    }

    fn days(&mut self, y: i32, m: u32, d: u32) -> i64 {
        match self.last_date {
            Some((date, days)) if date == (y, m, d) => days,
            _ => {
                let days = days_from_civil(y, m, d);
                self.last_date = Some(((y, m, d), days));
                days
            }
        }
    }

    pub fn place(&mut self, s: &Stamp) -> Tick {
        let raw = self.raw_seconds(s);
        let lane = lane(s);
        let mut jumped = None;
        if let Some(prev) = self.last_raw[lane] {
            let back = prev - raw;
            if back > JITTER_S {
                // A new segment (rotated/concatenated log): continue from where we were.
                self.offset = self.high - raw;
                jumped = Some(back);
            }
        }
        self.last_raw[lane] = Some(raw);
        let mut t = raw + self.offset;
        if !self.started {
            self.started = true;
            self.high = t;
        }
        if t < self.high {
            t = self.high;
        }
        self.high = t;
        Tick {
            seconds: t,
            jumped_back_s: jumped,
        }
    }
}

/// The kind of a stamp: dated (0), year-less (1), time-only (2).
fn lane(s: &Stamp) -> usize {
    match (s.year, s.month) {
        (Some(_), Some(_)) => 0,
        (None, Some(_)) => 1,
        _ => 2,
    }
}

/// The stamp as text, in the form the log used.
pub fn format_stamp(s: &Stamp) -> String {
    let sod = s.second_of_day.max(0.0);
    let whole = sod.floor() as u64;
    let (h, m, sec) = (whole / 3600, (whole / 60) % 60, whole % 60);
    let ms = ((sod - whole as f64) * 1000.0).round() as u64;
    let time = if ms > 0 && ms < 1000 {
        format!("{h:02}:{m:02}:{sec:02}.{ms:03}")
    } else {
        format!("{h:02}:{m:02}:{sec:02}")
    };
    match (s.year, s.month, s.day) {
        (Some(y), Some(mo), Some(d)) => format!("{y:04}-{mo:02}-{d:02} {time}"),
        (None, Some(mo), Some(d)) => format!("{mo:02}-{d:02} {time}"),
        _ => time,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(y: Option<i32>, m: Option<u32>, d: Option<u32>, sod: f64) -> Stamp {
        Stamp {
            year: y,
            month: m,
            day: d,
            second_of_day: sod,
        }
    }

    #[test]
    fn civil_days_match_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2026, 2, 24), 20_508);
    }

    #[test]
    fn year_rollover_without_year_keeps_order() {
        let mut c = Clock::new();
        let a = c.place(&st(None, Some(12), Some(31), 86_390.0)).seconds;
        let b = c.place(&st(None, Some(1), Some(1), 10.0)).seconds;
        assert_eq!(b - a, 20.0);
    }

    #[test]
    fn year_less_stamps_take_the_year_of_the_dated_ones_around_them() {
        // Dated (SGLang) and year-less (vLLM) lines of one day, interleaved.
        let mut c = Clock::new();
        let mut last = None;
        for k in 0..20 {
            let year = (k % 2 == 0).then_some(2026);
            let t = c.place(&st(year, Some(2), Some(24), 36_000.0 + k as f64));
            assert!(t.jumped_back_s.is_none(), "stamp {k}");
            if let Some(prev) = last {
                assert_eq!(t.seconds - prev, 1.0, "stamp {k}");
            }
            last = Some(t.seconds);
        }
        // Year-less first: the dated line that follows goes on from them.
        let mut c = Clock::new();
        let a = c.place(&st(None, Some(12), Some(31), 86_000.0)).seconds;
        let b = c.place(&st(Some(2026), Some(12), Some(31), 86_010.0));
        assert!(b.jumped_back_s.is_none());
        assert_eq!(b.seconds - a, 10.0);
        let n = c.place(&st(None, Some(1), Some(1), 10.0)).seconds;
        assert_eq!(n - b.seconds, 400.0, "into the next year");
    }

    #[test]
    fn midnight_rollover_for_time_only_stamps() {
        let mut c = Clock::new();
        let a = c.place(&st(None, None, None, 86_399.0)).seconds;
        let b = c.place(&st(None, None, None, 1.0)).seconds;
        assert_eq!(b - a, 2.0);
    }

    #[test]
    fn backward_jump_is_reported_and_clock_stays_monotone() {
        let mut c = Clock::new();
        let a = c.place(&st(Some(2026), Some(1), Some(2), 1000.0)).seconds;
        let t = c.place(&st(Some(2026), Some(1), Some(1), 1000.0));
        assert!(t.jumped_back_s.is_some());
        assert!(t.seconds >= a);
        let n = c.place(&st(Some(2026), Some(1), Some(1), 1010.0)).seconds;
        assert_eq!(n - t.seconds, 10.0);
    }

    #[test]
    fn rank_jitter_does_not_move_the_clock_back() {
        let mut c = Clock::new();
        let a = c.place(&st(Some(2026), Some(1), Some(1), 100.0)).seconds;
        let b = c.place(&st(Some(2026), Some(1), Some(1), 99.0));
        assert!(b.jumped_back_s.is_none());
        assert_eq!(b.seconds, a);
    }
}
