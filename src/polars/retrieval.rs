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

use super::driver::{map_row_batches, output_len};
use crate::metrics::retrieval::{
    datapizza, rank_order, score, Judgments, RankBy, RankedMetric, Relevance, RetrievalCompat,
    RetrievalOptions, ScoreParams, Span,
};
use crate::metrics::spans::{chroma_scores, span_scores, SpanCompat, SpanOptions, SpanScores};

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

fn ints(s: &Series) -> PolarsResult<Vec<Option<i64>>> {
    Ok(s.cast(&DataType::Int64)?.i64()?.iter().collect())
}

fn floats(s: &Series) -> PolarsResult<Vec<Option<f64>>> {
    Ok(s.cast(&DataType::Float64)?.f64()?.iter().collect())
}

fn is_float(dtype: &DataType) -> bool {
    matches!(dtype, DataType::Float32 | DataType::Float64)
}

impl ItemColumn {
    fn new(metric: &str, role: &str, s: &Series) -> PolarsResult<Self> {
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
                if has("text") {
                    col.text = Some(single_chunk_str(&field("text")?)?);
                }
                if has("id") {
                    col.id = Some(single_chunk_str(&field("id")?)?);
                }
                if has("file") && has("start") && has("end") {
                    col.file = Some(single_chunk_str(&field("file")?)?);
                    col.start = Some(ints(&field("start")?)?);
                    col.end = Some(ints(&field("end")?)?);
                }
                if has("score") {
                    col.score = Some(floats(&field("score")?)?);
                }
                if has("grade") {
                    col.grade = Some(floats(&field("grade")?)?);
                }
            }
            DataType::List(v) | DataType::Array(v, _) if is_float(v) || v.is_integer() => {
                let lists = inner.cast(&DataType::List(Box::new(DataType::Float64)))?;
                let lists = lists.list()?.rechunk().into_owned();
                let arr = lists.downcast_iter().next().unwrap_or(&empty);
                let values = lists.get_inner();
                if values.null_count() > 0 {
                    polars_bail!(ComputeError: "{metric}: column '{}' ({role}): an embedding has null components", col.name);
                }
                let values: Vec<f64> = values.f64()?.into_no_null_iter().collect();
                col.embeddings = Some(Embeddings {
                    rows: rows_of(arr),
                    values,
                });
            }
            other => return Err(bad(&DataType::List(Box::new(other.clone())))),
        }
        Ok(col)
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
            Relevance::Id => self.id.as_ref().or(self.text.as_ref().filter(|_| self.id.is_none())),
            _ => self.text.as_ref(),
        }?;
        str_at(ca, i)
    }

    /// Item `i` as a span; an error names the row and the problem.
    fn span(&self, metric: &str, row: usize, i: usize) -> PolarsResult<Span<'_>> {
        let at = i - self.rows.offsets[row];
        let problem = |what: String| {
            polars_err!(ComputeError: "{metric}: column '{}' row {row} span #{at}: {what}", self.name)
        };
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
            } else if truth.id.is_some() && retrieved.id.is_none() && retrieved.file.is_none() && retrieved.text.is_some() {
                // Plain strings against id structs (qrels with grades): the strings are ids.
                Relevance::Id
            } else if retrieved.text.is_some() && truth.text.is_some() && truth.id.is_none() && retrieved.id.is_none() {
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
        Relevance::Text => retrieved.text.is_some() && truth.text.is_some(),
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
fn ranked_items(col: &ItemColumn, items: std::ops::Range<usize>, rule: RankBy, relevance: Relevance) -> Vec<usize> {
    if rule == RankBy::Order || col.score.is_none() {
        return items.collect();
    }
    let scores_all = col.score.as_ref().map(|v| &v[items.clone()]).unwrap_or(&[]);
    // trec_eval 9 (pytrec_eval) stores run scores as 32-bit floats: scores equal in f32 tie.
    let scores: Vec<Option<f64>> = scores_all
        .iter()
        .map(|s| s.map(|x| if rule == RankBy::Trec { f64::from(x as f32) } else { x }))
        .collect();
    let names: Vec<&str> = items
        .clone()
        .map(|i| col.key(if relevance == Relevance::Text { Relevance::Text } else { Relevance::Id }, i).unwrap_or(""))
        .collect();
    rank_order(rule, &scores, &names)
        .into_iter()
        .map(|j| items.start + j)
        .collect()
}

/// A ranked-list metric (`precision_at_k`, ..., `hybrid_log_rank`) over a retrieved column and
/// a ground-truth column: `Float64` named after the metric. Null where either side is null or
/// the ground truth has no relevant item (standard), or where datapizza raises (datapizza).
pub fn ranked_metric(
    metric: RankedMetric,
    retrieved: &Series,
    ground_truth: &Series,
    options: &RetrievalOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let id = metric.id();
    options
        .validate(metric)
        .map_err(|e| polars_err!(InvalidOperation: "{e}"))?;
    let run = ItemColumn::new(id, "retrieved", retrieved)?;
    let truth = ItemColumn::new(id, "ground truth", ground_truth)?;
    let len = output_len(id, &[(run.name.as_str(), run.len), (truth.name.as_str(), truth.len)])?;
    let relevance = resolve_relevance(id, options.relevance, &run, &truth)?;
    if relevance == Relevance::Span {
        run.validate_spans(id)?;
        truth.validate_spans(id)?;
    }
    let datapizza_mode = options.compat == RetrievalCompat::Datapizza;
    if datapizza_mode {
        if relevance == Relevance::Span {
            polars_bail!(InvalidOperation: "{id}: compat=\"datapizza\" judges by exact text or by embeddings, not by spans");
        }
        if !matches!(metric, RankedMetric::PrecisionAtK | RankedMetric::RecallAtK | RankedMetric::F1AtK | RankedMetric::HybridLogRank) {
            polars_bail!(InvalidOperation: "{id}: datapizza has no such metric (it has precision_at_k, recall_at_k, f1_at_k and hybrid_log_rank)");
        }
    }
    let k = options.cutoff(metric);
    let params = ScoreParams::from(options);
    let row_of = |col: &ItemColumn, i: usize| if col.len == 1 { 0 } else { i };
    let values: Vec<PolarsResult<Option<f64>>> = map_row_batches(len, parallel, |range| {
        let mut scratch = Scratch::default();
        range
            .map(|i| {
                let (Some(items), Some(truth_items)) = (
                    run.rows.items(row_of(&run, i)),
                    truth.rows.items(row_of(&truth, i)),
                ) else {
                    return Ok(None);
                };
                let order = ranked_items(&run, items, options.rank_by, relevance);
                let sc = &mut scratch;
                match relevance {
                    Relevance::Embedding => {
                        let (re, te) = (run.embeddings.as_ref().unwrap(), truth.embeddings.as_ref().unwrap());
                        sc.vectors.clear();
                        sc.truth_vectors.clear();
                        sc.vectors.extend(order.iter().filter_map(|&j| re.get(j)));
                        sc.truth_vectors.extend(truth_items.filter_map(|j| te.get(j)));
                        let dims = sc.vectors.iter().chain(sc.truth_vectors.iter()).map(|v| v.len());
                        let (lo, hi) = dims.fold((usize::MAX, 0), |(lo, hi), d| (lo.min(d), hi.max(d)));
                        if lo != usize::MAX && lo != hi {
                            polars_bail!(ComputeError: "{id}: row {i}: embeddings of different dimensions ({lo} and {hi}) in '{}' and '{}'", run.name, truth.name);
                        }
                        if datapizza_mode {
                            let kk = options.k.unwrap_or(10);
                            let t = options.similarity_threshold;
                            let r = match metric {
                                RankedMetric::PrecisionAtK => datapizza::precision_at_k_similarity(&sc.vectors, &sc.truth_vectors, kk, t),
                                RankedMetric::RecallAtK => datapizza::recall_at_k_similarity(&sc.vectors, &sc.truth_vectors, kk, t),
                                RankedMetric::F1AtK => datapizza::f1_at_k_similarity(&sc.vectors, &sc.truth_vectors, kk, t),
                                _ => datapizza::hybrid_log_rank_similarity(&sc.vectors, &sc.truth_vectors, t, options.gamma, options.alpha),
                            };
                            return Ok(r.ok());
                        }
                        sc.judgments.judge_embeddings(&sc.vectors, &sc.truth_vectors, options.similarity_threshold);
                    }
                    Relevance::Span => {
                        sc.spans.clear();
                        sc.truth_spans.clear();
                        let row = row_of(&run, i);
                        for &j in &order {
                            sc.spans.push(run.span(id, row, j)?);
                        }
                        let trow = row_of(&truth, i);
                        for j in truth_items {
                            sc.truth_spans.push(truth.span(id, trow, j)?);
                        }
                        sc.judgments.judge_spans(&sc.spans, &sc.truth_spans, options.min_overlap, options.min_overlap_fraction);
                    }
                    _ => {
                        sc.keys.clear();
                        sc.truth_keys.clear();
                        sc.grades.clear();
                        // A retrieved item without a key still takes its rank; it matches nothing.
                        const NO_KEY: &str = "\u{0}polars-rag:no-key";
                        sc.keys.extend(order.iter().map(|&j| run.key(relevance, j).unwrap_or(NO_KEY)));
                        for j in truth_items {
                            if let Some(key) = truth.key(relevance, j) {
                                sc.truth_keys.push(key);
                                sc.grades.push(truth.grade.as_ref().and_then(|g| g[j]).unwrap_or(1.0));
                            }
                        }
                        if datapizza_mode {
                            let kk = options.k.unwrap_or(10);
                            let r = match metric {
                                RankedMetric::PrecisionAtK => datapizza::precision_at_k_exact(&sc.keys, &sc.truth_keys, kk),
                                RankedMetric::RecallAtK => datapizza::recall_at_k_exact(&sc.keys, &sc.truth_keys, kk),
                                RankedMetric::F1AtK => datapizza::f1_at_k_exact(&sc.keys, &sc.truth_keys, kk),
                                _ => datapizza::hybrid_log_rank_exact(&sc.keys, &sc.truth_keys, options.gamma, options.alpha),
                            };
                            return Ok(r.ok());
                        }
                        let grades = truth.grade.is_some().then_some(sc.grades.as_slice());
                        sc.judgments.judge_keys_graded(&sc.keys, &sc.truth_keys, grades);
                    }
                }
                Ok(score(metric, &sc.judgments, k, &params))
            })
            .collect()
    });
    let values: PolarsResult<Vec<Option<f64>>> = values.into_iter().collect();
    Ok(Float64Chunked::from_iter_options(id.into(), values?.into_iter()).into_series())
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
}

impl SpanMetric {
    /// The metric id.
    pub fn id(self) -> &'static str {
        match self {
            SpanMetric::Precision => "span_precision",
            SpanMetric::Recall => "span_recall",
            SpanMetric::Iou => "span_iou",
        }
    }

    /// The metric of an id.
    pub fn from_id(id: &str) -> Option<SpanMetric> {
        [SpanMetric::Precision, SpanMetric::Recall, SpanMetric::Iou]
            .into_iter()
            .find(|m| m.id() == id)
    }

    fn pick(self, s: &SpanScores) -> f64 {
        match self {
            SpanMetric::Precision => s.precision,
            SpanMetric::Recall => s.recall,
            SpanMetric::Iou => s.iou,
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
    let run = ItemColumn::new(id, "retrieved", retrieved)?;
    let truth = ItemColumn::new(id, "golden spans", golden)?;
    for col in [&run, &truth] {
        if !col.has_spans() {
            polars_bail!(SchemaMismatch: "{id}: column '{}' must be a list of struct{{file, start, end}}", col.name);
        }
    }
    let len = output_len(id, &[(run.name.as_str(), run.len), (truth.name.as_str(), truth.len)])?;
    run.validate_spans(id)?;
    truth.validate_spans(id)?;
    let row_of = |col: &ItemColumn, i: usize| if col.len == 1 { 0 } else { i };
    let values: Vec<PolarsResult<Option<f64>>> = map_row_batches(len, parallel, |range| {
        let mut spans: Vec<Span<'_>> = Vec::new();
        let mut golden: Vec<Span<'_>> = Vec::new();
        range
            .map(|i| {
                let (r, t) = (row_of(&run, i), row_of(&truth, i));
                let (Some(items), Some(truth_items)) = (run.rows.items(r), truth.rows.items(t)) else {
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
                let scores = match options.compat {
                    SpanCompat::Standard => span_scores(&spans, &golden),
                    SpanCompat::Chroma => chroma_scores(&spans, &golden).ok(),
                };
                Ok(scores.map(|s| metric.pick(&s)))
            })
            .collect()
    });
    let values: PolarsResult<Vec<Option<f64>>> = values.into_iter().collect();
    Ok(Float64Chunked::from_iter_options(id.into(), values?.into_iter()).into_series())
}
