//! Ragas 0.4.3's context metrics without an LLM, reproduced to the last bit for
//! `compat = "ragas"`:
//!
//! * `NonLLMContextPrecisionWithReference`: each retrieved context is relevant when its best
//!   string similarity to a reference context reaches the threshold (`>=`); the score is Ragas'
//!   average precision over those verdicts, Σᵢ precision@i · vᵢ / (Σ vᵢ + 10⁻¹⁰);
//! * `NonLLMContextRecall`: the share of reference contexts whose best similarity to a retrieved
//!   context is *above* the threshold (`>`);
//! * `IDBasedContextPrecision` / `IDBasedContextRecall`: |set(retrieved) ∩ set(reference)| over
//!   the distinct retrieved / reference ids.
//!
//! `None` where Ragas raises (`max()` of an empty sequence) or returns NaN.
//!
//! ```
//! use polars_rag::metrics::retrieval::ragas;
//! use polars_rag::metrics::similarity::StringDistance;
//! let retrieved = ["The Eiffel Tower is located in Paris."];
//! let reference = ["Paris is the capital of France.", "The Eiffel Tower is one of the most famous landmarks in Paris."];
//! let p = ragas::context_precision_similarity(&retrieved, &reference, StringDistance::Levenshtein, 0.5);
//! assert_eq!(p, Some(1.0 / (1.0 + 1e-10)));
//! assert_eq!(ragas::id_precision(&["doc_1", "doc_2"], &["doc_1"]), Some(0.5));
//! ```

use std::collections::HashSet;

use crate::metrics::similarity::{Scratch, StringDistance};

/// Ragas' `_calculate_average_precision` over per-rank verdicts.
///
/// ```
/// use polars_rag::metrics::retrieval::ragas::average_precision;
/// assert_eq!(average_precision(&[false, true]), 0.5 / (1.0 + 1e-10));
/// assert_eq!(average_precision(&[]), 0.0);
/// ```
pub fn average_precision(verdicts: &[bool]) -> f64 {
    let mut hits = 0usize;
    let mut numerator = 0.0;
    for (i, &v) in verdicts.iter().enumerate() {
        if v {
            hits += 1;
            numerator += hits as f64 / (i + 1) as f64;
        }
    }
    let relevant = verdicts.iter().filter(|&&v| v).count();
    numerator / (relevant as f64 + 1e-10)
}

/// The best similarity of `text` to any of `others` (`None` when there are none, where Ragas'
/// `max()` raises).
fn best_similarity(
    scratch: &mut Scratch,
    text: &str,
    others: &[&str],
    distance: StringDistance,
) -> Option<f64> {
    others
        .iter()
        // Ragas passes the retrieved context as `reference` and the reference context as
        // `response`; every distance here is symmetric, so the order does not matter.
        .map(|o| scratch.similarity(o, text, distance))
        .fold(None, |best: Option<f64>, s| {
            Some(best.map_or(s, |b| b.max(s)))
        })
}

/// `NonLLMContextPrecisionWithReference`: `None` when there is a retrieved context but no
/// reference context.
pub fn context_precision_similarity(
    retrieved: &[&str],
    reference: &[&str],
    distance: StringDistance,
    threshold: f64,
) -> Option<f64> {
    let mut scratch = Scratch::default();
    let mut verdicts = Vec::with_capacity(retrieved.len());
    for r in retrieved {
        verdicts.push(best_similarity(&mut scratch, r, reference, distance)? >= threshold);
    }
    Some(average_precision(&verdicts))
}

/// `NonLLMContextRecall`: `None` when there is no reference context (NaN) or a reference but no
/// retrieved context (`max()` raises).
pub fn context_recall_similarity(
    retrieved: &[&str],
    reference: &[&str],
    distance: StringDistance,
    threshold: f64,
) -> Option<f64> {
    if reference.is_empty() {
        return None;
    }
    let mut scratch = Scratch::default();
    let mut found = 0usize;
    for r in reference {
        if best_similarity(&mut scratch, r, retrieved, distance)? > threshold {
            found += 1;
        }
    }
    Some(found as f64 / reference.len() as f64)
}

/// `IDBasedContextPrecision`: shared distinct ids / distinct retrieved ids; `None` (NaN) when
/// nothing was retrieved.
pub fn id_precision(retrieved: &[&str], reference: &[&str]) -> Option<f64> {
    let retrieved: HashSet<&str> = retrieved.iter().copied().collect();
    let reference: HashSet<&str> = reference.iter().copied().collect();
    if retrieved.is_empty() {
        return None;
    }
    Some(retrieved.intersection(&reference).count() as f64 / retrieved.len() as f64)
}

/// `IDBasedContextRecall`: shared distinct ids / distinct reference ids; `None` (NaN) when there
/// is no reference id.
pub fn id_recall(retrieved: &[&str], reference: &[&str]) -> Option<f64> {
    let retrieved: HashSet<&str> = retrieved.iter().copied().collect();
    let reference: HashSet<&str> = reference.iter().copied().collect();
    if reference.is_empty() {
        return None;
    }
    Some(retrieved.intersection(&reference).count() as f64 / reference.len() as f64)
}
