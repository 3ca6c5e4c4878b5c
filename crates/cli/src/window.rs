//! The sliding window of a watched log: the whole lines of its last stretch of
//! log time, in memory, capped in bytes.
//!
//! Lines come in as read and leave from the front. Where the window begins is
//! learnt from the report of the window itself (the timeline's buckets carry
//! their time and first line), so no timestamp is parsed here: the core reads
//! every engine's. Lines that leave are counted once, so the counts of lines
//! read cover everything, while the bytes kept stay within the cap however
//! long the watch runs.

use std::collections::VecDeque;

use batchlens_core::{analyze, Options, Report};

/// Lines of each kind, over everything read.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Counts {
    /// Physical lines.
    pub lines: u64,
    pub stats: u64,
    pub damaged_stats: u64,
    pub other: u64,
    pub unrecognized: u64,
}

impl Counts {
    fn of(r: &Report) -> Counts {
        Counts {
            lines: r.input.lines,
            stats: r.input.stat_lines,
            damaged_stats: r.input.damaged_stat_lines,
            other: r.input.other_lines,
            unrecognized: r.input.unrecognized_lines,
        }
    }

    fn add(&mut self, o: &Counts) {
        self.lines += o.lines;
        self.stats += o.stats;
        self.damaged_stats += o.damaged_stats;
        self.other += o.other;
        self.unrecognized += o.unrecognized;
    }
}

/// Lines that left the window wait to be counted until there are this many bytes
/// of them (or the next judgement): counted in one go, not line by line.
const COUNT_AFTER_BYTES: usize = 4 << 20;

/// A judgement of the window.
pub struct Judged {
    pub report: Report,
    /// Every line read, those still in the window counted from the report.
    pub counts: Counts,
    /// The number, among every line read, of the first line judged.
    pub first_line: u64,
    /// Seconds of log time the judged lines held beyond the window (dropped since).
    pub over_s: f64,
}

pub struct Window {
    /// The window's whole lines.
    data: VecDeque<u8>,
    /// Where each of its lines starts, in bytes read since watching began.
    starts: VecDeque<u64>,
    /// Bytes read since watching began (whole lines).
    read: u64,
    /// A line begun and not yet ended.
    partial: Vec<u8>,
    cap: usize,
    /// Lines that left, not yet counted.
    left: Vec<u8>,
    left_counts: Counts,
    /// Lines that ever entered the window: the number of its first line, less one.
    lines_before: u64,
    /// Lines dropped to keep within the cap (not for their time).
    pub dropped_for_cap: u64,
}

impl Window {
    pub fn new(cap: usize) -> Self {
        Window {
            data: VecDeque::new(),
            starts: VecDeque::new(),
            read: 0,
            partial: Vec::new(),
            cap,
            left: Vec::new(),
            left_counts: Counts::default(),
            lines_before: 0,
            dropped_for_cap: 0,
        }
    }

    /// Bytes read; whole lines join the window.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.reserve(bytes.len() + self.partial.len());
        while let Some(i) = memchr::memchr(b'\n', bytes) {
            let (line, rest) = bytes.split_at(i + 1);
            self.starts.push_back(self.read);
            self.read += (self.partial.len() + line.len()) as u64;
            self.data.extend(self.partial.drain(..));
            self.data.extend(line);
            bytes = rest;
        }
        // A line longer than the cap could never be judged: its head is kept.
        let room = self.cap.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
        if self.data.len() > self.cap {
            self.shrink_to_cap();
        }
    }

    /// Room for `more` bytes: doubling as a vector does, but never past what
    /// the cap needs (a doubling past it would hold up to twice the cap).
    fn reserve(&mut self, more: usize) {
        let (len, room) = (self.data.len(), self.data.capacity());
        if len + more <= room {
            return;
        }
        let want = (room * 2).min(self.cap + more).max(len + more);
        self.data.reserve_exact(want - len);
    }

    /// The file ended (rotated, cut short): its unfinished line is a line.
    pub fn end_file(&mut self) {
        if !self.partial.is_empty() {
            self.push(b"\n");
        }
    }

    fn shrink_to_cap(&mut self) {
        let mut k = 0;
        while self.data.len() - self.bytes_of(k) > self.cap && k < self.starts.len() {
            k += 1;
        }
        self.dropped_for_cap += k as u64;
        self.drop_lines(k);
    }

    /// Bytes of the window's first `k` lines.
    fn bytes_of(&self, k: usize) -> usize {
        match self.starts.get(k) {
            Some(&s) => (s - self.starts[0]) as usize,
            None => self.data.len(),
        }
    }

    /// The first `k` lines leave the window.
    fn drop_lines(&mut self, k: usize) {
        if k == 0 {
            return;
        }
        let n = self.bytes_of(k);
        self.left.extend(self.data.drain(..n));
        self.starts.drain(..k.min(self.starts.len()));
        self.lines_before += k as u64;
        if self.left.len() >= COUNT_AFTER_BYTES {
            self.count_left();
        }
    }

    fn count_left(&mut self) {
        if self.left.is_empty() {
            return;
        }
        let r = analyze(&self.left, Options::default());
        self.left_counts.add(&Counts::of(&r));
        self.left.clear();
        self.left.shrink_to(COUNT_AFTER_BYTES);
    }

    /// The window's lines, one slice (for the analyzer).
    pub fn text(&mut self) -> &[u8] {
        self.data.make_contiguous()
    }

    pub fn bytes(&self) -> usize {
        self.data.len()
    }

    /// The number, among every line read, of the window's first line (1-based).
    pub fn first_line(&self) -> u64 {
        self.lines_before + 1
    }

    /// Judges the window, then slides it to the last `window_s` of log time.
    pub fn judge(&mut self, opts: &Options, window_s: f64) -> Judged {
        self.count_left();
        let first_line = self.first_line();
        let report = analyze(self.text(), opts.clone());
        let mut counts = self.left_counts;
        counts.add(&Counts::of(&report));
        let over_s = self.slide(&report, window_s);
        Judged {
            report,
            counts,
            first_line,
            over_s,
        }
    }

    /// Drops the lines older than `window_s` before the judged run's last
    /// stats line: those of the buckets that end before then. Returns the
    /// seconds the judged window held beyond `window_s`.
    fn slide(&mut self, r: &Report, window_s: f64) -> f64 {
        let from = r.span_seconds - window_s;
        if from <= 0.0 {
            return 0.0;
        }
        let w = r.timeline.bucket_seconds;
        let Some(first) = r.timeline.points.iter().find(|p| p.t_s + w > from) else {
            return 0.0;
        };
        let k = first.line.saturating_sub(1) as usize;
        self.drop_lines(k.min(self.starts.len()));
        from
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(t: u32, running: u32) -> String {
        format!(
            "[2026-05-07 10:{:02}:{:02} TP0] Decode batch, #running-req: {running}, #token: 9000, token usage: 0.40, cuda graph: True, gen throughput (token/s): 1000.00, #queue-req: 0\n",
            t / 60,
            t % 60
        )
    }

    #[test]
    fn the_window_keeps_its_last_stretch_of_log_time_and_counts_every_line() {
        let mut w = Window::new(1 << 20);
        let mut all = String::new();
        for t in 0..600 {
            let l = decode(t, 10 + t % 7);
            all.push_str(&l);
            w.push(l.as_bytes());
            if t % 2 == 0 {
                w.push(b"INFO:     127.0.0.1:5000 - \"POST /generate HTTP/1.1\" 200 OK\n");
                all.push_str("INFO:     127.0.0.1:5000 - \"POST /generate HTTP/1.1\" 200 OK\n");
            }
            if t % 50 == 49 {
                w.judge(&Options::default(), 120.0);
            }
        }
        let j = w.judge(&Options::default(), 120.0);
        let (r, counts) = (j.report, j.counts);
        let whole = analyze(all.as_bytes(), Options::default());
        assert_eq!(counts, Counts::of(&whole), "every line counted once");
        // The window spans 120 s (and at most a bucket and one judgement's
        // worth of new lines more) and ends with the log.
        assert!(
            r.span_seconds >= 120.0 && r.span_seconds <= 120.0 + 52.0,
            "span {}",
            r.span_seconds
        );
        assert_eq!(r.last_timestamp, whole.last_timestamp);
        // Its text is the log's tail from the window's first line.
        let tail: String = all
            .lines()
            .skip(w.first_line() as usize - 1)
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(w.text(), tail.as_bytes());
    }

    #[test]
    fn the_cap_bounds_the_bytes_kept() {
        let mut w = Window::new(10_000);
        for t in 0..3000 {
            w.push(decode(t % 3600, 5).as_bytes());
        }
        w.push(b"an unfinished line");
        assert!(w.bytes() <= 10_000, "{} bytes", w.bytes());
        assert!(w.dropped_for_cap > 0);
        w.end_file();
        let counts = w.judge(&Options::default(), 1e9).counts;
        assert_eq!(counts.lines, 3001);
        assert_eq!(counts.stats, 3000);
    }
}
