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

/// A line's text between two newlines, cut at [`MAX_LINE`] (true when cut).
#[inline]
pub fn physical(line: &[u8]) -> (&[u8], bool) {
    if line.len() > MAX_LINE {
        (trim_cr(&line[..MAX_LINE]), true)
    } else {
        (trim_cr(line), false)
    }
}

/// Calls `f` with each line of a chunk that starts a line (up to its last
/// newline), and whether the line holds an escape byte (ANSI codes), and
/// records the newlines' offsets in `newlines`, for
/// [`LineSplitter::feed_spans`]. Chunks are far below 4 GiB.
pub fn newlines(chunk: &[u8], newlines: &mut Vec<u32>, mut f: impl FnMut(&[u8], bool)) {
    each_line(chunk, |_, end, line, escape| {
        newlines.push(end as u32);
        f(line, escape)
    })
}

/// Calls `f` with each line of a chunk that starts a line (up to its last
/// newline): where it starts and where its newline is, its text as read
/// ([`physical`]) and whether that holds an escape byte (ANSI codes).
#[inline]
pub fn each_line(chunk: &[u8], mut f: impl FnMut(usize, usize, &[u8], bool)) {
    let mut start = 0;
    let mut escape = false;
    // One pass finds both: escapes are rare, and a search per line costs more.
    for i in memchr::memchr2_iter(b'\n', 0x1b, chunk) {
        if chunk[i] == 0x1b {
            escape = true;
            continue;
        }
        let (line, cut) = physical(&chunk[start..i]);
        // An escape past the cut is not in the line as read.
        f(
            start,
            i,
            line,
            escape && (!cut || memchr::memchr(0x1b, line).is_some()),
        );
        escape = false;
        start = i + 1;
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
            let (bytes, overlong) = physical(&chunk[start..i]);
            self.overlong_lines += overlong as u64;
            f(Line {
                no: self.line_no,
                bytes,
            });
            start = i + 1;
        }
        self.push_carry(&chunk[start..]);
    }

    /// Feeds a chunk that starts a line, with the offsets of its newlines
    /// already found (by [`newlines`]): the same lines as [`LineSplitter::feed`],
    /// each given as its number and the span between its newlines (read it with
    /// [`physical`]), so a caller that already knows what a line holds need not
    /// touch its bytes.
    pub fn feed_spans(
        &mut self,
        chunk: &[u8],
        newlines: &[u32],
        f: &mut impl FnMut(u64, std::ops::Range<usize>),
    ) {
        debug_assert!(self.at_line_start());
        let mut start = 0;
        for &i in newlines {
            let i = i as usize;
            self.line_no += 1;
            self.overlong_lines += (i - start > MAX_LINE) as u64;
            f(self.line_no, start..i);
            start = i + 1;
        }
        self.push_carry(&chunk[start..]);
    }

    /// Counts a whole line of `len` bytes (before its newline) that a chunk
    /// starting a line holds, as [`LineSplitter::feed_spans`] does: its number.
    #[inline]
    pub fn count_whole(&mut self, len: usize) -> u64 {
        debug_assert!(self.at_line_start());
        self.line_no += 1;
        self.overlong_lines += (len > MAX_LINE) as u64;
        self.line_no
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
    fn known_newlines_give_the_same_lines() {
        let mut text = b"a\r\n\nb\x1b[0mb\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE + 3));
        // An escape past the cut: not in the line as read.
        text.push(0x1b);
        text.extend_from_slice(b"\r\nlast\ntail without newline");
        let mut offsets = Vec::new();
        let mut seen = Vec::new();
        let mut escapes = 0;
        newlines(&text, &mut offsets, |l, esc| {
            assert_eq!(esc, l.contains(&0x1b));
            escapes += esc as u32;
            seen.push(l.to_vec())
        });
        assert_eq!(escapes, 1);
        let mut known = LineSplitter::default();
        let mut got = Vec::new();
        known.feed_spans(&text, &offsets, &mut |no, span| {
            got.push((no, physical(&text[span]).0.to_vec()))
        });
        known.finish(&mut |l| got.push((l.no, l.bytes.to_vec())));
        assert_eq!(got, split_all(&[&text]));
        assert_eq!(known.overlong_lines, 1);
        assert_eq!(seen.len(), 5);
        assert_eq!(
            seen,
            got[..5].iter().map(|(_, b)| b.clone()).collect::<Vec<_>>()
        );
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
