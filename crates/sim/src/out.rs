//! Line emission: a reused buffer, timestamp prefixes and per-kind counters.

use core::fmt::Write;

use serde::Serialize;

use crate::timefmt::Clock;

/// How many lines of each kind were emitted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LineCounts {
    /// SGLang `Decode batch` lines.
    pub decode: u64,
    /// SGLang `Prefill batch` lines.
    pub prefill: u64,
    /// vLLM periodic stats lines.
    pub interval: u64,
    /// SGLang `KV cache pool is full. Retract requests.` lines and vLLM V0 preemption WARNINGs.
    pub retract: u64,
    /// uvicorn access lines.
    pub access: u64,
    /// Startup, benchmark summary and anything else.
    pub other: u64,
    pub total: u64,
    /// Bytes of log text including one newline per line.
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Decode,
    Prefill,
    Interval,
    Retract,
    Access,
    Other,
}

pub(crate) struct Out<'a> {
    emit: &'a mut dyn FnMut(&str),
    pub(crate) buf: String,
    clock: Clock,
    log_ms: bool,
    pub(crate) lines: LineCounts,
}

impl<'a> Out<'a> {
    pub(crate) fn new(emit: &'a mut dyn FnMut(&str), clock: Clock, log_ms: bool) -> Self {
        Out {
            emit,
            buf: String::with_capacity(512),
            clock,
            log_ms,
            lines: LineCounts::default(),
        }
    }

    /// Clears the buffer and writes `[YYYY-MM-DD HH:MM:SS{.mmm}{rank}] `.
    #[inline]
    pub(crate) fn sgl(&mut self, t: f64, rank: &str) -> &mut String {
        self.buf.clear();
        let (ts, ms) = self.clock.at(t);
        self.buf.push('[');
        self.buf.push_str(ts);
        if self.log_ms {
            let _ = write!(self.buf, ".{ms:03}");
        }
        self.buf.push_str(rank);
        self.buf.push_str("] ");
        &mut self.buf
    }

    /// Clears the buffer and writes `[(proc pid=N) ]LEVEL MM-DD HH:MM:SS [file:line] ` (V1 style)
    /// or `LEVEL MM-DD HH:MM:SS file:line] ` (V0 style, `proc` empty and `bracket` false).
    #[inline]
    pub(crate) fn vllm(
        &mut self,
        t: f64,
        proc_: &str,
        pid: u32,
        level: &str,
        file: &str,
        bracket: bool,
    ) -> &mut String {
        self.buf.clear();
        if !proc_.is_empty() {
            let _ = write!(self.buf, "({proc_} pid={pid}) ");
        }
        let (ts, _) = self.clock.at(t);
        self.buf.push_str(level);
        self.buf.push(' ');
        self.buf.push_str(&ts[5..]);
        if bracket {
            let _ = write!(self.buf, " [{file}] ");
        } else {
            let _ = write!(self.buf, " {file}] ");
        }
        &mut self.buf
    }

    /// Clears the buffer and writes TensorRT-LLM's Python logger prefix,
    /// `[MM/DD/YYYY-HH:MM:SS] [TRT-LLM] [I] `.
    pub(crate) fn trtllm(&mut self, t: f64) -> &mut String {
        self.buf.clear();
        let (ts, _) = self.clock.at(t);
        // `YYYY-MM-DD HH:MM:SS` → `MM/DD/YYYY-HH:MM:SS`.
        let _ = write!(
            self.buf,
            "[{}/{}/{}-{}] [TRT-LLM] [I] ",
            &ts[5..7],
            &ts[8..10],
            &ts[..4],
            &ts[11..]
        );
        &mut self.buf
    }

    /// The clock's `YYYY-MM-DD HH:MM:SS` at `t`.
    pub(crate) fn stamp(&mut self, t: f64) -> String {
        self.clock.at(t).0.to_string()
    }

    /// Clears the buffer and writes `(proc pid=N) ` (or nothing) for timestamp-less lines.
    pub(crate) fn bare(&mut self, proc_: &str, pid: u32) -> &mut String {
        self.buf.clear();
        if !proc_.is_empty() {
            let _ = write!(self.buf, "({proc_} pid={pid}) ");
        }
        &mut self.buf
    }

    #[inline]
    pub(crate) fn flush(&mut self, kind: Kind) {
        let c = &mut self.lines;
        match kind {
            Kind::Decode => c.decode += 1,
            Kind::Prefill => c.prefill += 1,
            Kind::Interval => c.interval += 1,
            Kind::Retract => c.retract += 1,
            Kind::Access => c.access += 1,
            Kind::Other => c.other += 1,
        }
        c.total += 1;
        c.bytes += self.buf.len() as u64 + 1;
        (self.emit)(&self.buf);
    }
}

/// `1234567` → `1,234,567`.
pub(crate) fn commas(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn commas() {
        assert_eq!(super::commas(0), "0");
        assert_eq!(super::commas(999), "999");
        assert_eq!(super::commas(8192), "8,192");
        assert_eq!(super::commas(116_176), "116,176");
        assert_eq!(super::commas(1_234_560), "1,234,560");
    }
}
