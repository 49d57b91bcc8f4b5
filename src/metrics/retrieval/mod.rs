//! Ranked-list retrieval metrics: `precision_at_k`, `recall_at_k`, `f1_at_k`, `hit_rate_at_k`,
//! `mrr`, `average_precision`, `ndcg_at_k`, `r_precision` and `hybrid_log_rank`.
//!
//! Scoring happens in two steps, so that every way of saying "this item is relevant" feeds the
//! same arithmetic:
//!
//! 1. **Judging** ([`Judgments`]): for each retrieved item, in rank order, the ground-truth items
//!    it matches. Ground truth is exact texts or ids ([`Judgments::judge_keys`]), character spans
//!    ([`Judgments::judge_spans`]: an item overlapping a golden span by at least a threshold) or
//!    embeddings ([`Judgments::judge_embeddings`]: cosine ≥ a threshold; one item may match
//!    several ground-truth items and several items one ground-truth item).
//! 2. **Scoring** ([`score`]): the standard definitions, equal to trec_eval (pytrec_eval) when
//!    every item matches at most one ground-truth item and no item is retrieved twice.
//!
//! The rules that keep every score in [0, 1] whatever the judging:
//!
//! * an item is *relevant* when it matches a ground-truth item of grade > 0 (with a
//!   `relevance_level`, of grade ≥ that level, as trec_eval's `-l`); nDCG's gains are the grades
//!   above 0 whatever the level, as in trec_eval;
//! * an exact duplicate of an earlier retrieved item (same text, id or span) is not relevant: it
//!   brings nothing new (trec_eval cannot even represent it);
//! * each ground-truth item is credited once, at the first rank that matches it. A rank is a
//!   *new hit* when it matches a ground-truth item no earlier rank matched; average precision,
//!   R-precision and nDCG count new hits (nDCG's gain at a rank is the highest grade among the
//!   ground-truth items first matched there), precision and hit rate count relevant items,
//!   recall counts ground-truth items matched.
//!
//! A query with no ground truth at all gives `None` (trec_eval leaves a query without judgments
//! out of its averages). A query whose ground truth is judged but holds nothing relevant (every
//! grade 0, or below the relevance level) is scored as trec_eval scores it: 0 for every metric,
//! and it counts in the means. `datapizza-ai`'s `metrics.py` is reproduced, quirks included, by
//! [`datapizza`].
//!
//! ```
//! use polars_rag::metrics::retrieval::{score, Judgments, RankedMetric};
//! let mut j = Judgments::default();
//! j.judge_keys(&["a", "b", "c", "d"], &["a", "c", "e"]);
//! assert_eq!(score(RankedMetric::PrecisionAtK, &j, Some(2), &Default::default()), Some(0.5));
//! assert_eq!(score(RankedMetric::RecallAtK, &j, Some(4), &Default::default()), Some(2.0 / 3.0));
//! assert_eq!(score(RankedMetric::Mrr, &j, None, &Default::default()), Some(1.0));
//! ```

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub mod datapizza;
pub mod ragas;

use crate::engines::embed::EmbedSettings;
use crate::metrics::similarity::StringDistance;

/// The ranked-list metrics, one per metric id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankedMetric {
    /// `precision_at_k`: relevant items in the top k / k (k, not the number retrieved, as trec_eval's `P_k`).
    PrecisionAtK,
    /// `recall_at_k`: ground-truth items matched in the top k / relevant ground-truth items.
    RecallAtK,
    /// `f1_at_k`: harmonic mean of the two (0 when both are 0).
    F1AtK,
    /// `hit_rate_at_k`: 1 when a relevant item is in the top k.
    HitRateAtK,
    /// `mrr`: 1 / rank of the first relevant item (trec_eval `recip_rank`), 0 when none.
    Mrr,
    /// `average_precision`: Σ over new hits of (new hits so far / rank), / relevant ground truth (trec_eval `map`).
    AveragePrecision,
    /// `ndcg_at_k`: DCG / ideal DCG with linear gains and log2 discounts (trec_eval `ndcg_cut_k`).
    NdcgAtK,
    /// `r_precision`: new hits in the top R / R, R = relevant ground truth (trec_eval `Rprec`).
    RPrecision,
    /// `hybrid_log_rank`: α · recall + (1 − α) · mean log-rank score of the ground truth.
    HybridLogRank,
}

impl RankedMetric {
    /// Every ranked metric, in catalogue order.
    pub const ALL: [RankedMetric; 9] = [
        RankedMetric::PrecisionAtK,
        RankedMetric::RecallAtK,
        RankedMetric::F1AtK,
        RankedMetric::HybridLogRank,
        RankedMetric::HitRateAtK,
        RankedMetric::Mrr,
        RankedMetric::AveragePrecision,
        RankedMetric::NdcgAtK,
        RankedMetric::RPrecision,
    ];

    /// The metric id.
    pub fn id(self) -> &'static str {
        match self {
            RankedMetric::PrecisionAtK => "precision_at_k",
            RankedMetric::RecallAtK => "recall_at_k",
            RankedMetric::F1AtK => "f1_at_k",
            RankedMetric::HitRateAtK => "hit_rate_at_k",
            RankedMetric::Mrr => "mrr",
            RankedMetric::AveragePrecision => "average_precision",
            RankedMetric::NdcgAtK => "ndcg_at_k",
            RankedMetric::RPrecision => "r_precision",
            RankedMetric::HybridLogRank => "hybrid_log_rank",
        }
    }

    /// The metric of an id.
    pub fn from_id(id: &str) -> Option<RankedMetric> {
        RankedMetric::ALL.into_iter().find(|m| m.id() == id)
    }

    /// The cutoff used when none is given: 10 for the `_at_k` metrics, the whole list otherwise.
    pub(crate) fn default_k(self) -> Option<usize> {
        match self {
            RankedMetric::PrecisionAtK
            | RankedMetric::RecallAtK
            | RankedMetric::F1AtK
            | RankedMetric::HitRateAtK
            | RankedMetric::NdcgAtK => Some(10),
            _ => None,
        }
    }
}

/// How a retrieved item is judged relevant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relevance {
    /// From the column types: spans when both sides carry `file`/`start`/`end`, embeddings for
    /// numeric lists, ids when both sides have an `id` (or are plain strings called ids), texts
    /// otherwise.
    #[default]
    Auto,
    /// Exact text equality (case and whitespace significant).
    Text,
    /// Id equality.
    Id,
    /// Character-span overlap of at least `min_overlap` characters and `min_overlap_fraction` of
    /// the golden span, in the same file.
    Span,
    /// Cosine similarity ≥ `similarity_threshold`.
    Embedding,
    /// String similarity of the texts (`string_distance`, as `string_similarity`) ≥
    /// `string_similarity_threshold`: Ragas' non-LLM context metrics.
    Similarity,
}

crate::settings::from_str_by_serde!(Relevance);

impl Relevance {
    /// The name used in options and signatures.
    pub fn name(self) -> &'static str {
        match self {
            Relevance::Auto => "auto",
            Relevance::Text => "text",
            Relevance::Id => "id",
            Relevance::Span => "span",
            Relevance::Embedding => "embedding",
            Relevance::Similarity => "similarity",
        }
    }
}

/// The order in which retrieved items are ranked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankBy {
    /// The list order (the default).
    #[default]
    Order,
    /// The `score` field, highest first; ties keep their list order; items without a score last.
    Score,
    /// trec_eval's order: score descending, ties by id (or text) descending, byte-wise.
    Trec,
}

crate::settings::from_str_by_serde!(RankBy);

/// Which definitions to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetrievalCompat {
    /// The definitions above (trec_eval's where it has the measure).
    #[default]
    Standard,
    /// datapizza-ai `metrics.py`, quirks included (see [`datapizza`]).
    Datapizza,
    /// Ragas 0.4.3's context precision and recall without an LLM (see [`ragas`]).
    Ragas,
}

crate::settings::from_str_by_serde!(RetrievalCompat);

/// Options of the ranked-list metrics (one section per metric in a CLI config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalOptions {
    /// The cutoff: only the first `k` ranks count. `None`: 10 for the `_at_k` metrics, the whole
    /// list for the others. Must be ≥ 1 (datapizza mode accepts any integer, as datapizza does).
    pub k: Option<i64>,
    /// How relevance is judged.
    pub relevance: Relevance,
    /// Span relevance: the least overlap, in characters (code points).
    pub min_overlap: u64,
    /// Span relevance: the least overlap as a fraction of the golden span's length.
    pub min_overlap_fraction: f64,
    /// Embedding relevance: the least cosine similarity (datapizza's default 0.8).
    pub similarity_threshold: f64,
    /// The rank order.
    pub rank_by: RankBy,
    /// Standard or datapizza definitions.
    pub compat: RetrievalCompat,
    /// `hybrid_log_rank`: weight of recall (datapizza's default 0.5).
    pub alpha: f64,
    /// `hybrid_log_rank`: steepness of the log-rank score (datapizza's default 1.0).
    pub gamma: f64,
    /// The least grade that makes a ground-truth item relevant (trec_eval's `relevance_level`,
    /// `-l`). `None`: any grade above 0.
    pub relevance_level: Option<f64>,
    /// Similarity relevance: the string similarity used (Ragas' default, Levenshtein).
    pub string_distance: StringDistance,
    /// Similarity relevance: the least similarity of a relevant item (Ragas' default 0.5).
    pub string_similarity_threshold: f64,
    /// Embedding relevance on texts: the model that embeds the retrieved and ground-truth texts
    /// (`None`: the default local model, `POLARS_RAG_EMBED_MODEL`). Unused when both sides are
    /// already vectors.
    pub embedder: Option<EmbedSettings>,
}

impl Default for RetrievalOptions {
    fn default() -> Self {
        RetrievalOptions {
            k: None,
            relevance: Relevance::Auto,
            min_overlap: 1,
            min_overlap_fraction: 0.0,
            similarity_threshold: 0.8,
            rank_by: RankBy::Order,
            compat: RetrievalCompat::Standard,
            alpha: 0.5,
            gamma: 1.0,
            relevance_level: None,
            string_distance: StringDistance::Levenshtein,
            string_similarity_threshold: 0.5,
            embedder: None,
        }
    }
}

impl RetrievalOptions {
    /// The embedding settings when relevance is judged by embeddings (created with defaults on
    /// first use), `None` otherwise: only then does the metric embed.
    pub fn embedder_mut(&mut self) -> Option<&mut EmbedSettings> {
        (self.relevance == Relevance::Embedding)
            .then(|| self.embedder.get_or_insert_with(Default::default))
    }

    /// Checks the options for `metric`; the message names the metric and the option.
    ///
    /// ```
    /// use polars_rag::metrics::retrieval::{RankedMetric, RetrievalOptions};
    /// let bad = RetrievalOptions { k: Some(0), ..Default::default() };
    /// assert!(bad.validate(RankedMetric::PrecisionAtK).unwrap_err().to_string().contains("k must be"));
    /// ```
    pub fn validate(&self, metric: RankedMetric) -> crate::Result<()> {
        // Problems are found as messages; their kind is given once, here.
        let checked = || -> Result<(), String> {
            let id = metric.id();
            let standard = self.compat == RetrievalCompat::Standard;
            if standard && matches!(self.k, Some(k) if k < 1) {
                return Err(format!(
                    "{id}: k must be at least 1, got {}",
                    self.k.unwrap_or(0)
                ));
            }
            if !self.string_similarity_threshold.is_finite() {
                return Err(format!(
                    "{id}: string_similarity_threshold must be a number"
                ));
            }
            if self.compat == RetrievalCompat::Ragas {
                if matches!(self.k, Some(k) if k < 1) {
                    return Err(format!(
                        "{id}: k must be at least 1, got {}",
                        self.k.unwrap_or(0)
                    ));
                }
                if !matches!(
                    metric,
                    RankedMetric::PrecisionAtK
                        | RankedMetric::RecallAtK
                        | RankedMetric::AveragePrecision
                ) {
                    return Err(format!("{id}: Ragas has no such metric (compat=\"ragas\" gives precision_at_k and recall_at_k by id, recall_at_k and average_precision by string similarity)"));
                }
            }
            if let Some(level) = self.relevance_level
                && !(level.is_finite() && level > 0.0)
            {
                return Err(format!(
                    "{id}: relevance_level must be a finite number above 0, got {level}"
                ));
            }
            if !(0.0..=1.0).contains(&self.min_overlap_fraction) {
                return Err(format!(
                    "{id}: min_overlap_fraction must be in [0, 1], got {}",
                    self.min_overlap_fraction
                ));
            }
            if !self.similarity_threshold.is_finite() {
                return Err(format!("{id}: similarity_threshold must be a number"));
            }
            if self.embedder.is_some() && self.relevance != Relevance::Embedding {
                return Err(format!(
                    "{id}: an embedder embeds texts for relevance=\"embedding\", not for relevance=\"{}\"",
                    self.relevance.name()
                ));
            }
            if metric == RankedMetric::HybridLogRank && standard {
                if !(0.0..=1.0).contains(&self.alpha) {
                    return Err(format!("{id}: alpha must be in [0, 1], got {}", self.alpha));
                }
                if !(self.gamma > 0.0 && self.gamma.is_finite()) {
                    return Err(format!("{id}: gamma must be > 0, got {}", self.gamma));
                }
            }
            Ok(())
        };
        checked().map_err(crate::Error::options)
    }

    /// The cutoff for `metric` in standard mode (`None`: the whole list). Ragas scores the
    /// whole list unless `k` is given.
    pub fn cutoff(&self, metric: RankedMetric) -> Option<usize> {
        match self.k {
            Some(k) => Some(k.max(0) as usize),
            None if self.compat == RetrievalCompat::Ragas => None,
            None => metric.default_k(),
        }
    }
}

/// The settings behind a ranked-list number.
///
/// ```
/// use polars_rag::metrics::retrieval::{signature, RankedMetric, RetrievalOptions};
/// let s = signature(RankedMetric::NdcgAtK, &RetrievalOptions::default());
/// assert_eq!(s, "k:10|rel:auto|rank:order|gain:linear|version:trec_eval-9.0.8");
/// ```
pub fn signature(metric: RankedMetric, options: &RetrievalOptions) -> String {
    let k = match options.compat {
        RetrievalCompat::Datapizza => options.k.map_or("all".into(), |k| k.to_string()),
        RetrievalCompat::Standard | RetrievalCompat::Ragas => options
            .cutoff(metric)
            .map_or("all".into(), |k| k.to_string()),
    };
    let mut sig = format!("k:{k}|rel:{}", options.relevance.name());
    match options.relevance {
        Relevance::Span => sig.push_str(&format!(
            "|overlap:{}c,{}",
            options.min_overlap, options.min_overlap_fraction
        )),
        Relevance::Embedding => {
            sig.push_str(&format!("|cos:{}", options.similarity_threshold));
            // Texts embedded by the library: the model is part of what the number means.
            if let Some(embedder) = &options.embedder {
                sig.push_str(&format!(
                    "|emb:[{}]",
                    crate::engines::embed::signature_of(embedder)
                ));
            }
        }
        Relevance::Similarity => sig.push_str(&format!(
            "|sim:{}:{}",
            options.string_distance.name(),
            options.string_similarity_threshold
        )),
        _ => {}
    }
    let rank = match options.rank_by {
        RankBy::Order => "order",
        RankBy::Score => "score",
        RankBy::Trec => "trec",
    };
    sig.push_str(&format!("|rank:{rank}"));
    if metric == RankedMetric::HybridLogRank {
        sig.push_str(&format!("|alpha:{}|gamma:{}", options.alpha, options.gamma));
    }
    if let Some(level) = options.relevance_level {
        sig.push_str(&format!("|level:{level}"));
    }
    if metric == RankedMetric::NdcgAtK {
        sig.push_str("|gain:linear");
    }
    let version = match (options.compat, metric) {
        (RetrievalCompat::Datapizza, _) => "datapizza-metrics.py-222bb6e",
        (RetrievalCompat::Ragas, _) => "ragas-0.4.3",
        (_, RankedMetric::HybridLogRank) => "polars-rag",
        _ => "trec_eval-9.0.8",
    };
    sig.push_str(&format!("|version:{version}"));
    sig
}

/// A character span of a source document: `start..end` in Unicode code points, end exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span<'a> {
    /// The document.
    pub file: &'a str,
    /// First code point.
    pub start: u64,
    /// One past the last code point.
    pub end: u64,
}

impl Span<'_> {
    /// Length in code points.
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// Whether the span is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Code points shared with `other` (0 in another file).
    pub fn overlap(&self, other: &Span<'_>) -> u64 {
        if self.file != other.file {
            return 0;
        }
        self.end
            .min(other.end)
            .saturating_sub(self.start.max(other.start))
    }
}

/// For each retrieved item in rank order, the ground-truth items it matches; and the grade of
/// every ground-truth item. Built once per row by one of the `judge_*` methods and reused (it
/// keeps its buffers).
#[derive(Clone, Debug, Default)]
pub struct Judgments {
    /// `matches[offsets[i]..offsets[i + 1]]`: the ground-truth items retrieved item `i` matches.
    offsets: Vec<usize>,
    matches: Vec<u32>,
    grades: Vec<f64>,
    // Scratch for scoring and judging.
    seen: Vec<bool>,
    key_index: HashMap<u64, Vec<u32>>,
}

/// Ground truth this long or longer is looked up by hash rather than scanned.
const HASH_FROM: usize = 24;

fn hash_of<T: std::hash::Hash + ?Sized>(value: &T) -> u64 {
    use std::hash::Hasher;
    // A fixed hasher: the index is rebuilt per row, only speed matters.
    let mut h = FixedHasher::default();
    value.hash(&mut h);
    h.finish()
}

/// The index of `key` among the `distinct` keys: by hash bucket for long ground truth, by scan
/// for short.
fn find_key(
    index: &HashMap<u64, Vec<u32>>,
    distinct: &[&str],
    use_hash: bool,
    key: &str,
) -> Option<u32> {
    if use_hash {
        index
            .get(&hash_of(key))
            .and_then(|c| c.iter().copied().find(|&d| distinct[d as usize] == key))
    } else {
        distinct.iter().position(|d| *d == key).map(|d| d as u32)
    }
}

/// FNV-1a: fast for short keys, deterministic.
#[derive(Default)]
struct FixedHasher(u64);

impl std::hash::Hasher for FixedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

impl Judgments {
    fn reset(&mut self) {
        self.offsets.clear();
        self.offsets.push(0);
        self.matches.clear();
        self.grades.clear();
    }

    fn close_item(&mut self) {
        self.offsets.push(self.matches.len());
    }

    /// Number of retrieved items judged.
    pub fn retrieved_len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of ground-truth items.
    pub fn ground_truth_len(&self) -> usize {
        self.grades.len()
    }

    /// The ground-truth items that retrieved item `i` matches.
    pub fn item(&self, i: usize) -> &[u32] {
        &self.matches[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The grade of every ground-truth item.
    pub fn grades(&self) -> &[f64] {
        &self.grades
    }

    /// Sets graded relevance (one grade per ground-truth item, in the order they were given).
    /// Grades ≤ 0 make an item non-relevant, as relevance level 0 does in trec_eval.
    ///
    /// With [`Judgments::judge_keys`], duplicate ground-truth keys are merged into their first
    /// occurrence, keeping the highest grade; pass grades here in the original order.
    pub fn set_grades(&mut self, grades: &[f64]) {
        if grades.len() == self.grades.len() {
            self.grades.copy_from_slice(grades);
        }
    }

    /// Exact-key judging (texts or ids): item `i` matches the ground-truth item with an equal
    /// key. Duplicate ground-truth keys count once; a retrieved key equal to an earlier
    /// retrieved key matches nothing.
    pub fn judge_keys<K: AsRef<str>>(&mut self, retrieved: &[K], ground_truth: &[K]) {
        self.judge_keys_graded(retrieved, ground_truth, None);
    }

    /// [`Judgments::judge_keys`] with a grade per ground-truth item (duplicates keep the highest).
    pub fn judge_keys_graded<K: AsRef<str>>(
        &mut self,
        retrieved: &[K],
        ground_truth: &[K],
        grades: Option<&[f64]>,
    ) {
        self.reset();
        // The distinct ground-truth keys; duplicates fold into their first occurrence.
        let mut distinct: Vec<&str> = Vec::with_capacity(ground_truth.len());
        let use_hash = ground_truth.len() >= HASH_FROM;
        self.key_index.clear();
        for (j, key) in ground_truth.iter().enumerate() {
            let key = key.as_ref();
            let grade = grades.and_then(|g| g.get(j).copied()).unwrap_or(1.0);
            let found = find_key(&self.key_index, &distinct, use_hash, key);
            match found {
                Some(d) => {
                    let g = &mut self.grades[d as usize];
                    *g = g.max(grade);
                }
                None => {
                    if use_hash {
                        self.key_index
                            .entry(hash_of(key))
                            .or_default()
                            .push(distinct.len() as u32);
                    }
                    distinct.push(key);
                    self.grades.push(grade);
                }
            }
        }
        self.seen.clear();
        self.seen.resize(distinct.len(), false);
        for key in retrieved {
            let key = key.as_ref();
            let found = find_key(&self.key_index, &distinct, use_hash, key);
            // An exact key matches one distinct item, so "already matched" means "a duplicate
            // of an earlier retrieved item".
            if let Some(d) = found
                && !self.seen[d as usize]
            {
                self.seen[d as usize] = true;
                self.matches.push(d);
            }
            self.close_item();
        }
    }

    /// Span judging: item `i` matches every golden span it overlaps by at least `min_overlap`
    /// code points and at least `min_fraction` of the golden span's length (an empty golden
    /// span is matched by any item of its file that contains its position). Identical golden
    /// spans count once; a retrieved span identical to an earlier one matches nothing.
    pub fn judge_spans(
        &mut self,
        retrieved: &[Span<'_>],
        golden: &[Span<'_>],
        min_overlap: u64,
        min_fraction: f64,
    ) {
        self.reset();
        let mut distinct: Vec<Span<'_>> = Vec::with_capacity(golden.len());
        for g in golden {
            if !distinct.contains(g) {
                distinct.push(*g);
                self.grades.push(1.0);
            }
        }
        for (i, r) in retrieved.iter().enumerate() {
            let duplicate = retrieved[..i].contains(r);
            if !duplicate {
                for (j, g) in distinct.iter().enumerate() {
                    let overlap = r.overlap(g);
                    let hit = if g.is_empty() {
                        g.file == r.file && r.start <= g.start && g.start < r.end.max(r.start + 1)
                    } else {
                        overlap >= min_overlap.max(1)
                            && overlap as f64 >= min_fraction * g.len() as f64
                    };
                    if hit {
                        self.matches.push(j as u32);
                    }
                }
            }
            self.close_item();
        }
    }

    /// Embedding judging: item `i` matches every ground-truth embedding whose cosine similarity
    /// with it is ≥ `threshold` (a zero vector has cosine 0 with everything; an empty slice is a
    /// missing vector and matches nothing). Nothing is merged:
    /// equal embeddings may be distinct passages.
    pub fn judge_embeddings(
        &mut self,
        retrieved: &[&[f64]],
        ground_truth: &[&[f64]],
        threshold: f64,
    ) {
        self.reset();
        self.grades.resize(ground_truth.len(), 1.0);
        let gt_norms: Vec<f64> = ground_truth.iter().map(|g| norm(g)).collect();
        for r in retrieved {
            // An empty slice stands for a missing vector: it keeps its rank and matches nothing.
            if r.is_empty() {
                self.close_item();
                continue;
            }
            let rn = norm(r);
            for (j, g) in ground_truth.iter().enumerate() {
                if cosine_with_norms(r, rn, g, gt_norms[j]) >= threshold {
                    self.matches.push(j as u32);
                }
            }
            self.close_item();
        }
    }
}

impl Judgments {
    /// String-similarity judging: item `i` matches every ground-truth text whose similarity with
    /// it (`distance`, as `string_similarity`) is ≥ `threshold`. Nothing is merged, as with
    /// embeddings.
    pub fn judge_strings<K: AsRef<str>>(
        &mut self,
        retrieved: &[K],
        ground_truth: &[K],
        distance: StringDistance,
        threshold: f64,
    ) {
        self.reset();
        self.grades.resize(ground_truth.len(), 1.0);
        let mut scratch = crate::metrics::similarity::Scratch::default();
        for r in retrieved {
            for (j, g) in ground_truth.iter().enumerate() {
                if scratch.similarity(g.as_ref(), r.as_ref(), distance) >= threshold {
                    self.matches.push(j as u32);
                }
            }
            self.close_item();
        }
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Cosine similarity computed as scikit-learn's `cosine_similarity` does: each vector divided by
/// its norm, then the dot product (so a similarity of exactly 0.8 stays 0.8); 0 for a zero vector.
///
/// ```
/// use polars_rag::metrics::retrieval::cosine;
/// assert_eq!(cosine(&[0.8, 0.6], &[1.0, 0.0]), 0.8);
/// assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
/// ```
pub fn cosine(a: &[f64], b: &[f64]) -> f64 {
    cosine_with_norms(a, norm(a), b, norm(b))
}

fn cosine_with_norms(a: &[f64], an: f64, b: &[f64], bn: f64) -> f64 {
    // scikit-learn's normalize leaves zero rows as zeros.
    let an = if an == 0.0 { 1.0 } else { an };
    let bn = if bn == 0.0 { 1.0 } else { bn };
    a.iter().zip(b).map(|(x, y)| (x / an) * (y / bn)).sum()
}

/// Options of [`score`] beyond the cutoff.
#[derive(Clone, Copy, Debug)]
pub struct ScoreParams {
    /// `hybrid_log_rank`: weight of recall.
    pub alpha: f64,
    /// `hybrid_log_rank`: log-rank steepness.
    pub gamma: f64,
    /// The least relevant grade (`None`: above 0).
    pub relevance_level: Option<f64>,
}

impl ScoreParams {
    /// Whether a ground-truth item of grade `grade` is relevant.
    fn relevant(&self, grade: f64) -> bool {
        grade > 0.0 && self.relevance_level.is_none_or(|level| grade >= level)
    }
}

impl Default for ScoreParams {
    fn default() -> Self {
        ScoreParams {
            alpha: 0.5,
            gamma: 1.0,
            relevance_level: None,
        }
    }
}

impl From<&RetrievalOptions> for ScoreParams {
    fn from(o: &RetrievalOptions) -> Self {
        ScoreParams {
            alpha: o.alpha,
            gamma: o.gamma,
            relevance_level: o.relevance_level,
        }
    }
}

/// The log-rank score of a hit at 1-based `rank` among `n` items:
/// `1 − ln(1 + γ(rank − 1)) / ln(1 + γ(n − 1))`; 1 when `n` is 1. When `γ(n − 1)` is so small
/// that `1 + γ(n − 1)` rounds to 1 (the formula would give 0/0), the score is the formula's limit
/// for small `γ`, computed with `ln_1p`: `1 − (rank − 1)/(n − 1)` in the limit.
///
/// ```
/// use polars_rag::metrics::retrieval::log_rank_score;
/// assert_eq!(log_rank_score(2, 4, 1.0), 0.5);
/// assert_eq!(log_rank_score(1, 1, 1.0), 1.0);
/// assert!((log_rank_score(2, 3, 1e-300) - 0.5).abs() < 1e-12);
/// assert!((0.0..=1.0).contains(&log_rank_score(2, 3, 1e308)));
/// ```
pub fn log_rank_score(rank: usize, n: usize, gamma: f64) -> f64 {
    if n <= 1 {
        return 1.0;
    }
    let denominator = (1.0 + gamma * (n as f64 - 1.0)).ln();
    // datapizza's formula as written where it is defined (bit for bit); where it is not (0/0
    // for a vanishing γ, ∞/∞ for a huge one), the same quantity computed without the rounding.
    if denominator == 0.0 {
        return 1.0 - (gamma * (rank as f64 - 1.0)).ln_1p() / (gamma * (n as f64 - 1.0)).ln_1p();
    }
    if denominator.is_infinite() {
        // ln(1 + γx) = ln γ + ln(1/γ + x)
        let log = |x: f64| gamma.ln() + (1.0 / gamma + x).ln();
        let numerator = if rank <= 1 {
            0.0
        } else {
            log(rank as f64 - 1.0)
        };
        return 1.0 - numerator / log(n as f64 - 1.0);
    }
    1.0 - (1.0 + gamma * (rank as f64 - 1.0)).ln() / denominator
}

/// One ranked-list metric of one query from its judgments, over the first `k` ranks (`None`:
/// all). `None` when the query has no ground truth at all; 0 when its ground truth holds nothing
/// relevant, as trec_eval scores a judged query without relevant documents.
///
/// ```
/// use polars_rag::metrics::retrieval::{score, Judgments, RankedMetric, ScoreParams};
/// let mut j = Judgments::default();
/// j.judge_keys_graded(&["a", "b"], &["a", "c"], Some(&[1.0, 2.0]));
/// let level_2 = ScoreParams { relevance_level: Some(2.0), ..Default::default() };
/// assert_eq!(score(RankedMetric::Mrr, &j, None, &Default::default()), Some(1.0));
/// assert_eq!(score(RankedMetric::Mrr, &j, None, &level_2), Some(0.0));
/// j.judge_keys::<&str>(&["a"], &[]);
/// assert_eq!(score(RankedMetric::Mrr, &j, None, &Default::default()), None);
/// ```
pub fn score(
    metric: RankedMetric,
    judgments: &Judgments,
    k: Option<usize>,
    params: &ScoreParams,
) -> Option<f64> {
    let grades = judgments.grades();
    if grades.is_empty() {
        return None;
    }
    let relevant = |g: f64| params.relevant(g);
    let relevant_total = grades.iter().filter(|&&g| relevant(g)).count();
    // trec_eval divides by the number of relevant documents only when there is one.
    let per_relevant = |x: f64| {
        if relevant_total == 0 {
            0.0
        } else {
            x / relevant_total as f64
        }
    };
    let n = judgments.retrieved_len();
    let depth = k.map_or(n, |k| k.min(n));
    let is_relevant = |i: usize| {
        judgments
            .item(i)
            .iter()
            .any(|&j| relevant(grades[j as usize]))
    };
    // First rank (0-based) that matches each ground-truth item, in one pass over the cut list.
    let mut first_rank = vec![usize::MAX; grades.len()];
    for i in 0..depth {
        for &j in judgments.item(i) {
            let slot = &mut first_rank[j as usize];
            if *slot == usize::MAX {
                *slot = i;
            }
        }
    }
    let first_rank = &first_rank;
    let first_matched_at = |i: usize| {
        judgments
            .item(i)
            .iter()
            .filter(move |&&j| first_rank[j as usize] == i)
            .map(|&j| grades[j as usize])
    };
    // Whether rank `i` is where a relevant ground-truth item is first matched.
    let new_hit = |i: usize| first_matched_at(i).any(&relevant);
    // nDCG's gain at rank `i`: the highest grade above 0 first matched there.
    let new_hit_gain = |i: usize| first_matched_at(i).fold(0.0, f64::max);
    let found = first_rank
        .iter()
        .zip(grades)
        .filter(|&(&r, &g)| r != usize::MAX && relevant(g))
        .count();
    let recall = per_relevant(found as f64);
    let relevant_in = |upto: usize| (0..upto.min(depth)).filter(|&i| is_relevant(i)).count();
    Some(match metric {
        RankedMetric::PrecisionAtK => {
            let denom = k.unwrap_or(n);
            if denom == 0 {
                0.0
            } else {
                relevant_in(depth) as f64 / denom as f64
            }
        }
        RankedMetric::RecallAtK => recall,
        RankedMetric::F1AtK => {
            let denom = k.unwrap_or(n);
            let precision = if denom == 0 {
                0.0
            } else {
                relevant_in(depth) as f64 / denom as f64
            };
            if precision + recall == 0.0 {
                0.0
            } else {
                2.0 * precision * recall / (precision + recall)
            }
        }
        RankedMetric::HitRateAtK => f64::from(u8::from(relevant_in(depth) > 0)),
        RankedMetric::Mrr => (0..depth)
            .find(|&i| is_relevant(i))
            .map_or(0.0, |i| 1.0 / (i + 1) as f64),
        RankedMetric::AveragePrecision => {
            let mut hits = 0usize;
            let mut sum = 0.0;
            for i in 0..depth {
                if new_hit(i) {
                    hits += 1;
                    sum += hits as f64 / (i + 1) as f64;
                }
            }
            per_relevant(sum)
        }
        RankedMetric::RPrecision => {
            let r = relevant_total.min(depth);
            let hits = (0..r).filter(|&i| new_hit(i)).count();
            per_relevant(hits as f64)
        }
        RankedMetric::NdcgAtK => {
            let mut dcg = 0.0;
            for i in 0..depth {
                let gain = new_hit_gain(i);
                if gain > 0.0 {
                    dcg += gain / ((i + 2) as f64).log2();
                }
            }
            let mut ideal: Vec<f64> = grades.iter().copied().filter(|&g| g > 0.0).collect();
            ideal.sort_by(|a, b| b.total_cmp(a));
            let cut = k.unwrap_or(usize::MAX);
            let idcg: f64 = ideal
                .iter()
                .take(cut)
                .enumerate()
                .map(|(i, g)| g / ((i + 2) as f64).log2())
                .sum();
            if idcg == 0.0 {
                0.0
            } else {
                dcg / idcg
            }
        }
        RankedMetric::HybridLogRank => {
            // The rank quality of each relevant ground-truth item: its first rank's log-rank
            // score among all `n` items retrieved (0 when not found), averaged over the relevant
            // ground truth; the cutoff limits which ranks count.
            let rank_quality = per_relevant(
                first_rank
                    .iter()
                    .zip(grades)
                    .filter(|&(&r, &g)| r != usize::MAX && relevant(g))
                    .map(|(&r, _)| log_rank_score(r + 1, n, params.gamma))
                    .sum::<f64>(),
            );
            params.alpha * recall + (1.0 - params.alpha) * rank_quality
        }
    })
}

/// The order to visit retrieved items in, by `rule`: item indices, best first. `scores` and
/// `names` (ids or texts, for trec_eval's tie-break) are per item in list order.
///
/// ```
/// use polars_rag::metrics::retrieval::{rank_order, RankBy};
/// let scores = [Some(0.5), Some(0.9), Some(0.5), None];
/// assert_eq!(rank_order(RankBy::Score, &scores, &["a", "b", "c", "d"]), vec![1, 0, 2, 3]);
/// assert_eq!(rank_order(RankBy::Trec, &scores, &["a", "b", "c", "d"]), vec![1, 2, 0, 3]);
/// // 0.0 and -0.0 are the same score: the tie goes to the larger id.
/// assert_eq!(rank_order(RankBy::Trec, &[Some(0.0), Some(-0.0)], &["a", "b"]), vec![1, 0]);
/// ```
pub fn rank_order(rule: RankBy, scores: &[Option<f64>], names: &[&str]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    let by_score = |a: &usize, b: &usize| {
        let (sa, sb) = (scores[*a], scores[*b]);
        match (sa, sb) {
            // partial_cmp: 0.0 and -0.0 tie, as in trec_eval (NaN ties with everything).
            (Some(x), Some(y)) => y.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Equal),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    };
    match rule {
        RankBy::Order => {}
        RankBy::Score => order.sort_by(by_score),
        RankBy::Trec => order.sort_by(|a, b| {
            by_score(a, b).then_with(|| {
                let na = names.get(*a).copied().unwrap_or("");
                let nb = names.get(*b).copied().unwrap_or("");
                nb.as_bytes().cmp(na.as_bytes())
            })
        }),
    }
    order
}

impl crate::metrics::Section for RetrievalOptions {
    fn signature(&self, id: &str) -> String {
        match RankedMetric::from_id(id) {
            Some(metric) => signature(metric, self),
            None => super::plain_signature(id),
        }
    }

    fn embed_settings(&mut self) -> Option<&mut crate::engines::embed::EmbedSettings> {
        RetrievalOptions::embedder_mut(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(r: &[&str], g: &[&str]) -> Judgments {
        let mut j = Judgments::default();
        j.judge_keys(r, g);
        j
    }

    fn s(m: RankedMetric, j: &Judgments, k: Option<usize>) -> Option<f64> {
        score(m, j, k, &ScoreParams::default())
    }

    #[test]
    fn trec_definitions_on_a_simple_list() {
        // Relevant at ranks 1 and 3 of 4; three relevant documents.
        let j = keys(&["a", "b", "c", "d"], &["a", "c", "e"]);
        assert_eq!(s(RankedMetric::PrecisionAtK, &j, Some(10)), Some(0.2));
        assert_eq!(s(RankedMetric::RecallAtK, &j, Some(2)), Some(1.0 / 3.0));
        assert_eq!(
            s(RankedMetric::AveragePrecision, &j, None),
            Some((1.0 + 2.0 / 3.0) / 3.0)
        );
        assert_eq!(s(RankedMetric::RPrecision, &j, None), Some(2.0 / 3.0));
        let dcg = 1.0 + 1.0 / 4f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2() + 1.0 / 4f64.log2();
        assert_eq!(s(RankedMetric::NdcgAtK, &j, Some(10)), Some(dcg / idcg));
        assert_eq!(s(RankedMetric::HitRateAtK, &j, Some(1)), Some(1.0));
        let j = keys(&["x", "a"], &["a"]);
        assert_eq!(s(RankedMetric::Mrr, &j, None), Some(0.5));
        assert_eq!(s(RankedMetric::Mrr, &j, Some(1)), Some(0.0));
    }

    #[test]
    fn duplicates_never_lift_a_score_above_one() {
        let j = keys(&["a", "a", "a"], &["a"]);
        for m in RankedMetric::ALL {
            let v = s(m, &j, Some(3)).unwrap();
            assert!((0.0..=1.0).contains(&v), "{m:?} {v}");
        }
        assert_eq!(s(RankedMetric::PrecisionAtK, &j, Some(3)), Some(1.0 / 3.0));
        // Two chunks overlapping one golden span: both relevant, the span credited once.
        let golden = [Span {
            file: "f",
            start: 0,
            end: 100,
        }];
        let chunks = [
            Span {
                file: "f",
                start: 0,
                end: 60,
            },
            Span {
                file: "f",
                start: 50,
                end: 120,
            },
        ];
        let mut j = Judgments::default();
        j.judge_spans(&chunks, &golden, 1, 0.0);
        assert_eq!(s(RankedMetric::PrecisionAtK, &j, Some(2)), Some(1.0));
        assert_eq!(s(RankedMetric::AveragePrecision, &j, None), Some(1.0));
        assert_eq!(s(RankedMetric::NdcgAtK, &j, Some(2)), Some(1.0));
    }

    #[test]
    fn no_relevant_ground_truth_is_none() {
        let j = keys(&["a"], &[]);
        assert_eq!(s(RankedMetric::PrecisionAtK, &j, Some(1)), None);
        let j = keys(&[], &["a"]);
        assert_eq!(s(RankedMetric::RecallAtK, &j, Some(1)), Some(0.0));
        assert_eq!(s(RankedMetric::PrecisionAtK, &j, Some(1)), Some(0.0));
    }

    #[test]
    fn graded_ndcg_uses_linear_gains() {
        let mut j = Judgments::default();
        j.judge_keys_graded(&["b", "a"], &["a", "b"], Some(&[2.0, 1.0]));
        let dcg = 1.0 + 2.0 / 3f64.log2();
        let idcg = 2.0 + 1.0 / 3f64.log2();
        assert_eq!(s(RankedMetric::NdcgAtK, &j, Some(10)), Some(dcg / idcg));
        // Grade 0 is judged non-relevant.
        j.judge_keys_graded(&["b"], &["a", "b"], Some(&[1.0, 0.0]));
        assert_eq!(s(RankedMetric::PrecisionAtK, &j, Some(1)), Some(0.0));
    }

    #[test]
    fn judged_queries_without_relevant_items_score_zero_as_in_trec_eval() {
        let mut j = Judgments::default();
        j.judge_keys_graded(&["a", "b"], &["a", "c"], Some(&[0.0, 0.0]));
        for metric in RankedMetric::ALL {
            assert_eq!(s(metric, &j, Some(2)), Some(0.0), "{metric:?}");
        }
        // No judgments at all: no score.
        j.judge_keys::<&str>(&["a"], &[]);
        assert_eq!(s(RankedMetric::AveragePrecision, &j, None), None);
    }

    #[test]
    fn relevance_level_sets_the_least_relevant_grade_but_not_the_gains() {
        let mut j = Judgments::default();
        j.judge_keys_graded(&["a", "b", "x"], &["a", "b", "c"], Some(&[1.0, 2.0, 3.0]));
        let level = ScoreParams {
            relevance_level: Some(2.0),
            ..Default::default()
        };
        // Relevant at level 2: b and c; b is first found at rank 2.
        assert_eq!(score(RankedMetric::Mrr, &j, None, &level), Some(0.5));
        assert_eq!(
            score(RankedMetric::RecallAtK, &j, Some(3), &level),
            Some(0.5)
        );
        assert_eq!(
            score(RankedMetric::AveragePrecision, &j, None, &level),
            Some(0.25)
        );
        // nDCG's gains are the grades above 0, whatever the level (trec_eval's ndcg_cut).
        assert_eq!(
            score(RankedMetric::NdcgAtK, &j, Some(3), &level),
            s(RankedMetric::NdcgAtK, &j, Some(3))
        );
        let bad = RetrievalOptions {
            relevance_level: Some(0.0),
            ..Default::default()
        };
        assert!(bad.validate(RankedMetric::Mrr).is_err());
    }

    #[test]
    fn hashed_and_scanned_key_lookups_agree() {
        let gt: Vec<String> = (0..40).map(|i| format!("d{i}")).collect();
        let run: Vec<String> = (0..60).rev().map(|i| format!("d{}", i * 2 % 70)).collect();
        let mut hashed = Judgments::default();
        hashed.judge_keys(&run, &gt);
        let mut scanned = Judgments::default();
        for (i, r) in run.iter().enumerate() {
            let pos = gt.iter().position(|g| g == r);
            let dup = run[..i].contains(r);
            assert_eq!(
                hashed.item(i).first().map(|&j| j as usize),
                pos.filter(|_| !dup)
            );
        }
        scanned.judge_keys(&run[..5], &gt[..5]);
        assert_eq!(scanned.ground_truth_len(), 5);
    }

    #[test]
    fn embeddings_match_many_to_one() {
        let r: [&[f64]; 3] = [&[1.0, 0.1], &[1.0, -0.1], &[0.0, 1.0]];
        let g: [&[f64]; 2] = [&[1.0, 0.0], &[-1.0, 0.0]];
        let mut j = Judgments::default();
        j.judge_embeddings(&r, &g, 0.8);
        assert_eq!(s(RankedMetric::PrecisionAtK, &j, Some(3)), Some(2.0 / 3.0));
        assert_eq!(s(RankedMetric::RecallAtK, &j, Some(3)), Some(0.5));
    }
}
