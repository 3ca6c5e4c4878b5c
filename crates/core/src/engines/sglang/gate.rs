//! A quick test that a line cannot hold any of a set of phrases.

/// A set of hashed 4-byte windows of the phrases. One pass over a line tells
/// that none of ~30 phrases can be in it, instead of ~30 searches (most lines of
/// a busy log are access lines that hold none). Only every `STRIDE`-th window of
/// a line is looked up: a phrase at any offset covers one of them, at one of its
/// first `STRIDE` offsets, and all of those are in the set.
pub(super) struct Gate {
    /// Per hash slot ([`Gate::slot`]), whether a phrase's window has it. A
    /// flag per byte, not per bit: the lookup is one load, on every 4 bytes of
    /// most lines (measured 10 % faster on access lines in wasm than a bit set).
    set: Box<[bool; Gate::SLOTS]>,
    shortest: usize,
    /// The phrases' first bytes.
    firsts: [bool; 256],
    /// Every phrase starts with a byte of 0x40 or more (a letter): then none
    /// starts among bytes below it, such as a timestamp's.
    firsts_high: bool,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            set: vec![false; Gate::SLOTS]
                .into_boxed_slice()
                .try_into()
                .expect("SLOTS flags"),
            shortest: usize::MAX,
            firsts: [false; 256],
            firsts_high: true,
        }
    }
}

impl Gate {
    /// Bits of a slot: [`Gate::slot`] keeps the hash's top bits, one flag each.
    const SLOT_BITS: u32 = 16;
    const SLOTS: usize = 1 << Gate::SLOT_BITS;
    pub(super) const STRIDE: usize = 4;
    /// The bytes [`Gate::start`] may pass over.
    const HEAD: usize = 20;

    #[inline]
    pub(super) fn slot(w: [u8; 4]) -> usize {
        (u32::from_le_bytes(w).wrapping_mul(0x9e37_79b1) >> (32 - Gate::SLOT_BITS)) as usize
    }

    #[inline]
    pub(super) fn has(&self, k: usize) -> bool {
        self.set[k % Gate::SLOTS]
    }

    pub(super) fn add(&mut self, phrase: &[u8]) {
        assert!(
            phrase.len() >= Gate::STRIDE + 3,
            "gate phrases hold at least {} bytes",
            Gate::STRIDE + 3
        );
        for w in phrase.windows(4).take(Gate::STRIDE) {
            let k = Gate::slot([w[0], w[1], w[2], w[3]]);
            self.set[k] = true;
        }
        self.shortest = self.shortest.min(phrase.len());
        self.firsts[phrase[0] as usize] = true;
        self.firsts_high &= phrase[0] >= 0x40;
    }

    /// Where a phrase may start at the earliest: past a line's first
    /// [`Gate::HEAD`] bytes when no phrase can start among them (most lines
    /// open with a timestamp, `[2026-02-24 10:55:32`: digits and marks below
    /// 0x40 after a first byte that starts no phrase), else 0. A multiple of
    /// [`Gate::STRIDE`], so the windows looked up stay the line's chunks.
    #[inline]
    fn start(&self, line: &[u8]) -> usize {
        const LOW: u64 = 0xc0c0_c0c0_c0c0_c0c0;
        let Some(head) = line.get(..Gate::HEAD) else {
            return 0;
        };
        let word = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().expect("8 bytes"));
        let low = (word(1) | word(9) | word(12)) & LOW == 0;
        if self.firsts_high && low && !self.firsts[head[0] as usize] {
            Gate::HEAD
        } else {
            0
        }
    }

    /// False only when no added phrase occurs in `line`.
    pub(super) fn may_hold(&self, line: &[u8]) -> bool {
        if line.len() < self.shortest {
            return false;
        }
        // The windows at every STRIDE-th offset are the line's 4-byte chunks.
        const _: () = assert!(Gate::STRIDE == 4 && Gate::HEAD % Gate::STRIDE == 0);
        line[self.start(line)..]
            .chunks_exact(4)
            .any(|w| self.has(Gate::slot([w[0], w[1], w[2], w[3]])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gate looking at every line's chunks from its first byte.
    fn from_the_start(g: &Gate, line: &[u8]) -> bool {
        line.len() >= g.shortest
            && line
                .chunks_exact(4)
                .any(|w| g.has(Gate::slot([w[0], w[1], w[2], w[3]])))
    }

    #[test]
    fn passing_over_a_timestamp_turns_away_no_line_that_holds_a_phrase() {
        let g = &super::super::phrases().gate;
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for dir in [
            "examples",
            "tests/fixtures/sglang",
            "tests/fixtures/hostile",
        ] {
            for e in std::fs::read_dir(format!("{root}/{dir}")).expect("dir") {
                let text = std::fs::read(e.expect("entry").path()).expect("read");
                lines.extend(text.split(|&c| c == b'\n').map(<[u8]>::to_vec));
            }
        }
        let real = lines.len();
        // Every phrase at every offset after heads that look like stamps, or nearly.
        let heads: [&[u8]; 6] = [
            b"[2026-02-24 10:55:32 DP0 TP0] ",
            b"[2026-02-24 10:55:32] ",
            b"2026-02-24 10:55:32.123 ",
            b"[2026-02-24T10:55:32] ",
            b"Decode batch 10:55:32 ",
            b"[\xc3\xa9026-02-24 10:55:32] ",
        ];
        for phrase in super::super::gated_phrases() {
            for head in heads {
                for at in 0..=head.len() {
                    let mut l = head[..at].to_vec();
                    l.extend_from_slice(phrase);
                    l.extend_from_slice(&head[at..]);
                    lines.push(l);
                }
            }
        }
        let mut rng = batchlens_sim::rng::Rng::new(9);
        for _ in 0..20_000 {
            let n = rng.below(60);
            lines.push(
                (0..n)
                    .map(|_| b"[0123 :-DPbatchHiCache"[rng.below(22)])
                    .collect(),
            );
        }
        let holds =
            |l: &[u8]| super::super::gated_phrases().any(|p| memchr::memmem::find(l, p).is_some());
        let (mut passed_over, mut with_phrase) = (0, 0);
        for (k, l) in lines.iter().enumerate() {
            let shown = String::from_utf8_lossy(l);
            // Never a line with a phrase turned away; never one let through
            // that the whole look turns away (fewer windows, fewer false hits).
            if holds(l) {
                with_phrase += 1;
                assert!(g.may_hold(l), "{shown}");
            }
            assert!(!g.may_hold(l) || from_the_start(g, l), "{shown}");
            passed_over += usize::from(k < real && g.start(l) > 0);
        }
        assert!(with_phrase > 1000, "{with_phrase}");
        // Most real lines open with a stamp the look passes over.
        assert!(passed_over > real / 2, "{passed_over} of {real}");
        assert_eq!(
            g.start(b"[2026-02-24 10:55:32] INFO:     127.0.0.1:1 - \"GET / HTTP/1.1\" 200 OK"),
            Gate::HEAD
        );
        assert_eq!(g.start(b"[2026-02-24T10:55:32] INFO:"), 0);
    }

    #[test]
    fn a_phrase_that_opens_the_line_is_not_passed_over() {
        // A phrase whose bytes after the first are digits and marks, like a stamp's.
        let mut g = Gate::default();
        g.add(b"X 12:34:56-78");
        assert!(g.may_hold(b"X 12:34:56-78 90:12:34 tail of the line"));
        assert_eq!(g.start(b"[ 12:34:56-78 90:12:34 tail"), Gate::HEAD);
        // A phrase that does not start with a letter: nothing is passed over.
        g.add(b"#12:34:56-78");
        assert_eq!(g.start(b"[ 12:34:56-78 90:12:34 tail"), 0);
    }
}
