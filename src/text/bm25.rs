//! BM25 Okapi ranking, reproducing rank_bm25 0.2.2's `BM25Okapi` bit for bit.
//!
//! rank_bm25 is what soak's quote verification (and many RAG pipelines) use to pick the source
//! window a quote came from, so its scores, not textbook BM25, are the reference:
//!
//! * `idf(t) = ln(N − n(t) + 0.5) − ln(n(t) + 0.5)`, a *difference of logarithms* (not the log
//!   of the ratio, which can round differently), for `N` documents of which `n(t)` contain `t`;
//! * `average_idf` is the mean of those raw values, negative ones included, summed in the order
//!   in which terms first appear in the corpus (Python dict order);
//! * every negative idf is then replaced by `epsilon × average_idf` (which is itself negative
//!   when most terms are in more than half the documents: rank_bm25 does not guard this);
//! * `score(d) = Σ_q idf(q) × tf(q, d) × (k1 + 1) / (tf(q, d) + k1 × (1 − b + b × |d| / avgdl))`
//!   over every query token, **repeats included**; a token absent from the corpus has idf 0 and
//!   contributes nothing.
//!
//! rank_bm25 evaluates the sum with numpy over all documents at once, one query token at a
//! time. Each document's score is therefore accumulated in query order, and the documents
//! that do not contain a token receive `+0.0`, which leaves a sum unchanged. So this module
//! keeps an inverted index (term → documents and frequencies, with each posting's contribution
//! precomputed with rank_bm25's exact operation order) and adds only the postings of each query
//! token, in query order: the same floats in the same order, without touching the other
//! documents. The one exception is a document whose length normalisation is zero or NaN (for
//! example `b = 1` and an empty document, or `k1 = 0`): there `0 / 0` makes rank_bm25 return
//! NaN whenever the document lacks one query token, and such documents are scored term by
//! term with the full formula so that the NaNs are reproduced too.
//!
//! ```
//! use polars_rag::text::bm25::Bm25Okapi;
//!
//! let corpus = [
//!     vec!["the", "cat", "sat"],
//!     vec!["the", "dog", "ran", "fast"],
//!     vec!["a", "cat", "and", "a", "dog"],
//!     vec!["birds", "fly"],
//! ];
//! let bm25 = Bm25Okapi::new(&corpus, 1.5, 0.75, 0.25);
//! assert_eq!(bm25.avgdl(), 3.5);
//! assert_eq!(bm25.idf("sat"), Some(0.8472978603872037)); // ln(3.5) − ln(1.5)
//! assert_eq!(bm25.idf("the"), Some(0.0)); // in 2 of 4 documents
//! assert_eq!(bm25.idf("unknown"), None);
//! // Repeated query tokens count once per occurrence; unknown tokens add nothing.
//! assert_eq!(bm25.scores(&["a", "a", "unknown"]), [0.0, 0.0, 2.1277435059050855, 0.0]);
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast multiplicative hasher for short token strings (the vocabulary is looked up once per
/// corpus token and once per query token; SipHash's DoS resistance buys nothing here).
#[derive(Default, Clone, Copy)]
pub struct TokenHasher(u64);

impl Hasher for TokenHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(5) ^ v).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ b as u64).wrapping_mul(K);
        }
        self.0 = h;
    }

    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` keyed by tokens, with [`TokenHasher`].
pub type TokenMap<K, V> = HashMap<K, V, BuildHasherDefault<TokenHasher>>;

/// A BM25 Okapi index over a tokenized corpus: rank_bm25 0.2.2's `BM25Okapi`.
///
/// Build it once with [`Bm25Okapi::new`], then score any number of queries with
/// [`Bm25Okapi::scores`] (rank_bm25's `get_scores`).
#[derive(Clone, Debug)]
pub struct Bm25Okapi {
    k1: f64,
    b: f64,
    epsilon: f64,
    doc_len: Vec<usize>,
    avgdl: f64,
    average_idf: f64,
    /// Term → id; ids follow the order of first appearance in the corpus, which is the
    /// iteration order of rank_bm25's `nd` dict (it fixes the summation order of `average_idf`).
    vocab: TokenMap<String, u32>,
    /// Final idf per term id (negative values already replaced by `epsilon × average_idf`).
    idf: Vec<f64>,
    /// Per term id: (document, that posting's contribution to the score), documents ascending.
    postings: Vec<Vec<(u32, f64)>>,
    /// `k1 × (1 − b + b × |d| / avgdl)` per document.
    len_norm: Vec<f64>,
    /// Documents where a zero term frequency does not contribute `±0.0` (see the module
    /// documentation), with their term frequencies, scored with the full formula.
    degenerate: Vec<DegenerateDoc>,
}

#[derive(Clone, Debug)]
struct DegenerateDoc {
    doc: usize,
    tf: HashMap<u32, usize>,
}

impl Bm25Okapi {
    /// Indexes `corpus`, one token list per document, as
    /// `BM25Okapi(corpus, k1=k1, b=b, epsilon=epsilon)` does (rank_bm25's defaults are
    /// `k1 = 1.5`, `b = 0.75`, `epsilon = 0.25`; see [`Bm25Okapi::with_defaults`]).
    ///
    /// Where rank_bm25 raises `ZeroDivisionError` (an empty corpus, or a corpus of empty
    /// documents), this returns an index whose `avgdl` or `average_idf` is NaN instead; an empty
    /// corpus scores every query as an empty list.
    pub fn new<D, S>(corpus: &[D], k1: f64, b: f64, epsilon: f64) -> Self
    where
        D: AsRef<[S]>,
        S: AsRef<str>,
    {
        let n_docs = corpus.len();
        let mut vocab: TokenMap<String, u32> = TokenMap::default();
        // Per term id: (document, term frequency), documents ascending.
        let mut tf_postings: Vec<Vec<(u32, usize)>> = Vec::new();
        let mut doc_len = Vec::with_capacity(n_docs);
        let mut total_len: usize = 0;
        // Per-document counts by term id, reused (only the `seen` slots are reset); `seen` keeps
        // first-occurrence order within the document, which is the order rank_bm25 inserts new
        // terms into `nd`.
        let mut counts: Vec<usize> = Vec::new();
        let mut seen: Vec<u32> = Vec::new();

        for (d, doc) in corpus.iter().enumerate() {
            let tokens = doc.as_ref();
            doc_len.push(tokens.len());
            total_len += tokens.len();
            seen.clear();
            for token in tokens {
                let token = token.as_ref();
                let id = match vocab.get(token) {
                    Some(&id) => id,
                    None => {
                        let id = u32::try_from(tf_postings.len()).expect("fewer than 2^32 terms");
                        vocab.insert(token.to_owned(), id);
                        tf_postings.push(Vec::new());
                        counts.push(0);
                        id
                    }
                };
                let c = &mut counts[id as usize];
                if *c == 0 {
                    seen.push(id);
                }
                *c += 1;
            }
            let d = u32::try_from(d).expect("fewer than 2^32 documents");
            for &id in &seen {
                tf_postings[id as usize].push((d, counts[id as usize]));
                counts[id as usize] = 0;
            }
        }

        // `num_doc / self.corpus_size`: Python's int / int is the correctly rounded quotient,
        // which the f64 division of two exactly representable integers also is.
        let avgdl = total_len as f64 / n_docs as f64;

        // `_calc_idf`: raw idf, summed in first-appearance order, then negatives floored.
        let mut idf: Vec<f64> = Vec::with_capacity(tf_postings.len());
        let mut idf_sum = 0.0_f64;
        for postings in &tf_postings {
            let freq = postings.len();
            let value = ((n_docs - freq) as f64 + 0.5).ln() - (freq as f64 + 0.5).ln();
            idf_sum += value;
            idf.push(value);
        }
        let average_idf = idf_sum / idf.len() as f64;
        let eps = epsilon * average_idf;
        for value in &mut idf {
            if *value < 0.0 {
                *value = eps;
            }
        }

        // `self.k1 * (1 - self.b + self.b * doc_len / self.avgdl)`, in numpy's operation order:
        // ((1 - b) + ((b * dl) / avgdl)) * k1.
        let len_norm: Vec<f64> = doc_len
            .iter()
            .map(|&dl| k1 * ((1.0 - b) + (b * dl as f64) / avgdl))
            .collect();

        let k1_plus_1 = k1 + 1.0;
        let postings: Vec<Vec<(u32, f64)>> = tf_postings
            .iter()
            .zip(&idf)
            .map(|(list, &w)| {
                list.iter()
                    .map(|&(d, tf)| (d, term_weight(w, tf, k1_plus_1, len_norm[d as usize])))
                    .collect()
            })
            .collect();

        // A zero frequency contributes `idf × (0 × (k1 + 1) / (0 + len_norm))`, which is ±0
        // (a no-op on the sum) unless that quotient is NaN.
        let degenerate_docs: Vec<usize> = (0..n_docs)
            .filter(|&d| ((0.0 * k1_plus_1) / (0.0 + len_norm[d])).is_nan())
            .collect();
        let mut degenerate: Vec<DegenerateDoc> = degenerate_docs
            .iter()
            .map(|&doc| DegenerateDoc {
                doc,
                tf: HashMap::new(),
            })
            .collect();
        if !degenerate.is_empty() {
            let slot: HashMap<usize, usize> = degenerate_docs
                .iter()
                .enumerate()
                .map(|(i, &d)| (d, i))
                .collect();
            for (id, list) in tf_postings.iter().enumerate() {
                for &(d, tf) in list {
                    if let Some(&i) = slot.get(&(d as usize)) {
                        degenerate[i].tf.insert(id as u32, tf);
                    }
                }
            }
        }

        Bm25Okapi {
            k1,
            b,
            epsilon,
            doc_len,
            avgdl,
            average_idf,
            vocab,
            idf,
            postings,
            len_norm,
            degenerate,
        }
    }

    /// [`Bm25Okapi::new`] with rank_bm25's defaults: `k1 = 1.5`, `b = 0.75`, `epsilon = 0.25`.
    pub fn with_defaults<D, S>(corpus: &[D]) -> Self
    where
        D: AsRef<[S]>,
        S: AsRef<str>,
    {
        Self::new(corpus, 1.5, 0.75, 0.25)
    }

    /// The score of every document for `query` (rank_bm25's `get_scores`), in corpus order.
    ///
    /// Every query token counts, repeats included; tokens absent from the corpus add nothing.
    /// An empty query scores 0 everywhere.
    pub fn scores<S: AsRef<str>>(&self, query: &[S]) -> Vec<f64> {
        let mut out = Vec::new();
        self.scores_into(query, &mut out);
        out
    }

    /// [`Bm25Okapi::scores`] into a caller-owned buffer (cleared first), to score many queries
    /// without allocating.
    pub fn scores_into<S: AsRef<str>>(&self, query: &[S], out: &mut Vec<f64>) {
        out.clear();
        out.resize(self.doc_len.len(), 0.0);
        for token in query {
            if let Some(&id) = self.vocab.get(token.as_ref()) {
                for &(d, w) in &self.postings[id as usize] {
                    out[d as usize] += w;
                }
            }
        }
        if !self.degenerate.is_empty() {
            let k1_plus_1 = self.k1 + 1.0;
            for doc in &self.degenerate {
                let mut score = 0.0_f64;
                for token in query {
                    // `self.idf.get(q) or 0`, and the document's frequency (0 when absent).
                    let (w, tf) = match self.vocab.get(token.as_ref()) {
                        Some(&id) => (self.idf[id as usize], doc.tf.get(&id).copied().unwrap_or(0)),
                        None => (0.0, 0),
                    };
                    score += term_weight(w, tf, k1_plus_1, self.len_norm[doc.doc]);
                }
                out[doc.doc] = score;
            }
        }
    }

    /// The idf of `term` after flooring (rank_bm25's `self.idf[term]`), `None` when the term is
    /// not in the corpus.
    pub fn idf(&self, term: &str) -> Option<f64> {
        self.vocab.get(term).map(|&id| self.idf[id as usize])
    }

    /// The mean of the raw (unfloored) idf values over all terms.
    pub fn average_idf(&self) -> f64 {
        self.average_idf
    }

    /// The mean document length in tokens.
    pub fn avgdl(&self) -> f64 {
        self.avgdl
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// Whether the corpus has no documents.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// The length in tokens of each document, in corpus order.
    pub fn doc_lens(&self) -> &[usize] {
        &self.doc_len
    }

    /// The number of distinct terms.
    pub fn vocabulary_size(&self) -> usize {
        self.idf.len()
    }

    /// The parameters `(k1, b, epsilon)`.
    pub fn params(&self) -> (f64, f64, f64) {
        (self.k1, self.b, self.epsilon)
    }
}

/// One token's contribution to one document:
/// `idf * (q_freq * (k1 + 1) / (q_freq + len_norm))`, in rank_bm25's operation order.
#[inline]
fn term_weight(idf: f64, tf: usize, k1_plus_1: f64, len_norm: f64) -> f64 {
    let tf = tf as f64;
    idf * ((tf * k1_plus_1) / (tf + len_norm))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_idf_floored_to_epsilon_times_average() {
        // One document: every idf is ln(0.5) − ln(1.5) < 0, so all become 0.25 × that value.
        let bm25 = Bm25Okapi::new(&[vec!["x", "y"]], 1.5, 0.4, 0.25);
        let raw = 0.5_f64.ln() - 1.5_f64.ln();
        assert_eq!(bm25.average_idf(), (raw + raw) / 2.0);
        assert_eq!(bm25.idf("x"), Some(0.25 * bm25.average_idf()));
        assert_eq!(bm25.scores(&["x"]), [-0.2746530721670274]);
    }

    #[test]
    fn empty_inputs() {
        let empty: [Vec<&str>; 0] = [];
        let bm25 = Bm25Okapi::with_defaults(&empty);
        assert!(bm25.is_empty());
        assert!(bm25.avgdl().is_nan());
        assert!(bm25.scores(&["a"]).is_empty());

        let bm25 = Bm25Okapi::with_defaults(&[vec!["a"], vec![]]);
        let none: [&str; 0] = [];
        assert_eq!(bm25.scores(&none), [0.0, 0.0]);
    }

    #[test]
    fn zero_length_normalisation_gives_nan_like_numpy() {
        // b = 1 and an empty document: len_norm = 1.5 × (0 + 0) = 0, and rank_bm25 computes
        // 0 / (0 + 0) for it, whatever the token.
        let corpus = [vec!["a", "b"], vec![], vec!["c"]];
        let bm25 = Bm25Okapi::new(&corpus, 1.5, 1.0, 0.25);
        let s = bm25.scores(&["a"]);
        assert!(s[0] > 0.0 && s[1].is_nan() && s[2] == 0.0);
        assert!(bm25.scores(&["zzz"])[1].is_nan());
        let none: [&str; 0] = [];
        assert_eq!(bm25.scores(&none)[1], 0.0);

        // k1 = 0: every document's normalisation is 0; a document lacking a query token is NaN.
        let bm25 = Bm25Okapi::new(&corpus, 0.0, 0.75, 0.25);
        let s = bm25.scores(&["a", "b"]);
        assert!(!s[0].is_nan() && s[1].is_nan() && s[2].is_nan());
    }
}
