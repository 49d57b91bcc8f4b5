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
pub type DatapizzaResult = crate::Result<f64>;

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
        return Err(crate::Error::input(EMPTY_CHUNKS));
    }
    Ok(shared(head(retrieved, k), ground_truth) as f64 / k as f64)
}

/// `recall_at_k_exact`: `|set(retrieved[:k]) ∩ set(ground_truth)| / |set(ground_truth)|`.
pub fn recall_at_k_exact(retrieved: &[&str], ground_truth: &[&str], k: i64) -> DatapizzaResult {
    if retrieved.is_empty() || k == 0 {
        return Ok(0.0);
    }
    if ground_truth.is_empty() {
        return Err(crate::Error::input(EMPTY_CHUNKS));
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
        return Err(crate::Error::input(MATH_DOMAIN));
    }
    let den = den.ln();
    if den == 0.0 {
        return Err(crate::Error::input(ZERO_DIVISION));
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
        return Err(crate::Error::input(
            "ValueError: Ground truth chunks cannot be empty for hybrid_log_rank_score_exact.",
        ));
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
            Err(e) if e.message() == MATH_DOMAIN => {}
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

/// The OpenBLAS kernel set that numpy's bundled OpenBLAS (a `DYNAMIC_ARCH` build) picks on the
/// running CPU; the last bits of a product depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlasKernels {
    /// AVX2 machines (Intel Haswell to Skylake client, AMD Zen 1–3): the Haswell kernels.
    Haswell,
    /// AVX-512 machines (Intel Skylake-X and later server parts, AMD Zen 4): the SkylakeX
    /// kernels, with GEMM's small-matrix kernels.
    SkylakeX,
}

impl BlasKernels {
    /// The set OpenBLAS would pick here.
    pub fn detect() -> BlasKernels {
        static DETECTED: std::sync::OnceLock<BlasKernels> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512cd")
            {
                return BlasKernels::SkylakeX;
            }
            BlasKernels::Haswell
        })
    }

    /// GEMM's depth block (`DGEMM_DEFAULT_Q`) and row unroll (`DGEMM_DEFAULT_UNROLL_M`).
    fn gemm_blocking(self) -> (usize, usize) {
        match self {
            BlasKernels::Haswell => (256, 4),
            BlasKernels::SkylakeX => (384, 16),
        }
    }
}

/// The dot product of two normalised rows as OpenBLAS's blocked double-precision GEMM
/// accumulates it: fused multiply-adds in order over blocks of the inner dimension (`q`; a
/// remainder between `q` and `2q` split in two halves rounded up to a multiple of `unroll`),
/// the blocks' sums added in order.
fn gemm_dot(a: &[f64], b: &[f64], (q, unroll): (usize, usize)) -> f64 {
    let mut total: Option<f64> = None;
    let mut start = 0;
    while start < a.len() {
        let rest = a.len() - start;
        let block = if rest >= 2 * q {
            q
        } else if rest > q {
            (rest / 2).div_ceil(unroll) * unroll
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

/// Whether the SkylakeX set computes an `m × p` product of depth `d` with its small-matrix
/// kernel (transposed-by-normal case): at most 10⁶ multiply-adds, at most 1,200 outputs and a
/// depth of at least 32.
fn small_gemm(m: usize, p: usize, d: usize) -> bool {
    (m as f64) * (p as f64) * (d as f64) <= 1e6 && m * p <= 1200 && d >= 32
}

/// One output of the SkylakeX small-matrix GEMM kernel: eight lanes of fused multiply-adds
/// (term `k` in lane `k % 8`), reduced pairwise `((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7))` in the
/// kernel's 4-wide tiles, or as the compiler's 512-bit reduction
/// `((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7))` for the outputs outside them.
fn small_gemm_dot(a: &[f64], b: &[f64], in_tile: bool) -> f64 {
    let mut l = [0.0f64; 8];
    for (k, (a, b)) in a.iter().zip(b).enumerate() {
        l[k % 8] = a.mul_add(*b, l[k % 8]);
    }
    if in_tile {
        ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
    } else {
        ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
    }
}

/// The dot product as OpenBLAS's `ddot` accumulates it. SkylakeX: the first `n & -16` terms in
/// four 512-bit accumulators of fused multiply-adds over blocks of 32 (folded to four 256-bit
/// ones), then in the four 256-bit ones over blocks of 16; the accumulators added
/// `((a0 + a1) + a2) + a3` lane by lane, the lanes `(l0 + l2) + (l1 + l3)`. Haswell: the four
/// 256-bit accumulators only, each folded to two lanes, then added pairwise. In both, the
/// remaining terms fused into the sum one by one. numpy's `matmul` calls it for a 1 × 1
/// product (one retrieved row against one ground-truth row).
fn openblas_ddot(x: &[f64], y: &[f64], kernels: BlasKernels) -> f64 {
    let n = x.len();
    let whole = n & !15;
    let mut lanes4 = [[0.0f64; 4]; 4];
    let mut i = 0;
    let by32 = if kernels == BlasKernels::SkylakeX {
        whole & !31
    } else {
        0
    };
    if by32 > 0 {
        let mut lanes8 = [[0.0f64; 8]; 4];
        while i < by32 {
            for (k, acc) in lanes8.iter_mut().enumerate() {
                for (l, a) in acc.iter_mut().enumerate() {
                    let at = i + 8 * k + l;
                    *a = x[at].mul_add(y[at], *a);
                }
            }
            i += 32;
        }
        for (acc4, acc8) in lanes4.iter_mut().zip(&lanes8) {
            for l in 0..4 {
                acc4[l] = acc8[l] + acc8[l + 4];
            }
        }
    }
    while i < whole {
        for (k, acc) in lanes4.iter_mut().enumerate() {
            for (l, a) in acc.iter_mut().enumerate() {
                let at = i + 4 * k + l;
                *a = x[at].mul_add(y[at], *a);
            }
        }
        i += 16;
    }
    let mut dot = 0.0;
    if whole > 0 {
        dot = match kernels {
            BlasKernels::SkylakeX => {
                let lane = |l: usize| ((lanes4[0][l] + lanes4[1][l]) + lanes4[2][l]) + lanes4[3][l];
                (lane(0) + lane(2)) + (lane(1) + lane(3))
            }
            // Each accumulator's halves first, then the accumulators pairwise, then the lanes.
            BlasKernels::Haswell => {
                let half = |k: usize, l: usize| lanes4[k][l] + lanes4[k][l + 2];
                let lane = |l: usize| (half(0, l) + half(1, l)) + (half(2, l) + half(3, l));
                lane(0) + lane(1)
            }
        };
    }
    for k in whole..n {
        dot = y[k].mul_add(x[k], dot);
    }
    dot
}

/// Which of OpenBLAS's `dgemv_t` kernels computes output `j` of `outputs`: columns in groups of
/// four (fused multiply-adds in four lanes), then a pair, then a single one (SSE2 multiplies and
/// adds in two lanes, or in two pairs of lanes).
#[derive(Clone, Copy)]
enum GemvKernel {
    Four,
    Two,
    One,
}

fn gemv_kernel(j: usize, outputs: usize) -> GemvKernel {
    let fours = outputs & !3;
    if j < fours {
        GemvKernel::Four
    } else if outputs & 2 != 0 && j < fours + 2 {
        GemvKernel::Two
    } else {
        GemvKernel::One
    }
}

/// One output of OpenBLAS's `dgemv_t` (`y = Aᵀ x` with `beta = 0`, `alpha = 1`; Haswell kernels,
/// which its SkylakeX build uses): the column `a` against `x` over blocks of up to 2,048 rows
/// (a multiple of 4), each block's sum added to the output, then the last `m % 4` rows added as
/// one expression, `((a0·x0 + a1·x1) + a2·x2)` contracted to fused multiply-adds by the
/// compiler (a single row fused into the output). numpy's `matmul` calls it for a 1 × n or
/// m × 1 product.
fn openblas_gemv_t(a: &[f64], x: &[f64], kernel: GemvKernel) -> f64 {
    const BLOCK: usize = 2048;
    let m = a.len();
    let main = m & !3;
    let mut y = 0.0;
    let mut start = 0;
    while start < main {
        let end = (start + BLOCK).min(main);
        let (a, x) = (&a[start..end], &x[start..end]);
        let block = match kernel {
            GemvKernel::Four => {
                let mut acc = [0.0f64; 4];
                for (i, (a, x)) in a.iter().zip(x).enumerate() {
                    acc[i % 4] = a.mul_add(*x, acc[i % 4]);
                }
                (acc[0] + acc[2]) + (acc[1] + acc[3])
            }
            GemvKernel::Two => {
                let mut acc = [0.0f64; 2];
                for (i, (a, x)) in a.iter().zip(x).enumerate() {
                    acc[i % 2] += a * x;
                }
                acc[0] + acc[1]
            }
            GemvKernel::One => {
                let mut acc = [0.0f64; 4];
                for (i, (a, x)) in a.iter().zip(x).enumerate() {
                    acc[i % 4] += a * x;
                }
                (acc[0] + acc[2]) + (acc[1] + acc[3])
            }
        };
        y += block;
        start = end;
    }
    let tail: Vec<(f64, f64)> = (main..m).map(|i| (a[i], x[i])).collect();
    match tail.as_slice() {
        [] => y,
        [(a0, x0)] => a0.mul_add(*x0, y),
        [(a0, x0), (a1, x1), rest @ ..] => {
            let mut sum = a0.mul_add(*x0, a1 * x1);
            for (a, x) in rest {
                sum = a.mul_add(*x, sum);
            }
            y + sum
        }
    }
}

/// Cosine matrix `retrieved × ground truth`, as scikit-learn's `cosine_similarity` computes it
/// with numpy and its bundled OpenBLAS on this machine ([`BlasKernels::detect`]): rows
/// normalised, then the product through the kernel numpy's `matmul` picks for the shape
/// (`ddot` for 1 × 1, `dgemv_t` for 1 × n and m × 1, GEMM otherwise, whose small-matrix kernel
/// on AVX-512), each reproduced to the bit for vectors of up to 10,000 dimensions.
/// Rows of different dimensions are scikit-learn's `ValueError`.
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
) -> crate::Result<Vec<Vec<f64>>> {
    cosine_matrix_with(retrieved, ground_truth, BlasKernels::detect())
}

/// [`cosine_matrix`] as OpenBLAS computes it with the kernel set `kernels` (on any machine).
pub fn cosine_matrix_with(
    retrieved: &[&[f64]],
    ground_truth: &[&[f64]],
    kernels: BlasKernels,
) -> crate::Result<Vec<Vec<f64>>> {
    let dims = retrieved.iter().chain(ground_truth).map(|v| v.len());
    let (lo, hi) = dims.fold((usize::MAX, 0), |(lo, hi), d| (lo.min(d), hi.max(d)));
    if lo != usize::MAX && lo != hi {
        return Err(crate::Error::input(format!(
            "ValueError: Incompatible dimension for X and Y matrices ({lo} and {hi} features)"
        )));
    }
    let g: Vec<Vec<f64>> = ground_truth.iter().map(|v| sklearn_normalized(v)).collect();
    let r: Vec<Vec<f64>> = retrieved.iter().map(|v| sklearn_normalized(v)).collect();
    let (rows, columns) = (r.len(), g.len());
    let depth = r.first().map_or(0, Vec::len);
    let small = kernels == BlasKernels::SkylakeX && small_gemm(rows, columns, depth);
    Ok(r.iter()
        .enumerate()
        .map(|(i, r)| {
            g.iter()
                .enumerate()
                .map(|(j, g)| match (rows, columns) {
                    (1, 1) => openblas_ddot(r, g, kernels),
                    (1, _) => openblas_gemv_t(g, r, gemv_kernel(j, columns)),
                    (_, 1) => openblas_gemv_t(r, g, gemv_kernel(i, rows)),
                    // numpy asks for the transposed ground truth times the retrieved rows:
                    // the kernel's tiles run over ground-truth rows, then retrieved rows.
                    _ if small => small_gemm_dot(g, r, j < columns & !3 || i < rows & !3),
                    _ => gemm_dot(r, g, kernels.gemm_blocking()),
                })
                .collect()
        })
        .collect())
}

fn similarities(retrieved: &[&[f64]], ground_truth: &[&[f64]]) -> crate::Result<Vec<Vec<f64>>> {
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
        return Err(crate::Error::input(EMPTY_EMBEDDINGS));
    }
    let top = head(retrieved, k);
    if top.is_empty() {
        return Err(crate::Error::input(EMPTY_MATRIX));
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
        return Err(crate::Error::input(EMPTY_EMBEDDINGS));
    }
    if retrieved.is_empty() || k == 0 {
        return Ok(0.0);
    }
    let top = head(retrieved, k);
    if top.is_empty() {
        return Err(crate::Error::input(EMPTY_MATRIX));
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
        return Err(crate::Error::input(
            "ValueError: Ground truth embeddings cannot be empty for hybrid_log_rank_score_similarity.",
        ));
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
