//! chrF and chrF++ exactly as sacrebleu 2.6.0 computes them (`sentence_chrf(hyp, refs, ...)`,
//! equal to `corpus_chrf([hyp], [[ref] ...])` for one segment), divided by 100.
//!
//! Character n-grams (n = 1..`char_order`) are taken over Unicode code points after removing all
//! Python whitespace (unless `whitespace` is set); word n-grams (n = 1..`word_order`) over the
//! whitespace tokens with one leading or trailing ASCII punctuation mark split off. Per order
//! the hypothesis, reference and clipped match counts give a precision and a recall; the score
//! is the F-beta of their averages over the orders both sides have n-grams of (or, with
//! `eps_smoothing`, the mean of the per-order F-beta scores). With several references the one
//! with the highest score is used, the first one on ties. With no reference the score is 0.
//!
//! ```
//! use polars_rag::metrics::chrf::{chrf, ChrfOptions};
//! let s = chrf("abc", &["abd"], &ChrfOptions::default());
//! assert!((s - 0.38888888888888884).abs() < 1e-15);
//! ```

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::metrics::bleu::{Interner, SACREBLEU_VERSION};
use crate::text::normalize::Whitespace;

/// Options of [`chrf`] (sacrebleu's `CHRF` arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChrfOptions {
    /// Maximum character n-gram order (6).
    pub char_order: usize,
    /// Maximum word n-gram order (0; 2 gives chrF++).
    pub word_order: usize,
    /// Weight of recall relative to precision (2).
    pub beta: u32,
    /// Lowercase both sides first.
    pub lowercase: bool,
    /// Keep whitespace inside character n-grams.
    pub whitespace: bool,
    /// Average per-order F-scores with epsilon smoothing instead of the effective order.
    pub eps_smoothing: bool,
}

impl Default for ChrfOptions {
    fn default() -> Self {
        ChrfOptions {
            char_order: 6,
            word_order: 0,
            beta: 2,
            lowercase: false,
            whitespace: false,
            eps_smoothing: false,
        }
    }
}

/// The largest character or word n-gram order accepted: far above any order in use (sacrebleu's
/// default is 6), low enough that the per-order statistics stay small.
pub const MAX_CHRF_ORDER: usize = 100;

impl ChrfOptions {
    /// Checks the options; the message names `metric` and the option. sacrebleu raises for
    /// `char_order = word_order = 0` (there is nothing to average); polars-rag says so.
    ///
    /// ```
    /// use polars_rag::metrics::chrf::ChrfOptions;
    /// assert!(ChrfOptions::default().validate("chrf").is_ok());
    /// let none = ChrfOptions { char_order: 0, word_order: 0, ..ChrfOptions::default() };
    /// assert!(none.validate("chrf").unwrap_err().to_string().contains("at least one"));
    /// let huge = ChrfOptions { char_order: 1 << 40, ..ChrfOptions::default() };
    /// assert!(huge.validate("chrf").unwrap_err().to_string().contains("char_order"));
    /// ```
    pub fn validate(&self, metric: &str) -> crate::Result<()> {
        // Problems are found as messages; their kind is given once, here.
        let checked = || -> Result<(), String> {
            for (name, order) in [
                ("char_order", self.char_order),
                ("word_order", self.word_order),
            ] {
                if order > MAX_CHRF_ORDER {
                    return Err(format!(
                        "{metric}: {name} must be at most {MAX_CHRF_ORDER}, got {order}"
                    ));
                }
            }
            if self.char_order + self.word_order == 0 {
                return Err(format!(
                    "{metric}: char_order and word_order are both 0; at least one n-gram order is needed"
                ));
            }
            Ok(())
        };
        checked().map_err(crate::Error::options)
    }
}

/// chrF of `hyp` against `refs`, in 0..1 (see the [module documentation](self)).
///
/// ```
/// use polars_rag::metrics::chrf::{chrf, ChrfOptions};
/// assert_eq!(chrf("Hello World", &["Hello World"], &ChrfOptions::default()), 1.0);
/// assert_eq!(chrf("", &[""], &ChrfOptions::default()), 0.0);
/// ```
pub fn chrf(hyp: &str, refs: &[&str], opts: &ChrfOptions) -> f64 {
    Scratch::default().chrf(hyp, refs, opts)
}

/// sacrebleu's chrF signature for `nrefs` references per segment (sacrebleu leaves `beta` out).
///
/// ```
/// use polars_rag::metrics::chrf::{signature_nrefs, ChrfOptions};
/// assert_eq!(
///     signature_nrefs(&ChrfOptions::default(), 1),
///     "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"
/// );
/// ```
pub fn signature_nrefs(opts: &ChrfOptions, nrefs: usize) -> String {
    signature_with(opts, &nrefs.to_string())
}

/// The signature of a chrF column: `nrefs:var`, as for [`crate::metrics::bleu::signature`].
///
/// ```
/// use polars_rag::metrics::chrf::{signature, ChrfOptions};
/// let opts = ChrfOptions { word_order: 2, ..ChrfOptions::default() };
/// assert_eq!(signature(&opts), "nrefs:var|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0");
/// ```
pub fn signature(opts: &ChrfOptions) -> String {
    signature_with(opts, "var")
}

fn signature_with(opts: &ChrfOptions, nrefs: &str) -> String {
    format!(
        "nrefs:{nrefs}|case:{}|eff:{}|nc:{}|nw:{}|space:{}|version:{SACREBLEU_VERSION}",
        if opts.lowercase { "lc" } else { "mixed" },
        if opts.eps_smoothing { "no" } else { "yes" },
        opts.char_order,
        opts.word_order,
        if opts.whitespace { "yes" } else { "no" },
    )
}

/// Statistics per row of corpus chrF with the default settings (6 character orders, no word
/// order): `[hyp, ref, match]` counts per order, flattened (the `corpus_chrf_stats` column).
pub const CORPUS_STATS: usize = 18;

/// Corpus chrF in [0, 1] of statistics summed over segments, as sacrebleu's `corpus_chrf`
/// computes it: each segment contributes the `[hyp, ref, match]` counts of its best reference,
/// the counts are summed per order, and one F-score is computed from the sums.
///
/// ```
/// use polars_rag::metrics::chrf::{corpus_chrf_of_stats, ChrfOptions, Scratch};
/// let opts = ChrfOptions::default();
/// let mut scratch = Scratch::default();
/// let mut sums = vec![[0u64; 3]; 6];
/// for (hyp, reference) in [("the cat sat", "the cat sat"), ("a dog", "a dog ran")] {
///     scratch.chrf(hyp, &[reference], &opts);
///     for (sum, row) in sums.iter_mut().zip(scratch.best_stats()) {
///         for i in 0..3 {
///             sum[i] += row[i];
///         }
///     }
/// }
/// let score = corpus_chrf_of_stats(&sums, &opts);
/// // sacrebleu.corpus_chrf(["the cat sat", "a dog"], [["the cat sat", "a dog ran"]]).score / 100
/// assert!((score - 0.7656844006637122).abs() < 1e-12);
/// ```
pub fn corpus_chrf_of_stats(sums: &[[u64; 3]], opts: &ChrfOptions) -> f64 {
    if sums.is_empty() {
        return 0.0;
    }
    f_score(sums, opts) / 100.0
}

/// Corpus chrF (default settings) of summed per-row statistics laid out as in the
/// `corpus_chrf_stats` column (a comparison resamples them). Resampled sums are weighted, so they
/// are rounded to whole counts first.
///
/// ```
/// use polars_rag::metrics::chrf::corpus_chrf_of_sums;
/// let perfect: Vec<f64> = (0..6).flat_map(|_| [5.0, 5.0, 5.0]).collect();
/// assert!((corpus_chrf_of_sums(&perfect) - 1.0).abs() < 1e-12);
/// ```
pub fn corpus_chrf_of_sums(s: &[f64]) -> f64 {
    let whole = |x: f64| x.max(0.0).round() as u64;
    let sums: Vec<[u64; 3]> = s
        .chunks_exact(3)
        .map(|c| [whole(c[0]), whole(c[1]), whole(c[2])])
        .collect();
    corpus_chrf_of_stats(&sums, &ChrfOptions::default())
}

/// sacrebleu's `CHRF._compute_f_score` over `[hyp, ref, match]` triples, in 0..100.
fn f_score(stats: &[[u64; 3]], opts: &ChrfOptions) -> f64 {
    let eps = 1e-16;
    let factor = (opts.beta as f64) * (opts.beta as f64);
    let mut score = 0.0f64;
    let mut effective_order = 0u64;
    let (mut avg_prec, mut avg_rec) = (0.0f64, 0.0f64);
    for &[n_hyp, n_ref, n_match] in stats {
        let prec = if n_hyp > 0 {
            n_match as f64 / n_hyp as f64
        } else {
            eps
        };
        let rec = if n_ref > 0 {
            n_match as f64 / n_ref as f64
        } else {
            eps
        };
        let denom = factor * prec + rec;
        score += if denom > 0.0 {
            (1.0 + factor) * prec * rec / denom
        } else {
            eps
        };
        if n_hyp > 0 && n_ref > 0 {
            avg_prec += prec;
            avg_rec += rec;
            effective_order += 1;
        }
    }
    if opts.eps_smoothing {
        return 100.0 * score / stats.len() as f64;
    }
    if effective_order == 0 {
        avg_prec = 0.0;
        avg_rec = 0.0;
    } else {
        avg_prec /= effective_order as f64;
        avg_rec /= effective_order as f64;
    }
    if avg_prec + avg_rec != 0.0 {
        let mut s = (1.0 + factor) * avg_prec * avg_rec;
        s /= factor * avg_prec + avg_rec;
        100.0 * s
    } else {
        0.0
    }
}

/// Sorted n-gram keys of every order of one text.
#[derive(Default, Clone, Debug)]
struct Grams {
    /// Per order (characters first, then words): sorted `(key, count)` runs.
    orders: Vec<Vec<(u128, u32)>>,
    /// Per order: total number of n-grams.
    totals: Vec<u64>,
}

/// Reusable buffers for scoring many segments.
#[derive(Default, Clone, Debug)]
pub struct Scratch {
    lower: String,
    chars: Vec<u32>,
    words: Vec<u32>,
    /// Ids of n-grams too long for a packed key (this call only).
    long: HashMap<Vec<u32>, u128>,
    keys: Vec<u128>,
    interner: Interner,
    hyp: Grams,
    refr: Grams,
    stats: Vec<[u64; 3]>,
    best: Vec<[u64; 3]>,
}

const PUNCTS: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

impl Scratch {
    /// The `[hyp, ref, match]` counts per order of the best reference of the last
    /// [`Scratch::chrf`] call (what corpus chrF sums); empty when that call had no reference.
    pub fn best_stats(&self) -> &[[u64; 3]] {
        &self.best
    }

    /// [`chrf`] with reused buffers.
    pub fn chrf(&mut self, hyp: &str, refs: &[&str], opts: &ChrfOptions) -> f64 {
        if refs.is_empty() {
            self.best.clear();
            return 0.0;
        }
        self.interner.reset_if_large();
        self.long.clear();
        let mut hyp_grams = std::mem::take(&mut self.hyp);
        let mut ref_grams = std::mem::take(&mut self.refr);
        self.grams(hyp, opts, &mut hyp_grams);
        let mut best_f = -1.0f64;
        self.best.clear();
        for r in refs {
            self.grams(r, opts, &mut ref_grams);
            self.stats.clear();
            for (o, h) in hyp_grams.orders.iter().enumerate() {
                let rr = &ref_grams.orders[o];
                let mut matched = 0u64;
                let mut j = 0;
                for &(k, hc) in h {
                    while j < rr.len() && rr[j].0 < k {
                        j += 1;
                    }
                    if j < rr.len() && rr[j].0 == k {
                        matched += hc.min(rr[j].1) as u64;
                    }
                }
                let n_ref = ref_grams.totals[o];
                let n_hyp = if rr.is_empty() {
                    0
                } else {
                    hyp_grams.totals[o]
                };
                self.stats.push([n_hyp, n_ref, matched]);
            }
            let f = f_score(&self.stats, opts);
            if f > best_f {
                best_f = f;
                std::mem::swap(&mut self.best, &mut self.stats);
            }
        }
        self.hyp = hyp_grams;
        self.refr = ref_grams;
        f_score(&self.best, opts) / 100.0
    }

    fn grams(&mut self, text: &str, opts: &ChrfOptions, out: &mut Grams) {
        let text = if opts.lowercase {
            self.lower = text.to_lowercase();
            self.lower.as_str()
        } else {
            text
        };
        let n_orders = opts.char_order + opts.word_order;
        out.orders.resize_with(n_orders, Vec::new);
        out.totals.clear();
        out.totals.resize(n_orders, 0);
        for o in out.orders.iter_mut() {
            o.clear();
        }
        // Character n-grams.
        self.chars.clear();
        self.chars.extend(
            text.chars()
                .filter(|&c| opts.whitespace || !Whitespace::Python.is_space(c))
                .map(|c| c as u32 + 1),
        );
        for n in 1..=opts.char_order {
            let o = n - 1;
            count_ngrams(
                &self.chars,
                n,
                21,
                &mut self.long,
                &mut self.keys,
                &mut out.orders[o],
            );
            out.totals[o] = (self.chars.len() + 1).saturating_sub(n) as u64;
        }
        // Word n-grams.
        if opts.word_order > 0 {
            self.words.clear();
            for w in text.split(|c| Whitespace::Python.is_space(c)) {
                if w.is_empty() {
                    continue;
                }
                let first = w.chars().next().unwrap_or(' ');
                let last = w.chars().next_back().unwrap_or(' ');
                if w.chars().nth(1).is_none() {
                    self.words.push(self.interner.intern(w) + 1);
                } else if PUNCTS.contains(last) {
                    let cut = w.len() - last.len_utf8();
                    self.words.push(self.interner.intern(&w[..cut]) + 1);
                    self.words.push(self.interner.intern(&w[cut..]) + 1);
                } else if PUNCTS.contains(first) {
                    let cut = first.len_utf8();
                    self.words.push(self.interner.intern(&w[..cut]) + 1);
                    self.words.push(self.interner.intern(&w[cut..]) + 1);
                } else {
                    self.words.push(self.interner.intern(w) + 1);
                }
            }
            for n in 1..=opts.word_order {
                let o = opts.char_order + n - 1;
                count_ngrams(
                    &self.words,
                    n,
                    32,
                    &mut self.long,
                    &mut self.keys,
                    &mut out.orders[o],
                );
                out.totals[o] = (self.words.len() + 1).saturating_sub(n) as u64;
            }
        }
    }
}

/// Sorted `(key, count)` runs of the `n`-grams of `syms` (each symbol non-zero and below
/// `2^bits`). N-grams that do not fit in 128 bits are interned in `long`.
fn count_ngrams(
    syms: &[u32],
    n: usize,
    bits: u32,
    long: &mut HashMap<Vec<u32>, u128>,
    keys: &mut Vec<u128>,
    out: &mut Vec<(u128, u32)>,
) {
    out.clear();
    keys.clear();
    if syms.len() < n || n == 0 {
        return;
    }
    if n as u32 * bits <= 128 {
        keys.extend(syms.windows(n).map(|w| {
            let mut k = 0u128;
            for &s in w {
                k = (k << bits) | s as u128;
            }
            k
        }));
    } else {
        for w in syms.windows(n) {
            let next = long.len() as u128;
            let id = match long.get(w) {
                Some(&id) => id,
                None => {
                    long.insert(w.to_vec(), next);
                    next
                }
            };
            keys.push(id);
        }
    }
    keys.sort_unstable();
    let mut i = 0;
    while i < keys.len() {
        let k = keys[i];
        let mut j = i + 1;
        while j < keys.len() && keys[j] == k {
            j += 1;
        }
        out.push((k, (j - i) as u32));
        i = j;
    }
}

impl crate::metrics::Section for ChrfOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_long_orders() {
        let o = ChrfOptions::default();
        assert_eq!(chrf("", &[""], &o), 0.0);
        assert_eq!(chrf("x", &[], &o), 0.0);
        assert_eq!(chrf("   ", &["   "], &o), 0.0);
        let long = ChrfOptions {
            char_order: 9,
            word_order: 5,
            ..o
        };
        assert_eq!(
            chrf(
                "a long sentence here ok",
                &["a long sentence here ok"],
                &long
            ),
            1.0
        );
        let mut sc = Scratch::default();
        let a = sc.chrf("abcdefghij", &["abcdefghik"], &long);
        assert_eq!(a, sc.chrf("abcdefghij", &["abcdefghik"], &long));
        assert!(a > 0.0 && a < 1.0);
    }
}
