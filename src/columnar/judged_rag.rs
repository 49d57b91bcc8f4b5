//! The judged RAG metrics over Polars columns (`faithfulness`, `answer_relevancy`,
//! `context_precision`, `context_utilization`, `context_recall`): read the inputs, ask the
//! process's shared judge for each step of each sample, score the replies with the rules of
//! [`crate::metrics::judged::rag`], and build one struct per row. A row with a null input is a
//! null struct; a row whose judgement failed keeps its row, with the reason in `judge_error`.

use polars::prelude::*;

use crate::engines::embed::Embedder;
use crate::metrics::judged::rag::{
    self, AnswerRelevancyOptions, JudgedRagOptions, Judgement, RagMetric, SampleSummary,
};

use super::driver::{output_len, struct_series, StrColumn, TextListColumn};
use super::judged::judge_sample;
use crate::columnar::judged::Reply as RowReply;

/// What one sample of one row gave: its score (`None`: nothing to score, Ragas' NaN), the
/// judged statements, contexts or questions, and per-item numbers (answer relevancy's cosines).
#[derive(Clone, Debug, Default)]
struct Sample {
    score: Option<f64>,
    items: Vec<Judgement>,
    numbers: Vec<f64>,
}

impl Sample {
    /// A sample of judged items and their score, without per-item numbers.
    fn judged(score: Option<f64>, items: Vec<Judgement>) -> Self {
        Sample {
            score,
            items,
            numbers: Vec::new(),
        }
    }
}

/// The questions the judge wrote for one answer, or why there are none.
type Questions = Result<Vec<rag::GeneratedQuestion>, String>;

/// A row's outcome: `None` for a null input, else its samples or why it failed.
type RowOutcome = Option<Result<Vec<Sample>, String>>;

/// The fields of a metric's output struct beside `score`, `spread`, `samples_agree` and
/// `judge_error`.
struct Layout {
    /// The list of judged texts (statements, questions), if the metric has one.
    texts: Option<&'static str>,
    /// The list of 0/1 verdicts.
    flags: &'static str,
    /// The list of the judge's reasons, if the metric has them.
    reasons: Option<&'static str>,
    /// A list of per-item numbers, if the metric has one.
    numbers: Option<&'static str>,
}

fn layout(metric: RagMetric) -> Layout {
    match metric {
        RagMetric::Faithfulness => Layout {
            texts: Some("statements"),
            flags: "verdicts",
            reasons: Some("reasons"),
            numbers: None,
        },
        RagMetric::AnswerRelevancy => Layout {
            texts: Some("questions"),
            flags: "noncommittal",
            reasons: None,
            numbers: Some("similarities"),
        },
        RagMetric::ContextPrecision | RagMetric::ContextUtilization => Layout {
            texts: None,
            flags: "verdicts",
            reasons: Some("reasons"),
            numbers: None,
        },
        RagMetric::ContextRecall => Layout {
            texts: Some("statements"),
            flags: "attributed",
            reasons: Some("reasons"),
            numbers: None,
        },
    }
}

/// Output dtype of a judged RAG metric: a struct of `score`, the judged items as parallel lists
/// (explode them together), `sample_scores` (each sample's score; null with one sample),
/// `spread` and `samples_agree` over the samples, and `judge_error`.
pub fn rag_dtype(metric: RagMetric) -> DataType {
    let layout = layout(metric);
    let strings = || DataType::List(Box::new(DataType::String));
    let mut fields = vec![Field::new("score".into(), DataType::Float64)];
    if let Some(texts) = layout.texts {
        fields.push(Field::new(texts.into(), strings()));
    }
    fields.push(Field::new(
        layout.flags.into(),
        DataType::List(Box::new(DataType::Boolean)),
    ));
    if let Some(reasons) = layout.reasons {
        fields.push(Field::new(reasons.into(), strings()));
    }
    if let Some(numbers) = layout.numbers {
        fields.push(Field::new(
            numbers.into(),
            DataType::List(Box::new(DataType::Float64)),
        ));
    }
    fields.push(Field::new(
        "sample_scores".into(),
        DataType::List(Box::new(DataType::Float64)),
    ));
    fields.push(Field::new("spread".into(), DataType::Float64));
    fields.push(Field::new("samples_agree".into(), DataType::Boolean));
    fields.push(Field::new("judge_error".into(), DataType::String));
    DataType::Struct(fields)
}

/// Builds the output struct of `metric` from its rows' outcomes (details from the first sample).
fn build(metric: RagMetric, outcomes: &[RowOutcome]) -> PolarsResult<Series> {
    let layout = layout(metric);
    let len = outcomes.len();
    let samples = |i: usize| outcomes[i].as_ref().and_then(|r| r.as_ref().ok());
    let summary = |i: usize| -> Option<SampleSummary> {
        samples(i).map(|s| rag::summarise_samples(&s.iter().map(|x| x.score).collect::<Vec<_>>()))
    };
    let summaries: Vec<Option<SampleSummary>> = (0..len).map(summary).collect();
    let first = |i: usize| samples(i).and_then(|s| s.first());

    let mut fields = vec![Float64Chunked::from_iter_options(
        "score".into(),
        summaries.iter().map(|s| s.and_then(|s| s.mean)),
    )
    .into_series()];
    let text_list = |name: &str, get: fn(&Judgement) -> &str| {
        let mut builder = ListStringChunkedBuilder::new(name.into(), len, len * 4);
        for i in 0..len {
            match first(i) {
                Some(sample) => builder.append_values_iter(sample.items.iter().map(get)),
                None => builder.append_null(),
            }
        }
        builder.finish().into_series()
    };
    if let Some(texts) = layout.texts {
        fields.push(text_list(texts, |j| j.statement.as_str()));
    }
    let mut flags = ListBooleanChunkedBuilder::new(layout.flags.into(), len, len * 4);
    for i in 0..len {
        match first(i) {
            Some(sample) => flags.append_iter(sample.items.iter().map(|j| Some(j.verdict))),
            None => flags.append_null(),
        }
    }
    fields.push(flags.finish().into_series());
    if let Some(reasons) = layout.reasons {
        fields.push(text_list(reasons, |j| j.reason.as_str()));
    }
    if let Some(numbers) = layout.numbers {
        let mut builder = ListPrimitiveChunkedBuilder::<Float64Type>::new(
            numbers.into(),
            len,
            len * 4,
            DataType::Float64,
        );
        for i in 0..len {
            match first(i) {
                Some(sample) => builder.append_slice(&sample.numbers),
                None => builder.append_null(),
            }
        }
        fields.push(builder.finish().into_series());
    }
    // Each sample's score (null where a sample had none), kept when there are several: what
    // `compare`'s two-level bootstrap resamples within the item.
    let mut sample_scores = ListPrimitiveChunkedBuilder::<Float64Type>::new(
        "sample_scores".into(),
        len,
        len * 3,
        DataType::Float64,
    );
    for i in 0..len {
        match samples(i) {
            Some(s) if s.len() > 1 => sample_scores.append_iter(s.iter().map(|x| x.score)),
            _ => sample_scores.append_null(),
        }
    }
    fields.push(sample_scores.finish().into_series());
    fields.push(
        Float64Chunked::from_iter_options(
            "spread".into(),
            summaries.iter().map(|s| s.and_then(|s| s.spread)),
        )
        .into_series(),
    );
    fields.push(
        BooleanChunked::from_iter_options(
            "samples_agree".into(),
            summaries.iter().map(|s| s.and_then(|s| s.agree)),
        )
        .into_series(),
    );
    fields.push(
        StringChunked::from_iter_options(
            "judge_error".into(),
            outcomes
                .iter()
                .map(|o| o.as_ref().and_then(|r| r.as_ref().err().cloned())),
        )
        .into_series(),
    );
    let valid: Vec<bool> = outcomes.iter().map(Option::is_some).collect();
    struct_series(metric.id(), &fields, &valid)
}

/// Adds one sample's per-row results to the rows' outcomes: the first failure of a row wins.
fn add_sample(outcomes: &mut [RowOutcome], sample: Vec<Option<Result<Sample, String>>>) {
    for (outcome, result) in outcomes.iter_mut().zip(sample) {
        if let (Some(Ok(samples)), Some(result)) = (outcome.as_mut(), result) {
            match result {
                Ok(s) => samples.push(s),
                Err(reason) => *outcome = Some(Err(reason)),
            }
        }
    }
}

/// The contexts of each row, read from `contexts` (`list[str]`, `str`, or a list of structs
/// with a `text` field), and the first reference of each row when `reference` holds several.
struct RowTexts<'a> {
    len: usize,
    question: Vec<Option<&'a str>>,
    contexts: Option<super::driver::TextListBatch<'a>>,
    third: Vec<Option<&'a str>>,
}

fn read_texts<'a>(
    metric: &str,
    question: &'a Series,
    contexts: Option<&'a Series>,
    third: Option<(&str, &'a Series)>,
) -> PolarsResult<RowTexts<'a>> {
    let questions = StrColumn::new(metric, "question", question)?;
    let context_column = contexts
        .map(|c| TextListColumn::new(metric, "contexts", c))
        .transpose()?;
    let third_column = third
        .map(|(role, s)| TextListColumn::new(metric, role, s))
        .transpose()?;
    let mut lengths = vec![(question.name().as_str(), questions.len())];
    if let (Some(c), Some(col)) = (contexts, &context_column) {
        lengths.push((c.name().as_str(), col.len()));
    }
    if let (Some((_, s)), Some(col)) = (third, &third_column) {
        lengths.push((s.name().as_str(), col.len()));
    }
    let len = output_len(metric, &lengths)?;
    let third = match third_column {
        Some(col) => {
            let batch = col.rows(0..len);
            // Several reference answers: the first is the reference (Ragas takes one).
            (0..len)
                .map(|i| batch.get(i).and_then(|texts| texts.first().copied()))
                .collect()
        }
        None => vec![None; len],
    };
    Ok(RowTexts {
        len,
        question: questions.rows(0..len),
        contexts: context_column.map(|c| c.rows(0..len)),
        third,
    })
}

/// The judged rows and the rows' starting outcomes: `row(i)` gives row `i`'s input values and
/// why it cannot be judged (if so), or `None` when an input is null. Rows that cannot be judged
/// are not asked and keep their reason.
fn checked_rows<'a>(
    texts: &RowTexts<'_>,
    row: impl Fn(usize) -> Option<(Vec<&'a str>, Option<String>)>,
) -> (Vec<Option<Vec<&'a str>>>, Vec<RowOutcome>) {
    (0..texts.len)
        .map(|i| match row(i) {
            None => (None, None),
            Some((_, Some(reason))) => (None, Some(Err(reason))),
            Some((values, None)) => (Some(values), Some(Ok(Vec::new()))),
        })
        .unzip()
}

/// The contexts of row `i` joined as Ragas joins them for one prompt.
fn joined_contexts(texts: &RowTexts<'_>, i: usize) -> Option<String> {
    texts
        .contexts
        .as_ref()
        .and_then(|c| c.get(i))
        .map(|c| c.join("\n"))
}

/// `faithfulness` over columns: (question, answer, contexts) → struct of `score`, `statements`,
/// `verdicts`, `reasons`, `spread`, `samples_agree`, `judge_error`.
pub fn faithfulness(
    question: &Series,
    answer: &Series,
    contexts: &Series,
    options: &JudgedRagOptions,
) -> PolarsResult<Series> {
    const METRIC: &str = "faithfulness";
    options.validate(METRIC)?;
    let texts = read_texts(METRIC, question, Some(contexts), Some(("answer", answer)))?;
    if options.deepeval() {
        return faithfulness_deepeval(&texts, options);
    }
    let joined: Vec<Option<String>> = (0..texts.len).map(|i| joined_contexts(&texts, i)).collect();
    let (inputs, mut outcomes) = checked_rows(&texts, |i| {
        let (q, a) = (texts.question[i]?, texts.third[i]?);
        let contexts = texts.contexts.as_ref()?.get(i)?;
        Some((
            vec![q, a],
            rag::unjudgeable(&[("question", q), ("answer", a)], Some(contexts.len())),
        ))
    });
    for sample in 0..options.samples {
        let statements = judge_sample(
            METRIC,
            "faithfulness_statements",
            &options.judge,
            &inputs,
            sample,
        )?;
        let statements: Vec<Option<Result<Vec<String>, String>>> = statements
            .into_iter()
            .map(|reply| reply.map(|r| r.map(|value| rag::statements_of_reply(&value))))
            .collect();
        let listed: Vec<Option<String>> = statements
            .iter()
            .map(|s| match s {
                Some(Ok(list)) if !list.is_empty() => Some(rag::numbered(list)),
                _ => None,
            })
            .collect();
        let verdict_rows: Vec<Option<Vec<&str>>> = (0..texts.len)
            .map(|i| match (&joined[i], &listed[i]) {
                (Some(context), Some(list)) => Some(vec![context.as_str(), list.as_str()]),
                _ => None,
            })
            .collect();
        let verdicts = judge_sample(
            METRIC,
            "faithfulness_verdicts",
            &options.judge,
            &verdict_rows,
            sample,
        )?;
        let results = statements
            .into_iter()
            .zip(verdicts)
            .map(|(statements, verdict)| {
                let statements = statements?;
                Some(statements.and_then(|statements| {
                    if statements.is_empty() {
                        return Ok(Sample::default());
                    }
                    let reply = verdict.unwrap_or_else(|| Err("not judged".into()))?;
                    let items = rag::faithfulness_verdicts(&statements, &reply, options.ragas())?;
                    Ok(Sample::judged(rag::share_positive(&items), items))
                }))
            })
            .collect();
        add_sample(&mut outcomes, results);
    }
    build(RagMetric::Faithfulness, &outcomes)
}

/// `faithfulness` with `compat="deepeval"` (DeepEval's `FaithfulnessMetric`): per sample, the
/// facts of each row's contexts (joined with blank lines) and the claims of its answer, then one
/// call judging every claim against the facts. A row without claims scores 1.0 with no third
/// call; rows may have no contexts (their facts are empty), as DeepEval allows.
fn faithfulness_deepeval(texts: &RowTexts<'_>, options: &JudgedRagOptions) -> PolarsResult<Series> {
    const METRIC: &str = "faithfulness";
    let joined: Vec<Option<String>> = (0..texts.len)
        .map(|i| {
            texts
                .contexts
                .as_ref()
                .and_then(|c| c.get(i))
                .map(|c| c.join("\n\n"))
        })
        .collect();
    let (claim_rows, mut outcomes) = checked_rows(texts, |i| {
        let (q, a) = (texts.question[i]?, texts.third[i]?);
        joined[i].as_ref()?;
        Some((
            vec![a],
            rag::unjudgeable(&[("question", q), ("answer", a)], None),
        ))
    });
    let truth_rows: Vec<Option<Vec<&str>>> = claim_rows
        .iter()
        .zip(&joined)
        .map(|(row, context)| row.as_ref().and(context.as_deref()).map(|c| vec![c]))
        .collect();
    let listed =
        |replies: Vec<RowReply>, field: &str| -> Vec<Option<Result<Vec<String>, String>>> {
            replies
                .into_iter()
                .map(|reply| reply.map(|r| r.map(|value| rag::texts_of_reply(&value, field))))
                .collect()
        };
    for sample in 0..options.samples {
        let truths = listed(
            judge_sample(
                METRIC,
                "faithfulness_truths",
                &options.judge,
                &truth_rows,
                sample,
            )?,
            "truths",
        );
        let claims = listed(
            judge_sample(
                METRIC,
                "faithfulness_claims",
                &options.judge,
                &claim_rows,
                sample,
            )?,
            "claims",
        );
        let inputs: Vec<Option<(String, String)>> = truths
            .iter()
            .zip(&claims)
            .map(|(t, c)| match (t, c) {
                (Some(Ok(t)), Some(Ok(c))) if !c.is_empty() => {
                    Some((t.join("\n\n"), rag::numbered(c)))
                }
                _ => None,
            })
            .collect();
        let verdict_rows: Vec<Option<Vec<&str>>> = inputs
            .iter()
            .map(|row| row.as_ref().map(|(t, c)| vec![t.as_str(), c.as_str()]))
            .collect();
        let verdicts = judge_sample(
            METRIC,
            "faithfulness_contradictions",
            &options.judge,
            &verdict_rows,
            sample,
        )?;
        let results = truths
            .into_iter()
            .zip(claims)
            .zip(verdicts)
            .map(|((truths, claims), verdict)| {
                let (truths, claims) = (truths?, claims?);
                Some(truths.and(claims).and_then(|claims| {
                    if claims.is_empty() {
                        return Ok(Sample {
                            score: Some(1.0),
                            ..Sample::default()
                        });
                    }
                    let reply = verdict.unwrap_or_else(|| Err("not judged".into()))?;
                    let items = rag::deepeval_verdicts(&claims, &reply)?;
                    Ok(Sample::judged(Some(rag::deepeval_score(&items)), items))
                }))
            })
            .collect();
        add_sample(&mut outcomes, results);
    }
    build(RagMetric::Faithfulness, &outcomes)
}

/// `context_precision` (against a reference) or `context_utilization` (against the answer)
/// over columns: (question, contexts in rank order, reference or answer) → struct of `score`,
/// `verdicts`, `reasons`, `spread`, `samples_agree`, `judge_error`. Every context of the column
/// is judged in one batch (all in flight together, up to the judge's concurrency).
pub fn context_precision(
    metric: RagMetric,
    question: &Series,
    contexts: &Series,
    against: &Series,
    options: &JudgedRagOptions,
) -> PolarsResult<Series> {
    let id = metric.id();
    let (card, role) = match metric {
        RagMetric::ContextUtilization => ("context_utilization", "answer"),
        _ => ("context_precision", "reference"),
    };
    options.validate(id)?;
    let texts = read_texts(id, question, Some(contexts), Some((role, against)))?;
    // One judged row per (row, context); `owner[k]` is the output row of judged row k.
    let mut rows: Vec<Option<Vec<&str>>> = Vec::new();
    let mut owner: Vec<usize> = Vec::new();
    let mut outcomes: Vec<RowOutcome> = Vec::with_capacity(texts.len);
    for i in 0..texts.len {
        let row_contexts = texts.contexts.as_ref().and_then(|c| c.get(i));
        match (texts.question[i], row_contexts, texts.third[i]) {
            (Some(q), Some(contexts), Some(other)) => {
                let why = rag::unjudgeable(&[("question", q), (role, other)], Some(contexts.len()));
                if let Some(reason) = why {
                    outcomes.push(Some(Err(reason)));
                    continue;
                }
                for context in contexts {
                    rows.push(Some(vec![q, context, other]));
                    owner.push(i);
                }
                outcomes.push(Some(Ok(Vec::new())));
            }
            _ => outcomes.push(None),
        }
    }
    for sample in 0..options.samples {
        let replies = judge_sample(id, card, &options.judge, &rows, sample)?;
        let mut judged: Vec<Result<Vec<Judgement>, String>> = vec![Ok(Vec::new()); texts.len];
        for (reply, &i) in replies.into_iter().zip(&owner) {
            let verdict = reply
                .unwrap_or_else(|| Err("not judged".into()))
                .and_then(|r| rag::context_verdict(&r).map_err(|e| e.to_string()));
            if let Ok(list) = &mut judged[i] {
                match verdict {
                    Ok(v) => list.push(v),
                    Err(e) => judged[i] = Err(e),
                }
            }
        }
        let results = judged
            .into_iter()
            .enumerate()
            .map(|(i, items)| {
                outcomes[i].as_ref()?;
                Some(items.map(|items| {
                    let verdicts: Vec<bool> = items.iter().map(|j| j.verdict).collect();
                    Sample::judged(rag::average_precision(&verdicts), items)
                }))
            })
            .collect();
        add_sample(&mut outcomes, results);
    }
    build(metric, &outcomes)
}

/// `context_recall` over columns: (question, contexts, reference) → struct of `score`,
/// `statements` (the reference's), `attributed`, `reasons`, `spread`, `samples_agree`,
/// `judge_error`.
pub fn context_recall(
    question: &Series,
    contexts: &Series,
    reference: &Series,
    options: &JudgedRagOptions,
) -> PolarsResult<Series> {
    const METRIC: &str = "context_recall";
    options.validate(METRIC)?;
    let texts = read_texts(
        METRIC,
        question,
        Some(contexts),
        Some(("reference", reference)),
    )?;
    let joined: Vec<Option<String>> = (0..texts.len).map(|i| joined_contexts(&texts, i)).collect();
    let (rows, mut outcomes) = checked_rows(&texts, |i| {
        let (q, r) = (texts.question[i]?, texts.third[i]?);
        let contexts = texts.contexts.as_ref()?.get(i)?;
        Some((
            vec![q, joined[i].as_deref()?, r],
            rag::unjudgeable(&[("question", q), ("reference", r)], Some(contexts.len())),
        ))
    });
    for sample in 0..options.samples {
        let replies = judge_sample(METRIC, "context_recall", &options.judge, &rows, sample)?;
        let results = replies
            .into_iter()
            .map(|reply| {
                reply.map(|r| {
                    let items = rag::recall_classifications(&r?)?;
                    Ok(Sample::judged(rag::share_positive(&items), items))
                })
            })
            .collect();
        add_sample(&mut outcomes, results);
    }
    build(RagMetric::ContextRecall, &outcomes)
}

/// `answer_relevancy` over columns: (question, answer) → struct of `score`, `questions` (those
/// the judge wrote), `noncommittal`, `similarities` (each question's cosine with the original),
/// `spread`, `samples_agree`, `judge_error`. The questions and the original questions are
/// embedded in one call to the embedding engine (cached like every embedding).
pub fn answer_relevancy(
    question: &Series,
    answer: &Series,
    options: &AnswerRelevancyOptions,
) -> PolarsResult<Series> {
    const METRIC: &str = "answer_relevancy";
    options.validate(METRIC)?;
    let texts = read_texts(METRIC, question, None, Some(("answer", answer)))?;
    let count = options.strictness.to_string();
    let (rows, mut outcomes) = checked_rows(&texts, |i| {
        let (q, a) = (texts.question[i]?, texts.third[i]?);
        Some((
            vec![a, count.as_str()],
            rag::unjudgeable(&[("question", q), ("answer", a)], None),
        ))
    });
    let mut generated: Vec<Vec<Option<Questions>>> = Vec::new();
    for sample in 0..options.samples {
        let replies = judge_sample(METRIC, "answer_relevancy", &options.judge, &rows, sample)?;
        generated.push(
            replies
                .into_iter()
                .map(|reply| reply.map(|r| Ok(rag::generated_questions(&r?, options.strictness)?)))
                .collect(),
        );
    }
    // Every text to embed, once per occurrence: each row's question, then its generated ones.
    let mut embed_texts: Vec<Option<&str>> = Vec::new();
    let mut question_at: Vec<Option<usize>> = vec![None; texts.len];
    for (i, row) in rows.iter().enumerate() {
        let judged = generated.iter().any(|s| matches!(s[i], Some(Ok(_))));
        if let (Some(_), Some(q), true) = (row, texts.question[i], judged) {
            question_at[i] = Some(embed_texts.len());
            embed_texts.push(Some(q));
        }
    }
    let mut generated_at: Vec<Vec<Option<usize>>> = Vec::with_capacity(generated.len());
    for sample in &generated {
        generated_at.push(
            sample
                .iter()
                .map(|row| match row {
                    Some(Ok(questions)) => {
                        let at = embed_texts.len();
                        embed_texts.extend(questions.iter().map(|g| Some(g.question.as_str())));
                        Some(at)
                    }
                    _ => None,
                })
                .collect(),
        );
    }
    let vectors = if embed_texts.is_empty() {
        Vec::new()
    } else {
        Embedder::shared(&options.embedder, METRIC)?.embed(METRIC, &embed_texts)?
    };
    // Ragas computes the cosines in float64 from the model's float32 vectors.
    let vector = |k: usize| -> Vec<f64> {
        vectors
            .get(k)
            .and_then(|v| v.as_deref())
            .map(|v| v.iter().map(|&x| f64::from(x)).collect())
            .unwrap_or_default()
    };
    for (sample, at) in generated.into_iter().zip(&generated_at) {
        let results = sample
            .into_iter()
            .enumerate()
            .map(|(i, row)| {
                row.map(|questions| {
                    let questions = questions?;
                    let start = at[i].unwrap_or(0);
                    let question_vector = question_at[i].map(vector).unwrap_or_default();
                    let vectors: Vec<Vec<f64>> =
                        (start..start + questions.len()).map(vector).collect();
                    let vectors: Vec<&[f64]> = vectors.iter().map(Vec::as_slice).collect();
                    let flags: Vec<bool> = questions.iter().map(|g| g.noncommittal).collect();
                    let (score, similarities) =
                        rag::answer_relevancy_of_vectors(&question_vector, &vectors, &flags);
                    Ok(Sample {
                        score,
                        items: questions
                            .into_iter()
                            .map(|g| Judgement {
                                statement: g.question,
                                reason: String::new(),
                                verdict: g.noncommittal,
                            })
                            .collect(),
                        numbers: similarities,
                    })
                })
            })
            .collect();
        add_sample(&mut outcomes, results);
    }
    build(RagMetric::AnswerRelevancy, &outcomes)
}
