//! The judged nugget metrics over columns: `create_nuggets` and `nugget_assignment` (see
//! [`crate::metrics::judged::nuggets`]), through the shared judge engine. Every distinct question
//! to the judge is asked once, all rows' together, and cached.

use std::collections::HashMap;

use polars::prelude::*;

use super::driver::{output_len, struct_series, StrColumn, TextListColumn};
use super::judged::{judge_rows, Reply};
use crate::metrics::judged::nuggets::{
    importance_of_reply, nuggets_of_reply, numbered, rank_nuggets, support_of_reply,
    CreateNuggetsOptions, Nugget, NuggetAssignmentOptions,
};
use crate::metrics::nuggets::{nugget_scores, NuggetCompat, SCORE_NAMES};

/// The type of a nugget list: `list[struct{text: str, importance: str}]`.
pub fn nuggets_dtype() -> DataType {
    DataType::List(Box::new(DataType::Struct(vec![
        Field::new("text".into(), DataType::String),
        Field::new("importance".into(), DataType::String),
    ])))
}

/// Output dtype of `create_nuggets`: the nuggets and `judge_error`.
pub fn create_nuggets_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("nuggets".into(), nuggets_dtype()),
        Field::new("judge_error".into(), DataType::String),
    ])
}

/// Output dtype of `nugget_assignment`: the assessment of each nugget, the four scores and
/// `judge_error`.
pub fn nugget_assignment_dtype() -> DataType {
    let mut fields = vec![Field::new(
        "assignment".into(),
        DataType::List(Box::new(DataType::String)),
    )];
    fields.extend(
        SCORE_NAMES
            .iter()
            .map(|name| Field::new((*name).into(), DataType::Float64)),
    );
    fields.push(Field::new("judge_error".into(), DataType::String));
    DataType::Struct(fields)
}

/// The text of a reply, or why there is none.
fn reply_value(reply: Option<&Reply>) -> Result<serde_json::Value, String> {
    reply
        .cloned()
        .flatten()
        .unwrap_or_else(|| Err("not judged".into()))
}

/// A list of nuggets per row, as a `list[struct{text, importance}]` column.
fn nugget_series(name: &str, rows: &[Option<Vec<Nugget>>]) -> PolarsResult<Series> {
    let values: Vec<Option<Series>> = rows
        .iter()
        .map(|row| {
            row.as_ref()
                .map(|nuggets| -> PolarsResult<Series> {
                    let texts: Vec<&str> = nuggets.iter().map(|n| n.text.as_str()).collect();
                    let importance: Vec<&str> =
                        nuggets.iter().map(|n| n.importance.as_str()).collect();
                    Ok(StructChunked::from_series(
                        "".into(),
                        nuggets.len(),
                        [
                            Series::new("text".into(), texts),
                            Series::new("importance".into(), importance),
                        ]
                        .iter(),
                    )?
                    .into_series())
                })
                .transpose()
        })
        .collect::<PolarsResult<_>>()?;
    // (A list built from rows that are all null cannot tell its type: give it.)
    if values.iter().all(Option::is_none) {
        return Ok(Series::full_null(name.into(), rows.len(), &nuggets_dtype()));
    }
    let mut out = ListChunked::from_iter(values).into_series();
    out.rename(name.into());
    out.cast(&nuggets_dtype())
}

/// `create_nuggets` over columns: per (question, sources) row, the nuggets written from the
/// sources window by window, labelled vital or okay, ranked and cut (see
/// [`crate::metrics::judged::nuggets`]). Sources are `list[str]`, a `str` (one source) or a list
/// of structs with a `text` field; a row without sources gets no nuggets (an empty list).
pub fn create_nuggets(
    question: &Series,
    sources: &Series,
    options: &CreateNuggetsOptions,
) -> PolarsResult<Series> {
    let metric = "create_nuggets";
    if options.window == 0 || options.max_nuggets == 0 {
        polars_bail!(ComputeError: "{metric}: window and max_nuggets must be at least 1");
    }
    let questions = StrColumn::new(metric, "question", question)?;
    let source_column = TextListColumn::new(metric, "sources", sources)?;
    let len = output_len(
        metric,
        &[
            (question.name().as_str(), questions.len()),
            (sources.name().as_str(), source_column.len()),
        ],
    )?;
    let question_rows = questions.rows(0..len);
    let source_rows = source_column.rows(0..len);
    let max_text = options.max_nuggets.to_string();
    // Per row: the nuggets so far, or why the row has none; `None` for a null row.
    let mut written: Vec<Option<Result<Vec<String>, String>>> = (0..len)
        .map(|i| match (question_rows[i], source_rows.get(i)) {
            (Some(_), Some(_)) => Some(Ok(Vec::new())),
            _ => None,
        })
        .collect();
    // 1. The nuggets, one window of sources per round: a round's calls depend on the last's.
    let rounds = (0..len)
        .filter_map(|i| source_rows.get(i).map(<[&str]>::len))
        .max()
        .unwrap_or(0)
        .div_ceil(options.window);
    for round in 0..rounds {
        let mut asked: Vec<usize> = Vec::new();
        let mut texts: Vec<(String, String)> = Vec::new();
        for (i, row) in written.iter().enumerate() {
            let (Some(Ok(so_far)), Some(all)) = (row, source_rows.get(i)) else {
                continue;
            };
            let start = round * options.window;
            if start >= all.len() {
                continue;
            }
            let window = &all[start..start.saturating_add(options.window).min(all.len())];
            let so_far: Vec<&str> = so_far.iter().map(String::as_str).collect();
            asked.push(i);
            texts.push((numbered(window), numbered(&so_far)));
        }
        let rows: Vec<Option<Vec<&str>>> = asked
            .iter()
            .zip(&texts)
            .map(|(&i, (window, so_far))| {
                Some(vec![
                    question_rows[i].unwrap_or(""),
                    window.as_str(),
                    so_far.as_str(),
                    max_text.as_str(),
                ])
            })
            .collect();
        let replies = judge_rows(metric, "create_nuggets", &options.judge, &rows, 1)?.remove(0);
        for (k, &i) in asked.iter().enumerate() {
            written[i] = Some(
                reply_value(replies.get(k))
                    .map(|reply| nuggets_of_reply(&reply, options.max_nuggets)),
            );
        }
    }
    // 2. Their importance, one (question, nugget) pair per question, each distinct pair once.
    let mut asked: Vec<(&str, &str)> = Vec::new();
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    let plans: Vec<Vec<usize>> = written
        .iter()
        .enumerate()
        .map(|(i, row)| match (row, question_rows[i]) {
            (Some(Ok(nuggets)), Some(q)) => nuggets
                .iter()
                .map(|n| {
                    *index.entry((q, n.as_str())).or_insert_with(|| {
                        asked.push((q, n.as_str()));
                        asked.len() - 1
                    })
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    let rows: Vec<Option<Vec<&str>>> = asked.iter().map(|(q, n)| Some(vec![*q, *n])).collect();
    let replies = judge_rows(metric, "nugget_importance", &options.judge, &rows, 1)?.remove(0);
    let importance: Vec<Result<String, String>> = (0..asked.len())
        .map(|k| {
            reply_value(replies.get(k))
                .and_then(|reply| importance_of_reply(&reply).map_err(|e| e.to_string()))
        })
        .collect();
    let labels: Vec<Result<Vec<String>, String>> = plans
        .iter()
        .map(|plan| plan.iter().map(|&k| importance[k].clone()).collect())
        .collect();
    // 3. Ranked and cut.
    let outcomes: Vec<Option<Result<Vec<Nugget>, String>>> = written
        .into_iter()
        .zip(labels)
        .map(|(row, labels)| {
            row.map(|texts| {
                let texts = texts?;
                let labels = labels?;
                let nuggets = texts
                    .iter()
                    .zip(&labels)
                    .map(|(t, l)| Nugget::new(t, l))
                    .collect();
                Ok(rank_nuggets(nuggets, options.max_nuggets))
            })
        })
        .collect();
    let kept: Vec<Option<Vec<Nugget>>> = outcomes
        .iter()
        .map(|r| r.as_ref().and_then(|r| r.as_ref().ok()).cloned())
        .collect();
    let fields = [
        nugget_series("nuggets", &kept)?,
        StringChunked::from_iter_options(
            "judge_error".into(),
            outcomes
                .iter()
                .map(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned())),
        )
        .into_series(),
    ];
    let valid: Vec<bool> = outcomes.iter().map(Option::is_some).collect();
    struct_series(metric, &fields, &valid)
}

/// Reads a nuggets column: `list[struct{text, importance}]`, or the struct `create_nuggets`
/// returns (its `nuggets` field). A null row is `None`; a nugget whose text or importance is
/// null, or an unknown importance, is an error naming the row.
fn read_nuggets(metric: &str, nuggets: &Series) -> PolarsResult<Vec<Option<Vec<Nugget>>>> {
    let bad = || polars_err!(SchemaMismatch: "{metric}: column '{}' (nuggets) must be list[struct{{text: str, importance: str}}] (what create_nuggets writes), got {}", nuggets.name(), nuggets.dtype());
    let list = match nuggets.dtype() {
        DataType::Null => return Ok(vec![None; nuggets.len()]),
        DataType::Struct(_) => nuggets
            .struct_()?
            .field_by_name("nuggets")
            .map_err(|_| bad())?,
        DataType::List(_) => nuggets.clone(),
        _ => return Err(bad()),
    };
    let DataType::List(inner) = list.dtype() else {
        return Err(bad());
    };
    match inner.as_ref() {
        DataType::Struct(fields)
            if ["text", "importance"]
                .iter()
                .all(|n| fields.iter().any(|f| f.name().as_str() == *n)) => {}
        DataType::Null => return Ok(vec![None; list.len()]),
        _ => return Err(bad()),
    }
    let mut rows = Vec::with_capacity(list.len());
    for (i, item) in list.list()?.amortized_iter().enumerate() {
        let Some(item) = item else {
            rows.push(None);
            continue;
        };
        let items = item.as_ref().struct_()?;
        let text = items.field_by_name("text")?.cast(&DataType::String)?;
        let importance = items.field_by_name("importance")?.cast(&DataType::String)?;
        let row: Option<Vec<Nugget>> = text
            .str()?
            .iter()
            .zip(importance.str()?.iter())
            .map(|(t, imp)| Some(Nugget::new(t?, &imp?.trim().to_ascii_lowercase())))
            .collect();
        let Some(row) = row else {
            polars_bail!(ComputeError: "{metric}: column '{}' (nuggets), row {}: a nugget without its text or importance", nuggets.name(), i + 1);
        };
        if let Some(bad) = row
            .iter()
            .find(|n| n.importance != "vital" && n.importance != "okay")
        {
            polars_bail!(ComputeError: "{metric}: column '{}' (nuggets), row {}: unknown importance {:?} (vital or okay)", nuggets.name(), i + 1, bad.importance);
        }
        rows.push(Some(row));
    }
    Ok(rows)
}

/// `nugget_assignment` over columns: each nugget of a row assessed against its answer by the
/// judge (one question per distinct (nugget, answer) pair), and the four nugget scores of those
/// assessments (see [`crate::metrics::nuggets`]). A row with no nuggets scores 0, as in
/// nuggetizer.
pub fn nugget_assignment(
    answer: &Series,
    nuggets: &Series,
    options: &NuggetAssignmentOptions,
) -> PolarsResult<Series> {
    let metric = "nugget_assignment";
    let answers = StrColumn::new(metric, "answer", answer)?;
    let nugget_rows = read_nuggets(metric, nuggets)?;
    let len = output_len(
        metric,
        &[
            (answer.name().as_str(), answers.len()),
            (nuggets.name().as_str(), nugget_rows.len()),
        ],
    )?;
    let answer_rows = answers.rows(0..len);
    let nuggets_of = |i: usize| {
        nugget_rows
            .get(if nugget_rows.len() == 1 { 0 } else { i })
            .and_then(Option::as_ref)
    };
    let mut asked: Vec<(&str, &str)> = Vec::new();
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    let mut plans: Vec<Option<Vec<usize>>> = Vec::with_capacity(len);
    for (i, answer) in answer_rows.iter().enumerate() {
        let (Some(answer), Some(nuggets)) = (*answer, nuggets_of(i)) else {
            plans.push(None);
            continue;
        };
        plans.push(Some(
            nuggets
                .iter()
                .map(|n| {
                    let key = (n.text.as_str(), answer);
                    *index.entry(key).or_insert_with(|| {
                        asked.push(key);
                        asked.len() - 1
                    })
                })
                .collect(),
        ));
    }
    let rows: Vec<Option<Vec<&str>>> = asked.iter().map(|(n, a)| Some(vec![*n, *a])).collect();
    let replies = judge_rows(metric, "nugget_support", &options.judge, &rows, 1)?.remove(0);
    let labels: Vec<Result<String, String>> = (0..asked.len())
        .map(|k| {
            reply_value(replies.get(k))
                .and_then(|reply| support_of_reply(&reply).map_err(|e| e.to_string()))
        })
        .collect();
    type Assessed = (Vec<String>, [f64; 4]);
    let outcomes: Vec<Option<Result<Assessed, String>>> = plans
        .iter()
        .enumerate()
        .map(|(i, plan)| {
            let plan = plan.as_ref()?;
            let nuggets = nuggets_of(i)?;
            Some((|| {
                let assignment: Vec<String> = plan
                    .iter()
                    .map(|&k| labels[k].clone())
                    .collect::<Result<_, _>>()?;
                let importance: Vec<&str> = nuggets.iter().map(|n| n.importance.as_str()).collect();
                let assigned: Vec<&str> = assignment.iter().map(String::as_str).collect();
                let scores = nugget_scores(&importance, &assigned, NuggetCompat::Standard)
                    .map_err(|e| e.to_string())?;
                Ok((assignment, scores.values()))
            })())
        })
        .collect();
    let ok = |i: usize| outcomes[i].as_ref().and_then(|r| r.as_ref().ok());
    let mut builder = ListStringChunkedBuilder::new("assignment".into(), len, len * 8);
    for i in 0..len {
        match ok(i) {
            Some((assignment, _)) => {
                builder.append_values_iter(assignment.iter().map(String::as_str))
            }
            None => builder.append_null(),
        }
    }
    let mut fields = vec![builder.finish().into_series()];
    fields.extend(SCORE_NAMES.iter().enumerate().map(|(k, name)| {
        Float64Chunked::from_iter_options((*name).into(), (0..len).map(|i| ok(i).map(|r| r.1[k])))
            .into_series()
    }));
    fields.push(
        StringChunked::from_iter_options(
            "judge_error".into(),
            outcomes
                .iter()
                .map(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned())),
        )
        .into_series(),
    );
    let valid: Vec<bool> = outcomes.iter().map(Option::is_some).collect();
    struct_series(metric, &fields, &valid)
}
