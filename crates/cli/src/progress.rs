//! A one-line progress bar on stderr for long inputs.

use std::io::Write;
use std::time::Instant;

pub struct Progress {
    name: String,
    total: Option<u64>,
    start: Instant,
    last_draw: Instant,
}

impl Progress {
    pub fn new(name: &str, total: Option<u64>) -> Self {
        let now = Instant::now();
        Progress {
            name: name.to_string(),
            total,
            start: now,
            last_draw: now,
        }
    }

    pub fn update(&mut self, done: u64) {
        if self.last_draw.elapsed().as_millis() < 100 {
            return;
        }
        self.last_draw = Instant::now();
        let secs = self.start.elapsed().as_secs_f64().max(1e-6);
        let rate = done as f64 / secs / 1e6;
        let line = match self.total.filter(|&t| t > 0) {
            Some(t) => {
                let frac = (done as f64 / t as f64).min(1.0);
                let width = 30;
                let filled = (frac * width as f64) as usize;
                format!(
                    "\r{} [{}{}] {:>5.1}%  {:.0} / {:.0} MB  {:.0} MB/s ",
                    self.name,
                    "#".repeat(filled),
                    " ".repeat(width - filled),
                    frac * 100.0,
                    done as f64 / 1e6,
                    t as f64 / 1e6,
                    rate
                )
            }
            None => format!(
                "\r{}  {:.0} MB  {:.0} MB/s ",
                self.name,
                done as f64 / 1e6,
                rate
            ),
        };
        let _ = std::io::stderr().write_all(line.as_bytes());
    }

    pub fn done(self) {
        let _ = std::io::stderr().write_all(b"\r\x1b[2K");
    }
}
