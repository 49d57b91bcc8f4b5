//! BLEU exactly as sacrebleu 2.6.0 computes it: `sentence_bleu(hyp, refs, ...)` through
//! [`bleu`], and `corpus_bleu` by summing [`BleuStats`] and scoring them with
//! [`BleuOptions::corpus`].
//!
//! Each text is lowercased (optionally), right-stripped of Python whitespace and tokenized
//! ([`BleuTokenizer`]); tokens are the whitespace-separated pieces. For n = 1..4 the hypothesis
//! n-grams are counted and clipped by the largest count of that n-gram in any one reference;
//! the reference length is the one closest to the hypothesis length, the shorter one on ties.
//! The score follows sacrebleu's `compute_bleu` operation for operation (smoothing, effective
//! order, brevity penalty `exp(1 - ref_len / sys_len)`), then is divided by 100, so
//! `score` lies in 0..1 while `precisions` stay in sacrebleu's 0..100.
//!
//! With no reference at all (where sacrebleu raises) the hypothesis n-grams are counted, nothing
//! matches, `ref_len` is 0 and the score is 0.
//!
//! ```
//! use polars_rag::metrics::bleu::{bleu, BleuOptions};
//! let s = bleu(
//!     "The Eiffel Tower is located in India.",
//!     &["The Eiffel Tower is located in Paris."],
//!     &BleuOptions::default(),
//! );
//! assert_eq!(s.counts, [7, 5, 4, 3]);
//! assert_eq!(s.totals, [8, 7, 6, 5]);
//! assert!((s.score - 0.7071067811865478).abs() < 1e-15);
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use crate::text::normalize::Whitespace;
use crate::text::sacrebleu::BleuTokenizer;

/// sacrebleu's version, printed in signatures.
pub const SACREBLEU_VERSION: &str = "2.6.0";

/// Smoothing of zero n-gram precisions (sacrebleu's `smooth_method`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum SmoothMethod {
    /// NIST geometric smoothing: the k-th zero precision becomes `100 / (2^k · total)`.
    #[default]
    #[serde(rename = "exp")]
    Exp,
    /// No smoothing.
    #[serde(rename = "none")]
    None,
    /// Zero precisions become `100 · smooth_value / total` (default value 0.1).
    #[serde(rename = "floor")]
    Floor,
    /// Add `smooth_value` (default 1) to the counts and totals of orders 2..4.
    #[serde(rename = "add-k")]
    AddK,
}

impl SmoothMethod {
    /// sacrebleu's name of the method.
    pub fn name(&self) -> &'static str {
        match self {
            SmoothMethod::Exp => "exp",
            SmoothMethod::None => "none",
            SmoothMethod::Floor => "floor",
            SmoothMethod::AddK => "add-k",
        }
    }

    /// sacrebleu's `SMOOTH_DEFAULTS`.
    fn default_value(&self) -> Option<f64> {
        match self {
            SmoothMethod::Floor => Some(0.1),
            SmoothMethod::AddK => Some(1.0),
            SmoothMethod::Exp | SmoothMethod::None => None,
        }
    }
}

/// Options of [`bleu`]. The default is sacrebleu's `sentence_bleu` configuration; see
/// [`BleuOptions::corpus`] for `corpus_bleu`'s.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BleuOptions {
    /// Tokenizer (sacrebleu's `tokenize`).
    pub tokenize: BleuTokenizer,
    /// Smoothing method.
    pub smooth_method: SmoothMethod,
    /// Value for `floor` and `add-k`; `None` takes sacrebleu's default (0.1 and 1).
    pub smooth_value: Option<f64>,
    /// Lowercase both sides first.
    pub lowercase: bool,
    /// Average only over the orders up to the last one with any hypothesis n-gram.
    #[serde(alias = "use_effective_order")]
    pub effective_order: bool,
}

impl Default for BleuOptions {
    fn default() -> Self {
        BleuOptions {
            tokenize: BleuTokenizer::Tok13a,
            smooth_method: SmoothMethod::Exp,
            smooth_value: None,
            lowercase: false,
            effective_order: true,
        }
    }
}

impl BleuOptions {
    /// sacrebleu's `corpus_bleu` defaults: as [`Default`] but without effective order.
    ///
    /// ```
    /// use polars_rag::metrics::bleu::BleuOptions;
    /// assert!(!BleuOptions::corpus().effective_order);
    /// ```
    pub fn corpus() -> Self {
        BleuOptions {
            effective_order: false,
            ..BleuOptions::default()
        }
    }
}

/// The options of `corpus_bleu` as a configuration section or keyword arguments: the fields of
/// [`BleuOptions`], with sacrebleu's corpus default of no effective order for any field left out.
///
/// ```
/// use polars_rag::metrics::bleu::CorpusBleuOptions;
/// let o: CorpusBleuOptions = serde_json::from_str(r#"{"lowercase": true}"#).unwrap();
/// assert!(o.0.lowercase && !o.0.effective_order);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CorpusBleuOptions(#[serde(deserialize_with = "corpus_fields")] pub BleuOptions);

impl Default for CorpusBleuOptions {
    fn default() -> Self {
        CorpusBleuOptions(BleuOptions::corpus())
    }
}

/// Reads [`BleuOptions`] fields over the corpus defaults.
fn corpus_fields<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BleuOptions, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Given {
        tokenize: Option<BleuTokenizer>,
        smooth_method: Option<SmoothMethod>,
        smooth_value: Option<f64>,
        lowercase: Option<bool>,
        #[serde(alias = "use_effective_order")]
        effective_order: Option<bool>,
    }
    let given = Given::deserialize(d)?;
    let base = BleuOptions::corpus();
    Ok(BleuOptions {
        tokenize: given.tokenize.unwrap_or(base.tokenize),
        smooth_method: given.smooth_method.unwrap_or(base.smooth_method),
        smooth_value: given.smooth_value.or(base.smooth_value),
        lowercase: given.lowercase.unwrap_or(base.lowercase),
        effective_order: given.effective_order.unwrap_or(base.effective_order),
    })
}

/// BLEU's sufficient statistics; corpus BLEU sums them over segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BleuStats {
    /// Clipped matching n-grams, n = 1..4.
    pub counts: [u64; 4],
    /// Hypothesis n-grams, n = 1..4.
    pub totals: [u64; 4],
    /// Hypothesis tokens.
    pub sys_len: u64,
    /// Closest reference length.
    pub ref_len: u64,
}

impl BleuStats {
    /// Add `other` (sacrebleu's `sum_of_lists`).
    pub fn add(&mut self, other: &BleuStats) {
        for n in 0..4 {
            self.counts[n] += other.counts[n];
            self.totals[n] += other.totals[n];
        }
        self.sys_len += other.sys_len;
        self.ref_len += other.ref_len;
    }
}

/// A BLEU score with its statistics (sacrebleu's `BLEUScore`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BleuScore {
    /// sacrebleu's `score / 100`, in 0..1.
    pub score: f64,
    /// Clipped matching n-grams (before any `add-k` smoothing).
    pub counts: [u64; 4],
    /// Hypothesis n-grams (before any `add-k` smoothing).
    pub totals: [u64; 4],
    /// n-gram precisions in 0..100, as sacrebleu reports them.
    pub precisions: [f64; 4],
    /// Brevity penalty.
    pub bp: f64,
    pub sys_len: u64,
    pub ref_len: u64,
}

/// sacrebleu's `sentence_bleu(hyp, refs, ...)` (see the [module documentation](self)).
///
/// ```
/// use polars_rag::metrics::bleu::{bleu, BleuOptions};
/// let s = bleu("the cat sat", &["the cat sat on the mat"], &BleuOptions::default());
/// assert_eq!(s.bp, (1.0f64 - 6.0 / 3.0).exp());
/// assert_eq!(s.precisions, [100.0, 100.0, 100.0, 0.0]);
/// ```
pub fn bleu(hyp: &str, refs: &[&str], opts: &BleuOptions) -> BleuScore {
    Scratch::default().bleu(hyp, refs, opts)
}

/// The sufficient statistics of one segment.
///
/// ```
/// use polars_rag::metrics::bleu::{score_from_stats, stats, BleuOptions};
/// let mut total = stats("The cat sat on the mat", &["The cat sat on the mat"], &BleuOptions::corpus());
/// total.add(&stats("Dogs barked", &["It was a sunny day."], &BleuOptions::corpus()));
/// let s = score_from_stats(&total, &BleuOptions::corpus());
/// assert_eq!(s.counts, [6, 5, 4, 3]);
/// assert_eq!(s.totals, [8, 6, 4, 3]);
/// ```
pub fn stats(hyp: &str, refs: &[&str], opts: &BleuOptions) -> BleuStats {
    Scratch::default().stats(hyp, refs, opts)
}

/// Python's `math.log` floored as sacrebleu's `my_log`.
#[inline]
fn my_log(x: f64) -> f64 {
    if x == 0.0 {
        -9999999999.0
    } else {
        x.ln()
    }
}

/// sacrebleu's `BLEU.compute_bleu`.
///
/// ```
/// use polars_rag::metrics::bleu::{score_from_stats, BleuOptions, BleuStats};
/// let st = BleuStats { counts: [3, 2, 1, 0], totals: [3, 2, 1, 0], sys_len: 3, ref_len: 3 };
/// assert_eq!(score_from_stats(&st, &BleuOptions::corpus()).score, 0.0);
/// assert!(score_from_stats(&st, &BleuOptions::default()).score > 0.99);
/// ```
pub fn score_from_stats(st: &BleuStats, opts: &BleuOptions) -> BleuScore {
    let smooth_value = opts
        .smooth_value
        .or_else(|| opts.smooth_method.default_value());
    let mut bp = 1.0;
    if st.sys_len < st.ref_len {
        bp = if st.sys_len > 0 {
            (1.0 - st.ref_len as f64 / st.sys_len as f64).exp()
        } else {
            0.0
        };
    }
    let mut out = BleuScore {
        score: 0.0,
        counts: st.counts,
        totals: st.totals,
        precisions: [0.0; 4],
        bp,
        sys_len: st.sys_len,
        ref_len: st.ref_len,
    };
    if st.counts.iter().all(|&c| c == 0) {
        return out;
    }
    let mut smooth_mteval = 1.0f64;
    let mut eff_order = 4usize;
    for n in 1..=4usize {
        let mut correct = st.counts[n - 1] as f64;
        let mut total = st.totals[n - 1] as f64;
        if opts.smooth_method == SmoothMethod::AddK && n > 1 {
            let k = smooth_value.unwrap_or(1.0);
            correct += k;
            total += k;
        }
        if total == 0.0 {
            break;
        }
        if opts.effective_order {
            eff_order = n;
        }
        if correct == 0.0 {
            match opts.smooth_method {
                SmoothMethod::Exp => {
                    smooth_mteval *= 2.0;
                    out.precisions[n - 1] = 100.0 / (smooth_mteval * total);
                }
                SmoothMethod::Floor => {
                    out.precisions[n - 1] = 100.0 * smooth_value.unwrap_or(0.1) / total;
                }
                SmoothMethod::None | SmoothMethod::AddK => {}
            }
        } else {
            out.precisions[n - 1] = 100.0 * correct / total;
        }
    }
    let mut sum = 0.0f64;
    for &p in &out.precisions[..eff_order] {
        sum += my_log(p);
    }
    out.score = bp * (sum / eff_order as f64).exp() / 100.0;
    out
}

/// sacrebleu's BLEU signature for `nrefs` references per segment, e.g.
/// `nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0`.
///
/// ```
/// use polars_rag::metrics::bleu::{signature_nrefs, BleuOptions, SmoothMethod};
/// let opts = BleuOptions { smooth_method: SmoothMethod::Floor, ..BleuOptions::corpus() };
/// assert_eq!(
///     signature_nrefs(&opts, 2),
///     "nrefs:2|case:mixed|eff:no|tok:13a|smooth:floor[0.10]|version:2.6.0"
/// );
/// ```
pub fn signature_nrefs(opts: &BleuOptions, nrefs: usize) -> String {
    signature_with(opts, &nrefs.to_string())
}

/// The signature of a BLEU column. The number of references may differ from row to row, so
/// `nrefs` is `var`, which is what sacrebleu prints when the count varies across segments; use
/// [`signature_nrefs`] for a fixed count.
///
/// ```
/// use polars_rag::metrics::bleu::{signature, BleuOptions};
/// assert_eq!(
///     signature(&BleuOptions::default()),
///     "nrefs:var|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0"
/// );
/// ```
pub fn signature(opts: &BleuOptions) -> String {
    signature_with(opts, "var")
}

fn signature_with(opts: &BleuOptions, nrefs: &str) -> String {
    let mut smooth = opts.smooth_method.name().to_owned();
    if let Some(def) = opts.smooth_method.default_value() {
        smooth.push_str(&format!("[{:.2}]", opts.smooth_value.unwrap_or(def)));
    }
    format!(
        "nrefs:{nrefs}|case:{}|eff:{}|tok:{}|smooth:{smooth}|version:{SACREBLEU_VERSION}",
        if opts.lowercase { "lc" } else { "mixed" },
        if opts.effective_order { "yes" } else { "no" },
        opts.tokenize.name(),
    )
}

// ---------------------------------------------------------------------------------------------
// Token interning and n-gram counting.

/// FNV-1a-style hasher for short token strings.
#[derive(Default, Clone, Copy)]
pub(crate) struct TokHasher(u64);

impl Hasher for TokHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 31)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0 ^ 0xcbf2_9ce4_8422_2325;
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Token → id map kept across calls (ids only need to be consistent within one call); cleared
/// when it grows large.
#[derive(Default, Clone, Debug)]
pub(crate) struct Interner {
    map: HashMap<Box<str>, u32, BuildHasherDefault<TokHasher>>,
}

impl Interner {
    const MAX: usize = 1 << 20;

    /// Start of a call: forget everything if the map grew too large.
    pub(crate) fn reset_if_large(&mut self) {
        if self.map.len() > Self::MAX {
            self.map.clear();
        }
    }

    #[inline]
    pub(crate) fn intern(&mut self, tok: &str) -> u32 {
        if let Some(&id) = self.map.get(tok) {
            return id;
        }
        let id = self.map.len() as u32;
        self.map.insert(tok.into(), id);
        id
    }
}

/// Key of the n-gram `ids` (1 ≤ n ≤ 4): ids + 1 in 32-bit lanes from the top.
#[inline]
fn key(ids: &[u32]) -> u128 {
    let mut k = 0u128;
    for (i, &id) in ids.iter().enumerate() {
        k |= ((id as u128) + 1) << (32 * (3 - i));
    }
    k
}

/// The order n of a key made by [`key`].
#[inline]
fn order(k: u128) -> usize {
    4 - (k.trailing_zeros() / 32) as usize
}

/// All 1..4-gram keys of `ids`, sorted.
fn ngram_keys(ids: &[u32], out: &mut Vec<u128>) {
    out.clear();
    for n in 1..=4usize {
        if ids.len() >= n {
            out.extend(ids.windows(n).map(key));
        }
    }
    out.sort_unstable();
}

/// Run-length encode sorted keys into `(key, count)` pairs appended to `out`.
fn rle(keys: &[u128], out: &mut Vec<(u128, u32)>) {
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

/// Reusable buffers for scoring many segments.
#[derive(Default, Clone, Debug)]
pub struct Scratch {
    lower: String,
    tok: String,
    tmp: String,
    interner: Interner,
    ids: Vec<u32>,
    keys: Vec<u128>,
    /// Reference n-grams with their maximum count over the references, sorted by key.
    ref_counts: Vec<(u128, u32)>,
    pairs: Vec<(u128, u32)>,
    hyp_counts: Vec<(u128, u32)>,
}

impl Scratch {
    /// [`bleu`] with reused buffers.
    pub fn bleu(&mut self, hyp: &str, refs: &[&str], opts: &BleuOptions) -> BleuScore {
        let st = self.stats(hyp, refs, opts);
        score_from_stats(&st, opts)
    }

    /// [`stats`] with reused buffers.
    pub fn stats(&mut self, hyp: &str, refs: &[&str], opts: &BleuOptions) -> BleuStats {
        self.interner.reset_if_large();
        let mut st = BleuStats::default();
        // Hypothesis.
        self.token_ids(hyp, opts);
        let hyp_len = self.ids.len() as u64;
        st.sys_len = hyp_len;
        ngram_keys(&self.ids, &mut self.keys);
        self.hyp_counts.clear();
        rle(&self.keys, &mut self.hyp_counts);
        // References: max count per n-gram, closest length (shorter on ties).
        self.ref_counts.clear();
        self.pairs.clear();
        let mut closest: Option<(u64, u64)> = None;
        for (r, text) in refs.iter().enumerate() {
            self.token_ids(text, opts);
            let len = self.ids.len() as u64;
            let diff = hyp_len.abs_diff(len);
            closest = match closest {
                Some((d, l)) if d < diff || (d == diff && l <= len) => Some((d, l)),
                _ => Some((diff, len)),
            };
            ngram_keys(&self.ids, &mut self.keys);
            if r == 0 {
                rle(&self.keys, &mut self.ref_counts);
            } else {
                if r == 1 {
                    self.pairs.extend_from_slice(&self.ref_counts);
                }
                rle(&self.keys, &mut self.pairs);
            }
        }
        if refs.len() > 1 {
            self.pairs.sort_unstable();
            self.ref_counts.clear();
            // Sorted by (key, count): the last pair of each key holds its maximum.
            for i in 0..self.pairs.len() {
                let last = i + 1 == self.pairs.len() || self.pairs[i + 1].0 != self.pairs[i].0;
                if last {
                    self.ref_counts.push(self.pairs[i]);
                }
            }
        }
        st.ref_len = closest.map_or(0, |(_, l)| l);
        // Clip the hypothesis counts.
        let mut j = 0;
        for &(k, hc) in &self.hyp_counts {
            let n = order(k) - 1;
            st.totals[n] += hc as u64;
            while j < self.ref_counts.len() && self.ref_counts[j].0 < k {
                j += 1;
            }
            if j < self.ref_counts.len() && self.ref_counts[j].0 == k {
                st.counts[n] += hc.min(self.ref_counts[j].1) as u64;
            }
        }
        st
    }

    /// sacrebleu's `_preprocess_segment` followed by `str.split()`, as token ids in `self.ids`.
    fn token_ids(&mut self, text: &str, opts: &BleuOptions) {
        let text = if opts.lowercase {
            // Python's `str.lower()`, final sigma included.
            self.lower = text.to_lowercase();
            self.lower.as_str()
        } else {
            text
        };
        let text = text.trim_end_matches(|c| Whitespace::Python.is_space(c));
        opts.tokenize
            .tokenize_with(text, &mut self.tok, &mut self.tmp);
        self.ids.clear();
        for t in self.tok.split(|c| Whitespace::Python.is_space(c)) {
            if !t.is_empty() {
                self.ids.push(self.interner.intern(t));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_inputs() {
        let o = BleuOptions::default();
        let s = bleu("", &[""], &o);
        assert_eq!(s.score, 0.0);
        assert_eq!(s.bp, 1.0);
        let s = bleu("", &["x"], &o);
        assert_eq!((s.score, s.bp, s.ref_len), (0.0, 0.0, 1));
        let s = bleu("x y", &[], &o);
        assert_eq!((s.score, s.totals, s.ref_len), (0.0, [2, 1, 0, 0], 0));
        let s = bleu("   ", &["   "], &BleuOptions::corpus());
        assert_eq!(s.score, 0.0);
    }

    #[test]
    fn closest_ref_len_tie_takes_shorter() {
        let st = stats("a b c", &["a b c d", "a b"], &BleuOptions::default());
        assert_eq!(st.ref_len, 2);
        let st = stats("a b c", &["a b", "a b c d"], &BleuOptions::default());
        assert_eq!(st.ref_len, 2);
    }

    #[test]
    fn scratch_reuse_matches_fresh() {
        let mut sc = Scratch::default();
        let o = BleuOptions::default();
        for (h, r) in [("a b c d", "a b c"), ("x y", "y x"), ("a b c d", "a b c")] {
            assert_eq!(sc.bleu(h, &[r], &o), bleu(h, &[r], &o));
        }
    }
}
