//! Metric kernels: pure functions over borrowed text, each with a serde `Options` struct that the
//! Rust API, the Python plugin and the CLI configuration share.

pub mod bleu;
pub mod chrf;
pub mod citation;
pub mod lexical;
pub mod locate;
pub mod retrieval;
pub mod rouge;
pub mod similarity;
pub mod spans;
pub mod stats;

use serde::{Deserialize, Deserializer, Serialize};

/// The options of a metric that has none: only an empty set of keyword arguments is accepted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

/// The options of every metric family, one section each, as the CLI's TOML file and a scoring
/// job carry them.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricOptions {
    /// `quoted_spans` and `citation_alignment`.
    pub quoted_spans: citation::QuotedSpansOptions,
    /// `bleu`.
    pub bleu: bleu::BleuOptions,
    /// `corpus_bleu` (sacrebleu's corpus defaults: no effective order).
    pub corpus_bleu: bleu::CorpusBleuOptions,
    /// `chrf`.
    pub chrf: chrf::ChrfOptions,
    /// `rouge`.
    pub rouge: rouge::RougeOptions,
    /// `string_similarity`.
    pub string_similarity: similarity::StringSimilarityOptions,
    /// `citation_indicators`.
    pub citation_indicators: lexical::CitationIndicatorOptions,
    /// `precision_at_k`.
    pub precision_at_k: retrieval::RetrievalOptions,
    /// `recall_at_k`.
    pub recall_at_k: retrieval::RetrievalOptions,
    /// `f1_at_k`.
    pub f1_at_k: retrieval::RetrievalOptions,
    /// `hybrid_log_rank`.
    pub hybrid_log_rank: retrieval::RetrievalOptions,
    /// `hit_rate_at_k`.
    pub hit_rate_at_k: retrieval::RetrievalOptions,
    /// `mrr`.
    pub mrr: retrieval::RetrievalOptions,
    /// `average_precision`.
    pub average_precision: retrieval::RetrievalOptions,
    /// `ndcg_at_k`.
    pub ndcg_at_k: retrieval::RetrievalOptions,
    /// `r_precision`.
    pub r_precision: retrieval::RetrievalOptions,
    /// `span_precision`.
    pub span_precision: spans::SpanOptions,
    /// `span_recall`.
    pub span_recall: spans::SpanOptions,
    /// `span_iou`.
    pub span_iou: spans::SpanOptions,
    /// `locate_quotes` (the `located_quotes` column of `score --locate-quotes`).
    pub locate_quotes: locate::LocateOptions,
}

impl MetricOptions {
    /// Defaults everywhere, except the options of `metric` read from `options` (its keyword
    /// arguments, in whatever format the deserializer reads).
    ///
    /// ```
    /// use polars_rag::metrics::MetricOptions;
    /// let o = MetricOptions::for_metric("rouge", serde_json::json!({"use_stemmer": true})).unwrap();
    /// assert!(o.rouge.use_stemmer);
    /// assert!(MetricOptions::for_metric("rouge", serde_json::json!({"stemmer": true})).is_err());
    /// ```
    pub fn for_metric<'de, D: Deserializer<'de>>(metric: &str, options: D) -> Result<Self, String> {
        let mut all = MetricOptions::default();
        let bad = |e: D::Error| format!("{metric}: invalid options: {e}");
        match metric {
            "quoted_spans" | "citation_alignment" => {
                all.quoted_spans = Deserialize::deserialize(options).map_err(bad)?
            }
            "bleu" => all.bleu = Deserialize::deserialize(options).map_err(bad)?,
            "corpus_bleu" => all.corpus_bleu = Deserialize::deserialize(options).map_err(bad)?,
            "chrf" => all.chrf = Deserialize::deserialize(options).map_err(bad)?,
            "rouge" => all.rouge = Deserialize::deserialize(options).map_err(bad)?,
            "string_similarity" => {
                all.string_similarity = Deserialize::deserialize(options).map_err(bad)?
            }
            "citation_indicators" => {
                all.citation_indicators = Deserialize::deserialize(options).map_err(bad)?
            }
            _ if all.retrieval_mut(metric).is_some() => {
                let parsed = Deserialize::deserialize(options).map_err(bad)?;
                if let Some(slot) = all.retrieval_mut(metric) {
                    *slot = parsed;
                }
            }
            _ if all.span_mut(metric).is_some() => {
                let parsed = Deserialize::deserialize(options).map_err(bad)?;
                if let Some(slot) = all.span_mut(metric) {
                    *slot = parsed;
                }
            }
            _ if crate::registry::find(metric).is_some() => {
                let _: NoOptions = Deserialize::deserialize(options).map_err(bad)?;
            }
            _ => return Err(format!("unknown metric '{metric}'")),
        }
        Ok(all)
    }

    /// The signature of `metric` under these options, in sacrebleu's style (`key:value|...`),
    /// ending with the version of the library or reference whose numbers it reproduces; `None`
    /// for an unknown id.
    ///
    /// ```
    /// use polars_rag::metrics::MetricOptions;
    /// let sig = MetricOptions::default().signature("bleu").unwrap();
    /// assert!(sig.contains("tok:13a") && sig.contains("smooth:exp") && sig.contains("eff:yes"));
    /// assert!(MetricOptions::default().signature("corpus_bleu").unwrap().contains("eff:no"));
    /// ```
    pub fn signature(&self, metric: &str) -> Option<String> {
        let version = env!("CARGO_PKG_VERSION");
        Some(match metric {
            "quoted_spans" | "citation_alignment" => citation::signature(&self.quoted_spans),
            "bleu" => bleu::signature(&self.bleu),
            "corpus_bleu" => bleu::signature(&self.corpus_bleu.0),
            "chrf" => chrf::signature(&self.chrf),
            "rouge" => rouge::signature(&self.rouge),
            "string_similarity" => similarity::signature(&self.string_similarity),
            "citation_indicators" => {
                lexical::citation_indicators_signature(&self.citation_indicators)
            }
            _ if self.retrieval(metric).is_some() => retrieval::signature(
                retrieval::RankedMetric::from_id(metric)?,
                self.retrieval(metric)?,
            ),
            _ if self.span(metric).is_some() => spans::signature(self.span(metric)?),
            _ => {
                crate::registry::find(metric)?;
                format!("{metric}|version:polars-rag-{version}")
            }
        })
    }

    /// The options of a ranked-list metric (`precision_at_k`, ..., `r_precision`).
    pub fn retrieval(&self, metric: &str) -> Option<&retrieval::RetrievalOptions> {
        Some(match metric {
            "precision_at_k" => &self.precision_at_k,
            "recall_at_k" => &self.recall_at_k,
            "f1_at_k" => &self.f1_at_k,
            "hybrid_log_rank" => &self.hybrid_log_rank,
            "hit_rate_at_k" => &self.hit_rate_at_k,
            "mrr" => &self.mrr,
            "average_precision" => &self.average_precision,
            "ndcg_at_k" => &self.ndcg_at_k,
            "r_precision" => &self.r_precision,
            _ => return None,
        })
    }

    /// Mutable [`MetricOptions::retrieval`].
    pub fn retrieval_mut(&mut self, metric: &str) -> Option<&mut retrieval::RetrievalOptions> {
        Some(match metric {
            "precision_at_k" => &mut self.precision_at_k,
            "recall_at_k" => &mut self.recall_at_k,
            "f1_at_k" => &mut self.f1_at_k,
            "hybrid_log_rank" => &mut self.hybrid_log_rank,
            "hit_rate_at_k" => &mut self.hit_rate_at_k,
            "mrr" => &mut self.mrr,
            "average_precision" => &mut self.average_precision,
            "ndcg_at_k" => &mut self.ndcg_at_k,
            "r_precision" => &mut self.r_precision,
            _ => return None,
        })
    }

    /// The options of a span metric (`span_precision`, `span_recall`, `span_iou`).
    pub fn span(&self, metric: &str) -> Option<&spans::SpanOptions> {
        Some(match metric {
            "span_precision" => &self.span_precision,
            "span_recall" => &self.span_recall,
            "span_iou" => &self.span_iou,
            _ => return None,
        })
    }

    /// Mutable [`MetricOptions::span`].
    pub fn span_mut(&mut self, metric: &str) -> Option<&mut spans::SpanOptions> {
        Some(match metric {
            "span_precision" => &mut self.span_precision,
            "span_recall" => &mut self.span_recall,
            "span_iou" => &mut self.span_iou,
            _ => return None,
        })
    }
}
