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

/// A datapizza error: the message datapizza raises with.
pub type DatapizzaResult = Result<f64, String>;

const EMPTY_CHUNKS: &str = "ValueError: Ground truth chunks cannot be empty";
const EMPTY_EMBEDDINGS: &str = "ValueError: Ground truth embeddings cannot be empty";
const EMPTY_MATRIX: &str =
    "ValueError: Similarity matrix cannot be empty (a negative k left no retrieved item)";
const ZERO_DIVISION: &str = "ZeroDivisionError: float division by zero (gamma = 0)";
const MATH_DOMAIN: &str = "ValueError: math domain error (negative gamma)";

/// Python's `items[:k]`.
pub(crate) fn head<T>(items: &[T], k: i64) -> &[T] {
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

/// The squared norm of a row as numpy's `einsum("ij,ij->i", X, X)` sums it in float64 (the
/// baseline two-lane SIMD loop: blocks of eight taken as four lane pairs from the last to the
/// first, then pairs, the two lanes added at the end), so that the normalised rows are
/// scikit-learn's to the bit.
fn numpy_squared_norm(v: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 2];
    let mut i = 0;
    while v.len() - i >= 8 {
        for pair in (0..4).rev() {
            for (lane, acc) in lanes.iter_mut().enumerate() {
                let x = v[i + 2 * pair + lane];
                *acc += x * x;
            }
        }
        i += 8;
    }
    while i < v.len() {
        for (lane, acc) in lanes.iter_mut().enumerate() {
            let x = v.get(i + lane).copied().unwrap_or(0.0);
            *acc += x * x;
        }
        i += 2;
    }
    lanes[0] + lanes[1]
}

/// scikit-learn's `normalize(X)` of one row: divided by its norm (a zero norm counts as 1).
fn sklearn_normalized(v: &[f64]) -> Vec<f64> {
    let norm = numpy_squared_norm(v).sqrt();
    let norm = if norm == 0.0 { 1.0 } else { norm };
    v.iter().map(|x| x / norm).collect()
}

/// The dot product of two normalised rows as OpenBLAS's double-precision GEMM accumulates it:
/// fused multiply-adds in order over blocks of the inner dimension (256; a remainder between 256
/// and 512 split in two halves rounded up to a multiple of 4), the blocks' sums added in order.
fn gemm_dot(a: &[f64], b: &[f64]) -> f64 {
    let mut total: Option<f64> = None;
    let mut start = 0;
    while start < a.len() {
        let rest = a.len() - start;
        let block = if rest >= 512 {
            256
        } else if rest > 256 {
            (rest / 2).div_ceil(4) * 4
        } else {
            rest
        };
        let mut acc = 0.0f64;
        for k in start..start + block {
            acc = a[k].mul_add(b[k], acc);
        }
        total = Some(total.map_or(acc, |t| t + acc));
        start += block;
    }
    total.unwrap_or(0.0)
}

/// Cosine matrix `retrieved × ground truth`, as scikit-learn's `cosine_similarity` computes it
/// with numpy and OpenBLAS: rows normalised, then a matrix product (its usual GEMM accumulation;
/// a single retrieved row or ground-truth row goes through other BLAS kernels, whose order may
/// differ in the last bit). Rows of different dimensions are scikit-learn's `ValueError`.
///
/// ```
/// use polars_rag::metrics::retrieval::datapizza::cosine_matrix;
/// let m = cosine_matrix(&[&[0.8, 0.6], &[0.0, 0.0]], &[&[1.0, 0.0]]).unwrap();
/// assert_eq!(m, vec![vec![0.8], vec![0.0]]);
/// assert!(cosine_matrix(&[&[1.0, 0.0]], &[&[1.0, 0.0, 0.0]]).is_err());
/// ```
pub fn cosine_matrix(
    retrieved: &[&[f64]],
    ground_truth: &[&[f64]],
) -> Result<Vec<Vec<f64>>, String> {
    let dims = retrieved.iter().chain(ground_truth).map(|v| v.len());
    let (lo, hi) = dims.fold((usize::MAX, 0), |(lo, hi), d| (lo.min(d), hi.max(d)));
    if lo != usize::MAX && lo != hi {
        return Err(format!(
            "ValueError: Incompatible dimension for X and Y matrices ({lo} and {hi} features)"
        ));
    }
    let g: Vec<Vec<f64>> = ground_truth.iter().map(|v| sklearn_normalized(v)).collect();
    Ok(retrieved
        .iter()
        .map(|r| {
            let r = sklearn_normalized(r);
            g.iter().map(|g| gemm_dot(&r, g)).collect()
        })
        .collect())
}

fn similarities(retrieved: &[&[f64]], ground_truth: &[&[f64]]) -> Result<Vec<Vec<f64>>, String> {
    cosine_matrix(retrieved, ground_truth)
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
    let sims = similarities(top, ground_truth)?;
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
    let sims = similarities(top, ground_truth)?;
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
    let sims = similarities(retrieved, ground_truth)?;
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
