//! Prediction-powered inference (PPI) of a mean: the mean of a judged quantity over many items,
//! estimated from the judge's scores on all of them and human labels on a few, with a confidence
//! interval that stays valid however wrong the judge is. The judge's mean is corrected by the
//! labelled items' mean error, weighted by λ; PPI++ tunes λ to the variance it saves (λ = 1:
//! plain PPI, λ = 0: the labels alone). The numbers are those of `ppi_python` 0.2.x
//! (`ppi_mean_pointestimate`, `ppi_mean_ci`, `classical_mean_ci`), with two defects fixed
//! unless `compat = "ppi_py"`: when it tunes λ, `ppi_mean_ci` forgets `alternative` and gives
//! a two-sided interval; and for a judge that gave every item the same score its tuned λ is 0/0,
//! NaN (or, where its sums leave a rounding residue, an arbitrary λ), where the standard mode
//! takes λ = 0, the labels' estimate and interval.
//!
//! ```
//! use polars_rag::metrics::ppi::{ppi_mean, PpiOptions};
//! // Six labelled items (label, judge) and four the judge scored alone.
//! let labelled = [(1.0, 1.0), (0.0, 1.0), (1.0, 1.0), (1.0, 0.0), (0.0, 0.0), (1.0, 1.0)];
//! let unlabelled = [1.0, 0.0, 1.0, 1.0];
//! let ppi = ppi_mean(&labelled, &unlabelled, &PpiOptions { lam: Some(1.0), ..PpiOptions::default() }).unwrap();
//! // λ = 1: the judge's mean on the unlabelled items plus the mean error on the labelled ones.
//! assert!((ppi.estimate - (0.75 + (4.0 - 4.0) / 6.0)).abs() < 1e-15);
//! assert!(ppi.ci_low < ppi.estimate && ppi.estimate < ppi.ci_high);
//! assert_eq!((ppi.n_labelled, ppi.n_unlabelled), (6, 4));
//! ```

use serde::{Deserialize, Serialize};

use super::numpy::numpy_sum;
use super::stats::{normal_interval, Alternative};

/// Options of `ppi_mean`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PpiOptions {
    /// The error level: the interval covers the true mean with probability 1 − `alpha`.
    pub alpha: f64,
    /// Two-sided, or a one-sided interval (`greater`: a lower bound; `less`: an upper bound).
    pub alternative: Alternative,
    /// The weight of the judge. `None`: PPI++, tuned from the data and clipped to [0, 1];
    /// 1: plain PPI; 0: the labels alone.
    pub lam: Option<f64>,
    /// `standard`, or `ppi_py` (its tuned interval is two-sided whatever `alternative` says).
    pub compat: PpiCompat,
}

impl Default for PpiOptions {
    fn default() -> Self {
        PpiOptions {
            alpha: 0.05,
            alternative: Alternative::TwoSided,
            lam: None,
            compat: PpiCompat::Standard,
        }
    }
}

/// Which definitions to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PpiCompat {
    /// `alternative` honoured everywhere.
    #[default]
    Standard,
    /// `ppi_python`'s numbers, its dropped `alternative` included.
    PpiPy,
}

crate::settings::from_str_by_serde!(PpiCompat);

impl PpiOptions {
    /// Checks the options; the message names the metric and the option.
    pub fn validate(&self, metric: &str) -> crate::Result<()> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(crate::Error::options(format!(
                "{metric}: alpha must be in (0, 1), got {}",
                self.alpha
            )));
        }
        if let Some(lam) = self.lam
            && !lam.is_finite()
        {
            return Err(crate::Error::options(format!(
                "{metric}: lam must be a finite number, got {lam}"
            )));
        }
        Ok(())
    }
}

/// The estimate and its interval, beside the labels-only (classical) ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PpiMean {
    /// The prediction-powered estimate of the mean.
    pub estimate: f64,
    /// The interval's lower end (−∞ for `less`).
    pub ci_low: f64,
    /// The interval's upper end (+∞ for `greater`).
    pub ci_high: f64,
    /// The weight of the judge used.
    pub lam: f64,
    /// Items with a label (and a judge score).
    pub n_labelled: usize,
    /// Items with a judge score only.
    pub n_unlabelled: usize,
    /// The mean of the labels alone.
    pub classical_estimate: f64,
    /// The labels-only interval's lower end.
    pub classical_ci_low: f64,
    /// The labels-only interval's upper end.
    pub classical_ci_high: f64,
}

/// numpy's `mean` (pairwise summation).
fn mean(values: &[f64]) -> f64 {
    numpy_sum(values) / values.len() as f64
}

/// numpy's `std` (ddof 0): the root of the mean squared deviation from the mean.
fn std(values: &[f64]) -> f64 {
    let m = mean(values);
    let squared: Vec<f64> = values.iter().map(|v| (v - m) * (v - m)).collect();
    (numpy_sum(&squared) / values.len() as f64).sqrt()
}

/// The estimate with weight `lam`: λ · mean(judge, unlabelled) + mean(label − λ · judge).
fn point_estimate(labels: &[f64], judged: &[f64], unlabelled: &[f64], lam: f64) -> f64 {
    let imputed: Vec<f64> = unlabelled.iter().map(|y| lam * y).collect();
    let rectifier: Vec<f64> = labels
        .iter()
        .zip(judged)
        .map(|(y, j)| y - lam * j)
        .collect();
    mean(&imputed) + mean(&rectifier)
}

/// PPI++'s λ: the covariance of labels and judge scores over the judge's variance (all items),
/// scaled by 1 + n/N, clipped to [0, 1]; `None` when the judge's scores do not vary.
fn tuned_lam(labels: &[f64], judged: &[f64], unlabelled: &[f64]) -> Option<f64> {
    let (n, big_n) = (labels.len() as f64, unlabelled.len() as f64);
    let theta = point_estimate(labels, judged, unlabelled, 1.0);
    let grads: Vec<f64> = labels.iter().map(|y| y - theta).collect();
    let grads_hat: Vec<f64> = judged.iter().map(|y| y - theta).collect();
    let (g_mean, h_mean) = (mean(&grads), mean(&grads_hat));
    let cross: f64 = grads
        .iter()
        .zip(&grads_hat)
        .map(|(g, h)| (g - g_mean) * (h - h_mean))
        .sum();
    let cov_grads = (cross + cross) / n;
    let all: Vec<f64> = grads_hat
        .iter()
        .copied()
        .chain(unlabelled.iter().map(|y| y - theta))
        .collect();
    let all_mean = mean(&all);
    let squared: Vec<f64> = all
        .iter()
        .map(|v| (v - all_mean) * (v - all_mean))
        .collect();
    let var_hat = numpy_sum(&squared) / (all.len() as f64 - 1.0);
    let lam = cov_grads / (2.0 * (1.0 + n / big_n) * var_hat);
    lam.is_finite().then(|| lam.clamp(0.0, 1.0))
}

/// The spreads behind the interval: of λ · judge on the unlabelled items, and of
/// label − λ · judge on the labelled ones (numpy's `std`).
fn spreads(labels: &[f64], judged: &[f64], unlabelled: &[f64], lam: f64) -> (f64, f64) {
    let imputed: Vec<f64> = unlabelled.iter().map(|y| lam * y).collect();
    let rectifier: Vec<f64> = labels
        .iter()
        .zip(judged)
        .map(|(y, j)| y - lam * j)
        .collect();
    (std(&imputed), std(&rectifier))
}

/// The PPI estimate of the mean of the labels, from `labelled` (label, judge score) pairs and
/// the judge's scores on `unlabelled` items. With λ tuned, a judge that gave every item the same
/// score gets λ = 0 (the labels' estimate and interval), or with `compat = "ppi_py"` no estimate,
/// as ppi_python's NaN. An error says why there is none: no labelled item, no unlabelled item,
/// or (with λ tuned) that NaN, or scores varying too little for their variance to be a number.
pub fn ppi_mean(
    labelled: &[(f64, f64)],
    unlabelled: &[f64],
    options: &PpiOptions,
) -> crate::Result<PpiMean> {
    options.validate("ppi_mean")?;
    let why = |what: &str| Err(crate::Error::input(format!("ppi_mean: {what}")));
    if labelled.is_empty() {
        return why(
            "no labelled item (a label and a judge score): nothing to correct the judge with",
        );
    }
    if unlabelled.is_empty() {
        return why("no item has a judge score without a label: use the labels' mean");
    }
    if labelled
        .iter()
        .any(|(y, j)| !y.is_finite() || !j.is_finite())
        || unlabelled.iter().any(|y| !y.is_finite())
    {
        return why("a label or a judge score is not a finite number");
    }
    let labels: Vec<f64> = labelled.iter().map(|p| p.0).collect();
    let judged: Vec<f64> = labelled.iter().map(|p| p.1).collect();
    let (lam, alternative) = match options.lam {
        Some(lam) => (lam, options.alternative),
        None => {
            // A judge that gave every item the same score tells nothing: PPI++'s λ is 0/0. Its
            // rounding residues would decide between no number and an arbitrary λ (ppi_python
            // meets either, by how its sums round), so the judge is recognised here: the
            // standard mode weighs it down to nothing (λ = 0, the labels' estimate and
            // interval), and compat mode gives ppi_python's NaN.
            let same_score = judged.iter().chain(unlabelled).all(|&j| j == judged[0]);
            let tuned = if same_score {
                match options.compat {
                    PpiCompat::Standard => Some(0.0),
                    PpiCompat::PpiPy => None,
                }
            } else {
                tuned_lam(&labels, &judged, unlabelled)
            };
            let Some(lam) = tuned else {
                return why(match options.compat {
                    PpiCompat::PpiPy if same_score => {
                        "the judge gave every item the same score: ppi_python's tuned λ is 0/0 and its estimate and interval are NaN (compat = \"ppi_py\"; set lam, or leave compat for the labels' interval)"
                    }
                    _ => "the judge's scores hardly vary, so its weight cannot be tuned: set lam",
                });
            };
            let alternative = match options.compat {
                PpiCompat::Standard => options.alternative,
                PpiCompat::PpiPy => Alternative::TwoSided,
            };
            (lam, alternative)
        }
    };
    let (n, big_n) = (labels.len() as f64, unlabelled.len() as f64);
    let estimate = point_estimate(&labels, &judged, unlabelled, lam);
    let (imputed_std, rectifier_std) = spreads(&labels, &judged, unlabelled, lam);
    let imputed_se = imputed_std / big_n.sqrt();
    let rectifier_se = rectifier_std / n.sqrt();
    let se = (imputed_se * imputed_se + rectifier_se * rectifier_se).sqrt();
    let classical_estimate = mean(&labels);
    let classical_se = std(&labels) / n.sqrt();
    if ![estimate, se, classical_estimate, classical_se]
        .iter()
        .all(|v| v.is_finite())
    {
        return why("the scores or labels are too large: their mean or variance overflows");
    }
    let (ci_low, ci_high) = normal_interval(estimate, se, options.alpha, alternative);
    let (classical_ci_low, classical_ci_high) = normal_interval(
        classical_estimate,
        classical_se,
        options.alpha,
        options.alternative,
    );
    Ok(PpiMean {
        estimate,
        ci_low,
        ci_high,
        lam,
        n_labelled: labels.len(),
        n_unlabelled: unlabelled.len(),
        classical_estimate,
        classical_ci_low,
        classical_ci_high,
    })
}

/// How many more of the unlabelled items would have to be labelled for [`ppi_mean`]'s interval
/// to be half as wide: an estimate, from the spreads measured now (the labels' variance, the
/// judge's variance over all items, their covariance over the labelled ones). Labelling an item
/// moves it from the judge-only side to the labelled side; with λ tuned (PPI++) the judge's
/// weight is re-tuned for each count, as `ppi_mean` would on the new labels, and with λ fixed it
/// stays. `None` when labelling every item would not halve it (with few items the interval is
/// bounded by their number: more items would); an error when `ppi_mean` has no interval.
///
/// ```
/// use polars_rag::metrics::ppi::{labels_to_halve, PpiOptions};
/// let labelled: Vec<(f64, f64)> = (0..40).map(|i| ((i % 2) as f64, ((i % 3) % 2) as f64)).collect();
/// let unlabelled: Vec<f64> = (0..2000).map(|i| (i % 2) as f64).collect();
/// let fixed = PpiOptions { lam: Some(0.0), ..PpiOptions::default() };
/// // λ = 0 is the labels alone: four times the labels halve the width.
/// assert_eq!(labels_to_halve(&labelled, &unlabelled, &fixed).unwrap(), Some(120));
/// ```
pub fn labels_to_halve(
    labelled: &[(f64, f64)],
    unlabelled: &[f64],
    options: &PpiOptions,
) -> crate::Result<Option<usize>> {
    let lam_now = ppi_mean(labelled, unlabelled, options)?.lam;
    let labels: Vec<f64> = labelled.iter().map(|p| p.0).collect();
    let judged: Vec<f64> = labelled.iter().map(|p| p.1).collect();
    let (imputed_std, rectifier_std) = spreads(&labels, &judged, unlabelled, lam_now);
    let (n, big_n) = (labels.len(), unlabelled.len());
    let now = imputed_std * imputed_std / big_n as f64 + rectifier_std * rectifier_std / n as f64;
    let target = now / 4.0;
    // Nothing to halve when the interval has no width (or its width is not a number).
    if target.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Ok(None);
    }
    let projection = Projection::of(&labels, &judged, unlabelled);
    Ok((1..=big_n).find(|&more| {
        projection
            .variance(n + more, big_n - more, options.lam)
            .is_some_and(|v| v <= target)
    }))
}

/// How many of `items` judged items must carry a label for [`ppi_mean`]'s variance to be at
/// most `target` (the squared standard error a planned comparison needs), projected from the
/// spreads of a pilot as [`labels_to_halve`] projects them (λ re-tuned for each count, or
/// fixed). `None` when no number of labels among `items` gets there (more items would); an
/// error when the pilot has no PPI estimate.
///
/// ```
/// use polars_rag::metrics::ppi::{labels_for_variance, PpiOptions};
/// let labelled: Vec<(f64, f64)> = (0..40).map(|i| ((i % 2) as f64, ((i % 3) % 2) as f64)).collect();
/// let unlabelled: Vec<f64> = (0..2000).map(|i| (i % 2) as f64).collect();
/// let labels_only = PpiOptions { lam: Some(0.0), ..PpiOptions::default() };
/// // λ = 0: the labels' variance, 0.25, over n labels: 0.25 / 0.0025 = 100 labels.
/// assert_eq!(labels_for_variance(&labelled, &unlabelled, &labels_only, 2040, 0.0025).unwrap(), Some(100));
/// assert_eq!(labels_for_variance(&labelled, &unlabelled, &labels_only, 50, 0.0025).unwrap(), None);
/// ```
pub fn labels_for_variance(
    labelled: &[(f64, f64)],
    unlabelled: &[f64],
    options: &PpiOptions,
    items: usize,
    target: f64,
) -> crate::Result<Option<usize>> {
    ppi_mean(labelled, unlabelled, options)?;
    let labels: Vec<f64> = labelled.iter().map(|p| p.0).collect();
    let judged: Vec<f64> = labelled.iter().map(|p| p.1).collect();
    let projection = Projection::of(&labels, &judged, unlabelled);
    Ok((1..=items).find(|&n| {
        projection
            .variance(n, items - n, options.lam)
            .is_some_and(|v| v <= target)
    }))
}

/// The moments a projection of PPI's variance to other label counts keeps (numpy's ddof 0):
/// the labels' variance, the judge's over the labelled items and over all items, and their
/// covariance over the labelled. The rectifier's variance, var(label − λ·judge), is a small
/// difference of large moments when the judge is good, so it is taken from the labelled items'
/// moments alone (consistent with each other); the judge's variance over all items tunes λ and
/// weighs the judge-only items, as PPI++ does.
struct Projection {
    label_variance: f64,
    labelled_judge_variance: f64,
    judge_variance: f64,
    covariance: f64,
}

impl Projection {
    fn of(labels: &[f64], judged: &[f64], unlabelled: &[f64]) -> Projection {
        let variance_of = |values: &[f64]| std(values).powi(2);
        let all_judged: Vec<f64> = judged.iter().chain(unlabelled).copied().collect();
        let (label_mean, judge_mean) = (mean(labels), mean(judged));
        let covariance = numpy_sum(
            &labels
                .iter()
                .zip(judged)
                .map(|(y, j)| (y - label_mean) * (j - judge_mean))
                .collect::<Vec<_>>(),
        ) / labels.len() as f64;
        Projection {
            label_variance: variance_of(labels),
            labelled_judge_variance: variance_of(judged),
            judge_variance: variance_of(&all_judged),
            covariance,
        }
    }

    /// PPI's variance with `labelled` labelled items and `judge_only` judged-only ones, λ
    /// re-tuned (`lam` `None`) or fixed; `None` where a fixed λ has no judge-only item.
    fn variance(&self, labelled: usize, judge_only: usize, lam: Option<f64>) -> Option<f64> {
        let (labelled_now, judge_only) = (labelled as f64, judge_only as f64);
        let lam = match lam {
            Some(_) if judge_only == 0.0 => return None, // a fixed λ needs judge-only items
            Some(lam) => lam,
            None if judge_only == 0.0 => 0.0,
            None => (self.covariance / ((1.0 + labelled_now / judge_only) * self.judge_variance))
                .clamp(0.0, 1.0),
        };
        let rectifier = self.label_variance - 2.0 * lam * self.covariance
            + lam * lam * self.labelled_judge_variance;
        let judge_part = if judge_only > 0.0 {
            lam * lam * self.judge_variance / judge_only
        } else {
            0.0
        };
        Some(rectifier / labelled_now + judge_part)
    }
}

/// The settings behind a `ppi_mean` number.
pub fn signature(options: &PpiOptions) -> String {
    let lam = options
        .lam
        .map_or_else(|| "tuned".to_string(), |l| l.to_string());
    let compat = match options.compat {
        PpiCompat::Standard => String::new(),
        PpiCompat::PpiPy => "|compat:ppi_py".to_string(),
    };
    format!(
        "ppi_mean|alpha:{}|alt:{}|lam:{lam}{compat}|version:ppi_python-0.2",
        options.alpha,
        options.alternative.name()
    )
}

impl crate::metrics::Section for PpiOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }
}
