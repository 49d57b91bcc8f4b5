//! The `score` job's settings: a TOML file and command-line flags (flags win).
//!
//! ```toml
//! run = "datasets/demo/run_a.parquet"
//! golden = "datasets/demo/golden.parquet"   # optional: reference answers, metadata
//! out = "scores.parquet"
//! corpus = "datasets/demo/corpus.parquet"  # optional: spans checked, retrieved texts filled
//! chunks = "chunks.parquet"   # optional: the chunking (file, start, end) for span_precision_omega
//! unit = "codepoints"                      # or "bytes": the tables' span offsets
//! invalid_spans = "error"                  # or "null"
//! by = "segment"                           # optional: summary per segment
//! metrics = ["quoted_spans", "citation_alignment", "bleu", "rouge"]
//! k = 10                # optional: the cutoff of every ranked metric, over their sections'
//! relevance_level = 1   # optional: the least relevant grade of every ranked metric
//!
//! [columns]
//! id = "query_id"
//! answer = "answer"
//! sources = "sources"              # list[str], str, or list[struct{text, ...}] such as "retrieved"
//! references = "reference_answers" # str or list[str]
//! checks = "checks"                # list[struct{kind, value, values, weight, name}]
//! negatives = "negative_answers"   # str or list[str]
//! retrieved = "retrieved"          # list[struct{file, start, end, text, id, score}] in rank order
//! relevant = "relevant_spans"      # or relevant_ids, relevant_chunks
//!
//! [quoted_spans]        # options shared by quoted_spans and citation_alignment
//! casefold = true
//! min_len = 3
//! quotes = "standard"   # or "ragas"
//!
//! [bleu]                # sentence BLEU (sacrebleu's sentence defaults)
//! tokenize = "13a"      # none, char, intl
//! smooth_method = "exp" # none, floor, add-k
//! lowercase = false
//!
//! [corpus_bleu]         # same keys; sacrebleu's corpus defaults (effective_order = false)
//!
//! [chrf]
//! word_order = 0        # 2 gives chrF++
//!
//! [rouge]
//! use_stemmer = false
//! tokenizer = "rouge_score"   # or "unicode"
//!
//! [string_similarity]
//! distance = "levenshtein"    # hamming, jaro, jaro_winkler
//!
//! [citation_indicators]
//! indicators = ["source:", "according to"]
//!
//! [precision_at_k]      # one section per ranked metric: recall_at_k, ndcg_at_k, mrr, ...
//! k = 10
//! relevance = "span"    # auto, text, id, span, embedding
//! min_overlap = 1       # span relevance: characters shared with a golden span
//! rank_by = "order"     # score, trec
//! relevance_level = 2   # graded ground truth: least relevant grade (default: any above 0)
//!
//! [span_iou]            # span_precision, span_recall, span_iou
//! compat = "standard"   # or "chroma"
//!
//! [judges.politeness]   # a judge defined as data, scored into the column `politeness`
//! template = "judges/politeness.toml"   # its card (id, version, inputs, system, schema),
//!                                       # or the card inline as [judges.politeness.template]
//! inputs = { answer = "answer" }        # card input -> column (default: the same name)
//! ```

use std::path::{Path, PathBuf};

use polars::prelude::{PolarsError, PolarsResult};
use serde::Deserialize;

use crate::columnar::corpus::SpanUnit;
use crate::engines::embed::EmbedSettings;
use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;
use crate::job::InvalidSpans;
use crate::metrics::judged::custom::CardSource;
use crate::registry::MetricOptions;
use crate::text::shown::shown;

/// Column names of the run and golden tables; `None` picks the documented default.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Columns {
    /// Row key (default `query_id`).
    pub id: Option<String>,
    /// Answer text (default `answer`).
    pub answer: Option<String>,
    /// Sources per answer (default `sources`, else `retrieved`).
    pub sources: Option<String>,
    /// Reference answers (default `reference_answers`, else `reference`).
    pub references: Option<String>,
    /// Declarative checks per question (default `checks`).
    pub checks: Option<String>,
    /// Answers that must not be given (default `negative_answers`).
    pub negatives: Option<String>,
    /// Retrieved items per query, in rank order (default `retrieved`).
    pub retrieved: Option<String>,
    /// Ground truth of the ranked retrieval metrics (default `relevant_spans` when the retrieved
    /// items are spans, else `relevant_ids`, else `relevant_chunks`).
    pub relevant: Option<String>,
    /// Claims of the judged citation audit (default `claim`).
    pub claim: Option<String>,
    /// The span cited for each claim (default `cited_span`).
    pub cited_span: Option<String>,
    /// The question (default `question`).
    pub question: Option<String>,
    /// The passages the system was given, in rank order, for the judged RAG metrics (default
    /// `contexts`, else `retrieved_contexts`, else `sources`).
    pub contexts: Option<String>,
}

/// Everything `score` needs, as read from a config file: the job's own keys plus one section of
/// options per metric family ([`MetricOptions`]).
#[derive(Clone, Debug, Default)]
pub struct ScoreConfig {
    /// The run table (Parquet).
    pub run: Option<PathBuf>,
    /// The golden table (Parquet), joined on the id column.
    pub golden: Option<PathBuf>,
    /// Where to write the scores table (Parquet).
    pub out: Option<PathBuf>,
    /// Metric ids to compute (default: all that the tables have inputs for).
    pub metrics: Option<Vec<String>>,
    /// Column names.
    pub columns: Columns,
    /// `[quoted_spans]`, `[bleu]`, `[rouge]`, ...
    pub options: MetricOptions,
    /// The corpus spans point into.
    pub corpus: Option<PathBuf>,
    /// The chunking (Parquet: file, start, end) that `span_precision_omega` scores.
    pub chunks: Option<PathBuf>,
    /// `codepoints` or `bytes`.
    pub unit: Option<SpanUnit>,
    /// `error` or `null`.
    pub invalid_spans: Option<InvalidSpans>,
    /// The column to break the summary down by.
    pub by: Option<String>,
    /// `[judge]`: the judge of every judged metric whose section sets none of its own.
    pub judge: Option<JudgeSettings>,
    /// `[embed]`: the embedding model of every metric that embeds and sets none of its own.
    pub embed: Option<EmbedSettings>,
    /// `[judges.<id>]`: judges defined as data, by id.
    pub judges: std::collections::BTreeMap<String, CustomJudgeSection>,
    /// Judges defined as data given by their card files alone (the command's `--judge-card`),
    /// each reading the columns named like its inputs.
    pub judge_cards: Vec<PathBuf>,
    /// Score a run of more rows than this one batch at a time (see [`ScoreJob::batch_rows`](crate::job::ScoreJob::batch_rows));
    /// default [`DEFAULT_BATCH_ROWS`] when the scores go to a file, else 0 (in memory).
    pub batch_rows: Option<usize>,
    /// The qrels table the judge grades the run's retrieved passages into (see
    /// [`ScoreJob::grade_relevance`](crate::job::ScoreJob::grade_relevance)).
    pub grade_relevance: Option<PathBuf>,
    /// The cutoff of every ranked metric, over their sections' own (the command's `--k`).
    pub k: Option<i64>,
    /// The least grade of a relevant item for every ranked metric, over their sections' own
    /// (the command's `--relevance-level`).
    pub relevance_level: Option<f64>,
    /// How the run relates to a job scored in parts (see [`Parts`](crate::job::Parts)): set by
    /// the distributed driver (`polars_rag.ray`) for each block and for the summary.
    pub parts: Option<crate::job::Parts>,
}

/// The batch size of a job that writes its scores, unless its settings give one: a run of more
/// rows is scored one batch at a time, in bounded memory.
pub const DEFAULT_BATCH_ROWS: usize = 100_000;

/// A `[judges.<id>]` section: a judge defined as data.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomJudgeSection {
    /// The card: the path of its TOML file, or the card itself as a table.
    pub template: CardRef,
    /// Card input name → column (inputs left out read the column of their own name).
    #[serde(default)]
    pub inputs: std::collections::BTreeMap<String, String>,
    /// This judge's own settings (default: the `[judge]` section and the `--judge-*` flags).
    #[serde(default)]
    pub judge: Option<JudgeSettings>,
}

/// Where a custom judge's card is.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum CardRef {
    /// A TOML card file.
    File(PathBuf),
    /// The card inline.
    Inline(Box<JudgeTemplate>),
}

impl CardRef {
    /// The card as a custom judge's options take it; a file is read here, so a missing file is
    /// an error naming the section.
    pub fn source(&self, section: &str) -> PolarsResult<CardSource> {
        self.card_source(section)
            .map_err(|e| PolarsError::ComputeError(e.into()))
    }

    pub(crate) fn card_source(&self, section: &str) -> Result<CardSource, String> {
        match self {
            CardRef::Inline(card) => Ok(CardSource::Card(card.clone())),
            CardRef::File(path) => {
                crate::files::read_text(path, "judge card", crate::files::CONFIG_LIMIT)
                    .map(CardSource::Toml)
                    .map_err(|e| format!("[judges.{section}]: {e}"))
            }
        }
    }
}

/// The job's own keys; everything else in the file is a metric section.
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct JobKeys {
    run: Option<PathBuf>,
    golden: Option<PathBuf>,
    out: Option<PathBuf>,
    metrics: Option<Vec<String>>,
    columns: Columns,
    corpus: Option<PathBuf>,
    chunks: Option<PathBuf>,
    unit: Option<SpanUnit>,
    invalid_spans: Option<InvalidSpans>,
    by: Option<String>,
    batch_rows: Option<usize>,
    grade_relevance: Option<PathBuf>,
    k: Option<i64>,
    relevance_level: Option<f64>,
    parts: Option<crate::job::Parts>,
}

impl ScoreConfig {
    /// Parses TOML text. Unknown keys, in the job or in a metric section, are errors, so typos
    /// do not pass silently.
    pub fn parse(text: &str) -> PolarsResult<Self> {
        Self::parse_with(text, &[])
    }

    /// Parses TOML text with `overrides` applied over it (the command's `--set`): a key they
    /// set is read, checked and reported exactly as if the file said it.
    ///
    /// ```
    /// use polars_rag::job::config::{ConfigOverride, ScoreConfig};
    /// use polars_rag::text::quotes::QuoteStyle;
    /// let sets: Vec<ConfigOverride> = ["quoted_spans.quotes=ragas", "rouge.use_stemmer=true"]
    ///     .iter().map(|s| s.parse().unwrap()).collect();
    /// let cfg = ScoreConfig::parse_with("[quoted_spans]\nmin_len = 2", &sets).unwrap();
    /// assert_eq!(cfg.options.quoted_spans.quotes, QuoteStyle::Ragas);
    /// assert_eq!(cfg.options.quoted_spans.min_len, 2);
    /// assert!(cfg.options.rouge.use_stemmer);
    /// let typo: ConfigOverride = "rouge.stemmer=true".parse().unwrap();
    /// assert!(ScoreConfig::parse_with("", &[typo]).unwrap_err().to_string().contains("stemmer"));
    /// ```
    pub fn parse_with(text: &str, overrides: &[ConfigOverride]) -> PolarsResult<Self> {
        Self::parse_text(text, overrides).map_err(|e| PolarsError::ComputeError(e.into()))
    }

    fn parse_text(text: &str, overrides: &[ConfigOverride]) -> Result<Self, String> {
        let mut table: toml::Table = toml::from_str(text).map_err(|e| toml_error(&e, text))?;
        for o in overrides {
            o.apply(&mut table)?;
        }
        Self::read_table(table).map_err(|e| e.message().to_string())
    }

    /// The settings a table holds, as a config file's (the Python package's `pr.score` gives its
    /// keywords this way): unknown keys are errors, as in a file.
    ///
    /// ```
    /// use polars_rag::job::config::ScoreConfig;
    /// let table: toml::Table = toml::from_str("metrics = ['rouge']\n[rouge]\nuse_stemmer = true").unwrap();
    /// let cfg = ScoreConfig::from_table(table).unwrap();
    /// assert!(cfg.options.rouge.use_stemmer);
    /// let typo: toml::Table = toml::from_str("[rouge]\nstemmer = true").unwrap();
    /// assert!(ScoreConfig::from_table(typo).unwrap_err().to_string().contains("stemmer"));
    /// ```
    pub fn from_table(table: toml::Table) -> crate::Result<Self> {
        Self::read_table(table)
    }

    /// A config file's settings (when there is one) with `over` laid over them key by key, a
    /// section merged into the file's section of the same name: what the Python package's
    /// `pr.score(config=..., options=...)` scores with.
    pub fn layered(file: Option<&Path>, over: toml::Table) -> crate::Result<Self> {
        let mut table = match file {
            None => toml::Table::new(),
            Some(path) => {
                if !path.exists() {
                    return Err(crate::Error::not_found(format!(
                        "config not found: {}",
                        path.display()
                    )));
                }
                let text = crate::files::read_text(path, "config", crate::files::CONFIG_LIMIT)
                    .map_err(|e| crate::Error::io(e.to_string()))?;
                toml::from_str(&text).map_err(|e| {
                    crate::Error::input(format!(
                        "invalid config {}: {}",
                        path.display(),
                        toml_error(&e, &text)
                    ))
                })?
            }
        };
        lay_over(&mut table, over);
        Self::from_table(table)
    }

    /// The settings a table holds: an error in the job's own keys is invalid input, one in an
    /// engine's or a metric's section invalid options.
    fn read_table(mut table: toml::Table) -> crate::Result<Self> {
        let mut job = toml::Table::new();
        for key in [
            "run",
            "golden",
            "out",
            "metrics",
            "columns",
            "corpus",
            "chunks",
            "unit",
            "invalid_spans",
            "by",
            "batch_rows",
            "grade_relevance",
            "k",
            "relevance_level",
            "parts",
        ] {
            if let Some(value) = table.remove(key) {
                job.insert(key.to_string(), value);
            }
        }
        let job: JobKeys = job
            .try_into()
            .map_err(|e: toml::de::Error| crate::Error::input(e.to_string()))?;
        let judge: Option<JudgeSettings> =
            match table.remove("judge") {
                Some(section) => Some(section.try_into().map_err(|e: toml::de::Error| {
                    crate::Error::options(format!("[judge]: {e}"))
                })?),
                None => None,
            };
        let embed: Option<EmbedSettings> =
            match table.remove("embed") {
                Some(section) => Some(section.try_into().map_err(|e: toml::de::Error| {
                    crate::Error::options(format!("[embed]: {e}"))
                })?),
                None => None,
            };
        let judges = match table.remove("judges") {
            Some(section) => section
                .try_into()
                .map_err(|e: toml::de::Error| crate::Error::options(format!("[judges]: {e}")))?,
            None => Default::default(),
        };
        let options: MetricOptions = table
            .try_into()
            .map_err(|e: toml::de::Error| crate::Error::options(e.to_string()))?;
        Ok(ScoreConfig {
            run: job.run,
            golden: job.golden,
            out: job.out,
            metrics: job.metrics,
            columns: job.columns,
            options,
            corpus: job.corpus,
            chunks: job.chunks,
            unit: job.unit,
            invalid_spans: job.invalid_spans,
            by: job.by,
            judge,
            embed,
            judges,
            judge_cards: Vec::new(),
            batch_rows: job.batch_rows,
            grade_relevance: job.grade_relevance,
            k: job.k,
            relevance_level: job.relevance_level,
            parts: job.parts,
        })
    }

    /// The job these settings describe: the one merge of every face (the command's flags are
    /// laid over the config as overrides before it; Python's keywords are a table of the same
    /// keys). It gives the job the judge and embedding model the environment names when the
    /// settings give none (`POLARS_RAG_JUDGE_MODEL`, `POLARS_RAG_EMBED_MODEL`), reads and checks
    /// the judges defined as data, and picks the defaults: the scores in memory unless `out` is
    /// set, batches of [`DEFAULT_BATCH_ROWS`] when they go to a file. The run, golden table and
    /// corpus may be replaced by frames afterwards.
    ///
    /// ```
    /// use polars_rag::job::config::ScoreConfig;
    /// let cfg = ScoreConfig::parse("run = 'run.parquet'\nout = 'scores.parquet'\nby = 'segment'").unwrap();
    /// let job = cfg.into_job().unwrap();
    /// assert_eq!(job.by.as_deref(), Some("segment"));
    /// assert_eq!(job.batch_rows, polars_rag::job::config::DEFAULT_BATCH_ROWS);
    /// let bad = ScoreConfig::parse("[judges.mine]\ntemplate = 'missing-card.toml'").unwrap();
    /// assert!(bad.into_job().is_err());
    /// ```
    pub fn into_job(mut self) -> crate::Result<crate::job::ScoreJob> {
        self.options.apply_shared(&crate::registry::SharedOptions {
            k: self.k,
            relevance_level: self.relevance_level,
        });
        let named = |variable: &str| std::env::var(variable).is_ok_and(|m| !m.trim().is_empty());
        let judge = self
            .judge
            .or_else(|| named("POLARS_RAG_JUDGE_MODEL").then(JudgeSettings::default));
        let embedder = self
            .embed
            .or_else(|| named("POLARS_RAG_EMBED_MODEL").then(EmbedSettings::default));
        let custom_judges = custom_judges_from(self.judges, &self.judge_cards, judge.as_ref())
            .map_err(crate::Error::input)?;
        let batch_rows = self.batch_rows.unwrap_or(if self.out.is_some() {
            DEFAULT_BATCH_ROWS
        } else {
            0
        });
        Ok(crate::job::ScoreJob {
            run: self.run.map(Into::into).unwrap_or_default(),
            golden: self.golden.map(Into::into),
            out: self.out,
            metrics: self.metrics,
            columns: self.columns,
            options: self.options,
            corpus: self.corpus.map(Into::into),
            chunks: self.chunks,
            unit: self.unit.unwrap_or_default(),
            invalid_spans: self.invalid_spans.unwrap_or_default(),
            by: self.by,
            grade_relevance: self.grade_relevance,
            judge,
            embedder,
            custom_judges,
            batch_rows,
            parts: self.parts.unwrap_or_default(),
            ..crate::job::ScoreJob::default()
        })
    }

    /// Reads a TOML config file.
    pub fn from_file(path: &Path) -> PolarsResult<Self> {
        Self::from_file_with(path, &[])
    }

    /// Reads a TOML config file with `overrides` applied over it (see [`ScoreConfig::parse_with`]).
    pub fn from_file_with(path: &Path, overrides: &[ConfigOverride]) -> PolarsResult<Self> {
        Self::read_file(path, overrides).map_err(|e| PolarsError::ComputeError(e.into()))
    }

    fn read_file(path: &Path, overrides: &[ConfigOverride]) -> Result<Self, String> {
        let text = crate::files::read_text(path, "config", crate::files::CONFIG_LIMIT)
            .map_err(|e| e.to_string())?;
        Self::parse_with(&text, overrides)
            .map_err(|e| format!("invalid config {}: {e}", path.display()))
    }
}

/// Lays `over` over `table` key by key: a section over a section merges into it, anything else
/// replaces what was there.
fn lay_over(table: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (table.get_mut(&key), value) {
            (Some(toml::Value::Table(mine)), toml::Value::Table(theirs)) => lay_over(mine, theirs),
            (_, value) => {
                table.insert(key, value);
            }
        }
    }
}

/// The judges defined as data of a job: the `[judges.<id>]` sections, then the card files given
/// alone. Each runs on its own section's judge, else the job's judge.
fn custom_judges_from(
    sections: std::collections::BTreeMap<String, CustomJudgeSection>,
    cards: &[PathBuf],
    judge: Option<&JudgeSettings>,
) -> Result<Vec<crate::job::CustomJudgeJob>, String> {
    let mut jobs: Vec<crate::job::CustomJudgeJob> = Vec::new();
    let flagged = cards.iter().map(|path| {
        let section = CustomJudgeSection {
            template: CardRef::File(path.clone()),
            inputs: Default::default(),
            judge: None,
        };
        (None, section)
    });
    let configured = sections
        .into_iter()
        .map(|(name, section)| (Some(name), section));
    for (name, section) in configured.chain(flagged) {
        let place = match &name {
            Some(name) => format!("[judges.{name}]"),
            None => format!("--judge-card {}", section_path(&section)),
        };
        let template = section
            .template
            .source(name.as_deref().unwrap_or("card"))
            .map_err(|e| match &name {
                Some(_) => e.to_string(),
                None => format!("{place}: {e}"),
            })?;
        let settings = section.judge.clone().or_else(|| judge.cloned()).ok_or_else(|| {
            format!("{place} needs a judge: a [judge] section, --judge-model / --judge-base-url, or POLARS_RAG_JUDGE_MODEL")
        })?;
        let options = crate::metrics::judged::custom::CustomJudgeOptions {
            judge: settings,
            template: Some(template),
        };
        let card = options.card().map_err(|e| format!("{place}: {e}"))?;
        if let Some(name) = &name
            && &card.id != name
        {
            return Err(format!(
                "{place}: the card's id is `{}`; name the section [judges.{}]",
                card.id, card.id
            ));
        }
        if crate::registry::find(&card.id).is_some() || card.id == crate::job::claims::CLAIM_AUDIT {
            return Err(format!(
                "{place}: the card's id `{}` is a built-in metric's (or the claim audit's) name; give the card another id",
                card.id
            ));
        }
        if jobs.iter().any(|j| j.id() == card.id) {
            return Err(format!(
                "{place}: a judge with id `{}` is already defined",
                card.id
            ));
        }
        jobs.push(crate::job::CustomJudgeJob {
            options,
            columns: section.inputs,
        });
    }
    Ok(jobs)
}

/// The file of a card given by path (for messages).
fn section_path(section: &CustomJudgeSection) -> String {
    match &section.template {
        CardRef::File(path) => path.display().to_string(),
        CardRef::Inline(card) => card.id.clone(),
    }
}

/// A TOML reading error as a message: the parser's own (the line quoted, the place marked) for
/// an ordinary line; for a line longer than a text output shows, or holding characters a
/// terminal acts on, the line's start as the text outputs show it (a key 20,000 levels deep is a
/// 40 KB line). The parser refuses keys and values nested deeper than it reads.
pub(crate) fn toml_error(e: &toml::de::Error, text: &str) -> String {
    let Some(span) = e.span() else {
        return e.to_string();
    };
    let mut start = span.start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = &text[line_start..line_end];
    let quoted = shown(line);
    if quoted == line {
        return e.to_string();
    }
    let number = text[..line_start].matches('\n').count() + 1;
    let column = text[line_start..start].chars().count() + 1;
    let nested = if e.message().contains("recursion limit") {
        " (a key or a value nested too deep)"
    } else {
        ""
    };
    format!(
        "TOML parse error at line {number}, column {column}: {}{nested}\n  {number} | {quoted}",
        e.message().trim_end()
    )
}

/// One configuration key set from outside the file (the command's repeatable
/// `--set SECTION.KEY=VALUE`): a dotted path (`rouge.use_stemmer`, `judge.model`, `unit`) and a
/// TOML value (`true`, `2`, `0.5`, `"text"`, `[1, 2]`; a bare word that is no TOML value, as in
/// `quoted_spans.quotes=ragas`, is a string).
///
/// A key has at most [`MAX_KEY_DEPTH`] levels and a value is one line: what follows a line
/// break would not be read.
///
/// ```
/// use polars_rag::job::config::ConfigOverride;
/// let set: ConfigOverride = "judge.max_concurrency=4".parse().unwrap();
/// assert_eq!(set.path(), ["judge", "max_concurrency"]);
/// assert_eq!(set.value(), &toml::Value::Integer(4));
/// assert!("judge.model".parse::<ConfigOverride>().is_err()); // no value
/// assert!("judge..model=x".parse::<ConfigOverride>().is_err()); // an empty key
/// assert!("rouge.use_stemmer=true\nbleu.lowercase=true".parse::<ConfigOverride>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigOverride {
    path: Vec<String>,
    value: toml::Value,
}

impl ConfigOverride {
    /// The keys from the top of the configuration down.
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// The value set.
    pub fn value(&self) -> &toml::Value {
        &self.value
    }

    /// Sets the key in `table`, creating the sections on its path.
    fn apply(&self, table: &mut toml::Table) -> Result<(), String> {
        let (last, sections) = self.path.split_last().expect("a parsed override has a key");
        let mut current = table;
        for (depth, key) in sections.iter().enumerate() {
            let entry = current
                .entry(key.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            current = entry.as_table_mut().ok_or_else(|| {
                format!(
                    "--set {}: `{}` is a value, not a section",
                    shown(&self.path.join(".")),
                    shown(&self.path[..=depth].join("."))
                )
            })?;
        }
        current.insert(last.clone(), self.value.clone());
        Ok(())
    }
}

/// The most levels a `--set` key has (`judge.model` has two): far above any key of the
/// configuration, and low enough that no reading of the sections it creates runs deep.
pub const MAX_KEY_DEPTH: usize = 32;

impl std::str::FromStr for ConfigOverride {
    type Err = crate::Error;

    fn from_str(text: &str) -> crate::Result<Self> {
        // The text is echoed as the text outputs show a value: cut when long, escaped.
        let bad = |what: &str| crate::Error::options(format!("--set {}: {what}", shown(text)));
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| bad("expected SECTION.KEY=VALUE"))?;
        let named =
            |what: &str| crate::Error::options(format!("--set {}: {what}", shown(key.trim())));
        let depth = key.split('.').count();
        if depth > MAX_KEY_DEPTH {
            return Err(named(&format!(
                "the key has {depth} levels; a configuration key has at most {MAX_KEY_DEPTH}"
            )));
        }
        if key.contains(['\n', '\r']) {
            return Err(named("the key holds a line break"));
        }
        // TOML would read a second line as another key, which the override would drop.
        if value.contains(['\n', '\r']) {
            return Err(named(
                "the value holds a line break; a --set value is one line (a TOML string may \
                 write one as \\n), and each key is set by its own --set",
            ));
        }
        let path: Vec<String> = key.split('.').map(|k| k.trim().to_string()).collect();
        if path.iter().any(String::is_empty) {
            return Err(bad("a key of the path is empty"));
        }
        let value = value.trim();
        // Read as the right-hand side of a TOML assignment; only that one key is kept.
        let parsed = toml::from_str::<toml::Table>(&format!("value = {value}"))
            .ok()
            .and_then(|mut t| t.remove("value"));
        let value = parsed.unwrap_or_else(|| toml::Value::String(value.to_string()));
        Ok(ConfigOverride { path, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::MetricId;
    use crate::text::quotes::QuoteStyle;

    #[test]
    fn parses_the_documented_example() {
        let cfg = ScoreConfig::parse(
            r#"
            run = "r.parquet"
            metrics = ["quoted_spans"]
            [columns]
            sources = "retrieved"
            [quoted_spans]
            quotes = "ragas"
            min_len = 2
            "#,
        )
        .unwrap();
        assert_eq!(cfg.columns.sources.as_deref(), Some("retrieved"));
        assert_eq!(cfg.options.quoted_spans.quotes, QuoteStyle::Ragas);
        assert_eq!(cfg.options.quoted_spans.min_len, 2);
        assert!(cfg.options.quoted_spans.casefold);
    }

    #[test]
    fn the_span_unit_is_read_as_its_type() {
        let cfg = ScoreConfig::parse("unit = \"bytes\"").unwrap();
        assert_eq!(cfg.unit, Some(SpanUnit::Bytes));
        let e = ScoreConfig::parse("unit = \"chars\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("chars") && e.contains("codepoints") && e.contains("bytes"),
            "{e}"
        );
    }

    #[test]
    fn corpus_bleu_keeps_its_corpus_defaults_when_a_section_sets_other_keys() {
        let cfg = ScoreConfig::parse("[corpus_bleu]\nlowercase = true\n[bleu]\nlowercase = true")
            .unwrap();
        assert!(cfg.options.corpus_bleu.0.lowercase && !cfg.options.corpus_bleu.0.effective_order);
        assert!(cfg.options.bleu.lowercase && cfg.options.bleu.effective_order);
        assert!(ScoreConfig::default()
            .options
            .signature(MetricId::CorpusBleu)
            .contains("eff:no"));
    }

    #[test]
    fn rejects_unknown_keys() {
        assert!(ScoreConfig::parse("[quoted_spans]\ncasefould = true").is_err());
        assert!(ScoreConfig::parse("rn = \"x.parquet\"").is_err());
        assert!(ScoreConfig::parse("[bleu]\ntokenise = \"13a\"").is_err());
    }
}
