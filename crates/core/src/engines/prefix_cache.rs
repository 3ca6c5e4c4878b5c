//! Memoised reading of short texts that repeat from line to line, such as the
//! rank tokens of a prefix (` DP0 TP0 EP0`).
//!
//! A busy log prints millions of lines but only a handful of distinct rank
//! texts; reading each once instead of once per line (tokenising, formatting
//! the `DP3` label, allocating it) takes that work off the hot path. The same
//! holds, one at a time, for the timestamp of a second. The reader is a pure
//! function of the bytes, so a hit returns exactly what a fresh read would.

/// Distinct texts remembered by default: a few times the usual rank count.
const SLOTS: usize = 16;
/// Longer texts are read every time (they are rare).
const MAX_KEY: usize = 128;

pub struct PrefixCache<T> {
    keys: Vec<Vec<u8>>,
    values: Vec<T>,
    slots: usize,
    next: usize,
    last_hit: usize,
}

impl<T> Default for PrefixCache<T> {
    fn default() -> Self {
        PrefixCache::with_slots(SLOTS)
    }
}

impl<T> PrefixCache<T> {
    /// A cache of `slots` texts (at least one). One suits a text that changes
    /// for good, like a timestamp: a miss then costs one comparison, not a search.
    pub fn with_slots(slots: usize) -> Self {
        PrefixCache {
            keys: Vec::new(),
            values: Vec::new(),
            slots: slots.max(1),
            next: 0,
            last_hit: 0,
        }
    }
}

impl<T: Clone> PrefixCache<T> {
    /// `read(key)`, remembered.
    pub fn get(&mut self, key: &[u8], read: impl FnOnce(&[u8]) -> T) -> T {
        if key.len() > MAX_KEY {
            return read(key);
        }
        let n = self.keys.len();
        // Where the last hit was first, then the slots after it: consecutive
        // lines share prefixes (and ranks take turns).
        let order = (self.last_hit..n).chain(0..self.last_hit.min(n));
        for i in order {
            if crate::text::fields::same(&self.keys[i], key) {
                self.last_hit = i;
                return self.values[i].clone();
            }
        }
        let v = read(key);
        if n < self.slots {
            self.keys.push(key.to_vec());
            self.values.push(v.clone());
            self.last_hit = n;
        } else {
            let i = self.next;
            self.next = (self.next + 1) % self.slots;
            self.keys[i].clear();
            self.keys[i].extend_from_slice(key);
            self.values[i] = v.clone();
            self.last_hit = i;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_return_what_a_read_gives_and_misses_read() {
        let mut c = PrefixCache::default();
        let mut reads = 0;
        for round in 0..3 {
            for i in 0..(SLOTS + 4) {
                let key = vec![b'a'; i + 1];
                let got = c.get(&key, |k| {
                    reads += 1;
                    k.len()
                });
                assert_eq!(got, i + 1, "round {round}");
            }
        }
        // More distinct keys than slots: later rounds read again, and stay right.
        assert!(reads > SLOTS + 4);
        let long = vec![b'x'; MAX_KEY + 1];
        assert_eq!(c.get(&long, |k| k.len()), MAX_KEY + 1);
    }

    #[test]
    fn a_repeated_prefix_is_read_once() {
        let mut c = PrefixCache::default();
        let mut reads = 0;
        for _ in 0..100 {
            for key in [&b"[a DP0] "[..], b"[a DP1] "] {
                c.get(key, |k| {
                    reads += 1;
                    k.to_vec()
                });
            }
        }
        assert_eq!(reads, 2);
    }
}
