//! Nugget scores of an answer, as the TREC 2024 RAG track's AutoNuggetizer computes them
//! (castorini's nuggetizer, `nuggetizer/core/metrics.py`, `calculate_nugget_scores`): the
//! nuggets (atomic facts a good answer contains, each `vital` or `okay`) are assessed against the
//! answer (`support`, `partial_support`, `not_support`), and
//!
//! * `strict_vital_score`: the share of vital nuggets supported;
//! * `strict_all_score`: the share of all nuggets supported;
//! * `vital_score` / `all_score`: the same, a partially supported nugget counting one half.
//!
//! Without nuggets (or without vital ones, for the vital scores) a score is 0, as in
//! nuggetizer. The assessment is anyone's (a judge, people); this is the scoring rule.
//!
//! ```
//! use polars_rag::metrics::nuggets::{nugget_scores, NuggetCompat};
//! let s = nugget_scores(
//!     &["vital", "vital", "okay", "okay"],
//!     &["support", "partial_support", "support", "not_support"],
//!     NuggetCompat::Standard,
//! )
//! .unwrap();
//! assert_eq!((s.strict_vital_score, s.vital_score), (0.5, 0.75));
//! assert_eq!((s.strict_all_score, s.all_score), (0.5, 0.625));
//! ```

use serde::{Deserialize, Serialize};

/// How the labels are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NuggetCompat {
    /// `vital` / `okay` and `support` / `partial_support` / `not_support` in any case (spaces
    /// around ignored); another label is an error naming it.
    #[default]
    Standard,
    /// nuggetizer's: only exactly `vital` is vital and exactly `support` / `partial_support`
    /// count; any other text counts as neither.
    Nuggetizer,
}

crate::settings::from_str_by_serde!(NuggetCompat);

/// Options of `nugget_scores`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NuggetOptions {
    /// How the labels are read.
    pub compat: NuggetCompat,
}

/// The settings behind a `nugget_scores` number.
pub fn signature(options: &NuggetOptions) -> String {
    let compat = match options.compat {
        NuggetCompat::Standard => "",
        NuggetCompat::Nuggetizer => "|compat:nuggetizer",
    };
    format!("nugget_scores{compat}|version:nuggetizer-0.0.5")
}

/// The four nugget scores, in [0, 1].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct NuggetScores {
    /// Vital nuggets supported.
    pub strict_vital_score: f64,
    /// All nuggets supported.
    pub strict_all_score: f64,
    /// Vital nuggets supported, partial support counting one half.
    pub vital_score: f64,
    /// All nuggets supported, partial support counting one half.
    pub all_score: f64,
}

/// The names of the scores, in the order of [`NuggetScores::values`].
pub const SCORE_NAMES: [&str; 4] = [
    "strict_vital_score",
    "strict_all_score",
    "vital_score",
    "all_score",
];

impl NuggetScores {
    /// The scores in the order of [`SCORE_NAMES`].
    pub fn values(&self) -> [f64; 4] {
        [
            self.strict_vital_score,
            self.strict_all_score,
            self.vital_score,
            self.all_score,
        ]
    }
}

/// How much a nugget's assessment counts: 1 supported, ½ partially, 0 not.
fn credit(assignment: &str, compat: NuggetCompat) -> crate::Result<f64> {
    match compat {
        NuggetCompat::Nuggetizer => Ok(match assignment {
            "support" => 1.0,
            "partial_support" => 0.5,
            _ => 0.0,
        }),
        NuggetCompat::Standard => match assignment.trim().to_ascii_lowercase().as_str() {
            "support" => Ok(1.0),
            "partial_support" => Ok(0.5),
            "not_support" => Ok(0.0),
            _ => Err(crate::Error::input(format!(
                "nugget_scores: unknown assignment {assignment:?} (support, partial_support or not_support)"
            ))),
        },
    }
}

fn is_vital(importance: &str, compat: NuggetCompat) -> crate::Result<bool> {
    match compat {
        NuggetCompat::Nuggetizer => Ok(importance == "vital"),
        NuggetCompat::Standard => match importance.trim().to_ascii_lowercase().as_str() {
            "vital" => Ok(true),
            "okay" => Ok(false),
            _ => Err(crate::Error::input(format!(
                "nugget_scores: unknown importance {importance:?} (vital or okay)"
            ))),
        },
    }
}

/// The four scores of one answer from its nuggets' importance and assessment (one each per
/// nugget; an error when the counts differ or, in the standard mode, a label is unknown).
pub fn nugget_scores(
    importance: &[&str],
    assignment: &[&str],
    compat: NuggetCompat,
) -> crate::Result<NuggetScores> {
    if importance.len() != assignment.len() {
        return Err(crate::Error::input(format!(
            "nugget_scores: {} importances and {} assignments: one of each per nugget",
            importance.len(),
            assignment.len()
        )));
    }
    let (mut vital, mut strict_vital, mut vital_credit) = (0usize, 0usize, 0.0f64);
    let (mut strict_all, mut all_credit) = (0usize, 0.0f64);
    for (importance, assignment) in importance.iter().zip(assignment) {
        let credit = credit(assignment, compat)?;
        let full = usize::from(credit == 1.0);
        strict_all += full;
        all_credit += credit;
        if is_vital(importance, compat)? {
            vital += 1;
            strict_vital += full;
            vital_credit += credit;
        }
    }
    let ratio = |part: f64, whole: usize| if whole > 0 { part / whole as f64 } else { 0.0 };
    Ok(NuggetScores {
        strict_vital_score: ratio(strict_vital as f64, vital),
        strict_all_score: ratio(strict_all as f64, importance.len()),
        vital_score: ratio(vital_credit, vital),
        all_score: ratio(all_credit, importance.len()),
    })
}

/// The mean of each score over answers, as nuggetizer's `calculate_global_metrics` (Python's
/// `statistics.mean`: the exact mean, rounded once). `None` without answers.
///
/// ```
/// use polars_rag::metrics::nuggets::{mean_scores, NuggetScores};
/// let a = NuggetScores { all_score: 1.0, ..Default::default() };
/// let b = NuggetScores { all_score: 0.5, ..Default::default() };
/// assert_eq!(mean_scores(&[a, b]).unwrap().all_score, 0.75);
/// ```
pub fn mean_scores(rows: &[NuggetScores]) -> Option<NuggetScores> {
    if rows.is_empty() {
        return None;
    }
    let mean = |i: usize| exact_mean(&rows.iter().map(|r| r.values()[i]).collect::<Vec<_>>());
    Some(NuggetScores {
        strict_vital_score: mean(0),
        strict_all_score: mean(1),
        vital_score: mean(2),
        all_score: mean(3),
    })
}

/// The mean of `values` rounded once: an exact sum (Shewchuk's expansion, as Python's
/// `math.fsum`), then the division.
fn exact_mean(values: &[f64]) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for &x in values {
        let mut x = x;
        let mut kept = 0;
        for i in 0..partials.len() {
            let mut y = partials[i];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let high = x + y;
            let low = y - (high - x);
            if low != 0.0 {
                partials[kept] = low;
                kept += 1;
            }
            x = high;
        }
        partials.truncate(kept);
        partials.push(x);
    }
    partials.iter().sum::<f64>() / values.len() as f64
}

impl crate::metrics::Section for NuggetOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_labels_are_errors_unless_nuggetizer() {
        let e = nugget_scores(&["vital"], &["yes"], NuggetCompat::Standard).unwrap_err();
        assert!(e.to_string().contains("unknown assignment \"yes\""), "{e}");
        let e = nugget_scores(&["Important"], &["support"], NuggetCompat::Standard).unwrap_err();
        assert!(e.to_string().contains("unknown importance"), "{e}");
        let s = nugget_scores(
            &["Vital", "vital"],
            &["support", "Support"],
            NuggetCompat::Nuggetizer,
        )
        .unwrap();
        // "Vital" is not vital and "Support" not support, to nuggetizer.
        assert_eq!((s.strict_vital_score, s.strict_all_score), (0.0, 0.5));
    }

    #[test]
    fn counts_must_match_and_nothing_scores_zero() {
        assert!(nugget_scores(&["vital"], &[], NuggetCompat::Standard).is_err());
        assert_eq!(
            nugget_scores(&[], &[], NuggetCompat::Standard).unwrap(),
            NuggetScores::default()
        );
    }
}
