//! datapizza-ai `metrics.py` (git blob 222bb6e), reproduced with its quirks, for users comparing
//! with numbers it produced. Where datapizza raises, these functions return `Err` with
//! datapizza's message; the columnar faces turn that into a null.
//!
//! The quirks, each reproduced:
//!
//! * exact variants de-duplicate both lists (`set()`); similarity variants do not, so two
//!   retrieved embeddings near one ground-truth embedding both count for precision;
//! * precision divides by `k` even when fewer than `k` items were retrieved, and `k` slices like
//!   Python (`retrieved[:k]`): a negative `k` drops items from the end and divides by a negative
//!   number;
//! * the check order decides which empty input wins: exact precision and recall return 0.0 for an
//!   empty retrieved list or `k == 0` before they reject empty ground truth; similarity recall
//!   rejects empty ground truth first;
//! * `hybrid_log_rank` ignores `k`, averages the rank scores over all ground truth (misses count
//!   0), takes a retrieved item's first occurrence as its rank; in the exact variant a negative
//!   `gamma`'s math-domain error is swallowed (the hit scores 0), in the similarity variant it
//!   raises; `gamma == 0` with more than one item divides 0 by 0 and raises.
//!
//! ```
//! use polars_rag::metrics::retrieval::datapizza;
//! assert_eq!(datapizza::precision_at_k_exact(&["a", "b", "c", "d"], &["a", "c", "e"], 10), Ok(0.2));
//! assert_eq!(datapizza::precision_at_k_exact(&["a", "b", "c"], &["a", "b", "c"], -1), Ok(-2.0));
//! assert!(datapizza::recall_at_k_exact(&["a"], &[], 3).is_err());
//! ```

use super::cosine;

/// A datapizza error: the message datapizza raises with.
pub type DatapizzaResult = Result<f64, String>;

const EMPTY_CHUNKS: &str = "ValueError: Ground truth chunks cannot be empty";
const EMPTY_EMBEDDINGS: &str = "ValueError: Ground truth embeddings cannot be empty";
const EMPTY_MATRIX: &str =
    "ValueError: Similarity matrix cannot be empty (a negative k left no retrieved item)";
const ZERO_DIVISION: &str = "ZeroDivisionError: float division by zero (gamma = 0)";
const MATH_DOMAIN: &str = "ValueError: math domain error (negative gamma)";

/// Python's `items[:k]`.
fn head<T>(items: &[T], k: i64) -> &[T] {
    let n = items.len() as i64;
    let end = if k < 0 { (n + k).max(0) } else { k.min(n) };
    &items[..end as usize]
}

/// Distinct items, first occurrence order (Python `set()`, whose order does not matter here).
fn distinct<'a>(items: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(item) {
            out.push(item);
        }
    }
    out
}

fn shared(top: &[&str], ground_truth: &[&str]) -> usize {
    distinct(top)
        .iter()
        .filter(|t| ground_truth.contains(t))
        .count()
}

/// `precision_at_k_exact`: `|set(retrieved[:k]) ∩ set(ground_truth)| / k`.
pub fn precision_at_k_exact(retrieved: &[&str], ground_truth: &[&str], k: i64) -> DatapizzaResult {
    if retrieved.is_empty() || k == 0 {
        return Ok(0.0);
    }
    if ground_truth.is_empty() {
        return Err(EMPTY_CHUNKS.into());
    }
    Ok(shared(head(retrieved, k), ground_truth) as f64 / k as f64)
}

/// `recall_at_k_exact`: `|set(retrieved[:k]) ∩ set(ground_truth)| / |set(ground_truth)|`.
pub fn recall_at_k_exact(retrieved: &[&str], ground_truth: &[&str], k: i64) -> DatapizzaResult {
    if retrieved.is_empty() || k == 0 {
        return Ok(0.0);
    }
    if ground_truth.is_empty() {
        return Err(EMPTY_CHUNKS.into());
    }
    let truth = distinct(ground_truth);
    Ok(shared(head(retrieved, k), &truth) as f64 / truth.len() as f64)
}

/// datapizza's F1: `2 * (p * r) / (p + r)`, 0.0 when `p + r == 0`.
fn f1(p: f64, r: f64) -> f64 {
    if p + r == 0.0 {
        0.0
    } else {
        2.0 * (p * r) / (p + r)
    }
}

/// `f1_at_k_exact`.
pub fn f1_at_k_exact(retrieved: &[&str], ground_truth: &[&str], k: i64) -> DatapizzaResult {
    let p = precision_at_k_exact(retrieved, ground_truth, k)?;
    let r = recall_at_k_exact(retrieved, ground_truth, k)?;
    Ok(f1(p, r))
}

/// `log_rank_score(rank, n, gamma)` with Python's errors.
pub fn log_rank_score(rank: i64, n: i64, gamma: f64) -> DatapizzaResult {
    if n == 1 {
        return Ok(1.0);
    }
    let num = 1.0 + gamma * (rank - 1) as f64;
    let den = 1.0 + gamma * (n - 1) as f64;
    if num <= 0.0 || den <= 0.0 {
        return Err(MATH_DOMAIN.into());
    }
    let den = den.ln();
    if den == 0.0 {
        return Err(ZERO_DIVISION.into());
    }
    Ok(1.0 - num.ln() / den)
}

/// `hybrid_log_rank_score_exact(retrieved, ground_truth, gamma, alpha)` over the whole list.
pub fn hybrid_log_rank_exact(
    retrieved: &[&str],
    ground_truth: &[&str],
    gamma: f64,
    alpha: f64,
) -> DatapizzaResult {
    if ground_truth.is_empty() {
        return Err(
            "ValueError: Ground truth chunks cannot be empty for hybrid_log_rank_score_exact."
                .into(),
        );
    }
    let n = retrieved.len();
    if n == 0 {
        return Ok(0.0);
    }
    let truth = distinct(ground_truth);
    let mut first_ranks: Vec<usize> = truth
        .iter()
        .filter_map(|t| retrieved.iter().position(|r| r == t))
        .collect();
    let recall = first_ranks.len() as f64 / truth.len() as f64;
    // datapizza sums in set order, which depends on Python's string hashing; the value is the
    // same up to the last bit. Sum in rank order.
    first_ranks.sort_unstable();
    let mut total = 0.0;
    for rank in first_ranks {
        match log_rank_score(rank as i64 + 1, n as i64, gamma) {
            Ok(s) => total += s,
            // The `except ValueError` around the rank lookup also swallows this one.
            Err(e) if e == MATH_DOMAIN => {}
            Err(e) => return Err(e),
        }
    }
    let rank_quality = total / truth.len() as f64;
    Ok(alpha * recall + (1.0 - alpha) * rank_quality)
}

/// Cosine matrix `retrieved × ground truth`, as scikit-learn's `cosine_similarity`.
fn similarities(retrieved: &[&[f64]], ground_truth: &[&[f64]]) -> Vec<Vec<f64>> {
    retrieved
        .iter()
        .map(|r| ground_truth.iter().map(|g| cosine(r, g)).collect())
        .collect()
}

/// `precision_at_k_similarity`: retrieved items in `retrieved[:k]` with a ground-truth cosine
/// ≥ `threshold`, / k (each retrieved item counts, duplicates too).
pub fn precision_at_k_similarity(
    retrieved: &[&[f64]],
    ground_truth: &[&[f64]],
    k: i64,
    threshold: f64,
) -> DatapizzaResult {
    if retrieved.is_empty() || k == 0 {
        return Ok(0.0);
    }
    if ground_truth.is_empty() {
        return Err(EMPTY_EMBEDDINGS.into());
    }
    let top = head(retrieved, k);
    if top.is_empty() {
        return Err(EMPTY_MATRIX.into());
    }
    let sims = similarities(top, ground_truth);
    let hits = sims
        .iter()
        .filter(|row| row.iter().any(|&s| s >= threshold))
        .count();
    Ok(hits as f64 / k as f64)
}

/// `recall_at_k_similarity`: ground-truth items with a cosine ≥ `threshold` to some item of
/// `retrieved[:k]`, / len(ground_truth) (duplicates counted separately).
pub fn recall_at_k_similarity(
    retrieved: &[&[f64]],
    ground_truth: &[&[f64]],
    k: i64,
    threshold: f64,
) -> DatapizzaResult {
    if ground_truth.is_empty() {
        return Err(EMPTY_EMBEDDINGS.into());
    }
    if retrieved.is_empty() || k == 0 {
        return Ok(0.0);
    }
    let top = head(retrieved, k);
    if top.is_empty() {
        return Err(EMPTY_MATRIX.into());
    }
    let sims = similarities(top, ground_truth);
    let found = (0..ground_truth.len())
        .filter(|&j| sims.iter().any(|row| row[j] >= threshold))
        .count();
    Ok(found as f64 / ground_truth.len() as f64)
}

/// `f1_at_k_similarity`.
pub fn f1_at_k_similarity(
    retrieved: &[&[f64]],
    ground_truth: &[&[f64]],
    k: i64,
    threshold: f64,
) -> DatapizzaResult {
    let p = precision_at_k_similarity(retrieved, ground_truth, k, threshold)?;
    let r = recall_at_k_similarity(retrieved, ground_truth, k, threshold)?;
    Ok(f1(p, r))
}

/// `hybrid_log_rank_score_similarity`: each ground-truth item's best (lowest) rank among the
/// retrieved items with cosine ≥ `threshold`.
pub fn hybrid_log_rank_similarity(
    retrieved: &[&[f64]],
    ground_truth: &[&[f64]],
    threshold: f64,
    gamma: f64,
    alpha: f64,
) -> DatapizzaResult {
    if ground_truth.is_empty() {
        return Err(
            "ValueError: Ground truth embeddings cannot be empty for hybrid_log_rank_score_similarity."
                .into(),
        );
    }
    let n = retrieved.len();
    if n == 0 {
        return Ok(0.0);
    }
    let sims = similarities(retrieved, ground_truth);
    let mut recalled = 0usize;
    let mut total = 0.0;
    for j in 0..ground_truth.len() {
        if let Some(best) = sims.iter().position(|row| row[j] >= threshold) {
            recalled += 1;
            total += log_rank_score(best as i64 + 1, n as i64, gamma)?;
        }
    }
    let recall = recalled as f64 / ground_truth.len() as f64;
    let rank_quality = total / ground_truth.len() as f64;
    Ok(alpha * recall + (1.0 - alpha) * rank_quality)
}
