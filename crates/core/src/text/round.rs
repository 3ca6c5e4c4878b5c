//! Rounding of reported figures, so the JSON is short, stable, and identical
//! on every platform (native and wasm32 libm may differ in the last bit).

/// Round to 6 significant digits.
pub fn sig(v: f64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return if v.is_finite() { 0.0 } else { v };
    }
    let mag = v.abs();
    // Powers of ten by repeated multiplication: exact and libm-free.
    let mut digits = 0i32;
    let mut m = mag;
    while m >= 1.0 {
        m /= 10.0;
        digits += 1;
    }
    while m < 0.1 {
        m *= 10.0;
        digits -= 1;
    }
    let decimals = (6 - digits).clamp(0, 12);
    dec(v, decimals as u32)
}

/// Round to a fixed number of decimals.
pub fn dec(v: f64, decimals: u32) -> f64 {
    if !v.is_finite() {
        return v;
    }
    let f = 10f64.powi(decimals as i32);
    let r = (v * f).round() / f;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rounds_to_six_significant_digits() {
        assert_eq!(sig(888.954321), 888.954);
        assert_eq!(sig(0.700004), 0.700004);
        assert_eq!(sig(0.0000123456789), 0.0000123457);
        assert_eq!(sig(116171.0), 116171.0);
        assert_eq!(sig(-4.12345678), -4.12346);
        assert_eq!(sig(0.0), 0.0);
    }
}
