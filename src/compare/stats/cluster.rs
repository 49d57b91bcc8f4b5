//! The cluster-robust test of a mean delta: items that share a document, a topic or a
//! conversation are not independent, and a test that treats them as such is overconfident.
//!
//! The mean delta keeps its value; its standard error becomes the CR1 sandwich estimate, which
//! sums the residuals within each cluster before squaring, and the test uses Student's t with
//! G − 1 degrees of freedom (G clusters). This equals statsmodels'
//! `OLS(delta, ones).fit(cov_type="cluster", cov_kwds={"groups": g, "use_correction": True,
//! "df_correction": True}, use_t=True)`.

use std::collections::HashMap;

use super::ttest::{compensated_sum, mean_sd, t_interval, t_p_value};
use super::*;

/// The result of [`cluster_robust_mean_test`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterTest {
    /// Number of items.
    pub n: usize,
    /// Number of distinct clusters, G.
    pub clusters: usize,
    /// Mean of the deltas (statsmodels' `params[0]`).
    pub mean_delta: f64,
    /// CR1 cluster-robust standard error of the mean (`bse[0]`):
    /// √(G / (G − 1) · Σ_g (Σ_{i∈g} (dᵢ − mean))²) / n.
    pub standard_error: f64,
    /// t = mean / standard error (`tvalues[0]`).
    pub statistic: f64,
    /// Degrees of freedom, G − 1 (`df_resid_inference`).
    pub df: f64,
    /// Two-sided p-value P(|T| ≥ |t|) (`pvalues[0]`).
    pub p_value: f64,
    /// The design effect: the clustered variance of the mean (the squared standard error) over
    /// the variance it would have if the items were independent, s² / n (s the sample standard
    /// deviation of the deltas). 1 when clusters do not matter; 1 + (m − 1)·ICC for clusters of
    /// m items with intra-class correlation ICC; below 1 when clusters vary less than items.
    pub design_effect: f64,
    /// The number of independent items that would carry the same information: n / design effect.
    pub effective_n: f64,
}

/// Why [`cluster_robust_mean_test`] gives no test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoClusterTest {
    /// No deltas at all.
    Empty,
    /// A delta is NaN or infinite (drop missing pairs first).
    NonFinite,
    /// Every item is in the same cluster: there is no variation between clusters to measure,
    /// and G − 1 = 0 degrees of freedom.
    OneCluster,
    /// Every delta is equal: the standard error is 0 (statsmodels gives an infinite or NaN t).
    AllEqual,
    /// Every cluster's residuals sum to zero, so the clustered standard error is 0 although the
    /// deltas vary (each cluster's mean equals the overall mean).
    NoVariationBetweenClusters,
}

impl std::fmt::Display for NoClusterTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoClusterTest::Empty => "no items",
            NoClusterTest::NonFinite => "a delta is not a finite number",
            NoClusterTest::OneCluster => "all items are in one cluster",
            NoClusterTest::AllEqual => "all deltas are equal",
            NoClusterTest::NoVariationBetweenClusters => {
                "every cluster has the same mean delta, so the clustered standard error is 0"
            }
        })
    }
}

impl ClusterTest {
    /// The p-value under `alternative`, from the same t and degrees of freedom:
    /// [`ClusterTest::p_value`] for two-sided, P(T ≥ t) for greater, P(T ≤ t) for less.
    ///
    /// ```
    /// use polars_rag::compare::stats::{cluster_robust_mean_test, Alternative};
    /// let test = cluster_robust_mean_test(&[0.2, 0.3, -0.1, 0.4, 0.1], &[1, 1, 2, 3, 3]).unwrap();
    /// let greater = test.p_value_of(Alternative::Greater);
    /// assert!((greater - test.p_value / 2.0).abs() < 1e-15); // t > 0
    /// ```
    pub fn p_value_of(&self, alternative: Alternative) -> f64 {
        t_p_value(self.statistic, self.df, self.p_value, alternative)
    }

    /// The t-based confidence interval of the mean delta at level `confidence`, as statsmodels'
    /// `conf_int(alpha=1 − confidence)` for two-sided; one-sided alternatives leave one end
    /// infinite.
    ///
    /// ```
    /// use polars_rag::compare::stats::{cluster_robust_mean_test, Alternative};
    /// let test = cluster_robust_mean_test(&[0.2, 0.3, -0.1, 0.4, 0.1], &[1, 1, 2, 3, 3]).unwrap();
    /// let (low, high) = test.confidence_interval(0.95, Alternative::TwoSided);
    /// assert!(low < test.mean_delta && test.mean_delta < high);
    /// ```
    pub fn confidence_interval(&self, confidence: f64, alternative: Alternative) -> (f64, f64) {
        let se = self.standard_error;
        t_interval(self.mean_delta, se, self.df, confidence, alternative)
    }
}

/// Neumaier's running compensated sum, one per cluster.
#[derive(Clone, Copy, Default)]
struct Compensated {
    sum: f64,
    carry: f64,
}

impl Compensated {
    fn add(&mut self, v: f64) {
        let t = self.sum + v;
        self.carry += if self.sum.abs() >= v.abs() {
            (self.sum - t) + v
        } else {
            (v - t) + self.sum
        };
        self.sum = t;
    }

    fn value(self) -> f64 {
        self.sum + self.carry
    }
}

/// The cluster-robust test of the mean of `deltas` (candidate − baseline per item), the items
/// grouped by `clusters` (one id per item, e.g. a hash of the document or topic; any order,
/// items of a cluster need not be adjacent).
///
/// Equal to statsmodels' `OLS(deltas, ones).fit(cov_type="cluster", cov_kwds={"groups":
/// clusters, "use_correction": True, "df_correction": True}, use_t=True)`: mean (`params`),
/// CR1 standard error (`bse`), t (`tvalues`), two-sided p-value (`pvalues`) and G − 1 degrees of
/// freedom (`df_resid_inference`). With one regressor the small-sample factor (n − 1)/(n − k)
/// of CR1 is 1, leaving G / (G − 1). With every item its own cluster the variance is
/// n / (n − 1) · Σ (dᵢ − mean)² / n² = s² / n, the plain t-test's (see the example), and the
/// design effect is 1.
///
/// Also reported: the design effect (clustered over naive variance of the mean) and the
/// effective number of items, n / design effect.
///
/// `Err` with the reason when no test is possible: no items, a non-finite delta, a single
/// cluster, every delta equal, or every cluster with the same mean.
///
/// # Panics
/// When the slices differ in length.
///
/// ```
/// use polars_rag::compare::stats::{cluster_robust_mean_test, t_test_deltas, NoClusterTest};
/// let deltas = [0.12, 0.10, 0.15, -0.02, 0.01, 0.30, 0.25, 0.28, 0.05];
/// // Three topics of three questions: the questions of a topic move together.
/// let topics = [7, 7, 7, 3, 3, 9, 9, 9, 3];
/// let test = cluster_robust_mean_test(&deltas, &topics).unwrap();
/// assert_eq!((test.clusters, test.df), (3, 2.0));
/// assert!(test.design_effect > 1.0 && test.effective_n < 9.0);
/// // One item per cluster: the same t as the plain t-test.
/// let own: Vec<u64> = (0..9).collect();
/// let plain = t_test_deltas(&deltas).unwrap();
/// let single = cluster_robust_mean_test(&deltas, &own).unwrap();
/// assert!((single.statistic - plain.statistic).abs() < 1e-12);
/// assert_eq!(cluster_robust_mean_test(&deltas, &[1; 9]), Err(NoClusterTest::OneCluster));
/// ```
pub fn cluster_robust_mean_test(
    deltas: &[f64],
    clusters: &[u64],
) -> Result<ClusterTest, NoClusterTest> {
    assert_eq!(
        deltas.len(),
        clusters.len(),
        "cluster_robust_mean_test: deltas and clusters differ in length"
    );
    if deltas.is_empty() {
        return Err(NoClusterTest::Empty);
    }
    if !deltas.iter().all(|d| d.is_finite()) {
        return Err(NoClusterTest::NonFinite);
    }
    if deltas.iter().all(|&d| d == deltas[0]) {
        return Err(NoClusterTest::AllEqual);
    }
    let n = deltas.len();
    let (mean_delta, sd_delta) = mean_sd(deltas);
    // Residual sums per cluster, against the mean computed first: summing the raw deltas and
    // subtracting count × mean afterwards would cancel when the mean is large against the
    // spread.
    let mut residual_sums: HashMap<u64, Compensated> = HashMap::new();
    for (&d, &g) in deltas.iter().zip(clusters) {
        residual_sums.entry(g).or_default().add(d - mean_delta);
    }
    let g = residual_sums.len();
    if g < 2 {
        return Err(NoClusterTest::OneCluster);
    }
    let meat = compensated_sum(residual_sums.values().map(|s| {
        let s = s.value();
        s * s
    }));
    let g_f = g as f64;
    let n_f = n as f64;
    let variance = g_f / (g_f - 1.0) * meat / (n_f * n_f);
    // Exact zero only: residual sums that cancel to rounding noise leave a tiny variance and
    // an enormous t, which is what the data say.
    if variance == 0.0 {
        return Err(NoClusterTest::NoVariationBetweenClusters);
    }
    let standard_error = variance.sqrt();
    let statistic = mean_delta / standard_error;
    let df = g_f - 1.0;
    let naive_variance = sd_delta * sd_delta / n_f;
    let design_effect = variance / naive_variance;
    Ok(ClusterTest {
        n,
        clusters: g,
        mean_delta,
        standard_error,
        statistic,
        df,
        p_value: t_two_sided(statistic, df).0,
        design_effect,
        effective_n: n_f / design_effect,
    })
}

/// The prediction-powered estimate of a mean (see [`ppi_mean`](crate::metrics::ppi::ppi_mean))
/// with the items grouped into clusters: the estimate and the judge's weight λ are PPI's, the
/// standard errors cluster-robust. Each item's influence on the estimate (an unlabelled item's
/// λ·(judge − its mean) / N, a labelled item's (label − λ·judge − their mean) / n) is summed
/// per cluster before squaring, a labelled and an unlabelled item of one cluster together, and
/// scaled by G / (G − 1) (CR1); the interval is Student's t on G − 1 degrees of freedom. The
/// labels-only interval is clustered the same way over the labelled items' clusters. With
/// every item its own cluster the standard errors are PPI's times √(G / (G − 1)).
///
/// An error says why there is no estimate: PPI's reasons, or fewer than two clusters (among
/// all items, or among the labelled ones).
///
/// ```
/// use polars_rag::compare::stats::clustered_ppi_mean;
/// use polars_rag::metrics::ppi::{ppi_mean, PpiOptions};
/// // 12 items in 4 topics; the judge overrates by 0.1; items 0, 3, 6, 9 labelled.
/// let truth: Vec<f64> = (0..12).map(|i| 0.3 + 0.1 * (i / 3) as f64 + 0.02 * (i % 3) as f64).collect();
/// let topics: Vec<u64> = (0..12).map(|i| i / 3).collect();
/// let labelled: Vec<(f64, f64)> = [0, 3, 6, 9].iter().map(|&i| (truth[i], truth[i] + 0.1)).collect();
/// let unlabelled: Vec<f64> = (0..12).filter(|i| i % 3 != 0).map(|i| truth[i] + 0.1).collect();
/// let (l_ids, u_ids): (Vec<u64>, Vec<u64>) = ([0, 3, 6, 9].map(|i| topics[i]).to_vec(),
///     (0..12).filter(|i| i % 3 != 0).map(|i| topics[i]).collect());
/// let options = PpiOptions { lam: Some(1.0), ..Default::default() };
/// let clustered = clustered_ppi_mean(&labelled, &l_ids, &unlabelled, &u_ids, &options).unwrap();
/// let plain = ppi_mean(&labelled, &unlabelled, &options).unwrap();
/// assert_eq!(clustered.estimate, plain.estimate);
/// // Items of a topic move together: the clustered interval is wider.
/// assert!(clustered.ci_high - clustered.ci_low > plain.ci_high - plain.ci_low);
/// ```
pub fn clustered_ppi_mean(
    labelled: &[(f64, f64)],
    labelled_clusters: &[u64],
    unlabelled: &[f64],
    unlabelled_clusters: &[u64],
    options: &crate::metrics::ppi::PpiOptions,
) -> crate::Result<crate::metrics::ppi::PpiMean> {
    assert!(
        labelled.len() == labelled_clusters.len() && unlabelled.len() == unlabelled_clusters.len(),
        "clustered_ppi_mean: items and clusters differ in length"
    );
    let plain = crate::metrics::ppi::ppi_mean(labelled, unlabelled, options)?;
    let lam = plain.lam;
    let (n, big_n) = (labelled.len() as f64, unlabelled.len() as f64);
    let imputed_mean = unlabelled.iter().map(|f| lam * f).sum::<f64>() / big_n;
    let rectifier = |(y, f): &(f64, f64)| y - lam * f;
    let rectifier_mean = labelled.iter().map(rectifier).sum::<f64>() / n;
    let label_mean = labelled.iter().map(|p| p.0).sum::<f64>() / n;
    // CR1 variance of a sum of per-item influences, and its clusters.
    let clustered = |influences: &mut dyn Iterator<Item = (u64, f64)>| -> (f64, usize) {
        // In the order of the ids, so that the sum is the same on every run.
        let mut sums: std::collections::BTreeMap<u64, Compensated> = Default::default();
        for (g, psi) in influences {
            sums.entry(g).or_default().add(psi);
        }
        let g = sums.len();
        let squares = compensated_sum(sums.values().map(|s| s.value() * s.value()));
        (g as f64 / (g as f64 - 1.0) * squares, g)
    };
    let (ppi_variance, g) = clustered(
        &mut unlabelled_clusters
            .iter()
            .zip(unlabelled)
            .map(|(&g, f)| (g, (lam * f - imputed_mean) / big_n))
            .chain(
                labelled_clusters
                    .iter()
                    .zip(labelled)
                    .map(|(&g, p)| (g, (rectifier(p) - rectifier_mean) / n)),
            ),
    );
    let (labels_variance, g_labelled) = clustered(
        &mut labelled_clusters
            .iter()
            .zip(labelled)
            .map(|(&g, p)| (g, (p.0 - label_mean) / n)),
    );
    if g < 2 || g_labelled < 2 {
        return Err(crate::Error::input(format!(
            "ppi_mean: {} clusters among the items and {} among the labelled ones: a clustered interval needs at least 2 of each",
            g, g_labelled
        )));
    }
    let confidence = 1.0 - options.alpha;
    let (ci_low, ci_high) = t_interval(
        plain.estimate,
        ppi_variance.sqrt(),
        g as f64 - 1.0,
        confidence,
        options.alternative,
    );
    let (classical_ci_low, classical_ci_high) = t_interval(
        plain.classical_estimate,
        labels_variance.sqrt(),
        g_labelled as f64 - 1.0,
        confidence,
        options.alternative,
    );
    Ok(crate::metrics::ppi::PpiMean {
        ci_low,
        ci_high,
        classical_ci_low,
        classical_ci_high,
        ..plain
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_for_no_test() {
        assert_eq!(
            cluster_robust_mean_test(&[], &[]),
            Err(NoClusterTest::Empty)
        );
        assert_eq!(
            cluster_robust_mean_test(&[0.5, 0.5, 0.5], &[1, 2, 3]),
            Err(NoClusterTest::AllEqual)
        );
        assert_eq!(
            cluster_robust_mean_test(&[0.5, f64::NAN], &[1, 2]),
            Err(NoClusterTest::NonFinite)
        );
        assert_eq!(
            cluster_robust_mean_test(&[0.5, 0.1], &[4, 4]),
            Err(NoClusterTest::OneCluster)
        );
        // Both clusters have mean 0, the overall mean.
        assert_eq!(
            cluster_robust_mean_test(&[1.0, -1.0, 2.0, -2.0], &[1, 1, 2, 2]),
            Err(NoClusterTest::NoVariationBetweenClusters)
        );
    }

    #[test]
    fn cluster_ids_in_any_order() {
        let deltas = [0.3, 0.1, -0.2, 0.4, 0.0, 0.2];
        let a = cluster_robust_mean_test(&deltas, &[5, 9, 5, 1, 9, 1]).unwrap();
        // The same grouping, items reordered and ids renamed.
        let reordered = [0.3, -0.2, 0.1, 0.0, 0.4, 0.2];
        let b = cluster_robust_mean_test(&reordered, &[u64::MAX, u64::MAX, 0, 0, 7, 7]).unwrap();
        assert!((a.standard_error - b.standard_error).abs() < 1e-15);
        assert_eq!(a.clusters, 3);
    }
}
