//! [`MetricId`]: the name of every metric, as a type.

use std::fmt;
use std::str::FromStr;

use super::{MetricInfo, METRICS};

/// Every metric of the library. `match`es on it are exhaustive, so a metric added here and
/// forgotten by the table, the options or the columnar dispatch does not compile. Parsed from
/// and written as its snake_case id (`"rouge"`), which every face uses unchanged.
///
/// ```
/// use polars_rag::registry::MetricId;
/// let id: MetricId = "ndcg_at_k".parse().unwrap();
/// assert_eq!(id, MetricId::NdcgAtK);
/// assert_eq!(id.as_str(), "ndcg_at_k");
/// assert_eq!(MetricId::ALL.len(), polars_rag::registry::METRICS.len());
/// let err = "ndcg".parse::<MetricId>().unwrap_err();
/// assert!(err.to_string().contains("unknown metric 'ndcg'"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, strum::VariantArray)]
pub enum MetricId {
    /// `quoted_spans`: quoted spans of the answer found verbatim in its sources: matched, total, score
    QuotedSpans,
    /// `citation_alignment`: dataset citation alignment: Σ matched / Σ total quoted spans (0.0 when none)
    CitationAlignment,
    /// `bleu`: sentence BLEU in [0, 1] (13a tokens, exp smoothing, effective order)
    Bleu,
    /// `corpus_bleu`: corpus BLEU in [0, 1] over a column or group
    CorpusBleu,
    /// `chrf`: character n-gram F-score in [0, 1] (chrF; word_order=2 gives chrF++)
    Chrf,
    /// `corpus_chrf`: corpus chrF in [0, 1] over a column or group (statistics summed, then one F-score)
    CorpusChrf,
    /// `rouge`: ROUGE-1, ROUGE-2, ROUGE-L, ROUGE-Lsum precision / recall / F
    Rouge,
    /// `exact_match`: 1.0 when the answer equals a reference after lowercasing and collapsing whitespace (compat=ragas: raw equality)
    ExactMatch,
    /// `string_similarity`: 1 − normalised edit distance to the closest reference (levenshtein, hamming, jaro, jaro_winkler)
    StringSimilarity,
    /// `semantic_similarity`: cosine of the answer's and the closest reference's embeddings (1/0 with a threshold)
    SemanticSimilarity,
    /// `string_presence`: 1.0 when a reference occurs verbatim in the answer
    StringPresence,
    /// `keyword_coverage`: share of the reference's keywords (names, numbers, content words) found in the answer
    KeywordCoverage,
    /// `number_match`: share of the reference's numbers found in the answer, compared as numbers
    NumberMatch,
    /// `answer_completeness`: mean of the length ratio (capped at 1) and keyword coverage
    AnswerCompleteness,
    /// `citation_indicators`: min(citation phrases found / 3, 1): does the answer say where it comes from
    CitationIndicators,
    /// `checks`: weighted share of the question's declarative checks passed, and the names of those failed
    Checks,
    /// `precision_at_k`: relevant items in the top k / k
    PrecisionAtK,
    /// `recall_at_k`: relevant ground-truth items found in the top k / all relevant
    RecallAtK,
    /// `f1_at_k`: harmonic mean of precision_at_k and recall_at_k
    F1AtK,
    /// `hybrid_log_rank`: alpha * recall + (1 - alpha) * mean log-rank score of the ground truth
    HybridLogRank,
    /// `hit_rate_at_k`: 1 when a relevant item is in the top k
    HitRateAtK,
    /// `mrr`: reciprocal rank of the first relevant item
    Mrr,
    /// `average_precision`: mean of the precisions at each relevant item's rank (MAP per query)
    AveragePrecision,
    /// `ndcg_at_k`: normalised discounted cumulative gain at k (graded, linear gains)
    NdcgAtK,
    /// `r_precision`: precision at R, R = number of relevant items
    RPrecision,
    /// `span_precision`: retrieved characters inside golden spans / retrieved characters (merged, nothing counted twice)
    SpanPrecision,
    /// `span_recall`: golden characters retrieved / golden characters
    SpanRecall,
    /// `span_iou`: retrieved ∩ golden characters / retrieved ∪ golden characters
    SpanIou,
    /// `span_precision_omega`: precision the chunking allows: golden characters / characters of the chunks overlapping the golden spans (∪ golden)
    SpanPrecisionOmega,
    /// `citation_support`: LLM judge: is the claim fully, partially or not supported by its cited span; phrase verified, failure modes flagged
    CitationSupport,
    /// `citation_precision`: share of judged (claim, cited_span) pairs fully supported (partial support counted separately)
    CitationPrecision,
    /// `answer_match`: LLM judge: does the answer match the reference answer to the question (match, reasoning)
    AnswerMatch,
    /// `g_eval`: LLM rubric judge (G-Eval) on your criteria: an integer score mapped to [0, 1], probability-weighted when the server gives log-probabilities
    GEval,
    /// `faithfulness`: LLM judge: share of the answer's statements that its contexts support (statements, verdicts, reasons)
    Faithfulness,
    /// `answer_relevancy`: LLM judge + embeddings: mean cosine of questions the answer would answer with the question (0 when noncommittal)
    AnswerRelevancy,
    /// `context_precision`: LLM judge: average precision of the retrieved contexts judged useful for reaching the reference
    ContextPrecision,
    /// `context_utilization`: LLM judge: average precision of the retrieved contexts judged useful for the answer given (no reference)
    ContextUtilization,
    /// `context_recall`: LLM judge: share of the reference's statements attributable to the retrieved contexts
    ContextRecall,
    /// `ppi_mean`: the mean of a judged quantity from the judge's scores on every item and human labels on a few: prediction-powered estimate and confidence interval (PPI++)
    PpiMean,
    /// `relevance_grade`: LLM judge: how well a passage answers a question, graded 0-3 (TREC RAG track UMBRELA scale), for graded relevance judgements
    RelevanceGrade,
    /// `citation_recall_precision`: LLM judge as entailment checker: ALCE's citation recall (sentences their cited passages entail) and precision (citations needed)
    CitationRecallPrecision,
    /// `claim_checks`: LLM judge: RAGChecker's claim-level evaluation: claims of the answer and the reference extracted and checked against each other and each context, eleven scores and the verdicts
    ClaimChecks,
    /// `create_nuggets`: LLM judge: a question's nuggets (atomic facts a good answer contains), written from its reference answers or relevant passages and labelled vital or okay, to store in the golden table
    CreateNuggets,
    /// `nugget_assignment`: LLM judge: each nugget of a question assessed against an answer (support / partial_support / not_support), and the strict and partial vital and all nugget scores
    NuggetAssignment,
    /// `nugget_scores`: nugget evaluation of an answer from its nuggets' importance (vital / okay) and assessment (support / partial_support / not_support): strict and partial vital and all scores
    NuggetScores,
    /// `claim_check_scores`: RAGChecker's eleven claim-level scores from entailment verdicts: response and reference claims checked against each other and against each retrieved chunk
    ClaimCheckScores,
    /// `split_claims`: the atomic claims of an answer, by the judge or by rules (explode, then citation_support)
    SplitClaims,
    /// `locate_quotes`: where a quote is in its sources: file, offsets, BM25 and match ratios, context
    LocateQuotes,
    /// `extract_quotes`: the quoted spans of an answer, as quoted_spans extracts them
    ExtractQuotes,
    /// `embedding_cosine`: cosine similarity of two embedding columns (0.0 for a zero vector)
    EmbeddingCosine,
}

impl MetricId {
    /// Every metric, in catalogue order. Derived from the enum, so it cannot miss one.
    pub const ALL: &'static [MetricId] = <MetricId as strum::VariantArray>::VARIANTS;

    /// The metric's entry of the table.
    pub const fn info(self) -> &'static MetricInfo {
        &METRICS[self as usize]
    }

    /// The snake_case id: the Rust and Python function name, the CLI and TOML key.
    pub const fn as_str(self) -> &'static str {
        self.info().id
    }
}

impl fmt::Display for MetricId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MetricId {
    type Err = crate::Error;

    /// An unknown id is an error listing the known ones.
    fn from_str(id: &str) -> crate::Result<Self> {
        METRICS
            .iter()
            .find(|m| m.id == id)
            .map(|m| m.metric)
            .ok_or_else(|| {
                let known: Vec<&str> = METRICS.iter().map(|m| m.id).collect();
                crate::Error::new(
                    crate::ErrorKind::UnknownMetric,
                    format!("unknown metric '{id}'; known metrics: {}", known.join(", ")),
                )
            })
    }
}

impl serde::Serialize for MetricId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for MetricId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        id.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_round_trips_and_is_unique() {
        let mut seen = std::collections::HashSet::new();
        for &metric in MetricId::ALL {
            assert_eq!(metric.as_str().parse::<MetricId>().unwrap(), metric);
            assert!(seen.insert(metric.as_str()), "{metric} twice");
            // The id is the variant's name in snake_case.
            let camel: String = metric
                .as_str()
                .split('_')
                .map(|part| {
                    let mut chars = part.chars();
                    chars.next().map_or(String::new(), |c| {
                        c.to_ascii_uppercase().to_string() + chars.as_str()
                    })
                })
                .collect();
            assert_eq!(format!("{metric:?}"), camel);
        }
    }

    #[test]
    fn serde_uses_the_id() {
        let json = serde_json::to_string(&MetricId::CorpusBleu).unwrap();
        assert_eq!(json, "\"corpus_bleu\"");
        assert_eq!(
            serde_json::from_str::<MetricId>(&json).unwrap(),
            MetricId::CorpusBleu
        );
        assert!(serde_json::from_str::<MetricId>("\"corpus\"").is_err());
    }
}
