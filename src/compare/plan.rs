//! Planning a comparison's sample from a pilot: per metric, the items (and clusters) needed to
//! detect a delta of a given size at a given power, the smallest delta the pilot's items detect,
//! and the power they have for the delta asked about. The spread comes from the pilot's paired
//! deltas (standard deviation with divisor n − 1); clustered items count through the pilot's
//! design effect (they are worth n / design effect independent ones, and the cluster-robust test
//! has G − 1 degrees of freedom); a family of m tests is planned at its smallest Holm
//! threshold, α / m.

use serde::Serialize;

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
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            mde: 0.02,
            power: 0.8,
            alpha: 0.05,
            tests: 1,
            alternative: Alternative::TwoSided,
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
    /// Why a number is missing.
    pub reason: Option<String>,
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
    let n = pilot.n;
    let design_effect = pilot.design_effect.unwrap_or(1.0);
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
        reason: None,
    };
    let sd = match pilot.delta_sd {
        Some(sd) if sd > 0.0 && sd.is_finite() => sd,
        _ => {
            row.reason = Some(if pilot.kind == "corpus" {
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
