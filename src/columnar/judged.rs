//! Judged metrics over Polars columns: read the inputs, hand the rows to the process's shared
//! [`Judge`] for the options' settings, and turn the scored replies into typed columns. Rows
//! whose judgement failed keep their row, with the reason in `judge_error`.

use polars::prelude::*;
use rayon::prelude::*;

use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::{Judge, RowReply};

/// A row's judgement as the output columns carry it: `None` for a null row, the reply, or the
/// reason there is none (its `judge_error`).
pub(crate) type Reply = Option<Result<serde_json::Value, String>>;

/// The judge's row replies with their reasons as text.
fn as_replies(rows: Vec<RowReply>) -> Vec<Reply> {
    rows.into_iter()
        .map(|row| row.map(|r| r.map_err(String::from)))
        .collect()
}
use crate::metrics::judged::agreement::agreement;
use crate::metrics::judged::answer_match::{self, AnswerMatchOptions};
use crate::metrics::judged::citation_support::{
    self, CitationSupport, CitationSupportOptions, Verdict,
};
use crate::metrics::judged::claims::{self, ClaimSplitter, SplitClaimsOptions};
use crate::metrics::judged::custom::{CustomJudgeOptions, ReplyKind};
use crate::metrics::judged::g_eval::{GEvalOptions, SCORE_FIELD};

use super::driver::{output_len, struct_series, StrColumn, TextListColumn};

/// The rows of string inputs, broadcast to one length: `None` where any input is null.
fn string_rows<'a>(
    metric: &str,
    inputs: &[(&str, &'a Series)],
) -> PolarsResult<Vec<Option<Vec<&'a str>>>> {
    let columns: Vec<StrColumn<'a>> = inputs
        .iter()
        .map(|(role, s)| StrColumn::new(metric, role, s))
        .collect::<PolarsResult<_>>()?;
    let lengths: Vec<(&str, usize)> = inputs
        .iter()
        .zip(&columns)
        .map(|((_, s), c)| (s.name().as_str(), c.len()))
        .collect();
    let len = output_len(metric, &lengths)?;
    let values: Vec<Vec<Option<&'a str>>> = columns.iter().map(|c| c.rows(0..len)).collect();
    Ok((0..len)
        .map(|i| {
            values
                .iter()
                .map(|column| column[i])
                .collect::<Option<Vec<&str>>>()
        })
        .collect())
}

/// Judges `rows` with built-in card `card` (and `samples` repeated judgements).
pub(crate) fn judge_rows(
    metric: &str,
    card: &str,
    settings: &crate::engines::judge::JudgeSettings,
    rows: &[Option<Vec<&str>>],
    samples: u32,
) -> PolarsResult<Vec<Vec<Reply>>> {
    if rows.is_empty() {
        // Nothing to judge (also how output types are found): no judge needed.
        return Ok(vec![Vec::new(); samples as usize]);
    }
    let judge = Judge::shared(settings, metric)?;
    let template = JudgeTemplate::builtin(card)?;
    (0..samples)
        .map(|sample| {
            Ok(as_replies(
                judge.judge_rows(metric, template, rows, sample)?,
            ))
        })
        .collect()
}

/// Judges `rows` with built-in card `card` once, as sample `sample` (a separate cache entry,
/// sent `seed + sample`). Rows that are all null need no judge and get `None` each.
pub(crate) fn judge_sample(
    metric: &str,
    card: &str,
    settings: &crate::engines::judge::JudgeSettings,
    rows: &[Option<Vec<&str>>],
    sample: u32,
) -> PolarsResult<Vec<Reply>> {
    judge_with(
        metric,
        JudgeTemplate::builtin(card)?,
        settings,
        rows,
        sample,
    )
}

/// Judges `rows` with `template` once, as sample `sample`, on the process's shared judge for
/// `settings`. Rows that are all null need no judge and get `None` each.
fn judge_with(
    metric: &str,
    template: &JudgeTemplate,
    settings: &crate::engines::judge::JudgeSettings,
    rows: &[Option<Vec<&str>>],
    sample: u32,
) -> PolarsResult<Vec<Reply>> {
    if rows.iter().all(Option::is_none) {
        return Ok(vec![None; rows.len()]);
    }
    let judge = Judge::shared(settings, metric)?;
    Ok(as_replies(
        judge.judge_rows(metric, template, rows, sample)?,
    ))
}

/// Output dtype of `citation_support`.
pub fn citation_support_dtype() -> DataType {
    let mut fields: Vec<Field> = [
        "verdict",
        "supporting_phrase",
        "missing_or_extra",
        "decision_basis",
    ]
    .iter()
    .map(|name| Field::new((*name).into(), DataType::String))
    .collect();
    fields.push(Field::new("phrase_verified".into(), DataType::Boolean));
    fields.push(Field::new("phrase_start".into(), DataType::Int64));
    fields.push(Field::new("phrase_end".into(), DataType::Int64));
    for flag in [
        "unverified_phrase",
        "lenient",
        "echo",
        "compound_claim",
        "runs_agree",
        "flagged",
    ] {
        fields.push(Field::new(flag.into(), DataType::Boolean));
    }
    for count in ["fully_supported", "partially_supported", "not_supported"] {
        fields.push(Field::new(count.into(), DataType::Float64));
    }
    fields.push(Field::new("judge_error".into(), DataType::String));
    DataType::Struct(fields)
}

/// One row of `citation_support`: its judgement, or why there is none (`None`: a null input).
type SupportRow = Option<Result<CitationSupport, String>>;

fn support_rows(
    metric: &str,
    claim: &Series,
    cited_span: &Series,
    options: &CitationSupportOptions,
) -> PolarsResult<Vec<SupportRow>> {
    options.validate(metric)?;
    let rows = string_rows(metric, &[("claim", claim), ("cited_span", cited_span)])?;
    let samples = judge_rows(
        metric,
        "citation_support",
        &options.judge,
        &rows,
        options.samples(),
    )?;
    // Scoring a reply (phrase verification, keyword and claim checks) is per row and pure:
    // spread over the cores, as a cached column is otherwise bound by it.
    Ok(rows
        .par_iter()
        .enumerate()
        .map(|(i, row)| {
            let values = row.as_ref()?;
            let mut judged = samples.iter().map(|sample| match &sample[i] {
                Some(Ok(reply)) => {
                    citation_support::score_reply(values[0], values[1], reply, options)
                        .map_err(String::from)
                }
                Some(Err(reason)) => Err(reason.clone()),
                None => Err("not judged".to_string()),
            });
            let first = judged.next()?;
            Some(judged.fold(first, |kept, next| match (kept, next) {
                (Ok(a), Ok(b)) => Ok(citation_support::stricter(a, b)),
                (Err(e), _) | (_, Err(e)) => Err(e),
            }))
        })
        .collect())
}

/// `citation_support` over columns: one struct per (claim, cited_span) row.
pub fn citation_support(
    claim: &Series,
    cited_span: &Series,
    options: &CitationSupportOptions,
) -> PolarsResult<Series> {
    let rows = support_rows("citation_support", claim, cited_span, options)?;
    let ok = |i: usize| rows[i].as_ref().and_then(|r| r.as_ref().ok());
    let len = rows.len();
    let text = |name: &str, get: fn(&CitationSupport) -> String| {
        StringChunked::from_iter_options(name.into(), (0..len).map(|i| ok(i).map(get)))
            .into_series()
    };
    let flag = |name: &str, get: fn(&CitationSupport) -> Option<bool>| {
        BooleanChunked::from_iter_options(name.into(), (0..len).map(|i| ok(i).and_then(get)))
            .into_series()
    };
    let offset = |name: &str, get: fn(&CitationSupport) -> Option<i64>| {
        Int64Chunked::from_iter_options(name.into(), (0..len).map(|i| ok(i).and_then(get)))
            .into_series()
    };
    let count = |name: &str, verdict: Verdict| {
        Float64Chunked::from_iter_options(
            name.into(),
            (0..len).map(|i| ok(i).map(|s| f64::from(u8::from(s.verdict == verdict)))),
        )
        .into_series()
    };
    let error = StringChunked::from_iter_options(
        "judge_error".into(),
        rows.iter()
            .map(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned())),
    )
    .into_series();
    let fields = [
        text("verdict", |s| s.verdict.as_str().to_string()),
        text("supporting_phrase", |s| s.supporting_phrase.clone()),
        text("missing_or_extra", |s| s.missing_or_extra.clone()),
        text("decision_basis", |s| s.decision_basis.clone()),
        flag("phrase_verified", |s| Some(s.phrase_verified)),
        offset("phrase_start", |s| {
            s.phrase_span.map(|(start, _)| start as i64)
        }),
        offset("phrase_end", |s| s.phrase_span.map(|(_, end)| end as i64)),
        flag("unverified_phrase", |s| Some(s.unverified_phrase)),
        flag("lenient", |s| Some(s.lenient)),
        flag("echo", |s| Some(s.echo)),
        flag("compound_claim", |s| Some(s.compound_claim)),
        flag("runs_agree", |s| s.runs_agree),
        flag("flagged", |s| Some(s.flagged())),
        count("fully_supported", Verdict::FullySupported),
        count("partially_supported", Verdict::PartiallySupported),
        count("not_supported", Verdict::NotSupported),
        error,
    ];
    let valid: Vec<bool> = rows.iter().map(Option::is_some).collect();
    struct_series("citation_support", &fields, &valid)
}

/// Output dtype of `citation_precision`.
pub fn citation_precision_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("citation_precision".into(), DataType::Float64),
        Field::new("fully_supported".into(), DataType::UInt32),
        Field::new("partially_supported".into(), DataType::UInt32),
        Field::new("not_supported".into(), DataType::UInt32),
        Field::new("failed".into(), DataType::UInt32),
    ])
}

/// `citation_precision` over columns: one row with the share of judged pairs fully supported
/// (partial support counted separately, failed judgements and null rows left out).
pub fn citation_precision(
    claim: &Series,
    cited_span: &Series,
    options: &CitationSupportOptions,
) -> PolarsResult<Series> {
    let rows = support_rows("citation_precision", claim, cited_span, options)?;
    let mut counts = [0u32; 3];
    let mut failed = 0u32;
    for row in rows.iter().flatten() {
        match row {
            Ok(s) => counts[2 - s.verdict as usize] += 1,
            Err(_) => failed += 1,
        }
    }
    let sums = counts.map(f64::from);
    let fields = [
        Series::new(
            "citation_precision".into(),
            [citation_support::precision_of_sums(&sums)],
        ),
        Series::new("fully_supported".into(), [counts[0]]),
        Series::new("partially_supported".into(), [counts[1]]),
        Series::new("not_supported".into(), [counts[2]]),
        Series::new("failed".into(), [failed]),
    ];
    struct_series("citation_precision", &fields, &[true])
}

/// Output dtype of `answer_match`.
pub fn answer_match_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("match".into(), DataType::Boolean),
        Field::new("score".into(), DataType::Float64),
        Field::new("reasoning".into(), DataType::String),
        Field::new("judge_error".into(), DataType::String),
    ])
}

/// `answer_match` over columns: one struct per (question, answer, reference) row. The
/// reference may be a string or a list of reference answers; with several, the answer matches
/// when it matches any of them (each pair is judged, and cached, on its own).
pub fn answer_match(
    question: &Series,
    answer: &Series,
    reference: &Series,
    options: &AnswerMatchOptions,
) -> PolarsResult<Series> {
    let metric = "answer_match";
    let questions = StrColumn::new(metric, "question", question)?;
    // The answer and its references, read and broadcast as every answer metric reads them.
    let answers_and_references =
        super::columns::per_answer(metric, answer, reference, false, |_: &mut (), a, refs| {
            Some((
                a.to_string(),
                refs.iter().map(|r| r.to_string()).collect::<Vec<String>>(),
            ))
        })?;
    let len = output_len(
        metric,
        &[
            (question.name().as_str(), questions.len()),
            (answer.name().as_str(), answers_and_references.len()),
        ],
    )?;
    let question_rows = questions.rows(0..len);
    let pair = |i: usize| {
        if answers_and_references.len() == 1 {
            &answers_and_references[0]
        } else {
            &answers_and_references[i]
        }
    };
    // One judged row per (question, answer, reference); `owner[k]` is the output row of pair k.
    let mut rows: Vec<Option<Vec<&str>>> = Vec::new();
    let mut owner: Vec<usize> = Vec::new();
    for (i, q) in question_rows.iter().enumerate() {
        if let (Some(q), Some((a, refs))) = (q, pair(i)) {
            for r in refs {
                rows.push(Some(vec![q, a.as_str(), r.as_str()]));
                owner.push(i);
            }
        }
    }
    let replies = judge_rows(metric, "answer_match", &options.judge, &rows, 1)?.remove(0);
    let mut judged: Vec<Option<Result<answer_match::AnswerMatch, String>>> = vec![None; len];
    for (reply, &i) in replies.into_iter().zip(&owner) {
        let scored = reply
            .unwrap_or_else(|| Err("not judged".into()))
            .and_then(|r| answer_match::score_reply(&r).map_err(|e| e.to_string()));
        judged[i] = Some(match (judged[i].take(), scored) {
            (None, next) => next,
            // A match with any reference is a match; otherwise the first judgement (or error) stands.
            (Some(Ok(kept)), _) if kept.matched => Ok(kept),
            (Some(_), Ok(next)) if next.matched => Ok(next),
            (Some(kept), _) => kept,
        });
    }
    let ok = |i: usize| judged[i].as_ref().and_then(|r| r.as_ref().ok());
    let len = judged.len();
    let fields = [
        BooleanChunked::from_iter_options(
            "match".into(),
            (0..len).map(|i| ok(i).map(|m| m.matched)),
        )
        .into_series(),
        Float64Chunked::from_iter_options(
            "score".into(),
            (0..len).map(|i| ok(i).map(|m| f64::from(u8::from(m.matched)))),
        )
        .into_series(),
        StringChunked::from_iter_options(
            "reasoning".into(),
            (0..len).map(|i| ok(i).map(|m| m.reasoning.clone())),
        )
        .into_series(),
        StringChunked::from_iter_options(
            "judge_error".into(),
            judged
                .iter()
                .map(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned())),
        )
        .into_series(),
    ];
    let valid: Vec<bool> = judged.iter().map(Option::is_some).collect();
    struct_series(metric, &fields, &valid)
}

/// Output dtype of `relevance_grade`.
pub fn relevance_grade_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("grade".into(), DataType::Int64),
        Field::new("reason".into(), DataType::String),
        Field::new("judge_error".into(), DataType::String),
    ])
}

/// `relevance_grade` over columns: one 0–3 grade per (question, passage) row (see
/// [`crate::metrics::judged::relevance`]).
pub fn relevance_grade(
    question: &Series,
    passage: &Series,
    options: &crate::metrics::judged::relevance::RelevanceGradeOptions,
) -> PolarsResult<Series> {
    use crate::metrics::judged::relevance;
    let metric = "relevance_grade";
    let questions = StrColumn::new(metric, "question", question)?;
    let passages = StrColumn::new(metric, "passage", passage)?;
    let len = output_len(
        metric,
        &[
            (question.name().as_str(), questions.len()),
            (passage.name().as_str(), passages.len()),
        ],
    )?;
    let (question_rows, passage_rows) = (questions.rows(0..len), passages.rows(0..len));
    let rows: Vec<Option<Vec<&str>>> = question_rows
        .iter()
        .zip(&passage_rows)
        .map(|(q, p)| Some(vec![(*q)?, (*p)?]))
        .collect();
    let replies = judge_rows(metric, "relevance_grade", &options.judge, &rows, 1)?.remove(0);
    let judged: Vec<Option<Result<relevance::RelevanceGrade, String>>> = replies
        .into_iter()
        .zip(&rows)
        .map(|(reply, row)| {
            row.as_ref()?;
            Some(
                reply
                    .unwrap_or_else(|| Err("not judged".into()))
                    .and_then(|r| relevance::score_reply(&r).map_err(|e| e.to_string())),
            )
        })
        .collect();
    let ok = |i: usize| judged[i].as_ref().and_then(|r| r.as_ref().ok());
    let fields = [
        Int64Chunked::from_iter_options("grade".into(), (0..len).map(|i| ok(i).map(|g| g.grade)))
            .into_series(),
        StringChunked::from_iter_options(
            "reason".into(),
            (0..len).map(|i| ok(i).map(|g| g.reason.clone())),
        )
        .into_series(),
        StringChunked::from_iter_options(
            "judge_error".into(),
            judged
                .iter()
                .map(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned())),
        )
        .into_series(),
    ];
    let valid: Vec<bool> = judged.iter().map(Option::is_some).collect();
    struct_series(metric, &fields, &valid)
}

/// One rubric judgement: the integer written, the probability-weighted score, the reason.
type Rubric = (i64, Option<f64>, String);

/// Output dtype of `g_eval`.
pub fn g_eval_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("score".into(), DataType::Float64),
        Field::new("raw_score".into(), DataType::Int64),
        Field::new("weighted_score".into(), DataType::Float64),
        Field::new("reason".into(), DataType::String),
        Field::new("judge_error".into(), DataType::String),
    ])
}

/// `g_eval` over columns: one rubric judgement per (question, answer, reference) row. The
/// reference may be null or empty (judged without one), or a list (its first answer). `score`
/// is the probability-weighted score when the server gave token probabilities, else the
/// integer the judge wrote (`raw_score`), mapped from the score range to [0, 1].
pub fn g_eval(
    question: &Series,
    answer: &Series,
    reference: &Series,
    options: &GEvalOptions,
) -> PolarsResult<Series> {
    const METRIC: &str = "g_eval";
    let card = options.card()?;
    let questions = StrColumn::new(METRIC, "question", question)?;
    let answers = StrColumn::new(METRIC, "answer", answer)?;
    let references = TextListColumn::new(METRIC, "reference", reference)?;
    let len = output_len(
        METRIC,
        &[
            (question.name().as_str(), questions.len()),
            (answer.name().as_str(), answers.len()),
            (reference.name().as_str(), references.len()),
        ],
    )?;
    let (question_rows, answer_rows) = (questions.rows(0..len), answers.rows(0..len));
    let reference_rows = references.rows(0..len);
    let rows: Vec<Option<Vec<&str>>> = (0..len)
        .map(|i| {
            let reference = reference_rows
                .get(i)
                .and_then(|r| r.first().copied())
                .unwrap_or("");
            Some(vec![question_rows[i]?, answer_rows[i]?, reference])
        })
        .collect();
    let replies = judge_with(METRIC, &card, &options.judge, &rows, 0)?;
    let judged: Vec<Option<Result<Rubric, String>>> = replies
        .into_iter()
        .map(|reply| {
            reply.map(|r| {
                let r = r?;
                let raw = r
                    .get(SCORE_FIELD)
                    .and_then(serde_json::Value::as_i64)
                    .ok_or("the reply's score is not an integer")?;
                let weighted = crate::metrics::judged::g_eval::weighted_of_reply(&r, &card);
                let reason = r.get("reason").and_then(|v| v.as_str()).unwrap_or("");
                Ok((raw, weighted, reason.to_string()))
            })
        })
        .collect();
    let ok = |i: usize| judged[i].as_ref().and_then(|r| r.as_ref().ok());
    let fields = [
        Float64Chunked::from_iter_options(
            "score".into(),
            (0..len).map(|i| ok(i).map(|(raw, w, _)| options.normalised(w.unwrap_or(*raw as f64)))),
        )
        .into_series(),
        Int64Chunked::from_iter_options("raw_score".into(), (0..len).map(|i| ok(i).map(|j| j.0)))
            .into_series(),
        Float64Chunked::from_iter_options(
            "weighted_score".into(),
            (0..len).map(|i| ok(i).and_then(|j| j.1)),
        )
        .into_series(),
        StringChunked::from_iter_options(
            "reason".into(),
            (0..len).map(|i| ok(i).map(|j| j.2.clone())),
        )
        .into_series(),
        StringChunked::from_iter_options(
            "judge_error".into(),
            judged
                .iter()
                .map(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned())),
        )
        .into_series(),
    ];
    let valid: Vec<bool> = judged.iter().map(Option::is_some).collect();
    struct_series(METRIC, &fields, &valid)
}

/// Output dtype of `split_claims`.
pub fn split_claims_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("claims".into(), DataType::List(Box::new(DataType::String))),
        Field::new("judge_error".into(), DataType::String),
    ])
}

/// `split_claims` over columns: the answer's atomic claims (`claims`, explode it to judge each),
/// by the judge or by the rules, and `judge_error` when the judge gave none.
pub fn split_claims(answer: &Series, options: &SplitClaimsOptions) -> PolarsResult<Series> {
    let metric = "split_claims";
    let rows = string_rows(metric, &[("answer", answer)])?;
    let split: Vec<Option<Result<Vec<String>, String>>> = match options.method {
        ClaimSplitter::Rules => rows
            .iter()
            .map(|row| {
                row.as_ref()
                    .map(|values| Ok(claims::split_claims_by_rules(values[0])))
            })
            .collect(),
        ClaimSplitter::Judge => judge_rows(metric, "split_claims", &options.judge, &rows, 1)?
            .remove(0)
            .into_iter()
            .map(|reply| reply.map(|r| r.map(|value| claims::claims_of_reply(&value))))
            .collect(),
    };
    let len = split.len();
    let mut lists = ListStringChunkedBuilder::new("claims".into(), len, len * 4);
    for row in &split {
        match row {
            Some(Ok(claims)) => lists.append_values_iter(claims.iter().map(String::as_str)),
            _ => lists.append_null(),
        }
    }
    let fields = [
        lists.finish().into_series(),
        StringChunked::from_iter_options(
            "judge_error".into(),
            split
                .iter()
                .map(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned())),
        )
        .into_series(),
    ];
    let valid: Vec<bool> = split.iter().map(Option::is_some).collect();
    struct_series(metric, &fields, &valid)
}

/// How far a judge agrees with labels (or with another run): `predicted` and `labels` are
/// columns of verdicts (strings, or booleans as `answer_match` gives them), row for row. Returns
/// a one-row summary (`n`, `failed`, `accuracy`, `kappa`, see
/// [`agreement`]) and the confusion matrix as
/// `label`, `predicted`, `count` rows.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::judged::judge_agreement;
/// let verdicts = Series::new("verdict".into(), [Some("yes"), Some("no"), None]);
/// let labels = Series::new("label".into(), ["yes", "yes", "no"]);
/// let (summary, confusion) = judge_agreement(&verdicts, &labels).unwrap();
/// assert_eq!(summary.column("accuracy").unwrap().f64().unwrap().get(0), Some(0.5));
/// assert_eq!(summary.column("failed").unwrap().u64().unwrap().get(0), Some(1));
/// assert_eq!(confusion.height(), 2);
/// ```
pub fn judge_agreement(
    predicted: &Series,
    labels: &Series,
) -> PolarsResult<(DataFrame, DataFrame)> {
    const ID: &str = "judge_agreement";
    if predicted.len() != labels.len() {
        polars_bail!(ShapeMismatch: "{ID}: '{}' has {} rows and '{}' {}", predicted.name(), predicted.len(), labels.name(), labels.len());
    }
    let as_text = |s: &Series| -> PolarsResult<Series> {
        match s.dtype() {
            DataType::String => Ok(s.clone()),
            DataType::Boolean | DataType::Null => s.cast(&DataType::String),
            other => {
                polars_bail!(SchemaMismatch: "{ID}: column '{}' must hold verdicts (str or bool), got {other}", s.name())
            }
        }
    };
    let (predicted, labels) = (as_text(predicted)?, as_text(labels)?);
    let a = agreement(predicted.str()?.iter().zip(labels.str()?.iter()));
    let summary = df!(
        "n" => [a.n as u64],
        "failed" => [a.failed as u64],
        "accuracy" => [a.accuracy],
        "kappa" => [a.kappa]
    )?;
    let confusion = df!(
        "label" => a.confusion.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        "predicted" => a.confusion.iter().map(|c| c.1.as_str()).collect::<Vec<_>>(),
        "count" => a.confusion.iter().map(|c| c.2 as u64).collect::<Vec<_>>()
    )?;
    Ok((summary, confusion))
}

/// The rows of a judged table to check by hand, most suspicious first
/// ([`crate::metrics::judged::review`]): `frame`'s rows that have a reason, with `suspicion`
/// and `reasons` (joined by "; ") first and the `support` struct column (`citation_support`'s
/// output) unnested in its place. An empty frame when nothing is suspicious.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::judged::{citation_review, citation_support_dtype};
/// let support = Series::full_null("citation_support".into(), 2, &citation_support_dtype());
/// let frame = DataFrame::new(2, vec![support.into_column()]).unwrap();
/// // Null judgements (null inputs) have nothing to review.
/// assert_eq!(citation_review(&frame, "citation_support").unwrap().height(), 0);
/// ```
pub fn citation_review(frame: &DataFrame, support: &str) -> PolarsResult<DataFrame> {
    use crate::metrics::judged::review::{review_order, SupportFlags};
    const METRIC: &str = "citation_review";
    let column = frame.column(support).map_err(
        |_| polars_err!(ComputeError: "{METRIC}: no column '{support}' (citation_support's output)"),
    )?;
    let DataType::Struct(_) = column.dtype() else {
        polars_bail!(SchemaMismatch: "{METRIC}: column '{support}' must be citation_support's struct, got {}", column.dtype());
    };
    let fields = column.struct_()?.clone().unnest();
    let field = |name: &str| {
        fields.column(name).map_err(|_| polars_err!(SchemaMismatch: "{METRIC}: column '{support}' has no field '{name}': is it citation_support's output?"))
    };
    let text = |name: &str| field(name)?.str().cloned();
    let flag = |name: &str| field(name)?.bool().cloned();
    let (verdict, error) = (text("verdict")?, text("judge_error")?);
    let (unverified, lenient, echo, compound, agree) = (
        flag("unverified_phrase")?,
        flag("lenient")?,
        flag("echo")?,
        flag("compound_claim")?,
        flag("runs_agree")?,
    );
    let valid = column.is_not_null();
    let rows: Vec<Option<SupportFlags<'_>>> = (0..frame.height())
        .map(|i| {
            valid.get(i).unwrap_or(false).then(|| SupportFlags {
                verdict: verdict.get(i),
                unverified_phrase: unverified.get(i).unwrap_or(false),
                lenient: lenient.get(i).unwrap_or(false),
                echo: echo.get(i).unwrap_or(false),
                compound_claim: compound.get(i).unwrap_or(false),
                runs_agree: agree.get(i),
                judge_error: error.get(i),
            })
        })
        .collect();
    let order = review_order(&rows);
    let take = IdxCa::from_vec(
        "row".into(),
        order.iter().map(|r| r.row as IdxSize).collect(),
    );
    let mut columns: Vec<Column> = vec![
        Column::new("row".into(), take.clone().into_series()),
        Column::new(
            "suspicion".into(),
            order.iter().map(|r| r.suspicion).collect::<Vec<u32>>(),
        ),
        Column::new(
            "reasons".into(),
            order
                .iter()
                .map(|r| r.reasons.join("; "))
                .collect::<Vec<String>>(),
        ),
    ];
    let picked = frame.take(&take)?;
    let picked_fields = fields.take(&take)?;
    for c in picked.columns() {
        if c.name().as_str() == support {
            columns.extend(picked_fields.columns().iter().cloned());
        } else if !["row", "suspicion", "reasons"].contains(&c.name().as_str()) {
            columns.push(c.clone());
        }
    }
    DataFrame::new(order.len(), columns)
}

/// Writes a review table (see [`citation_review`]) as an `.xlsx` workbook (sheet "Review"),
/// atomically: numbers as numbers, everything else as text.
#[cfg(feature = "xlsx")]
pub fn write_citation_review(review: &DataFrame, path: &std::path::Path) -> PolarsResult<()> {
    super::sheets::write_frame(review, path, "Review", "citation_review")
}

/// The column type of a custom judge's reply field.
fn reply_dtype(kind: &ReplyKind) -> DataType {
    match kind {
        ReplyKind::String | ReplyKind::Json => DataType::String,
        ReplyKind::Integer => DataType::Int64,
        ReplyKind::Number => DataType::Float64,
        ReplyKind::Boolean => DataType::Boolean,
        ReplyKind::List(item) => DataType::List(Box::new(reply_dtype(item))),
    }
}

/// Output dtype of a custom judge: a struct of its reply fields (see
/// [`crate::metrics::judged::custom`] for the type of each), `weighted_score` when the card
/// weights a field by token probabilities, and `judge_error`.
pub fn custom_judge_dtype(options: &CustomJudgeOptions) -> PolarsResult<DataType> {
    let card = options.card()?;
    let mut fields: Vec<Field> = options
        .reply_fields()?
        .iter()
        .map(|(name, kind)| Field::new(name.into(), reply_dtype(kind)))
        .collect();
    if card.weighted_score.is_some() {
        fields.push(Field::new("weighted_score".into(), DataType::Float64));
    }
    fields.push(Field::new("judge_error".into(), DataType::String));
    Ok(DataType::Struct(fields))
}

/// One reply field's values as a column of `kind` (null where a row has no reply or the
/// field is absent).
fn reply_column(
    name: &str,
    kind: &ReplyKind,
    values: &[Option<&serde_json::Value>],
) -> PolarsResult<Series> {
    use serde_json::Value;
    let name: PlSmallStr = name.into();
    Ok(match kind {
        ReplyKind::String => {
            StringChunked::from_iter_options(name, values.iter().map(|v| v.and_then(Value::as_str)))
                .into_series()
        }
        ReplyKind::Json => StringChunked::from_iter_options(
            name,
            values
                .iter()
                .map(|v| v.filter(|v| !v.is_null()).map(Value::to_string)),
        )
        .into_series(),
        ReplyKind::Integer => {
            Int64Chunked::from_iter_options(name, values.iter().map(|v| v.and_then(Value::as_i64)))
                .into_series()
        }
        ReplyKind::Number => Float64Chunked::from_iter_options(
            name,
            values.iter().map(|v| v.and_then(Value::as_f64)),
        )
        .into_series(),
        ReplyKind::Boolean => BooleanChunked::from_iter_options(
            name,
            values.iter().map(|v| v.and_then(Value::as_bool)),
        )
        .into_series(),
        ReplyKind::List(item) => {
            let rows: Vec<Option<Series>> = values
                .iter()
                .map(|v| {
                    let Some(items) = v.and_then(Value::as_array) else {
                        return Ok(None);
                    };
                    let items: Vec<Option<&Value>> = items.iter().map(Some).collect();
                    reply_column("", item, &items).map(Some)
                })
                .collect::<PolarsResult<_>>()?;
            let mut list: ListChunked = rows.into_iter().collect();
            list.rename(name);
            // Empty or all-null lists collect untyped: give them the declared item type.
            list.into_series()
                .cast(&DataType::List(Box::new(reply_dtype(item))))?
        }
    })
}

/// A custom judge over columns: `inputs` are in the order of the card's inputs; each row is
/// judged once (null inputs: a null row) and its reply's fields become the output's fields.
/// Errors and nulls name the card's id, which is also the output's name.
pub fn custom_judge(inputs: &[Series], options: &CustomJudgeOptions) -> PolarsResult<Series> {
    let card = options.card()?;
    let metric = card.id.as_str();
    if inputs.len() != card.inputs.len() {
        polars_bail!(InvalidOperation: "{metric}: the card names {} inputs ({}), got {} columns", card.inputs.len(), card.inputs.join(", "), inputs.len());
    }
    let roles: Vec<(&str, &Series)> = card.inputs.iter().map(String::as_str).zip(inputs).collect();
    let rows = string_rows(metric, &roles)?;
    let replies = judge_with(metric, &card, &options.judge, &rows, 0)?;
    let ok: Vec<Option<&serde_json::Value>> = replies
        .iter()
        .map(|r| r.as_ref().and_then(|r| r.as_ref().ok()))
        .collect();
    let mut fields: Vec<Series> = options
        .reply_fields()?
        .iter()
        .map(|(name, kind)| {
            let values: Vec<Option<&serde_json::Value>> =
                ok.iter().map(|r| r.and_then(|r| r.get(name))).collect();
            reply_column(name, kind, &values)
        })
        .collect::<PolarsResult<_>>()?;
    if card.weighted_score.is_some() {
        fields.push(
            Float64Chunked::from_iter_options(
                "weighted_score".into(),
                ok.iter().map(|r| {
                    r.and_then(|r| crate::metrics::judged::g_eval::weighted_of_reply(r, &card))
                }),
            )
            .into_series(),
        );
    }
    fields.push(
        StringChunked::from_iter_options(
            "judge_error".into(),
            replies
                .iter()
                .map(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned())),
        )
        .into_series(),
    );
    let valid: Vec<bool> = replies.iter().map(Option::is_some).collect();
    struct_series(metric, &fields, &valid)
}

/// The judge log of the cache in `directory` as a table, one row per cached reply in the order
/// they were stored (only prompt `template`'s when given): `key`, `template`, `template_hash`,
/// `model`, `base_url` (credentials redacted), `sample`, `messages`
/// (`list[struct{role, content}]`: what the judge saw, a re-ask included), `reply` (the
/// validated JSON text), `prompt_tokens`, `completion_tokens`, `latency_ms` and `created`
/// (UTC). The columns of how a reply was obtained are null for replies cached before the log
/// was kept. No API key is in any column.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("polars-rag-doc-log-{}", std::process::id()));
/// let log = polars_rag::columnar::judged::judge_log_frame(&dir, None).unwrap();
/// assert_eq!(log.height(), 0); // no cache there yet
/// assert_eq!(log.get_column_names()[..3], ["key", "template", "template_hash"]);
/// ```
pub fn judge_log_frame(
    directory: &std::path::Path,
    template: Option<&str>,
) -> PolarsResult<DataFrame> {
    use crate::engines::judge::cache::judge_log;
    let rows = judge_log(directory, template).map_err(|e| polars_err!(ComputeError: "{e}"))?;
    let text =
        |name: &str, f: &dyn Fn(&crate::engines::judge::cache::LoggedCall) -> Option<String>| {
            Series::new(name.into(), rows.iter().map(f).collect::<Vec<_>>()).into_column()
        };
    let message_fields = [
        Field::new("role".into(), DataType::String),
        Field::new("content".into(), DataType::String),
    ];
    let message_dtype = DataType::Struct(message_fields.to_vec());
    let mut messages: Vec<Option<Series>> = Vec::with_capacity(rows.len());
    for row in &rows {
        let Some(call) = &row.call else {
            messages.push(None);
            continue;
        };
        let parsed: Vec<serde_json::Value> = serde_json::from_str(&call.messages)
            .map_err(|e| polars_err!(ComputeError: "judge log: the messages of cached reply {} are not JSON: {e}", row.key))?;
        let field = |name: &str| {
            Series::new(
                name.into(),
                parsed
                    .iter()
                    .map(|m| m.get(name).and_then(|v| v.as_str()).map(String::from))
                    .collect::<Vec<_>>(),
            )
        };
        let list = StructChunked::from_series(
            "".into(),
            parsed.len(),
            [field("role"), field("content")].iter(),
        )?;
        messages.push(Some(list.into_series()));
    }
    // (A list built from rows that are all null, or none, cannot tell its type: give it.)
    let messages_column = if messages.iter().all(Option::is_none) {
        Series::full_null(
            "messages".into(),
            rows.len(),
            &DataType::List(Box::new(message_dtype)),
        )
    } else {
        let mut column = ListChunked::from_iter(messages).into_series();
        column.rename("messages".into());
        column
    };
    let created: Series = Series::new(
        "created".into(),
        rows.iter()
            .map(|r| (r.created * 1e6).round() as i64)
            .collect::<Vec<_>>(),
    )
    .cast(&DataType::Datetime(TimeUnit::Microseconds, None))?;
    DataFrame::new_infer_height(vec![
        text("key", &|r| Some(r.key.clone())),
        text("template", &|r| Some(r.template.clone())),
        text("template_hash", &|r| {
            r.call.as_ref().map(|c| c.template_hash.clone())
        }),
        text("model", &|r| Some(r.model.clone())),
        text("base_url", &|r| r.call.as_ref().map(|c| c.base_url.clone())),
        Series::new(
            "sample".into(),
            rows.iter()
                .map(|r| r.call.as_ref().map(|c| c.sample))
                .collect::<Vec<_>>(),
        )
        .into_column(),
        messages_column.into_column(),
        text("reply", &|r| Some(r.reply.clone())),
        Series::new(
            "prompt_tokens".into(),
            rows.iter().map(|r| r.prompt_tokens).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "completion_tokens".into(),
            rows.iter().map(|r| r.completion_tokens).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "latency_ms".into(),
            rows.iter()
                .map(|r| r.call.as_ref().map(|c| c.latency_ms))
                .collect::<Vec<_>>(),
        )
        .into_column(),
        created.into_column(),
    ])
}

/// Output dtype of `citation_recall_precision`.
pub fn citation_recall_precision_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("citation_recall".into(), DataType::Float64),
        Field::new("citation_precision".into(), DataType::Float64),
        Field::new("sentences".into(), DataType::UInt32),
        Field::new("citations".into(), DataType::UInt32),
        Field::new("out_of_range".into(), DataType::UInt32),
        Field::new("judge_error".into(), DataType::String),
    ])
}

/// One row's passages: `(title, text)` each.
type TitledPassages = Vec<(Option<String>, String)>;

/// Each row's passages as `(title, text)`: a `list[str]` (no titles), a list of structs with a
/// `text` field (and a `title` one, when passages have titles), or a `str` (one passage). A null
/// row or a null text is `None` / skipped.
fn titled_passages(
    metric: &str,
    passages: &Series,
    len: usize,
) -> PolarsResult<Vec<Option<TitledPassages>>> {
    let bad = || polars_err!(SchemaMismatch: "{metric}: column '{}' (passages) must be list[str], str, or list[struct] with a 'text' (and optionally 'title') field of type String, got {}", passages.name(), passages.dtype());
    let rows: Vec<Option<TitledPassages>> = match passages.dtype() {
        DataType::Null => vec![None; passages.len()],
        // One passage per row.
        DataType::String => passages
            .str()?
            .iter()
            .map(|t| t.map(|t| vec![(None, t.to_string())]))
            .collect(),
        DataType::List(inner) => {
            let mut rows = Vec::with_capacity(passages.len());
            for item in passages.list()?.amortized_iter() {
                let Some(item) = item else {
                    rows.push(None);
                    continue;
                };
                let item = item.as_ref();
                let row: Vec<(Option<String>, String)> = match inner.as_ref() {
                    DataType::String | DataType::Null => item
                        .cast(&DataType::String)?
                        .str()?
                        .iter()
                        .flatten()
                        .map(|t| (None, t.to_string()))
                        .collect(),
                    DataType::Struct(fields) => {
                        let field = |name: &str| -> PolarsResult<Option<Series>> {
                            Ok(match fields.iter().find(|f| f.name().as_str() == name) {
                                Some(f) if f.dtype() == &DataType::String => {
                                    Some(item.struct_()?.field_by_name(name)?)
                                }
                                Some(_) => return Err(bad()),
                                None => None,
                            })
                        };
                        let texts = field("text")?.ok_or_else(bad)?;
                        let titles = field("title")?;
                        let texts = texts.str()?;
                        let titles = titles.as_ref().map(|t| t.str()).transpose()?;
                        (0..texts.len())
                            .filter_map(|j| {
                                let text = texts.get(j)?;
                                let title = titles.and_then(|t| t.get(j)).map(String::from);
                                Some((title, text.to_string()))
                            })
                            .collect()
                    }
                    _ => return Err(bad()),
                };
                rows.push(Some(row));
            }
            rows
        }
        _ => return Err(bad()),
    };
    Ok(if rows.len() == 1 && len != 1 {
        vec![rows[0].clone(); len]
    } else {
        rows
    })
}

/// `citation_recall_precision` over columns: ALCE's citation recall and precision of each
/// answer citing its passages, a judge answering the entailment questions (see
/// [`crate::metrics::judged::citation_recall`]). The questions of all rows are asked together,
/// in rounds, each distinct question once. For ALCE's QAMPARI reading (`qampari` in the
/// options), see [`citation_recall_precision_with_questions`].
pub fn citation_recall_precision(
    answer: &Series,
    passages: &Series,
    options: &crate::metrics::judged::citation_recall::CitationRecallOptions,
) -> PolarsResult<Series> {
    citation_recall_precision_with_questions(answer, passages, None, options)
}

/// [`citation_recall_precision`] with each answer's question, which ALCE's QAMPARI reading
/// (`qampari` in the options) puts before each item of the answer's list: required with
/// `qampari`, refused without it (the sentence reading does not read it). A null question is a
/// null row, as a null answer is.
pub fn citation_recall_precision_with_questions(
    answer: &Series,
    passages: &Series,
    question: Option<&Series>,
    options: &crate::metrics::judged::citation_recall::CitationRecallOptions,
) -> PolarsResult<Series> {
    use std::collections::{HashMap, HashSet};

    use crate::metrics::alce::{citation_progress, CitationScores, Passage, Progress, Reading};
    use crate::metrics::judged::citation_recall::entailed;
    let metric = "citation_recall_precision";
    options.validate()?;
    let questions = match (question, options.qampari) {
        (Some(question), true) => Some(StrColumn::new(metric, "question", question)?),
        (None, false) => None,
        (None, true) => polars_bail!(InvalidOperation:
            "{metric}: qampari reads each answer's question: give the question column"),
        (Some(question), false) => polars_bail!(InvalidOperation:
            "{metric}: the question column '{}' is read only with qampari = true (ALCE's sentence reading does not use it)",
            question.name()),
    };
    let answers = StrColumn::new(metric, "answer", answer)?;
    let mut lengths = vec![
        (answer.name().as_str(), answers.len()),
        (passages.name().as_str(), passages.len()),
    ];
    if let (Some(column), Some(values)) = (question, &questions) {
        lengths.push((column.name().as_str(), values.len()));
    }
    let len = output_len(metric, &lengths)?;
    let answer_rows = answers.rows(0..len);
    let question_rows = questions.as_ref().map(|q| q.rows(0..len));
    let passage_rows = titled_passages(metric, passages, len)?;
    let reading = |i: usize| match &question_rows {
        None => Some(Reading::Sentences),
        Some(rows) => rows[i].map(|question| Reading::Qampari { question }),
    };
    type Outcome = Option<Result<Option<CitationScores>, String>>;
    let mut outcomes: Vec<Outcome> = vec![None; len];
    let mut open: Vec<usize> = (0..len)
        .filter(|&i| answer_rows[i].is_some() && passage_rows[i].is_some() && reading(i).is_some())
        .collect();
    let mut known: HashMap<(String, String), Result<bool, String>> = HashMap::new();
    // ALCE asks at most three questions deep (joint, single, leave-one-out): four rounds end it.
    for _ in 0..4 {
        let mut asked: Vec<(String, String)> = Vec::new();
        let mut seen: HashSet<(String, String)> = HashSet::new();
        let mut still_open = Vec::new();
        for &i in &open {
            let (Some(text), Some(own), Some(reading)) =
                (answer_rows[i], &passage_rows[i], reading(i))
            else {
                continue;
            };
            let row_passages: Vec<Passage> = own
                .iter()
                .map(|(title, text)| Passage {
                    title: title.as_deref(),
                    text,
                })
                .collect();
            let mut lookup = |premise: &str, claim: &str| -> crate::Result<Option<bool>> {
                let key = (premise.to_string(), claim.to_string());
                match known.get(&key) {
                    Some(Ok(value)) => Ok(Some(*value)),
                    Some(Err(e)) => Err(crate::Error::engine(e.clone())),
                    None => {
                        if seen.insert(key.clone()) {
                            asked.push(key);
                        }
                        Ok(None)
                    }
                }
            };
            match citation_progress(
                text,
                &row_passages,
                Some(options.at_most_citations),
                reading,
                &mut lookup,
            ) {
                Ok(Progress::Done(scores)) => outcomes[i] = Some(Ok(scores)),
                Ok(Progress::Pending) => still_open.push(i),
                Err(e) => outcomes[i] = Some(Err(e.message().to_string())),
            }
        }
        open = still_open;
        if asked.is_empty() {
            break;
        }
        let rows: Vec<Option<Vec<&str>>> = asked
            .iter()
            .map(|(premise, claim)| Some(vec![premise.as_str(), claim.as_str()]))
            .collect();
        let replies = judge_rows(metric, "entailment", &options.judge, &rows, 1)?.remove(0);
        for (key, reply) in asked.iter().zip(replies) {
            let value = reply
                .unwrap_or_else(|| Err("not judged".into()))
                .and_then(|r| entailed(&r).map_err(|e| e.to_string()));
            known.insert(key.clone(), value);
        }
    }
    for i in open {
        outcomes[i] = Some(Err("the entailment questions did not settle".into()));
    }
    let ok = |i: usize| {
        outcomes[i]
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .and_then(|s| s.as_ref())
    };
    let count = |name: &str, f: fn(&CitationScores) -> usize| {
        UInt32Chunked::from_iter_options(name.into(), (0..len).map(|i| ok(i).map(|s| f(s) as u32)))
            .into_series()
    };
    let fields = [
        Float64Chunked::from_iter_options(
            "citation_recall".into(),
            (0..len).map(|i| ok(i).map(|s| s.citation_recall)),
        )
        .into_series(),
        Float64Chunked::from_iter_options(
            "citation_precision".into(),
            (0..len).map(|i| ok(i).map(|s| s.citation_precision)),
        )
        .into_series(),
        count("sentences", |s| s.sentences),
        count("citations", |s| s.citations),
        count("out_of_range", |s| s.out_of_range),
        StringChunked::from_iter_options(
            "judge_error".into(),
            outcomes
                .iter()
                .map(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned())),
        )
        .into_series(),
    ];
    // An answer without a sentence has no score (ALCE leaves it out): a null row.
    let valid: Vec<bool> = outcomes
        .iter()
        .map(|o| matches!(o, Some(Ok(Some(_))) | Some(Err(_))))
        .collect();
    struct_series(metric, &fields, &valid)
}

/// Output dtype of `claim_checks`: RAGChecker's eleven scores, the claims and their verdicts,
/// and `judge_error`.
pub fn claim_checks_dtype() -> DataType {
    let texts = || DataType::List(Box::new(DataType::String));
    let mut fields: Vec<Field> = crate::metrics::claim_checks::SCORE_NAMES
        .iter()
        .map(|name| Field::new((*name).into(), DataType::Float64))
        .collect();
    fields.extend([
        Field::new("response_claims".into(), texts()),
        Field::new("reference_claims".into(), texts()),
        Field::new("response_in_reference".into(), texts()),
        Field::new("reference_in_response".into(), texts()),
        Field::new(
            "response_in_chunks".into(),
            DataType::List(Box::new(texts())),
        ),
        Field::new(
            "reference_in_chunks".into(),
            DataType::List(Box::new(texts())),
        ),
        Field::new("judge_error".into(), DataType::String),
    ]);
    DataType::Struct(fields)
}

/// One answer's claim checks: the claims, the four verdict tables, the scores.
struct ClaimCheckRow {
    response_claims: Vec<String>,
    reference_claims: Vec<String>,
    response_in_reference: Vec<String>,
    reference_in_response: Vec<String>,
    response_in_chunks: Vec<Vec<String>>,
    reference_in_chunks: Vec<Vec<String>>,
    scores: crate::metrics::claim_checks::ClaimCheckScores,
}

/// `claim_checks` over columns: per (answer, reference, contexts) row, the judge splits both
/// answers into claims and checks each against the other answer and each context; the scores
/// are RAGChecker's (see [`crate::metrics::judged::claim_checks`]). Every distinct question is
/// asked once, all rows' together.
pub fn claim_checks(
    answer: &Series,
    reference: &Series,
    contexts: &Series,
    options: &crate::metrics::judged::claim_checks::ClaimChecksOptions,
) -> PolarsResult<Series> {
    use std::collections::HashMap;

    use crate::metrics::claim_checks::{claim_check_scores, parse_verdicts, ClaimCheckCompat};
    let metric = "claim_checks";
    // Several reference answers (a golden table's `reference_answers`): the first is the one
    // RAGChecker's single ground-truth answer stands for.
    let first_reference;
    let reference = match reference.dtype() {
        DataType::List(_) => {
            let mut firsts: Vec<Option<String>> = Vec::with_capacity(reference.len());
            for item in reference.list()?.amortized_iter() {
                firsts.push(item.and_then(|items| {
                    let items = items.as_ref().cast(&DataType::String).ok()?;
                    items.str().ok()?.iter().next().flatten().map(String::from)
                }));
            }
            first_reference = Series::new(reference.name().clone(), firsts);
            &first_reference
        }
        _ => reference,
    };
    let texts = string_rows(metric, &[("answer", answer), ("reference", reference)])?;
    let chunk_column = TextListColumn::new(metric, "contexts", contexts)?;
    let len = output_len(
        metric,
        &[
            (answer.name().as_str(), texts.len()),
            (contexts.name().as_str(), chunk_column.len()),
        ],
    )?;
    let chunk_batch = chunk_column.rows(0..len);
    let row_text = |i: usize| {
        texts
            .get(if texts.len() == 1 { 0 } else { i })
            .cloned()
            .flatten()
    };
    let valid: Vec<bool> = (0..len)
        .map(|i| row_text(i).is_some() && chunk_batch.get(i).is_some())
        .collect();
    // 1. The claims of every answer and reference, in one batch.
    let mut split_rows: Vec<Option<Vec<&str>>> = Vec::new();
    for (i, &usable) in valid.iter().enumerate() {
        let row = row_text(i).filter(|_| usable);
        split_rows.push(row.as_ref().map(|r| vec![r[0]]));
        split_rows.push(row.as_ref().map(|r| vec![r[1]]));
    }
    let split = judge_rows(metric, "split_claims", &options.judge, &split_rows, 1)?.remove(0);
    let mut outcomes: Vec<Option<Result<ClaimCheckRow, String>>> = Vec::with_capacity(len);
    let mut claims: Vec<Option<(Vec<String>, Vec<String>)>> = Vec::with_capacity(len);
    for (i, &usable) in valid.iter().enumerate() {
        if !usable {
            outcomes.push(None);
            claims.push(None);
            continue;
        }
        let read = |k: usize| -> Result<Vec<String>, String> {
            split
                .get(k)
                .cloned()
                .flatten()
                .unwrap_or_else(|| Err("not judged".into()))
                .map(|reply| claims::claims_of_reply(&reply))
        };
        match (read(2 * i), read(2 * i + 1)) {
            (Ok(response), Ok(reference)) => {
                outcomes.push(Some(Err(String::new())));
                claims.push(Some((response, reference)));
            }
            (Err(e), _) | (_, Err(e)) => {
                outcomes.push(Some(Err(e)));
                claims.push(None);
            }
        }
    }
    // 2. Every check: (premise, hypothesis), each distinct pair once.
    let mut asked: Vec<(String, String)> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut ask = |premise: &str, hypothesis: &str| -> usize {
        let key = (premise.to_string(), hypothesis.to_string());
        *index.entry(key.clone()).or_insert_with(|| {
            asked.push(key);
            asked.len() - 1
        })
    };
    // Per row, the question index of each cell of the four tables.
    type Plan = (Vec<usize>, Vec<usize>, Vec<Vec<usize>>, Vec<Vec<usize>>);
    let mut plans: Vec<Option<Plan>> = Vec::with_capacity(len);
    for (i, row_claims) in claims.iter().enumerate() {
        let (Some((response, reference)), Some(r)) = (row_claims, row_text(i)) else {
            plans.push(None);
            continue;
        };
        let chunks = chunk_batch.get(i).unwrap_or(&[]);
        plans.push(Some((
            response.iter().map(|c| ask(r[1], c)).collect(),
            reference.iter().map(|c| ask(r[0], c)).collect(),
            response
                .iter()
                .map(|c| chunks.iter().map(|chunk| ask(chunk, c)).collect())
                .collect(),
            reference
                .iter()
                .map(|c| chunks.iter().map(|chunk| ask(chunk, c)).collect())
                .collect(),
        )));
    }
    let rows: Vec<Option<Vec<&str>>> = asked
        .iter()
        .map(|(p, h)| Some(vec![p.as_str(), h.as_str()]))
        .collect();
    let replies = judge_rows(metric, "entailment", &options.judge, &rows, 1)?.remove(0);
    let labels: Vec<Result<String, String>> = replies
        .into_iter()
        .map(|reply| {
            reply
                .unwrap_or_else(|| Err("not judged".into()))
                .and_then(|r| {
                    r.get("label")
                        .and_then(serde_json::Value::as_str)
                        .map(String::from)
                        .ok_or_else(|| "the reply has no label".to_string())
                })
        })
        .collect();
    // 3. Each row's tables, and RAGChecker's scores of them.
    for i in 0..len {
        let (Some(plan), Some((response, reference))) = (&plans[i], &claims[i]) else {
            continue;
        };
        let built = (|| -> Result<ClaimCheckRow, String> {
            let list = |ids: &[usize]| -> Result<Vec<String>, String> {
                ids.iter().map(|&k| labels[k].clone()).collect()
            };
            let table = |rows: &[Vec<usize>]| -> Result<Vec<Vec<String>>, String> {
                rows.iter().map(|ids| list(ids)).collect()
            };
            let (a, b, c, d) = (
                list(&plan.0)?,
                list(&plan.1)?,
                table(&plan.2)?,
                table(&plan.3)?,
            );
            let read = |labels: &[String]| {
                let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
                parse_verdicts(&labels, ClaimCheckCompat::Standard).map_err(|e| e.to_string())
            };
            let read_table = |rows: &[Vec<String>]| -> Result<Vec<Vec<bool>>, String> {
                rows.iter().map(|r| read(r)).collect()
            };
            let scores =
                claim_check_scores(&read(&a)?, &read(&b)?, &read_table(&c)?, &read_table(&d)?)
                    .map_err(|e| e.to_string())?;
            Ok(ClaimCheckRow {
                response_claims: response.clone(),
                reference_claims: reference.clone(),
                response_in_reference: a,
                reference_in_response: b,
                response_in_chunks: c,
                reference_in_chunks: d,
                scores,
            })
        })();
        outcomes[i] = Some(built);
    }
    let ok = |i: usize| outcomes[i].as_ref().and_then(|r| r.as_ref().ok());
    let mut fields: Vec<Series> = crate::metrics::claim_checks::SCORE_NAMES
        .iter()
        .enumerate()
        .map(|(k, name)| {
            Float64Chunked::from_iter_options(
                (*name).into(),
                (0..len).map(|i| ok(i).map(|r| r.scores.values()[k])),
            )
            .into_series()
        })
        .collect();
    let list_field = |name: &str, get: &dyn Fn(&ClaimCheckRow) -> &Vec<String>| {
        let mut builder = ListStringChunkedBuilder::new(name.into(), len, len * 4);
        for i in 0..len {
            match ok(i) {
                Some(r) => builder.append_values_iter(get(r).iter().map(String::as_str)),
                None => builder.append_null(),
            }
        }
        builder.finish().into_series()
    };
    let table_field = |name: &str, get: &dyn Fn(&ClaimCheckRow) -> &Vec<Vec<String>>| {
        let rows: Vec<Option<Series>> = (0..len)
            .map(|i| {
                ok(i).map(|r| {
                    let inner: Vec<Series> =
                        get(r).iter().map(|v| Series::new("".into(), v)).collect();
                    Series::new("".into(), inner)
                        .cast(&DataType::List(Box::new(DataType::String)))
                        .unwrap_or_else(|_| {
                            Series::new_empty(
                                "".into(),
                                &DataType::List(Box::new(DataType::String)),
                            )
                        })
                })
            })
            .collect();
        let dtype = DataType::List(Box::new(DataType::List(Box::new(DataType::String))));
        // (A list built from rows that are all null cannot tell its type: give it.)
        if rows.iter().all(Option::is_none) {
            return Ok(Series::full_null(name.into(), len, &dtype));
        }
        let mut out = ListChunked::from_iter(rows).into_series();
        out.rename(name.into());
        out.cast(&dtype)
    };
    fields.push(list_field("response_claims", &|r| &r.response_claims));
    fields.push(list_field("reference_claims", &|r| &r.reference_claims));
    fields.push(list_field("response_in_reference", &|r| {
        &r.response_in_reference
    }));
    fields.push(list_field("reference_in_response", &|r| {
        &r.reference_in_response
    }));
    fields.push(table_field("response_in_chunks", &|r| {
        &r.response_in_chunks
    })?);
    fields.push(table_field("reference_in_chunks", &|r| {
        &r.reference_in_chunks
    })?);
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
