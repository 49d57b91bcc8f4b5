//! `score --grade-relevance QRELS`: graded relevance judgements of a run's retrieved passages by
//! the judge (`relevance_grade`, 0–3), kept in a qrels table that grows across runs. Every
//! (query, item id) pair retrieved is graded once: pairs already in the table are not asked
//! again, so the runs being compared are judged against the same grades, as TREC pools its
//! judgements. Without ground truth of its own (`relevant_ids`, `relevant_chunks`,
//! `relevant_spans`), the job scores the ranked metrics against the grades (`relevant_ids` with
//! `grade`; `relevance_level` says which grade counts as relevant).
//!
//! The qrels table has one row per query: the job's id column and `relevant_ids`
//! (`list[struct{id: str, grade: i64, reason: str}]`), which is also the shape a `--golden`
//! table gives the ranked metrics.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use polars::prelude::*;

use super::err;
use super::plan::Resolved;
use crate::columnar::driver::StrColumn;
use crate::registry::MetricOptions;

/// One graded (query, item) pair.
struct Judgement {
    query: String,
    item: String,
    grade: i64,
    reason: String,
}

/// The column of graded judgements the ranked metrics read.
pub(crate) const QRELS_COLUMN: &str = "relevant_ids";

fn judgement_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("id".into(), DataType::String),
        Field::new("grade".into(), DataType::Int64),
        Field::new("reason".into(), DataType::String),
    ])
}

/// Reads the judgements of an existing qrels table (`None` when the file does not exist yet).
fn read_qrels(path: &Path, id: &str) -> PolarsResult<Vec<Judgement>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let shown = path.display();
    let table = ParquetReader::new(crate::job::parquet::parquet_file(path, "qrels table")?)
        .finish()
        .map_err(|e| {
            err(format!(
                "--grade-relevance: cannot read the qrels table {shown}: {e}"
            ))
        })?;
    let bad = |what: String| err(format!("--grade-relevance: the qrels table {shown} {what}"));
    let keys = table
        .column(id)
        .map_err(|_| bad(format!("has no '{id}' column")))?
        .as_materialized_series()
        .cast(&DataType::String)?;
    let lists = table
        .column(QRELS_COLUMN)
        .map_err(|_| bad(format!("has no '{QRELS_COLUMN}' column")))?;
    let lists = lists
        .as_materialized_series()
        .list()
        .map_err(|_| bad(format!("'{QRELS_COLUMN}' is not a list of judgements")))?;
    let mut out = Vec::new();
    for (key, items) in keys.str()?.iter().zip(lists.amortized_iter()) {
        let (Some(key), Some(items)) = (key, items) else {
            continue;
        };
        let items = items.as_ref().struct_().map_err(|_| {
            bad(format!(
                "'{QRELS_COLUMN}' does not hold structs of id and grade"
            ))
        })?;
        let field = |name: &str| {
            items
                .field_by_name(name)
                .map_err(|_| bad(format!("'{QRELS_COLUMN}' has no '{name}' field")))
        };
        let ids = field("id")?.cast(&DataType::String)?;
        let grades = field("grade")?.cast(&DataType::Int64)?;
        let reasons = match items.field_by_name("reason") {
            Ok(r) => r.cast(&DataType::String)?,
            Err(_) => Series::full_null("reason".into(), items.len(), &DataType::String),
        };
        for ((item, grade), reason) in ids
            .str()?
            .iter()
            .zip(grades.i64()?.iter())
            .zip(reasons.str()?.iter())
        {
            if let (Some(item), Some(grade)) = (item, grade) {
                out.push(Judgement {
                    query: key.to_string(),
                    item: item.to_string(),
                    grade,
                    reason: reason.unwrap_or("").to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// The (query, item id, question, passage) of every retrieved item of `frame`, each (query, item)
/// pair once (its first occurrence).
fn retrieved_pairs(
    frame: &DataFrame,
    id: &str,
    question: &str,
    retrieved: &str,
) -> PolarsResult<Vec<(String, String, String, String)>> {
    let metric = "--grade-relevance";
    let keys = frame
        .column(id)?
        .as_materialized_series()
        .cast(&DataType::String)?;
    let questions_series = frame.column(question)?.as_materialized_series().clone();
    let questions = StrColumn::new(metric, "question", &questions_series)?;
    let question_rows = questions.rows(0..frame.height());
    let items = frame.column(retrieved)?.as_materialized_series();
    let has_fields = matches!(items.dtype(), DataType::List(inner) if matches!(inner.as_ref(),
        DataType::Struct(fields) if ["id", "text"].iter().all(|n| fields.iter().any(|f| f.name().as_str() == *n))));
    if !has_fields {
        polars_bail!(SchemaMismatch: "{metric}: column '{retrieved}' (retrieved) must be list[struct] with 'id' and 'text' fields (the passages to grade), got {}", items.dtype());
    }
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut pairs = Vec::new();
    for ((key, row), q) in keys
        .str()?
        .iter()
        .zip(items.list()?.amortized_iter())
        .zip(question_rows)
    {
        let (Some(key), Some(row), Some(q)) = (key, row, q) else {
            continue;
        };
        let row = row.as_ref().struct_()?;
        let ids = row.field_by_name("id")?.cast(&DataType::String)?;
        let texts = row.field_by_name("text")?.cast(&DataType::String)?;
        for (item, text) in ids.str()?.iter().zip(texts.str()?.iter()) {
            let (Some(item), Some(text)) = (item, text) else {
                continue;
            };
            if seen.insert((key.to_string(), item.to_string())) {
                pairs.push((
                    key.to_string(),
                    item.to_string(),
                    q.to_string(),
                    text.to_string(),
                ));
            }
        }
    }
    Ok(pairs)
}

/// An exclusive lock on a qrels table: a lock file beside it (`<name>.lock`, left in place),
/// held until dropped. Runs grading into one table at once take turns to read and write it.
struct QrelsLock(std::fs::File);

impl QrelsLock {
    /// Waits for the lock of the table at `path`.
    fn take(path: &Path) -> PolarsResult<QrelsLock> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        let lock_path = path.with_file_name(name);
        let failed = |e: std::io::Error| {
            err(format!(
                "--grade-relevance: cannot lock {} (with {}): {e}",
                path.display(),
                lock_path.display()
            ))
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(failed)?;
        file.lock().map_err(failed)?;
        Ok(QrelsLock(file))
    }
}

impl Drop for QrelsLock {
    fn drop(&mut self) {
        // Closing the file releases the lock as well; unlocking first says so.
        let _ = self.0.unlock();
    }
}

/// Grades the retrieved items of `frame` not yet in the qrels table at `path`, writes the table
/// with them, and, when the job has no ground truth of its own, gives `frame` the grades as its
/// `relevant_ids` column. Returns the frame and whether it gained that column.
pub(crate) fn grade_relevance(
    frame: DataFrame,
    id: &str,
    resolved: &Resolved,
    options: &MetricOptions,
    path: &Path,
    notes: &mut Vec<String>,
) -> PolarsResult<(DataFrame, bool)> {
    let question = resolved.question.as_deref().ok_or_else(|| {
        err("--grade-relevance needs the questions: a question (or query) column, or --question-col".into())
    })?;
    let retrieved = resolved.retrieved.as_deref().ok_or_else(|| {
        err("--grade-relevance needs the retrieved passages: a retrieved column of {id, text} structs, or --retrieved-col".into())
    })?;
    let known_then = read_qrels(path, id)?;
    let known: HashSet<(&str, &str)> = known_then
        .iter()
        .map(|j| (j.query.as_str(), j.item.as_str()))
        .collect();
    let asked: Vec<(String, String, String, String)> =
        retrieved_pairs(&frame, id, question, retrieved)?
            .into_iter()
            .filter(|(q, item, _, _)| !known.contains(&(q.as_str(), item.as_str())))
            .collect();
    drop(known);
    drop(known_then);
    let questions = Series::new(
        "question".into(),
        asked.iter().map(|p| p.2.as_str()).collect::<Vec<_>>(),
    );
    let passages = Series::new(
        "passage".into(),
        asked.iter().map(|p| p.3.as_str()).collect::<Vec<_>>(),
    );
    let graded =
        crate::columnar::judged::relevance_grade(&questions, &passages, &options.relevance_grade)?;
    let fields = graded.struct_()?;
    let grades = fields.field_by_name("grade")?;
    let reasons = fields.field_by_name("reason")?;
    let errors = fields.field_by_name("judge_error")?;
    let mut failed: Vec<String> = Vec::new();
    let mut graded_now: Vec<Judgement> = Vec::new();
    for (k, (query, item, _, _)) in asked.iter().enumerate() {
        match (grades.i64()?.get(k), errors.str()?.get(k)) {
            (Some(grade), _) => graded_now.push(Judgement {
                query: query.clone(),
                item: item.clone(),
                grade,
                reason: reasons.str()?.get(k).unwrap_or("").to_string(),
            }),
            (None, error) => failed.push(format!(
                "{query} / {item}: {}",
                error.unwrap_or("not judged")
            )),
        }
    }
    // Another run may have written the table while this one graded: the table is read again
    // and written under an exclusive lock, so that the grades of both runs are kept (a pair
    // both graded keeps the grade written first).
    let lock = QrelsLock::take(path)?;
    let mut judgements = read_qrels(path, id)?;
    let before = judgements.len();
    let present: HashSet<(String, String)> = judgements
        .iter()
        .map(|j| (j.query.clone(), j.item.clone()))
        .collect();
    judgements.extend(
        graded_now
            .into_iter()
            .filter(|j| !present.contains(&(j.query.clone(), j.item.clone()))),
    );
    drop(present);
    // One row per query, in the order the queries were first graded.
    let mut order: Vec<&str> = Vec::new();
    let mut by_query: HashMap<&str, Vec<&Judgement>> = HashMap::new();
    for j in &judgements {
        by_query
            .entry(j.query.as_str())
            .or_insert_with(|| {
                order.push(j.query.as_str());
                Vec::new()
            })
            .push(j);
    }
    let lists = |queries: &mut dyn Iterator<Item = Option<&str>>| -> PolarsResult<Series> {
        let rows: Vec<Option<Series>> = queries
            .map(|q| {
                let list = by_query.get(q?)?;
                let struct_of = || -> PolarsResult<Series> {
                    Ok(StructChunked::from_series(
                        "".into(),
                        list.len(),
                        [
                            Series::new(
                                "id".into(),
                                list.iter().map(|j| j.item.as_str()).collect::<Vec<_>>(),
                            ),
                            Series::new(
                                "grade".into(),
                                list.iter().map(|j| j.grade).collect::<Vec<_>>(),
                            ),
                            Series::new(
                                "reason".into(),
                                list.iter().map(|j| j.reason.as_str()).collect::<Vec<_>>(),
                            ),
                        ]
                        .iter(),
                    )?
                    .into_series())
                };
                Some(struct_of())
            })
            .map(Option::transpose)
            .collect::<PolarsResult<_>>()?;
        let dtype = DataType::List(Box::new(judgement_dtype()));
        if rows.iter().all(Option::is_none) {
            return Ok(Series::full_null(QRELS_COLUMN.into(), rows.len(), &dtype));
        }
        let mut out = ListChunked::from_iter(rows).into_series();
        out.rename(QRELS_COLUMN.into());
        out.cast(&dtype)
    };
    let mut qrels = DataFrame::new(
        order.len(),
        vec![
            Series::new(id.into(), order.clone()).into(),
            lists(&mut order.iter().map(|q| Some(*q)))?.into(),
        ],
    )?;
    let mut file = crate::atomic::AtomicFile::create(path).map_err(|e| {
        err(format!(
            "--grade-relevance: cannot write {}: {e}",
            path.display()
        ))
    })?;
    ParquetWriter::new(file.file()?).finish(&mut qrels)?;
    file.commit().map_err(|e| {
        err(format!(
            "--grade-relevance: cannot write {}: {e}",
            path.display()
        ))
    })?;
    drop(lock);
    let mut note = format!(
        "relevance grades: {} passages graded now, {} already in {}, {} queries",
        judgements.len() - before,
        before,
        path.display(),
        order.len()
    );
    if !failed.is_empty() {
        note.push_str(&format!(
            "; {} not graded (asked again next time), first: {}",
            failed.len(),
            failed[0]
        ));
    }
    notes.push(note);
    if resolved.relevant.is_some() {
        notes.push(format!(
            "relevance grades: the tables' own ground truth is scored; the grades are in {}",
            path.display()
        ));
        return Ok((frame, false));
    }
    let keys = frame
        .column(id)?
        .as_materialized_series()
        .cast(&DataType::String)?;
    let column = lists(&mut keys.str()?.iter())?;
    let mut frame = frame;
    frame.with_column(column.into())?;
    Ok((frame, true))
}
