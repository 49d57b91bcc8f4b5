//! [`MetricOptions`]: the options sections of every metric, and what the table knows about
//! them, as exhaustive `match`es on [`MetricId`]: which section a metric reads, its signature,
//! its engines' settings.

use std::any::Any;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use super::{plain_signature, MetricId};
use crate::engines::embed::EmbedSettings;
use crate::engines::judge::JudgeSettings;
use crate::metrics::{locate, retrieval, spans};

/// The options of a metric that has none: only an empty set of keyword arguments is accepted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

/// Reads one options section from keyword arguments or a configuration section. The Python
/// plugin implements it over pickled keyword arguments (with errors naming the argument to
/// blame); [`MetricOptions::for_metric`] over any serde deserializer.
pub trait SectionReader {
    /// Reads a section of type `T`; the error says what is wrong with it.
    fn read<T: DeserializeOwned>(self) -> crate::Result<T>;
}

/// A [`SectionReader`] over a serde deserializer.
struct FromDeserializer<D>(D);

impl<'de, D: Deserializer<'de>> SectionReader for FromDeserializer<D> {
    fn read<T: DeserializeOwned>(self) -> crate::Result<T> {
        T::deserialize(self.0).map_err(|e| crate::Error::options(e.to_string()))
    }
}

/// The options of every metric, one section each (named as in the metric table), as the CLI's
/// TOML file and a scoring job carry them. Defaults live on the section types.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricOptions {
    /// `quoted_spans`.
    pub quoted_spans: crate::metrics::citation::QuotedSpansOptions,
    /// `bleu`.
    pub bleu: crate::metrics::bleu::BleuOptions,
    /// `corpus_bleu`.
    pub corpus_bleu: crate::metrics::bleu::CorpusBleuOptions,
    /// `chrf`.
    pub chrf: crate::metrics::chrf::ChrfOptions,
    /// `corpus_chrf`.
    pub corpus_chrf: crate::metrics::chrf::ChrfOptions,
    /// `rouge`.
    pub rouge: crate::metrics::rouge::RougeOptions,
    /// `exact_match`.
    pub exact_match: crate::metrics::similarity::ExactMatchOptions,
    /// `string_similarity`.
    pub string_similarity: crate::metrics::similarity::StringSimilarityOptions,
    /// `citation_indicators`.
    pub citation_indicators: crate::metrics::lexical::CitationIndicatorOptions,
    /// `precision_at_k`.
    pub precision_at_k: crate::metrics::retrieval::RetrievalOptions,
    /// `recall_at_k`.
    pub recall_at_k: crate::metrics::retrieval::RetrievalOptions,
    /// `f1_at_k`.
    pub f1_at_k: crate::metrics::retrieval::RetrievalOptions,
    /// `hybrid_log_rank`.
    pub hybrid_log_rank: crate::metrics::retrieval::RetrievalOptions,
    /// `hit_rate_at_k`.
    pub hit_rate_at_k: crate::metrics::retrieval::RetrievalOptions,
    /// `mrr`.
    pub mrr: crate::metrics::retrieval::RetrievalOptions,
    /// `average_precision`.
    pub average_precision: crate::metrics::retrieval::RetrievalOptions,
    /// `ndcg_at_k`.
    pub ndcg_at_k: crate::metrics::retrieval::RetrievalOptions,
    /// `r_precision`.
    pub r_precision: crate::metrics::retrieval::RetrievalOptions,
    /// `span_precision`.
    pub span_precision: crate::metrics::spans::SpanOptions,
    /// `span_recall`.
    pub span_recall: crate::metrics::spans::SpanOptions,
    /// `span_iou`.
    pub span_iou: crate::metrics::spans::SpanOptions,
    /// `span_precision_omega`.
    pub span_precision_omega: crate::metrics::spans::SpanOptions,
    /// `locate_quotes`.
    pub locate_quotes: crate::metrics::locate::LocateOptions,
    /// `citation_support`.
    pub citation_support: crate::metrics::judged::citation_support::CitationSupportOptions,
    /// `citation_precision`.
    pub citation_precision: crate::metrics::judged::citation_support::CitationSupportOptions,
    /// `answer_match`.
    pub answer_match: crate::metrics::judged::answer_match::AnswerMatchOptions,
    /// `split_claims`.
    pub split_claims: crate::metrics::judged::claims::SplitClaimsOptions,
    /// `semantic_similarity`.
    pub semantic_similarity: crate::metrics::semantic::SemanticSimilarityOptions,
    /// `g_eval`.
    pub g_eval: crate::metrics::judged::g_eval::GEvalOptions,
    /// `faithfulness`.
    pub faithfulness: crate::metrics::judged::rag::JudgedRagOptions,
    /// `answer_relevancy`.
    pub answer_relevancy: crate::metrics::judged::rag::AnswerRelevancyOptions,
    /// `context_precision`.
    pub context_precision: crate::metrics::judged::rag::JudgedRagOptions,
    /// `context_utilization`.
    pub context_utilization: crate::metrics::judged::rag::JudgedRagOptions,
    /// `context_recall`.
    pub context_recall: crate::metrics::judged::rag::JudgedRagOptions,
    /// `ppi_mean`.
    pub ppi_mean: crate::metrics::ppi::PpiOptions,
    /// `citation_recall_precision`.
    pub citation_recall_precision: crate::metrics::judged::citation_recall::CitationRecallOptions,
    /// `claim_checks`.
    pub claim_checks: crate::metrics::judged::claim_checks::ClaimChecksOptions,
    /// `create_nuggets`.
    pub create_nuggets: crate::metrics::judged::nuggets::CreateNuggetsOptions,
    /// `nugget_assignment`.
    pub nugget_assignment: crate::metrics::judged::nuggets::NuggetAssignmentOptions,
    /// `relevance_grade`.
    pub relevance_grade: crate::metrics::judged::relevance::RelevanceGradeOptions,
    /// `nugget_scores`.
    pub nugget_scores: crate::metrics::nuggets::NuggetOptions,
    /// `claim_check_scores`.
    pub claim_check_scores: crate::metrics::claim_checks::ClaimCheckOptions,
}

impl MetricOptions {
    /// Defaults everywhere, except the section `metric` reads, taken from `reader`.
    pub fn with_section(metric: MetricId, reader: impl SectionReader) -> crate::Result<Self> {
        use MetricId::*;
        let mut all = MetricOptions::default();
        let bad = |e: crate::Error| {
            crate::Error::options(format!("{metric}: invalid options: {}", e.message()))
        };
        match metric {
            QuotedSpans | CitationAlignment | ExtractQuotes => {
                all.quoted_spans = reader.read().map_err(bad)?
            }
            Bleu => all.bleu = reader.read().map_err(bad)?,
            CorpusBleu => all.corpus_bleu = reader.read().map_err(bad)?,
            Chrf => all.chrf = reader.read().map_err(bad)?,
            CorpusChrf => all.corpus_chrf = reader.read().map_err(bad)?,
            Rouge => all.rouge = reader.read().map_err(bad)?,
            ExactMatch => all.exact_match = reader.read().map_err(bad)?,
            StringSimilarity => all.string_similarity = reader.read().map_err(bad)?,
            SemanticSimilarity => all.semantic_similarity = reader.read().map_err(bad)?,
            StringPresence | KeywordCoverage | NumberMatch | AnswerCompleteness | Checks
            | EmbeddingCosine => {
                let _: NoOptions = reader.read().map_err(bad)?;
            }
            CitationIndicators => all.citation_indicators = reader.read().map_err(bad)?,
            PrecisionAtK => all.precision_at_k = reader.read().map_err(bad)?,
            RecallAtK => all.recall_at_k = reader.read().map_err(bad)?,
            F1AtK => all.f1_at_k = reader.read().map_err(bad)?,
            HybridLogRank => all.hybrid_log_rank = reader.read().map_err(bad)?,
            HitRateAtK => all.hit_rate_at_k = reader.read().map_err(bad)?,
            Mrr => all.mrr = reader.read().map_err(bad)?,
            AveragePrecision => all.average_precision = reader.read().map_err(bad)?,
            NdcgAtK => all.ndcg_at_k = reader.read().map_err(bad)?,
            RPrecision => all.r_precision = reader.read().map_err(bad)?,
            SpanPrecision => all.span_precision = reader.read().map_err(bad)?,
            SpanRecall => all.span_recall = reader.read().map_err(bad)?,
            SpanIou => all.span_iou = reader.read().map_err(bad)?,
            SpanPrecisionOmega => all.span_precision_omega = reader.read().map_err(bad)?,
            CitationSupport => all.citation_support = reader.read().map_err(bad)?,
            CitationPrecision => all.citation_precision = reader.read().map_err(bad)?,
            AnswerMatch => all.answer_match = reader.read().map_err(bad)?,
            GEval => all.g_eval = reader.read().map_err(bad)?,
            Faithfulness => all.faithfulness = reader.read().map_err(bad)?,
            AnswerRelevancy => all.answer_relevancy = reader.read().map_err(bad)?,
            ContextPrecision => all.context_precision = reader.read().map_err(bad)?,
            ContextUtilization => all.context_utilization = reader.read().map_err(bad)?,
            ContextRecall => all.context_recall = reader.read().map_err(bad)?,
            PpiMean => all.ppi_mean = reader.read().map_err(bad)?,
            NuggetScores => all.nugget_scores = reader.read().map_err(bad)?,
            RelevanceGrade => all.relevance_grade = reader.read().map_err(bad)?,
            ClaimChecks => all.claim_checks = reader.read().map_err(bad)?,
            CreateNuggets => all.create_nuggets = reader.read().map_err(bad)?,
            NuggetAssignment => all.nugget_assignment = reader.read().map_err(bad)?,
            CitationRecallPrecision => {
                all.citation_recall_precision = reader.read().map_err(bad)?
            }
            ClaimCheckScores => all.claim_check_scores = reader.read().map_err(bad)?,
            SplitClaims => all.split_claims = reader.read().map_err(bad)?,
            LocateQuotes => all.locate_quotes = reader.read().map_err(bad)?,
        }
        Ok(all)
    }

    /// Defaults everywhere, except the options of `metric` read from `options` (its keyword
    /// arguments, in whatever format the deserializer reads).
    ///
    /// ```
    /// use polars_rag::registry::{MetricId, MetricOptions};
    /// let o = MetricOptions::for_metric(MetricId::Rouge, serde_json::json!({"use_stemmer": true})).unwrap();
    /// assert!(o.rouge.use_stemmer);
    /// assert!(MetricOptions::for_metric(MetricId::Rouge, serde_json::json!({"stemmer": true})).is_err());
    /// ```
    pub fn for_metric<'de, D: Deserializer<'de>>(
        metric: MetricId,
        options: D,
    ) -> crate::Result<Self> {
        Self::with_section(metric, FromDeserializer(options))
    }

    /// The signature of `metric` under these options, in sacrebleu's style (`key:value|...`),
    /// ending with the version of the library or reference whose numbers it reproduces.
    ///
    /// ```
    /// use polars_rag::registry::{MetricId, MetricOptions};
    /// let sig = MetricOptions::default().signature(MetricId::Bleu);
    /// assert!(sig.contains("tok:13a") && sig.contains("smooth:exp") && sig.contains("eff:yes"));
    /// assert!(MetricOptions::default().signature(MetricId::CorpusBleu).contains("eff:no"));
    /// ```
    pub fn signature(&self, metric: MetricId) -> String {
        use MetricId::*;
        match metric {
            QuotedSpans => crate::metrics::citation::signature(&self.quoted_spans),
            CitationAlignment => crate::metrics::citation::signature(&self.quoted_spans),
            Bleu => crate::metrics::bleu::signature(&self.bleu),
            CorpusBleu => crate::metrics::bleu::signature(&self.corpus_bleu.0),
            Chrf => crate::metrics::chrf::signature(&self.chrf),
            CorpusChrf => crate::metrics::chrf::signature(&self.corpus_chrf),
            Rouge => crate::metrics::rouge::signature(&self.rouge),
            ExactMatch => crate::metrics::similarity::exact_match_signature(&self.exact_match),
            StringSimilarity => crate::metrics::similarity::signature(&self.string_similarity),
            SemanticSimilarity => crate::metrics::semantic::signature(&self.semantic_similarity),
            StringPresence => plain_signature("string_presence"),
            KeywordCoverage => plain_signature("keyword_coverage"),
            NumberMatch => plain_signature("number_match"),
            AnswerCompleteness => plain_signature("answer_completeness"),
            CitationIndicators => {
                crate::metrics::lexical::citation_indicators_signature(&self.citation_indicators)
            }
            Checks => plain_signature("checks"),
            PrecisionAtK => crate::metrics::retrieval::signature(
                crate::metrics::retrieval::RankedMetric::PrecisionAtK,
                &self.precision_at_k,
            ),
            RecallAtK => crate::metrics::retrieval::signature(
                crate::metrics::retrieval::RankedMetric::RecallAtK,
                &self.recall_at_k,
            ),
            F1AtK => crate::metrics::retrieval::signature(
                crate::metrics::retrieval::RankedMetric::F1AtK,
                &self.f1_at_k,
            ),
            HybridLogRank => crate::metrics::retrieval::signature(
                crate::metrics::retrieval::RankedMetric::HybridLogRank,
                &self.hybrid_log_rank,
            ),
            HitRateAtK => crate::metrics::retrieval::signature(
                crate::metrics::retrieval::RankedMetric::HitRateAtK,
                &self.hit_rate_at_k,
            ),
            Mrr => crate::metrics::retrieval::signature(
                crate::metrics::retrieval::RankedMetric::Mrr,
                &self.mrr,
            ),
            AveragePrecision => crate::metrics::retrieval::signature(
                crate::metrics::retrieval::RankedMetric::AveragePrecision,
                &self.average_precision,
            ),
            NdcgAtK => crate::metrics::retrieval::signature(
                crate::metrics::retrieval::RankedMetric::NdcgAtK,
                &self.ndcg_at_k,
            ),
            RPrecision => crate::metrics::retrieval::signature(
                crate::metrics::retrieval::RankedMetric::RPrecision,
                &self.r_precision,
            ),
            SpanPrecision => crate::metrics::spans::signature(&self.span_precision),
            SpanRecall => crate::metrics::spans::signature(&self.span_recall),
            SpanIou => crate::metrics::spans::signature(&self.span_iou),
            SpanPrecisionOmega => crate::metrics::spans::signature(&self.span_precision_omega),
            CitationSupport => {
                crate::metrics::judged::citation_support::signature(&self.citation_support)
            }
            CitationPrecision => {
                crate::metrics::judged::citation_support::signature(&self.citation_precision)
            }
            AnswerMatch => crate::metrics::judged::answer_match::signature(&self.answer_match),
            GEval => crate::metrics::judged::g_eval::signature(&self.g_eval),
            Faithfulness => crate::metrics::judged::rag::signature(
                crate::metrics::judged::rag::RagMetric::Faithfulness,
                &self.faithfulness,
            ),
            AnswerRelevancy => {
                crate::metrics::judged::rag::answer_relevancy_signature(&self.answer_relevancy)
            }
            ContextPrecision => crate::metrics::judged::rag::signature(
                crate::metrics::judged::rag::RagMetric::ContextPrecision,
                &self.context_precision,
            ),
            ContextUtilization => crate::metrics::judged::rag::signature(
                crate::metrics::judged::rag::RagMetric::ContextUtilization,
                &self.context_utilization,
            ),
            ContextRecall => crate::metrics::judged::rag::signature(
                crate::metrics::judged::rag::RagMetric::ContextRecall,
                &self.context_recall,
            ),
            PpiMean => crate::metrics::ppi::signature(&self.ppi_mean),
            NuggetScores => crate::metrics::nuggets::signature(&self.nugget_scores),
            RelevanceGrade => crate::metrics::judged::relevance::signature(&self.relevance_grade),
            ClaimChecks => crate::metrics::judged::claim_checks::signature(&self.claim_checks),
            CreateNuggets => {
                crate::metrics::judged::nuggets::create_signature(&self.create_nuggets)
            }
            NuggetAssignment => {
                crate::metrics::judged::nuggets::assignment_signature(&self.nugget_assignment)
            }
            CitationRecallPrecision => {
                crate::metrics::judged::citation_recall::signature(&self.citation_recall_precision)
            }
            ClaimCheckScores => crate::metrics::claim_checks::signature(&self.claim_check_scores),
            SplitClaims => crate::metrics::judged::claims::signature(&self.split_claims),
            LocateQuotes => crate::metrics::locate::signature(&self.locate_quotes),
            ExtractQuotes => crate::metrics::citation::signature(&self.quoted_spans),
            EmbeddingCosine => plain_signature("embedding_cosine"),
        }
    }

    /// The options section `metric` reads (`None` when it reads none).
    fn section_any(&self, metric: MetricId) -> Option<&dyn Any> {
        use MetricId::*;
        match metric {
            QuotedSpans | CitationAlignment | ExtractQuotes => Some(&self.quoted_spans),
            Bleu => Some(&self.bleu),
            CorpusBleu => Some(&self.corpus_bleu),
            Chrf => Some(&self.chrf),
            CorpusChrf => Some(&self.corpus_chrf),
            Rouge => Some(&self.rouge),
            ExactMatch => Some(&self.exact_match),
            StringSimilarity => Some(&self.string_similarity),
            SemanticSimilarity => Some(&self.semantic_similarity),
            StringPresence | KeywordCoverage | NumberMatch | AnswerCompleteness | Checks
            | EmbeddingCosine => None,
            CitationIndicators => Some(&self.citation_indicators),
            PrecisionAtK => Some(&self.precision_at_k),
            RecallAtK => Some(&self.recall_at_k),
            F1AtK => Some(&self.f1_at_k),
            HybridLogRank => Some(&self.hybrid_log_rank),
            HitRateAtK => Some(&self.hit_rate_at_k),
            Mrr => Some(&self.mrr),
            AveragePrecision => Some(&self.average_precision),
            NdcgAtK => Some(&self.ndcg_at_k),
            RPrecision => Some(&self.r_precision),
            SpanPrecision => Some(&self.span_precision),
            SpanRecall => Some(&self.span_recall),
            SpanIou => Some(&self.span_iou),
            SpanPrecisionOmega => Some(&self.span_precision_omega),
            CitationSupport => Some(&self.citation_support),
            CitationPrecision => Some(&self.citation_precision),
            AnswerMatch => Some(&self.answer_match),
            GEval => Some(&self.g_eval),
            Faithfulness => Some(&self.faithfulness),
            AnswerRelevancy => Some(&self.answer_relevancy),
            ContextPrecision => Some(&self.context_precision),
            ContextUtilization => Some(&self.context_utilization),
            ContextRecall => Some(&self.context_recall),
            PpiMean => Some(&self.ppi_mean),
            NuggetScores => Some(&self.nugget_scores),
            RelevanceGrade => Some(&self.relevance_grade),
            ClaimChecks => Some(&self.claim_checks),
            CreateNuggets => Some(&self.create_nuggets),
            NuggetAssignment => Some(&self.nugget_assignment),
            CitationRecallPrecision => Some(&self.citation_recall_precision),
            ClaimCheckScores => Some(&self.claim_check_scores),
            SplitClaims => Some(&self.split_claims),
            LocateQuotes => Some(&self.locate_quotes),
        }
    }

    /// Mutable [`MetricOptions::section_any`].
    fn section_any_mut(&mut self, metric: MetricId) -> Option<&mut dyn Any> {
        use MetricId::*;
        match metric {
            QuotedSpans | CitationAlignment | ExtractQuotes => Some(&mut self.quoted_spans),
            Bleu => Some(&mut self.bleu),
            CorpusBleu => Some(&mut self.corpus_bleu),
            Chrf => Some(&mut self.chrf),
            CorpusChrf => Some(&mut self.corpus_chrf),
            Rouge => Some(&mut self.rouge),
            ExactMatch => Some(&mut self.exact_match),
            StringSimilarity => Some(&mut self.string_similarity),
            SemanticSimilarity => Some(&mut self.semantic_similarity),
            StringPresence | KeywordCoverage | NumberMatch | AnswerCompleteness | Checks
            | EmbeddingCosine => None,
            CitationIndicators => Some(&mut self.citation_indicators),
            PrecisionAtK => Some(&mut self.precision_at_k),
            RecallAtK => Some(&mut self.recall_at_k),
            F1AtK => Some(&mut self.f1_at_k),
            HybridLogRank => Some(&mut self.hybrid_log_rank),
            HitRateAtK => Some(&mut self.hit_rate_at_k),
            Mrr => Some(&mut self.mrr),
            AveragePrecision => Some(&mut self.average_precision),
            NdcgAtK => Some(&mut self.ndcg_at_k),
            RPrecision => Some(&mut self.r_precision),
            SpanPrecision => Some(&mut self.span_precision),
            SpanRecall => Some(&mut self.span_recall),
            SpanIou => Some(&mut self.span_iou),
            SpanPrecisionOmega => Some(&mut self.span_precision_omega),
            CitationSupport => Some(&mut self.citation_support),
            CitationPrecision => Some(&mut self.citation_precision),
            AnswerMatch => Some(&mut self.answer_match),
            GEval => Some(&mut self.g_eval),
            Faithfulness => Some(&mut self.faithfulness),
            AnswerRelevancy => Some(&mut self.answer_relevancy),
            ContextPrecision => Some(&mut self.context_precision),
            ContextUtilization => Some(&mut self.context_utilization),
            ContextRecall => Some(&mut self.context_recall),
            PpiMean => Some(&mut self.ppi_mean),
            NuggetScores => Some(&mut self.nugget_scores),
            RelevanceGrade => Some(&mut self.relevance_grade),
            ClaimChecks => Some(&mut self.claim_checks),
            CreateNuggets => Some(&mut self.create_nuggets),
            NuggetAssignment => Some(&mut self.nugget_assignment),
            CitationRecallPrecision => Some(&mut self.citation_recall_precision),
            ClaimCheckScores => Some(&mut self.claim_check_scores),
            SplitClaims => Some(&mut self.split_claims),
            LocateQuotes => Some(&mut self.locate_quotes),
        }
    }

    /// The options section `metric` reads, if it reads one of type `T`.
    pub fn section<T: 'static>(&self, metric: MetricId) -> Option<&T> {
        self.section_any(metric)?.downcast_ref()
    }

    /// Mutable [`MetricOptions::section`].
    pub fn section_mut<T: 'static>(&mut self, metric: MetricId) -> Option<&mut T> {
        self.section_any_mut(metric)?.downcast_mut()
    }

    /// The judge settings of a judged metric (`None` for the others): the CLI's `[judge]`
    /// section and `--judge-*` flags are applied through this.
    pub fn judge_mut(&mut self, metric: MetricId) -> Option<&mut JudgeSettings> {
        use MetricId::*;
        match metric {
            CitationSupport => Some(&mut self.citation_support.judge),
            CitationPrecision => Some(&mut self.citation_precision.judge),
            AnswerMatch => Some(&mut self.answer_match.judge),
            GEval => Some(&mut self.g_eval.judge),
            Faithfulness => Some(&mut self.faithfulness.judge),
            AnswerRelevancy => Some(&mut self.answer_relevancy.judge),
            ContextPrecision => Some(&mut self.context_precision.judge),
            ContextUtilization => Some(&mut self.context_utilization.judge),
            ContextRecall => Some(&mut self.context_recall.judge),
            SplitClaims => Some(&mut self.split_claims.judge),
            RelevanceGrade => Some(&mut self.relevance_grade.judge),
            ClaimChecks => Some(&mut self.claim_checks.judge),
            CreateNuggets => Some(&mut self.create_nuggets.judge),
            NuggetAssignment => Some(&mut self.nugget_assignment.judge),
            CitationRecallPrecision => Some(&mut self.citation_recall_precision.judge),
            QuotedSpans | CitationAlignment | Bleu | CorpusBleu | Chrf | CorpusChrf | Rouge
            | ExactMatch | StringSimilarity | SemanticSimilarity | StringPresence
            | KeywordCoverage | NumberMatch | AnswerCompleteness | CitationIndicators | Checks
            | PrecisionAtK | RecallAtK | F1AtK | HybridLogRank | HitRateAtK | Mrr
            | AveragePrecision | NdcgAtK | RPrecision | SpanPrecision | SpanRecall | SpanIou
            | SpanPrecisionOmega | PpiMean | NuggetScores | ClaimCheckScores | LocateQuotes
            | ExtractQuotes | EmbeddingCosine => None,
        }
    }

    /// The embedding settings of a metric that embeds (`None` for the others): the CLI's
    /// `[embed]` section and `--embed-*` flags are applied through this. A ranked-list metric
    /// embeds when its relevance is `"embedding"` (its texts, unless the columns are vectors);
    /// `locate_quotes` embeds each quote and its span for `cosine` when given a model.
    ///
    /// ```
    /// use polars_rag::registry::{MetricId, MetricOptions};
    /// let mut o = MetricOptions::for_metric(MetricId::Mrr, serde_json::json!({"relevance": "embedding"})).unwrap();
    /// assert!(o.embedder_mut(MetricId::Mrr).is_some());
    /// assert!(o.embedder_mut(MetricId::NdcgAtK).is_none()); // judged by the column shapes
    /// assert!(o.embedder_mut(MetricId::SemanticSimilarity).is_some());
    /// ```
    pub fn embedder_mut(&mut self, metric: MetricId) -> Option<&mut EmbedSettings> {
        use MetricId::*;
        match metric {
            SemanticSimilarity => Some(&mut self.semantic_similarity.embedder),
            PrecisionAtK => self.precision_at_k.embedder_mut(),
            RecallAtK => self.recall_at_k.embedder_mut(),
            F1AtK => self.f1_at_k.embedder_mut(),
            HybridLogRank => self.hybrid_log_rank.embedder_mut(),
            HitRateAtK => self.hit_rate_at_k.embedder_mut(),
            Mrr => self.mrr.embedder_mut(),
            AveragePrecision => self.average_precision.embedder_mut(),
            NdcgAtK => self.ndcg_at_k.embedder_mut(),
            RPrecision => self.r_precision.embedder_mut(),
            AnswerRelevancy => Some(&mut self.answer_relevancy.embedder),
            LocateQuotes => Some(
                self.locate_quotes
                    .embedder
                    .get_or_insert_with(Default::default),
            ),
            QuotedSpans
            | CitationAlignment
            | Bleu
            | CorpusBleu
            | Chrf
            | CorpusChrf
            | Rouge
            | ExactMatch
            | StringSimilarity
            | StringPresence
            | KeywordCoverage
            | NumberMatch
            | AnswerCompleteness
            | CitationIndicators
            | Checks
            | SpanPrecision
            | SpanRecall
            | SpanIou
            | SpanPrecisionOmega
            | CitationSupport
            | CitationPrecision
            | AnswerMatch
            | GEval
            | Faithfulness
            | ContextPrecision
            | ContextUtilization
            | ContextRecall
            | PpiMean
            | RelevanceGrade
            | CitationRecallPrecision
            | ClaimChecks
            | CreateNuggets
            | NuggetAssignment
            | NuggetScores
            | ClaimCheckScores
            | SplitClaims
            | ExtractQuotes
            | EmbeddingCosine => None,
        }
    }

    /// The default keyword arguments of `metric`, written by `serializer` (a map from option
    /// name to value; empty for a metric without options). Python's functions take `None` for
    /// "the library's default" and show these.
    pub fn defaults_of<S: serde::Serializer>(
        metric: MetricId,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        use MetricId::*;
        let defaults = MetricOptions::default();
        match metric {
            QuotedSpans | CitationAlignment | ExtractQuotes => {
                defaults.quoted_spans.serialize(serializer)
            }
            Bleu => defaults.bleu.serialize(serializer),
            CorpusBleu => defaults.corpus_bleu.serialize(serializer),
            Chrf => defaults.chrf.serialize(serializer),
            CorpusChrf => defaults.corpus_chrf.serialize(serializer),
            Rouge => defaults.rouge.serialize(serializer),
            ExactMatch => defaults.exact_match.serialize(serializer),
            StringSimilarity => defaults.string_similarity.serialize(serializer),
            SemanticSimilarity => defaults.semantic_similarity.serialize(serializer),
            StringPresence | KeywordCoverage | NumberMatch | AnswerCompleteness | Checks
            | EmbeddingCosine => NoOptions {}.serialize(serializer),
            CitationIndicators => defaults.citation_indicators.serialize(serializer),
            PrecisionAtK => defaults.precision_at_k.serialize(serializer),
            RecallAtK => defaults.recall_at_k.serialize(serializer),
            F1AtK => defaults.f1_at_k.serialize(serializer),
            HybridLogRank => defaults.hybrid_log_rank.serialize(serializer),
            HitRateAtK => defaults.hit_rate_at_k.serialize(serializer),
            Mrr => defaults.mrr.serialize(serializer),
            AveragePrecision => defaults.average_precision.serialize(serializer),
            NdcgAtK => defaults.ndcg_at_k.serialize(serializer),
            RPrecision => defaults.r_precision.serialize(serializer),
            SpanPrecision => defaults.span_precision.serialize(serializer),
            SpanRecall => defaults.span_recall.serialize(serializer),
            SpanIou => defaults.span_iou.serialize(serializer),
            SpanPrecisionOmega => defaults.span_precision_omega.serialize(serializer),
            CitationSupport => defaults.citation_support.serialize(serializer),
            CitationPrecision => defaults.citation_precision.serialize(serializer),
            AnswerMatch => defaults.answer_match.serialize(serializer),
            GEval => defaults.g_eval.serialize(serializer),
            Faithfulness => defaults.faithfulness.serialize(serializer),
            AnswerRelevancy => defaults.answer_relevancy.serialize(serializer),
            ContextPrecision => defaults.context_precision.serialize(serializer),
            ContextUtilization => defaults.context_utilization.serialize(serializer),
            ContextRecall => defaults.context_recall.serialize(serializer),
            PpiMean => defaults.ppi_mean.serialize(serializer),
            NuggetScores => defaults.nugget_scores.serialize(serializer),
            RelevanceGrade => defaults.relevance_grade.serialize(serializer),
            ClaimChecks => defaults.claim_checks.serialize(serializer),
            CreateNuggets => defaults.create_nuggets.serialize(serializer),
            NuggetAssignment => defaults.nugget_assignment.serialize(serializer),
            CitationRecallPrecision => defaults.citation_recall_precision.serialize(serializer),
            ClaimCheckScores => defaults.claim_check_scores.serialize(serializer),
            SplitClaims => defaults.split_claims.serialize(serializer),
            LocateQuotes => defaults.locate_quotes.serialize(serializer),
        }
    }

    /// The options of a ranked-list metric (`precision_at_k`, ..., `r_precision`).
    pub fn retrieval(&self, metric: MetricId) -> Option<&retrieval::RetrievalOptions> {
        self.section(metric)
    }

    /// Mutable [`MetricOptions::retrieval`].
    pub fn retrieval_mut(&mut self, metric: MetricId) -> Option<&mut retrieval::RetrievalOptions> {
        self.section_mut(metric)
    }

    /// The options of a span metric (`span_precision`, `span_recall`, `span_iou`,
    /// `span_precision_omega`).
    pub fn span(&self, metric: MetricId) -> Option<&spans::SpanOptions> {
        self.section(metric)
    }

    /// The options of quote localisation (`locate_quotes`).
    pub fn locate(&self, metric: MetricId) -> Option<&locate::LocateOptions> {
        self.section(metric)
    }

    /// What a metric still needs before it can run with these options, when it cannot run on
    /// defaults alone (`g_eval` has no criteria of its own): the job skips it, saying this.
    pub fn unconfigured(&self, metric: MetricId) -> Option<&'static str> {
        match metric {
            MetricId::GEval if self.g_eval.criteria.trim().is_empty() => {
                Some("criteria (a [g_eval] section with criteria = \"...\")")
            }
            _ => None,
        }
    }
}

/// Options that a family of sections shares, set for all of them at once: the command's `--k`
/// and `--relevance-level`, which every ranked-list metric reads.
///
/// ```
/// use polars_rag::registry::{MetricId, MetricOptions, SharedOptions};
/// let mut options = MetricOptions::default();
/// options.apply_shared(&SharedOptions { k: Some(5), ..SharedOptions::default() });
/// assert_eq!(options.ndcg_at_k.k, Some(5));
/// assert_eq!(options.mrr.k, Some(5));
/// assert_eq!(options.retrieval(MetricId::Rouge), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "job", derive(clap::Args))]
pub struct SharedOptions {
    /// Cutoff of every ranked metric (over the config's sections).
    #[cfg_attr(feature = "job", arg(long))]
    pub k: Option<i64>,
    /// Least grade of a relevant ground-truth item for every ranked metric (trec_eval's -l;
    /// default: any grade above 0).
    #[cfg_attr(feature = "job", arg(long))]
    pub relevance_level: Option<f64>,
}

impl MetricOptions {
    /// Sets the options `shared` gives in every section that reads them.
    pub fn apply_shared(&mut self, shared: &SharedOptions) {
        for &metric in MetricId::ALL {
            if let Some(ranked) = self.retrieval_mut(metric) {
                if let Some(k) = shared.k {
                    ranked.k = Some(k);
                }
                if let Some(level) = shared.relevance_level {
                    ranked.relevance_level = Some(level);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engines a table entry names and the settings its section carries agree.
    #[test]
    fn engine_settings_follow_the_table() {
        for &metric in MetricId::ALL {
            let mut options = MetricOptions::default();
            let engine = metric.info().engine;
            assert_eq!(
                options.judge_mut(metric).is_some(),
                engine.is_some_and(|e| e.judges()),
                "{metric}"
            );
            if engine.is_some_and(|e| e.embeds()) {
                assert!(options.embedder_mut(metric).is_some(), "{metric}");
            }
            assert_eq!(
                options.section_any(metric).is_some(),
                metric.info().section.is_some(),
                "{metric}"
            );
        }
    }
}
