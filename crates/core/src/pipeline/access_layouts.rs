//! The layouts of HTTP access lines the read-ahead has read in full, so that
//! the next access line of the same layout is labelled without asking the
//! parsers again. Access lines are often half of a server's log lines
//! (`[stamp] INFO:     127.0.0.1:47182 - "POST /generate HTTP/1.1" 200 OK`) and
//! each one otherwise pays every parser's phrase searches.
//!
//! Two lines share a layout when they are equally long, equal from the
//! request's opening quote on, and equal before it but where both hold a digit
//! (the stamp, the client's address and port). A layout is learned only from a
//! line that SGLang's parser turned away and vLLM's named an access line
//! ([`learnable`]): the readings that decided so look for phrases without digits
//! (SGLang's gated phrases, vLLM's stats header, both tested), and a template
//! hit needs a stats header, so those readings cannot tell two lines of a layout
//! apart; and the line is an access line by the look at its end that
//! [`crate::engines::common::is_access_line`] takes first, which lies after the
//! quote. Whether it may be a client line looks for `=` and `{`, which are no
//! digits either.

use crate::engines::{Ahead, Engine};

/// Layouts held; a log's access lines have a few (paths, statuses, clients).
const WAYS: usize = 8;
/// Longer lines are not learned: a comparison costs what the searches would.
const MAX_LEN: usize = 512;
/// What the look at an access line's end finds before the version's last digit.
const HTTP_1: &[u8] = b" HTTP/1.";

pub(crate) struct AccessLayouts {
    /// Each way's line length (`usize::MAX`: empty), compared first.
    lens: [usize; WAYS],
    ways: [Way; WAYS],
    /// The way the next layout learned takes.
    next: usize,
    hits: u64,
    learned: u64,
}

#[derive(Default)]
struct Way {
    line: Vec<u8>,
    /// Where the request's opening quote is: digits may differ before it.
    quote: usize,
    /// The bytes before the quote as words (the last overlapping the one
    /// before it), each with what a line of the layout must hold there.
    head: Vec<Word>,
    /// Whether the layout may be a client line.
    client: bool,
}

struct Word {
    held: u64,
    /// All ones in the bytes that must be equal to the held ones.
    fixed: u64,
    /// The high bit of the bytes that must be digits (the held line's digits).
    digits: u64,
}

impl Word {
    /// Where `x`, the line's word here, does not fit (zero: it fits),
    /// without a branch on its bytes (which bytes differ varies line to line,
    /// and a branch on it would be mispredicted).
    #[inline]
    fn misfit(&self, x: u64) -> u64 {
        ((x ^ self.held) & self.fixed) | (self.digits & !digit_bytes(x))
    }
}

impl Default for AccessLayouts {
    fn default() -> Self {
        AccessLayouts {
            lens: [usize::MAX; WAYS],
            ways: Default::default(),
            next: 0,
            hits: 0,
            learned: 0,
        }
    }
}

/// Whether a parser's reading of a line holds for every line of its layout:
/// SGLang's `NotMine` (it found none of its phrases) and vLLM's `AccessLine`
/// (no stats header, then the access look). Other readings are not learned.
pub(crate) fn learnable(engine: Engine, ahead: Ahead) -> bool {
    matches!(
        (engine, ahead),
        (Engine::Sglang, Ahead::NotMine) | (Engine::Vllm, Ahead::AccessLine)
    )
}

impl AccessLayouts {
    /// Whether `line` shares a learned layout, and if so whether it may be a
    /// client line.
    #[inline]
    pub(crate) fn find(&mut self, line: &[u8]) -> Option<bool> {
        let w = self.lens.iter().position(|&n| n == line.len())?;
        self.find_from(w, line)
    }

    #[inline(never)]
    fn find_from(&mut self, first: usize, line: &[u8]) -> Option<bool> {
        for (w, way) in self.ways.iter().enumerate().skip(first) {
            if self.lens[w] != line.len() || line[way.quote..] != way.line[way.quote..] {
                continue;
            }
            // The head's whole words in order, then its last eight bytes.
            let head = &line[..way.quote];
            let Some((last, words)) = way.head.split_last() else {
                continue;
            };
            let misfit = words
                .iter()
                .zip(head.chunks_exact(8))
                .fold(last.misfit(word(&head[head.len() - 8..])), |bad, (w, x)| {
                    bad | w.misfit(word(x))
                });
            if misfit == 0 {
                self.hits += 1;
                return Some(way.client);
            }
        }
        None
    }

    /// Lines found to share a learned layout.
    #[cfg(test)]
    pub(crate) fn hits(&self) -> u64 {
        self.hits
    }

    /// Learns the layout of `line`, an access line every parser asked read as
    /// [`learnable`] says, if it suits one.
    pub(crate) fn learn(&mut self, line: &[u8], client: bool) {
        // A log whose access lines never repeat a layout stops paying for learning.
        if line.len() > MAX_LEN || self.learned > self.hits / 8 + 64 {
            return;
        }
        let (Some(first), Some(last)) = (memchr::memchr(b'"', line), memchr::memrchr(b'"', line))
        else {
            return;
        };
        // The look at the end must find the version after the opening quote.
        let Some(version) = last.checked_sub(HTTP_1.len() + 1) else {
            return;
        };
        // A head shorter than a word is none of a server's access lines.
        if first < 8 || version <= first || &line[version..last - 1] != HTTP_1 {
            return;
        }
        let w = self.next;
        self.next = (w + 1) % WAYS;
        self.lens[w] = line.len();
        let way = &mut self.ways[w];
        way.line.clear();
        way.line.extend_from_slice(line);
        way.quote = first;
        way.client = client;
        way.head.clear();
        let held = |at: usize| {
            let held = word(&line[at..at + 8]);
            let digits = digit_bytes(held);
            Word {
                held,
                fixed: !((digits >> 7) * 0xff),
                digits,
            }
        };
        way.head
            .extend((0..first - 8).step_by(8).chain([first - 8]).map(held));
        self.learned += 1;
    }
}

/// Eight bytes as a word.
#[inline]
fn word(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8 bytes"))
}

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;
const fn bytes(b: u8) -> u64 {
    0x0101_0101_0101_0101 * b as u64
}

/// The high bit of each byte of `w` that is an ASCII digit.
fn digit_bytes(w: u64) -> u64 {
    // A digit is 0x30 with its low nibble below 10: `w ^ 0x30` is below 10
    // exactly for digits. Below 10: high bit clear, and the low seven bits
    // plus 0x76 do not reach 0x80 (no carry leaves the byte).
    let t = w ^ bytes(0x30);
    !(((t & LOW7) + bytes(0x80 - 10)) | t) & HIGH
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &[u8] =
        b"[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - \"POST /generate HTTP/1.1\" 200 OK";

    fn learned(line: &[u8]) -> AccessLayouts {
        let mut a = AccessLayouts::default();
        a.learn(line, false);
        a
    }

    #[test]
    fn the_phrases_that_turn_an_access_line_away_hold_no_digit() {
        // What makes a digit before the request unable to change their verdict.
        let vllm = [
            crate::engines::vllm::STATS_HEADER,
            crate::engines::vllm::LOOK_ALIKE,
        ];
        let phrases: Vec<&[u8]> = crate::engines::sglang::gated_phrases()
            .copied()
            .chain(vllm)
            .collect();
        assert!(phrases.len() > 30, "{}", phrases.len());
        for p in phrases {
            assert!(
                !p.iter().any(u8::is_ascii_digit),
                "{}",
                String::from_utf8_lossy(p)
            );
        }
    }

    #[test]
    fn the_digit_mask_finds_each_digit() {
        for c in 0..=255u8 {
            for at in 0..8 {
                let mut w = [b'a'; 8];
                w[at] = c;
                let w = u64::from_le_bytes(w);
                let bit = 0x80u64 << (at * 8);
                assert_eq!(digit_bytes(w) & bit != 0, c.is_ascii_digit(), "{c} at {at}");
                assert_eq!(digit_bytes(w) & !bit, 0, "{c} at {at}");
            }
        }
    }

    #[test]
    fn lines_of_a_layout_differ_only_in_digits_before_the_request() {
        let mut a = learned(LINE);
        assert_eq!(a.find(LINE), Some(false));
        let other =
            b"[2026-12-31 09:05:07] INFO:     127.9.3.1:50999 - \"POST /generate HTTP/1.1\" 200 OK";
        assert_eq!(a.find(other), Some(false));
        for not in [
            // A status, a path, a version: after the quote, nothing may differ.
            &b"[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - \"POST /generate HTTP/1.1\" 404 OK"[..],
            b"[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - \"POST /generata HTTP/1.1\" 200 OK",
            b"[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - \"POST /generate HTTP/1.0\" 200 OK",
            // Before it, only a digit for a digit.
            b"[2026-05-07 13:40:42] INFO:     127.0.0.1:4718x - \"POST /generate HTTP/1.1\" 200 OK",
            b"[2026-05-07 13:40:42]xINFO:     127.0.0.1:47182 - \"POST /generate HTTP/1.1\" 200 OK",
            b"[2026-05-07 13:40:42] INFO:     127.0.0.1:4718 - \"POST /generate HTTP/1.1\" 200 OK",
            b"[2026-05-07 13:40:42] WARN:     127.0.0.1:47182 - \"POST /generate HTTP/1.1\" 200 OK",
            b"",
        ] {
            assert_eq!(a.find(not), None, "{}", String::from_utf8_lossy(not));
        }
    }

    #[test]
    fn every_byte_before_the_request_is_compared() {
        // Each position of a word and of the tail: a change there is seen.
        let a_line: Vec<u8> = LINE.to_vec();
        let mut a = learned(&a_line);
        let quote = a_line.iter().position(|&c| c == b'"').unwrap();
        for i in 0..a_line.len() {
            let mut b = a_line.clone();
            b[i] = if b[i] == b'#' { b'%' } else { b'#' };
            assert_eq!(a.find(&b), None, "byte {i}");
            if a_line[i].is_ascii_digit() {
                b[i] = if a_line[i] == b'7' { b'3' } else { b'7' };
                let same = i < quote;
                assert_eq!(a.find(&b).is_some(), same, "digit at {i}");
            }
        }
    }

    #[test]
    fn only_access_lines_whose_version_follows_the_request_are_learned() {
        for not in [
            &b"[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - POST /generate HTTP/1.1 200 OK"[..],
            b"[2026-05-07 13:40:42] INFO:  HTTP/1.1\" 200 OK",
            b"\"HTTP/1.1\" 200 OK",
            b"\"",
        ] {
            let mut a = learned(not);
            assert_eq!(a.find(not), None, "{}", String::from_utf8_lossy(not));
        }
        let mut long = LINE.to_vec();
        long.splice(50..50, std::iter::repeat_n(b' ', MAX_LEN));
        assert_eq!(learned(&long).find(&long), None);
    }

    #[test]
    fn the_oldest_layout_gives_way() {
        let mut a = AccessLayouts::default();
        let line = |k: usize| {
            format!(
                "[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - \"GET /p{k} HTTP/1.1\" 200 OK"
            )
            .into_bytes()
        };
        for k in 0..=WAYS {
            a.learn(&line(k), k % 2 == 0);
        }
        assert_eq!(a.find(&line(0)), None);
        for k in 1..=WAYS {
            assert_eq!(a.find(&line(k)), Some(k % 2 == 0), "{k}");
        }
    }

    #[test]
    fn a_log_of_layouts_that_never_repeat_stops_learning() {
        let mut a = AccessLayouts::default();
        let line = |k: usize| {
            format!("[2026-05-07 13:40:42] INFO:     127.0.0.1:47182 - \"GET /r{k:05} HTTP/1.1\" 200 OK")
                .into_bytes()
        };
        for k in 0..1000 {
            a.learn(&line(k), false);
        }
        assert_eq!(a.learned, 65);
        assert_eq!(a.find(&line(999)), None);
    }
}
