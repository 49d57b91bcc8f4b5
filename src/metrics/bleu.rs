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
use crate::text::sacrebleu::{tokens_13a, BleuTokenizer, Span};

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

crate::settings::from_str_by_serde!(SmoothMethod);

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
    #[serde(rename = "use_effective_order", alias = "effective_order")]
    pub effective_order: bool,
    /// sacrebleu's definitions, or datapizza-ai's `bleu_score` / `corpus_bleu_score` around them.
    pub compat: BleuCompat,
}

/// Which BLEU definitions to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BleuCompat {
    /// sacrebleu's sentence (and corpus) BLEU.
    #[default]
    Standard,
    /// datapizza-ai's `metrics.py`: its empty-input rules ([`datapizza_bleu_score`]), and for
    /// several answers per query the mean over ground-truth texts of the best BLEU of any answer
    /// ([`datapizza_corpus_bleu_score`]).
    Datapizza,
}

crate::settings::from_str_by_serde!(BleuCompat);

impl Default for BleuOptions {
    fn default() -> Self {
        BleuOptions {
            tokenize: BleuTokenizer::Tok13a,
            smooth_method: SmoothMethod::Exp,
            smooth_value: None,
            lowercase: false,
            effective_order: true,
            compat: BleuCompat::Standard,
        }
    }
}

impl BleuOptions {
    /// Checks the options; the message names `metric` and the option. `smooth_value` must be a
    /// finite number ≥ 0, and at most 1 with `floor` smoothing (a floor above one match per
    /// n-gram would make a precision exceed 100 %, and the score leave [0, 1]).
    ///
    /// ```
    /// use polars_rag::metrics::bleu::{BleuOptions, SmoothMethod};
    /// assert!(BleuOptions::default().validate("bleu").is_ok());
    /// let floor = |v| BleuOptions { smooth_method: SmoothMethod::Floor, smooth_value: Some(v), ..BleuOptions::default() };
    /// assert!(floor(0.5).validate("bleu").is_ok());
    /// assert!(floor(5.0).validate("bleu").unwrap_err().to_string().contains("smooth_value"));
    /// assert!(floor(-1.0).validate("bleu").is_err());
    /// ```
    pub fn validate(&self, metric: &str) -> crate::Result<()> {
        // Problems are found as messages; their kind is given once, here.
        let checked = || -> Result<(), String> {
            if self.compat == BleuCompat::Datapizza && metric == "corpus_bleu" {
                return Err(format!("{metric}: datapizza's corpus BLEU is per query: use bleu with compat=\"datapizza\" on a list of answers per row"));
            }
            if let Some(v) = self.smooth_value {
                let upper = match self.smooth_method {
                    SmoothMethod::Floor => 1.0,
                    _ => f64::MAX,
                };
                if !(v.is_finite() && (0.0..=upper).contains(&v)) {
                    let range = if upper == 1.0 {
                        "in [0, 1]"
                    } else {
                        "a finite number >= 0"
                    };
                    return Err(format!(
                        "{metric}: smooth_value must be {range} with smooth_method=\"{}\", got {v}",
                        self.smooth_method.name()
                    ));
                }
            }
            Ok(())
        };
        checked().map_err(crate::Error::options)
    }

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
        compat: Option<BleuCompat>,
    }
    let given = Given::deserialize(d)?;
    let base = BleuOptions::corpus();
    Ok(BleuOptions {
        tokenize: given.tokenize.unwrap_or(base.tokenize),
        smooth_method: given.smooth_method.unwrap_or(base.smooth_method),
        smooth_value: given.smooth_value.or(base.smooth_value),
        lowercase: given.lowercase.unwrap_or(base.lowercase),
        effective_order: given.effective_order.unwrap_or(base.effective_order),
        compat: given.compat.unwrap_or(base.compat),
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
    /// Hypothesis length in tokens.
    pub sys_len: u64,
    /// Effective reference length in tokens (the closest reference's).
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

/// datapizza-ai's `bleu_score(retrieved_chunk, ground_truth_chunks)` with sacrebleu options
/// `opts` (datapizza's are sacrebleu's sentence defaults, [`BleuOptions::default`]): sentence
/// BLEU, except 0.0 without references and, for an empty hypothesis, 1.0 when every reference is
/// empty too, else 0.0.
///
/// ```
/// use polars_rag::metrics::bleu::{datapizza_bleu_score, BleuOptions, Scratch};
/// let (mut s, o) = (Scratch::default(), BleuOptions::default());
/// assert_eq!(datapizza_bleu_score(&mut s, "", &["", ""], &o), 1.0);
/// assert_eq!(datapizza_bleu_score(&mut s, "anything here", &[], &o), 0.0);
/// ```
pub fn datapizza_bleu_score(
    scratch: &mut Scratch,
    hypothesis: &str,
    references: &[&str],
    opts: &BleuOptions,
) -> f64 {
    if references.is_empty() {
        return 0.0;
    }
    if hypothesis.is_empty() {
        return if references.iter().all(|r| r.is_empty()) {
            1.0
        } else {
            0.0
        };
    }
    scratch.bleu(hypothesis, references, opts).score
}

/// datapizza-ai's `corpus_bleu_score(retrieved_chunks, ground_truth_chunks)`: per ground-truth
/// text, the best [`datapizza_bleu_score`] of any hypothesis against it alone; their mean. No
/// hypothesis gives 0.0; no ground truth is datapizza's `ValueError`.
///
/// ```
/// use polars_rag::metrics::bleu::{datapizza_corpus_bleu_score, BleuOptions, Scratch};
/// let (mut s, o) = (Scratch::default(), BleuOptions::default());
/// let got = datapizza_corpus_bleu_score(&mut s, &["a b c d"], &["a b c d", "w x y z"], &o).unwrap();
/// assert!((got - 0.5).abs() < 1e-12);
/// assert!(datapizza_corpus_bleu_score(&mut s, &["x"], &[], &o).is_err());
/// ```
pub fn datapizza_corpus_bleu_score(
    scratch: &mut Scratch,
    hypotheses: &[&str],
    ground_truth: &[&str],
    opts: &BleuOptions,
) -> crate::Result<f64> {
    if ground_truth.is_empty() {
        return Err(crate::Error::input(
            "ground_truth_chunks cannot be empty for corpus_bleu.",
        ));
    }
    if hypotheses.is_empty() {
        return Ok(0.0);
    }
    let mut sum = 0.0;
    for gt in ground_truth {
        let mut best = 0.0;
        for h in hypotheses {
            let b = datapizza_bleu_score(scratch, h, &[gt], opts);
            if b > best {
                best = b;
            }
        }
        sum += best;
    }
    Ok(sum / ground_truth.len() as f64)
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

/// Statistics per row of corpus BLEU (the `corpus_bleu_stats` column of a scores table): matches
/// and totals for n = 1..4, hypothesis length, closest reference length.
pub const CORPUS_STATS: usize = 10;

/// Corpus BLEU (sacrebleu's corpus settings) of summed per-row statistics, laid out as
/// [`CORPUS_STATS`] says. Resampled sums are weighted, so they are rounded to whole counts first.
///
/// ```
/// use polars_rag::metrics::bleu::corpus_bleu_of_sums;
/// let perfect = [4.0, 3.0, 2.0, 1.0, 4.0, 3.0, 2.0, 1.0, 4.0, 4.0];
/// assert!((corpus_bleu_of_sums(&perfect) - 1.0).abs() < 1e-12);
/// ```
pub fn corpus_bleu_of_sums(s: &[f64]) -> f64 {
    let at = |i: usize| s.get(i).map_or(0, |x| x.max(0.0).round() as u64);
    let st = BleuStats {
        counts: [at(0), at(1), at(2), at(3)],
        totals: [at(4), at(5), at(6), at(7)],
        sys_len: at(8),
        ref_len: at(9),
    };
    score_from_stats(&st, &BleuOptions::corpus()).score
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
    // Identical texts give exp(mean of ln 100) / 100, which can round one ulp above 1.
    out.score = (bp * (sum / eff_order as f64).exp() / 100.0).min(1.0);
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
    match opts.compat {
        BleuCompat::Standard => signature_with(opts, "var"),
        BleuCompat::Datapizza => format!(
            "{}|compat:datapizza-metrics.py-222bb6e",
            signature_with(opts, "var")
        ),
    }
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

/// "Not a token or n-gram of the hypothesis".
const NONE: u32 = u32::MAX;

/// Clipping state of one hypothesis token or n-gram.
#[derive(Default, Clone, Copy, Debug)]
struct Clip {
    /// Occurrences in the hypothesis.
    hyp: u32,
    /// Largest count in any reference seen so far.
    best: u32,
    /// Count in the current reference (valid when `stamp` is that reference's).
    cur: u32,
    stamp: u32,
}

/// 64-bit multiply folded to 64 bits: a fast mixer whose low bits depend on every input bit.
#[inline]
fn fold_mul(x: u64, k: u64) -> u64 {
    let m = (x as u128) * (k as u128);
    (m as u64) ^ ((m >> 64) as u64)
}

const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
const MUL: u64 = 0xa076_1d64_78bd_642f;

#[inline]
fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// The bytes `8 * k..8 * k + 8` of a token of `n` bytes that are inside it, as a mask.
#[inline]
fn byte_mask(n: usize, k: usize) -> u64 {
    let keep = n.saturating_sub(8 * k).min(8) as u32;
    // `1 << 8 * keep` without overflowing at 8 bytes.
    ((1u64 << (4 * keep)) << (4 * keep)).wrapping_sub(1)
}

/// The first 16 bytes of token `b` as two little-endian words, zero past the token's end:
/// tokens of the same length up to 16 bytes are equal exactly when their words are. `tail`
/// starts with the token and runs on to the end of its text; when it holds 16 bytes the words
/// are two loads and masks, with no branch on the token's length.
#[inline]
fn token_words(b: &[u8], tail: &[u8]) -> [u64; 2] {
    let n = b.len();
    if tail.len() >= 16 {
        [
            le64(tail) & byte_mask(n, 0),
            le64(&tail[8..]) & byte_mask(n, 1),
        ]
    } else {
        let mut a = [0u8; 16];
        let k = n.min(16);
        a[..k].copy_from_slice(&b[..k]);
        [le64(&a), le64(&a[8..])]
    }
}

/// Hash of a token from its length, its [`token_words`] and, past 16 bytes, the other bytes.
#[inline]
fn token_hash(b: &[u8], words: [u64; 2]) -> u64 {
    let n = b.len();
    let mut h = fold_mul(words[0] ^ SEED ^ n as u64, words[1] ^ MUL);
    if n > 16 {
        let mut rest = &b[16..];
        while rest.len() > 8 {
            h = fold_mul(h ^ le64(rest), MUL);
            rest = &rest[8..];
        }
        h = fold_mul(h ^ le64(&b[n - 8..]), MUL);
    }
    h
}

/// Slot of [`Vocab`]: empty unless `gen` is the table's current generation.
#[derive(Default, Clone, Copy, Debug)]
struct TokSlot {
    /// [`token_words`] of the token.
    words: [u64; 2],
    r#gen: u32,
    len: u32,
    /// Where a token longer than 16 bytes is kept in the arena.
    start: u32,
    /// Position of its first occurrence in the hypothesis.
    first: u32,
    /// Its clipping state (`hyp` is its count).
    clip: Clip,
}

/// The distinct hypothesis tokens of one call (open addressing, linear probing); a token's id
/// is its slot, which does not move during the call: the table is sized for the call's tokens
/// first (at most half full). Tokens of up to 16 bytes are compared by their words; longer
/// ones are copied into `arena` so the table outlives the buffers they came from. Bumping the
/// generation empties the table without touching the slots.
#[derive(Default, Clone, Debug)]
struct Vocab {
    slots: Vec<TokSlot>,
    /// The call uses `slots[..=mask]`.
    mask: usize,
    r#gen: u32,
    arena: Vec<u8>,
}

impl Vocab {
    /// Start of a call that interns at most `n` tokens.
    fn start(&mut self, n: usize) {
        let size = (2 * n).next_power_of_two().max(256);
        if self.slots.len() < size {
            self.slots.resize(size, TokSlot::default());
        }
        self.mask = size - 1;
        self.arena.clear();
        self.r#gen = self.r#gen.wrapping_add(1);
        if self.r#gen == 0 {
            self.slots.iter_mut().for_each(|s| s.r#gen = 0);
            self.r#gen = 1;
        }
    }

    /// Slot holding `tok`, or the empty slot where it belongs.
    #[inline]
    fn find(&self, tok: &[u8], words: [u64; 2]) -> usize {
        let n = tok.len();
        let mut i = token_hash(tok, words) as usize & self.mask;
        loop {
            let s = &self.slots[i];
            let empty = s.r#gen != self.r#gen;
            let same = (s.words[0] == words[0]) & (s.words[1] == words[1]) & (s.len as usize == n);
            // One branch for "empty or the same words", which is usually taken: left to itself
            // the compiler tests `empty` first, and whether the token is new is data.
            if std::hint::black_box(empty | same)
                && (empty
                    || n <= 16
                    || self.arena.get(s.start as usize..s.start as usize + n) == Some(tok))
            {
                return i;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Id of `tok` (`tail` as for [`token_words`]), or [`NONE`] when the hypothesis does not
    /// hold it.
    #[inline]
    fn get(&self, tok: &[u8], tail: &[u8]) -> u32 {
        let i = self.find(tok, token_words(tok, tail));
        if self.slots[i].r#gen == self.r#gen {
            i as u32
        } else {
            NONE
        }
    }

    /// Id of `tok` (`tail` as for [`token_words`]), one more occurrence of it, at hypothesis
    /// position `pos`. The slot is written whether the token is new or not, so that both take
    /// the same path.
    #[inline]
    fn intern(&mut self, tok: &[u8], tail: &[u8], pos: u32) -> u32 {
        let words = token_words(tok, tail);
        let i = self.find(tok, words);
        let s = self.slots[i];
        let new = s.r#gen != self.r#gen;
        // Selects rather than branches: whether the token is new is data.
        let pick = |a: u32, b: u32| std::hint::select_unpredictable(new, a, b);
        let start = pick(self.arena.len() as u32, s.start);
        if new & (tok.len() > 16) {
            self.arena.extend_from_slice(tok);
        }
        self.slots[i] = TokSlot {
            words,
            r#gen: self.r#gen,
            len: tok.len() as u32,
            start,
            first: pick(pos, s.first),
            clip: Clip {
                hyp: pick(0, s.clip.hyp) + 1,
                ..Clip::default()
            },
        };
        i as u32
    }

    /// The token whose id is `id`.
    #[inline]
    fn token(&mut self, id: u32) -> &mut TokSlot {
        &mut self.slots[id as usize]
    }
}

/// Slot of [`GramTable`]: empty unless `gen` is the table's current generation.
#[derive(Default, Clone, Copy, Debug)]
struct GramSlot {
    key: u64,
    r#gen: u32,
    id: u32,
}

/// The hypothesis n-grams of one order n = 2..4 that end with a token the hypothesis holds more
/// than once, keyed `(id of w1..w(n-1), id of wn)` (open addressing, linear probing). The table
/// is sized for the call before anything goes in, so it is at most half full.
#[derive(Default, Clone, Debug)]
struct GramTable {
    slots: Vec<GramSlot>,
    mask: usize,
    r#gen: u32,
}

#[inline]
fn gram_key(prefix: u32, last: u32) -> u64 {
    (prefix as u64) << 32 | last as u64
}

impl GramTable {
    /// Start of a call that inserts at most `n` keys.
    fn start(&mut self, n: usize) {
        let size = (2 * n).next_power_of_two().max(16);
        if self.slots.len() < size {
            self.slots.resize(size, GramSlot::default());
        }
        self.mask = size - 1;
        self.r#gen = self.r#gen.wrapping_add(1);
        if self.r#gen == 0 {
            self.slots.iter_mut().for_each(|s| s.r#gen = 0);
            self.r#gen = 1;
        }
    }

    /// Slot holding `key`, or the empty slot where it belongs.
    #[inline]
    fn find(&self, key: u64) -> usize {
        let mut i = fold_mul(key ^ SEED, MUL) as usize & self.mask;
        loop {
            let s = &self.slots[i];
            if (s.r#gen != self.r#gen) | (s.key == key) {
                return i;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The id stored for `key`, storing `id` if there is none (the slot is written either
    /// way).
    #[inline]
    fn get_or_insert(&mut self, key: u64, id: u32) -> u32 {
        let i = self.find(key);
        let r#gen = self.r#gen;
        let s = &mut self.slots[i];
        let id = if s.r#gen == r#gen { s.id } else { id };
        *s = GramSlot { key, r#gen, id };
        id
    }

    /// The id stored for `key`, or [`NONE`].
    #[inline]
    fn get(&self, key: u64) -> u32 {
        let s = &self.slots[self.find(key)];
        if s.r#gen == self.r#gen {
            s.id
        } else {
            NONE
        }
    }
}

/// One more occurrence in reference `stamp` of a hypothesis n-gram; adds to `matched` while the
/// running maximum over references stays within the hypothesis count, so that `matched` ends
/// as the sum of `min(hyp count, max reference count)` (sacrebleu's clipped counts). Written
/// without branches: whether an n-gram repeats is data, not something to predict.
#[inline]
fn reference_hit(c: &mut Clip, stamp: u32, matched: &mut u64) {
    let cur = if c.stamp == stamp { c.cur } else { 0 } + 1;
    c.stamp = stamp;
    c.cur = cur;
    *matched += (cur > c.best && cur <= c.hyp) as u64;
    c.best = c.best.max(cur);
}

/// Reusable buffers for scoring many segments.
#[derive(Default, Clone, Debug)]
pub struct Scratch {
    bufs: TextBufs,
    /// The tokens of the text at hand.
    spans: Vec<Span>,
    vocab: Vocab,
    /// The hypothesis as token ids.
    hyp_ids: Vec<u32>,
    /// `ends[p + 1]`: the ids of the 1-, 2- and 3-grams ending at hypothesis position `p`;
    /// `ends[0]` is all [`NONE`].
    ends: Vec<[u32; 3]>,
    /// `clips[p][k]`: clipping state of the (k+2)-gram whose id is `p`.
    clips: Vec<[Clip; 3]>,
    /// Positions whose token occurs more than once in the hypothesis.
    repeated: Vec<u32>,
    /// The reference at hand as token ids ([`NONE`] for tokens not in the hypothesis).
    ref_ids: Vec<u32>,
    /// Orders 2, 3 and 4.
    grams: [GramTable; 3],
}

impl Scratch {
    /// [`bleu`] with reused buffers.
    pub fn bleu(&mut self, hyp: &str, refs: &[&str], opts: &BleuOptions) -> BleuScore {
        let st = self.stats(hyp, refs, opts);
        score_from_stats(&st, opts)
    }

    /// [`stats`] with reused buffers.
    ///
    /// The hypothesis is read into token ids first. The id of a 1-gram is its token id; the id
    /// of a longer n-gram is the position where it first ends, found from its last token and
    /// the id of the (n-1)-gram before it (a trie). When the last token occurs once in the
    /// hypothesis, so does the n-gram, and its id is simply its position; only n-grams ending
    /// with a repeated token go through a hash table. A reference is then looked up n-gram by
    /// n-gram, the same way, and stops extending an n-gram as soon as it is not in the
    /// hypothesis (nor is any longer one containing it).
    pub fn stats(&mut self, hyp: &str, refs: &[&str], opts: &BleuOptions) -> BleuStats {
        let mut st = BleuStats::default();
        self.hyp_ids.clear();
        let Scratch {
            bufs,
            spans,
            vocab,
            hyp_ids,
            ends,
            clips,
            repeated,
            ref_ids,
            grams,
        } = self;
        let text = tokens(hyp, opts, bufs, spans);
        vocab.start(spans.len());
        for (p, &(start, end)) in spans.iter().enumerate() {
            hyp_ids.push(vocab.intern(&text[start..end], &text[start..], p as u32));
        }
        let m = hyp_ids.len();
        // First every n-gram as if its last token were unique: its id is its position.
        ends.clear();
        ends.push([NONE; 3]);
        repeated.clear();
        repeated.resize(m, 0);
        let mut n_repeated = 0;
        for (p, &x) in hyp_ids.iter().enumerate() {
            let at = |k: usize| if p >= k { p as u32 } else { NONE };
            ends.push([x, at(1), at(2)]);
            repeated[n_repeated] = p as u32;
            n_repeated += (vocab.token(x).clip.hyp > 1) as usize;
        }
        let fresh = Clip {
            hyp: 1,
            ..Clip::default()
        };
        clips.clear();
        clips.resize(m, [fresh; 3]);
        // Then the n-grams ending with a repeated token, through the tables, in order (so that
        // the id of the (n-1)-gram before is final).
        for g in grams.iter_mut() {
            g.start(n_repeated);
        }
        for &p in &repeated[..n_repeated] {
            let p = p as usize;
            let x = hyp_ids[p];
            let before = ends[p];
            for k in 0..3 {
                let prefix = before[k];
                if prefix == NONE {
                    break;
                }
                let id = grams[k].get_or_insert(gram_key(prefix, x), p as u32);
                // A new n-gram keeps the count of 1 it starts with.
                clips[id as usize][k].hyp += (id as usize != p) as u32;
                if k < 2 {
                    ends[p + 1][k + 1] = id;
                }
            }
        }
        st.sys_len = m as u64;
        for (n, total) in st.totals.iter_mut().enumerate() {
            *total = st.sys_len.saturating_sub(n as u64);
        }
        // References: clipped matches and the closest length (shorter on ties).
        let mut closest: Option<(u64, u64)> = None;
        for (r, text) in refs.iter().enumerate() {
            let stamp = r as u32 + 1;
            // The ids of the 1..3-grams ending at the previous token ([`NONE`] when not in the
            // hypothesis).
            let mut prev = [NONE; 3];
            let matched = &mut st.counts;
            let text = tokens(text, opts, bufs, spans);
            let len = spans.len() as u64;
            // The token ids first, in a loop of their own, then the n-grams.
            ref_ids.clear();
            ref_ids.extend(
                spans
                    .iter()
                    .map(|&(start, end)| vocab.get(&text[start..end], &text[start..])),
            );
            for &x in ref_ids.iter() {
                let mut here = [x, NONE, NONE];
                if x != NONE {
                    let info = vocab.token(x);
                    reference_hit(&mut info.clip, stamp, &mut matched[0]);
                    if info.clip.hyp == 1 {
                        // The only hypothesis n-grams ending with `x` end at `first`; the one
                        // of order k + 2 is here when the (k+1)-grams before are the same.
                        let first = info.first as usize;
                        let before = ends[first];
                        for k in 0..3 {
                            if prev[k] == NONE || before[k] != prev[k] {
                                break;
                            }
                            reference_hit(&mut clips[first][k], stamp, &mut matched[k + 1]);
                            if k < 2 {
                                here[k + 1] = first as u32;
                            }
                        }
                    } else {
                        for k in 0..3 {
                            if prev[k] == NONE {
                                break;
                            }
                            let id = grams[k].get(gram_key(prev[k], x));
                            if id == NONE {
                                break;
                            }
                            reference_hit(&mut clips[id as usize][k], stamp, &mut matched[k + 1]);
                            if k < 2 {
                                here[k + 1] = id;
                            }
                        }
                    }
                }
                prev = here;
            }
            let diff = st.sys_len.abs_diff(len);
            closest = match closest {
                Some((d, l)) if d < diff || (d == diff && l <= len) => Some((d, l)),
                _ => Some((diff, len)),
            };
        }
        st.ref_len = closest.map_or(0, |(_, l)| l);
        st
    }
}

/// Buffers for the preprocessed and tokenized text.
#[derive(Default, Clone, Debug)]
struct TextBufs {
    lower: String,
    tok: String,
    clean: String,
    spare: String,
}

/// sacrebleu's `_preprocess_segment` followed by `str.split()`: the tokens of `text` as spans
/// (into `spans`, cleared first) of the returned text, which is `text` or one of the buffers.
fn tokens<'a>(
    text: &'a str,
    opts: &BleuOptions,
    bufs: &'a mut TextBufs,
    spans: &mut Vec<Span>,
) -> &'a [u8] {
    let TextBufs {
        lower,
        tok,
        clean,
        spare,
    } = bufs;
    let text: &'a str = if opts.lowercase {
        // Python's `str.lower()`, final sigma included; on ASCII both are the ASCII mapping.
        if text.is_ascii() {
            lower.clear();
            lower.push_str(text);
            lower.make_ascii_lowercase();
        } else {
            *lower = text.to_lowercase();
        }
        lower
    } else {
        text
    };
    let text = text.trim_end_matches(|c| Whitespace::Python.is_space(c));
    match opts.tokenize {
        BleuTokenizer::Tok13a => tokens_13a(text, clean, spare, spans).as_bytes(),
        other => {
            other.tokenize_with(text, tok, spare);
            spans.clear();
            let mut start = None;
            for (i, c) in tok.char_indices() {
                if Whitespace::Python.is_space(c) {
                    if let Some(s) = start.take() {
                        spans.push((s, i));
                    }
                } else if start.is_none() {
                    start = Some(i);
                }
            }
            if let Some(s) = start {
                spans.push((s, tok.len()));
            }
            tok.as_bytes()
        }
    }
}

impl crate::metrics::Section for BleuOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }
}

impl crate::metrics::Section for CorpusBleuOptions {
    fn signature(&self, _id: &str) -> String {
        signature(&self.0)
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

    /// sacrebleu's counting done plainly: every n-gram in a map, clipped by the per-reference
    /// maximum, on the pass-by-pass tokenizer.
    fn naive_stats(hyp: &str, refs: &[&str], opts: &BleuOptions) -> BleuStats {
        fn tokens(text: &str, opts: &BleuOptions) -> Vec<String> {
            let text = if opts.lowercase {
                text.to_lowercase()
            } else {
                text.to_owned()
            };
            let text = text.trim_end_matches(|c| Whitespace::Python.is_space(c));
            let (mut out, mut tmp) = (String::new(), String::new());
            match opts.tokenize {
                BleuTokenizer::Tok13a => {
                    crate::text::sacrebleu::reference::tokenize_13a(text, &mut out, &mut tmp)
                }
                other => other.tokenize_into(text, &mut out),
            }
            out.split(|c| Whitespace::Python.is_space(c))
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .collect()
        }
        fn ngrams(toks: &[String]) -> HashMap<&[String], u64> {
            let mut m = HashMap::new();
            for n in 1..=4 {
                for w in toks.windows(n) {
                    *m.entry(w).or_insert(0) += 1;
                }
            }
            m
        }
        let h = tokens(hyp, opts);
        let hyp_counts = ngrams(&h);
        let mut max_ref: HashMap<&[String], u64> = HashMap::new();
        let ref_toks: Vec<Vec<String>> = refs.iter().map(|r| tokens(r, opts)).collect();
        let mut closest: Option<(u64, u64)> = None;
        for r in &ref_toks {
            let len = r.len() as u64;
            let diff = (h.len() as u64).abs_diff(len);
            closest = match closest {
                Some((d, l)) if d < diff || (d == diff && l <= len) => Some((d, l)),
                _ => Some((diff, len)),
            };
            for (g, c) in ngrams(r) {
                let e = max_ref.entry(g).or_insert(0);
                *e = (*e).max(c);
            }
        }
        let mut st = BleuStats {
            sys_len: h.len() as u64,
            ref_len: closest.map_or(0, |(_, l)| l),
            ..Default::default()
        };
        for (g, c) in hyp_counts {
            st.totals[g.len() - 1] += c;
            st.counts[g.len() - 1] += c.min(max_ref.get(g).copied().unwrap_or(0));
        }
        st
    }

    #[test]
    fn stats_equal_plain_counting_on_random_segments() {
        // A small vocabulary so n-grams repeat within and across texts.
        let words = [
            "a", "b", "c", "the", "1", "2.5", "x,", "-", "3-4", "é", "&amp;", "Ab",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut sc = Scratch::default();
        for round in 0..3_000 {
            let text = |next: &mut dyn FnMut(usize) -> usize| {
                let k = next(25);
                (0..k)
                    .map(|_| words[next(words.len())])
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let hyp = text(&mut next);
            let refs: Vec<String> = (0..next(4)).map(|_| text(&mut next)).collect();
            let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
            let opts = BleuOptions {
                lowercase: round % 2 == 1,
                tokenize: [BleuTokenizer::Tok13a, BleuTokenizer::None][round % 5 / 4],
                ..BleuOptions::default()
            };
            let want = naive_stats(&hyp, &refs, &opts);
            assert_eq!(sc.stats(&hyp, &refs, &opts), want, "{hyp:?} {refs:?}");
            assert_eq!(stats(&hyp, &refs, &opts), want);
        }
    }

    /// Tokens around the 8- and 16-byte marks of the table's words, some equal up to their
    /// last byte, on every tokenizer.
    #[test]
    fn stats_equal_plain_counting_with_long_tokens() {
        // Many tokens of one length sharing their first 16 bytes, so that some of them meet
        // in the table.
        let variants: Vec<String> = (0..40)
            .map(|i| format!("0123456789abcdef~{i:02}"))
            .collect();
        let mut words = vec![
            "a",
            "the",
            ",",
            "abcdefgh",
            "abcdefghi",
            "abcdefghX",
            "0123456789abcdef",
            "0123456789abcdeF",
            "0123456789abcdefg",
            "0123456789abcdefh",
            "0123456789abcdefghijklmnopqrstu1",
            "0123456789abcdefghijklmnopqrstu2",
            "ünïcødé-wörd",
            "Straße.",
        ];
        words.extend(variants.iter().map(String::as_str));
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let tokenizers = [
            BleuTokenizer::Tok13a,
            BleuTokenizer::None,
            BleuTokenizer::Char,
            BleuTokenizer::Intl,
        ];
        let mut sc = Scratch::default();
        for round in 0..1_200 {
            let text = |next: &mut dyn FnMut(usize) -> usize| {
                let k = next(30);
                (0..k)
                    .map(|_| words[next(words.len())])
                    .collect::<Vec<_>>()
                    .join([" ", "  ", "\u{a0}"][next(3)])
            };
            let hyp = text(&mut next);
            let refs: Vec<String> = (0..next(3) + 1).map(|_| text(&mut next)).collect();
            let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
            let opts = BleuOptions {
                lowercase: round % 3 == 1,
                tokenize: tokenizers[round % 4],
                ..BleuOptions::default()
            };
            let want = naive_stats(&hyp, &refs, &opts);
            assert_eq!(
                sc.stats(&hyp, &refs, &opts),
                want,
                "{hyp:?} {refs:?} {opts:?}"
            );
        }
    }

    #[test]
    fn long_texts_grow_the_tables() {
        let hyp: Vec<String> = (0..5_000).map(|i| format!("t{}", i % 1_500)).collect();
        let hyp = hyp.join(" ");
        let r = hyp.replace("t7 ", "u7 ");
        let mut sc = Scratch::default();
        for _ in 0..2 {
            let want = naive_stats(&hyp, &[&r, "t1 t2"], &BleuOptions::default());
            assert_eq!(
                sc.stats(&hyp, &[&r, "t1 t2"], &BleuOptions::default()),
                want
            );
        }
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
