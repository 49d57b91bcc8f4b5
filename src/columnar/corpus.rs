//! The corpus a golden dataset's spans point into: documents by id (a `file`, `text` table; the
//! CLI also reads a directory of UTF-8 files, ids being paths relative to the root).
//!
//! Spans are `(file, start, end)` in Unicode code points, end exclusive. This module checks them
//! against the documents (known file, 0 ≤ start ≤ end ≤ length), converts byte offsets to code
//! points when a table gives bytes, and fills in the text of retrieved spans that carry none.

use std::collections::HashMap;
use std::path::{Component, Path};

use std::sync::OnceLock;

use polars::prelude::*;

use super::driver::offsets as read_offsets;

/// One document.
pub struct Document {
    text: String,
    /// Byte offset of every code point, plus the text's length: built on first use.
    char_bytes: OnceLock<Vec<usize>>,
}

impl Document {
    fn new(text: String) -> Self {
        Document {
            text,
            char_bytes: OnceLock::new(),
        }
    }

    fn char_bytes(&self) -> &[usize] {
        self.char_bytes.get_or_init(|| {
            let mut v: Vec<usize> = self.text.char_indices().map(|(b, _)| b).collect();
            v.push(self.text.len());
            v
        })
    }

    /// Length in code points.
    pub(crate) fn char_len(&self) -> u64 {
        (self.char_bytes().len() - 1) as u64
    }

    /// The code-point offset of byte offset `byte`; `None` inside a character or past the end.
    pub(crate) fn byte_to_char(&self, byte: u64) -> Option<u64> {
        let bytes = self.char_bytes();
        bytes.binary_search(&(byte as usize)).ok().map(|i| i as u64)
    }

    /// The text of code points `start..end` (callers check the bounds first).
    pub fn slice(&self, start: u64, end: u64) -> &str {
        let bytes = self.char_bytes();
        let last = bytes.len() - 1;
        let s = bytes[(start as usize).min(last)];
        let e = bytes[(end as usize).min(last)];
        &self.text[s..e]
    }
}

/// Documents by id.
#[derive(Default)]
pub struct Corpus {
    docs: HashMap<String, Document>,
}

/// Whether a document id stays inside the corpus root: relative, no `..`, no drive or root.
fn id_is_contained(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('/')
        && !id.starts_with('\\')
        && Path::new(id)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && !id.split(['/', '\\']).any(|part| part == "..")
}

impl Corpus {
    /// A corpus from `(id, text)` pairs. Duplicate ids are an error.
    pub fn from_documents(
        docs: impl IntoIterator<Item = (String, String)>,
    ) -> crate::Result<Corpus> {
        // Problems are found as messages; their kind is given once, here.
        let checked = || -> Result<Corpus, String> {
            let mut corpus = Corpus::default();
            for (id, text) in docs {
                if corpus
                    .docs
                    .insert(id.clone(), Document::new(text))
                    .is_some()
                {
                    return Err(format!("document '{id}' occurs twice"));
                }
            }
            Ok(corpus)
        };
        checked().map_err(crate::Error::input)
    }

    /// A corpus from a `file`, `text` table. Duplicate ids are an error.
    pub fn from_frame(df: &DataFrame) -> crate::Result<Corpus> {
        Corpus::from_documents(frame_documents(df)?)
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether the corpus has no document.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Every `(id, text)`, sorted by id (a directory has no other stable order).
    pub fn sorted_documents(&self) -> Vec<(&str, &str)> {
        let mut docs: Vec<(&str, &str)> = self
            .docs
            .iter()
            .map(|(id, d)| (id.as_str(), d.text.as_str()))
            .collect();
        docs.sort_unstable();
        docs
    }

    /// The document `id`, or why there is none.
    pub fn get(&self, id: &str) -> crate::Result<&Document> {
        if !id_is_contained(id) {
            return Err(crate::Error::input(format!(
                "file '{id}' escapes the corpus root"
            )));
        }
        let id = id.strip_prefix("./").unwrap_or(id);
        self.docs
            .get(id)
            .ok_or_else(|| crate::Error::input(format!("unknown file '{id}'")))
    }
}

/// The `(file, text)` rows of a corpus table, in row order; an error for a missing column or a
/// null cell.
pub fn frame_documents(df: &DataFrame) -> crate::Result<Vec<(String, String)>> {
    // Problems are found as messages; their kind is given once, here.
    let checked = || -> Result<Vec<(String, String)>, String> {
        let column = |name: &str| -> Result<StringChunked, String> {
            let c = df.column(name).map_err(|_| {
                format!(
                    "needs columns 'file' and 'text', has {:?}",
                    df.get_column_names()
                )
            })?;
            c.cast(&DataType::String)
                .and_then(|c| c.str().cloned())
                .map_err(|e| format!("column '{name}': {e}"))
        };
        let files = column("file")?;
        let texts = column("text")?;
        let mut first_row: HashMap<&str, usize> = HashMap::new();
        files
            .iter()
            .zip(texts.iter())
            .enumerate()
            .map(|(i, (file, text))| match (file, text) {
                (Some(f), Some(t)) => match first_row.insert(f, i) {
                    // The same rule as `Corpus::from_frame` and `validate`: a name is one document.
                    Some(first) => Err(format!(
                        "has the file name '{f}' twice (rows {first} and {i}); file names must be unique"
                    )),
                    None => Ok((f.to_string(), t.to_string())),
                },
                _ => Err(format!("row {i} has a null file or text")),
            })
            .collect()
    };
    checked().map_err(crate::Error::input)
}

/// The unit of a table's span offsets, named `codepoints` or `bytes` wherever it is read (TOML,
/// the command line, Python): parsed here once.
///
/// ```
/// use polars_rag::columnar::corpus::SpanUnit;
/// assert_eq!("bytes".parse::<SpanUnit>().unwrap(), SpanUnit::Bytes);
/// assert_eq!(SpanUnit::CodePoints.to_string(), "codepoints");
/// let e = "chars".parse::<SpanUnit>().unwrap_err().to_string();
/// assert_eq!(e, "unit must be 'codepoints' or 'bytes', got 'chars'");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "job", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum SpanUnit {
    /// Unicode code points (the default, Python's `text[start:end]`).
    #[default]
    #[cfg_attr(feature = "job", value(name = "codepoints"))]
    #[serde(rename = "codepoints")]
    CodePoints,
    /// UTF-8 bytes.
    Bytes,
}

impl std::str::FromStr for SpanUnit {
    type Err = crate::Error;

    fn from_str(text: &str) -> crate::Result<SpanUnit> {
        match text {
            "codepoints" => Ok(SpanUnit::CodePoints),
            "bytes" => Ok(SpanUnit::Bytes),
            other => Err(crate::Error::new(
                crate::ErrorKind::InvalidOptions,
                format!("unit must be 'codepoints' or 'bytes', got '{other}'"),
            )),
        }
    }
}

impl std::fmt::Display for SpanUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SpanUnit::CodePoints => "codepoints",
            SpanUnit::Bytes => "bytes",
        })
    }
}

/// A span that does not fit its corpus.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanIssue {
    /// Row in the table.
    pub row: usize,
    /// The row's query id.
    pub query: String,
    /// Position of the span in the row's list.
    pub index: usize,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for SpanIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "query {} span #{}: {}",
            self.query, self.index, self.problem
        )
    }
}

/// A span column checked against the corpus: the column with offsets in code points (and, when
/// asked, the `text` field filled from the corpus), and every problem found. A span with a
/// problem keeps its offsets.
pub struct CheckedSpans {
    /// The rewritten column.
    pub column: Series,
    /// Problems, in row order.
    pub issues: Vec<SpanIssue>,
    /// Spans whose stored `text` (or `content`) differs from the corpus text.
    pub text_mismatches: Vec<SpanIssue>,
    /// Number of spans checked.
    pub spans: usize,
}

/// Checks the `list[struct{file, start, end, ...}]` column `column` of `df` against `corpus`.
pub fn check_spans(
    df: &DataFrame,
    id_col: &str,
    column: &str,
    corpus: &Corpus,
    unit: SpanUnit,
    fill_text: bool,
) -> PolarsResult<CheckedSpans> {
    let series = df.column(column)?.as_materialized_series().clone();
    let ids = df.column(id_col)?.cast(&DataType::String)?;
    let ids = ids.str()?.clone();
    let list = series.list().map_err(|_| {
        polars_err!(SchemaMismatch: "column '{column}' must be a list of struct{{file, start, end}}, got {}", series.dtype())
    })?;
    let list = list.rechunk().into_owned();
    let offsets: Vec<usize> = match list.downcast_iter().next() {
        Some(arr) => arr.offsets().iter().map(|&o| o as usize).collect(),
        None => vec![0],
    };
    let row_of = |item: usize| offsets.partition_point(|&o| o <= item).saturating_sub(1);
    let query_of = |row: usize| ids.get(row).unwrap_or("null").to_string();
    let issues = std::cell::RefCell::new(Vec::new());
    let count = std::cell::Cell::new(0usize);
    let mismatches = std::cell::RefCell::new(Vec::new());
    let rewritten = list.apply_to_inner(&|inner: Series| {
        let st = inner.struct_().map_err(|_| {
            polars_err!(SchemaMismatch: "column '{column}' must be a list of struct{{file, start, end}}, got list[{}]", inner.dtype())
        })?;
        let field = |name: &str| st.field_by_name(name).ok();
        let (Some(file), Some(start), Some(end)) = (field("file"), field("start"), field("end"))
        else {
            polars_bail!(SchemaMismatch: "column '{column}': span structs need 'file', 'start' and 'end' fields");
        };
        let file = file.cast(&DataType::String)?;
        let file = file.str()?;
        let start = read_offsets("check_spans", column, "start", &start)?;
        let end = read_offsets("check_spans", column, "end", &end)?;
        let stored = field("text")
            .or_else(|| field("content"))
            .map(|t| t.cast(&DataType::String))
            .transpose()?;
        let stored = stored.as_ref().map(|s| s.str()).transpose()?;
        let n = inner.len();
        count.set(n);
        let mut new_start: Vec<Option<i64>> = Vec::with_capacity(n);
        let mut new_end: Vec<Option<i64>> = Vec::with_capacity(n);
        let mut texts: Vec<Option<String>> = Vec::with_capacity(n);
        for i in 0..n {
            let row = row_of(i);
            let report = |problem: String, into: &std::cell::RefCell<Vec<SpanIssue>>| {
                into.borrow_mut().push(SpanIssue {
                    row,
                    query: query_of(row),
                    index: i - offsets[row],
                    problem,
                })
            };
            let (f, s, e) = (file.get(i), start[i], end[i]);
            let mut converted = (s, e);
            let mut text = stored.and_then(|t| t.get(i)).map(String::from);
            match (f, s, e) {
                (Some(f), Some(s), Some(e)) => match corpus.get(f) {
                    Err(problem) => report(problem.to_string(), &issues),
                    Ok(doc) => {
                        let to_chars = |x: i64| -> Option<i64> {
                            match unit {
                                SpanUnit::CodePoints => Some(x),
                                SpanUnit::Bytes => {
                                    u64::try_from(x).ok().and_then(|b| doc.byte_to_char(b)).map(|c| c as i64)
                                }
                            }
                        };
                        let len = doc.char_len() as i64;
                        if s < 0 || e < 0 {
                            report(format!("negative offset ({s}, {e}) in '{f}'"), &issues);
                        } else if s > e {
                            report(format!("start {s} > end {e} in '{f}'"), &issues);
                        } else {
                            match (to_chars(s), to_chars(e)) {
                                (Some(cs), Some(ce)) if ce <= len => {
                                    converted = (Some(cs), Some(ce));
                                    let slice = doc.slice(cs as u64, ce as u64);
                                    match &text {
                                        Some(t) if t != slice => report(
                                            format!("stored text differs from '{f}'[{cs}:{ce}]"),
                                            &mismatches,
                                        ),
                                        None if fill_text => text = Some(slice.to_string()),
                                        _ => {}
                                    }
                                }
                                (Some(_), Some(ce)) => report(
                                    format!("end {ce} is beyond '{f}' ({len} code points)"),
                                    &issues,
                                ),
                                _ if unit == SpanUnit::Bytes && (s as usize) <= doc.text.len() && (e as usize) <= doc.text.len() => report(
                                    format!("byte offsets ({s}, {e}) fall inside a character of '{f}'"),
                                    &issues,
                                ),
                                _ => report(
                                    format!("span ({s}, {e}) is beyond '{f}' ({} bytes)", doc.text.len()),
                                    &issues,
                                ),
                            }
                        }
                    }
                },
                _ if inner.is_null().get(i) == Some(true) => {
                    report("the span is null".into(), &issues)
                }
                _ => report("file, start or end is null".into(), &issues),
            }
            new_start.push(converted.0);
            new_end.push(converted.1);
            texts.push(text);
        }
        let mut fields: Vec<Series> = Vec::new();
        for f in st.fields_as_series() {
            let name = f.name().as_str();
            match name {
                "start" => fields.push(Series::new("start".into(), &new_start)),
                "end" => fields.push(Series::new("end".into(), &new_end)),
                "text" if fill_text => fields.push(Series::new("text".into(), &texts)),
                _ => fields.push(f),
            }
        }
        if fill_text && !fields.iter().any(|f| f.name().as_str() == "text") {
            fields.push(Series::new("text".into(), &texts));
        }
        let rebuilt = StructChunked::from_series(inner.name().clone(), n, fields.iter())?;
        let rebuilt = if inner.null_count() > 0 {
            let valid: polars_arrow::bitmap::Bitmap =
                (0..n).map(|i| inner.is_null().get(i) != Some(true)).collect();
            rebuilt.rechunk().into_owned().with_outer_validity(Some(valid))
        } else {
            rebuilt
        };
        Ok(rebuilt.into_series())
    })?;
    Ok(CheckedSpans {
        column: rewritten.into_series().with_name(column.into()),
        issues: issues.into_inner(),
        text_mismatches: mismatches.into_inner(),
        spans: count.get(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Corpus {
        let df = df!("file" => ["a.md", "b.md"], "text" => ["héllo wörld", "plain"]).unwrap();
        Corpus::from_frame(&df).unwrap()
    }

    fn spans(rows: &[&[(&str, i64, i64)]]) -> DataFrame {
        let lists: Vec<Series> = rows
            .iter()
            .map(|row| {
                let file: Vec<&str> = row.iter().map(|s| s.0).collect();
                let start: Vec<i64> = row.iter().map(|s| s.1).collect();
                let end: Vec<i64> = row.iter().map(|s| s.2).collect();
                let fields = [
                    Series::new("file".into(), file),
                    Series::new("start".into(), start),
                    Series::new("end".into(), end),
                ];
                StructChunked::from_series("".into(), row.len(), fields.iter())
                    .unwrap()
                    .into_series()
            })
            .collect();
        let ids: Vec<String> = (0..rows.len()).map(|i| format!("q{i}")).collect();
        df!("query_id" => ids, "spans" => lists).unwrap()
    }

    #[test]
    fn code_points_bytes_and_problems() {
        let c = corpus();
        assert_eq!(c.get("a.md").unwrap().char_len(), 11);
        assert!(c
            .get("../a.md")
            .err()
            .unwrap()
            .to_string()
            .contains("escapes"));
        assert!(c
            .get("/etc/passwd")
            .err()
            .unwrap()
            .to_string()
            .contains("escapes"));
        let df = spans(&[
            &[("a.md", 0, 5), ("a.md", 6, 11)],
            &[("b.md", 2, 9), ("c.md", 0, 1)],
        ]);
        let checked =
            check_spans(&df, "query_id", "spans", &c, SpanUnit::CodePoints, true).unwrap();
        let problems: Vec<String> = checked.issues.iter().map(|i| i.to_string()).collect();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("q1 span #0") && problems[0].contains("beyond"));
        assert!(problems[1].contains("unknown file 'c.md'"));
        let texts = checked
            .column
            .explode(ExplodeOptions {
                empty_as_null: false,
                keep_nulls: false,
            })
            .unwrap();
        let texts = texts.struct_().unwrap().field_by_name("text").unwrap();
        assert_eq!(texts.str().unwrap().get(0), Some("héllo"));
        assert_eq!(texts.str().unwrap().get(1), Some("wörld"));
        // Bytes: "héllo" is 6 bytes; 7..13 is "wörld".
        let df = spans(&[&[("a.md", 0, 6), ("a.md", 7, 13), ("a.md", 0, 2)]]);
        let checked = check_spans(&df, "query_id", "spans", &c, SpanUnit::Bytes, false).unwrap();
        assert_eq!(checked.issues.len(), 1);
        assert!(checked.issues[0].problem.contains("inside a character"));
        let out = checked
            .column
            .explode(ExplodeOptions {
                empty_as_null: false,
                keep_nulls: false,
            })
            .unwrap();
        let out = out.struct_().unwrap().clone();
        let ends = out.field_by_name("end").unwrap();
        assert_eq!(ends.i64().unwrap().get(0), Some(5));
        assert_eq!(ends.i64().unwrap().get(1), Some(11));
    }
}
