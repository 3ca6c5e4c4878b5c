//! Small, allocation-free helpers for reading values out of log text.

/// `n` in decimal, written into `buf` without the formatting machinery (rank
/// labels are written per line).
pub fn decimal_text(n: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    let mut v = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).expect("ASCII digits")
}

/// Parses an unsigned integer that may carry thousands separators (`1,234,560`).
/// Servers print counts plainly or with commas; `1_000` (a Rust or Python
/// literal, never a server's count) is no number.
pub fn uint(b: &[u8]) -> Option<u64> {
    let b = trim(b);
    if b.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    let mut digits = 0;
    for &c in b {
        match c {
            b'0'..=b'9' => {
                v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
                digits += 1;
            }
            b',' if digits > 0 => {}
            _ => return None,
        }
    }
    (digits > 0).then_some(v)
}

pub fn uint32(b: &[u8]) -> Option<u32> {
    uint(b).and_then(|v| u32::try_from(v).ok())
}

/// Parses a finite decimal number; `nan`, `inf` and anything else give `None`.
pub fn float(b: &[u8]) -> Option<f64> {
    let b = trim(b);
    if b.is_empty() || b.len() > 40 {
        return None;
    }
    // Reject words like "nan"/"inf" cheaply: a number starts with a digit, sign or point.
    if !matches!(b[0], b'0'..=b'9' | b'-' | b'+' | b'.') {
        return None;
    }
    if let Some(v) = plain_decimal(b) {
        return Some(v);
    }
    let s = std::str::from_utf8(b).ok()?;
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

/// `[+-]digits[.digits]` with at most 15 significant digits, exactly as
/// `str::parse::<f64>` reads it: the digits are an exact integer below 2^53 and
/// 10^k (k <= 22) is exact, so one division rounds correctly (Clinger's fast
/// path). Anything else (exponents, long mantissas) returns `None` for the slow path.
fn plain_decimal(b: &[u8]) -> Option<f64> {
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    let mut m: u64 = 0;
    let mut n = 0usize;
    let mut frac: Option<usize> = None;
    for (i, &c) in digits.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                m = m * 10 + (c - b'0') as u64;
                n += 1;
                if n > 15 {
                    return None;
                }
            }
            b'.' if frac.is_none() => frac = Some(i + 1),
            _ => return None,
        }
    }
    if n == 0 {
        return None;
    }
    let k = frac.map_or(0, |f| digits.len() - f);
    let v = decimal(m, k);
    Some(if neg { -v } else { v })
}

/// `m / 10^k` for `m < 10^15`, `k <= 15`: exact operands, one correctly rounded division.
pub fn decimal(m: u64, k: usize) -> f64 {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    m as f64 / POW10[k]
}

/// A value that may end in `%`: returned as a fraction when it does.
pub fn fraction_or_percent(b: &[u8]) -> Option<f64> {
    let b = trim(b);
    match b.split_last() {
        Some((b'%', head)) => float(head).map(|v| v / 100.0),
        _ => float(b),
    }
}

pub fn boolean(b: &[u8]) -> Option<bool> {
    match trim(b) {
        b"True" | b"true" => Some(true),
        b"False" | b"false" => Some(false),
        _ => None,
    }
}

/// Whether two short byte strings are equal, compared a word at a time. Keys
/// and rank texts are a few to a few dozen bytes: a library `memcmp` call costs
/// more than the comparison (in wasm it is a byte loop).
#[inline]
pub fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    if n >= 8 {
        // Whole words, then one last word overlapping the ones before.
        let mut i = 0;
        while i + 8 < n {
            if word(a, i) != word(b, i) {
                return false;
            }
            i += 8;
        }
        return word(a, n - 8) == word(b, n - 8);
    }
    if n >= 4 {
        let half =
            |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes"));
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    // Not `a == b`: for under four bytes that is a library call too.
    (0..n).all(|i| a[i] == b[i])
}

/// Whether `b` starts with `prefix` ([`same`] on the head).
#[inline]
pub fn starts(b: &[u8], prefix: &[u8]) -> bool {
    b.len() >= prefix.len() && same(&b[..prefix.len()], prefix)
}

pub fn trim(mut b: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = b {
        if first.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = b {
        if last.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    b
}

/// Reads leading digits at `b[i..]`; returns the value and the index after them.
pub fn digits_at(b: &[u8], i: usize, max_len: usize) -> Option<(u32, usize)> {
    let mut v: u32 = 0;
    let mut j = i;
    while j < b.len() && j - i < max_len && b[j].is_ascii_digit() {
        v = v * 10 + (b[j] - b'0') as u32;
        j += 1;
    }
    (j > i).then_some((v, j))
}

/// The first `n` characters of a line, decoded lossily, for examples in reports.
pub fn excerpt(b: &[u8], n: usize) -> String {
    let s = String::from_utf8_lossy(b);
    let mut out: String = s
        .chars()
        .filter(|c| !c.is_control() || *c == '\t')
        .take(n)
        .collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_agrees_with_slice_equality() {
        let text = b"#running-req: gen throughput (token/s) DP12 TP3 EP0";
        for i in 0..text.len() {
            for j in i..=text.len() {
                for k in 0..text.len() {
                    let a = &text[i..j];
                    let b = &text[k..(k + a.len() + 1).min(text.len())];
                    assert_eq!(same(a, b), a == b, "{a:?} {b:?}");
                    let b = &text[k..(k + a.len()).min(text.len())];
                    assert_eq!(same(a, b), a == b, "{a:?} {b:?}");
                    assert_eq!(starts(&text[k..], a), text[k..].starts_with(a));
                }
            }
        }
        let mut x = b"abcdefghijklmnopq".to_vec();
        for i in 0..x.len() {
            x[i] ^= 1;
            assert!(!same(&x, b"abcdefghijklmnopq"), "byte {i}");
            x[i] ^= 1;
        }
    }

    #[test]
    fn the_fast_path_reads_decimals_exactly_like_the_standard_parser() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200_000 {
            let r = next();
            let int = r % 10u64.pow((r >> 40) as u32 % 12);
            let fd = (r >> 50) as usize % 8;
            let fr = next() % 10u64.pow(fd as u32);
            let sign = ["", "-", "+"][(r >> 60) as usize % 3];
            let text = if fd == 0 {
                format!("{sign}{int}")
            } else {
                format!("{sign}{int}.{fr:0fd$}")
            };
            let want: f64 = text.parse().unwrap();
            let got = plain_decimal(text.as_bytes());
            if let Some(g) = got {
                assert_eq!(g.to_bits(), want.to_bits(), "{text}");
            }
        }
        for t in [
            "0.70",
            "888.95",
            "7897.87",
            "1.00",
            ".5",
            "5.",
            "000123.4500",
            "999999999999999",
        ] {
            let want: f64 = t.parse().unwrap();
            assert_eq!(
                plain_decimal(t.as_bytes()).map(f64::to_bits),
                Some(want.to_bits()),
                "{t}"
            );
        }
    }

    #[test]
    fn numbers_parse_strictly() {
        assert_eq!(uint(b"116171"), Some(116171));
        assert_eq!(uint(b"1,234,560"), Some(1_234_560));
        assert_eq!(uint(b"12a"), None);
        assert_eq!(uint(b"1_000"), None);
        assert_eq!(uint(b""), None);
        assert_eq!(uint(b"99999999999999999999999"), None);
        assert_eq!(float(b" 888.95 "), Some(888.95));
        assert_eq!(float(b"nan"), None);
        assert_eq!(float(b"86"), Some(86.0));
        assert_eq!(float(b"1e3"), Some(1000.0));
        assert_eq!(float(b"-0.0").map(f64::is_sign_negative), Some(true));
        assert_eq!(float(b"."), None);
        assert_eq!(float(b"1.2.3"), None);
        assert_eq!(fraction_or_percent(b"69.16%"), Some(0.6916));
        assert_eq!(fraction_or_percent(b"0.70"), Some(0.70));
        assert_eq!(boolean(b"True"), Some(true));
    }
}
