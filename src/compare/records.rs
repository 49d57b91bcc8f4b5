//! What comparisons and summaries find, as data: the rows the frames, the reports and the JSON
//! are made from. Below the steps that fill them (`streamed`, `plan`) and the functions that
//! turn them into frames (`tables`).

use crate::compare::{CompareOptions, MetricComparison};

/// One item that regressed.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Regression {
    /// The metric.
    pub metric: String,
    /// The item's key (id, and sample when present).
    pub key: String,
    /// Baseline value.
    pub baseline: f64,
    /// Candidate value.
    pub candidate: f64,
    /// The baseline's answer, when the tables keep answers.
    pub baseline_answer: Option<String>,
    /// The candidate's answer.
    pub candidate_answer: Option<String>,
}

/// Everything a comparison found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TableComparison {
    /// The key columns items were matched on.
    pub keys: Vec<String>,
    /// Items in both tables.
    pub matched: usize,
    /// Keys only the baseline has (up to 20 shown) and how many.
    pub baseline_only: (usize, Vec<String>),
    /// Keys only the candidate has.
    pub candidate_only: (usize, Vec<String>),
    /// The family of tests the rows were decided with (see [`crate::compare::decide_rows`]).
    pub family: crate::compare::Family,
    /// Whether both runs are complete enough to compare: counts per run and value.
    pub integrity: crate::compare::integrity::Integrity,
    /// Per metric, over all matched items.
    pub metrics: Vec<MetricComparison>,
    /// The segment column, if any, and per segment value the same rows.
    pub segment_column: Option<String>,
    /// The cluster column, if any (see [`crate::compare::compare_clustered`]).
    pub cluster_column: Option<String>,
    /// `(segment value, rows)`.
    pub segments: Vec<(String, Vec<MetricComparison>)>,
    /// The largest drops per metric.
    pub regressions: Vec<Regression>,
    /// The settings.
    pub options: CompareOptions,
    /// Judged deltas re-estimated from labels of both runs (empty without labels; see
    /// [`crate::compare::calibrate::labelled_deltas`]).
    pub labelled: Vec<crate::compare::calibrate::LabelledDelta>,
    /// The same runs scored by another judge setting: the metrics whose delta differs, with both
    /// verdicts (empty unless asked for; see [`crate::compare::verdict_changes`]).
    pub judge_drift: Vec<crate::compare::VerdictChange>,
    /// Per judged metric with several samples per item: up to 10 items whose samples disagree.
    pub judge_flip_items: Vec<(String, Vec<String>)>,
}

impl TableComparison {
    /// Decides the rows again with `named` metrics as the family (their rows over all items and
    /// per segment) and the other rows as a second family; an error naming a metric the
    /// comparison does not have.
    pub fn decide_family_of(&mut self, named: &[String]) -> crate::Result<()> {
        use crate::text::shown::shown;
        if let Some(unknown) = named
            .iter()
            .find(|n| !self.metrics.iter().any(|m| &m.metric == *n))
        {
            let known: Vec<_> = self.metrics.iter().map(|m| shown(&m.metric)).collect();
            return Err(crate::Error::options(format!(
                "family: no metric '{}' (compared: {})",
                shown(unknown),
                known.join(", ")
            )));
        }
        let options = self.options;
        self.family = crate::compare::decide_rows(
            self.metrics.iter_mut().chain(
                self.segments
                    .iter_mut()
                    .flat_map(|(_, rows)| rows.iter_mut()),
            ),
            named,
            &options,
        );
        Ok(())
    }
}

/// One metric's mean with a bootstrap confidence interval.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MetricSummary {
    /// Segment value (`all` for the whole table).
    pub segment: String,
    /// Display name.
    pub metric: String,
    /// `mean` (a per-item metric's mean) or `corpus` (a corpus-level metric).
    pub kind: &'static str,
    /// Items with a value.
    pub n: usize,
    /// The standard deviation of the items' values (divisor n − 1; a mean of 2 items or more).
    pub sd: Option<f64>,
    /// Mean (corpus value for corpus-level metrics).
    pub mean: f64,
    /// Bootstrap interval of the mean.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// With clusters: the clusters among the items (a corpus-level metric's too).
    pub clusters: Option<usize>,
    /// With clusters: the clustered variance of the mean over its variance were the items
    /// independent (a mean, with a cluster-robust test).
    pub design_effect: Option<f64>,
    /// How `ci_low` / `ci_high` were found: `items` (the bootstrap), with clusters
    /// `cluster-robust t` (Student t with G − 1 degrees of freedom: the percentile bootstrap of
    /// few clusters falls short of its confidence), or `clusters` (the bootstrap of clusters,
    /// where there is no such test, and for a corpus-level metric).
    pub interval: &'static str,
}
