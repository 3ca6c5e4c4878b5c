//! A least-squares line `y = a + b·x`, kept as running sums.

/// Running sums of points for a least-squares line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineSums {
    pub n: f64,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
}

impl LineSums {
    pub fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.xy += x * y;
    }

    /// Sum of the `y`s.
    pub fn sum_y(&self) -> f64 {
        self.y
    }

    /// The slope, where the `x`s spread (relative to their own size).
    pub fn slope(&self) -> Option<f64> {
        if self.n < 2.0 {
            return None;
        }
        let var = self.xx - self.x * self.x / self.n;
        (var > 1e-9 * self.xx.max(1.0)).then(|| (self.xy - self.x * self.y / self.n) / var)
    }

    /// The intercept at that slope.
    pub fn intercept(&self) -> Option<f64> {
        self.slope().map(|b| (self.y - b * self.x) / self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_its_points_is_found() {
        let mut l = LineSums::default();
        for x in [1.0, 2.0, 4.0, 7.0] {
            l.add(x, 3.0 + 0.5 * x);
        }
        assert!((l.slope().unwrap() - 0.5).abs() < 1e-12);
        assert!((l.intercept().unwrap() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn points_at_one_x_have_no_slope() {
        let mut l = LineSums::default();
        l.add(2.0, 1.0);
        l.add(2.0, 5.0);
        assert_eq!(l.slope(), None);
    }
}
