//! SGLang stats fields: which sample field each key sets and how its value reads,
//! shared by the general reader and the one-pass reader of the common layout.

use crate::model::Sample;
use crate::text::fields::{boolean, decimal, float, fraction_or_percent, starts, uint, uint32};

/// The sample field a key sets.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Slot {
    Running,
    Queued,
    KvTokens,
    KvUsage,
    Gen,
    Input,
    NewSeqs,
    PrefillTokens,
    Cached,
    PrefixHit,
    Pending,
    AcceptLen,
    /// `--enable-mfu-metrics`' estimates per GPU: decode read GB/s, decode TFLOPS, prefill TFLOPS.
    EstReadBw,
    EstDecodeTflops,
    EstPrefillTflops,
    Graph,
    Preempted,
    /// A field we do not use: fine as long as it reads as a value.
    Unused,
}

fn slot(key: &[u8]) -> Slot {
    match key {
        b"#running-req" | b"#running_req" => Slot::Running,
        b"#queue-req" | b"#remaining_req" => Slot::Queued,
        b"#token" | b"#full token" => Slot::KvTokens,
        b"token usage" | b"full token usage" => Slot::KvUsage,
        b"gen throughput (token/s)" => Slot::Gen,
        b"input throughput (token/s)" => Slot::Input,
        b"#new-seq" | b"#seq" => Slot::NewSeqs,
        b"#new-token" | b"#new_token" => Slot::PrefillTokens,
        b"#cached-token" | b"#cached_token" => Slot::Cached,
        b"cache hit rate" | b"tree_cache_hit_rate" => Slot::PrefixHit,
        b"#pending-token" => Slot::Pending,
        b"accept len" => Slot::AcceptLen,
        b"est. read BW (GB/s per GPU)" => Slot::EstReadBw,
        b"est. decode TFLOPS/s (per GPU)" => Slot::EstDecodeTflops,
        b"est. prefill TFLOPS/s (per GPU)" => Slot::EstPrefillTflops,
        b"cuda graph" | b"cpu graph" | b"npu graph" | b"musa graph" => Slot::Graph,
        b"#retracted-req" => Slot::Preempted,
        _ => Slot::Unused,
    }
}

/// A value as read from the text.
#[derive(Clone, Copy)]
pub(super) enum Value {
    Int(u64),
    Float(f64),
    Bool(bool),
}

/// How a slot's value reads and which field type takes it: decided once per
/// key (the template reader decides it once per layout, not per value).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    /// A whole number in a `u32` field.
    Count,
    /// A whole number in a `u64` field.
    Tokens,
    /// A decimal.
    Rate,
    /// A decimal, or a percentage read as a fraction.
    Share,
    /// `True`/`False`.
    Flag,
    /// Any value, stored nowhere.
    Unused,
}

impl Slot {
    #[inline]
    pub(super) fn kind(self) -> Kind {
        match self {
            Slot::Running | Slot::Queued | Slot::NewSeqs | Slot::Preempted => Kind::Count,
            Slot::KvTokens | Slot::PrefillTokens | Slot::Cached | Slot::Pending => Kind::Tokens,
            Slot::Gen
            | Slot::Input
            | Slot::AcceptLen
            | Slot::EstReadBw
            | Slot::EstDecodeTflops
            | Slot::EstPrefillTflops => Kind::Rate,
            Slot::KvUsage | Slot::PrefixHit => Kind::Share,
            Slot::Graph => Kind::Flag,
            Slot::Unused => Kind::Unused,
        }
    }
}

impl Slot {
    /// Which of `Sample::engine_est` an estimate slot fills.
    #[inline]
    pub(super) fn estimate(self) -> Option<usize> {
        match self {
            Slot::EstReadBw => Some(0),
            Slot::EstDecodeTflops => Some(1),
            Slot::EstPrefillTflops => Some(2),
            _ => None,
        }
    }
}

/// The `u32` field of a [`Kind::Count`] slot.
#[inline]
pub(super) fn count_field(s: &mut Sample, slot: Slot) -> &mut Option<u32> {
    match slot {
        Slot::Running => &mut s.running,
        Slot::Queued => &mut s.queued,
        Slot::NewSeqs => &mut s.new_seqs,
        _ => &mut s.preempted,
    }
}

/// The `u64` field of a [`Kind::Tokens`] slot.
#[inline]
pub(super) fn tokens_field(s: &mut Sample, slot: Slot) -> &mut Option<u64> {
    match slot {
        Slot::KvTokens => &mut s.kv_tokens,
        Slot::PrefillTokens => &mut s.prefill_tokens,
        Slot::Cached => &mut s.cached_tokens,
        _ => &mut s.pending_tokens,
    }
}

/// The `f64` field of a [`Kind::Rate`] or [`Kind::Share`] slot.
#[inline]
pub(super) fn decimal_field(s: &mut Sample, slot: Slot) -> &mut Option<f64> {
    match slot {
        Slot::KvUsage => &mut s.kv_usage,
        Slot::PrefixHit => &mut s.prefix_hit,
        Slot::Gen => &mut s.gen_tok_s,
        Slot::Input => &mut s.input_tok_s,
        _ => &mut s.accept_len,
    }
}

/// Stores a value into the slot's field, if it has the slot's type.
#[inline]
pub(super) fn store(s: &mut Sample, slot: Slot, v: Value) -> bool {
    match (slot.kind(), v) {
        (Kind::Count, Value::Int(n)) => {
            let Ok(n) = u32::try_from(n) else {
                return false;
            };
            *count_field(s, slot) = Some(n);
        }
        (Kind::Tokens, Value::Int(n)) => *tokens_field(s, slot) = Some(n),
        (Kind::Rate, Value::Float(f)) if slot.estimate().is_some() => {
            s.engine_est[slot.estimate().unwrap_or(0)] = f as f32
        }
        (Kind::Rate | Kind::Share, Value::Float(f)) => *decimal_field(s, slot) = Some(f),
        (Kind::Flag, Value::Bool(b)) => s.graph = Some(b),
        _ => return false,
    }
    true
}

/// Sets the sample field a key names. Returns false when the value cannot be read.
pub(super) fn apply_field(s: &mut Sample, key: &[u8], val: &[u8]) -> bool {
    // Hybrid 0.4.9 blocks print `full=N` / `full=F`.
    let val = val.strip_prefix(b"full=").unwrap_or(val);
    let slot = slot(key);
    let v = match slot {
        Slot::Running | Slot::Queued | Slot::NewSeqs | Slot::Preempted => {
            uint32(val).map(|n| Value::Int(n as u64))
        }
        Slot::KvTokens | Slot::PrefillTokens | Slot::Cached | Slot::Pending => {
            uint(val).map(Value::Int)
        }
        Slot::KvUsage | Slot::PrefixHit => fraction_or_percent(val).map(Value::Float),
        Slot::Gen
        | Slot::Input
        | Slot::AcceptLen
        | Slot::EstReadBw
        | Slot::EstDecodeTflops
        | Slot::EstPrefillTflops => float(val).map(Value::Float),
        Slot::Graph => boolean(val).map(Value::Bool),
        Slot::Unused => return is_value(val),
    };
    v.is_some_and(|v| store(s, slot, v))
}

fn is_value(v: &[u8]) -> bool {
    // `fwd occupancy: nan%`: SGLang's device timer before it timed a forward.
    let nan = v
        .strip_suffix(b"%")
        .unwrap_or(v)
        .eq_ignore_ascii_case(b"nan");
    !v.is_empty()
        && (nan || fraction_or_percent(v).is_some() || boolean(v).is_some() || v.contains(&b'='))
}

/// The common layout read in one pass: `key: value` pairs joined by `, `, keys
/// free of `,` `:` and padding, values plain (`123`, `0.5`, `12.5%`, `True`).
/// On that layout the general split finds exactly these pairs and reads these
/// values (same digits, same division), so the sample is the same; anything
/// else returns false and the general reading starts again.
pub(super) fn plain_fields(b: &[u8], s: &mut Sample, memo: &mut KeyMemo) -> bool {
    plain_fields_marked(b, s, memo, |_, _, _| {})
}

/// [`plain_fields`], telling `mark` where each value lies (start, end) and its slot.
pub(super) fn plain_fields_marked(
    b: &[u8],
    s: &mut Sample,
    memo: &mut KeyMemo,
    mut mark: impl FnMut(usize, usize, Slot),
) -> bool {
    let mut i = 0;
    let mut prev = START;
    loop {
        let key_from = i;
        let (slot, id) = match memo.expected(prev, &b[i..]) {
            Some((len, slot, id)) => {
                i += len;
                (slot, id)
            }
            None => {
                let Some(colon) = memchr::memchr(b':', &b[i..]) else {
                    return false;
                };
                i += colon;
                let key = &b[key_from..i];
                if key.is_empty()
                    || key[0].is_ascii_whitespace()
                    || key[key.len() - 1].is_ascii_whitespace()
                {
                    return false;
                }
                let slot = slot(key);
                // Known keys hold no `,`; another key with one would be split there.
                if slot == Slot::Unused && memchr::memchr(b',', key).is_some() {
                    return false;
                }
                (slot, memo.learn(prev, key, slot))
            }
        };
        if b.get(i + 1) != Some(&b' ') {
            return false;
        }
        i += 2;
        let Some((v, end)) = plain_value(b, i, slot) else {
            return false;
        };
        if slot != Slot::Unused && !store(s, slot, v) {
            return false;
        }
        mark(i, end, slot);
        i = end;
        if i == b.len() {
            return true;
        }
        if b[i] != b',' || b.get(i + 1) != Some(&b' ') {
            return false;
        }
        i += 2;
        prev = id;
    }
}

/// Where a field list starts, for [`KeyMemo`].
const START: u16 = 0;
/// Keys remembered, and successors remembered per key.
const MEMO_KEYS: usize = 48;
const MEMO_NEXT: usize = 4;
const NO_KEY: u16 = u16::MAX;

/// The keys that followed each key in earlier lines (a log prints the same
/// layouts over and over), so the next key is checked by one comparison
/// instead of searched for and looked up. A key is only remembered after the
/// search found it whole (no `:` or `,` inside, no padding), so a text that
/// starts with it followed by `:` is exactly what the search would find.
pub(super) struct KeyMemo {
    /// Key `k` is `keys[k - 1]` (0 is the start).
    keys: Vec<(Box<[u8]>, Slot)>,
    next: Vec<[u16; MEMO_NEXT]>,
}

impl Default for KeyMemo {
    fn default() -> Self {
        KeyMemo {
            keys: Vec::new(),
            next: vec![[NO_KEY; MEMO_NEXT]],
        }
    }
}

impl KeyMemo {
    /// A remembered successor of `prev` that `rest` starts with, followed by `:`:
    /// (its length, slot, id).
    #[inline]
    fn expected(&self, prev: u16, rest: &[u8]) -> Option<(usize, Slot, u16)> {
        let next = self.next.get(prev as usize)?;
        next.iter().take_while(|&&k| k != NO_KEY).find_map(|&k| {
            let (key, slot) = &self.keys[k as usize - 1];
            (rest.get(key.len()) == Some(&b':') && starts(rest, key)).then_some((
                key.len(),
                *slot,
                k,
            ))
        })
    }

    /// Remembers `key` as a successor of `prev`; its id (`NO_KEY` when full).
    fn learn(&mut self, prev: u16, key: &[u8], slot: Slot) -> u16 {
        let id = match self.keys.iter().position(|(k, _)| **k == *key) {
            Some(i) => i as u16 + 1,
            None if self.keys.len() < MEMO_KEYS => {
                self.keys.push((key.into(), slot));
                self.next.push([NO_KEY; MEMO_NEXT]);
                self.keys.len() as u16
            }
            None => return NO_KEY,
        };
        if let Some(next) = self.next.get_mut(prev as usize) {
            if !next.contains(&id) {
                // Room for a few layouts; the newest replaces the last one.
                let free = next
                    .iter()
                    .position(|&k| k == NO_KEY)
                    .unwrap_or(MEMO_NEXT - 1);
                next[free] = id;
            }
        }
        id
    }
}

/// Digits from `i`: (value, how many, end); at most 15 so the value is exact.
#[inline(always)]
fn digits(b: &[u8], i: usize) -> (u64, usize, usize) {
    // Values of under eight digits (nearly all) are read from one word, without a
    // branch per digit: the loop's exit, at a length that varies from value to
    // value, is mispredicted on most values.
    if let Some(w) = b.get(i..i.wrapping_add(8)) {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let n = digit_run(w);
        if n == 0 {
            return (0, 0, i);
        }
        if n < 8 {
            return (leading_digits(w, n), n, i + n);
        }
    }
    digits_by_byte(b, i)
}

/// How many of a word's bytes, first byte first, are ASCII digits before the first that is not.
#[inline(always)]
fn digit_run(w: u64) -> usize {
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    // A digit's high half is 3, and stays 3 with 6 added (a carry out of a byte
    // comes only from a byte that is no digit, and goes to the bytes after it).
    let off = ((w & HIGH) ^ THREES) | ((w.wrapping_add(0x0606_0606_0606_0606) & HIGH) ^ THREES);
    (off.trailing_zeros() / 8) as usize
}

/// The value of a word's first `n` bytes (1..8), all ASCII digits.
#[inline(always)]
fn leading_digits(w: u64, n: usize) -> u64 {
    // The digits moved to the word's end, zeros before them; then pairs,
    // quads and the eight combined.
    let v = w << (8 * (8 - n));
    let v = ((v & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561)) >> 8;
    let v = ((v & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601)) >> 16;
    ((v & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001)) >> 32
}

/// [`digits`] a byte at a time.
fn digits_by_byte(b: &[u8], mut i: usize) -> (u64, usize, usize) {
    let from = i;
    // At most 15 digits: the bound is taken once, not per digit.
    let to = b.len().min(from.saturating_add(15));
    let mut v = 0u64;
    while i < to && b[i].is_ascii_digit() {
        v = v * 10 + (b[i] - b'0') as u64;
        i += 1;
    }
    (v, i - from, i)
}

/// A plain value at `i` of the type the slot wants, and where it ends. Out of
/// line for the one-pass reader; the template reader, far hotter, reads each
/// value with the reader of its kind ([`whole_at`], [`decimal_at`], [`flag_at`],
/// [`any_at`]), the same functions this one dispatches to.
fn plain_value(b: &[u8], i: usize, slot: Slot) -> Option<(Value, usize)> {
    match slot.kind() {
        Kind::Count | Kind::Tokens => whole_at(b, i).map(|(n, end)| (Value::Int(n), end)),
        Kind::Rate => decimal_at(b, i, false).map(|(v, end)| (Value::Float(v), end)),
        Kind::Share => decimal_at(b, i, true).map(|(v, end)| (Value::Float(v), end)),
        Kind::Flag => flag_at(b, i).map(|(v, end)| (Value::Bool(v), end)),
        Kind::Unused => any_at(b, i).map(|end| (Value::Bool(false), end)),
    }
}

/// A whole number at `i` (digits only; at most 15 are read): its value and end.
#[inline(always)]
pub(super) fn whole_at(b: &[u8], i: usize) -> Option<(u64, usize)> {
    if !b.get(i)?.is_ascii_digit() {
        return None;
    }
    let (int, _, end) = digits(b, i);
    Some((int, end))
}

/// `True`, `False`, `true` or `false` at `i`: its value and end.
#[inline(always)]
pub(super) fn flag_at(b: &[u8], i: usize) -> Option<(bool, usize)> {
    let rest = b.get(i..)?;
    let word = |w: &[u8], v: bool| rest.starts_with(w).then_some((v, i + w.len()));
    word(b"True", true)
        .or_else(|| word(b"False", false))
        .or_else(|| word(b"true", true))
        .or_else(|| word(b"false", false))
}

/// A number at `i` (`12`, `0.5`, `12.`; at most 15 digits in all) as mantissa,
/// decimals and end, before any `%`.
#[inline(always)]
fn number_at(b: &[u8], i: usize) -> Option<(u64, usize, usize)> {
    if !b.get(i)?.is_ascii_digit() {
        return None;
    }
    let (int, n, end) = digits(b, i);
    if b.get(end) != Some(&b'.') {
        return Some((int, 0, end));
    }
    let (f, nf, end) = digits(b, end + 1);
    if n + nf > 15 {
        return None;
    }
    Some((int * POW10[nf] + f, nf, end))
}

/// A decimal at `i`, or with `percent` a percentage too (as a fraction): its value and end.
#[inline(always)]
pub(super) fn decimal_at(b: &[u8], i: usize, percent: bool) -> Option<(f64, usize)> {
    let (m, k, end) = number_at(b, i)?;
    let v = decimal(m, k);
    if b.get(end) == Some(&b'%') {
        return percent.then(|| (hundredth(v), end + 1));
    }
    Some((v, end))
}

/// Any plain value at `i` (a flag word, a number, a percentage): where it ends.
#[inline(always)]
pub(super) fn any_at(b: &[u8], i: usize) -> Option<usize> {
    let Some((_, _, end)) = number_at(b, i) else {
        return flag_at(b, i).map(|(_, end)| end);
    };
    // Read as a number, so it is a value; nothing stores it (a division is dear).
    Some(end + usize::from(b.get(end) == Some(&b'%')))
}

/// Powers of ten up to a value's most digits: a look-up, where `pow` is a loop.
const POW10: [u64; 16] = {
    let mut p = [1u64; 16];
    let mut k = 1;
    while k < 16 {
        p[k] = p[k - 1] * 10;
        k += 1;
    }
    p
};

/// `v / 100`, out of line: inlined, the division is done for every value and
/// the result dropped unless it is a percentage (rare), and divisions are dear.
#[inline(never)]
fn hundredth(v: f64) -> f64 {
    v / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general reading: split on `, `, then `: `.
    fn general(body: &[u8]) -> (Sample, bool) {
        let mut s = Sample::default();
        let mut ok = true;
        for seg in body.split(|&c| c == b',') {
            let seg = seg.strip_prefix(b" ").unwrap_or(seg);
            let Some(c) = seg.windows(2).position(|w| w == b": ") else {
                ok = false;
                continue;
            };
            ok &= apply_field(&mut s, &seg[..c], crate::text::fields::trim(&seg[c + 2..]));
        }
        (s, ok)
    }

    /// The word-at-a-time reading against the byte loop: every run length at
    /// every distance from the end, after and before every kind of byte.
    #[test]
    fn digits_read_a_word_at_a_time_as_a_byte_at_a_time() {
        let mut rng = batchlens_sim::rng::Rng::new(11);
        let mut compared = 0;
        for _ in 0..40_000 {
            let len = rng.below(24);
            let b: Vec<u8> = (0..len)
                .map(|_| match rng.below(4) {
                    0 => rng.below(256) as u8,
                    1 => b".%, :/\x7f\xff"[rng.below(8)],
                    _ => b'0' + rng.below(10) as u8,
                })
                .collect();
            for i in 0..=len {
                assert_eq!(digits(&b, i), digits_by_byte(&b, i), "{b:?} at {i}");
                compared += 1;
            }
        }
        // Past the end too, and the longest runs.
        assert_eq!(digits(b"12", 2), (0, 0, 2));
        assert_eq!(digits(b"1234567", 0), (1234567, 7, 7));
        assert_eq!(digits(b"12345678,", 0), (12345678, 8, 8));
        assert_eq!(digits(b"1234567,90", 0), (1234567, 7, 7));
        assert_eq!(digits(b"98765432109876543", 0), (987654321098765, 15, 15));
        assert!(compared > 400_000, "{compared}");
    }

    #[test]
    fn every_key_finds_its_field() {
        use Slot::*;
        let keys: [(&[u8], Slot); 31] = [
            (b"#running-req", Running),
            (b"#running_req", Running),
            (b"#queue-req", Queued),
            (b"#remaining_req", Queued),
            (b"#token", KvTokens),
            (b"#full token", KvTokens),
            (b"token usage", KvUsage),
            (b"full token usage", KvUsage),
            (b"gen throughput (token/s)", Gen),
            (b"input throughput (token/s)", Input),
            (b"#new-seq", NewSeqs),
            (b"#seq", NewSeqs),
            (b"#new-token", PrefillTokens),
            (b"#new_token", PrefillTokens),
            (b"#cached-token", Cached),
            (b"#cached_token", Cached),
            (b"cache hit rate", PrefixHit),
            (b"tree_cache_hit_rate", PrefixHit),
            (b"#pending-token", Pending),
            (b"accept len", AcceptLen),
            (b"est. read BW (GB/s per GPU)", EstReadBw),
            (b"est. decode TFLOPS/s (per GPU)", EstDecodeTflops),
            (b"est. prefill TFLOPS/s (per GPU)", EstPrefillTflops),
            (b"cuda graph", Graph),
            (b"cpu graph", Graph),
            (b"npu graph", Graph),
            (b"musa graph", Graph),
            (b"#retracted-req", Preempted),
            (b"pre-allocated usage", Unused),
            (b"#prealloc-req", Unused),
            (b"", Unused),
        ];
        for (k, want) in keys {
            assert_eq!(slot(k), want, "{}", String::from_utf8_lossy(k));
        }
    }

    #[test]
    fn the_one_pass_reading_agrees_with_the_general_one() {
        let bodies: [&[u8]; 9] = [
            b"#running-req: 56, #token: 81290, token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 94",
            b"#new-seq: 2, #new-token: 5559, #cached-token: 35741, token usage: 0.02, #running-req: 10, #queue-req: 0, input throughput (token/s): 3477.55",
            b"#running-req: 9, accept len: 2.68, cache hit rate: 45.10%, largest-len: 0, #queue-req: 0",
            b"#running-req: 4294967296, gen throughput (token/s): 1.0",
            b"#running-req: 12345678901234567, gen throughput (token/s): 1.0",
            b"gen throughput (token/s): 1234567890.1234567",
            b"gen throughput (token/s): 00000000000000000001.5",
            b"token usage: 7., cuda graph: False, x: 3%",
            b"#token: 12, token usage: 0.5%",
        ];
        for b in bodies {
            let (want, ok) = general(b);
            let mut got = Sample::default();
            if plain_fields(b, &mut got, &mut KeyMemo::default()) {
                assert!(ok, "{}", String::from_utf8_lossy(b));
                assert_eq!(got, want, "{}", String::from_utf8_lossy(b));
            }
        }
        // With keys remembered from earlier lines, the same again; including
        // keys that start like a remembered one and layouts that branch.
        let mut memo = KeyMemo::default();
        let more: [&[u8]; 6] = [
            b"#token: 5, #tokens: 6, token usage: 0.5",
            b"#token: 5, #token x: 6, token usage: 0.5",
            b"#token: 5, token usage, x: 1",
            b"#running-req: 1, accept len: 2.5, gen throughput (token/s): 3.5",
            b"#running-req: 1, largest-len: 0, gen throughput (token/s): 3.5",
            b"#running-req: 1, #token: 2, gen throughput (token/s): 3.5, #queue-req: 0",
        ];
        for round in 0..3 {
            for b in bodies.iter().chain(more.iter()) {
                let (want, ok) = general(b);
                let mut got = Sample::default();
                if plain_fields(b, &mut got, &mut memo) {
                    assert!(ok, "round {round}: {}", String::from_utf8_lossy(b));
                    assert_eq!(got, want, "round {round}: {}", String::from_utf8_lossy(b));
                }
                let mut fresh = Sample::default();
                assert_eq!(
                    plain_fields(b, &mut fresh, &mut KeyMemo::default()),
                    plain_fields(b, &mut Sample::default(), &mut memo),
                    "round {round}: {}",
                    String::from_utf8_lossy(b)
                );
            }
        }
        let mut s = Sample::default();
        assert!(plain_fields(bodies[0], &mut s, &mut KeyMemo::default()));
        assert_eq!(
            (s.running, s.queued, s.kv_tokens),
            (Some(56), Some(94), Some(81290))
        );
        assert_eq!(
            (s.kv_usage, s.gen_tok_s, s.graph),
            (Some(0.70), Some(888.95), Some(true))
        );
        // Values the one pass leaves to the general reading.
        for b in [
            &b"#running-req: 1,234"[..],
            b"#running-req:  5",
            b"x: a=b",
            b"token usage: .5",
            b"#token: 1_000",
        ] {
            assert!(
                !plain_fields(b, &mut Sample::default(), &mut KeyMemo::default()),
                "{}",
                String::from_utf8_lossy(b)
            );
        }
    }
}
