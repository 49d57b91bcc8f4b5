//! Metric kernels: pure functions over borrowed text, each with a serde `Options` struct that the
//! Rust API, the Python plugin and the CLI configuration share.

pub mod bleu;
pub mod chrf;
pub mod citation;
pub mod judged;
pub mod lexical;
pub mod locate;
pub(crate) mod numpy;
pub mod retrieval;
pub mod rouge;
pub mod semantic;
pub mod similarity;
pub mod spans;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

/// The options of a metric that has none: only an empty set of keyword arguments is accepted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

/// Reads one options section from keyword arguments or a configuration section. The Python
/// plugin implements it over pickled keyword arguments (with errors naming the argument to
/// blame); [`MetricOptions::for_metric`] over any serde deserializer.
pub trait SectionReader {
    /// Reads a section of type `T`; the error says what is wrong with it.
    fn read<T: DeserializeOwned>(self) -> Result<T, String>;
}

/// A [`SectionReader`] over a serde deserializer.
struct FromDeserializer<D>(D);

impl<'de, D: Deserializer<'de>> SectionReader for FromDeserializer<D> {
    fn read<T: DeserializeOwned>(self) -> Result<T, String> {
        T::deserialize(self.0).map_err(|e| e.to_string())
    }
}

/// Expands the metric table into [`MetricOptions`]: one field per options section, and per
/// metric id the section it reads and its signature.
macro_rules! metric_options {
    (
        sections { $( $(#[$doc:meta])* $section:ident : $stype:ty, )* }
        metrics { $(
            $id:ident {
                kind: $kind:ident, inputs: $inputs:ident, options: $options:ident,
                $(engine: $engine:ident,)?
                values: [$($value:literal),*], corpus: $corpus:expr_2021,
                summary: $summary:literal, reference: $reference:literal,
                signature: |$so:ident| $signature:expr_2021,
                $($rest:tt)*
            }
        )* }
    ) => {
        /// The options of every metric, one section each (named as in the metric table), as the
        /// CLI's TOML file and a scoring job carry them. Defaults live on the section types.
        #[derive(Clone, Debug, Default, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct MetricOptions {
            $( $(#[$doc])* pub $section: $stype, )*
        }

        impl MetricOptions {
            /// Defaults everywhere, except the section `metric` reads, taken from `reader`.
            pub fn with_section(metric: &str, reader: impl SectionReader) -> crate::Result<Self> {
                let mut all = MetricOptions::default();
                let bad = |e: String| crate::Error::options(format!("{metric}: invalid options: {e}"));
                match metric {
                    $( stringify!($id) => read_section!(all, reader, bad, $options), )*
                    _ => {
                        crate::registry::require(metric)?;
                    }
                }
                Ok(all)
            }

            /// The signature of `metric` under these options, in sacrebleu's style
            /// (`key:value|...`), ending with the version of the library or reference whose
            /// numbers it reproduces; `None` for an unknown id.
            ///
            /// ```
            /// use polars_rag::metrics::MetricOptions;
            /// let sig = MetricOptions::default().signature("bleu").unwrap();
            /// assert!(sig.contains("tok:13a") && sig.contains("smooth:exp") && sig.contains("eff:yes"));
            /// assert!(MetricOptions::default().signature("corpus_bleu").unwrap().contains("eff:no"));
            /// ```
            pub fn signature(&self, metric: &str) -> Option<String> {
                match metric {
                    $( stringify!($id) => {
                        let $so = section_ref!(self, $options);
                        Some($signature)
                    } )*
                    _ => None,
                }
            }

            /// The options section `metric` reads, if it reads one of type `T`.
            pub fn section<T: 'static>(&self, metric: &str) -> Option<&T> {
                let section: &dyn std::any::Any = match metric {
                    $( stringify!($id) => section_ref!(self, $options), )*
                    _ => return None,
                };
                section.downcast_ref()
            }

            /// Mutable [`MetricOptions::section`].
            pub fn section_mut<T: 'static>(&mut self, metric: &str) -> Option<&mut T> {
                let section: &mut dyn std::any::Any = match metric {
                    $( stringify!($id) => section_mut!(self, $options), )*
                    _ => return None,
                };
                section.downcast_mut()
            }

            /// The judge settings of a judged metric (`None` for the others): the CLI's `[judge]`
            /// section and `--judge-*` flags are applied through this.
            pub fn judge_mut(&mut self, metric: &str) -> Option<&mut crate::engines::judge::JudgeSettings> {
                match metric {
                    $( stringify!($id) => judge_of!(self, $options $(, $engine)?), )*
                    _ => None,
                }
            }

            /// The embedding settings of a metric whose engine embeds (`None` for the others).
            fn engine_embedder_mut(&mut self, metric: &str) -> Option<&mut crate::engines::embed::EmbedSettings> {
                match metric {
                    $( stringify!($id) => embedder_of!(self, $options $(, $engine)?), )*
                    _ => None,
                }
            }

            /// The default keyword arguments of `metric`, written by `serializer` (a map from
            /// option name to value; empty for a metric without options). Python's functions
            /// take `None` for "the library's default" and show these.
            pub fn defaults_of<S: serde::Serializer>(metric: &str, serializer: S) -> Result<Option<S::Ok>, S::Error> {
                let defaults = MetricOptions::default();
                match metric {
                    $( stringify!($id) => section_ref!(defaults, $options).serialize(serializer).map(Some), )*
                    _ => Ok(None),
                }
            }
        }
    };
}

/// Reads the section a metric reads (`none`: only an empty set of options is accepted).
macro_rules! read_section {
    ($all:ident, $reader:ident, $bad:ident, none) => {{
        let _: NoOptions = $reader.read().map_err($bad)?;
    }};
    ($all:ident, $reader:ident, $bad:ident, $section:ident) => {
        $all.$section = $reader.read().map_err($bad)?
    };
}

/// The section a metric reads, by reference (`none`: an empty one).
macro_rules! section_ref {
    ($self:expr_2021, none) => {
        &NoOptions {}
    };
    ($self:expr_2021, $section:ident) => {
        &$self.$section
    };
}

/// The section a metric reads, by mutable reference (`none`: there is nothing to change).
macro_rules! section_mut {
    ($self:expr_2021, none) => {
        return None
    };
    ($self:expr_2021, $section:ident) => {
        &mut $self.$section
    };
}

/// The embedding settings of a section, for metrics whose entry names an engine that embeds.
macro_rules! embedder_of {
    ($self:expr_2021, $section:ident, Embedder) => {
        Some(&mut $self.$section.embedder)
    };
    ($self:expr_2021, $section:ident, JudgeAndEmbedder) => {
        Some(&mut $self.$section.embedder)
    };
    ($self:expr_2021, $section:ident $(, $other:ident)?) => {
        None
    };
}

/// The judge settings of a section, for metrics whose entry names an engine that judges.
macro_rules! judge_of {
    ($self:expr_2021, $section:ident, Judge) => {
        Some(&mut $self.$section.judge)
    };
    ($self:expr_2021, $section:ident, JudgeAndEmbedder) => {
        Some(&mut $self.$section.judge)
    };
    ($self:expr_2021, $section:ident $(, $other:ident)?) => {
        None
    };
}

crate::metric_table!(metric_options);

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
    pub fn for_metric<'de, D: Deserializer<'de>>(metric: &str, options: D) -> crate::Result<Self> {
        Self::with_section(metric, FromDeserializer(options))
    }

    /// The options of a ranked-list metric (`precision_at_k`, ..., `r_precision`).
    pub fn retrieval(&self, metric: &str) -> Option<&retrieval::RetrievalOptions> {
        self.section(metric)
    }

    /// Mutable [`MetricOptions::retrieval`].
    pub fn retrieval_mut(&mut self, metric: &str) -> Option<&mut retrieval::RetrievalOptions> {
        self.section_mut(metric)
    }

    /// The embedding settings of a metric that embeds (`None` for the others): the CLI's
    /// `[embed]` section and `--embed-*` flags are applied through this. A ranked-list metric
    /// embeds when its relevance is `"embedding"` (its texts, unless the columns are vectors);
    /// `locate_quotes` embeds each quote and its span for `cosine` when given a model.
    ///
    /// ```
    /// use polars_rag::metrics::MetricOptions;
    /// let mut o = MetricOptions::for_metric("mrr", serde_json::json!({"relevance": "embedding"})).unwrap();
    /// assert!(o.embedder_mut("mrr").is_some());
    /// assert!(o.embedder_mut("ndcg_at_k").is_none()); // judged by the column shapes
    /// assert!(o.embedder_mut("semantic_similarity").is_some());
    /// ```
    pub fn embedder_mut(
        &mut self,
        metric: &str,
    ) -> Option<&mut crate::engines::embed::EmbedSettings> {
        if self.section::<locate::LocateOptions>(metric).is_some() {
            return self
                .section_mut::<locate::LocateOptions>(metric)
                .map(|located| located.embedder.get_or_insert_with(Default::default));
        }
        if self.retrieval(metric).is_some() {
            return self
                .retrieval_mut(metric)
                .filter(|ranked| ranked.relevance == retrieval::Relevance::Embedding)
                .map(|ranked| ranked.embedder.get_or_insert_with(Default::default));
        }
        self.engine_embedder_mut(metric)
    }

    /// What a metric still needs before it can run with these options, when it cannot run on
    /// defaults alone (`g_eval` has no criteria of its own): the CLI skips it, saying this.
    pub fn unconfigured(&self, metric: &str) -> Option<&'static str> {
        match metric {
            "g_eval" if self.g_eval.criteria.trim().is_empty() => {
                Some("criteria (a [g_eval] section with criteria = \"...\")")
            }
            _ => None,
        }
    }

    /// The options of a span metric (`span_precision`, `span_recall`, `span_iou`).
    pub fn span(&self, metric: &str) -> Option<&spans::SpanOptions> {
        self.section(metric)
    }
}
