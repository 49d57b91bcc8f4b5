//! ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum exactly as rouge-score 0.1.2 computes them
//! (`RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"]).score(target, prediction)`, and
//! `score_multi` for several references), with NLTK 3.10.4's Porter stemmer when
//! `use_stemmer` is on.
//!
//! Per reference (rouge-score's *target*):
//!
//! * **ROUGE-N** (N = 1, 2): clipped n-gram overlap; precision = overlap / n-grams of the
//!   prediction (at least 1), recall = overlap / n-grams of the reference (at least 1).
//! * **ROUGE-L**: longest common subsequence of the two token lists; precision = LCS / prediction
//!   tokens, recall = LCS / reference tokens; 0 when either side has no token.
//! * **ROUGE-Lsum**: both texts are split on `"\n"` into sentences (empty lines dropped) and
//!   the summary-level union LCS of the ROUGE paper, section 3.2, is computed the way
//!   rouge-score does it: for each reference sentence, the union of the token positions picked
//!   by one backtrack of the LCS table against every prediction sentence, each hit consuming one
//!   occurrence of the token on both sides.
//! * f-measure = 2·P·R / (P + R), or 0 when P + R = 0.
//!
//! With several references each ROUGE type independently takes the reference whose f-measure is
//! highest, the first one on ties (`numpy.argmax`). With no reference every score is 0 (where
//! rouge-score raises).
//!
//! ```
//! use polars_rag::metrics::rouge::{rouge, RougeOptions};
//! let s = rouge(
//!     "The Eiffel Tower is located in India.",
//!     &["The Eiffel Tower is located in Paris."],
//!     &RougeOptions::default(),
//! );
//! assert!((s.rouge1.fmeasure - 6.0 / 7.0).abs() < 1e-15);
//! assert!((s.rouge2.precision - 5.0 / 6.0).abs() < 1e-15);
//! assert_eq!(s.rouge_l, s.rouge_lsum);
//! ```

use serde::{Deserialize, Serialize};

use crate::text::rouge_tokenize::{for_each_token, RougeTokenizer, TokenScratch};

/// Options of [`rouge`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RougeOptions {
    /// Stem tokens with NLTK's Porter stemmer (rouge-score's `use_stemmer`).
    pub use_stemmer: bool,
    /// How texts are split into tokens.
    pub tokenizer: RougeTokenizer,
    /// rouge-score's definitions, or datapizza-ai's `rouge_score` / `corpus_rouge_scores`.
    pub compat: RougeCompat,
}

/// Which ROUGE definitions to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RougeCompat {
    /// rouge-score's `RougeScorer.score` / `score_multi`.
    #[default]
    Standard,
    /// datapizza-ai's `metrics.py` ([`datapizza_corpus_rouge_scores`] over the row's answers and
    /// references: for one of each, [`datapizza_rouge_score`]): ROUGE-1, ROUGE-2 and ROUGE-L
    /// stemmed, zeros for an empty text, rougeLsum null.
    Datapizza,
}

crate::settings::from_str_by_serde!(RougeCompat);

/// Precision, recall and f-measure of one ROUGE type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Prf {
    /// Share of the prediction's n-grams (or LCS) found in the reference.
    pub precision: f64,
    /// Share of the reference's n-grams (or LCS) found in the prediction.
    pub recall: f64,
    /// Their harmonic mean, as rouge-score computes it.
    pub fmeasure: f64,
}

impl Prf {
    /// Scores from precision and recall, f-measure computed as rouge-score does.
    pub fn new(precision: f64, recall: f64) -> Prf {
        Prf {
            precision,
            recall,
            fmeasure: fmeasure(precision, recall),
        }
    }
}

/// rouge-score's `scoring.fmeasure`, operation for operation.
fn fmeasure(precision: f64, recall: f64) -> f64 {
    if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    }
}

/// The four ROUGE scores of one prediction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RougeScores {
    /// Unigram overlap.
    pub rouge1: Prf,
    /// Bigram overlap.
    pub rouge2: Prf,
    /// Longest common subsequence over the whole text.
    #[serde(rename = "rougeL")]
    pub rouge_l: Prf,
    /// Summary-level LCS over newline-separated sentences.
    #[serde(rename = "rougeLsum")]
    pub rouge_lsum: Prf,
}

/// ROUGE of `prediction` against `references` (see the [module documentation](self)).
///
/// ```
/// use polars_rag::metrics::rouge::{rouge, RougeOptions};
/// let opts = RougeOptions { use_stemmer: true, ..RougeOptions::default() };
/// let s = rouge("the cats sat", &["a dog", "the cat sat down"], &opts);
/// assert_eq!(s.rouge1.precision, 1.0);
/// assert_eq!(s.rouge1.recall, 0.75);
/// ```
pub fn rouge(prediction: &str, references: &[&str], opts: &RougeOptions) -> RougeScores {
    Scratch::default().rouge(prediction, references, opts)
}

/// The reproducibility signature of a ROUGE configuration, in sacrebleu's style.
///
/// ```
/// use polars_rag::metrics::rouge::{signature, RougeOptions};
/// let opts = RougeOptions { use_stemmer: true, ..RougeOptions::default() };
/// assert_eq!(signature(&opts), "rouge|tok:rouge_score|stem:porter|version:rouge-score-0.1.2");
/// ```
pub fn signature(opts: &RougeOptions) -> String {
    let datapizza = opts.compat == RougeCompat::Datapizza;
    format!(
        "rouge|tok:{}|stem:{}|version:rouge-score-0.1.2{}",
        opts.tokenizer.name(),
        if opts.use_stemmer || datapizza {
            "porter"
        } else {
            "none"
        },
        if datapizza {
            "|compat:datapizza-metrics.py-222bb6e"
        } else {
            ""
        }
    )
}

/// Token ids of one text and the token ranges of its non-empty lines.
#[derive(Default, Clone, Debug)]
struct Tokens {
    ids: Vec<u32>,
    /// `(start, end)` into `ids` of every line that has at least one token.
    sents: Vec<(u32, u32)>,
}

/// Reusable buffers: scoring a column allocates once per thread rather than once per row.
#[derive(Default, Clone, Debug)]
pub struct Scratch {
    tok: TokenScratch,
    interner: Interner,
    pred: Tokens,
    refr: Tokens,
    pred_bigrams: Vec<u64>,
    ref_bigrams: Vec<u64>,
    counts_a: Vec<u32>,
    counts_b: Vec<u32>,
    lcs: BitLcs,
    marks: Vec<bool>,
    /// Token lists of a whole corpus (datapizza's corpus score).
    corpus: Vec<Tokens>,
}

impl Scratch {
    /// [`rouge`] with reused buffers.
    pub fn rouge(
        &mut self,
        prediction: &str,
        references: &[&str],
        opts: &RougeOptions,
    ) -> RougeScores {
        self.interner.clear();
        let mut pred = std::mem::take(&mut self.pred);
        let mut refr = std::mem::take(&mut self.refr);
        self.tokenize(prediction, opts, &mut pred);
        let mut best: Option<RougeScores> = None;
        for reference in references {
            self.tokenize(reference, opts, &mut refr);
            let s = self.score_tokens(&pred, &refr, true);
            best = Some(match best {
                None => s,
                Some(b) => RougeScores {
                    rouge1: better(b.rouge1, s.rouge1),
                    rouge2: better(b.rouge2, s.rouge2),
                    rouge_l: better(b.rouge_l, s.rouge_l),
                    rouge_lsum: better(b.rouge_lsum, s.rouge_lsum),
                },
            });
        }
        self.pred = pred;
        self.refr = refr;
        best.unwrap_or_default()
    }

    fn tokenize(&mut self, text: &str, opts: &RougeOptions, out: &mut Tokens) {
        out.ids.clear();
        out.sents.clear();
        let interner = &mut self.interner;
        for line in text.split('\n') {
            let start = out.ids.len();
            for_each_token(line, opts.tokenizer, opts.use_stemmer, &mut self.tok, |t| {
                out.ids.push(interner.intern(t));
            });
            if out.ids.len() > start {
                out.sents.push((start as u32, out.ids.len() as u32));
            }
        }
    }

    /// All scores of one (prediction, reference) pair of token lists.
    fn score_tokens(&mut self, pred: &Tokens, refr: &Tokens, with_lsum: bool) -> RougeScores {
        let k = self.interner.len();
        if self.counts_a.len() < k {
            self.counts_a.resize(k, 0);
            self.counts_b.resize(k, 0);
        }
        let (p, r) = (&pred.ids, &refr.ids);
        let rouge1 = {
            let overlap = clipped_overlap(p, r, &mut self.counts_a, &mut self.counts_b);
            ngram_prf(overlap, p.len(), r.len())
        };
        let rouge2 = {
            bigrams(p, &mut self.pred_bigrams);
            bigrams(r, &mut self.ref_bigrams);
            let overlap = sorted_overlap(&self.pred_bigrams, &self.ref_bigrams);
            ngram_prf(
                overlap,
                p.len().saturating_sub(1),
                r.len().saturating_sub(1),
            )
        };
        let rouge_l = if p.is_empty() || r.is_empty() {
            Prf::default()
        } else {
            let l = self.lcs.lcs_len(p, r, k);
            Prf::new(l as f64 / p.len() as f64, l as f64 / r.len() as f64)
        };
        let rouge_lsum = if !with_lsum || p.is_empty() || r.is_empty() {
            Prf::default()
        } else if pred.sents.len() == 1 && refr.sents.len() == 1 {
            // One sentence each: the union LCS is the LCS itself and every hit counts.
            rouge_l
        } else {
            let hits = self.summary_hits(pred, refr, k);
            Prf::new(hits as f64 / p.len() as f64, hits as f64 / r.len() as f64)
        };
        RougeScores {
            rouge1,
            rouge2,
            rouge_l,
            rouge_lsum,
        }
    }

    /// rouge-score's `_summary_level_lcs` hit count.
    fn summary_hits(&mut self, pred: &Tokens, refr: &Tokens, k: usize) -> usize {
        let (p, r) = (&pred.ids, &refr.ids);
        self.marks.clear();
        self.marks.resize(r.len(), false);
        for &(cs, ce) in &pred.sents {
            let cand = &p[cs as usize..ce as usize];
            self.lcs.load_pattern(cand, k);
            for &(rs, re) in &refr.sents {
                let sent = &r[rs as usize..re as usize];
                self.lcs
                    .mark_backtrack(sent, cand, &mut self.marks[rs as usize..re as usize]);
            }
            self.lcs.unload_pattern(cand);
        }
        let (cnt_c, cnt_r) = (&mut self.counts_a, &mut self.counts_b);
        for &t in p {
            cnt_c[t as usize] += 1;
        }
        for &t in r {
            cnt_r[t as usize] += 1;
        }
        let mut hits = 0;
        for (i, &t) in r.iter().enumerate() {
            let t = t as usize;
            if self.marks[i] && cnt_c[t] > 0 && cnt_r[t] > 0 {
                hits += 1;
                cnt_c[t] -= 1;
                cnt_r[t] -= 1;
            }
        }
        for &t in p.iter().chain(r.iter()) {
            cnt_c[t as usize] = 0;
            cnt_r[t as usize] = 0;
        }
        hits
    }
}

/// The higher f-measure, the earlier one on ties (`numpy.argmax`).
fn better(best: Prf, candidate: Prf) -> Prf {
    if candidate.fmeasure > best.fmeasure {
        candidate
    } else {
        best
    }
}

fn ngram_prf(overlap: usize, pred_count: usize, ref_count: usize) -> Prf {
    Prf::new(
        overlap as f64 / pred_count.max(1) as f64,
        overlap as f64 / ref_count.max(1) as f64,
    )
}

/// Sum over distinct tokens of min(count in `a`, count in `b`); leaves the counters zeroed.
fn clipped_overlap(a: &[u32], b: &[u32], ca: &mut [u32], cb: &mut [u32]) -> usize {
    for &t in a {
        ca[t as usize] += 1;
    }
    for &t in b {
        cb[t as usize] += 1;
    }
    let mut overlap = 0usize;
    for &t in b {
        let t = t as usize;
        if cb[t] > 0 {
            overlap += ca[t].min(cb[t]) as usize;
            cb[t] = 0;
        }
    }
    for &t in a {
        ca[t as usize] = 0;
    }
    overlap
}

/// Sorted bigram keys of `ids`.
fn bigrams(ids: &[u32], out: &mut Vec<u64>) {
    out.clear();
    out.extend(
        ids.windows(2)
            .map(|w| (u64::from(w[0]) << 32) | u64::from(w[1])),
    );
    out.sort_unstable();
}

/// Size of the multiset intersection of two sorted lists.
fn sorted_overlap(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Bit-parallel LCS (Allison–Dix / Hyyrö) over token ids.
///
/// For a pattern `a` of length m, `V` is an m-bit vector; after reading the first i symbols of
/// `b`, the number of zero bits of `V` among positions `0..j` is `LCS(b[..i], a[..j])`. Each
/// symbol `c` updates `V ← (V + (V & M[c])) | (V & !M[c])`, where `M[c]` marks the positions of
/// `c` in `a`.
#[derive(Default, Clone, Debug)]
struct BitLcs {
    /// Match masks, `words` u64 per token id; all zero between uses.
    masks: Vec<u64>,
    words: usize,
    v: Vec<u64>,
    /// Rows of `V` for a backtrack, `words` u64 per row.
    rows: Vec<u64>,
}

impl BitLcs {
    fn load_pattern(&mut self, a: &[u32], k: usize) {
        let w = a.len().div_ceil(64).max(1);
        self.words = w;
        if self.masks.len() < k * w {
            self.masks.resize(k * w, 0);
        }
        for (i, &t) in a.iter().enumerate() {
            self.masks[t as usize * w + i / 64] |= 1u64 << (i % 64);
        }
    }

    fn unload_pattern(&mut self, a: &[u32]) {
        let w = self.words;
        for &t in a {
            let base = t as usize * w;
            self.masks[base..base + w].fill(0);
        }
    }

    /// Length of the LCS of `a` and `b` (`k`: number of token ids).
    fn lcs_len(&mut self, a: &[u32], b: &[u32], k: usize) -> usize {
        let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        self.load_pattern(a, k);
        let m = a.len();
        let len = if self.words == 1 {
            let mut v = !0u64;
            for &t in b {
                let u = v & self.masks[t as usize];
                v = v.wrapping_add(u) | (v & !u);
            }
            (!v & low_mask(m)).count_ones() as usize
        } else {
            let w = self.words;
            self.v.clear();
            self.v.resize(w, !0);
            for &t in b {
                let pm = &self.masks[t as usize * w..t as usize * w + w];
                step_words(&mut self.v, pm);
            }
            zeros_below(&self.v, m)
        };
        self.unload_pattern(a);
        len
    }

    /// With the pattern `cand` loaded, marks the positions of `sent` that rouge-score's
    /// `_backtrack_norec` over the LCS table of (`sent`, `cand`) selects.
    fn mark_backtrack(&mut self, sent: &[u32], cand: &[u32], marks: &mut [bool]) {
        let w = self.words;
        let rows = sent.len() + 1;
        self.rows.clear();
        self.rows.resize(rows * w, !0);
        for (i, &t) in sent.iter().enumerate() {
            let (done, rest) = self.rows.split_at_mut((i + 1) * w);
            let next = &mut rest[..w];
            next.copy_from_slice(&done[i * w..]);
            let pm = &self.masks[t as usize * w..t as usize * w + w];
            step_words(next, pm);
        }
        // table(i, j) = LCS(sent[..i], cand[..j]) = zero bits of row i below j.
        let table = |i: usize, j: usize| zeros_below(&self.rows[i * w..(i + 1) * w], j);
        let (mut i, mut j) = (sent.len(), cand.len());
        while i > 0 && j > 0 {
            if sent[i - 1] == cand[j - 1] {
                marks[i - 1] = true;
                i -= 1;
                j -= 1;
            } else if table(i, j - 1) > table(i - 1, j) {
                j -= 1;
            } else {
                i -= 1;
            }
        }
    }
}

/// One symbol step of the multi-word bit-vector LCS.
fn step_words(v: &mut [u64], pm: &[u64]) {
    let mut carry = 0u64;
    for (x, &m) in v.iter_mut().zip(pm) {
        let u = *x & m;
        let (s1, c1) = x.overflowing_add(u);
        let (s2, c2) = s1.overflowing_add(carry);
        carry = u64::from(c1 | c2);
        *x = s2 | (*x & !u);
    }
}

fn low_mask(bits: usize) -> u64 {
    if bits >= 64 {
        !0
    } else {
        (1u64 << bits) - 1
    }
}

/// Number of zero bits of `v` among positions `0..j`.
fn zeros_below(v: &[u64], j: usize) -> usize {
    let full = j / 64;
    let mut n: usize = v[..full].iter().map(|x| x.count_zeros() as usize).sum();
    let rest = j % 64;
    if rest > 0 {
        n += (!v[full] & low_mask(rest)).count_ones() as usize;
    }
    n
}

/// Maps token bytes to dense ids `0..len()`; cleared per call.
#[derive(Clone, Debug, Default)]
struct Interner {
    arena: Vec<u8>,
    spans: Vec<(u32, u32)>,
    /// Open addressing, linear probing; `u32::MAX` is empty. Length a power of two (or 0).
    slots: Vec<u32>,
}

const EMPTY: u32 = u32::MAX;

impl Interner {
    fn len(&self) -> usize {
        self.spans.len()
    }

    fn clear(&mut self) {
        self.arena.clear();
        self.spans.clear();
        if self.slots.len() > 4096 {
            self.slots.clear();
        } else {
            self.slots.fill(EMPTY);
        }
    }

    fn bytes(&self, id: u32) -> &[u8] {
        let (s, e) = self.spans[id as usize];
        &self.arena[s as usize..e as usize]
    }

    fn intern(&mut self, tok: &[u8]) -> u32 {
        if (self.spans.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut idx = hash(tok) as usize & mask;
        loop {
            let s = self.slots[idx];
            if s == EMPTY {
                let id = self.spans.len() as u32;
                let start = self.arena.len() as u32;
                self.arena.extend_from_slice(tok);
                self.spans.push((start, self.arena.len() as u32));
                self.slots[idx] = id;
                return id;
            }
            if self.bytes(s) == tok {
                return s;
            }
            idx = (idx + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(64);
        self.slots.clear();
        self.slots.resize(n, EMPTY);
        let mask = n - 1;
        for id in 0..self.spans.len() as u32 {
            let mut idx = hash(self.bytes(id)) as usize & mask;
            while self.slots[idx] != EMPTY {
                idx = (idx + 1) & mask;
            }
            self.slots[idx] = id;
        }
    }
}

fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

// ---------------------------------------------------------------------------------------------
// Wrappers reproducing other libraries' use of rouge-score.

/// datapizza-ai `metrics.py` output: ROUGE-1, ROUGE-2 and ROUGE-L.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DatapizzaRouge {
    /// Unigram overlap.
    pub rouge1: Prf,
    /// Bigram overlap.
    pub rouge2: Prf,
    /// Longest common subsequence.
    #[serde(rename = "rougeL")]
    pub rouge_l: Prf,
}

const DATAPIZZA_OPTS: RougeOptions = RougeOptions {
    use_stemmer: true,
    tokenizer: RougeTokenizer::RougeScore,
    compat: RougeCompat::Datapizza,
};

/// datapizza-ai `rouge_score(retrieved_chunk, ground_truth_chunk)`: rouge-score with the
/// stemmer, the ground truth as target; all zeros when either string is empty.
///
/// ```
/// use polars_rag::metrics::rouge::datapizza_rouge_score;
/// let s = datapizza_rouge_score("running runs ran runner", "run running runs");
/// assert_eq!(s.rouge1.precision, 0.5); // "run" twice in the retrieved chunk, "ran", "runner"
/// ```
pub fn datapizza_rouge_score(retrieved_chunk: &str, ground_truth_chunk: &str) -> DatapizzaRouge {
    if retrieved_chunk.is_empty() || ground_truth_chunk.is_empty() {
        return DatapizzaRouge::default();
    }
    let s = Scratch::default().rouge(retrieved_chunk, &[ground_truth_chunk], &DATAPIZZA_OPTS);
    DatapizzaRouge {
        rouge1: s.rouge1,
        rouge2: s.rouge2,
        rouge_l: s.rouge_l,
    }
}

/// datapizza-ai `corpus_rouge_scores(retrieved_chunks, ground_truth_chunks)`: for every ground
/// truth and every ROUGE type, the retrieved chunk with the highest recall (the first on ties)
/// contributes its precision, recall and f-measure; the three are averaged over ground truths.
/// All zeros when nothing was retrieved; an error when there is no ground truth.
///
/// ```
/// use polars_rag::metrics::rouge::datapizza_corpus_rouge_scores;
/// let s = datapizza_corpus_rouge_scores(&["the cat sat"], &["the cat sat", "a dog"]).unwrap();
/// assert_eq!(s.rouge1.recall, 0.5);
/// assert!(datapizza_corpus_rouge_scores(&["x"], &[]).is_err());
/// ```
pub fn datapizza_corpus_rouge_scores(
    retrieved_chunks: &[&str],
    ground_truth_chunks: &[&str],
) -> crate::Result<DatapizzaRouge> {
    // Problems are found as messages; their kind is given once, here.
    let checked = || -> Result<DatapizzaRouge, String> {
        if retrieved_chunks.is_empty() {
            return Ok(DatapizzaRouge::default());
        }
        if ground_truth_chunks.is_empty() {
            return Err("ground_truth_chunks cannot be empty for corpus_rouge_scores.".to_owned());
        }
        let mut scratch = Scratch::default();
        scratch.interner.clear();
        let mut corpus = std::mem::take(&mut scratch.corpus);
        corpus.resize_with(
            retrieved_chunks.len() + ground_truth_chunks.len(),
            Tokens::default,
        );
        for (text, toks) in retrieved_chunks
            .iter()
            .chain(ground_truth_chunks)
            .zip(corpus.iter_mut())
        {
            scratch.tokenize(text, &DATAPIZZA_OPTS, toks);
        }
        let (retrieved, truths) = corpus.split_at(retrieved_chunks.len());
        let mut sums = [[0.0f64; 3]; 3];
        for (gt_text, gt) in ground_truth_chunks.iter().zip(truths) {
            let mut best: [Option<Prf>; 3] = [None; 3];
            let mut max_recall = [-1.0f64; 3];
            for (r_text, r) in retrieved_chunks.iter().zip(retrieved) {
                let s = if r_text.is_empty() || gt_text.is_empty() {
                    RougeScores::default()
                } else {
                    scratch.score_tokens(r, gt, false)
                };
                for (slot, prf) in [s.rouge1, s.rouge2, s.rouge_l].into_iter().enumerate() {
                    if prf.recall > max_recall[slot] {
                        max_recall[slot] = prf.recall;
                        best[slot] = Some(prf);
                    }
                }
            }
            for (slot, b) in best.iter().enumerate() {
                if let Some(b) = b {
                    sums[slot][0] += b.precision;
                    sums[slot][1] += b.recall;
                    sums[slot][2] += b.fmeasure;
                }
            }
        }
        let n = ground_truth_chunks.len() as f64;
        let avg = |s: [f64; 3]| Prf {
            precision: s[0] / n,
            recall: s[1] / n,
            fmeasure: s[2] / n,
        };
        scratch.corpus = corpus;
        Ok(DatapizzaRouge {
            rouge1: avg(sums[0]),
            rouge2: avg(sums[1]),
            rouge_l: avg(sums[2]),
        })
    };
    checked().map_err(crate::Error::input)
}

/// Ragas `RougeScore.rouge_type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RagasRougeType {
    /// Unigram overlap.
    #[serde(rename = "rouge1")]
    Rouge1,
    /// Longest common subsequence (Ragas' default).
    #[default]
    #[serde(rename = "rougeL")]
    RougeL,
}

crate::settings::from_str_by_serde!(RagasRougeType);

/// Ragas `RougeScore.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RagasRougeMode {
    /// The F-measure (Ragas' default).
    #[default]
    Fmeasure,
    /// The precision.
    Precision,
    /// The recall.
    Recall,
}

crate::settings::from_str_by_serde!(RagasRougeMode);

/// Ragas 0.4.3 `RougeScore(rouge_type, mode)` on one sample: rouge-score with the stemmer,
/// `score(reference, response)`.
///
/// ```
/// use polars_rag::metrics::rouge::{ragas_rouge_score, RagasRougeMode, RagasRougeType};
/// let f = ragas_rouge_score("a b c", "a b c d e f g", RagasRougeType::RougeL, RagasRougeMode::Fmeasure);
/// assert!((f - 0.6).abs() < 1e-15);
/// ```
pub fn ragas_rouge_score(
    reference: &str,
    response: &str,
    rouge_type: RagasRougeType,
    mode: RagasRougeMode,
) -> f64 {
    let s = Scratch::default().rouge(response, &[reference], &DATAPIZZA_OPTS);
    let prf = match rouge_type {
        RagasRougeType::Rouge1 => s.rouge1,
        RagasRougeType::RougeL => s.rouge_l,
    };
    match mode {
        RagasRougeMode::Fmeasure => prf.fmeasure,
        RagasRougeMode::Precision => prf.precision,
        RagasRougeMode::Recall => prf.recall,
    }
}

impl crate::metrics::Section for RougeOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_lcs(a: &[u32], b: &[u32]) -> usize {
        let mut t = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                t[i][j] = if a[i - 1] == b[j - 1] {
                    t[i - 1][j - 1] + 1
                } else {
                    t[i - 1][j].max(t[i][j - 1])
                };
            }
        }
        t[a.len()][b.len()]
    }

    #[test]
    fn bit_parallel_lcs_matches_dp() {
        let mut seed = 12345u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut lcs = BitLcs::default();
        for round in 0..300 {
            let la = (next() % 200) as usize;
            let lb = (next() % 200) as usize;
            let k = 1 + (round % 7) as u32;
            let a: Vec<u32> = (0..la).map(|_| (next() % u64::from(k)) as u32).collect();
            let b: Vec<u32> = (0..lb).map(|_| (next() % u64::from(k)) as u32).collect();
            assert_eq!(lcs.lcs_len(&a, &b, k as usize), naive_lcs(&a, &b));
        }
    }

    /// rouge-score's full-table backtrack, for comparison with the bit-vector one.
    fn naive_backtrack(r: &[u32], c: &[u32]) -> Vec<bool> {
        let mut t = vec![vec![0usize; c.len() + 1]; r.len() + 1];
        for i in 1..=r.len() {
            for j in 1..=c.len() {
                t[i][j] = if r[i - 1] == c[j - 1] {
                    t[i - 1][j - 1] + 1
                } else {
                    t[i - 1][j].max(t[i][j - 1])
                };
            }
        }
        let mut marks = vec![false; r.len()];
        let (mut i, mut j) = (r.len(), c.len());
        while i > 0 && j > 0 {
            if r[i - 1] == c[j - 1] {
                marks[i - 1] = true;
                i -= 1;
                j -= 1;
            } else if t[i][j - 1] > t[i - 1][j] {
                j -= 1;
            } else {
                i -= 1;
            }
        }
        marks
    }

    #[test]
    fn bit_vector_backtrack_matches_table() {
        let mut seed = 987654321u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut lcs = BitLcs::default();
        for round in 0..400 {
            let lr = (next() % 150) as usize;
            let lc = (next() % 150) as usize;
            let k = 1 + (round % 9) as u64;
            let r: Vec<u32> = (0..lr).map(|_| (next() % k) as u32).collect();
            let c: Vec<u32> = (0..lc).map(|_| (next() % k) as u32).collect();
            let mut marks = vec![false; r.len()];
            lcs.load_pattern(&c, k as usize);
            lcs.mark_backtrack(&r, &c, &mut marks);
            lcs.unload_pattern(&c);
            assert_eq!(marks, naive_backtrack(&r, &c), "{r:?} {c:?}");
        }
    }

    #[test]
    fn arbitrary_text_does_not_panic() {
        let mut seed = 42u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet: Vec<char> = "ab Ab\n\n.İ\u{212A}東京é\u{301}ΣσςßyY*d0 \t\r\u{0}\u{FFFF}😀ไทย"
            .chars()
            .collect();
        let mut scratch = Scratch::default();
        for _ in 0..500 {
            let mut text = |n: usize| -> String {
                (0..n)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect()
            };
            let (p, r1, r2) = (text(40), text(60), text(5));
            for tokenizer in [RougeTokenizer::RougeScore, RougeTokenizer::Unicode] {
                for use_stemmer in [false, true] {
                    let o = RougeOptions {
                        use_stemmer,
                        tokenizer,
                        ..RougeOptions::default()
                    };
                    let s = scratch.rouge(&p, &[&r1, &r2], &o);
                    for prf in [s.rouge1, s.rouge2, s.rouge_l, s.rouge_lsum] {
                        for x in [prf.precision, prf.recall, prf.fmeasure] {
                            assert!((0.0..=1.0).contains(&x));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn empty_inputs() {
        let o = RougeOptions::default();
        assert_eq!(rouge("", &[""], &o), RougeScores::default());
        assert_eq!(rouge("a", &[], &o), RougeScores::default());
        assert_eq!(rouge("\n\n", &["!!\n"], &o), RougeScores::default());
    }

    #[test]
    fn unicode_tokenizer_scores_cjk_and_accents() {
        let o = RougeOptions {
            tokenizer: RougeTokenizer::Unicode,
            ..RougeOptions::default()
        };
        let s = rouge("東京は日本の首都である", &["東京は日本の首都です"], &o);
        assert!(s.rouge1.fmeasure > 0.7 && s.rouge_l.fmeasure > 0.7);
        let s = rouge("Café crème brûlée", &["café crème"], &o);
        assert_eq!(s.rouge1.recall, 1.0);
        let d = rouge("東京は日本", &["東京は日本"], &RougeOptions::default());
        assert_eq!(d.rouge1.fmeasure, 0.0);
    }

    #[test]
    fn options_serde() {
        let o: RougeOptions =
            serde_json::from_str(r#"{"use_stemmer": true, "tokenizer": "unicode"}"#).unwrap();
        assert!(o.use_stemmer && o.tokenizer == RougeTokenizer::Unicode);
        assert!(serde_json::from_str::<RougeOptions>(r#"{"stem": true}"#).is_err());
        let o: RougeOptions = serde_json::from_str("{}").unwrap();
        assert_eq!(o, RougeOptions::default());
    }
}
