//! Planning a comparison's sample from a pilot: per metric, the items (and clusters) needed to
//! detect a delta of a given size at a given power, the smallest delta the pilot's items detect,
//! and the power they have for the delta asked about. The spread comes from the pilot's paired
//! deltas (standard deviation with divisor n − 1); clustered items count through the pilot's
//! design effect (they are worth n / design effect independent ones, and the cluster-robust test
//! has G − 1 degrees of freedom); a family of m tests is planned at its smallest Holm
//! threshold, α / m.
//!
//! Two more pilots are planned with: a judged metric scored with several samples per item in
//! both runs plans another number of samples through the judge's share of an item's delta
//! variance (the two-level bootstrap's split: the judge's part shrinks as 1 / samples, the
//! items' part stays); and a single scores table plans with an assumed correlation ρ between
//! the two runs' scores of an item (the delta's spread is the scores' times √(2(1 − ρ)), said
//! in the plan).

use serde::Serialize;

#[cfg(feature = "polars")]
use super::records::MetricSummary;
use super::stats::{
    clustered_detectable_effect, clustered_t_test_power, clusters_needed,
    minimum_detectable_effect, t_test_power, t_test_sample_size, Alternative,
};
use super::MetricComparison;

/// What to plan for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PlanOptions {
    /// The delta to detect, in the metric's own units (0.02: two points of a 0-1 score).
    pub mde: f64,
    /// The chance of detecting it.
    pub power: f64,
    /// The significance level of the whole family.
    pub alpha: f64,
    /// The tests of the family the delta must pass in (every metric × segment row the
    /// comparison will test): planned at α / tests, Holm's smallest threshold.
    pub tests: usize,
    /// The alternative hypothesis (scipy's names).
    pub alternative: Alternative,
    /// The judge's samples per item and run the comparison will score with (a judged metric
    /// whose pilot has samples in both runs); `None`: the pilot's.
    pub samples: Option<usize>,
    /// A single-table pilot's assumed correlation between the two runs' scores of an item.
    pub correlation: Option<f64>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            mde: 0.02,
            power: 0.8,
            alpha: 0.05,
            tests: 1,
            alternative: Alternative::TwoSided,
            samples: None,
            correlation: None,
        }
    }
}

impl PlanOptions {
    /// Checks the settings; the message names the option.
    pub fn validate(&self) -> crate::Result<()> {
        let problem = if !(self.mde.is_finite() && self.mde != 0.0) {
            Some(format!(
                "mde must be a finite delta other than 0, got {}",
                self.mde
            ))
        } else if !(self.power > 0.0 && self.power < 1.0) {
            Some(format!("power must be in (0, 1), got {}", self.power))
        } else if !(self.alpha > 0.0 && self.alpha < 1.0) {
            Some(format!("alpha must be in (0, 1), got {}", self.alpha))
        } else if self.tests == 0 {
            Some("tests must be at least 1".to_string())
        } else if self.samples == Some(0) {
            Some("samples must be at least 1".to_string())
        } else if self
            .correlation
            .is_some_and(|rho| !(-1.0..1.0).contains(&rho))
        {
            Some(format!(
                "correlation must be in [-1, 1) (1: the runs' scores equal, no delta to plan), got {}",
                self.correlation.unwrap_or_default()
            ))
        } else {
            None
        };
        match problem {
            Some(p) => Err(crate::Error::options(format!("plan: {p}"))),
            None => Ok(()),
        }
    }
}

/// One metric's plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanRow {
    /// The metric.
    pub metric: String,
    /// Items of the pilot with a value in both runs.
    pub pilot_items: usize,
    /// Clusters among them (with clusters).
    pub pilot_clusters: Option<usize>,
    /// The standard deviation of the pilot's paired deltas (divisor n − 1).
    pub delta_sd: Option<f64>,
    /// The pilot's design effect (1 without clusters).
    pub design_effect: f64,
    /// The delta planned for.
    pub mde: f64,
    /// mde / delta_sd: the standardized effect (Cohen's d_z).
    pub effect_size: Option<f64>,
    /// Items needed to detect `mde` with the power asked for (whole items, rounded up).
    pub items_needed: Option<f64>,
    /// Clusters needed, at the pilot's mean cluster size (with clusters).
    pub clusters_needed: Option<f64>,
    /// The smallest delta the pilot's number of items detects with that power, in the metric's
    /// units (the sign of the alternative).
    pub detectable_delta: Option<f64>,
    /// The power the pilot's number of items has for `mde`.
    pub power_at_pilot_size: Option<f64>,
    /// The judge's samples per item and run planned for (a judged metric whose pilot has them
    /// in both runs; else `None`).
    pub judge_samples: Option<f64>,
    /// The pilot's share of an item's delta variance that is the judge's own (with clusters
    /// too: of an item's, not of a cluster's).
    pub judge_share: Option<f64>,
    /// A single-table pilot's assumed correlation between the runs' scores.
    pub assumed_correlation: Option<f64>,
    /// With a labelled pilot: the items it labelled in both runs.
    pub pilot_labels: Option<usize>,
    /// With a labelled pilot: the items of the pilot's size to label in both runs for the
    /// prediction-powered delta to detect `mde` with the power (see [`with_labels`]).
    pub labels_needed: Option<f64>,
    /// Why a number is missing.
    pub reason: Option<String>,
}

/// What a plan needs of one metric of a pilot.
#[derive(Clone, Debug, PartialEq)]
pub struct PilotSpread {
    /// The metric.
    pub metric: String,
    /// A corpus-level metric (no per-item deltas).
    pub corpus: bool,
    /// Items with a value in both runs.
    pub n: usize,
    /// Clusters among them.
    pub clusters: Option<usize>,
    /// The spread of the paired deltas (divisor n − 1).
    pub delta_sd: Option<f64>,
    /// The design effect of the clustered mean (with clusters).
    pub design_effect: Option<f64>,
    /// Why a clustered pilot has no design effect.
    pub no_test_reason: Option<String>,
    /// The judge's samples per item and run (two-level pilots).
    pub judge_samples: Option<f64>,
    /// The judge's share of the delta variance (two-level pilots): of an item's, or with
    /// clusters of a cluster's, as the comparison's `judge_variance_share`.
    pub judge_share: Option<f64>,
    /// The correlation assumed between the runs (single-table pilots).
    pub assumed_correlation: Option<f64>,
}

impl PilotSpread {
    /// The spread of a pilot comparison's metric.
    pub fn of_comparison(pilot: &MetricComparison) -> PilotSpread {
        PilotSpread {
            metric: pilot.metric.clone(),
            corpus: pilot.kind == "corpus",
            n: pilot.n,
            clusters: pilot.clusters,
            delta_sd: pilot.delta_sd,
            design_effect: pilot.design_effect,
            no_test_reason: pilot.no_test_reason.clone(),
            judge_samples: pilot.judge_samples,
            judge_share: pilot.judge_variance_share,
            assumed_correlation: None,
        }
    }

    #[cfg(feature = "polars")]
    /// The spread of the delta of a metric of one scores table, were a second run's scores of
    /// the same spread correlated `correlation` with these: √(2(1 − ρ)) times the scores'
    /// standard deviation. With clusters the scores' design effect stands for the deltas'.
    pub fn of_summary(summary: &MetricSummary, correlation: f64) -> PilotSpread {
        PilotSpread {
            metric: summary.metric.clone(),
            corpus: summary.kind == "corpus",
            n: summary.n,
            clusters: summary.clusters,
            delta_sd: summary.sd.map(|sd| sd * (2.0 * (1.0 - correlation)).sqrt()),
            design_effect: summary.design_effect,
            no_test_reason: None,
            judge_samples: None,
            judge_share: None,
            assumed_correlation: Some(correlation),
        }
    }
}

/// The plan of one metric from its pilot comparison row (from a comparison of the pilot's two
/// runs; with clusters, a clustered one).
///
/// ```
/// use polars_rag::compare::plan::{plan_row, PlanOptions};
/// use polars_rag::compare::{compare_metrics, CompareOptions, MetricValues};
/// let base: Vec<f64> = (0..100).map(|i| 0.5 + 0.2 * (i as f64 * 0.7).sin()).collect();
/// let cand: Vec<f64> = base.iter().enumerate().map(|(i, b)| b + 0.01 + 0.1 * (i as f64 * 1.3).cos()).collect();
/// let pilot = &compare_metrics(&[MetricValues::mean("m", base, cand)], None, &CompareOptions::default())[0];
/// let plan = plan_row(pilot, &PlanOptions { mde: 0.02, ..Default::default() });
/// let sd = plan.delta_sd.unwrap();
/// assert!((sd - 0.0711).abs() < 1e-3);
/// // (1.96 + 0.84)² · (sd / mde)² ≈ 99 items, plus the t-test's small-sample share.
/// assert_eq!(plan.items_needed, Some(102.0));
/// assert!(plan.power_at_pilot_size.unwrap() < 0.8);
/// ```
pub fn plan_row(pilot: &MetricComparison, options: &PlanOptions) -> PlanRow {
    plan_spread(&PilotSpread::of_comparison(pilot), options)
}

/// The plan of one metric from its pilot's spread (see [`plan_row`]; [`PilotSpread`] says
/// where the spread comes from).
pub fn plan_spread(pilot: &PilotSpread, options: &PlanOptions) -> PlanRow {
    let n = pilot.n;
    let mut design_effect = pilot.design_effect.unwrap_or(1.0);
    let alpha = options.alpha / options.tests as f64;
    let mut row = PlanRow {
        metric: pilot.metric.clone(),
        pilot_items: n,
        pilot_clusters: pilot.clusters,
        delta_sd: pilot.delta_sd,
        design_effect,
        mde: options.mde,
        effect_size: None,
        items_needed: None,
        clusters_needed: None,
        detectable_delta: None,
        power_at_pilot_size: None,
        judge_samples: None,
        judge_share: pilot.judge_share,
        assumed_correlation: pilot.assumed_correlation,
        pilot_labels: None,
        labels_needed: None,
        reason: None,
    };
    let mut sd = match pilot.delta_sd {
        Some(sd) if sd > 0.0 && sd.is_finite() => sd,
        _ => {
            row.reason = Some(if pilot.corpus {
                "a corpus-level metric has no per-item deltas to plan with".to_string()
            } else {
                "the pilot's deltas do not vary (fewer than 2 items, or all equal): no spread to plan with"
                    .to_string()
            });
            return row;
        }
    };
    if pilot.clusters.is_some() && pilot.design_effect.is_none() {
        row.reason = Some(
            pilot
                .no_test_reason
                .clone()
                .unwrap_or_else(|| "the pilot's design effect is unknown".to_string()),
        );
        return row;
    }
    if let (Some(k0), Some(share)) = (pilot.judge_samples, pilot.judge_share) {
        // With clusters the two-level bootstrap's share is of the clusters' variance, the
        // design effect times an item's: Σ judge variances / (n · sd²) is the item's share.
        let share = if pilot.clusters.is_some() {
            (share * design_effect).clamp(0.0, 1.0)
        } else {
            share
        };
        row.judge_share = Some(share);
        // The judge's part of an item's delta variance, share · sd², shrinks as 1 / samples;
        // the items' part stays. The judge's noise is the item's own, so with clusters it adds
        // to the clustered variance undiluted: design effect · sd² = items' clustered part +
        // judge's part.
        let k = options.samples.map_or(k0, |k| k as f64);
        let judge = share * k0 / k;
        let factor = (1.0 - share) + judge;
        let clustered = (design_effect - share + judge).max(0.0);
        sd *= factor.sqrt();
        if pilot.clusters.is_some() {
            design_effect = clustered / factor;
        }
        row.judge_samples = Some(k);
        row.delta_sd = Some(sd);
        row.design_effect = design_effect;
    }
    let effect = options.mde / sd;
    row.effect_size = Some(effect);
    let (power, alternative) = (options.power, options.alternative);
    match pilot.clusters.filter(|&g| g >= 2) {
        None => {
            let independent = t_test_sample_size(effect, power, alpha, alternative);
            row.items_needed = independent.is_finite().then(|| independent.ceil());
            let detectable = minimum_detectable_effect(n as f64, power, alpha, alternative);
            row.detectable_delta = detectable.is_finite().then_some(detectable * sd);
            let at_pilot = t_test_power(effect, n as f64, alpha, alternative);
            row.power_at_pilot_size = at_pilot.is_finite().then_some(at_pilot);
        }
        Some(g) => {
            // The cluster-robust test: n / design effect items' worth of information and
            // G − 1 degrees of freedom, at the pilot's mean cluster size.
            let size = n as f64 / g as f64;
            let clusters = clusters_needed(effect, power, alpha, alternative, size, design_effect);
            if clusters.is_finite() {
                let clusters = clusters.ceil();
                row.clusters_needed = Some(clusters);
                row.items_needed = Some((clusters * size).ceil());
            }
            let (n, g) = (n as f64, g as f64);
            let detectable =
                clustered_detectable_effect(n, design_effect, g, power, alpha, alternative);
            row.detectable_delta = detectable.is_finite().then_some(detectable * sd);
            let at_pilot = clustered_t_test_power(effect, n, design_effect, g, alpha, alternative);
            row.power_at_pilot_size = at_pilot.is_finite().then_some(at_pilot);
        }
    }
    if row.items_needed.is_none() {
        row.reason = Some(format!(
            "no number of items detects a delta of {} under the alternative {}",
            options.mde,
            options.alternative.name()
        ));
    }
    row
}

/// The variance the prediction-powered delta needs to detect `mde` with the plan's power at
/// α / tests: its interval is a normal one, so (mde / (z(1 − α/2) + z(power)))² two-sided,
/// z(1 − α) one-sided.
///
/// ```
/// use polars_rag::compare::plan::{target_variance, PlanOptions};
/// let v = target_variance(&PlanOptions { mde: 0.028, ..Default::default() });
/// // (1.96 + 0.8416)² · se² = 0.028²: se = 0.01.
/// assert!((v.sqrt() - 0.01).abs() < 1e-5);
/// ```
pub fn target_variance(options: &PlanOptions) -> f64 {
    use crate::metrics::stats::normal_quantile;
    let alpha = options.alpha / options.tests as f64;
    let z_alpha = match options.alternative {
        Alternative::TwoSided => normal_quantile(1.0 - alpha / 2.0),
        Alternative::Greater | Alternative::Less => normal_quantile(1.0 - alpha),
    };
    let se = options.mde.abs() / (z_alpha + normal_quantile(options.power));
    se * se
}

#[cfg(feature = "polars")]
/// A plan's rows with the labels each judged value needs (from
/// [`labels_needed`](super::calibrate::labels_needed) at [`target_variance`]); a value the
/// labels name that the plan has no row for is left out.
pub fn with_labels(rows: &mut [PlanRow], labels: &[super::calibrate::LabelsNeeded]) {
    for needed in labels {
        if let Some(row) = rows.iter_mut().find(|r| r.metric == needed.metric) {
            row.pilot_labels = Some(needed.pilot_labels);
            row.labels_needed = needed.labels.map(|n| n as f64);
            if let Some(reason) = &needed.reason {
                row.reason = Some(match row.reason.take() {
                    Some(earlier) => format!("{earlier}; labels: {reason}"),
                    None => format!("labels: {reason}"),
                });
            }
        }
    }
}
