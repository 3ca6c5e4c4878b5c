//! The text encoding of the input, told by its first bytes: UTF-8 (or ASCII, as
//! every server writes), or UTF-16 with a byte-order mark — what Windows
//! PowerShell's `>` writes when a log is captured there. UTF-16 is decoded to
//! UTF-8 as it streams in (a chunk may end inside a code unit or a surrogate pair).

/// How the input's bytes become the text that is read.
#[derive(Debug, Default)]
pub(crate) enum Decode {
    /// Too few bytes seen to tell (they are held).
    #[default]
    Undecided,
    Held(u8),
    Utf8,
    Utf16 {
        big_endian: bool,
        /// A code unit's first byte at the end of the last chunk.
        odd: Option<u8>,
        /// A high surrogate waiting for its pair.
        high: Option<u16>,
    },
}

const REPLACEMENT: char = '\u{FFFD}';

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
            _ => None,
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
            Decode::Utf16 { .. } => {
                out.clear();
                self.decode_into(chunk, out);
                out
            }
        }
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
            _ => Decode::Utf8,
        };
        out.clear();
        match (self.is_plain(), held) {
            (true, None) => return chunk,
            (true, Some(b)) => {
                out.push(b);
                out.extend_from_slice(chunk);
            }
            // The mark itself is not text.
            (false, _) => self.decode_into(&chunk[2 - held.is_some() as usize..], out),
        }
        out
    }

    /// What is left at the end of the input: a held byte as it is, a cut code
    /// unit or an unpaired surrogate as a replacement character.
    pub fn finish<'a>(&mut self, out: &'a mut Vec<u8>) -> &'a [u8] {
        out.clear();
        match std::mem::replace(self, Decode::Utf8) {
            Decode::Held(b) => out.push(b),
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
}
