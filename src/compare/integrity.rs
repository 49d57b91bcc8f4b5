//! Run integrity: before any delta, whether both runs are complete enough to compare. Per run
//! and per compared value: the rows, the values scored, the values missing (null, or not a
//! number) and the judge's errors; the items each run lacks. A gated value whose completed
//! share is below a floor, or differs between the runs by more than a point, stops the gate: an
//! incomplete run is neither a regression nor a pass.

use serde::Serialize;

/// One run's counts for one value, over all its rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RunCounts {
    /// Rows of the run's table.
    pub rows: usize,
    /// Rows with a value (a finite number).
    pub scored: usize,
    /// Rows without one (null, NaN or infinite).
    pub missing: usize,
    /// Rows whose judge gave no verdict (a non-null `judge_error`; judged metrics only).
    pub judge_errors: usize,
    /// Of the scored rows, those of a value judged with several samples per item.
    pub sampled_rows: usize,
    /// The judge's samples those rows hold.
    pub samples: usize,
    /// The most samples a row holds (what the run was scored with).
    pub max_samples: usize,
}

impl RunCounts {
    /// The judge's samples the sampled rows lack (a sample call that failed leaves the row's
    /// mean over fewer): each row's shortfall from the most any row holds, summed.
    ///
    /// ```
    /// use polars_rag::compare::integrity::RunCounts;
    /// let mut counts = RunCounts::default();
    /// for held in [3, 3, 2, 1] {
    ///     counts.add(0.5);
    ///     counts.add_samples(held);
    /// }
    /// assert_eq!(counts.samples_missing(), 3);
    /// ```
    pub fn samples_missing(&self) -> usize {
        (self.max_samples * self.sampled_rows).saturating_sub(self.samples)
    }

    /// Counts a scored row's judge samples.
    pub fn add_samples(&mut self, held: usize) {
        self.sampled_rows += 1;
        self.samples += held;
        self.max_samples = self.max_samples.max(held);
    }

    /// Counts one row.
    pub fn add(&mut self, value: f64) {
        self.rows += 1;
        if value.is_finite() {
            self.scored += 1;
        } else {
            self.missing += 1;
        }
    }
}

/// One value's counts in both runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValueIntegrity {
    /// The value's display name (`rouge.rougeL.fmeasure`).
    pub metric: String,
    /// The baseline's counts.
    pub baseline: RunCounts,
    /// The candidate's.
    pub candidate: RunCounts,
    /// The baseline's scored values over the items expected.
    pub baseline_complete: f64,
    /// The candidate's.
    pub candidate_complete: f64,
}

/// Both runs' completeness.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Integrity {
    /// The items expected: those of either run (every key of both tables).
    pub expected: usize,
    /// Rows of the baseline table.
    pub baseline_rows: usize,
    /// Rows of the candidate table.
    pub candidate_rows: usize,
    /// Items only the baseline has.
    pub baseline_only: usize,
    /// Items only the candidate has.
    pub candidate_only: usize,
    /// Per compared value (corpus-level statistics excepted).
    pub values: Vec<ValueIntegrity>,
}

impl Integrity {
    /// The integrity of two runs with `values`' counts: items expected are those of either run.
    pub fn new(
        matched: usize,
        baseline_only: usize,
        candidate_only: usize,
        values: Vec<(String, RunCounts, RunCounts)>,
    ) -> Integrity {
        let expected = matched + baseline_only + candidate_only;
        let share = |scored: usize| {
            if expected == 0 {
                f64::NAN
            } else {
                scored as f64 / expected as f64
            }
        };
        Integrity {
            expected,
            baseline_rows: matched + baseline_only,
            candidate_rows: matched + candidate_only,
            baseline_only,
            candidate_only,
            values: values
                .into_iter()
                .map(|(metric, baseline, candidate)| ValueIntegrity {
                    baseline_complete: share(baseline.scored),
                    candidate_complete: share(candidate.scored),
                    metric,
                    baseline,
                    candidate,
                })
                .collect(),
        }
    }
}

/// The default floor of a gated value's completed share in each run.
pub const DEFAULT_MIN_COMPLETE: f64 = 0.99;

/// How far the two runs' completed shares of a gated value may differ (one point).
pub const MAX_COMPLETE_GAP: f64 = 0.01;

/// One sentence per gated value (`gated`: the gates' metric names) that is too incomplete to
/// gate on: its completed share below `min_complete` in a run, or the runs' shares more than a
/// point apart. Empty: the gate may decide. `min_complete` 0 checks nothing (a value that is
/// null by design where it does not apply, say): the gate then decides on the items both runs
/// have a value for.
///
/// ```
/// use polars_rag::compare::integrity::{check_integrity, Integrity, RunCounts};
/// let run = |scored, errors| RunCounts { rows: 100, scored, missing: 100 - scored, judge_errors: errors, ..Default::default() };
/// let integrity = Integrity::new(100, 0, 0, vec![
///     ("faithfulness.score".into(), run(100, 0), run(90, 10)),
///     ("mrr".into(), run(100, 0), run(100, 0)),
/// ]);
/// let problems = check_integrity(&["faithfulness.score", "mrr"], &integrity, 0.99);
/// assert_eq!(problems.len(), 1);
/// assert!(problems[0].starts_with("faithfulness.score: the candidate has a value for 90 of 100 items (90.0%"));
/// ```
pub fn check_integrity(gated: &[&str], integrity: &Integrity, min_complete: f64) -> Vec<String> {
    use crate::text::shown::shown;
    let mut problems = Vec::new();
    if min_complete <= 0.0 {
        return problems;
    }
    for value in integrity
        .values
        .iter()
        .filter(|v| gated.contains(&v.metric.as_str()))
    {
        let runs = [
            ("baseline", value.baseline, value.baseline_complete),
            ("candidate", value.candidate, value.candidate_complete),
        ];
        let mut reasons = Vec::new();
        for (run, counts, share) in runs {
            // A NaN share (no item expected) is incomplete too.
            if share.is_nan() || share < min_complete {
                reasons.push(format!(
                    "the {run} has a value for {} of {} items ({:.1}%, below the {:.1}% required; {} missing, {} judge errors)",
                    counts.scored,
                    integrity.expected,
                    share * 100.0,
                    min_complete * 100.0,
                    integrity.expected - counts.scored,
                    counts.judge_errors
                ));
            }
        }
        let gap = (value.baseline_complete - value.candidate_complete).abs();
        // A point exactly is allowed: 1.0 − 0.99 is a hair above 0.01 in floating point.
        if gap > MAX_COMPLETE_GAP + 1e-12 {
            reasons.push(format!(
                "the runs' completed shares differ by {:.1} points ({:.1}% and {:.1}%), more than {:.0}",
                gap * 100.0,
                value.baseline_complete * 100.0,
                value.candidate_complete * 100.0,
                MAX_COMPLETE_GAP * 100.0
            ));
        }
        if !reasons.is_empty() {
            problems.push(format!("{}: {}", shown(&value.metric), reasons.join("; ")));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(rows: usize, scored: usize) -> RunCounts {
        RunCounts {
            rows,
            scored,
            missing: rows - scored,
            judge_errors: 0,
            ..Default::default()
        }
    }

    #[test]
    fn items_one_run_lacks_count_against_it() {
        // 98 items in both runs, 2 only in the baseline: the candidate has 98 of 100.
        let integrity = Integrity::new(
            98,
            2,
            0,
            vec![("m".into(), counts(100, 100), counts(98, 98))],
        );
        assert_eq!(integrity.expected, 100);
        let problems = check_integrity(&["m"], &integrity, 0.99);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("the candidate has a value for 98 of 100 items (98.0%"));
        assert!(problems[0].contains("differ by 2.0 points"));
        // An ungated value is not checked; a floor met in both runs with a gap of a point passes.
        assert!(check_integrity(&["other"], &integrity, 0.99).is_empty());
        let close = Integrity::new(
            100,
            0,
            0,
            vec![("m".into(), counts(100, 100), counts(100, 99))],
        );
        assert!(check_integrity(&["m"], &close, 0.99).is_empty());
        // 0: nothing is checked.
        assert!(check_integrity(&["m"], &integrity, 0.0).is_empty());
    }

    #[test]
    fn an_empty_comparison_is_incomplete() {
        let empty = Integrity::new(0, 0, 0, vec![("m".into(), counts(0, 0), counts(0, 0))]);
        assert_eq!(check_integrity(&["m"], &empty, 0.99).len(), 1);
    }
}
