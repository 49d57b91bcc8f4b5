//! The encoder's CPU kernels on plain slices, parallel over rows: bias + exact-erf GELU and
//! residual + LayerNorm fused into one in-place pass each, and multi-head attention per text and
//! head. Profiling showed exact-erf GELU (libm's scalar `erff`), softmax's `expf` and separate
//! bias / residual / normalisation passes costing as much as the matrix products themselves.
//!
//! The fast `exp` here is accurate to a few units in the last place of f32, GELU's `Φ` to an
//! absolute 3e-7: far inside the 1e-4 per component the embeddings are held to (and checked against
//! sentence-transformers with).

use rayon::prelude::*;

/// `e^x` in f32 without a libm call, so that loops over it vectorise: `x = k ln 2 + r` with
/// `|r| ≤ ln 2 / 2`, `e^r` by a degree-6 polynomial, `2^k` built in the exponent bits.
#[inline(always)]
pub fn fast_exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Below -87.3 the result is 0 in f32, above 88.3 it saturates at e^88.3 (the clamp keeps
    // 2^k a finite normal number; the callers pass arguments ≤ 0).
    let x = x.clamp(-87.3, 88.3);
    // Round to nearest with the 1.5·2^23 trick (no floor call, which SSE2 cannot inline): in
    // [2^23, 2^24) the f32 spacing is 1, so `shifted` holds k exactly, in its low mantissa bits.
    const SHIFTER: f32 = 12_582_912.0;
    let shifted = x * LOG2E + SHIFTER;
    let k = shifted - SHIFTER;
    let r = x - k * LN2_HI - k * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_668 + r * (0.008_333_452 + r * 0.001_388_927_5)))));
    // 2^k from those bits: `bits(shifted) = bits(SHIFTER) + k`, so subtracting
    // `bits(SHIFTER) − 127` leaves the biased exponent k + 127. Integer lane operations: a float
    // to int cast (`k as i32`, saturating and NaN-checked in Rust) would not vectorise, and cost
    // as much as the rest of GELU and softmax together.
    let biased = shifted.to_bits().wrapping_sub(SHIFTER.to_bits() - 127);
    let scale = f32::from_bits(biased << 23);
    p * scale
}

/// Exact-erf GELU, `v·Φ(v)` with `Φ` the standard normal distribution function, vectorisable:
/// `Φ(v) = 1 − h` for `v ≥ 0` and `h` below, where `h = ½·erfc(|v|/√2)` by Abramowitz and Stegun
/// 7.1.26 (`erfc(a) ≈ t·P(t)·e^(−a²)`, `t = 1/(1 + p·a)`, absolute error below 1.5e-7).
///
/// Only the absolute error of `Φ` matters here (it is multiplied by `v`), so the one tail formula
/// serves every `v`; an `erf` needing relative accuracy near 0 would add a series branch.
#[inline(always)]
pub fn gelu(v: f32) -> f32 {
    let a = v.abs() * std::f32::consts::FRAC_1_SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let h = 0.5 * poly * fast_exp(-a * a);
    let phi = if v < 0.0 { h } else { 1.0 - h };
    v * phi
}

/// Sum of `values` in eight lanes (a shape the compiler vectorises; a plain running sum must
/// stay sequential).
#[inline(always)]
fn lane_sum(values: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane += v;
        }
    }
    lanes.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// Largest of `values` in eight lanes.
#[inline(always)]
fn lane_max(values: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(v);
        }
    }
    chunks
        .remainder()
        .iter()
        .chain(&lanes)
        .fold(f32::NEG_INFINITY, |a, &b| a.max(b))
}

#[inline(always)]
fn gelu_row(row: &mut [f32], bias: &[f32]) {
    for (v, &b) in row.iter_mut().zip(bias) {
        *v = gelu(*v + b);
    }
}

/// The unnormalised softmax of one row of already scaled scores, in place: `e^(s − max)`;
/// returns the row's sum (the caller divides the attention output's row by it, a pass over
/// `head_width` values instead of over the row).
#[inline(always)]
fn exp_in_place(row: &mut [f32]) -> f32 {
    let max = lane_max(row);
    for v in row.iter_mut() {
        *v = fast_exp(*v - max);
    }
    lane_sum(row)
}

/// `row = LayerNorm(row + bias + residual)`, the additions in BertModel's order.
#[inline(always)]
fn residual_norm_row(row: &mut [f32], residual: &[f32], norm: &ResidualLayerNorm) {
    for ((v, &r), &b) in row.iter_mut().zip(residual).zip(&norm.bias) {
        *v = *v + b + r;
    }
    let width = row.len() as f32;
    let mean = lane_sum(row) / width;
    for v in row.iter_mut() {
        *v -= mean;
    }
    let mut lanes = [0f32; 8];
    let mut chunks = row.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane += v * v;
        }
    }
    let squares = lanes.iter().sum::<f32>() + chunks.remainder().iter().map(|v| v * v).sum::<f32>();
    let inverse = 1.0 / (squares / width + norm.eps).sqrt();
    for ((v, &g), &b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
        *v = *v * inverse * g + b;
    }
}

/// The row kernels compiled for AVX2 (8 lanes), chosen at run time when the CPU has it; the
/// portable build only assumes SSE2.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::ResidualLayerNorm;

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn gelu_row(row: &mut [f32], bias: &[f32]) {
        super::gelu_row(row, bias)
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn exp_in_place(row: &mut [f32]) -> f32 {
        super::exp_in_place(row)
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn residual_norm_row(row: &mut [f32], residual: &[f32], norm: &ResidualLayerNorm) {
        super::residual_norm_row(row, residual, norm)
    }
}

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static DETECTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(|| {
            std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Calls the AVX2 build of a row kernel when the CPU has it, else the portable one.
macro_rules! row_kernel {
    ($name:ident($($arg:expr_2021),*)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if has_avx2() {
                // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
                unsafe { avx2::$name($($arg),*) }
            } else {
                $name($($arg),*)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $name($($arg),*)
        }
    }};
}

/// Rows per parallel task: enough work per task to pay for the scheduling.
fn chunk_rows(width: usize) -> usize {
    (16_384 / width.max(1)).max(1)
}

/// The matrix-product parallelism: every thread of the current rayon pool.
pub fn parallelism() -> gemm::Parallelism {
    match rayon::current_num_threads() {
        0 | 1 => gemm::Parallelism::None,
        threads => gemm::Parallelism::Rayon(threads),
    }
}

/// `values = gelu(values + bias)` per row of `bias.len()` values, in place (BERT's exact-erf
/// `gelu` after the intermediate layer's bias).
pub fn bias_gelu(values: &mut [f32], bias: &[f32]) {
    let width = bias.len();
    assert!(
        width > 0 && values.len().is_multiple_of(width),
        "bias-gelu: ragged rows"
    );
    values
        .par_chunks_mut(width * chunk_rows(width))
        .for_each(|rows| {
            for row in rows.chunks_exact_mut(width) {
                row_kernel!(gelu_row(row, bias));
            }
        });
}

/// `LayerNorm(x + bias + residual)` per row (BERT's post-norm residual block).
pub struct ResidualLayerNorm {
    /// The preceding dense layer's bias, added to `x`.
    pub bias: Vec<f32>,
    /// LayerNorm's weight.
    pub gamma: Vec<f32>,
    /// LayerNorm's bias.
    pub beta: Vec<f32>,
    /// LayerNorm's epsilon.
    pub eps: f32,
}

/// `values = LayerNorm(values + norm.bias + residual)` per row, in place.
pub fn residual_layer_norm(values: &mut [f32], residual: &[f32], norm: &ResidualLayerNorm) {
    let width = norm.bias.len();
    assert!(
        width > 0 && values.len() == residual.len() && values.len().is_multiple_of(width),
        "residual-layer-norm: shapes differ"
    );
    let rows = chunk_rows(width) * width;
    values
        .par_chunks_mut(rows)
        .zip(residual.par_chunks(rows))
        .for_each(|(values, residual)| {
            for (row, residual) in values
                .chunks_exact_mut(width)
                .zip(residual.chunks_exact(width))
            {
                row_kernel!(residual_norm_row(row, residual, norm));
            }
        });
}

/// Where one text's tokens sit in a packed batch: rows `first .. first + length`.
#[derive(Clone, Copy, Debug)]
pub struct TextRows {
    /// The text's first row.
    pub first: usize,
    /// Its tokens.
    pub length: usize,
}

/// The context buffer, written by several threads into disjoint blocks.
struct SharedOut(*mut f32);
// SAFETY: every task writes only its own (text, head) block of the buffer.
unsafe impl Send for SharedOut {}
unsafe impl Sync for SharedOut {}

impl SharedOut {
    /// The buffer from `offset` on (a method, so closures capture the wrapper, not the pointer).
    fn at(&self, offset: usize) -> *mut f32 {
        self.0.wrapping_add(offset)
    }
}

/// Multi-head self-attention of a packed batch, from the fused query-key-value projection: for
/// every (text, head) pair in parallel, `softmax(q kᵀ / √head_width) v` over that text's own
/// tokens, with single-threaded matrix products (gemm) and a score buffer of one head at a
/// time, written into that head's columns of `context`. `qkv` holds `rows × 3·hidden` values
/// (queries, keys, values side by side, as the projection gives them, without its `bias`);
/// `context` receives `rows × hidden`.
///
/// A text attends only to its own rows, so there is no padding to mask. The projection's bias
/// is added here, per task: to the head's queries and keys as they are copied into contiguous
/// buffers, and to the context rows for the values (softmax weights sum to 1, so
/// `Σ p (v + b) = Σ p v + b`); a separate pass over the whole projection would cost one more
/// sweep of `rows × 3·hidden` values per layer.
pub fn attention(
    qkv: &[f32],
    context: &mut [f32],
    texts: &[TextRows],
    bias: &[f32],
    heads: usize,
    hidden: usize,
) {
    let head_width = hidden / heads;
    let rows = texts.iter().map(|t| t.first + t.length).max().unwrap_or(0);
    assert!(
        heads > 0
            && head_width * heads == hidden
            && bias.len() == 3 * hidden
            && qkv.len() >= rows * 3 * hidden
            && context.len() >= rows * hidden,
        "attention: buffers of {} and {} values for {rows} rows of {hidden}",
        qkv.len(),
        context.len()
    );
    let scale = 1.0 / (head_width as f32).sqrt();
    let longest = texts.iter().map(|t| t.length).max().unwrap_or(0);
    let shared = SharedOut(context.as_mut_ptr());
    let row = (3 * hidden) as isize;
    let width = head_width as isize;
    (0..texts.len() * heads).into_par_iter().for_each_init(
        || {
            (
                vec![0f32; longest * longest],
                vec![0f32; longest],
                vec![0f32; 2 * longest * head_width],
            )
        },
        |(scores, sums, biased), task| {
            let (text, h) = (texts[task / heads], task % heads);
            let length = text.length;
            if length == 0 {
                return;
            }
            let scores = &mut scores[..length * length];
            let sums = &mut sums[..length];
            let base = text.first * 3 * hidden + h * head_width;
            let v = &qkv[base + 2 * hidden..];
            // This head's queries and keys with their bias, each length × head_width.
            let (q, k) = biased[..2 * length * head_width].split_at_mut(length * head_width);
            for (part, buffer) in [(0, &mut *q), (1, &mut *k)] {
                let bias = &bias[part * hidden + h * head_width..][..head_width];
                for (i, out) in buffer.chunks_exact_mut(head_width).enumerate() {
                    let from = &qkv[base + part * hidden + i * 3 * hidden..][..head_width];
                    for ((o, &x), &b) in out.iter_mut().zip(from).zip(bias) {
                        *o = x + b;
                    }
                }
            }
            let value_bias = &bias[2 * hidden + h * head_width..][..head_width];
            // SAFETY: q and k are length × head_width buffers; v is a view of `qkv` (length
            // rows of head_width values, `row` apart, inside the slice as asserted above);
            // `scores` is length × length; the output block (length rows of head_width values,
            // `hidden` apart) is this task's alone.
            unsafe {
                gemm::gemm(
                    length,
                    length,
                    head_width,
                    scores.as_mut_ptr(),
                    1,
                    length as isize,
                    false,
                    q.as_ptr(),
                    1,
                    width,
                    k.as_ptr(),
                    width,
                    1,
                    0.0,
                    // The scores come out scaled by 1/√head_width.
                    scale,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
            for (scores, sum) in scores.chunks_exact_mut(length).zip(sums.iter_mut()) {
                *sum = row_kernel!(exp_in_place(scores));
            }
            let target = shared.at(text.first * hidden + h * head_width);
            // SAFETY: as above; `target` starts this task's block of `context`.
            unsafe {
                gemm::gemm(
                    length,
                    head_width,
                    length,
                    target,
                    1,
                    hidden as isize,
                    false,
                    scores.as_ptr(),
                    1,
                    length as isize,
                    v.as_ptr(),
                    1,
                    row,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
                // The softmax's division, on the output rows; then the values' bias.
                for (i, &sum) in sums.iter().enumerate() {
                    let inverse = 1.0 / sum;
                    // SAFETY: row i of this task's block.
                    let row = std::slice::from_raw_parts_mut(target.add(i * hidden), head_width);
                    for (value, &b) in row.iter_mut().zip(value_bias) {
                        *value = *value * inverse + b;
                    }
                }
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::{fast_exp, gelu};

    #[test]
    fn fast_exp_and_gelu_are_accurate() {
        let mut x = -80.0f32;
        while x < 80.0 {
            let (got, want) = (fast_exp(x) as f64, (x as f64).exp());
            assert!(
                ((got - want) / want).abs() < 5e-7,
                "exp({x}): {got} vs {want}"
            );
            x += 0.01;
        }
        // GELU against v·½(1 + erf(v/√2)) in f64, relative to max(|v|, 1): the error of Φ
        // times v, as the hidden states carry it.
        let mut v = -12.0f32;
        while v < 12.0 {
            let exact = v as f64 * 0.5 * (1.0 + libm_erf(v as f64 / std::f64::consts::SQRT_2));
            let error = (gelu(v) as f64 - exact).abs() / (v.abs() as f64).max(1.0);
            assert!(error < 3e-7, "gelu({v}): off by {error}");
            v += 0.001;
        }
        assert_eq!(gelu(0.0), 0.0);
        assert!(gelu(-30.0).abs() < 1e-30);
        assert_eq!(gelu(30.0), 30.0);
        assert_eq!(fast_exp(-1000.0), fast_exp(-87.3));
        assert!(fast_exp(-1000.0) < 1e-37);
    }

    /// erf in f64 by its Taylor series (|x| ≤ 3) or continued fraction, for the check above.
    fn libm_erf(x: f64) -> f64 {
        let a = x.abs();
        let y = if a < 3.0 {
            let mut term = a;
            let mut sum = a;
            let mut n = 0.0;
            while term.abs() > 1e-17 {
                n += 1.0;
                term *= -a * a / n;
                sum += term / (2.0 * n + 1.0);
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc(a) = e^{-a²}/√π · 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...))))
            let mut fraction = a;
            for k in (1..60).rev() {
                fraction = a + (k as f64 / 2.0) / fraction;
            }
            1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / fraction
        };
        if x < 0.0 {
            -y
        } else {
            y
        }
    }
}
