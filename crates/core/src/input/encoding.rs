//! The text encoding of the input, told by its first bytes: UTF-8 (or ASCII, as
//! every server writes), or UTF-16 with a byte-order mark — what Windows
//! PowerShell's `>` writes when a log is captured there. UTF-16 is decoded to
//! UTF-8 as it streams in (a chunk may end inside a code unit or a surrogate pair).
//!
//! A UTF-8 input whose first line ends in a lone `\r` (classic Mac line ends,
//! `tr '\n' '\r'`) has its lone `\r`s read as line ends. The next file of a log
//! split in several (`split -b`) continues a UTF-16 one when it starts without
//! a mark but with a UTF-16 code unit of the same byte order.

/// How the input's bytes become the text that is read.
#[derive(Debug, Default)]
pub(crate) enum Decode {
    /// Too few bytes seen to tell (they are held).
    #[default]
    Undecided,
    Held(u8),
    /// UTF-8 whose first line end is still to come: the bytes pass as they are.
    /// `cr` holds a `\r` that ended the last chunk (a line end, or half a `\r\n`).
    Utf8Pending {
        cr: bool,
    },
    Utf8,
    /// UTF-8 with lone `\r` line ends, read as `\n`; `cr` as in `Utf8Pending`.
    CrLines {
        cr: bool,
    },
    /// The start of the next file after a UTF-16 one: the code unit cut at the
    /// last file's end, if any, and the next file's first bytes, held until
    /// [`CONTINUE_HEAD`] tell whether it goes on in UTF-16.
    Continue {
        big_endian: bool,
        odd: Option<u8>,
        high: Option<u16>,
        head: Vec<u8>,
    },
    Utf16 {
        big_endian: bool,
        /// A code unit's first byte at the end of the last chunk.
        odd: Option<u8>,
        /// A high surrogate waiting for its pair.
        high: Option<u16>,
    },
}

const REPLACEMENT: char = '\u{FFFD}';

/// Bytes of a file after a UTF-16 one that tell whether it goes on in UTF-16:
/// a log's text holds ASCII, whose code units have a zero byte, which UTF-8
/// text never holds.
const CONTINUE_HEAD: usize = 64;

/// The kind of `chunk`'s first line end: `Some(false)` for `\n` or `\r\n`,
/// `Some(true)` for a lone `\r`, `None` if it has none (or ends in a `\r`).
fn first_line_end(chunk: &[u8]) -> Option<bool> {
    let i = memchr::memchr2(b'\n', b'\r', chunk)?;
    match (chunk[i], chunk.get(i + 1)) {
        (b'\n', _) | (_, Some(b'\n')) => Some(false),
        (_, Some(_)) => Some(true),
        (_, None) => None,
    }
}

impl Decode {
    /// The name of a decoded encoding, for the report (`None` for UTF-8).
    pub fn name(&self) -> Option<&'static str> {
        match self {
            Decode::Utf16 {
                big_endian: false, ..
            } => Some("utf-16le"),
            Decode::Utf16 {
                big_endian: true, ..
            } => Some("utf-16be"),
            Decode::Continue {
                big_endian: false, ..
            } => Some("utf-16le"),
            Decode::Continue {
                big_endian: true, ..
            } => Some("utf-16be"),
            _ => None,
        }
    }

    /// The decoder for the next file of the same log: a UTF-16 one hands on
    /// its byte order and what is cut at its end ([`Decode::Continue`]), so a
    /// file split anywhere reads as `cat` would join it; any other starts afresh.
    pub fn next_input(&mut self) -> Decode {
        match self {
            Decode::Utf16 {
                big_endian,
                odd,
                high,
            } => Decode::Continue {
                big_endian: *big_endian,
                odd: odd.take(),
                high: high.take(),
                head: Vec::new(),
            },
            _ => Decode::default(),
        }
    }

    /// Whether the bytes are read as they are (known to be UTF-8).
    pub fn is_plain(&self) -> bool {
        matches!(self, Decode::Utf8)
    }

    /// [`Decode::is_plain`], settling on UTF-8 first when `chunk` opens the
    /// input and cannot start a byte-order mark.
    pub fn plain_for(&mut self, chunk: &[u8]) -> bool {
        if matches!(self, Decode::Undecided)
            && chunk.len() >= 2
            && !matches!(chunk[..2], [0xff, 0xfe] | [0xfe, 0xff])
            && first_line_end(chunk) == Some(false)
        {
            *self = Decode::Utf8;
        }
        self.is_plain()
    }

    /// The text of `chunk`: `chunk` itself when it is UTF-8, else its decoding
    /// (into `out`, cleared first). Held bytes come out with the next chunk.
    pub fn text<'a>(&mut self, chunk: &'a [u8], out: &'a mut Vec<u8>) -> &'a [u8] {
        match self {
            Decode::Undecided | Decode::Held(_) => self.decide(chunk, out),
            Decode::Utf8 => chunk,
            Decode::Utf8Pending { .. } | Decode::CrLines { .. } => {
                out.clear();
                self.line_ends_into(chunk, out);
                out
            }
            Decode::Continue { .. } => self.continue_utf16(chunk, out),
            Decode::Utf16 { .. } => {
                out.clear();
                self.decode_into(chunk, out);
                out
            }
        }
    }

    /// UTF-8 text while its line ends are told or once they are lone `\r`s.
    fn line_ends_into(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let (Decode::Utf8Pending { cr } | Decode::CrLines { cr }) = self else {
            unreachable!("only UTF-8 line ends are read here")
        };
        let mut from = 0;
        if std::mem::take(cr) {
            match chunk.first() {
                None => {
                    *cr = true;
                    return;
                }
                Some(b'\n') => {
                    out.push(b'\r');
                    if matches!(self, Decode::Utf8Pending { .. }) {
                        *self = Decode::Utf8;
                        out.extend_from_slice(chunk);
                        return;
                    }
                }
                Some(_) => {
                    out.push(b'\n');
                    *self = Decode::CrLines { cr: false };
                }
            }
        }
        if matches!(self, Decode::Utf8Pending { .. }) {
            match memchr::memchr2(b'\n', b'\r', chunk) {
                None => {
                    out.extend_from_slice(chunk);
                    return;
                }
                Some(i) if chunk[i] == b'\n' || chunk.get(i + 1) == Some(&b'\n') => {
                    *self = Decode::Utf8;
                    out.extend_from_slice(chunk);
                    return;
                }
                Some(i) => {
                    // A lone `\r` ends the first line (or the chunk ends after it).
                    out.extend_from_slice(&chunk[..i]);
                    if i + 1 == chunk.len() {
                        *self = Decode::Utf8Pending { cr: true };
                        return;
                    }
                    out.push(b'\n');
                    *self = Decode::CrLines { cr: false };
                    from = i + 1;
                }
            }
        }
        let rest = &chunk[from..];
        let mut at = 0;
        for i in memchr::memchr_iter(b'\r', rest) {
            out.extend_from_slice(&rest[at..i]);
            at = i + 1;
            match rest.get(i + 1) {
                Some(b'\n') => out.push(b'\r'),
                Some(_) => out.push(b'\n'),
                None => *self = Decode::CrLines { cr: true },
            }
        }
        out.extend_from_slice(&rest[at..]);
    }

    /// The first bytes of a file after a UTF-16 one, held until there are
    /// enough to tell how to read them ([`Decode::settle`]).
    fn continue_utf16<'a>(&mut self, chunk: &'a [u8], out: &'a mut Vec<u8>) -> &'a [u8] {
        let Decode::Continue { head, .. } = self else {
            unreachable!("only a continuation is decided here")
        };
        head.extend_from_slice(chunk);
        out.clear();
        if head.len() >= CONTINUE_HEAD {
            self.settle(out);
        }
        out
    }

    /// Decides a continuation on its held bytes and appends their text: UTF-16
    /// on when, without a mark of their own, they hold a code unit of plain
    /// ASCII in the same byte order; else a file of its own, and what was cut
    /// at the last file's end is lost (a replacement character).
    fn settle(&mut self, out: &mut Vec<u8>) {
        let Decode::Continue {
            big_endian,
            odd,
            high,
            head,
        } = std::mem::take(self)
        else {
            unreachable!("only a continuation is settled")
        };
        let stream: Vec<u8> = odd.into_iter().chain(head.iter().copied()).collect();
        let mark =
            odd.is_none() && head.len() >= 2 && matches!(head[..2], [0xff, 0xfe] | [0xfe, 0xff]);
        let ascii = stream[..stream.len().min(CONTINUE_HEAD)]
            .chunks_exact(2)
            .any(|p| {
                let (lo, hi) = if big_endian {
                    (p[1], p[0])
                } else {
                    (p[0], p[1])
                };
                hi == 0 && (0x01..0x80).contains(&lo)
            });
        if !mark && ascii {
            *self = Decode::Utf16 {
                big_endian,
                odd,
                high,
            };
            self.decode_into(&head, out);
            return;
        }
        let mut buf = [0u8; 4];
        for _ in 0..(high.is_some() as usize + odd.is_some() as usize) {
            out.extend_from_slice(REPLACEMENT.encode_utf8(&mut buf).as_bytes());
        }
        let mut rest = Vec::new();
        let text = self.text(&head, &mut rest);
        out.extend_from_slice(text);
    }

    /// The input's first bytes: a byte-order mark means UTF-16, anything else UTF-8.
    fn decide<'a>(&mut self, chunk: &'a [u8], out: &'a mut Vec<u8>) -> &'a [u8] {
        let held = match *self {
            Decode::Held(b) => Some(b),
            _ => None,
        };
        let mut head = held.into_iter().chain(chunk.iter().copied());
        let utf16 = |big_endian| Decode::Utf16 {
            big_endian,
            odd: None,
            high: None,
        };
        *self = match (head.next(), head.next()) {
            (None, _) => return chunk,
            (Some(a @ (0xff | 0xfe)), None) => {
                // Only a mark's first byte is worth waiting on.
                *self = Decode::Held(a);
                out.clear();
                return out;
            }
            (Some(0xff), Some(0xfe)) => utf16(false),
            (Some(0xfe), Some(0xff)) => utf16(true),
            _ => Decode::Utf8Pending { cr: false },
        };
        out.clear();
        if matches!(self, Decode::Utf8Pending { .. }) {
            if let Some(b) = held {
                out.push(b);
            }
            self.line_ends_into(chunk, out);
            return out;
        }
        // The mark itself is not text.
        self.decode_into(&chunk[2 - held.is_some() as usize..], out);
        out
    }

    /// What is left at the end of the input: a held byte as it is, a cut code
    /// unit or an unpaired surrogate as a replacement character.
    pub fn finish<'a>(&mut self, out: &'a mut Vec<u8>) -> &'a [u8] {
        out.clear();
        match std::mem::replace(self, Decode::Utf8) {
            Decode::Held(b) => out.push(b),
            // A `\r` at the very end: the line end it is either way.
            Decode::Utf8Pending { cr } | Decode::CrLines { cr } => {
                if cr {
                    out.push(b'\r');
                }
            }
            c @ Decode::Continue { .. } => {
                // A next file shorter than the bytes that tell: told by what it holds.
                *self = c;
                self.settle(out);
                let mut tail = Vec::new();
                let end = self.finish(&mut tail).to_vec();
                out.extend_from_slice(&end);
            }
            Decode::Utf16 {
                big_endian,
                odd,
                high,
            } => {
                let mut buf = [0u8; 4];
                let bad = REPLACEMENT.encode_utf8(&mut buf).as_bytes();
                for _ in 0..(high.is_some() as usize + odd.is_some() as usize) {
                    out.extend_from_slice(bad);
                }
                // The encoding stays known for the report.
                *self = Decode::Utf16 {
                    big_endian,
                    odd: None,
                    high: None,
                };
            }
            other => *self = other,
        }
        out
    }

    fn decode_into(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
        let Decode::Utf16 {
            big_endian,
            odd,
            high,
        } = self
        else {
            unreachable!("only UTF-16 is decoded")
        };
        let unit = |a: u8, b: u8| {
            if *big_endian {
                u16::from_be_bytes([a, b])
            } else {
                u16::from_le_bytes([a, b])
            }
        };
        let mut units = Vec::with_capacity(bytes.len() / 2 + 2);
        units.extend(high.take());
        if let Some(a) = odd.take() {
            match bytes.split_first() {
                Some((&b, rest)) => {
                    units.push(unit(a, b));
                    bytes = rest;
                }
                None => *odd = Some(a),
            }
        }
        let pairs = bytes.chunks_exact(2);
        if let [last] = pairs.remainder() {
            *odd = Some(*last);
        }
        units.extend(pairs.map(|p| unit(p[0], p[1])));
        // A high surrogate at the end may pair with the next chunk's first unit.
        let carry = match units.last() {
            Some(&u) if (0xd800..0xdc00).contains(&u) => units.pop(),
            _ => None,
        };
        let mut buf = [0u8; 4];
        for c in char::decode_utf16(units) {
            let c = c.unwrap_or(REPLACEMENT);
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        *high = carry;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
        let mut b = if big_endian {
            vec![0xfe, 0xff]
        } else {
            vec![0xff, 0xfe]
        };
        for u in text.encode_utf16() {
            b.extend(if big_endian {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            });
        }
        b
    }

    fn decode_in(bytes: &[u8], size: usize) -> (Vec<u8>, Option<&'static str>) {
        let mut d = Decode::default();
        let mut text = Vec::new();
        let mut out = Vec::new();
        for c in bytes.chunks(size) {
            text.extend_from_slice(d.text(c, &mut out));
        }
        text.extend_from_slice(d.finish(&mut out));
        (text, d.name())
    }

    #[test]
    fn utf16_reads_as_its_utf8_text_in_any_slicing() {
        // Non-ASCII in the BMP and a surrogate pair, so slices cut inside both.
        let text = "[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56 — ok 🚀\r\nnext\n";
        for big_endian in [false, true] {
            let bytes = utf16(text, big_endian);
            for size in [1, 2, 3, 5, 7, bytes.len()] {
                let (got, name) = decode_in(&bytes, size);
                assert_eq!(String::from_utf8(got).unwrap(), text, "slices of {size}");
                assert_eq!(name, Some(["utf-16le", "utf-16be"][big_endian as usize]));
            }
        }
    }

    #[test]
    fn utf8_passes_through_untouched_even_when_it_starts_like_a_mark() {
        for bytes in [
            &b"[2026-02-24] Decode batch\n"[..],
            b"\xef\xbb\xbfBOM then text\n",
            b"\xff",
            b"\xfe",
            b"\xff\x00x",
            b"",
            b"x",
        ] {
            for size in [1, 2, 3, 100] {
                let (got, name) = decode_in(bytes, size);
                assert_eq!(got, bytes, "{bytes:?} in slices of {size}");
                assert_eq!(name, None);
            }
        }
    }

    #[test]
    fn unpaired_surrogates_and_a_cut_unit_become_replacement_characters() {
        let mut bytes = vec![0xff, 0xfe];
        for u in [0x41u16, 0xdc00, 0x42, 0xd800, 0x43, 0xd83d] {
            bytes.extend(u.to_le_bytes());
        }
        bytes.push(b'x');
        for size in [1, 3, 100] {
            let (got, _) = decode_in(&bytes, size);
            assert_eq!(
                String::from_utf8(got).unwrap(),
                "A\u{FFFD}B\u{FFFD}C\u{FFFD}\u{FFFD}",
                "slices of {size}"
            );
        }
    }

    #[test]
    fn lone_carriage_returns_end_lines_when_the_first_line_ends_in_one() {
        let lf = "[2026-02-24 10:00:00] a\n[2026-02-24 10:00:01] b\r\nc\n\nd";
        let cr = lf
            .replace("\r\n", "\u{1}")
            .replace('\n', "\r")
            .replace('\u{1}', "\r\n");
        for size in [1, 2, 3, 5, 7, 100] {
            let (got, name) = decode_in(cr.as_bytes(), size);
            assert_eq!(String::from_utf8(got).unwrap(), lf, "slices of {size}");
            assert_eq!(name, None);
        }
        // A log of `\n` lines keeps a `\r` inside one (a progress bar redrawn).
        let bar = b"start\nLoading 10%\rLoading 20%\n\r\rend\r";
        for size in [1, 2, 3, 100] {
            assert_eq!(decode_in(bar, size).0, bar, "slices of {size}");
        }
        // Ending in a lone `\r` before any other line end.
        assert_eq!(decode_in(b"one\r", 2).0, b"one\r");
        assert_eq!(decode_in(b"one\rtwo", 4).0, b"one\ntwo");
    }

    /// Decodes `parts` as the files of one log.
    fn decode_files(parts: &[&[u8]], size: usize) -> (Vec<u8>, Option<&'static str>) {
        let mut d = Decode::default();
        let mut text = Vec::new();
        let mut out = Vec::new();
        let mut name = None;
        for (k, part) in parts.iter().enumerate() {
            if k > 0 {
                let next = d.next_input();
                text.extend_from_slice(d.finish(&mut out));
                name = name.or(d.name());
                d = next;
            }
            for c in part.chunks(size) {
                text.extend_from_slice(d.text(c, &mut out));
            }
        }
        text.extend_from_slice(d.finish(&mut out));
        (text, name.or(d.name()))
    }

    #[test]
    fn a_utf16_log_split_anywhere_reads_as_one() {
        let text = "[2026-02-24 10:55:32 TP0] Decode batch — ok 🚀\r\nnext line\n";
        for big_endian in [false, true] {
            let bytes = utf16(text, big_endian);
            for cut in 2..bytes.len() {
                for size in [1, 3, 64] {
                    let (got, name) = decode_files(&[&bytes[..cut], &bytes[cut..]], size);
                    assert_eq!(
                        String::from_utf8_lossy(&got),
                        text,
                        "cut at {cut}, slices of {size}"
                    );
                    assert_eq!(name, Some(["utf-16le", "utf-16be"][big_endian as usize]));
                }
            }
        }
        // A UTF-8 file after a UTF-16 one is read as UTF-8.
        let first = utf16("a\n", false);
        let (got, _) = decode_files(&[&first, b"plain utf-8\n"], 3);
        assert_eq!(String::from_utf8(got).unwrap(), "a\nplain utf-8\n");
    }
}
