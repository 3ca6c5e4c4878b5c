//! A quick test that a line cannot hold any of a set of phrases.

/// A set of hashed 4-byte windows of the phrases. One pass over a line tells
/// that none of ~30 phrases can be in it, instead of ~30 searches (most lines of
/// a busy log are access lines that hold none). Only every `STRIDE`-th window of
/// a line is looked up: a phrase at any offset covers one of them, at one of its
/// first `STRIDE` offsets, and all of those are in the set.
pub(super) struct Gate {
    bits: Box<[u64; Gate::WORDS]>,
    shortest: usize,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            bits: Box::new([0; Gate::WORDS]),
            shortest: usize::MAX,
        }
    }
}

impl Gate {
    const WORDS: usize = 1 << 10;
    pub(super) const STRIDE: usize = 4;

    #[inline]
    pub(super) fn slot(w: [u8; 4]) -> usize {
        (u32::from_le_bytes(w).wrapping_mul(0x9e37_79b1) >> 16) as usize
    }

    #[inline]
    pub(super) fn has(&self, k: usize) -> bool {
        self.bits[(k >> 6) % Gate::WORDS] & (1 << (k & 63)) != 0
    }

    pub(super) fn add(&mut self, phrase: &[u8]) {
        assert!(
            phrase.len() >= Gate::STRIDE + 3,
            "gate phrases hold at least {} bytes",
            Gate::STRIDE + 3
        );
        for w in phrase.windows(4).take(Gate::STRIDE) {
            let k = Gate::slot([w[0], w[1], w[2], w[3]]);
            self.bits[k >> 6] |= 1 << (k & 63);
        }
        self.shortest = self.shortest.min(phrase.len());
    }

    /// False only when no added phrase occurs in `line`.
    pub(super) fn may_hold(&self, line: &[u8]) -> bool {
        if line.len() < self.shortest {
            return false;
        }
        // The windows at every STRIDE-th offset are the line's 4-byte chunks.
        const _: () = assert!(Gate::STRIDE == 4);
        line.chunks_exact(4)
            .any(|w| self.has(Gate::slot([w[0], w[1], w[2], w[3]])))
    }
}
