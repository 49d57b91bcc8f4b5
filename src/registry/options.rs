//! [`MetricOptions`]: the options sections of every metric, declared in one list
//! (`metric_sections!`: field, type, the metrics that read it). What a section knows about itself
//! (its signature, its engines' settings) is its [`Section`] impl, beside its kernel.

use std::any::Any;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use super::MetricId;
use crate::engines::embed::EmbedSettings;
use crate::engines::judge::JudgeSettings;
use crate::metrics::{locate, plain_signature, retrieval, spans, Section};

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

/// Declares [`MetricOptions`] from one line per options section: its field (the TOML section
/// and keyword-argument set), its type (which implements [`Section`] beside its kernel) and the
/// metrics that read it. Everything the registry does with a section (reading it, its
/// signature, its engines' settings, its defaults) is generated from these lines; a metric not
/// listed takes no options.
macro_rules! metric_sections {
    ($($field:ident: $section:ty => $($metric:ident)|+;)+) => {
        /// The options of every metric, one section each (named as in the metric table), as the
        /// CLI's TOML file and a scoring job carry them. Defaults live on the section types.
        #[derive(Clone, Debug, Default, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct MetricOptions {
            $(
                #[doc = concat!("`[", stringify!($field), "]`.")]
                pub $field: $section,
            )+
        }

        impl MetricOptions {
            /// The name of the options section `metric` reads (its TOML section), `None` when it
            /// takes no options.
            ///
            /// ```
            /// use polars_rag::registry::{MetricId, MetricOptions};
            /// assert_eq!(MetricOptions::section_name(MetricId::CorpusChrf), Some("corpus_chrf"));
            /// assert_eq!(MetricOptions::section_name(MetricId::ExtractQuotes), Some("quoted_spans"));
            /// assert_eq!(MetricOptions::section_name(MetricId::NumberMatch), None);
            /// ```
            pub fn section_name(metric: MetricId) -> Option<&'static str> {
                match metric {
                    $($(MetricId::$metric)|+ => Some(stringify!($field)),)+
                    _ => None,
                }
            }

            /// Reads the section `metric` reads from `reader` into `self`; a metric without
            /// options accepts only an empty set.
            fn read_section(
                &mut self,
                metric: MetricId,
                reader: impl SectionReader,
            ) -> crate::Result<()> {
                match metric {
                    $($(MetricId::$metric)|+ => self.$field = reader.read()?,)+
                    _ => {
                        let _: NoOptions = reader.read()?;
                    }
                }
                Ok(())
            }

            /// The options section `metric` reads (`None` when it reads none).
            fn section_dyn(&self, metric: MetricId) -> Option<&dyn Section> {
                match metric {
                    $($(MetricId::$metric)|+ => Some(&self.$field),)+
                    _ => None,
                }
            }

            /// Mutable [`MetricOptions::section_dyn`].
            fn section_dyn_mut(&mut self, metric: MetricId) -> Option<&mut dyn Section> {
                match metric {
                    $($(MetricId::$metric)|+ => Some(&mut self.$field),)+
                    _ => None,
                }
            }

            /// The default keyword arguments of `metric`, written by `serializer` (a map from
            /// option name to value; empty for a metric without options). Python's functions
            /// take `None` for "the library's default" and show these.
            pub fn defaults_of<S: serde::Serializer>(
                metric: MetricId,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                let defaults = MetricOptions::default();
                match metric {
                    $($(MetricId::$metric)|+ => defaults.$field.serialize(serializer),)+
                    _ => NoOptions {}.serialize(serializer),
                }
            }
        }
    };
}

metric_sections! {
    quoted_spans: crate::metrics::citation::QuotedSpansOptions => QuotedSpans | CitationAlignment | ExtractQuotes;
    bleu: crate::metrics::bleu::BleuOptions => Bleu;
    corpus_bleu: crate::metrics::bleu::CorpusBleuOptions => CorpusBleu;
    chrf: crate::metrics::chrf::ChrfOptions => Chrf;
    corpus_chrf: crate::metrics::chrf::ChrfOptions => CorpusChrf;
    rouge: crate::metrics::rouge::RougeOptions => Rouge;
    exact_match: crate::metrics::similarity::ExactMatchOptions => ExactMatch;
    string_similarity: crate::metrics::similarity::StringSimilarityOptions => StringSimilarity;
    citation_indicators: crate::metrics::lexical::CitationIndicatorOptions => CitationIndicators;
    precision_at_k: crate::metrics::retrieval::RetrievalOptions => PrecisionAtK;
    recall_at_k: crate::metrics::retrieval::RetrievalOptions => RecallAtK;
    f1_at_k: crate::metrics::retrieval::RetrievalOptions => F1AtK;
    hybrid_log_rank: crate::metrics::retrieval::RetrievalOptions => HybridLogRank;
    hit_rate_at_k: crate::metrics::retrieval::RetrievalOptions => HitRateAtK;
    mrr: crate::metrics::retrieval::RetrievalOptions => Mrr;
    average_precision: crate::metrics::retrieval::RetrievalOptions => AveragePrecision;
    ndcg_at_k: crate::metrics::retrieval::RetrievalOptions => NdcgAtK;
    r_precision: crate::metrics::retrieval::RetrievalOptions => RPrecision;
    span_precision: crate::metrics::spans::SpanOptions => SpanPrecision;
    span_recall: crate::metrics::spans::SpanOptions => SpanRecall;
    span_iou: crate::metrics::spans::SpanOptions => SpanIou;
    span_precision_omega: crate::metrics::spans::SpanOptions => SpanPrecisionOmega;
    locate_quotes: crate::metrics::locate::LocateOptions => LocateQuotes;
    citation_support: crate::metrics::judged::citation_support::CitationSupportOptions => CitationSupport;
    citation_precision: crate::metrics::judged::citation_support::CitationSupportOptions => CitationPrecision;
    answer_match: crate::metrics::judged::answer_match::AnswerMatchOptions => AnswerMatch;
    split_claims: crate::metrics::judged::claims::SplitClaimsOptions => SplitClaims;
    semantic_similarity: crate::metrics::semantic::SemanticSimilarityOptions => SemanticSimilarity;
    g_eval: crate::metrics::judged::g_eval::GEvalOptions => GEval;
    faithfulness: crate::metrics::judged::rag::JudgedRagOptions => Faithfulness;
    answer_relevancy: crate::metrics::judged::rag::AnswerRelevancyOptions => AnswerRelevancy;
    context_precision: crate::metrics::judged::rag::JudgedRagOptions => ContextPrecision;
    context_utilization: crate::metrics::judged::rag::JudgedRagOptions => ContextUtilization;
    context_recall: crate::metrics::judged::rag::JudgedRagOptions => ContextRecall;
    ppi_mean: crate::metrics::ppi::PpiOptions => PpiMean;
    citation_recall_precision: crate::metrics::judged::citation_recall::CitationRecallOptions => CitationRecallPrecision;
    claim_checks: crate::metrics::judged::claim_checks::ClaimChecksOptions => ClaimChecks;
    create_nuggets: crate::metrics::judged::nuggets::CreateNuggetsOptions => CreateNuggets;
    nugget_assignment: crate::metrics::judged::nuggets::NuggetAssignmentOptions => NuggetAssignment;
    relevance_grade: crate::metrics::judged::relevance::RelevanceGradeOptions => RelevanceGrade;
    nugget_scores: crate::metrics::nuggets::NuggetOptions => NuggetScores;
    claim_check_scores: crate::metrics::claim_checks::ClaimCheckOptions => ClaimCheckScores;
}

impl MetricOptions {
    /// Defaults everywhere, except the section `metric` reads, taken from `reader`.
    pub fn with_section(metric: MetricId, reader: impl SectionReader) -> crate::Result<Self> {
        let mut all = MetricOptions::default();
        all.read_section(metric, reader).map_err(|e| {
            crate::Error::options(format!("{metric}: invalid options: {}", e.message()))
        })?;
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
    /// assert!(MetricOptions::default().signature(MetricId::NumberMatch).starts_with("number_match|"));
    /// ```
    pub fn signature(&self, metric: MetricId) -> String {
        match self.section_dyn(metric) {
            Some(section) => section.signature(metric.as_str()),
            None => plain_signature(metric.as_str()),
        }
    }

    /// The options section `metric` reads, if it reads one of type `T`.
    pub fn section<T: 'static>(&self, metric: MetricId) -> Option<&T> {
        let section: &dyn Any = self.section_dyn(metric)?;
        section.downcast_ref()
    }

    /// Mutable [`MetricOptions::section`].
    pub fn section_mut<T: 'static>(&mut self, metric: MetricId) -> Option<&mut T> {
        let section: &mut dyn Any = self.section_dyn_mut(metric)?;
        section.downcast_mut()
    }

    /// The judge settings of a judged metric (`None` for the others): the CLI's `[judge]`
    /// section and `--judge-*` flags are applied through this.
    pub fn judge_mut(&mut self, metric: MetricId) -> Option<&mut JudgeSettings> {
        self.section_dyn_mut(metric)?.judge_settings()
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
        self.section_dyn_mut(metric)?.embed_settings()
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
        }
    }
}
