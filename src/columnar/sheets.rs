//! Tables as workbook sheets ([`crate::workbook`]): a frame written as one sheet (numbers as
//! numbers, everything else as text, lists one item per line), and the first sheet of a
//! workbook read back as a frame, typed by its cells.
//!
//! ```
//! use polars::prelude::*;
//! use polars_rag::columnar::sheets::{read_frame, write_frame};
//! let path = std::env::temp_dir().join(format!("polars-rag-doc-sheet-{}.xlsx", std::process::id()));
//! let frame = df!("query_id" => [1i64, 2], "answer" => ["yes", "no"], "label" => [Some(0.5), None]).unwrap();
//! write_frame(&frame, &path, "Labels", "example").unwrap();
//! let read = read_frame(&path, "example").unwrap();
//! assert_eq!(read, frame);
//! std::fs::remove_file(&path).unwrap();
//! ```

use polars::prelude::*;

use crate::workbook::{read_first_sheet, write_sheet, Cell, Value};

/// A column as the text of its cells: lists one item per line.
fn cell_texts(column: &Column) -> PolarsResult<StringChunked> {
    if let DataType::List(_) = column.dtype() {
        let lists = column.list()?;
        let mut joined: Vec<Option<String>> = Vec::with_capacity(lists.len());
        for item in lists.amortized_iter() {
            joined.push(match item {
                None => None,
                Some(items) => {
                    let text = items.as_ref().cast(&DataType::String)?;
                    let parts: Vec<&str> = text.str()?.iter().flatten().collect();
                    Some(parts.join("\n"))
                }
            });
        }
        return Ok(StringChunked::from_iter_options(
            column.name().clone(),
            joined.into_iter(),
        ));
    }
    Ok(column.cast(&DataType::String)?.str()?.clone())
}

/// Writes `frame` as the workbook at `path`, one sheet named `sheet`, atomically; `what` names
/// the caller in errors.
pub fn write_frame(
    frame: &DataFrame,
    path: &std::path::Path,
    sheet: &str,
    what: &str,
) -> PolarsResult<()> {
    let headers: Vec<&str> = frame
        .get_column_names()
        .iter()
        .map(|n| n.as_str())
        .collect();
    let numeric: Vec<bool> = frame
        .columns()
        .iter()
        .map(|c| c.dtype().is_primitive_numeric())
        .collect();
    let as_text: Vec<Option<StringChunked>> = frame
        .columns()
        .iter()
        .zip(&numeric)
        .map(|(c, numeric)| (!numeric).then(|| cell_texts(c)).transpose())
        .collect::<PolarsResult<_>>()?;
    let as_number: Vec<Option<Float64Chunked>> = frame
        .columns()
        .iter()
        .zip(&numeric)
        .map(|(c, numeric)| {
            numeric
                .then(|| c.cast(&DataType::Float64).and_then(|s| s.f64().cloned()))
                .transpose()
        })
        .collect::<PolarsResult<_>>()?;
    let rows: Vec<Vec<Cell<'_>>> = (0..frame.height())
        .map(|i| {
            (0..headers.len())
                .map(|c| match (&as_text[c], &as_number[c]) {
                    (Some(text), _) => Cell::Text(text.get(i)),
                    (_, Some(number)) => Cell::Number(number.get(i)),
                    _ => Cell::Text(None),
                })
                .collect()
        })
        .collect();
    Ok(write_sheet(path, sheet, &headers, &rows, what)?)
}

/// The first sheet of the workbook at `path` as a frame: the first row names the columns
/// (a blank or repeated name is an error that names its column); a column whose cells are all
/// integers is Int64, all numbers Float64, all booleans Boolean, else String (numbers written
/// as text, integers without a fraction; an empty column too). Empty cells are nulls; blank
/// rows (no cell filled, such as rows left between the filled ones) are skipped.
pub fn read_frame(path: &std::path::Path, what: &str) -> PolarsResult<DataFrame> {
    read_table(path, what, None)
}

/// [`read_frame`] for a sheet of labels keyed by the column `key`: a row that holds something
/// but no key is an error naming the row (what it holds cannot be matched to an item). A sheet
/// without a `key` column is read as [`read_frame`] reads it.
pub fn read_keyed_frame(path: &std::path::Path, what: &str, key: &str) -> PolarsResult<DataFrame> {
    read_table(path, what, Some(key))
}

/// Whether a cell is empty or holds only blank text.
fn is_blank(cell: &Option<Value>) -> bool {
    match cell {
        None => true,
        Some(Value::Text(t)) => t.trim().is_empty(),
        Some(_) => false,
    }
}

fn read_table(path: &std::path::Path, what: &str, key: Option<&str>) -> PolarsResult<DataFrame> {
    let rows = read_first_sheet(path, what)?;
    let Some(header) = rows
        .first()
        .filter(|_| rows.iter().any(|r| !r.iter().all(is_blank)))
    else {
        polars_bail!(ComputeError: "{what}: the first sheet of {} is empty (it needs a header row)", path.display());
    };
    let mut names: Vec<String> = Vec::with_capacity(header.len());
    for (c, cell) in header.iter().enumerate() {
        let name = match cell {
            Some(Value::Text(t)) if !t.trim().is_empty() => t.trim().to_string(),
            Some(Value::Number(x)) => x.to_string(),
            _ => {
                polars_bail!(ComputeError: "{what}: column {} of the header row of {} has no name", c + 1, path.display())
            }
        };
        if names.contains(&name) {
            polars_bail!(Duplicate: "{what}: the header row of {} names '{name}' twice", path.display());
        }
        names.push(name);
    }
    let key_column = key.and_then(|key| names.iter().position(|n| n == key));
    let mut body: Vec<&Vec<Option<Value>>> = Vec::with_capacity(rows.len().saturating_sub(1));
    for (index, row) in rows.iter().enumerate().skip(1) {
        if row.iter().all(is_blank) {
            continue;
        }
        if let Some(k) = key_column
            && is_blank(row.get(k).unwrap_or(&None))
        {
            let filled = row.iter().position(|c| !is_blank(c)).unwrap_or(0);
            polars_bail!(ComputeError: "{what}: row {} of {} has no {} but holds a {}: fill in the item's {} or clear the row", index + 1, path.display(), names[k], names[filled], names[k]);
        }
        body.push(row);
    }
    let cell = |r: usize, c: usize| body[r].get(c).and_then(|v| v.as_ref());
    let mut columns = Vec::with_capacity(names.len());
    for (c, name) in names.iter().enumerate() {
        let cells: Vec<Option<&Value>> = (0..body.len()).map(|r| cell(r, c)).collect();
        let present = || cells.iter().flatten();
        let series = if present().next().is_none() {
            // A column nobody filled in: text, which every reader of a label accepts.
            Series::full_null(name.into(), body.len(), &DataType::String)
        } else if present()
            .all(|v| matches!(v, Value::Number(x) if x.fract() == 0.0 && x.abs() < 9.0e15))
        {
            Series::new(
                name.into(),
                cells
                    .iter()
                    .map(|v| match v {
                        Some(Value::Number(x)) => Some(*x as i64),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
            )
        } else if present().all(|v| matches!(v, Value::Number(_))) {
            Series::new(
                name.into(),
                cells
                    .iter()
                    .map(|v| match v {
                        Some(Value::Number(x)) => Some(*x),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
            )
        } else if present().all(|v| matches!(v, Value::Bool(_))) {
            Series::new(
                name.into(),
                cells
                    .iter()
                    .map(|v| match v {
                        Some(Value::Bool(b)) => Some(*b),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
            )
        } else {
            Series::new(
                name.into(),
                cells
                    .iter()
                    .map(|v| {
                        v.map(|v| match v {
                            Value::Text(t) => t.clone(),
                            Value::Number(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => {
                                format!("{}", *x as i64)
                            }
                            Value::Number(x) => x.to_string(),
                            Value::Bool(b) => b.to_string(),
                        })
                    })
                    .collect::<Vec<_>>(),
            )
        };
        columns.push(series.into_column());
    }
    DataFrame::new(body.len(), columns)
}
