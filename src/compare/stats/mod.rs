//! Paired comparison statistics: is a candidate run better or worse than a baseline scored on
//! the same items?
//!
//! Pure Rust over `&[f64]` (no Polars), the kernel of the `compare` command. Every function
//! takes per-item metric values of the two runs, paired by position, and reports on the delta
//! `candidate − baseline` (positive: the candidate scores higher).
//!
//! * [`paired_t_test`]: Student's paired t-test, equal to
//!   `scipy.stats.ttest_rel(candidate, baseline)` (statistic, two-sided p-value, degrees of
//!   freedom), with the mean and standard deviation of the deltas.
//! * [`effect_size`]: Cohen's d_z, the mean delta in units of the deltas' standard deviation.
//! * [`paired_resampling`]: for many metrics at once, a percentile bootstrap confidence interval
//!   of the mean delta and an approximate-randomization (sign-flip) p-value, built for
//!   10^6 items × 10 metrics × 1,000 resamples in seconds; [`PairedResampler`] exposes the
//!   blocks so that a caller can schedule them on its own thread pool.
//! * [`bootstrap_corpus`]: the same two procedures for a corpus-level metric computed from summed
//!   per-item statistics (corpus BLEU from n-gram match and length counts).
//! * The special functions underneath: [`ln_gamma`], [`regularized_incomplete_beta`],
//!   [`student_t_cdf`], [`student_t_sf`], [`student_t_quantile`], [`noncentral_t_cdf`].
//!
//! The kernels of defensible verdicts, each equal to statsmodels on recorded values:
//!
//! * [`cluster_robust_mean_test`]: the mean delta of items grouped in clusters (questions that
//!   share a document or a topic), with the CR1 cluster-robust standard error and Student's t
//!   on G − 1 degrees of freedom, the design effect and the effective number of items.
//! * [`holm_adjust`], [`benjamini_hochberg`] and their rejection rules [`holm_reject`],
//!   [`benjamini_hochberg_reject`]: a family of p-values adjusted for the family-wise error
//!   rate or the false discovery rate (statsmodels' `multipletests`, `holm` and `fdr_bh`).
//! * [`t_test_power`], [`t_test_sample_size`], [`minimum_detectable_effect`]: planning a paired
//!   comparison (statsmodels' `TTestPower`), and for clustered items [`design_effect`],
//!   [`clustered_sample_size`], [`clustered_minimum_detectable_effect`].
//! * [`wilson_interval`]: the Wilson score interval of a proportion, such as a win rate.
//!
//! Missing values: the functions take complete pairs. Drop the items that either run failed to
//! score with [`paired_deltas`] (per metric: each metric may keep a different number of items).
//!
//! ```
//! use polars_rag::compare::stats::{paired_t_test, paired_resampling, ResampleOptions};
//! let baseline = [0.61, 0.42, 0.78, 0.55, 0.30];
//! let candidate = [0.66, 0.40, 0.85, 0.61, 0.38];
//! let t = paired_t_test(&baseline, &candidate).unwrap();
//! assert!((t.p_value - 0.05360396214530979).abs() < 1e-12); // scipy.stats.ttest_rel
//!
//! let deltas: Vec<f64> = candidate.iter().zip(&baseline).map(|(c, b)| c - b).collect();
//! let r = paired_resampling(&[&deltas], &ResampleOptions::default())[0].unwrap();
//! assert!(r.ci_low <= r.mean_delta && r.mean_delta <= r.ci_high);
//! ```

use std::ops::Range;

mod cluster;
mod corpus;
mod multiplicity;
mod power;
pub(crate) mod random;
mod resample;
mod special;
mod ttest;
mod two_level;
mod wilson;

pub use cluster::*;
pub use corpus::*;
pub use multiplicity::*;
pub use power::*;
use random::*;
pub use resample::*;
pub use special::*;
pub use ttest::*;
pub use two_level::*;
pub use wilson::*;

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, rel: f64) -> bool {
        (actual - expected).abs() <= rel * expected.abs()
    }

    #[test]
    fn ln_gamma_matches_scipy() {
        // from scipy import special
        // [special.gammaln(z) for z in [1e-3, 0.5, 1.0, 2.5, 9.9, 10.0, 123.4, 1e7]]
        let cases = [
            (1e-3, 6.907178885383853),
            (0.5, 0.5723649429247),
            (2.5, 0.2846828704729192),
            (9.9, 12.57717990421988),
            (10.0, 12.801827480081469),
            (123.4, 469.3360974421906),
            (1e7, 151180949.36947393),
        ];
        for (z, expected) in cases {
            assert!(
                close(ln_gamma(z), expected, 1e-14),
                "ln_gamma({z}) = {}",
                ln_gamma(z)
            );
        }
        assert!(ln_gamma(1.0).abs() < 1e-14);
        assert!(ln_gamma(0.0).is_nan() && ln_gamma(-1.0).is_nan());
    }

    #[test]
    fn incomplete_beta_matches_scipy() {
        // from scipy import special
        // special.betainc(a, b, x) for each (a, b, x) below
        let cases = [
            (0.5, 0.5, 0.3, 0.36901011956554536),
            (2.0, 3.0, 0.4, 0.5247999999999999),
            (10.0, 0.5, 0.97, 0.4408041535957583),
            (0.5, 10.0, 0.03, 0.5591958464042414),
            (50.0, 60.0, 0.45, 0.4642352914306031),
            (1e3, 1e3, 0.51, 0.8144473405684881),
            (1e-3, 2.0, 0.5, 0.9998067465369478),
            (7.0, 1.0, 0.999, 0.993020965034979),
            // Large a, b ≤ 1: the asymptotic expansion.
            (100.0, 0.3, 0.99, 0.08413883162586826),
            (2000.0, 1.0, 0.999, 0.13519992539749948),
            (120.0, 0.5, 0.9999, 0.8770090171834202),
            (300.0, 0.9, 0.5, 2.7819956033258763e-91),
        ];
        for (a, b, x, expected) in cases {
            let got = regularized_incomplete_beta(a, b, x);
            assert!(
                close(got, expected, 1e-13),
                "I({x}; {a}, {b}) = {got}, want {expected}"
            );
        }
        // a = 5e6: x itself carries a relative rounding of 1e-16, amplified by a = 5e6.
        let got = regularized_incomplete_beta(5e6, 0.5, 0.9999995);
        assert!(close(got, 0.02534730403850864, 1e-9), "{got}");
        assert_eq!(regularized_incomplete_beta(2.0, 3.0, 0.0), 0.0);
        assert_eq!(regularized_incomplete_beta(2.0, 3.0, 1.0), 1.0);
        assert!(regularized_incomplete_beta(0.0, 3.0, 0.5).is_nan());
        assert!(regularized_incomplete_beta(2.0, 3.0, 1.5).is_nan());
    }

    #[test]
    fn student_t_cdf_matches_scipy() {
        // from scipy import special
        // [special.stdtr(df, t) for t in [-40.0, -5.0, -1.7, -0.3, 0.0, 0.8, 2.5]]
        let ts = [-40.0, -5.0, -1.7, -0.3, 0.0, 0.8, 2.5];
        #[rustfmt::skip]
        let table: [(f64, [f64; 7]); 7] = [
            (1.0, [0.007956089912025812, 0.0628329581890012, 0.1692530273303327,
                   0.4072264209222577, 0.5, 0.7147767125227227, 0.8788810584091566]),
            (2.0, [0.0003122073360923703, 0.018874775675311862, 0.11561671310078561,
                   0.3962428304200888, 0.5, 0.7461829819586654, 0.9351941398892446]),
            (3.0, [1.7190340394579253e-05, 0.007696219036651147, 0.09384532077670502,
                   0.3918816460199595, 0.5, 0.7589005241244589, 0.9561466764959672]),
            (7.5, [2.559528381854894e-10, 0.0006381114017584908, 0.06503304917866852,
                   0.38616132928438907, 0.5, 0.77584736526769, 0.9805898708631873]),
            (29.0, [3.173438664864671e-27, 1.2683157867711645e-05, 0.04991689574423466,
                    0.3831585466644839, 0.5, 0.7848921657248402, 0.9908373278307869]),
            (1e5, [0.0, 2.8713508393208397e-07, 0.04456701762433149,
                   0.3820888895951688, 0.5, 0.7881436512303094, 0.9937895404037205]),
            (1e7, [0.0, 2.866564037504268e-07, 0.044565478307206724,
                   0.3820885809288926, 0.5, 0.7881445919147207, 0.9937903267317107]),
        ];
        for (df, expected) in table {
            for (t, want) in ts.iter().zip(expected) {
                let got = student_t_cdf(*t, df);
                if want == 0.0 {
                    // Below the smallest f64 (about 1e-350): any underflow to (near) zero.
                    assert!(got < 1e-300, "stdtr({df}, {t}) = {got}");
                } else {
                    assert!(
                        close(got, want, 1e-12),
                        "stdtr({df}, {t}) = {got}, want {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn student_t_edge_cases() {
        assert_eq!(student_t_cdf(f64::INFINITY, 3.0), 1.0);
        assert_eq!(student_t_cdf(f64::NEG_INFINITY, 3.0), 0.0);
        assert!(student_t_cdf(f64::NAN, 3.0).is_nan());
        assert!(student_t_cdf(1.0, 0.0).is_nan());
        assert!(student_t_cdf(1.0, f64::INFINITY).is_nan());
        // Cauchy tail beyond t² overflow: P(T > t) = atan(1/t)/π ≈ 1/(πt).
        let t = 1e200;
        assert!(close(
            student_t_sf(t, 1.0),
            1.0 / (std::f64::consts::PI * t),
            1e-13
        ));
        // Tiny t: cdf ≈ ½ + t·f(0).
        assert!(close(student_t_cdf(1e-200, 1.0) - 0.5, 0.0, 1.0));
    }

    #[test]
    fn t_test_degenerate_inputs() {
        assert!(paired_t_test(&[], &[]).is_none());
        assert!(paired_t_test(&[1.0], &[2.0]).is_none());
        assert!(paired_t_test(&[1.0, 2.0], &[1.0, 2.0]).is_none());
        assert!(paired_t_test(&[0.0, 0.0, 0.0], &[0.5, 0.5, 0.5]).is_none());
        assert!(paired_t_test(&[0.0, f64::NAN], &[0.5, 0.7]).is_none());
        assert!(effect_size(&[0.0, 0.0], &[1.0, 1.0]).is_none());
    }

    #[test]
    fn poisson_table_probabilities() {
        let table = PoissonTable::new();
        assert_eq!(table.max_weight(), 12);
        let scale = 4_294_967_296.0;
        let mut previous = 0.0;
        let mut probability = (-1.0f64).exp();
        for (k, &t) in table.thresholds.iter().enumerate() {
            let p = (t as f64 - previous) / scale;
            assert!((p - probability).abs() <= 1.0 / scale, "P({k}) = {p}");
            previous = t as f64;
            probability /= (k + 1) as f64;
        }
        // The fast path agrees with the comparisons everywhere they could differ.
        for &t in &table.thresholds {
            for u in [t.wrapping_sub(1), t, t.wrapping_add(1)] {
                assert_eq!(table.sample(u), table.slow(u));
            }
        }
        for cell in 0..4096u32 {
            let u = cell << 20 | 0x5_5555;
            assert_eq!(table.sample(u), table.slow(u));
        }
        // Drawn weights: mean 1, variance 1.
        let key = resample_key(3, POISSON_STREAM, 0);
        let mut weights = vec![0.0; 200_000];
        let total = fill_poisson(&table, key, 0, &mut weights);
        let mean = total as f64 / weights.len() as f64;
        let var =
            weights.iter().map(|w| (w - mean) * (w - mean)).sum::<f64>() / weights.len() as f64;
        assert!(
            (mean - 1.0).abs() < 0.01 && (var - 1.0).abs() < 0.02,
            "{mean} {var}"
        );
    }

    #[test]
    fn signs_are_balanced_and_independent_of_offset() {
        let key = resample_key(9, SIGN_STREAM, 4);
        let mut all = vec![0.0; 4096];
        fill_signs(key, 0, &mut all);
        let mut tail = vec![0.0; 1024];
        fill_signs(key, 2048, &mut tail);
        assert_eq!(&all[2048..3072], &tail[..]);
        let plus = all.iter().filter(|&&s| s == 1.0).count();
        assert!((1900..2200).contains(&plus), "{plus}");
    }

    #[test]
    fn fixed_point_round_trip() {
        let values = [0.1, -3.5, 2.0];
        let resampler = PairedResampler::new(&[&values], 1, 0);
        let column = &resampler.columns[0];
        for x in [0.1, -3.5, 1e-3, 12.345] {
            assert!(close(
                scale_pow2(column.to_fixed(x) as f64, column.exponent),
                x,
                1e-30
            ));
        }
        assert_eq!(scale_pow2(1.5, 2000), f64::INFINITY);
        // Beyond the range of one power of two: 1e300 · 2⁻¹¹⁰⁰ is a normal number.
        assert_eq!(scale_pow2(scale_pow2(1e300, -1100), 1100), 1e300);
    }

    #[test]
    fn quantile_rule_is_numpys_linear() {
        // numpy.percentile([1, 2, 3, 4, 10], [2.5, 97.5]) == [1.1, 9.4]
        let mut v = vec![10.0, 3.0, 1.0, 4.0, 2.0];
        let (low, high, sd) = percentile_interval(&mut v, 0.95);
        assert!(
            (low - 1.1).abs() < 1e-12 && (high - 9.4).abs() < 1e-12,
            "{low} {high}"
        );
        assert!((sd - 3.5355339059327378).abs() < 1e-12);
    }
}
