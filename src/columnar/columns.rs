//! Per-metric columnar glue: the inputs each metric reads through the driver, the kernel it
//! calls, and the schema of its output. Shared by the Rust `Expr` builders, the Python plugin and
//! the CLI, so all three return the same columns.

use polars::prelude::*;

use super::driver::{map_row_batches, output_len, struct_series, StrColumn, TextListColumn};
use crate::metrics::bleu::{self, BleuCompat, BleuOptions, BleuStats};
use crate::metrics::chrf::{self, ChrfOptions};
use crate::metrics::citation::{
    citation_alignment, QuotedSpans, QuotedSpansOptions, Scratch, SpanCounts,
};
use crate::metrics::lexical::{
    self, Check, CheckKind, CheckOutcome, CitationIndicatorOptions, PreparedChecks,
};
use crate::metrics::rouge::{self, Prf, RougeCompat, RougeOptions, RougeScores};
use crate::metrics::similarity::{self, StringSimilarityOptions};

/// Output dtype of `quoted_spans`: `struct{matched: u32, total: u32, score: f64}`.
pub fn quoted_spans_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("matched".into(), DataType::UInt32),
        Field::new("total".into(), DataType::UInt32),
        Field::new("score".into(), DataType::Float64),
    ])
}

/// Output dtype of `citation_alignment`: Ragas' result dictionary as a struct of floats.
pub fn citation_alignment_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("citation_alignment_quoted_spans".into(), DataType::Float64),
        Field::new("matched".into(), DataType::Float64),
        Field::new("total".into(), DataType::Float64),
    ])
}

/// Per-row span counts; `None` where the answer is null.
fn quoted_spans_counts(
    metric: &str,
    answer: &Series,
    sources: &Series,
    options: &QuotedSpansOptions,
    parallel: bool,
) -> PolarsResult<Vec<Option<SpanCounts>>> {
    let answers = StrColumn::new(metric, "answer", answer)?;
    let source_lists = TextListColumn::new(metric, "sources", sources)?;
    let len = output_len(
        metric,
        &[
            (answer.name().as_str(), answers.len()),
            (sources.name().as_str(), source_lists.len()),
        ],
    )?;
    let scorer = QuotedSpans::new(options.clone());
    Ok(map_row_batches(len, parallel, |range| {
        let answer_rows = answers.rows(range.clone());
        let source_rows = source_lists.rows(range);
        let mut scratch = Scratch::default();
        answer_rows
            .iter()
            .enumerate()
            .map(|(i, answer)| {
                answer.map(|a| scorer.score(a, source_rows.get(i).unwrap_or(&[]), &mut scratch))
            })
            .collect()
    }))
}

/// `quoted_spans` over columns: one `struct{matched, total, score}` per row; null answer → null
/// row; null or empty sources → spans counted, none matched; `score` null when nothing is quoted.
pub fn quoted_spans(
    answer: &Series,
    sources: &Series,
    options: &QuotedSpansOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let counts = quoted_spans_counts("quoted_spans", answer, sources, options, parallel)?;
    let matched: UInt32Chunked = counts
        .iter()
        .map(|c| Some(c.map_or(0, |c| c.matched)))
        .collect();
    let total: UInt32Chunked = counts
        .iter()
        .map(|c| Some(c.map_or(0, |c| c.total)))
        .collect();
    let score: Float64Chunked = counts.iter().map(|c| c.and_then(|c| c.score())).collect();
    let valid: Vec<bool> = counts.iter().map(Option::is_some).collect();
    struct_series(
        "quoted_spans",
        &[
            matched.with_name("matched".into()).into_series(),
            total.with_name("total".into()).into_series(),
            score.with_name("score".into()).into_series(),
        ],
        &valid,
    )
}

/// `citation_alignment` over columns: one row, Ragas' dataset convention (spans counted over all
/// rows; 0.0 when nothing is quoted anywhere). Null answers contribute nothing.
pub fn citation_alignment_series(
    answer: &Series,
    sources: &Series,
    options: &QuotedSpansOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let counts = quoted_spans_counts("citation_alignment", answer, sources, options, parallel)?;
    let agg = citation_alignment(counts.into_iter().flatten());
    let fields = [
        Series::new(
            "citation_alignment_quoted_spans".into(),
            [agg.citation_alignment_quoted_spans],
        ),
        Series::new("matched".into(), [agg.matched]),
        Series::new("total".into(), [agg.total]),
    ];
    struct_series("citation_alignment", &fields, &[true])
}

// ------------------------------------------------------------------------- answer metrics

/// Per-row results of a metric that compares each answer with its references: `references` is a
/// `str` column (one reference) or `list[str]` (several; null items skipped). A null answer, null
/// references or an empty reference list give `None`. `S` is per-thread scratch space.
pub fn per_answer<T, S, F>(
    metric: &str,
    answer: &Series,
    references: &Series,
    parallel: bool,
    score: F,
) -> PolarsResult<Vec<Option<T>>>
where
    T: Send,
    S: Default,
    F: Fn(&mut S, &str, &[&str]) -> Option<T> + Sync + Send,
{
    per_row(
        metric,
        answer,
        references,
        parallel,
        false,
        |s, answers, refs| {
            // One answer per row (a `str` column); an empty reference list scores nothing.
            let answer = answers.first()?;
            (!refs.is_empty()).then(|| score(s, answer, refs)).flatten()
        },
    )
}

/// The rows of an answer column (`str`, or with `answer_lists` also `list[str]`) and a reference
/// column, scored in parallel batches with per-thread scratch `S`; `None` where either is null.
/// Empty lists are passed as they come (the datapizza forms score them).
fn per_row<T, S, F>(
    metric: &str,
    answer: &Series,
    references: &Series,
    parallel: bool,
    answer_lists: bool,
    score: F,
) -> PolarsResult<Vec<Option<T>>>
where
    T: Send,
    S: Default,
    F: Fn(&mut S, &[&str], &[&str]) -> Option<T> + Sync + Send,
{
    if !answer_lists {
        // Checks the dtype, so a list answer is an error naming the column.
        StrColumn::new(metric, "answer", answer)?;
    }
    let answers = TextListColumn::new(metric, "answer", answer)?;
    let reference_lists = TextListColumn::new(metric, "references", references)?;
    let len = output_len(
        metric,
        &[
            (answer.name().as_str(), answers.len()),
            (references.name().as_str(), reference_lists.len()),
        ],
    )?;
    Ok(map_row_batches(len, parallel, |range| {
        let answer_rows = answers.rows(range.clone());
        let reference_rows = reference_lists.rows(range);
        let mut scratch = S::default();
        (0..answer_rows.len())
            .map(|i| score(&mut scratch, answer_rows.get(i)?, reference_rows.get(i)?))
            .collect()
    }))
}

/// A `Float64` series named after its metric.
pub(crate) fn float_series(metric: &str, values: Vec<Option<f64>>) -> Series {
    Float64Chunked::from_iter_options(metric.into(), values.into_iter()).into_series()
}

/// The best score of `answer` over its references (a metric defined for one reference).
fn best_over<F: FnMut(&str) -> Option<f64>>(refs: &[&str], mut score: F) -> Option<f64> {
    refs.iter()
        .filter_map(|r| score(r))
        .fold(None, |best: Option<f64>, s| {
            Some(best.map_or(s, |b| b.max(s)))
        })
}

fn prf_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("precision".into(), DataType::Float64),
        Field::new("recall".into(), DataType::Float64),
        Field::new("fmeasure".into(), DataType::Float64),
    ])
}

/// The four ROUGE types as named in rouge-score, in output order.
const ROUGE_TYPES: [&str; 4] = ["rouge1", "rouge2", "rougeL", "rougeLsum"];

/// Output dtype of `rouge`: `struct{rouge1, rouge2, rougeL, rougeLsum}` of
/// `struct{precision, recall, fmeasure}`.
pub fn rouge_dtype() -> DataType {
    DataType::Struct(
        ROUGE_TYPES
            .iter()
            .map(|t| Field::new((*t).into(), prf_dtype()))
            .collect(),
    )
}

/// `rouge` over columns: one `struct{rouge1, rouge2, rougeL, rougeLsum}` per row, each a
/// `struct{precision, recall, fmeasure}`; several references combine as rouge-score's
/// `score_multi` (per type, the reference with the highest F-measure). Null when the answer is
/// null or the row has no reference.
pub fn rouge(
    answer: &Series,
    references: &Series,
    options: &RougeOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let datapizza = options.compat == RougeCompat::Datapizza;
    let scores = if datapizza {
        per_row(
            "rouge",
            answer,
            references,
            parallel,
            true,
            |_: &mut (), a, refs| {
                let s = rouge::datapizza_corpus_rouge_scores(a, refs).ok()?;
                Some(RougeScores {
                    rouge1: s.rouge1,
                    rouge2: s.rouge2,
                    rouge_l: s.rouge_l,
                    rouge_lsum: Prf::default(),
                })
            },
        )?
    } else {
        per_answer(
            "rouge",
            answer,
            references,
            parallel,
            |scratch: &mut rouge::Scratch, a, refs| Some(scratch.rouge(a, refs, options)),
        )?
    };
    let valid: Vec<bool> = scores.iter().map(Option::is_some).collect();
    // datapizza computes no ROUGE-Lsum: its field is null.
    let no_lsum = vec![false; valid.len()];
    let pick: [fn(&RougeScores) -> Prf; 4] =
        [|s| s.rouge1, |s| s.rouge2, |s| s.rouge_l, |s| s.rouge_lsum];
    let mut types = Vec::with_capacity(4);
    for (name, pick) in ROUGE_TYPES.iter().zip(pick) {
        let part = |field: &str, get: fn(&Prf) -> f64| {
            float_series(
                field,
                scores
                    .iter()
                    .map(|s| s.as_ref().map(|s| get(&pick(s))))
                    .collect(),
            )
        };
        let fields = [
            part("precision", |p| p.precision),
            part("recall", |p| p.recall),
            part("fmeasure", |p| p.fmeasure),
        ];
        let type_valid = if datapizza && *name == "rougeLsum" {
            &no_lsum
        } else {
            &valid
        };
        types.push(struct_series(name, &fields, type_valid)?);
    }
    struct_series("rouge", &types, &valid)
}

/// `bleu` over columns: sentence BLEU in [0, 1] per row (sacrebleu's `sentence_bleu / 100`);
/// several references clip n-gram counts by their maximum and the closest length sets the
/// brevity penalty, as in sacrebleu. Null when the answer is null or the row has no reference.
pub fn bleu(
    answer: &Series,
    references: &Series,
    options: &BleuOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    options.validate("bleu")?;
    let scores = if options.compat == BleuCompat::Datapizza {
        // One answer: datapizza's bleu_score; several answers per row: its corpus_bleu_score.
        let one_answer = matches!(answer.dtype(), DataType::String | DataType::Null);
        per_row(
            "bleu",
            answer,
            references,
            parallel,
            true,
            |scratch: &mut bleu::Scratch, answers, refs| {
                if one_answer {
                    let a = answers.first()?;
                    Some(bleu::datapizza_bleu_score(scratch, a, refs, options))
                } else {
                    bleu::datapizza_corpus_bleu_score(scratch, answers, refs, options).ok()
                }
            },
        )?
    } else {
        per_answer(
            "bleu",
            answer,
            references,
            parallel,
            |scratch: &mut bleu::Scratch, a, refs| Some(scratch.bleu(a, refs, options).score),
        )?
    };
    Ok(float_series("bleu", scores))
}

/// Each row's BLEU statistics (what corpus BLEU sums); `None` where the answer is null or the
/// row has no reference.
fn bleu_stats_rows(
    answer: &Series,
    references: &Series,
    options: &BleuOptions,
    parallel: bool,
) -> PolarsResult<Vec<Option<BleuStats>>> {
    options.validate("corpus_bleu")?;
    per_answer(
        "corpus_bleu",
        answer,
        references,
        parallel,
        |scratch: &mut bleu::Scratch, a, refs| Some(scratch.stats(a, refs, options)),
    )
}

/// `corpus_bleu` over columns: one value, sacrebleu's `corpus_bleu / 100`: n-gram statistics are
/// summed over the rows and scored once. Rows with a null answer or no reference are left out.
pub fn corpus_bleu(
    answer: &Series,
    references: &Series,
    options: &BleuOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let stats = bleu_stats_rows(answer, references, options, parallel)?;
    let mut total = BleuStats::default();
    for row in stats.iter().flatten() {
        total.add(row);
    }
    let score = bleu::score_from_stats(&total, options).score;
    Ok(float_series("corpus_bleu", vec![Some(score)]))
}

/// Per-row statistics of a corpus-level metric as a `list[f64]` column named `name` (null where
/// the metric leaves a row out), what `compare` sums and resamples.
fn stats_lists(name: &str, rows: impl Iterator<Item = Option<Vec<u64>>>) -> PolarsResult<Series> {
    let lists: ListChunked = rows
        .map(|row| {
            row.map(|v| {
                Series::new(
                    PlSmallStr::EMPTY,
                    v.into_iter().map(|x| x as f64).collect::<Vec<f64>>(),
                )
            })
        })
        .collect();
    // A column of only null rows collects to `list[null]`; the statistics are `list[f64]`
    // whatever the rows, so that every batch of a table has the same type.
    Ok(lists
        .into_series()
        .cast(&DataType::List(Box::new(DataType::Float64)))?
        .with_name(name.into()))
}

/// Per-row BLEU statistics as `list[f64]` (matches and totals for n = 1..4, hypothesis length,
/// closest reference length), named `corpus_bleu_stats`: what corpus BLEU sums, kept per row so
/// a comparison can resample corpus BLEU. Null where `corpus_bleu` leaves the row out.
pub fn corpus_bleu_stats(
    answer: &Series,
    references: &Series,
    options: &BleuOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let stats = bleu_stats_rows(answer, references, options, parallel)?;
    stats_lists(
        "corpus_bleu_stats",
        stats.iter().map(|st| {
            st.as_ref().map(|st| {
                st.counts
                    .iter()
                    .chain(&st.totals)
                    .chain([&st.sys_len, &st.ref_len])
                    .copied()
                    .collect()
            })
        }),
    )
}

/// `chrf` over columns: chrF (chrF++ with `word_order = 2`) in [0, 1] per row, sacrebleu's
/// `sentence_chrf / 100`; with several references the best-scoring one counts.
pub fn chrf(
    answer: &Series,
    references: &Series,
    options: &ChrfOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    options.validate("chrf")?;
    let scores = per_answer(
        "chrf",
        answer,
        references,
        parallel,
        |scratch: &mut chrf::Scratch, a, refs| Some(scratch.chrf(a, refs, options)),
    )?;
    Ok(float_series("chrf", scores))
}

/// Each row's corpus chrF statistics (the best reference's `[hyp, ref, match]` counts per
/// order); `None` where the answer is null or the row has no reference.
fn chrf_stats_rows(
    answer: &Series,
    references: &Series,
    options: &ChrfOptions,
    parallel: bool,
) -> PolarsResult<Vec<Option<Vec<[u64; 3]>>>> {
    options.validate("corpus_chrf")?;
    per_answer(
        "corpus_chrf",
        answer,
        references,
        parallel,
        |scratch: &mut chrf::Scratch, a, refs| {
            scratch.chrf(a, refs, options);
            Some(scratch.best_stats().to_vec())
        },
    )
}

/// `corpus_chrf` over columns: one value, sacrebleu's `corpus_chrf / 100`: the statistics of
/// each segment's best reference are summed over the rows and scored once. Rows with a null
/// answer or no reference are left out.
pub fn corpus_chrf(
    answer: &Series,
    references: &Series,
    options: &ChrfOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let rows = chrf_stats_rows(answer, references, options, parallel)?;
    let mut sums: Vec<[u64; 3]> = Vec::new();
    for row in rows.iter().flatten() {
        sums.resize(row.len().max(sums.len()), [0; 3]);
        for (sum, stat) in sums.iter_mut().zip(row) {
            for i in 0..3 {
                sum[i] += stat[i];
            }
        }
    }
    let score = chrf::corpus_chrf_of_stats(&sums, options);
    Ok(float_series("corpus_chrf", vec![Some(score)]))
}

/// Per-row corpus chrF statistics as `list[f64]` (`[hyp, ref, match]` per order, flattened),
/// named `corpus_chrf_stats`, so a comparison can resample corpus chrF. Null where
/// `corpus_chrf` leaves the row out.
pub fn corpus_chrf_stats(
    answer: &Series,
    references: &Series,
    options: &ChrfOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let rows = chrf_stats_rows(answer, references, options, parallel)?;
    stats_lists(
        "corpus_chrf_stats",
        rows.iter().map(|row| {
            row.as_ref()
                .map(|row| row.iter().flatten().copied().collect())
        }),
    )
}

/// `string_similarity` over columns: 1 − rapidfuzz's normalised distance between the answer and
/// its closest reference.
pub fn string_similarity(
    answer: &Series,
    references: &Series,
    options: &StringSimilarityOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let scores = per_answer(
        "string_similarity",
        answer,
        references,
        parallel,
        |scratch: &mut similarity::Scratch, a, refs| {
            best_over(refs, |r| Some(scratch.similarity(a, r, options.distance)))
        },
    )?;
    Ok(float_series("string_similarity", scores))
}

/// `string_presence` over columns: 1.0 when any reference occurs verbatim in the answer.
pub fn string_presence(
    answer: &Series,
    references: &Series,
    parallel: bool,
) -> PolarsResult<Series> {
    let scores = per_answer(
        "string_presence",
        answer,
        references,
        parallel,
        |_: &mut (), a, refs| best_over(refs, |r| Some(similarity::string_presence(a, r))),
    )?;
    Ok(float_series("string_presence", scores))
}

/// `exact_match` over columns: 1.0 when the answer equals any reference (after lowercasing and
/// collapsing whitespace; raw with `compat = ragas`).
pub fn exact_match(
    answer: &Series,
    references: &Series,
    options: &similarity::ExactMatchOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let compat = options.compat;
    let scores = per_answer(
        "exact_match",
        answer,
        references,
        parallel,
        |_: &mut (), a, refs| best_over(refs, |r| Some(similarity::exact_match(a, r, compat))),
    )?;
    Ok(float_series("exact_match", scores))
}

/// The lexical answer checks against the best reference: `Float64` named after the metric,
/// null when the answer is null, the row has no reference, or no reference has anything to
/// check (no keywords, no numbers).
fn best_lexical(
    metric: &str,
    answer: &Series,
    references: &Series,
    parallel: bool,
    check: fn(&str, &str) -> Option<f64>,
) -> PolarsResult<Series> {
    let scores = per_answer(
        metric,
        answer,
        references,
        parallel,
        |_: &mut (), a, refs| best_over(refs, |r| check(a, r)),
    )?;
    Ok(float_series(metric, scores))
}

/// `keyword_coverage` over columns (see [`lexical::keyword_coverage`]).
pub fn keyword_coverage(
    answer: &Series,
    references: &Series,
    parallel: bool,
) -> PolarsResult<Series> {
    best_lexical(
        "keyword_coverage",
        answer,
        references,
        parallel,
        lexical::keyword_coverage,
    )
}

/// `number_match` over columns (see [`lexical::number_match`]).
pub fn number_match(answer: &Series, references: &Series, parallel: bool) -> PolarsResult<Series> {
    best_lexical(
        "number_match",
        answer,
        references,
        parallel,
        lexical::number_match,
    )
}

/// `answer_completeness` over columns (see [`lexical::answer_completeness`]).
pub fn answer_completeness(
    answer: &Series,
    references: &Series,
    parallel: bool,
) -> PolarsResult<Series> {
    best_lexical(
        "answer_completeness",
        answer,
        references,
        parallel,
        lexical::answer_completeness,
    )
}

/// `citation_indicators` over a column of answers: null where the answer is null.
pub fn citation_indicators(
    answer: &Series,
    options: &CitationIndicatorOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let answers = StrColumn::new("citation_indicators", "answer", answer)?;
    let scores = map_row_batches(answers.len(), parallel, |range| {
        answers
            .rows(range)
            .iter()
            .map(|a| a.map(|a| lexical::citation_indicators(a, options)))
            .collect()
    });
    Ok(float_series("citation_indicators", scores))
}

/// Output dtype of `checks`: `struct{score: f64, failed: list[str]}`.
pub fn checks_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("score".into(), DataType::Float64),
        Field::new("failed".into(), DataType::List(Box::new(DataType::String))),
    ])
}

/// The checks of one row: a `struct{kind, value, values, weight, name}` series (missing fields
/// mean "not given"; `value` and `weight` may be of any type that casts to text and number).
fn row_checks(item: &Series) -> PolarsResult<Vec<Check>> {
    if item.is_empty() || item.dtype() == &DataType::Null {
        return Ok(Vec::new());
    }
    let st = item.struct_()?;
    let field = |name: &str, dtype: &DataType| -> PolarsResult<Option<Series>> {
        match st.field_by_name(name) {
            Ok(f) => Ok(Some(f.cast(dtype)?)),
            Err(_) => Ok(None),
        }
    };
    let text = DataType::String;
    let kinds = field("kind", &text)?
        .ok_or_else(|| polars_err!(SchemaMismatch: "the check structs have no 'kind' field"))?;
    let value = field("value", &text)?;
    let name = field("name", &text)?;
    let weight = field("weight", &DataType::Float64)?;
    let values = field("values", &DataType::List(Box::new(DataType::String)))?;
    let mut out = Vec::with_capacity(item.len());
    for i in 0..item.len() {
        let kind = kinds
            .str()?
            .get(i)
            .ok_or_else(|| polars_err!(ComputeError: "check #{} has no kind", i + 1))?;
        let kind: CheckKind = serde::Deserialize::deserialize(
            serde::de::IntoDeserializer::<serde::de::value::Error>::into_deserializer(kind),
        )
        .map_err(|_| {
            polars_err!(ComputeError: "check #{}: unknown kind '{kind}' (contains, not_contains, regex, number, any_of, list_items)", i + 1)
        })?;
        let string_at = |s: &Option<Series>| -> PolarsResult<Option<String>> {
            Ok(match s {
                Some(s) => s.str()?.get(i).map(String::from),
                None => None,
            })
        };
        let list = match &values {
            Some(v) => v
                .list()?
                .get_as_series(i)
                .map(|items| -> PolarsResult<Vec<String>> {
                    Ok(items.str()?.iter().flatten().map(String::from).collect())
                }),
            None => None,
        }
        .transpose()?;
        out.push(Check {
            kind,
            value: string_at(&value)?,
            values: list,
            weight: match &weight {
                Some(w) => w.f64()?.get(i),
                None => None,
            },
            name: string_at(&name)?,
        });
    }
    Ok(out)
}

/// `checks` over columns: each row's declarative checks (a `list[struct{kind, value, values,
/// weight, name}]` column) run on its answer, giving `struct{score, failed}`. Every row's checks
/// are validated before any is run; an invalid one is an error naming the row and the check.
/// Null answer or null checks → null row; an empty list → null score, nothing failed.
pub fn checks(answer: &Series, checks: &Series, parallel: bool) -> PolarsResult<Series> {
    let metric = "checks";
    let answers = StrColumn::new(metric, "answer", answer)?;
    let lists = match checks.dtype() {
        DataType::List(inner) if matches!(inner.as_ref(), DataType::Struct(_) | DataType::Null) => {
            checks.list()?
        }
        other => polars_bail!(
            SchemaMismatch: "{metric}: column '{}' must be list[struct{{kind, value, values, weight, name}}], got {other}",
            checks.name()
        ),
    };
    let len = output_len(
        metric,
        &[
            (answer.name().as_str(), answers.len()),
            (checks.name().as_str(), lists.len()),
        ],
    )?;
    let mut prepared: Vec<Option<PreparedChecks>> = Vec::with_capacity(lists.len());
    for row in 0..lists.len() {
        let Some(item) = lists.get_as_series(row) else {
            prepared.push(None);
            continue;
        };
        let parsed =
            row_checks(&item).map_err(|e| polars_err!(ComputeError: "{metric}: row {row}: {e}"))?;
        let ready = PreparedChecks::new(&parsed)
            .map_err(|e| polars_err!(ComputeError: "{metric}: row {row}: {e}"))?;
        prepared.push(Some(ready));
    }
    let outcomes: Vec<Option<CheckOutcome>> = map_row_batches(len, parallel, |range| {
        let answer_rows = answers.rows(range.clone());
        range
            .zip(answer_rows)
            .map(|(i, answer)| {
                let row = if prepared.len() == 1 { 0 } else { i };
                Some(prepared.get(row)?.as_ref()?.run(answer?))
            })
            .collect()
    });
    let valid: Vec<bool> = outcomes.iter().map(Option::is_some).collect();
    let score = float_series(
        "score",
        outcomes
            .iter()
            .map(|o| o.as_ref().and_then(|o| o.score))
            .collect(),
    );
    let mut failed = ListStringChunkedBuilder::new("failed".into(), len, len);
    for outcome in &outcomes {
        match outcome {
            Some(o) => failed.append_values_iter(o.failed.iter().map(String::as_str)),
            None => failed.append_null(),
        }
    }
    struct_series(metric, &[score, failed.finish().into_series()], &valid)
}

// ------------------------------------------------------------------------- judged estimates

/// Output dtype of `ppi_mean`.
pub fn ppi_mean_dtype() -> DataType {
    let mut fields: Vec<Field> = [
        "estimate",
        "ci_low",
        "ci_high",
        "lam",
        "classical_estimate",
        "classical_ci_low",
        "classical_ci_high",
    ]
    .iter()
    .map(|name| Field::new((*name).into(), DataType::Float64))
    .collect();
    for name in ["n_labelled", "n_unlabelled", "n_unjudged"] {
        fields.push(Field::new(name.into(), DataType::UInt32));
    }
    fields.push(Field::new("reason".into(), DataType::String));
    DataType::Struct(fields)
}

/// A numeric (or boolean) column as floats, nulls kept; any other dtype, or a NaN or infinite
/// value, is an error naming the metric and the column's role.
fn finite_numbers(metric: &str, role: &str, s: &Series) -> PolarsResult<Vec<Option<f64>>> {
    let dtype = s.dtype();
    if !(dtype.is_primitive_numeric()
        || dtype.is_null()
        || matches!(dtype, DataType::Decimal(..) | DataType::Boolean))
    {
        polars_bail!(SchemaMismatch: "{metric}: the {role} must be numbers, got dtype {dtype}");
    }
    let values: Vec<Option<f64>> = s.cast(&DataType::Float64)?.f64()?.iter().collect();
    if let Some(bad) = values.iter().flatten().find(|v| !v.is_finite()) {
        polars_bail!(ComputeError: "{metric}: the {role} hold {bad}, not a finite number");
    }
    Ok(values)
}

/// `ppi_mean` over a column of judge scores and a column of labels (null where an item is not
/// labelled): one row. An item without a judge score is left out and counted in `n_unjudged`;
/// where there is no estimate, the numbers are null and `reason` says why.
pub fn ppi_mean(
    judged: &Series,
    labels: &Series,
    options: &crate::metrics::ppi::PpiOptions,
) -> PolarsResult<Series> {
    const METRIC: &str = "ppi_mean";
    options.validate(METRIC)?;
    output_len(
        METRIC,
        &[("judged", judged.len()), ("labels", labels.len())],
    )?;
    let judged = finite_numbers(METRIC, "judge scores", judged)?;
    let labels = finite_numbers(METRIC, "labels", labels)?;
    let len = judged.len().max(labels.len());
    let at = |values: &[Option<f64>], i: usize| {
        if values.len() == 1 {
            values[0]
        } else {
            values[i]
        }
    };
    let (mut labelled, mut unlabelled, mut unjudged) = (Vec::new(), Vec::new(), 0u32);
    for i in 0..len {
        match (at(&judged, i), at(&labels, i)) {
            (None, _) => unjudged += 1,
            (Some(j), Some(y)) => labelled.push((y, j)),
            (Some(j), None) => unlabelled.push(j),
        }
    }
    let counts = |n: usize| Series::new("".into(), [n as u32]);
    let (values, reason) = match crate::metrics::ppi::ppi_mean(&labelled, &unlabelled, options) {
        Ok(p) => (
            [
                p.estimate,
                p.ci_low,
                p.ci_high,
                p.lam,
                p.classical_estimate,
                p.classical_ci_low,
                p.classical_ci_high,
            ]
            .map(Some),
            None,
        ),
        Err(e) if e.kind() == crate::ErrorKind::InvalidInput => {
            ([None; 7], Some(e.message().to_string()))
        }
        Err(e) => return Err(e.into()),
    };
    let names = [
        "estimate",
        "ci_low",
        "ci_high",
        "lam",
        "classical_estimate",
        "classical_ci_low",
        "classical_ci_high",
    ];
    let mut fields: Vec<Series> = names
        .iter()
        .zip(values)
        .map(|(name, v)| Series::new((*name).into(), [v]))
        .collect();
    fields.push(counts(labelled.len()).with_name("n_labelled".into()));
    fields.push(counts(unlabelled.len()).with_name("n_unlabelled".into()));
    fields.push(Series::new("n_unjudged".into(), [unjudged]));
    fields.push(Series::new("reason".into(), [reason]));
    struct_series(METRIC, &fields, &[true])
}
