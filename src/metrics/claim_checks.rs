//! Claim-level scores of an answer from entailment verdicts, as RAGChecker computes them
//! (`ragchecker/computation.py`, 0.1.9): the claims of the response and of the reference answer
//! are each checked against the other answer and against every retrieved chunk, and eleven
//! scores follow from the four verdict tables. The checking is anyone's (a judge, an NLI model,
//! people); this is the scoring rule, equal to RAGChecker's on recorded verdicts.
//!
//! * `precision`: the share of response claims the reference entails; `recall`: the share of
//!   reference claims the response entails; `f1` their harmonic mean.
//! * `claim_recall`: the share of reference claims some chunk entails; `context_precision`: the
//!   share of chunks that entail some reference claim.
//! * `context_utilization`: of the reference claims some chunk entails, the share the response
//!   also entails.
//! * `noise_sensitivity_in_relevant` / `_in_irrelevant`: the share of response claims that are
//!   wrong (not entailed by the reference) yet entailed by a relevant chunk (one entailing a
//!   reference claim) / only by irrelevant chunks.
//! * `hallucination`: wrong response claims no chunk entails; `self_knowledge`: correct ones no
//!   chunk entails; `faithfulness`: response claims some chunk entails.
//!
//! An empty table gives 0, as in RAGChecker. Every row of a verdict-per-chunk table must have
//! one verdict per chunk, the same number in both tables.
//!
//! ```
//! use polars_rag::metrics::claim_checks::{claim_check_scores, parse_verdicts, ClaimCheckCompat};
//! let labels = |v: &[&str]| parse_verdicts(v, ClaimCheckCompat::Standard).unwrap();
//! // Two response claims (the second not in the reference), one reference claim, two chunks.
//! let s = claim_check_scores(
//!     &labels(&["entailment", "neutral"]),
//!     &labels(&["entailment"]),
//!     &[labels(&["entailment", "neutral"]), labels(&["neutral", "neutral"])],
//!     &[labels(&["entailment", "neutral"])],
//! )
//! .unwrap();
//! assert_eq!((s.precision, s.recall, s.faithfulness, s.hallucination), (0.5, 1.0, 0.5, 0.5));
//! assert_eq!((s.claim_recall, s.context_precision), (1.0, 0.5));
//! ```

use serde::{Deserialize, Serialize};

use super::numpy::numpy_sum;

/// Which reading of the verdicts and which report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimCheckCompat {
    /// Labels `entailment` / `neutral` / `contradiction` in any case; any other label is an
    /// error naming it. The dataset aggregate is the mean of each score, in [0, 1].
    #[default]
    Standard,
    /// RAGChecker's: a verdict entails when it is exactly `Entailment`, any other text does not;
    /// the dataset aggregate is its report's (the mean × 100, rounded to one decimal as numpy
    /// rounds).
    Ragchecker,
}

crate::settings::from_str_by_serde!(ClaimCheckCompat);

/// Options of `claim_check_scores`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClaimCheckOptions {
    /// How the verdicts are read.
    pub compat: ClaimCheckCompat,
}

/// The settings behind a `claim_check_scores` number.
pub fn signature(options: &ClaimCheckOptions) -> String {
    let compat = match options.compat {
        ClaimCheckCompat::Standard => "",
        ClaimCheckCompat::Ragchecker => "|compat:ragchecker",
    };
    format!("claim_check_scores{compat}|version:ragchecker-0.1.9")
}

/// The eleven scores of RAGChecker, in [0, 1].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ClaimCheckScores {
    /// Response claims the reference entails.
    pub precision: f64,
    /// Reference claims the response entails.
    pub recall: f64,
    /// The harmonic mean of precision and recall (0 when either is 0).
    pub f1: f64,
    /// Reference claims some chunk entails.
    pub claim_recall: f64,
    /// Chunks that entail some reference claim.
    pub context_precision: f64,
    /// Of the reference claims the chunks entail, those the response entails too.
    pub context_utilization: f64,
    /// Wrong response claims entailed by a relevant chunk.
    pub noise_sensitivity_in_relevant: f64,
    /// Wrong response claims entailed only by irrelevant chunks.
    pub noise_sensitivity_in_irrelevant: f64,
    /// Wrong response claims no chunk entails.
    pub hallucination: f64,
    /// Correct response claims no chunk entails.
    pub self_knowledge: f64,
    /// Response claims some chunk entails.
    pub faithfulness: f64,
}

/// The names of the scores, in the order of [`ClaimCheckScores::values`].
pub const SCORE_NAMES: [&str; 11] = [
    "precision",
    "recall",
    "f1",
    "claim_recall",
    "context_precision",
    "context_utilization",
    "noise_sensitivity_in_relevant",
    "noise_sensitivity_in_irrelevant",
    "hallucination",
    "self_knowledge",
    "faithfulness",
];

impl ClaimCheckScores {
    /// The scores in the order of [`SCORE_NAMES`].
    pub fn values(&self) -> [f64; 11] {
        [
            self.precision,
            self.recall,
            self.f1,
            self.claim_recall,
            self.context_precision,
            self.context_utilization,
            self.noise_sensitivity_in_relevant,
            self.noise_sensitivity_in_irrelevant,
            self.hallucination,
            self.self_knowledge,
            self.faithfulness,
        ]
    }

    /// The scores from their values in the order of [`SCORE_NAMES`].
    pub fn from_values(v: [f64; 11]) -> Self {
        ClaimCheckScores {
            precision: v[0],
            recall: v[1],
            f1: v[2],
            claim_recall: v[3],
            context_precision: v[4],
            context_utilization: v[5],
            noise_sensitivity_in_relevant: v[6],
            noise_sensitivity_in_irrelevant: v[7],
            hallucination: v[8],
            self_knowledge: v[9],
            faithfulness: v[10],
        }
    }
}

/// Whether each label is an entailment. Standard: `entailment` / `neutral` / `contradiction` in
/// any case (surrounding spaces ignored), another label an error naming it; RAGChecker: exactly
/// `Entailment`.
pub fn parse_verdicts(labels: &[&str], compat: ClaimCheckCompat) -> crate::Result<Vec<bool>> {
    labels
        .iter()
        .map(|label| match compat {
            ClaimCheckCompat::Ragchecker => Ok(*label == "Entailment"),
            ClaimCheckCompat::Standard => match label.trim().to_ascii_lowercase().as_str() {
                "entailment" => Ok(true),
                "neutral" | "contradiction" => Ok(false),
                _ => Err(crate::Error::input(format!(
                    "claim_check_scores: unknown verdict {label:?} (entailment, neutral or contradiction)"
                ))),
            },
        })
        .collect()
}

/// The mean of booleans as numpy's `np.mean` gives it: the count over the length.
fn share(values: impl Iterator<Item = bool>) -> f64 {
    let (mut yes, mut n) = (0usize, 0usize);
    for v in values {
        yes += usize::from(v);
        n += 1;
    }
    yes as f64 / n as f64
}

/// The number of chunks of a verdict-per-chunk table (`None` without rows); an error when rows
/// differ.
fn chunk_count(table: &[Vec<bool>], name: &str) -> crate::Result<Option<usize>> {
    let Some(first) = table.first() else {
        return Ok(None);
    };
    if let Some(row) = table.iter().position(|r| r.len() != first.len()) {
        return Err(crate::Error::input(format!(
            "claim_check_scores: {name} has {} verdicts in claim 1 and {} in claim {}: one per chunk in every claim",
            first.len(),
            table[row].len(),
            row + 1
        )));
    }
    Ok(Some(first.len()))
}

/// The eleven scores from the four verdict tables: per response claim, whether the reference
/// entails it; per reference claim, whether the response entails it; per response claim and per
/// reference claim, whether each chunk entails it. An error when the tables disagree on the
/// number of claims or chunks.
pub fn claim_check_scores(
    response_in_reference: &[bool],
    reference_in_response: &[bool],
    response_in_chunks: &[Vec<bool>],
    reference_in_chunks: &[Vec<bool>],
) -> crate::Result<ClaimCheckScores> {
    let mismatch = |what: &str, a: usize, b: usize| {
        Err(crate::Error::input(format!(
            "claim_check_scores: {what} ({a} and {b}): one row per claim"
        )))
    };
    if !response_in_chunks.is_empty() && response_in_chunks.len() != response_in_reference.len() {
        return mismatch(
            "response_in_chunks and response_in_reference count different response claims",
            response_in_chunks.len(),
            response_in_reference.len(),
        );
    }
    if !reference_in_chunks.is_empty() && reference_in_chunks.len() != reference_in_response.len() {
        return mismatch(
            "reference_in_chunks and reference_in_response count different reference claims",
            reference_in_chunks.len(),
            reference_in_response.len(),
        );
    }
    let response_chunks = chunk_count(response_in_chunks, "response_in_chunks")?;
    let reference_chunks = chunk_count(reference_in_chunks, "reference_in_chunks")?;
    if let (Some(a), Some(b)) = (response_chunks, reference_chunks)
        && a != b
    {
        return Err(crate::Error::input(format!(
            "claim_check_scores: response_in_chunks checks {a} chunks and reference_in_chunks {b}: the same chunks for both"
        )));
    }
    let mut s = ClaimCheckScores::default();
    if !response_in_reference.is_empty() {
        s.precision = share(response_in_reference.iter().copied());
    }
    if !reference_in_response.is_empty() {
        s.recall = share(reference_in_response.iter().copied());
    }
    if s.precision > 0.0 && s.recall > 0.0 {
        s.f1 = 2.0 * s.precision * s.recall / (s.precision + s.recall);
    }
    let any = |row: &Vec<bool>| row.iter().any(|&v| v);
    // Retrieval: with reference claims and chunks.
    if reference_chunks.is_some_and(|k| k > 0) {
        let k = reference_chunks.unwrap_or(0);
        let recalled: Vec<bool> = reference_in_chunks.iter().map(any).collect();
        s.claim_recall = share(recalled.iter().copied());
        s.context_precision = share((0..k).map(|j| reference_in_chunks.iter().any(|r| r[j])));
        let recalled_count = recalled.iter().filter(|&&r| r).count();
        if recalled_count > 0 {
            let used = recalled
                .iter()
                .zip(reference_in_response)
                .filter(|&(&r, &u)| r && u)
                .count();
            s.context_utilization = used as f64 / recalled_count as f64;
        }
    }
    let response_has_chunks = response_chunks.is_some_and(|k| k > 0);
    // Noise sensitivity: with response claims, chunks, and reference claims.
    if !response_in_reference.is_empty() && response_has_chunks && !reference_in_chunks.is_empty() {
        let k = response_chunks.unwrap_or(0);
        let relevant: Vec<bool> = (0..k)
            .map(|j| reference_in_chunks.iter().any(|r| r[j]))
            .collect();
        let (mut in_relevant, mut in_irrelevant) = (Vec::new(), Vec::new());
        for (row, &correct) in response_in_chunks.iter().zip(response_in_reference) {
            let by_relevant = (0..k).any(|j| relevant[j] && row[j]);
            let by_irrelevant = (0..k).any(|j| !relevant[j] && row[j]) && !by_relevant;
            in_relevant.push(by_relevant && !correct);
            in_irrelevant.push(by_irrelevant && !correct);
        }
        s.noise_sensitivity_in_relevant = share(in_relevant.into_iter());
        s.noise_sensitivity_in_irrelevant = share(in_irrelevant.into_iter());
    }
    // Unfaithfulness: with response claims and chunks.
    if !response_in_reference.is_empty() && response_has_chunks {
        let unfaithful: Vec<bool> = response_in_chunks.iter().map(|r| !any(r)).collect();
        s.hallucination = share(
            unfaithful
                .iter()
                .zip(response_in_reference)
                .map(|(&u, &c)| u && !c),
        );
        s.self_knowledge = share(
            unfaithful
                .iter()
                .zip(response_in_reference)
                .map(|(&u, &c)| u && c),
        );
    }
    if response_has_chunks {
        s.faithfulness = share(response_in_chunks.iter().map(any));
    }
    Ok(s)
}

/// numpy's `round(x, 1)`: x · 10 rounded half to even, over 10.
fn numpy_round_1(x: f64) -> f64 {
    (x * 10.0).round_ties_even() / 10.0
}

/// The dataset aggregate of per-answer scores: each score's mean (numpy's), in [0, 1]; with
/// `Ragchecker`, the mean × 100 rounded to one decimal as RAGChecker's report gives it. `None`
/// without rows.
///
/// ```
/// use polars_rag::metrics::claim_checks::{aggregate_scores, ClaimCheckCompat, ClaimCheckScores};
/// let a = ClaimCheckScores { precision: 1.0, ..Default::default() };
/// let b = ClaimCheckScores { precision: 2.0 / 3.0, ..Default::default() };
/// let report = aggregate_scores(&[a, b], ClaimCheckCompat::Ragchecker).unwrap();
/// assert_eq!(report.precision, 83.3);
/// ```
pub fn aggregate_scores(
    rows: &[ClaimCheckScores],
    compat: ClaimCheckCompat,
) -> Option<ClaimCheckScores> {
    if rows.is_empty() {
        return None;
    }
    let mut out = [0.0; 11];
    for (i, value) in out.iter_mut().enumerate() {
        let column: Vec<f64> = rows.iter().map(|r| r.values()[i]).collect();
        let mean = numpy_sum(&column) / column.len() as f64;
        *value = match compat {
            ClaimCheckCompat::Standard => mean,
            ClaimCheckCompat::Ragchecker => numpy_round_1(mean * 100.0),
        };
    }
    Some(ClaimCheckScores::from_values(out))
}

impl crate::metrics::Section for ClaimCheckOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatched_tables_are_errors_that_say_which() {
        let e = claim_check_scores(&[true], &[], &[vec![true], vec![false]], &[]).unwrap_err();
        assert!(
            e.to_string().contains("count different response claims"),
            "{e}"
        );
        let e = claim_check_scores(&[true, true], &[], &[vec![true], vec![false, true]], &[])
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("1 verdicts in claim 1 and 2 in claim 2"),
            "{e}"
        );
        let e =
            claim_check_scores(&[true], &[true], &[vec![true]], &[vec![true, false]]).unwrap_err();
        assert!(
            e.to_string()
                .contains("checks 1 chunks and reference_in_chunks 2"),
            "{e}"
        );
    }

    #[test]
    fn labels_are_read_in_any_case_or_exactly() {
        let standard = parse_verdicts(
            &["Entailment", " NEUTRAL ", "contradiction"],
            ClaimCheckCompat::Standard,
        );
        assert_eq!(standard.unwrap(), [true, false, false]);
        assert!(parse_verdicts(&["yes"], ClaimCheckCompat::Standard).is_err());
        let exact = parse_verdicts(
            &["Entailment", "entailment", "yes"],
            ClaimCheckCompat::Ragchecker,
        );
        assert_eq!(exact.unwrap(), [true, false, false]);
    }

    #[test]
    fn nothing_checked_scores_zero() {
        assert_eq!(
            claim_check_scores(&[], &[], &[], &[]).unwrap(),
            ClaimCheckScores::default()
        );
    }
}
