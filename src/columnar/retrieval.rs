//! Columnar glue of the retrieval metrics: reads a `retrieved` column and a ground-truth column
//! in any of their shapes, judges relevance row by row with [`Judgments`] and scores with the
//! kernels of [`crate::metrics::retrieval`] and [`crate::metrics::spans`].
//!
//! Accepted shapes, for either side:
//!
//! * `list[str]`: texts or ids (one item per element); a `str` column is a list of one;
//! * `list[struct]` with any of the fields `text`, `id`, `file` + `start` + `end` (a span),
//!   `score` (retrieved side, for `rank_by`), `grade` (ground-truth side, graded relevance);
//! * `list[list[f32 | f64]]` or `list[array[f32 | f64, d]]`: embeddings.
//!
//! Bad input is an error naming the metric, the column, the row and the problem: a span with a
//! missing, negative or reversed offset, embeddings of different dimensions, a shape that
//! cannot be judged the way asked.

use polars::prelude::*;
use polars_arrow::array::{Array, ListArray, Utf8ViewArray};

use super::driver::{finite_floats, map_row_batches, offsets, output_len};
use crate::engines::embed::{EmbedSettings, Embedder};
use crate::metrics::retrieval::{
    datapizza, ragas, rank_order, score, Judgments, RankBy, RankedMetric, Relevance,
    RetrievalCompat, RetrievalOptions, ScoreParams, Span,
};
use crate::metrics::spans::{
    chroma_scores, precision_omega, span_scores, SpanCompat, SpanOptions, SpanScores,
};

/// A list column's row structure: row `r` holds items `offsets[r]..offsets[r + 1]`.
struct Rows {
    offsets: Vec<usize>,
    valid: Vec<bool>,
}

impl Rows {
    fn items(&self, row: usize) -> Option<std::ops::Range<usize>> {
        self.valid[row].then(|| self.offsets[row]..self.offsets[row + 1])
    }
}

fn rows_of(arr: &ListArray<i64>) -> Rows {
    let offsets = arr.offsets().iter().map(|&o| o as usize).collect();
    let valid = (0..arr.len()).map(|i| arr.is_valid(i)).collect();
    Rows { offsets, valid }
}

/// One side of a retrieval metric, read once per column.
struct ItemColumn {
    name: String,
    len: usize,
    rows: Rows,
    /// Per item: is the item itself non-null.
    item_valid: Vec<bool>,
    text: Option<StringChunked>,
    id: Option<StringChunked>,
    file: Option<StringChunked>,
    start: Option<Vec<Option<i64>>>,
    end: Option<Vec<Option<i64>>>,
    score: Option<Vec<Option<f64>>>,
    grade: Option<Vec<Option<f64>>>,
    embeddings: Option<Embeddings>,
}

struct Embeddings {
    rows: Rows,
    values: Vec<f64>,
}

impl Embeddings {
    fn get(&self, item: usize) -> Option<&[f64]> {
        self.rows.items(item).map(|r| &self.values[r])
    }
}

fn single_chunk_str(s: &Series) -> PolarsResult<StringChunked> {
    Ok(s.cast(&DataType::String)?.rechunk().str()?.clone())
}

fn str_at(ca: &StringChunked, i: usize) -> Option<&str> {
    let arr: &Utf8ViewArray = ca.downcast_iter().next()?;
    arr.get(i)
}

fn floats(s: &Series) -> PolarsResult<Vec<Option<f64>>> {
    Ok(s.cast(&DataType::Float64)?.f64()?.iter().collect())
}

fn is_float(dtype: &DataType) -> bool {
    matches!(dtype, DataType::Float32 | DataType::Float64)
}

/// Which struct fields a computation reads (the others are not materialised).
#[derive(Clone, Copy, Debug)]
struct Needs {
    text: bool,
    id: bool,
    spans: bool,
    score: bool,
    grade: bool,
}

impl Needs {
    const ALL: Needs = Needs {
        text: true,
        id: true,
        spans: true,
        score: true,
        grade: true,
    };

    /// What judging with `options` reads; `Auto` needs every field to decide.
    fn for_options(options: &RetrievalOptions) -> Needs {
        let (text, id, spans) = match options.relevance {
            Relevance::Auto => (true, true, true),
            Relevance::Text | Relevance::Similarity => (true, false, false),
            // Plain strings stand for ids, so the text field is read too.
            Relevance::Id => (true, true, false),
            Relevance::Span => (false, false, true),
            // Texts are read in case they are to be embedded (when a side is not vectors).
            Relevance::Embedding => (true, false, false),
        };
        Needs {
            text,
            id: id || (options.rank_by == RankBy::Trec),
            spans,
            score: options.rank_by != RankBy::Order,
            grade: true,
        }
    }
}

impl ItemColumn {
    fn new(metric: &str, role: &str, s: &Series) -> PolarsResult<Self> {
        Self::reading(metric, role, s, Needs::ALL)
    }

    fn reading(metric: &str, role: &str, s: &Series, needs: Needs) -> PolarsResult<Self> {
        let name = s.name().to_string();
        let bad = |dtype: &DataType| {
            polars_err!(SchemaMismatch:
                "{metric}: column '{name}' ({role}) must be list[str], list[struct{{text, id, file, start, end, score, grade}}] or a list of embeddings (list[list[f32]] / list[array[f32, d]]), got {dtype}")
        };
        // A plain str column is one item per row.
        let s = match s.dtype() {
            DataType::String => {
                let one_each: ListChunked = s
                    .str()?
                    .iter()
                    .map(|v| v.map(|v| Series::new(PlSmallStr::EMPTY, [v])))
                    .collect();
                one_each.into_series()
            }
            DataType::Null => s.cast(&DataType::List(Box::new(DataType::String)))?,
            DataType::List(_) => s.clone(),
            other => return Err(bad(other)),
        };
        let ca = s.list()?.rechunk().into_owned();
        let len = ca.len();
        let empty = ListArray::<i64>::new_empty(ca.dtype().to_arrow(CompatLevel::newest()));
        let arr = ca.downcast_iter().next().unwrap_or(&empty);
        let rows = rows_of(arr);
        let inner = ca.get_inner();
        let mut col = ItemColumn {
            name: name.clone(),
            len,
            rows,
            item_valid: (0..inner.len()).map(|_| true).collect(),
            text: None,
            id: None,
            file: None,
            start: None,
            end: None,
            score: None,
            grade: None,
            embeddings: None,
        };
        if inner.null_count() > 0 {
            let mask = inner.is_not_null();
            col.item_valid = mask.downcast_iter().flat_map(|a| a.values_iter()).collect();
        }
        match inner.dtype() {
            DataType::String | DataType::Null => col.text = Some(single_chunk_str(&inner)?),
            DataType::Struct(fields) => {
                let st = inner.struct_()?;
                let has = |f: &str| fields.iter().any(|x| x.name().as_str() == f);
                let field = |f: &str| st.field_by_name(f);
                if has("text") && needs.text {
                    col.text = Some(single_chunk_str(&field("text")?)?);
                }
                if has("id") && needs.id {
                    col.id = Some(single_chunk_str(&field("id")?)?);
                }
                if has("file") && has("start") && has("end") && needs.spans {
                    col.file = Some(single_chunk_str(&field("file")?)?);
                    col.start = Some(offsets(metric, &name, "start", &field("start")?)?);
                    col.end = Some(offsets(metric, &name, "end", &field("end")?)?);
                }
                if has("score") && needs.score {
                    col.score = Some(floats(&field("score")?)?);
                }
                if has("grade") && needs.grade {
                    col.grade = Some(finite_floats(metric, &name, "grade", &field("grade")?)?);
                }
            }
            DataType::List(v) | DataType::Array(v, _) if is_float(v) || v.is_integer() => {
                let lists = inner.cast(&DataType::List(Box::new(DataType::Float64)))?;
                let lists = lists.list()?.rechunk().into_owned();
                let arr = lists.downcast_iter().next().unwrap_or(&empty);
                let values = lists.get_inner();
                let rows = rows_of(arr);
                let values: Vec<f64> = if values.null_count() > 0 {
                    // A null vector of a fixed-width array column still has (null) slots; only
                    // the components of present vectors must be numbers.
                    let values: Vec<Option<f64>> = values.f64()?.iter().collect();
                    let present = (0..rows.valid.len()).filter_map(|item| rows.items(item));
                    for range in present {
                        if values[range].iter().any(Option::is_none) {
                            polars_bail!(ComputeError: "{metric}: column '{}' ({role}): an embedding has null components", col.name);
                        }
                    }
                    values.into_iter().map(|v| v.unwrap_or(0.0)).collect()
                } else {
                    values.f64()?.into_no_null_iter().collect()
                };
                col.embeddings = Some(Embeddings { rows, values });
            }
            other => return Err(bad(&DataType::List(Box::new(other.clone())))),
        }
        Ok(col)
    }

    /// The column's texts as vectors of the model of `settings` (every text of the column in
    /// one call to the shared embedder, so repeats and cached vectors cost nothing); a null
    /// item or text has no vector.
    fn embed_texts(&self, metric: &str, settings: &EmbedSettings) -> PolarsResult<Embeddings> {
        let Some(text) = &self.text else {
            polars_bail!(ComputeError: "{metric}: column '{}' has no texts to embed", self.name);
        };
        let texts: Vec<Option<&str>> = (0..self.item_valid.len())
            .map(|i| str_at(text, i).filter(|_| self.item_valid[i]))
            .collect();
        let vectors = Embedder::shared(settings, metric)?.embed(metric, &texts)?;
        let mut offsets = Vec::with_capacity(vectors.len() + 1);
        let mut valid = Vec::with_capacity(vectors.len());
        let mut values = Vec::new();
        offsets.push(0);
        for vector in &vectors {
            valid.push(vector.is_some());
            values.extend(vector.iter().flatten().map(|&x| f64::from(x)));
            offsets.push(values.len());
        }
        Ok(Embeddings {
            rows: Rows { offsets, valid },
            values,
        })
    }

    fn has_spans(&self) -> bool {
        self.file.is_some()
    }

    /// The key of item `i` for `relevance` (text or id).
    fn key(&self, relevance: Relevance, i: usize) -> Option<&str> {
        if !self.item_valid[i] {
            return None;
        }
        let ca = match relevance {
            Relevance::Id => self
                .id
                .as_ref()
                .or(self.text.as_ref().filter(|_| self.id.is_none())),
            _ => self.text.as_ref(),
        }?;
        str_at(ca, i)
    }

    /// Item `i` as a span; an error names the row and the problem.
    fn span(&self, metric: &str, row: usize, i: usize) -> PolarsResult<Span<'_>> {
        let at = i - self.rows.offsets[row];
        let problem = |what: String| polars_err!(ComputeError: "{metric}: column '{}' row {row} span #{at}: {what}", self.name);
        let file = self.file.as_ref().and_then(|f| str_at(f, i));
        let start = self.start.as_ref().and_then(|v| v[i]);
        let end = self.end.as_ref().and_then(|v| v[i]);
        match (self.item_valid[i], file, start, end) {
            (true, Some(file), Some(start), Some(end)) => {
                if start < 0 || end < 0 {
                    return Err(problem(format!("negative offset ({start}, {end})")));
                }
                if start > end {
                    return Err(problem(format!("start {start} > end {end}")));
                }
                Ok(Span {
                    file,
                    start: start as u64,
                    end: end as u64,
                })
            }
            _ => Err(problem("file, start or end is null".into())),
        }
    }

    /// Checks every span of every row before anything is scored.
    fn validate_spans(&self, metric: &str) -> PolarsResult<()> {
        for row in 0..self.len {
            if let Some(items) = self.rows.items(row) {
                for i in items {
                    self.span(metric, row, i)?;
                }
            }
        }
        Ok(())
    }
}

/// How the two sides are compared, once `Relevance::Auto` is resolved from their shapes.
fn resolve_relevance(
    metric: &str,
    asked: Relevance,
    retrieved: &ItemColumn,
    truth: &ItemColumn,
) -> PolarsResult<Relevance> {
    let both = |f: fn(&ItemColumn) -> bool| f(retrieved) && f(truth);
    let relevance = match asked {
        Relevance::Auto => {
            if both(|c| c.embeddings.is_some()) {
                Relevance::Embedding
            } else if both(ItemColumn::has_spans) {
                Relevance::Span
            } else if retrieved.id.is_some() && truth.id.is_some() {
                Relevance::Id
            } else if truth.id.is_some()
                && retrieved.id.is_none()
                && retrieved.file.is_none()
                && retrieved.text.is_some()
            {
                // Plain strings against id structs (qrels with grades): the strings are ids.
                Relevance::Id
            } else if retrieved.text.is_some()
                && truth.text.is_some()
                && truth.id.is_none()
                && retrieved.id.is_none()
            {
                Relevance::Text
            } else if retrieved.id.is_some() && retrieved.text.is_some() && truth.text.is_some() {
                polars_bail!(InvalidOperation: "{metric}: '{}' has both 'id' and 'text' fields and '{}' is a list of strings: say relevance=\"id\" or relevance=\"text\"", retrieved.name, truth.name)
            } else if retrieved.id.is_some() && truth.text.is_some() {
                Relevance::Id
            } else {
                polars_bail!(InvalidOperation: "{metric}: cannot judge '{}' against '{}': give both sides texts, ids, spans (file, start, end) or embeddings", retrieved.name, truth.name)
            }
        }
        other => other,
    };
    let ok = match relevance {
        Relevance::Embedding => both(|c| c.embeddings.is_some()),
        Relevance::Span => both(ItemColumn::has_spans),
        Relevance::Id => {
            (retrieved.id.is_some() || retrieved.text.is_some() && retrieved.file.is_none())
                && (truth.id.is_some() || truth.text.is_some())
        }
        Relevance::Text | Relevance::Similarity => retrieved.text.is_some() && truth.text.is_some(),
        Relevance::Auto => false,
    };
    if !ok {
        polars_bail!(InvalidOperation: "{metric}: relevance=\"{}\" needs that field on both sides; '{}' and '{}' do not have it", relevance.name(), retrieved.name, truth.name);
    }
    Ok(relevance)
}

/// Per-thread buffers.
#[derive(Default)]
struct Scratch<'a> {
    judgments: Judgments,
    keys: Vec<&'a str>,
    truth_keys: Vec<&'a str>,
    grades: Vec<f64>,
    spans: Vec<Span<'a>>,
    truth_spans: Vec<Span<'a>>,
    vectors: Vec<&'a [f64]>,
    truth_vectors: Vec<&'a [f64]>,
}

/// The item order of a retrieved row under `rank_by` (indices into the column's items).
fn ranked_items(
    col: &ItemColumn,
    items: std::ops::Range<usize>,
    rule: RankBy,
    relevance: Relevance,
) -> Vec<usize> {
    if rule == RankBy::Order || col.score.is_none() {
        return items.collect();
    }
    let scores_all = col.score.as_ref().map(|v| &v[items.clone()]).unwrap_or(&[]);
    // trec_eval 9 (pytrec_eval) stores run scores as 32-bit floats: scores equal in f32 tie.
    let scores: Vec<Option<f64>> = scores_all
        .iter()
        .map(|s| {
            s.map(|x| {
                if rule == RankBy::Trec {
                    f64::from(x as f32)
                } else {
                    x
                }
            })
        })
        .collect();
    let names: Vec<&str> = items
        .clone()
        .map(|i| {
            col.key(
                if relevance == Relevance::Text {
                    Relevance::Text
                } else {
                    Relevance::Id
                },
                i,
            )
            .unwrap_or("")
        })
        .collect();
    rank_order(rule, &scores, &names)
        .into_iter()
        .map(|j| items.start + j)
        .collect()
}

/// A ranked-list metric (`precision_at_k`, ..., `hybrid_log_rank`) over a retrieved column and
/// a ground-truth column: `Float64` named after the metric. Null where either side is null or
/// the ground truth is empty (standard; a judged query with nothing relevant scores 0, as in
/// trec_eval), or where datapizza raises (datapizza).
pub fn ranked_metric(
    metric: RankedMetric,
    retrieved: &Series,
    ground_truth: &Series,
    options: &RetrievalOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let mut out = ranked_metrics(
        &[(metric, options.clone())],
        retrieved,
        ground_truth,
        parallel,
    )?;
    Ok(out.remove(0))
}

/// When the metrics that embed texts name different models: the metrics of each pass (the
/// first pass also takes every metric that does not embed). `None` when one pass does.
fn passes_per_embedder(metrics: &[(RankedMetric, RetrievalOptions)]) -> Option<Vec<Vec<usize>>> {
    let mut models: Vec<&Option<EmbedSettings>> = Vec::new();
    let mut passes: Vec<Vec<usize>> = vec![Vec::new()];
    for (i, (_, options)) in metrics.iter().enumerate() {
        if options.relevance != Relevance::Embedding {
            passes[0].push(i);
            continue;
        }
        match models.iter().position(|m| **m == options.embedder) {
            Some(p) => passes[p].push(i),
            None => {
                if !models.is_empty() {
                    passes.push(Vec::new());
                }
                models.push(&options.embedder);
                passes[models.len() - 1].push(i);
            }
        }
    }
    (passes.len() > 1).then_some(passes)
}

/// Whether two option sets judge relevance the same way (they may differ in cutoff, α, γ), so
/// one judging per row serves both.
fn same_judging(a: &RetrievalOptions, b: &RetrievalOptions) -> bool {
    a.relevance == b.relevance
        && a.min_overlap == b.min_overlap
        && a.min_overlap_fraction == b.min_overlap_fraction
        && a.similarity_threshold == b.similarity_threshold
        && a.string_distance == b.string_distance
        && a.string_similarity_threshold == b.string_similarity_threshold
        && a.rank_by == b.rank_by
        && a.embedder == b.embedder
        && a.compat == RetrievalCompat::Standard
        && b.compat == RetrievalCompat::Standard
}

/// Several ranked-list metrics over the same two columns, read once; metrics whose options
/// judge relevance the same way share one judging per row. One `Float64` series per metric, in
/// order, each equal to what [`ranked_metric`] gives alone.
pub fn ranked_metrics(
    metrics: &[(RankedMetric, RetrievalOptions)],
    retrieved: &Series,
    ground_truth: &Series,
    parallel: bool,
) -> PolarsResult<Vec<Series>> {
    let Some((first, _)) = metrics.first() else {
        return Ok(Vec::new());
    };
    if let Some(passes) = passes_per_embedder(metrics) {
        // One pass per model, so each column is embedded once per model; results back in order.
        let mut out: Vec<Option<Series>> = vec![None; metrics.len()];
        for pass in passes {
            let subset: Vec<(RankedMetric, RetrievalOptions)> =
                pass.iter().map(|&i| metrics[i].clone()).collect();
            let scored = ranked_metrics(&subset, retrieved, ground_truth, parallel)?;
            for (i, series) in pass.into_iter().zip(scored) {
                out[i] = Some(series);
            }
        }
        return Ok(out.into_iter().flatten().collect());
    }
    let names: Vec<&str> = metrics.iter().map(|(m, _)| m.id()).collect();
    let id = if metrics.len() == 1 {
        first.id()
    } else {
        "retrieval metrics"
    };
    let mut needs = Needs {
        text: false,
        id: false,
        spans: false,
        score: false,
        grade: true,
    };
    for (metric, options) in metrics {
        options.validate(*metric)?;
        let n = Needs::for_options(options);
        needs = Needs {
            text: needs.text || n.text,
            id: needs.id || n.id,
            spans: needs.spans || n.spans,
            score: needs.score || n.score,
            grade: true,
        };
    }
    let mut run = ItemColumn::reading(id, "retrieved", retrieved, needs)?;
    let mut truth = ItemColumn::reading(id, "ground truth", ground_truth, needs)?;
    if let Some((_, options)) = metrics
        .iter()
        .find(|(_, o)| o.relevance == Relevance::Embedding)
    {
        let settings = options.embedder.clone().unwrap_or_default();
        for side in [&mut run, &mut truth] {
            if side.embeddings.is_none() && side.text.is_some() {
                side.embeddings = Some(side.embed_texts(id, &settings)?);
            }
        }
    }
    let len = output_len(
        id,
        &[
            (run.name.as_str(), run.len),
            (truth.name.as_str(), truth.len),
        ],
    )?;
    // Per metric: its resolved relevance, and the judging group it belongs to (the index of the
    // first metric judging the same way).
    let mut plans: Vec<(RankedMetric, RetrievalOptions, Relevance, usize)> = Vec::new();
    let mut spans_checked = false;
    for (i, (metric, options)) in metrics.iter().enumerate() {
        let mid = metric.id();
        let relevance = resolve_relevance(mid, options.relevance, &run, &truth)?;
        if relevance == Relevance::Span && !spans_checked {
            run.validate_spans(mid)?;
            truth.validate_spans(mid)?;
            spans_checked = true;
        }
        if options.compat == RetrievalCompat::Datapizza {
            if matches!(relevance, Relevance::Span | Relevance::Similarity) {
                polars_bail!(InvalidOperation: "{mid}: compat=\"datapizza\" judges by exact text or by embeddings, not by {}", relevance.name());
            }
            if !matches!(
                metric,
                RankedMetric::PrecisionAtK
                    | RankedMetric::RecallAtK
                    | RankedMetric::F1AtK
                    | RankedMetric::HybridLogRank
            ) {
                polars_bail!(InvalidOperation: "{mid}: datapizza has no such metric (it has precision_at_k, recall_at_k, f1_at_k and hybrid_log_rank)");
            }
        }
        if options.compat == RetrievalCompat::Ragas {
            let by_similarity = relevance == Relevance::Similarity;
            let defined = match metric {
                RankedMetric::PrecisionAtK => matches!(relevance, Relevance::Id | Relevance::Text),
                RankedMetric::RecallAtK => {
                    by_similarity || matches!(relevance, Relevance::Id | Relevance::Text)
                }
                _ => by_similarity,
            };
            if !defined {
                polars_bail!(InvalidOperation: "{mid}: compat=\"ragas\" with relevance=\"{}\" is no Ragas metric: precision_at_k and recall_at_k by id or text (IDBasedContextPrecision / Recall), recall_at_k and average_precision by relevance=\"similarity\" (NonLLMContextRecall / NonLLMContextPrecisionWithReference)", relevance.name());
            }
        }
        let group = plans
            .iter()
            .position(|(_, o, r, _)| *r == relevance && same_judging(o, options))
            .map_or(i, |j| plans[j].3);
        plans.push((*metric, options.clone(), relevance, group));
    }
    let row_of = |col: &ItemColumn, i: usize| if col.len == 1 { 0 } else { i };
    let rows: Vec<PolarsResult<Vec<Option<f64>>>> = map_row_batches(len, parallel, |range| {
        let mut scratch = Scratch::default();
        let mut judged_group = usize::MAX;
        range
            .map(|i| {
                let (Some(items), Some(truth_items)) = (
                    run.rows.items(row_of(&run, i)),
                    truth.rows.items(row_of(&truth, i)),
                ) else {
                    return Ok(vec![None; plans.len()]);
                };
                judged_group = usize::MAX;
                let mut values = Vec::with_capacity(plans.len());
                for (metric, options, relevance, group) in &plans {
                    let value = if options.compat == RetrievalCompat::Ragas {
                        ragas_row(
                            *metric,
                            options,
                            *relevance,
                            &run,
                            &truth,
                            items.clone(),
                            truth_items.clone(),
                            &mut scratch,
                        )
                    } else if options.compat == RetrievalCompat::Datapizza {
                        datapizza_row(
                            *metric,
                            options,
                            *relevance,
                            &run,
                            &truth,
                            items.clone(),
                            truth_items.clone(),
                            &mut scratch,
                            i,
                        )?
                    } else {
                        if judged_group != *group {
                            judge_row(
                                id,
                                options,
                                *relevance,
                                &run,
                                &truth,
                                i,
                                items.clone(),
                                truth_items.clone(),
                                &mut scratch,
                            )?;
                            judged_group = *group;
                        }
                        score(
                            *metric,
                            &scratch.judgments,
                            options.cutoff(*metric),
                            &ScoreParams::from(options),
                        )
                    };
                    values.push(value);
                }
                Ok(values)
            })
            .collect()
    });
    let mut columns: Vec<Vec<Option<f64>>> = vec![Vec::with_capacity(len); plans.len()];
    for row in rows {
        for (column, value) in columns.iter_mut().zip(row?) {
            column.push(value);
        }
    }
    Ok(columns
        .into_iter()
        .zip(names)
        .map(|(values, name)| {
            Float64Chunked::from_iter_options(name.into(), values.into_iter()).into_series()
        })
        .collect())
}

/// Fills `sc.judgments` for row `i` (standard definitions).
#[allow(clippy::too_many_arguments)]
fn judge_row<'a>(
    id: &str,
    options: &RetrievalOptions,
    relevance: Relevance,
    run: &'a ItemColumn,
    truth: &'a ItemColumn,
    i: usize,
    items: std::ops::Range<usize>,
    truth_items: std::ops::Range<usize>,
    sc: &mut Scratch<'a>,
) -> PolarsResult<()> {
    let row_of = |col: &ItemColumn| if col.len == 1 { 0 } else { i };
    let order = ranked_items(run, items, options.rank_by, relevance);
    match relevance {
        Relevance::Embedding => {
            collect_vectors(id, run, truth, &order, truth_items, sc, i, true)?;
            sc.judgments.judge_embeddings(
                &sc.vectors,
                &sc.truth_vectors,
                options.similarity_threshold,
            );
        }
        Relevance::Span => {
            sc.spans.clear();
            sc.truth_spans.clear();
            for &j in &order {
                sc.spans.push(run.span(id, row_of(run), j)?);
            }
            for j in truth_items {
                sc.truth_spans.push(truth.span(id, row_of(truth), j)?);
            }
            sc.judgments.judge_spans(
                &sc.spans,
                &sc.truth_spans,
                options.min_overlap,
                options.min_overlap_fraction,
            );
        }
        Relevance::Similarity => {
            collect_keys(run, truth, relevance, &order, truth_items, sc);
            sc.judgments.judge_strings(
                &sc.keys,
                &sc.truth_keys,
                options.string_distance,
                options.string_similarity_threshold,
            );
        }
        _ => {
            collect_keys(run, truth, relevance, &order, truth_items, sc);
            let grades = truth.grade.is_some().then_some(sc.grades.as_slice());
            sc.judgments
                .judge_keys_graded(&sc.keys, &sc.truth_keys, grades);
        }
    }
    Ok(())
}

/// One Ragas metric of a row (null where Ragas raises or returns NaN): the retrieved list
/// ranked and cut to `k` when given, keys (ids or texts) on both sides.
#[allow(clippy::too_many_arguments)]
fn ragas_row<'a>(
    metric: RankedMetric,
    options: &RetrievalOptions,
    relevance: Relevance,
    run: &'a ItemColumn,
    truth: &'a ItemColumn,
    items: std::ops::Range<usize>,
    truth_items: std::ops::Range<usize>,
    sc: &mut Scratch<'a>,
) -> Option<f64> {
    let mut order = ranked_items(run, items, options.rank_by, relevance);
    if let Some(k) = options.cutoff(metric) {
        order.truncate(k);
    }
    collect_keys(run, truth, relevance, &order, truth_items, sc);
    let (r, g) = (&sc.keys, &sc.truth_keys);
    let (distance, threshold) = (options.string_distance, options.string_similarity_threshold);
    match (metric, relevance) {
        (RankedMetric::PrecisionAtK, _) => ragas::id_precision(r, g),
        (RankedMetric::RecallAtK, Relevance::Similarity) => {
            ragas::context_recall_similarity(r, g, distance, threshold)
        }
        (RankedMetric::RecallAtK, _) => ragas::id_recall(r, g),
        _ => ragas::context_precision_similarity(r, g, distance, threshold),
    }
}

/// The keys of a row's ranked items and of its ground truth (with grades) into `sc`.
fn collect_keys<'a>(
    run: &'a ItemColumn,
    truth: &'a ItemColumn,
    relevance: Relevance,
    order: &[usize],
    truth_items: std::ops::Range<usize>,
    sc: &mut Scratch<'a>,
) {
    sc.keys.clear();
    sc.truth_keys.clear();
    sc.grades.clear();
    // A retrieved item without a key still takes its rank; it matches nothing.
    const NO_KEY: &str = "\u{0}polars-rag:no-key";
    sc.keys.extend(
        order
            .iter()
            .map(|&j| run.key(relevance, j).unwrap_or(NO_KEY)),
    );
    for j in truth_items {
        if let Some(key) = truth.key(relevance, j) {
            sc.truth_keys.push(key);
            sc.grades
                .push(truth.grade.as_ref().and_then(|g| g[j]).unwrap_or(1.0));
        }
    }
}

/// The embeddings of a row's ranked items and of its ground truth into `sc`; with `same_dims`,
/// an error when their dimensions differ (datapizza checks only the vectors it compares). A
/// null retrieved vector keeps its rank as an empty slice that matches nothing, as an item
/// without a key does; null ground-truth vectors are left out. Returns whether the ground
/// truth had a null vector.
#[allow(clippy::too_many_arguments)]
fn collect_vectors<'a>(
    id: &str,
    run: &'a ItemColumn,
    truth: &'a ItemColumn,
    order: &[usize],
    truth_items: std::ops::Range<usize>,
    sc: &mut Scratch<'a>,
    i: usize,
    same_dims: bool,
) -> PolarsResult<bool> {
    let (Some(re), Some(te)) = (run.embeddings.as_ref(), truth.embeddings.as_ref()) else {
        polars_bail!(ComputeError: "{id}: embedding relevance needs embeddings on both sides");
    };
    sc.vectors.clear();
    sc.truth_vectors.clear();
    sc.vectors
        .extend(order.iter().map(|&j| re.get(j).unwrap_or(&[])));
    let truth_len = truth_items.len();
    sc.truth_vectors
        .extend(truth_items.filter_map(|j| te.get(j)));
    let dims = sc
        .vectors
        .iter()
        .chain(sc.truth_vectors.iter())
        .filter(|v| !v.is_empty())
        .map(|v| v.len());
    let (lo, hi) = dims.fold((usize::MAX, 0), |(lo, hi), d| (lo.min(d), hi.max(d)));
    if same_dims && lo != usize::MAX && lo != hi {
        polars_bail!(ComputeError: "{id}: row {i}: embeddings of different dimensions ({lo} and {hi}) in '{}' and '{}'", run.name, truth.name);
    }
    Ok(sc.truth_vectors.len() < truth_len)
}

/// One datapizza metric of row `i` (null where datapizza raises).
#[allow(clippy::too_many_arguments)]
fn datapizza_row<'a>(
    metric: RankedMetric,
    options: &RetrievalOptions,
    relevance: Relevance,
    run: &'a ItemColumn,
    truth: &'a ItemColumn,
    items: std::ops::Range<usize>,
    truth_items: std::ops::Range<usize>,
    sc: &mut Scratch<'a>,
    i: usize,
) -> PolarsResult<Option<f64>> {
    let id = metric.id();
    let order = ranked_items(run, items, options.rank_by, relevance);
    let k = options.k.unwrap_or(10);
    let result = if relevance == Relevance::Embedding {
        let null_truth = collect_vectors(id, run, truth, &order, truth_items, sc, i, false)?;
        let (r, g, t) = (&sc.vectors, &sc.truth_vectors, options.similarity_threshold);
        // datapizza builds a matrix of `retrieved[:k]` (the whole list for hybrid_log_rank) and
        // of the ground truth: a missing vector there makes it raise.
        let compared = match metric {
            RankedMetric::HybridLogRank => &r[..],
            _ => datapizza::head(r, k),
        };
        if null_truth || compared.iter().any(|v| v.is_empty()) {
            return Ok(None);
        }
        match metric {
            RankedMetric::PrecisionAtK => datapizza::precision_at_k_similarity(r, g, k, t),
            RankedMetric::RecallAtK => datapizza::recall_at_k_similarity(r, g, k, t),
            RankedMetric::F1AtK => datapizza::f1_at_k_similarity(r, g, k, t),
            _ => datapizza::hybrid_log_rank_similarity(r, g, t, options.gamma, options.alpha),
        }
    } else {
        collect_keys(run, truth, relevance, &order, truth_items, sc);
        let (r, g) = (&sc.keys, &sc.truth_keys);
        match metric {
            RankedMetric::PrecisionAtK => datapizza::precision_at_k_exact(r, g, k),
            RankedMetric::RecallAtK => datapizza::recall_at_k_exact(r, g, k),
            RankedMetric::F1AtK => datapizza::f1_at_k_exact(r, g, k),
            _ => datapizza::hybrid_log_rank_exact(r, g, options.gamma, options.alpha),
        }
    };
    Ok(result.ok())
}

/// The span metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanMetric {
    /// `span_precision`.
    Precision,
    /// `span_recall`.
    Recall,
    /// `span_iou`.
    Iou,
    /// `span_precision_omega`: the precision the chunking allows (the first column is the whole
    /// chunking, not the retrieved chunks).
    PrecisionOmega,
}

impl SpanMetric {
    /// The metric id.
    pub fn id(self) -> &'static str {
        match self {
            SpanMetric::Precision => "span_precision",
            SpanMetric::Recall => "span_recall",
            SpanMetric::Iou => "span_iou",
            SpanMetric::PrecisionOmega => "span_precision_omega",
        }
    }

    /// The metric of an id.
    pub fn from_id(id: &str) -> Option<SpanMetric> {
        [
            SpanMetric::Precision,
            SpanMetric::Recall,
            SpanMetric::Iou,
            SpanMetric::PrecisionOmega,
        ]
        .into_iter()
        .find(|m| m.id() == id)
    }

    /// The metric of one query from its spans; `None` where it is null.
    fn score(self, spans: &[Span<'_>], golden: &[Span<'_>], compat: SpanCompat) -> Option<f64> {
        let pick = |s: SpanScores| match self {
            SpanMetric::Precision => s.precision,
            SpanMetric::Recall => s.recall,
            _ => s.iou,
        };
        match (self, compat) {
            (SpanMetric::PrecisionOmega, _) => {
                precision_omega(spans, golden, compat).ok().flatten()
            }
            (_, SpanCompat::Standard) => span_scores(spans, golden).map(pick),
            (_, SpanCompat::Chroma) => chroma_scores(spans, golden).ok().map(pick),
        }
    }

    /// What the first column holds, for error messages.
    fn first_role(self) -> &'static str {
        match self {
            SpanMetric::PrecisionOmega => "chunks",
            _ => "retrieved",
        }
    }
}

/// A span metric over a retrieved column and a golden-span column (both lists of
/// `struct{file, start, end}`): `Float64` named after the metric. Every span is validated first.
/// Null where either side is null or the golden spans cover nothing (standard), or where
/// Chroma divides by zero (chroma).
pub fn span_metric(
    metric: SpanMetric,
    retrieved: &Series,
    golden: &Series,
    options: &SpanOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let id = metric.id();
    let run = ItemColumn::new(id, metric.first_role(), retrieved)?;
    let truth = ItemColumn::new(id, "golden spans", golden)?;
    for col in [&run, &truth] {
        if !col.has_spans() {
            polars_bail!(SchemaMismatch: "{id}: column '{}' must be a list of struct{{file, start, end}}", col.name);
        }
    }
    let len = output_len(
        id,
        &[
            (run.name.as_str(), run.len),
            (truth.name.as_str(), truth.len),
        ],
    )?;
    run.validate_spans(id)?;
    truth.validate_spans(id)?;
    let row_of = |col: &ItemColumn, i: usize| if col.len == 1 { 0 } else { i };
    let values: Vec<PolarsResult<Option<f64>>> = map_row_batches(len, parallel, |range| {
        let mut spans: Vec<Span<'_>> = Vec::new();
        let mut golden: Vec<Span<'_>> = Vec::new();
        range
            .map(|i| {
                let (r, t) = (row_of(&run, i), row_of(&truth, i));
                let (Some(items), Some(truth_items)) = (run.rows.items(r), truth.rows.items(t))
                else {
                    return Ok(None);
                };
                spans.clear();
                golden.clear();
                for j in items {
                    spans.push(run.span(id, r, j)?);
                }
                for j in truth_items {
                    golden.push(truth.span(id, t, j)?);
                }
                Ok(metric.score(&spans, &golden, options.compat))
            })
            .collect()
    });
    let values: PolarsResult<Vec<Option<f64>>> = values.into_iter().collect();
    Ok(Float64Chunked::from_iter_options(id.into(), values?.into_iter()).into_series())
}
