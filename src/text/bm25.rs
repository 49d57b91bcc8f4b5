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
//! documents. A term found in at least one document in eight is kept as a dense row instead
//! and added to every document: adding `+0.0` leaves a score unchanged, and the dense add
//! vectorizes where scattering into most of the documents would not. The one exception is a document whose length normalisation is zero or NaN (for
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
use std::hash::Hasher;

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

/// A `HashMap` keyed by tokens, with [`TokenHasher`] (the reference term counts of the tests).
#[cfg(test)]
pub(crate) type TokenMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<TokenHasher>>;

fn hash_term(term: &str) -> u64 {
    let mut h = TokenHasher::default();
    h.write(term.as_bytes());
    // The length keeps a term from colliding with its zero-padded extensions.
    h.write_u8(term.len() as u8);
    h.finish()
}

/// One vocabulary slot: the term's hash, its id, and its first 8 bytes (zero-padded) with its
/// length, which settle most comparisons without reading the arena.
#[derive(Clone, Copy, Debug)]
struct Slot {
    hash: u64,
    prefix: u64,
    id: u32,
    len: u32,
}

fn prefix_of(term: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    let n = term.len().min(8);
    bytes[..n].copy_from_slice(&term[..n]);
    u64::from_le_bytes(bytes)
}

/// Terms ↔ dense ids, ids in order of insertion. The terms live back to back in one string,
/// so adding a term allocates nothing per term, and a lookup of a short term compares two
/// integers.
///
/// ```
/// use polars_rag::text::bm25::Vocabulary;
/// let mut v = Vocabulary::default();
/// assert_eq!(v.id_or_insert("cat"), 0);
/// assert_eq!(v.id_or_insert("catalogue"), 1);
/// assert_eq!(v.id_or_insert("cat"), 0);
/// assert_eq!((v.get("catalogue"), v.get("dog"), v.term(1)), (Some(1), None, "catalogue"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Vocabulary {
    table: hashbrown::HashTable<Slot>,
    arena: String,
    /// Per id: the term's end in `arena` (it starts where the previous one ends).
    ends: Vec<u32>,
}

impl Vocabulary {
    /// The number of terms.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no terms.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The term with id `id`.
    ///
    /// # Panics
    ///
    /// If `id` is not below [`Vocabulary::len`].
    pub fn term(&self, id: u32) -> &str {
        let id = id as usize;
        let start = if id == 0 {
            0
        } else {
            self.ends[id - 1] as usize
        };
        &self.arena[start..self.ends[id] as usize]
    }

    fn find(&self, hash: u64, term: &str) -> Option<u32> {
        let bytes = term.as_bytes();
        let prefix = prefix_of(bytes);
        let len = bytes.len() as u32;
        self.table
            .find(hash, |s| {
                s.hash == hash
                    && s.prefix == prefix
                    && s.len == len
                    && (len <= 8 || self.term(s.id).as_bytes() == bytes)
            })
            .map(|s| s.id)
    }

    /// The id of `term`, `None` when absent.
    pub fn get(&self, term: &str) -> Option<u32> {
        self.find(hash_term(term), term)
    }

    /// The id of `term`, inserting it with the next id when absent.
    ///
    /// # Panics
    ///
    /// If the terms would exceed 4 GiB in all.
    pub fn id_or_insert(&mut self, term: &str) -> u32 {
        let hash = hash_term(term);
        if let Some(id) = self.find(hash, term) {
            return id;
        }
        let id = self.ends.len() as u32;
        self.arena.push_str(term);
        let end = u32::try_from(self.arena.len()).expect("vocabulary under 4 GiB");
        self.ends.push(end);
        let slot = Slot {
            hash,
            prefix: prefix_of(term.as_bytes()),
            id,
            len: term.len() as u32,
        };
        self.table.insert_unique(hash, slot, |s| s.hash);
        id
    }
}

impl PartialEq for Vocabulary {
    /// The same terms with the same ids.
    fn eq(&self, other: &Self) -> bool {
        self.ends == other.ends && self.arena == other.arena
    }
}

/// A tokenized corpus as term ids, built one document at a time: the vocabulary (ids in order
/// of first appearance, the iteration order of rank_bm25's `nd` dict) and, per document, its
/// length and its distinct terms with their frequencies.
///
/// Runs of consecutive documents can be interned separately (in parallel) and joined in
/// corpus order with [`DocInterner::append`], which gives the same ids as one pass would.
///
/// ```
/// use polars_rag::text::bm25::{Bm25Okapi, DocInterner};
///
/// let mut first = DocInterner::default();
/// first.add_doc(["the", "cat", "sat"]);
/// let mut rest = DocInterner::default();
/// rest.add_doc(["the", "dog", "ran"]);
/// first.append(rest);
/// let bm25 = Bm25Okapi::from_interned(first, 1.5, 0.75, 0.25);
/// assert_eq!(bm25, Bm25Okapi::new(&[["the", "cat", "sat"], ["the", "dog", "ran"]], 1.5, 0.75, 0.25));
/// ```
#[derive(Clone, Debug, Default)]
pub struct DocInterner {
    vocab: Vocabulary,
    doc_len: Vec<usize>,
    /// `(term id, frequency)` of every document's distinct terms, in order of first appearance
    /// within the document, documents back to back; document `d` ends at `doc_end[d]`.
    entries: Vec<(u32, u32)>,
    doc_end: Vec<usize>,
    /// Per term id: its count in the open document (zero outside it).
    counts: Vec<u32>,
    /// The open document's terms, in order of first appearance.
    seen: Vec<u32>,
    open_len: usize,
}

impl DocInterner {
    /// Adds one whole document.
    pub fn add_doc<I, S>(&mut self, tokens: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for token in tokens {
            self.add_token(token.as_ref());
        }
        self.end_doc();
    }

    /// Adds a token to the open document (documents open implicitly).
    pub(crate) fn add_token(&mut self, token: &str) {
        let id = self.vocab.id_or_insert(token);
        if id as usize == self.counts.len() {
            self.counts.push(0);
        }
        let c = &mut self.counts[id as usize];
        if *c == 0 {
            self.seen.push(id);
        }
        *c += 1;
        self.open_len += 1;
    }

    /// Closes the open document (an empty one when no token was added).
    pub(crate) fn end_doc(&mut self) {
        for &id in &self.seen {
            self.entries.push((id, self.counts[id as usize]));
            self.counts[id as usize] = 0;
        }
        self.seen.clear();
        self.doc_len.push(self.open_len);
        self.open_len = 0;
        self.doc_end.push(self.entries.len());
    }

    /// The number of documents added.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// Whether no document was added.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// Appends the documents of `later` (which come after these in the corpus). Its terms that
    /// are new here get ids in its own order of first appearance, as one pass would give them.
    pub fn append(&mut self, later: DocInterner) {
        let remap: Vec<u32> = (0..later.vocab.len() as u32)
            .map(|id| self.vocab.id_or_insert(later.vocab.term(id)))
            .collect();
        self.counts.resize(self.vocab.len(), 0);
        let offset = self.entries.len();
        self.entries.extend(
            later
                .entries
                .iter()
                .map(|&(id, tf)| (remap[id as usize], tf)),
        );
        self.doc_end
            .extend(later.doc_end.iter().map(|e| e + offset));
        self.doc_len.extend(later.doc_len);
    }

    fn doc(&self, d: usize) -> &[(u32, u32)] {
        let start = if d == 0 { 0 } else { self.doc_end[d - 1] };
        &self.entries[start..self.doc_end[d]]
    }
}

/// A BM25 Okapi index over a tokenized corpus: rank_bm25 0.2.2's `BM25Okapi`.
///
/// Build it once with [`Bm25Okapi::new`] (or [`Bm25Okapi::from_interned`]), then score any
/// number of queries with [`Bm25Okapi::scores`] (rank_bm25's `get_scores`).
#[derive(Clone, Debug, PartialEq)]
pub struct Bm25Okapi {
    k1: f64,
    b: f64,
    epsilon: f64,
    doc_len: Vec<usize>,
    avgdl: f64,
    average_idf: f64,
    /// Term → id; ids follow the order of first appearance in the corpus, which is the
    /// iteration order of rank_bm25's `nd` dict (it fixes the summation order of `average_idf`).
    vocab: Vocabulary,
    /// Final idf per term id (negative values already replaced by `epsilon × average_idf`).
    idf: Vec<f64>,
    /// Per term id: where its contributions are, [`Postings::Sparse`] or [`Postings::Dense`].
    postings: Vec<Postings>,
    /// Sparse postings, back to back: (document, that posting's contribution to the score),
    /// documents ascending.
    sparse: Vec<(u32, f64)>,
    /// Dense rows, back to back: one contribution per document (0.0 where the term is absent).
    dense: Vec<f64>,
    /// `k1 × (1 − b + b × |d| / avgdl)` per document.
    len_norm: Vec<f64>,
    /// Documents where a zero term frequency does not contribute `±0.0` (see the module
    /// documentation), with their term frequencies, scored with the full formula.
    degenerate: Vec<DegenerateDoc>,
}

/// Where one term's contributions are stored.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Postings {
    /// `sparse[start..end]`.
    Sparse { start: u32, end: u32 },
    /// `dense[row * n_docs..(row + 1) * n_docs]`.
    Dense { row: u32 },
}

/// A term in at least one document in this many is scored through a dense row: adding its
/// contribution to every document vectorizes, and adding `+0.0` where it is absent leaves a
/// score unchanged (a score is never `-0.0`: it starts at `+0.0`, and `-0.0` only comes from
/// adding two of them).
const DENSE_SHARE: usize = 8;
/// Below this many documents every term is sparse.
const DENSE_MIN_DOCS: usize = 64;

#[derive(Clone, Debug, PartialEq)]
struct DegenerateDoc {
    doc: usize,
    tf: HashMap<u32, u32>,
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
        let mut interned = DocInterner::default();
        for doc in corpus {
            interned.add_doc(doc.as_ref());
        }
        Self::from_interned(interned, k1, b, epsilon)
    }

    /// Indexes an interned corpus (see [`DocInterner`]); the same index as [`Bm25Okapi::new`]
    /// over the same documents.
    pub fn from_interned(corpus: DocInterner, k1: f64, b: f64, epsilon: f64) -> Self {
        let n_docs = corpus.len();
        let n_terms = corpus.vocab.len();
        let total_len: usize = corpus.doc_len.iter().sum();

        // Document frequency per term, then each term's postings laid out by a counting sort
        // (documents ascending within a term).
        let mut df = vec![0u32; n_terms];
        for &(id, _) in &corpus.entries {
            df[id as usize] += 1;
        }

        // `num_doc / self.corpus_size`: Python's int / int is the correctly rounded quotient,
        // which the f64 division of two exactly representable integers also is.
        let avgdl = total_len as f64 / n_docs as f64;

        // `_calc_idf`: raw idf, summed in first-appearance order, then negatives floored.
        let mut idf: Vec<f64> = Vec::with_capacity(n_terms);
        let mut idf_sum = 0.0_f64;
        for &freq in &df {
            let value = ((n_docs - freq as usize) as f64 + 0.5).ln() - (freq as f64 + 0.5).ln();
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
        let len_norm: Vec<f64> = corpus
            .doc_len
            .iter()
            .map(|&dl| k1 * ((1.0 - b) + (b * dl as f64) / avgdl))
            .collect();

        let dense_from = if n_docs >= DENSE_MIN_DOCS {
            n_docs.div_ceil(DENSE_SHARE) as u32
        } else {
            u32::MAX
        };
        let mut postings = Vec::with_capacity(n_terms);
        let (mut n_sparse, mut n_dense) = (0u32, 0u32);
        for &freq in &df {
            if freq >= dense_from {
                postings.push(Postings::Dense { row: n_dense });
                n_dense += 1;
            } else {
                postings.push(Postings::Sparse {
                    start: n_sparse,
                    end: n_sparse + freq,
                });
                n_sparse += freq;
            }
        }
        let mut sparse = vec![(0u32, 0.0f64); n_sparse as usize];
        let mut dense = vec![0.0f64; n_dense as usize * n_docs];
        let mut fill: Vec<u32> = postings
            .iter()
            .map(|p| match p {
                Postings::Sparse { start, .. } => *start,
                Postings::Dense { .. } => 0,
            })
            .collect();
        let k1_plus_1 = k1 + 1.0;
        for d in 0..n_docs {
            for &(id, tf) in corpus.doc(d) {
                let w = term_weight(idf[id as usize], tf, k1_plus_1, len_norm[d]);
                match postings[id as usize] {
                    Postings::Sparse { .. } => {
                        let slot = &mut fill[id as usize];
                        sparse[*slot as usize] = (d as u32, w);
                        *slot += 1;
                    }
                    Postings::Dense { row } => dense[row as usize * n_docs + d] = w,
                }
            }
        }

        // A zero frequency contributes `idf × (0 × (k1 + 1) / (0 + len_norm))`, which is ±0
        // (a no-op on the sum) unless that quotient is NaN.
        let degenerate: Vec<DegenerateDoc> = (0..n_docs)
            .filter(|&d| ((0.0 * k1_plus_1) / (0.0 + len_norm[d])).is_nan())
            .map(|d| DegenerateDoc {
                doc: d,
                tf: corpus.doc(d).iter().copied().collect(),
            })
            .collect();

        Bm25Okapi {
            k1,
            b,
            epsilon,
            doc_len: corpus.doc_len,
            avgdl,
            average_idf,
            vocab: corpus.vocab,
            idf,
            postings,
            sparse,
            dense,
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
        let n_docs = self.doc_len.len();
        out.resize(n_docs, 0.0);
        for token in query {
            if let Some(id) = self.vocab.get(token.as_ref()) {
                match self.postings[id as usize] {
                    Postings::Sparse { start, end } => {
                        for &(d, w) in &self.sparse[start as usize..end as usize] {
                            out[d as usize] += w;
                        }
                    }
                    Postings::Dense { row } => {
                        let row = &self.dense[row as usize * n_docs..(row as usize + 1) * n_docs];
                        for (score, w) in out.iter_mut().zip(row) {
                            *score += *w;
                        }
                    }
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
                        Some(id) => (self.idf[id as usize], doc.tf.get(&id).copied().unwrap_or(0)),
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
        self.vocab.get(term).map(|id| self.idf[id as usize])
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
    #[cfg(test)]
    pub(crate) fn doc_lens(&self) -> &[usize] {
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
fn term_weight(idf: f64, tf: u32, k1_plus_1: f64, len_norm: f64) -> f64 {
    let tf = tf as f64;
    idf * ((tf * k1_plus_1) / (tf + len_norm))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rank_bm25's `get_scores` written out: every query token against every document, absent
    /// terms included (they add `idf × 0.0`).
    fn literal_scores(
        bm25: &Bm25Okapi,
        query: &[String],
        tf: &[TokenMap<String, u32>],
    ) -> Vec<f64> {
        let (k1, b, _) = bm25.params();
        let mut out = vec![0.0_f64; bm25.len()];
        for q in query {
            let idf = bm25.idf(q).unwrap_or(0.0);
            for (d, score) in out.iter_mut().enumerate() {
                let f = tf[d].get(q).copied().unwrap_or(0) as f64;
                let norm = k1 * ((1.0 - b) + (b * bm25.doc_lens()[d] as f64) / bm25.avgdl());
                *score += idf * ((f * (k1 + 1.0)) / (f + norm));
            }
        }
        out
    }

    proptest::proptest! {
        /// Corpora large enough for dense rows (common terms drawn from a few words, rare ones
        /// from many), scored bit for bit like the literal formula.
        #[test]
        fn dense_and_sparse_terms_score_like_the_formula(
            docs in proptest::collection::vec(
                proptest::collection::vec((0u8..4, 0u16..400), 0..30), 64..200),
            query in proptest::collection::vec((0u8..4, 0u16..400), 0..12),
            k1 in 0.5f64..2.0,
            b in 0.0f64..1.0,
        ) {
            let word = |(kind, n): (u8, u16)| if kind == 0 { format!("r{n}") } else { format!("c{}", n % 6) };
            let corpus: Vec<Vec<String>> =
                docs.iter().map(|d| d.iter().copied().map(word).collect()).collect();
            let query: Vec<String> = query.into_iter().map(word).collect();
            let tf: Vec<TokenMap<String, u32>> = corpus
                .iter()
                .map(|d| {
                    let mut m = TokenMap::default();
                    for t in d {
                        *m.entry(t.clone()).or_insert(0) += 1;
                    }
                    m
                })
                .collect();
            let bm25 = Bm25Okapi::new(&corpus, k1, b, 0.25);
            let got = bm25.scores(&query);
            let want = literal_scores(&bm25, &query, &tf);
            for (g, w) in got.iter().zip(&want) {
                proptest::prop_assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()), "{g} != {w}");
            }
        }
    }

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
