//! A quick test that a line holds one of a set of phrases, and which: SGLang's
//! stats headers and rarer phrases on every line, other servers' phrases on a
//! log's first lines ([`crate::engines::others`]).

use crate::text::fields::starts;

/// The phrases' hashed 4-byte windows. One pass over a line tells whether any
/// of ~30 phrases is in it, instead of ~30 searches (most lines of a busy log
/// are access lines that hold none). Only every `STRIDE`-th window of a line
/// is looked up: a phrase at any offset covers one of them, at one of its
/// first `STRIDE` offsets, and all of those are in the set. A window found in
/// the set is checked against the phrases that have it there, so the answer
/// is exact: a long line (a request's prompt) has many windows, and some
/// always hash like a phrase's.
pub(crate) struct Gate {
    /// Per hash slot ([`Gate::slot`]), 1 + the index in `candidates` of the
    /// phrase windows with that hash, or 0. A byte per slot, not a bit: the
    /// lookup is one load, on every 4 bytes of most lines (measured 10 %
    /// faster on access lines in wasm than a bit set).
    set: Box<[u8; Gate::SLOTS]>,
    /// Per slot in use: the phrases (index in `phrases`) and the offset in
    /// each of the window that has the slot's hash.
    candidates: Vec<Vec<(u16, u8)>>,
    phrases: Vec<&'static [u8]>,
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
            set: vec![0; Gate::SLOTS]
                .into_boxed_slice()
                .try_into()
                .expect("SLOTS flags"),
            candidates: Vec::new(),
            phrases: Vec::new(),
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
    pub(crate) const STRIDE: usize = 4;
    /// The shortest phrase the gate takes: any place of it covers one of the
    /// line's 4-byte chunks whole.
    pub(crate) const SHORTEST: usize = Gate::STRIDE + 3;
    /// The bytes [`Gate::start`] may pass over.
    const HEAD: usize = 20;

    #[inline]
    pub(crate) fn slot(w: [u8; 4]) -> usize {
        (u32::from_le_bytes(w).wrapping_mul(0x9e37_79b1) >> (32 - Gate::SLOT_BITS)) as usize
    }

    #[inline]
    fn has(&self, k: usize) -> bool {
        self.set[k % Gate::SLOTS] != 0
    }

    pub(crate) fn add(&mut self, phrase: &'static [u8]) {
        assert!(
            phrase.len() >= Gate::SHORTEST,
            "gate phrases hold at least {} bytes",
            Gate::SHORTEST
        );
        assert!(self.phrases.len() < 64, "a bit per phrase in a u64");
        let id = self.phrases.len() as u16;
        self.phrases.push(phrase);
        for (o, w) in phrase.windows(4).take(Gate::STRIDE).enumerate() {
            let k = Gate::slot([w[0], w[1], w[2], w[3]]);
            if self.set[k] == 0 {
                self.candidates.push(Vec::new());
                self.set[k] = u8::try_from(self.candidates.len()).expect("few slots in use");
            }
            self.candidates[self.set[k] as usize - 1].push((id, o as u8));
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

    /// The added phrases that occur in `line`: bit `i` for the `i`-th added.
    #[inline]
    pub(crate) fn found(&self, line: &[u8]) -> u64 {
        if line.len() < self.shortest {
            return 0;
        }
        // The windows at every STRIDE-th offset are the line's 4-byte chunks.
        const _: () = assert!(Gate::STRIDE == 4 && Gate::HEAD % Gate::STRIDE == 0);
        let from = self.start(line);
        let mut bits = 0;
        for (c, w) in line[from..].chunks_exact(4).enumerate() {
            let k = Gate::slot([w[0], w[1], w[2], w[3]]);
            if self.has(k) {
                bits |= self.found_at(line, from + 4 * c, k);
            }
        }
        bits
    }

    /// The phrases with window slot `k` that lie where that window is the
    /// line's at `at`, as bits.
    #[inline]
    fn found_at(&self, line: &[u8], at: usize, k: usize) -> u64 {
        self.candidates[self.set[k] as usize - 1]
            .iter()
            .filter(|&&(id, o)| {
                at.checked_sub(o as usize)
                    .is_some_and(|p| starts(&line[p..], self.phrases[id as usize]))
            })
            .fold(0, |bits, &(id, _)| bits | 1 << id)
    }
}

#[cfg(test)]
// The tests read the bundled fixture logs from disk.
#[allow(clippy::disallowed_methods)]
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
    fn the_gate_tells_exactly_which_lines_hold_a_phrase() {
        let g = crate::engines::sglang::gate();
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
        for phrase in crate::engines::sglang::gated_phrases() {
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
        let holds = |l: &[u8]| {
            crate::engines::sglang::gated_phrases().any(|p| memchr::memmem::find(l, p).is_some())
        };
        // Long lines of words and digits (a prompt and its token ids), where
        // some windows always hash like a phrase's.
        let phrases: Vec<_> = crate::engines::sglang::gated_phrases().collect();
        for n in 0..300 {
            let mut l = b"[2026-02-24 10:55:32] Received request: ".to_vec();
            while l.len() < 4000 {
                let w = rng.below(1000);
                l.extend_from_slice(format!("{w} the, and to {} ", w * 7919).as_bytes());
            }
            if n % 3 == 0 {
                let p = phrases[n % phrases.len()];
                let at = 20 + rng.below(l.len() - 20);
                l.splice(at..at, p.iter().copied());
            }
            lines.push(l);
        }
        let (mut passed_over, mut with_phrase, mut chance_hits) = (0, 0, 0);
        for (k, l) in lines.iter().enumerate() {
            let shown = String::from_utf8_lossy(l);
            let each = phrases
                .iter()
                .enumerate()
                .filter(|(_, p)| memchr::memmem::find(l, p).is_some())
                .fold(0u64, |bits, (i, _)| bits | 1 << i);
            assert_eq!(g.found(l), each, "{shown}");
            with_phrase += usize::from(holds(l));
            // Lines without a phrase that the windows alone would have let through.
            chance_hits += usize::from(!holds(l) && from_the_start(g, l));
            passed_over += usize::from(k < real && g.start(l) > 0);
        }
        assert!(with_phrase > 1000, "{with_phrase}");
        assert!(chance_hits > 100, "{chance_hits}");
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
        assert_eq!(g.found(b"X 12:34:56-78 90:12:34 tail of the line"), 1);
        assert_eq!(g.start(b"[ 12:34:56-78 90:12:34 tail"), Gate::HEAD);
        // A phrase that does not start with a letter: nothing is passed over.
        g.add(b"#12:34:56-78");
        assert_eq!(g.start(b"[ 12:34:56-78 90:12:34 tail"), 0);
    }
}
