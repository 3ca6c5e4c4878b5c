//! Weighted least squares for the step-time fit, small and dense (up to four columns).

/// Weighted least squares `y = X·β` by the normal equations over the columns `cols` of
/// the rows: each column its own instrument. `None` if singular.
fn least_squares(rows: &[(Vec<f64>, f64, f64)], cols: &[usize]) -> Option<LsFit> {
    instrumented(rows, cols, cols)
}

/// Least squares, then again without the buckets whose residual is beyond 4 robust standard
/// deviations (a prefill storm at start-up, a last interval that ends in idle time).
pub(super) fn robust_least_squares(rows: &[(Vec<f64>, f64, f64)], cols: &[usize]) -> Option<LsFit> {
    robust(rows, cols, |r| least_squares(r, cols))
}

/// Instrumental variables `y = X·β` over the columns `cols`, instrumented by the columns
/// `inst` (as many): where a regressor carries the target's own noise (a rate per step
/// times the step it is read at), a column that moves it but not that noise gives the
/// slope the noise would bias. Then again without the rows whose residual is beyond 4
/// robust standard deviations. `None` if singular.
pub(super) fn robust_instrumented(
    rows: &[(Vec<f64>, f64, f64)],
    cols: &[usize],
    inst: &[usize],
) -> Option<LsFit> {
    robust(rows, cols, |r| instrumented(r, cols, inst))
}

/// `fit`, then `fit` again without the rows whose residual is beyond 4 robust standard
/// deviations.
fn robust(
    rows: &[(Vec<f64>, f64, f64)],
    cols: &[usize],
    fit: impl Fn(&[(Vec<f64>, f64, f64)]) -> Option<LsFit>,
) -> Option<LsFit> {
    let f = fit(rows)?;
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
    fit(&kept)
}

fn instrumented(rows: &[(Vec<f64>, f64, f64)], cols: &[usize], inst: &[usize]) -> Option<LsFit> {
    let k = cols.len();
    if inst.len() != k || rows.len() <= k + 2 {
        return None;
    }
    let (mut zx, mut zz) = (vec![vec![0.0; k]; k], vec![vec![0.0; k]; k]);
    let mut zy = vec![0.0; k];
    let mut wsum = 0.0;
    for (x, y, w) in rows {
        wsum += w;
        for i in 0..k {
            zy[i] += w * x[inst[i]] * y;
            for j in 0..k {
                zx[i][j] += w * x[inst[i]] * x[cols[j]];
                zz[i][j] += w * x[inst[i]] * x[inst[j]];
            }
        }
    }
    if wsum <= 0.0 {
        return None;
    }
    let inv = invert(zx)?;
    let beta: Vec<f64> = (0..k)
        .map(|i| (0..k).map(|j| inv[i][j] * zy[j]).sum())
        .collect();
    let my = rows.iter().map(|(_, y, w)| w * y).sum::<f64>() / wsum;
    let (mut ss, mut ssy) = (0.0, 0.0);
    for (x, y, w) in rows {
        let f: f64 = (0..k).map(|i| beta[i] * x[cols[i]]).sum();
        ss += w * (y - f).powi(2);
        ssy += w * (y - my).powi(2);
    }
    let mean_w = wsum / rows.len() as f64;
    let sigma2 = ss / (rows.len() - k) as f64 / mean_w;
    let r2 = if ssy > 0.0 { 1.0 - ss / ssy } else { 0.0 };
    // (Z'X)⁻¹ Z'Z (Z'X)⁻ᵀ σ², per unit weight (weights are relative): (X'X)⁻¹ σ² where
    // each column is its own instrument.
    let mut cov = vec![vec![0.0; k]; k];
    for (i, row) in cov.iter_mut().enumerate() {
        for (j, c) in row.iter_mut().enumerate() {
            let mut s = 0.0;
            for a in 0..k {
                for b in 0..k {
                    s += inv[i][a] * zz[a][b] * inv[j][b];
                }
            }
            *c = s * sigma2 * mean_w;
        }
    }
    Some(LsFit { beta, cov, r2 })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds per step `y = 0.02 + 50 µs × prompt tokens per step`, the prompt tokens per
    /// step read as a rate `v` times the bucket's own step, whose noise (±15 %) is then on
    /// both sides: least squares bends the slope toward `1 / v` (a fifth too high here), the
    /// rate as an instrument finds it.
    #[test]
    fn an_instrument_undoes_noise_on_both_sides() {
        let rows: Vec<(Vec<f64>, f64, f64)> = (0..60u32)
            .map(|k| {
                let v = 500.0 + 375.0 * f64::from((k * 11) % 13);
                let truth = 0.02 / (1.0 - 50e-6 * v);
                let y = truth * (1.0 + 0.15 * (f64::from((k * 7) % 5) - 2.0) / 2.0);
                (vec![1.0, v * y, v], y, 1.0)
            })
            .collect();
        let iv = robust_instrumented(&rows, &[0, 1], &[0, 2]).expect("a fit");
        assert!((iv.beta[1] - 50e-6).abs() < 5e-6, "{:?}", iv.beta);
        let ls = robust_least_squares(&rows, &[0, 1]).expect("a fit");
        assert!(ls.beta[1] > 1.15 * 50e-6, "{:?}", ls.beta);
    }
}
