//! Bytes to lines: chunk boundaries anywhere, bounded memory, light cleaning.

/// Longest line kept. Longer lines are cut here (their tail is counted, not read):
/// no stats line comes near it, and a 50 MB line without a newline must not grow memory.
pub const MAX_LINE: usize = 64 * 1024;

/// Splits a byte stream fed in arbitrary chunks into lines.
#[derive(Debug, Default)]
pub struct LineSplitter {
    carry: Vec<u8>,
    carry_overlong: bool,
    line_no: u64,
    pub overlong_lines: u64,
}

/// A physical line, without its `\n` (and `\r` before it).
pub struct Line<'a> {
    pub no: u64,
    pub bytes: &'a [u8],
}

fn trim_cr(b: &[u8]) -> &[u8] {
    match b.last() {
        Some(b'\r') => &b[..b.len() - 1],
        _ => b,
    }
}

impl LineSplitter {
    pub fn feed(&mut self, mut chunk: &[u8], f: &mut impl FnMut(Line<'_>)) {
        if !self.carry.is_empty() || self.carry_overlong {
            match memchr::memchr(b'\n', chunk) {
                None => {
                    self.push_carry(chunk);
                    return;
                }
                Some(i) => {
                    self.push_carry(&chunk[..i]);
                    chunk = &chunk[i + 1..];
                    self.emit_carry(f);
                }
            }
        }
        let mut start = 0;
        for i in memchr::memchr_iter(b'\n', chunk) {
            self.line_no += 1;
            let mut line = &chunk[start..i];
            if line.len() > MAX_LINE {
                self.overlong_lines += 1;
                line = &line[..MAX_LINE];
            }
            f(Line {
                no: self.line_no,
                bytes: trim_cr(line),
            });
            start = i + 1;
        }
        self.push_carry(&chunk[start..]);
    }

    fn push_carry(&mut self, b: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.carry.len());
        if b.len() > room {
            self.carry.extend_from_slice(&b[..room]);
            self.carry_overlong = true;
        } else {
            self.carry.extend_from_slice(b);
        }
    }

    fn emit_carry(&mut self, f: &mut impl FnMut(Line<'_>)) {
        self.line_no += 1;
        if self.carry_overlong {
            self.overlong_lines += 1;
        }
        f(Line {
            no: self.line_no,
            bytes: trim_cr(&self.carry),
        });
        self.carry.clear();
        self.carry_overlong = false;
    }

    /// Emits a last line that had no newline.
    pub fn finish(&mut self, f: &mut impl FnMut(Line<'_>)) {
        if !self.carry.is_empty() || self.carry_overlong {
            self.emit_carry(f);
        }
    }

    pub fn lines(&self) -> u64 {
        self.line_no
    }

    /// Whether nothing of a line is held: the next chunk starts a line.
    pub fn at_line_start(&self) -> bool {
        self.carry.is_empty() && !self.carry_overlong
    }
}

/// Removes ANSI escape sequences (CSI `ESC [ … final`, and lone `ESC x`) into `out`.
pub fn strip_ansi(b: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < b.len() {
        if b[i] == 0x1b {
            i += 1;
            if i < b.len() && b[i] == b'[' {
                i += 1;
                while i < b.len() && !(0x40..=0x7e).contains(&b[i]) {
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_all(chunks: &[&[u8]]) -> Vec<(u64, Vec<u8>)> {
        let mut s = LineSplitter::default();
        let mut out = Vec::new();
        let mut f = |l: Line<'_>| out.push((l.no, l.bytes.to_vec()));
        for c in chunks {
            s.feed(c, &mut f);
        }
        s.finish(&mut f);
        out
    }

    #[test]
    fn chunks_cut_anywhere_give_the_same_lines() {
        let text = b"a\r\nbb\n\nccc";
        let whole = split_all(&[text]);
        for cut in 0..text.len() {
            assert_eq!(split_all(&[&text[..cut], &text[cut..]]), whole, "cut {cut}");
        }
        assert_eq!(whole.len(), 4);
        assert_eq!(whole[0].1, b"a");
        assert_eq!(whole[3].1, b"ccc");
    }

    #[test]
    fn overlong_lines_are_cut_and_counted() {
        let big = vec![b'x'; MAX_LINE * 3];
        let mut s = LineSplitter::default();
        let mut lens = Vec::new();
        for c in big.chunks(1000) {
            s.feed(c, &mut |l| lens.push(l.bytes.len()));
        }
        s.feed(b"\nok\n", &mut |l| lens.push(l.bytes.len()));
        assert_eq!(lens, vec![MAX_LINE, 2]);
        assert_eq!(s.overlong_lines, 1);
    }

    #[test]
    fn ansi_codes_are_removed() {
        let mut out = Vec::new();
        strip_ansi(b"\x1b[1;36m(APIServer pid=1)\x1b[0;0m INFO", &mut out);
        assert_eq!(out, b"(APIServer pid=1) INFO");
    }
}
