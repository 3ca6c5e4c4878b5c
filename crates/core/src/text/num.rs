//! Numbers for people: grouped integers, short floats, shares, durations.

/// A count and its noun, singular for exactly one: `1 stats line`, `2,048 stats lines`.
pub fn count(n: f64, one: &str, many: &str) -> String {
    let shown = num(n);
    let noun = if shown == "1" { one } else { many };
    format!("{shown} {noun}")
}

/// Thousands-grouped integer or short float, for people: 885, 56, 12.5, 3.92.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    if v == 0.0 {
        // A count of nothing reads as one, not as a measured 0.00.
        return "0".into();
    }
    let a = v.abs();
    let near_int = (v - v.round()).abs() < 0.05 * a.max(1.0) / 10.0;
    if a >= 100.0 || (a >= 1.0 && near_int) {
        let r = v.round() as i64;
        let s = r.abs().to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        if r < 0 {
            out.insert(0, '-');
        }
        out
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn pct(frac: f64) -> String {
    format!("{:.0}%", frac * 100.0)
}

pub fn duration(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}
