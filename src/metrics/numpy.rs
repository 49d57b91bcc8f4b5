//! numpy's float64 reductions, reproduced where a reference library's numbers depend on their
//! order of operations (pandas means in soak's statistics, scikit-learn's kappa).

/// numpy's pairwise summation (`np.add.reduce` on a contiguous float64 array): plain sums under
/// 8 values, eight interleaved partial sums up to 128, halves above. pandas' `mean` uses it.
pub(crate) fn numpy_sum(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 8 {
        let mut res = 0.0;
        for &v in values {
            res += v;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&values[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for j in 0..8 {
                r[j] += values[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += values[i];
            i += 1;
        }
        res
    } else {
        let mut half = n / 2;
        half -= half % 8;
        numpy_sum(&values[..half]) + numpy_sum(&values[half..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_sum_small_and_blocked() {
        assert_eq!(numpy_sum(&[]), 0.0);
        let v: Vec<f64> = (0..300).map(|i| i as f64 * 0.1).collect();
        let plain: f64 = v.iter().sum();
        assert!((numpy_sum(&v) - plain).abs() < 1e-9);
    }
}
