//! Weighted least squares for the step-time fit, small and dense (up to four columns).

/// Weighted least squares `y = X·β` by the normal equations over the columns `cols` of
/// the rows; `None` if singular.
fn least_squares(rows: &[(Vec<f64>, f64, f64)], cols: &[usize]) -> Option<LsFit> {
    let k = cols.len();
    let mut m = vec![vec![0.0; k]; k];
    let mut v = vec![0.0; k];
    let mut wsum = 0.0;
    for (x, y, w) in rows {
        wsum += w;
        for i in 0..k {
            v[i] += w * x[cols[i]] * y;
            for j in 0..k {
                m[i][j] += w * x[cols[i]] * x[cols[j]];
            }
        }
    }
    if rows.len() <= k + 2 || wsum <= 0.0 {
        return None;
    }
    let inv = invert(m)?;
    let beta: Vec<f64> = (0..k)
        .map(|i| (0..k).map(|j| inv[i][j] * v[j]).sum())
        .collect();
    let my = rows.iter().map(|(_, y, w)| w * y).sum::<f64>() / wsum;
    let (mut ss, mut ssy) = (0.0, 0.0);
    for (x, y, w) in rows {
        let f: f64 = (0..k).map(|i| beta[i] * x[cols[i]]).sum();
        ss += w * (y - f).powi(2);
        ssy += w * (y - my).powi(2);
    }
    // Residual variance per unit weight (weights are relative).
    let mean_w = wsum / rows.len() as f64;
    let sigma2 = ss / (rows.len() - k) as f64 / mean_w;
    let r2 = if ssy > 0.0 { 1.0 - ss / ssy } else { 0.0 };
    let cov = inv
        .into_iter()
        .map(|row| row.into_iter().map(|c| c * sigma2 * mean_w).collect())
        .collect();
    Some(LsFit { beta, cov, r2 })
}

/// Least squares, then again without the buckets whose residual is beyond 4 robust standard
/// deviations (a prefill storm at start-up, a last interval that ends in idle time).
pub(super) fn robust_least_squares(rows: &[(Vec<f64>, f64, f64)], cols: &[usize]) -> Option<LsFit> {
    let f = least_squares(rows, cols)?;
    let resid: Vec<f64> = rows
        .iter()
        .map(|(x, y, _)| {
            y - cols
                .iter()
                .zip(&f.beta)
                .map(|(&c, b)| b * x[c])
                .sum::<f64>()
        })
        .collect();
    let sigma = 1.4826 * crate::analysis::window::median(resid.iter().map(|r| r.abs()).collect())?;
    if sigma.is_nan() || sigma <= 0.0 {
        return Some(f);
    }
    let kept: Vec<(Vec<f64>, f64, f64)> = rows
        .iter()
        .zip(&resid)
        .filter(|(_, r)| r.abs() <= 4.0 * sigma)
        .map(|(row, _)| row.clone())
        .collect();
    if kept.len() == rows.len() {
        return Some(f);
    }
    least_squares(&kept, cols)
}

pub(super) struct LsFit {
    pub beta: Vec<f64>,
    cov: Vec<Vec<f64>>,
    pub r2: f64,
}

impl LsFit {
    /// Variance of `x·β`.
    pub fn var(&self, x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() {
            for j in 0..x.len() {
                s += x[i] * self.cov[i][j] * x[j];
            }
        }
        s.max(0.0)
    }
}

/// Gauss-Jordan inverse with partial pivoting, scaled by the diagonal so that mixed units
/// (requests, tokens) condition well.
fn invert(m: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let k = m.len();
    let d: Vec<f64> = (0..k).map(|i| m[i][i].abs().sqrt().max(1e-300)).collect();
    let mut a: Vec<Vec<f64>> = (0..k)
        .map(|i| (0..k).map(|j| m[i][j] / (d[i] * d[j])).collect())
        .collect();
    let mut inv: Vec<Vec<f64>> = (0..k)
        .map(|i| (0..k).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    for col in 0..k {
        let piv = (col..k).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[piv][col].abs() < 1e-9 {
            return None;
        }
        a.swap(col, piv);
        inv.swap(col, piv);
        let p = a[col][col];
        for j in 0..k {
            a[col][j] /= p;
            inv[col][j] /= p;
        }
        for r in 0..k {
            if r != col {
                let f = a[r][col];
                if f != 0.0 {
                    for j in 0..k {
                        a[r][j] -= f * a[col][j];
                        inv[r][j] -= f * inv[col][j];
                    }
                }
            }
        }
    }
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v /= d[i] * d[j];
        }
    }
    Some(inv)
}
