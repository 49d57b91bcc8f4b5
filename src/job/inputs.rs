//! Reading a job's tables: the run (a long run collapsed to one row per query) joined with the
//! golden table, and what the join found as notes.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::{err, Parts, ScoreJob};
use crate::columnar::driver::readable_frame;
use crate::columnar::join;

/// A table a job reads: a Parquet file, or a frame of the caller's (a Rust `LazyFrame`; what
/// [`score`](super::score) takes). A frame is read lazily, as a file is.
#[derive(Clone)]
pub enum Input {
    /// A Parquet file, checked before it is read (that it exists and is Parquet).
    File(PathBuf),
    /// A frame in memory or a lazy query over anything Polars reads.
    Frame(Box<LazyFrame>),
}

impl Input {
    /// The file's path; `None` for a frame.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Input::File(path) => Some(path),
            Input::Frame(_) => None,
        }
    }

    /// The input as errors name it: the file's path, or `<role> frame` for a frame (`run frame`).
    pub fn named(&self, role: &str) -> String {
        match self {
            Input::File(path) => path.display().to_string(),
            Input::Frame(_) => format!("{role} frame"),
        }
    }

    /// How the input is named beside its role (the summary's `golden … ⋈ run …`): the file's
    /// path, `(frame)` for a frame.
    pub fn display(&self) -> impl std::fmt::Display + '_ {
        struct Shown<'a>(&'a Input);
        impl std::fmt::Display for Shown<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self.0 {
                    Input::File(path) => write!(f, "{}", path.display()),
                    Input::Frame(_) => f.write_str("(frame)"),
                }
            }
        }
        Shown(self)
    }

    /// The table as a lazy frame; a file `what` ("run", "golden", ...) must exist and be Parquet.
    pub(crate) fn scan(&self, what: &str) -> PolarsResult<LazyFrame> {
        match self {
            Input::File(path) => scan(path, what),
            Input::Frame(frame) => Ok(frame.as_ref().clone()),
        }
    }
}

impl Default for Input {
    fn default() -> Self {
        Input::File(PathBuf::new())
    }
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Input::File(path) => f.debug_tuple("File").field(path).finish(),
            Input::Frame(_) => f.write_str("Frame(..)"),
        }
    }
}

impl From<PathBuf> for Input {
    fn from(path: PathBuf) -> Self {
        Input::File(path)
    }
}

impl From<&Path> for Input {
    fn from(path: &Path) -> Self {
        Input::File(path.to_path_buf())
    }
}

impl From<&str> for Input {
    fn from(path: &str) -> Self {
        Input::File(path.into())
    }
}

impl From<LazyFrame> for Input {
    fn from(frame: LazyFrame) -> Self {
        Input::Frame(Box::new(frame))
    }
}

impl From<DataFrame> for Input {
    fn from(frame: DataFrame) -> Self {
        Input::Frame(Box::new(frame.lazy()))
    }
}

/// The Parquet file `path` (a `what` table) as a lazy frame, after checking that it exists and
/// has a readable footer.
pub(crate) fn scan(path: &Path, what: &str) -> PolarsResult<LazyFrame> {
    let name = path.to_string_lossy().to_string();
    if !path.exists() {
        return Err(crate::job::not_found(format!(
            "{what} table not found: {name}"
        )));
    }
    crate::job::parquet::parquet_file(path, &format!("{what} table"))?;
    LazyFrame::scan_parquet(name.as_str().into(), ScanArgsParquet::default())
}

/// The first of `names` that `schema` has.
pub(crate) fn pick(
    schema: &Schema,
    explicit: &Option<String>,
    defaults: &[&str],
) -> Option<String> {
    match explicit {
        Some(name) => Some(name.clone()),
        None => defaults
            .iter()
            .find(|n| schema.contains(n))
            .map(|n| n.to_string()),
    }
}

pub(crate) fn require(schema: &Schema, table: &str, name: &str, what: &str) -> PolarsResult<()> {
    if schema.contains(name) {
        return Ok(());
    }
    let cols: Vec<&str> = schema.iter_names().map(|n| n.as_str()).collect();
    Err(err(format!(
        "{table}: no {what} column '{name}' (columns: {})",
        cols.join(", ")
    )))
}

/// Up to five ids of `ids` as text, for a note.
pub(crate) fn examples(ids: &Series) -> PolarsResult<String> {
    let ids = ids.cast(&DataType::String)?;
    Ok(ids
        .str()?
        .iter()
        .take(5)
        .map(|v| v.unwrap_or("null"))
        .collect::<Vec<_>>()
        .join(", "))
}

/// The input table of a job (run, or golden ⋈ run) and what the join found.
pub(crate) struct Inputs {
    pub(crate) frame: DataFrame,
    pub(crate) notes: Vec<String>,
}

/// The note of a long run collapsed per query.
pub(crate) fn long_run_note(retrieved_name: &str, ranked: bool) -> String {
    format!(
        "run: one row per retrieved item (doc_id); collapsed into a '{retrieved_name}' list per query{}",
        if ranked { ", ordered by rank" } else { ", in row order" }
    )
}

/// Reads the run (collapsing a long one) and, with a golden table, joins it (the table layer,
/// [`join::join_golden`]); what the join found becomes notes.
pub(crate) fn load_inputs(job: &ScoreJob, id: &str) -> PolarsResult<Inputs> {
    let run_name = job.run.named("run");
    let mut run = job.run.scan("run")?;
    let run_schema = run.collect_schema()?;
    require(&run_schema, &run_name, id, "id")?;
    let mut notes = Vec::new();
    let retrieved_name = job.columns.retrieved.as_deref().unwrap_or("retrieved");
    // Categorical ids and texts are read as strings, small integers widened, as every face does.
    let mut run = readable_frame("score", &run.collect()?)?;
    if join::is_long_run(&run_schema, retrieved_name) {
        if job.parts == Parts::Block {
            // A query's rows may sit in two blocks, which would collapse them apart.
            return Err(err(format!(
                "score (`parts`, a block): {run_name} has one row per retrieved item; collapse the run to one row per query first (polars_rag.collapse_run), so that no query is split across blocks"
            )));
        }
        notes.push(long_run_note(retrieved_name, run_schema.contains("rank")));
        run = join::collapse_run(&run, id)?;
        run.rename("retrieved", retrieved_name.into())?;
    }
    let duplicate_run = join::duplicate_ids(&run, "run", id)?;
    if !duplicate_run.is_empty() {
        notes.push(format!(
            "run: {} ids occur more than once (e.g. {}); each row is scored",
            duplicate_run.len(),
            examples(&duplicate_run)?
        ));
    }
    let Some(golden_path) = &job.golden else {
        return Ok(Inputs { frame: run, notes });
    };
    let golden_name = golden_path.named("golden");
    let mut golden = golden_path.scan("golden")?;
    let golden_schema = golden.collect_schema()?;
    require(&golden_schema, &golden_name, id, "id")?;
    let golden = readable_frame("score", &golden.collect()?)?;
    let joined = join::join_golden(&golden, &run, id)?;
    if !joined.duplicate_golden.is_empty() {
        notes.push(format!(
            "golden: {} ids occur more than once (e.g. {})",
            joined.duplicate_golden.len(),
            examples(&joined.duplicate_golden)?
        ));
    }
    if !joined.unknown.is_empty() {
        notes.push(format!(
            "run: {} rows have an id that is not in the golden table (e.g. {}); they are not scored",
            joined.unknown.len(),
            examples(&joined.unknown)?
        ));
    }
    if !joined.missing.is_empty() {
        notes.push(format!(
            "golden: {} of {} questions have no answer in the run (in_run = false; their scores are null)",
            joined.missing.len(),
            golden.height()
        ));
    }
    Ok(Inputs {
        frame: joined.frame,
        notes,
    })
}
