//! The columnar driver: turns Polars series into borrowed row views for the kernels, and kernel
//! results back into series.
//!
//! Every metric reuses the same mechanics:
//!
//! * **dtype checks** ([`StrColumn::new`], [`TextListColumn::new`]) fail with a message naming
//!   the metric, the column and the dtype found;
//! * **nulls** travel as `None` rows; kernels never see them;
//! * **broadcast**: a length-1 input is repeated against longer ones ([`output_len`]);
//! * **chunk-parallel evaluation** ([`map_row_batches`]) splits the rows into contiguous batches,
//!   evaluates them on Polars' thread pool and concatenates the results in order, so the parallel
//!   result is the sequential one.

use std::ops::Range;

use polars::prelude::*;
use polars_arrow::array::{Array, ListArray, StructArray, Utf8ViewArray};
use rayon::prelude::*;

/// Rows per batch: large enough to amortise scheduling, small enough to balance two cores and to
/// keep each batch's borrowed views in cache.
const MAX_BATCH_ROWS: usize = 4096;

/// The common length of a metric's inputs, where length-1 inputs broadcast.
pub fn output_len(metric: &str, inputs: &[(&str, usize)]) -> PolarsResult<usize> {
    let len = inputs
        .iter()
        .map(|&(_, n)| n)
        .filter(|&n| n != 1)
        .max()
        .unwrap_or(1);
    for &(name, n) in inputs {
        if n != len && n != 1 {
            let all: Vec<String> = inputs
                .iter()
                .map(|(c, n)| format!("'{c}' has {n} rows"))
                .collect();
            polars_bail!(ShapeMismatch: "{metric}: inputs have different lengths ({}); column '{name}' must have {len} rows or 1 row to broadcast", all.join(", "));
        }
    }
    Ok(len)
}

/// Evaluates `batch` on contiguous row ranges covering `0..len` and concatenates the results in
/// row order. With `parallel`, batches run on Polars' thread pool.
///
/// ```
/// use polars_rag::columnar::driver::map_row_batches;
/// let seq = map_row_batches(10_000, false, |r| r.map(|i| i * 2).collect());
/// let par = map_row_batches(10_000, true, |r| r.map(|i| i * 2).collect());
/// assert_eq!(seq, par);
/// assert_eq!(seq.len(), 10_000);
/// ```
pub fn map_row_batches<T, F>(len: usize, parallel: bool, batch: F) -> Vec<T>
where
    T: Send,
    F: Fn(Range<usize>) -> Vec<T> + Sync + Send,
{
    let threads = polars_core::runtime::THREAD_POOL
        .current_num_threads()
        .max(1);
    let batch_rows = if parallel {
        len.div_ceil(threads * 4).clamp(64, MAX_BATCH_ROWS)
    } else {
        MAX_BATCH_ROWS
    };
    let ranges: Vec<Range<usize>> = (0..len)
        .step_by(batch_rows.max(1))
        .map(|start| start..(start + batch_rows).min(len))
        .collect();
    let parts: Vec<Vec<T>> = if parallel && ranges.len() > 1 {
        polars_core::runtime::THREAD_POOL.install(|| ranges.into_par_iter().map(&batch).collect())
    } else {
        ranges.into_iter().map(&batch).collect()
    };
    let mut out = Vec::with_capacity(len);
    for part in parts {
        out.extend(part);
    }
    out
}

/// Maps a global row range onto `(chunk index, local range)` pieces of a chunked column.
fn chunk_pieces(
    chunk_lens: impl Iterator<Item = usize>,
    range: Range<usize>,
) -> Vec<(usize, Range<usize>)> {
    let mut pieces = Vec::new();
    let mut chunk_start = 0;
    for (idx, chunk_len) in chunk_lens.enumerate() {
        let chunk_end = chunk_start + chunk_len;
        let lo = range.start.max(chunk_start);
        let hi = range.end.min(chunk_end);
        if lo < hi {
            pieces.push((idx, lo - chunk_start..hi - chunk_start));
        }
        if chunk_end >= range.end {
            break;
        }
        chunk_start = chunk_end;
    }
    pieces
}

/// The rows of `range`, or of the single row repeated when a length-1 column broadcasts.
fn source_range(len: usize, range: &Range<usize>) -> Range<usize> {
    if len == 1 {
        0..1
    } else {
        range.clone()
    }
}

/// The dtype a metric reads a column of `dtype` as, where Python Polars can send a dtype the
/// kernels have no reader for: Categorical and Enum are read as their strings, 8- and 16-bit
/// integers as `i64`, Float16 as `f32` and Decimal as `f64`, also inside lists, arrays and
/// structs. `None` when the column is read as it is.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::driver::readable_dtype;
/// assert_eq!(readable_dtype(&DataType::UInt8), Some(DataType::Int64));
/// assert_eq!(
///     readable_dtype(&DataType::List(Box::new(DataType::Int16))),
///     Some(DataType::List(Box::new(DataType::Int64)))
/// );
/// assert_eq!(readable_dtype(&DataType::String), None);
/// ```
pub fn readable_dtype(dtype: &DataType) -> Option<DataType> {
    match dtype {
        DataType::Categorical(..) | DataType::Enum(..) => Some(DataType::String),
        DataType::Int8 | DataType::Int16 | DataType::UInt8 | DataType::UInt16 => {
            Some(DataType::Int64)
        }
        DataType::Float16 => Some(DataType::Float32),
        DataType::Decimal(..) => Some(DataType::Float64),
        DataType::List(inner) => readable_dtype(inner).map(|d| DataType::List(Box::new(d))),
        DataType::Array(inner, width) => {
            readable_dtype(inner).map(|d| DataType::Array(Box::new(d), *width))
        }
        DataType::Struct(fields) => {
            let mapped: Vec<Option<DataType>> =
                fields.iter().map(|f| readable_dtype(f.dtype())).collect();
            if mapped.iter().all(Option::is_none) {
                return None;
            }
            Some(DataType::Struct(
                fields
                    .iter()
                    .zip(mapped)
                    .map(|(f, d)| {
                        Field::new(f.name().clone(), d.unwrap_or_else(|| f.dtype().clone()))
                    })
                    .collect(),
            ))
        }
        _ => None,
    }
}

/// `s` as a metric reads it (see [`readable_dtype`]): cast exactly, or an error naming the
/// metric and the column.
pub fn readable_input(metric: &str, s: &Series) -> PolarsResult<Series> {
    match readable_dtype(s.dtype()) {
        None => Ok(s.clone()),
        Some(target) => s.strict_cast(&target).map_err(|e| {
            polars_err!(SchemaMismatch: "{metric}: column '{}' of dtype {} cannot be read as {target}: {e}", s.name(), s.dtype())
        }),
    }
}

/// Every column of `df` as the library reads it (see [`readable_input`]); `function` names the
/// caller in errors.
pub fn readable_frame(function: &str, df: &DataFrame) -> PolarsResult<DataFrame> {
    if df
        .columns()
        .iter()
        .all(|c| readable_dtype(c.dtype()).is_none())
    {
        return Ok(df.clone());
    }
    let columns = df
        .columns()
        .iter()
        .map(|c| readable_input(function, c.as_materialized_series()).map(Column::from))
        .collect::<PolarsResult<Vec<_>>>()?;
    DataFrame::new(df.height(), columns)
}

/// Rejects, before any data is read, an input whose dtype no metric can take whatever its
/// values: a fixed-size array of width 0 anywhere in it (an embedding with no dimension).
pub fn check_input_field(metric: &str, field: &Field) -> PolarsResult<()> {
    fn has_zero_width(dtype: &DataType) -> bool {
        match dtype {
            DataType::Array(inner, width) => *width == 0 || has_zero_width(inner),
            DataType::List(inner) => has_zero_width(inner),
            DataType::Struct(fields) => fields.iter().any(|f| has_zero_width(f.dtype())),
            _ => false,
        }
    }
    if has_zero_width(field.dtype()) {
        polars_bail!(SchemaMismatch: "{metric}: column '{}' has dtype {}: arrays of width 0 (embeddings with no dimension) are not accepted", field.name(), field.dtype());
    }
    Ok(())
}

/// Code-point (or byte) offsets read exactly from the `name` field of column `column`: integers
/// of any width, or floats that hold whole numbers. A fractional or non-finite float, a value
/// outside `i64`, or a non-numeric dtype is an error naming the metric, the column, the field and
/// the value; nothing is truncated or turned into a null.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::driver::offsets;
/// let ok = Series::new("start".into(), [Some(3.0f64), None]);
/// assert_eq!(offsets("span_recall", "golden", "start", &ok).unwrap(), vec![Some(3), None]);
/// let bad = Series::new("start".into(), [-0.5f64]);
/// assert!(offsets("span_recall", "golden", "start", &bad).unwrap_err().to_string().contains("-0.5"));
/// ```
pub fn offsets(
    metric: &str,
    column: &str,
    name: &str,
    s: &Series,
) -> PolarsResult<Vec<Option<i64>>> {
    let problem = |what: String| polars_err!(ComputeError: "{metric}: column '{column}' field '{name}': {what}");
    let dtype = s.dtype();
    if dtype.is_float() || matches!(dtype, DataType::Decimal(..)) {
        let values = s.cast(&DataType::Float64)?;
        let mut out = Vec::with_capacity(values.len());
        for v in values.f64()?.iter() {
            out.push(match v {
                None => None,
                Some(v) if !v.is_finite() => {
                    return Err(problem(format!("offset {v} is not a finite number")))
                }
                Some(v) if v.fract() != 0.0 => {
                    return Err(problem(format!("offset {v} is not a whole number")))
                }
                // 2^63 is exactly representable and one past i64::MAX.
                Some(v) if !(-9.223372036854776e18..9.223372036854776e18).contains(&v) => {
                    return Err(problem(format!(
                        "offset {v} is outside the 64-bit integer range"
                    )))
                }
                Some(v) => Some(v as i64),
            });
        }
        return Ok(out);
    }
    if dtype.is_integer() {
        let exact = s.strict_cast(&DataType::Int64).map_err(|_| {
            problem(format!(
                "an offset of dtype {dtype} is outside the 64-bit integer range (above {})",
                i64::MAX
            ))
        })?;
        return Ok(exact.i64()?.iter().collect());
    }
    if dtype.is_null() {
        return Ok(vec![None; s.len()]);
    }
    Err(problem(format!(
        "offsets must be integers, got dtype {dtype}"
    )))
}

/// Floats read from the `name` field of column `column` that must be finite when present
/// (relevance grades): NaN or an infinity is an error naming the metric, the column and the
/// value.
pub fn finite_floats(
    metric: &str,
    column: &str,
    name: &str,
    s: &Series,
) -> PolarsResult<Vec<Option<f64>>> {
    let dtype = s.dtype();
    if !(dtype.is_primitive_numeric()
        || dtype.is_null()
        || matches!(dtype, DataType::Decimal(..) | DataType::Boolean))
    {
        polars_bail!(SchemaMismatch: "{metric}: column '{column}' field '{name}' must be numeric, got dtype {dtype}");
    }
    let values: Vec<Option<f64>> = s.cast(&DataType::Float64)?.f64()?.iter().collect();
    if let Some(bad) = values.iter().flatten().find(|v| !v.is_finite()) {
        polars_bail!(ComputeError: "{metric}: column '{column}' field '{name}': {bad} is not a finite number");
    }
    Ok(values)
}

/// A string input (`str` dtype; an all-null column is accepted as all-null strings).
pub struct StrColumn<'a> {
    ca: Option<&'a StringChunked>,
    len: usize,
}

impl<'a> StrColumn<'a> {
    /// Checks that `s` holds strings.
    pub fn new(metric: &str, role: &str, s: &'a Series) -> PolarsResult<Self> {
        match s.dtype() {
            DataType::String => Ok(StrColumn {
                ca: Some(s.str()?),
                len: s.len(),
            }),
            DataType::Null => Ok(StrColumn {
                ca: None,
                len: s.len(),
            }),
            other => polars_bail!(
                SchemaMismatch: "{metric}: column '{}' ({role}) must be of type String, got {other}",
                s.name()
            ),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows `range` of the output (broadcasting a length-1 column) as borrowed strings.
    pub fn rows(&self, range: Range<usize>) -> Vec<Option<&'a str>> {
        let mut rows = Vec::with_capacity(range.len());
        let own = source_range(self.len, &range);
        match self.ca {
            None => rows.resize(range.len(), None),
            Some(ca) => {
                for (idx, local) in chunk_pieces(ca.chunk_lengths(), own) {
                    if let Some(arr) = ca.downcast_get(idx) {
                        rows.extend(local.map(|i| arr.get(i)));
                    }
                }
                if self.len == 1 {
                    let value = rows.first().copied().flatten();
                    rows.clear();
                    rows.resize(range.len(), value);
                }
            }
        }
        rows
    }
}

/// Borrowed text lists for a batch of rows: row `i` is `None` (null) or a slice of `items`.
pub struct TextListBatch<'a> {
    rows: Vec<Option<Range<usize>>>,
    items: Vec<&'a str>,
}

impl<'a> TextListBatch<'a> {
    /// Number of rows in the batch.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The texts of row `i`, `None` when the row is null.
    pub fn get(&self, i: usize) -> Option<&[&'a str]> {
        self.rows[i].clone().map(|r| &self.items[r])
    }
}

enum TextListKind<'a> {
    /// One text per row.
    Single(&'a StringChunked),
    /// A list of texts per row; `field` picks the text field of a list of structs.
    List {
        ca: &'a ListChunked,
        field: Option<usize>,
    },
    /// All rows null.
    Null,
}

/// A list-of-texts input: `list[str]`, a `str` column (one text per row), or a list of structs
/// with a `text: str` field (a `retrieved` column). Null texts inside a list are skipped.
pub struct TextListColumn<'a> {
    kind: TextListKind<'a>,
    len: usize,
}

impl<'a> TextListColumn<'a> {
    /// Checks that `s` holds texts in one of the accepted shapes.
    pub fn new(metric: &str, role: &str, s: &'a Series) -> PolarsResult<Self> {
        let len = s.len();
        let bad = |dtype: &DataType| {
            polars_err!(
                SchemaMismatch: "{metric}: column '{}' ({role}) must be list[str], str, or list[struct] with a 'text' field of type String, got {dtype}",
                s.name()
            )
        };
        let kind = match s.dtype() {
            DataType::String => TextListKind::Single(s.str()?),
            DataType::Null => TextListKind::Null,
            DataType::List(inner) => match inner.as_ref() {
                DataType::String | DataType::Null => TextListKind::List {
                    ca: s.list()?,
                    field: None,
                },
                DataType::Struct(fields) => {
                    let idx = fields
                        .iter()
                        .position(|f| f.name().as_str() == "text" && f.dtype() == &DataType::String)
                        .ok_or_else(|| bad(s.dtype()))?;
                    TextListKind::List {
                        ca: s.list()?,
                        field: Some(idx),
                    }
                }
                _ => return Err(bad(s.dtype())),
            },
            other => return Err(bad(other)),
        };
        Ok(TextListColumn { kind, len })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows `range` of the output (broadcasting a length-1 column).
    pub fn rows(&self, range: Range<usize>) -> TextListBatch<'a> {
        let own = source_range(self.len, &range);
        let mut batch = TextListBatch {
            rows: Vec::with_capacity(range.len()),
            items: Vec::new(),
        };
        match &self.kind {
            TextListKind::Null => batch.rows.resize(own.len(), None),
            TextListKind::Single(ca) => {
                for (idx, local) in chunk_pieces(ca.chunk_lengths(), own) {
                    if let Some(arr) = ca.downcast_get(idx) {
                        for i in local {
                            batch.rows.push(arr.get(i).map(|text| {
                                batch.items.push(text);
                                batch.items.len() - 1..batch.items.len()
                            }));
                        }
                    }
                }
            }
            TextListKind::List { ca, field } => {
                for (idx, local) in chunk_pieces(ca.chunk_lengths(), own) {
                    if let Some(arr) = ca.downcast_get(idx) {
                        push_list_rows(arr, *field, local, &mut batch);
                    }
                }
            }
        }
        if self.len == 1 {
            let row = batch.rows.first().cloned().flatten();
            batch.rows.clear();
            batch.rows.resize(range.len(), row);
        }
        batch
    }
}

fn push_list_rows<'a>(
    arr: &'a ListArray<i64>,
    field: Option<usize>,
    local: Range<usize>,
    batch: &mut TextListBatch<'a>,
) {
    let values: &'a dyn Array = arr.values().as_ref();
    // Resolve the texts array (and the struct validity, if any) once per chunk.
    let (texts, structs): (Option<&'a Utf8ViewArray>, Option<&'a StructArray>) = match field {
        None => (values.as_any().downcast_ref::<Utf8ViewArray>(), None),
        Some(f) => {
            let st = values.as_any().downcast_ref::<StructArray>();
            let texts = st
                .and_then(|st| st.values().get(f))
                .and_then(|a| a.as_any().downcast_ref::<Utf8ViewArray>());
            (texts, st)
        }
    };
    for i in local {
        if !arr.is_valid(i) {
            batch.rows.push(None);
            continue;
        }
        let (start, end) = arr.offsets().start_end(i);
        let first = batch.items.len();
        if let Some(texts) = texts {
            for j in start..end {
                let struct_valid = structs.is_none_or(|st| st.is_valid(j));
                if let Some(text) = texts.get(j).filter(|_| struct_valid) {
                    batch.items.push(text);
                }
            }
        }
        batch.rows.push(Some(first..batch.items.len()));
    }
}

/// Builds a struct series from its fields, with the rows where `valid` is false set to a null
/// struct (not a struct of nulls).
pub fn struct_series(name: &str, fields: &[Series], valid: &[bool]) -> PolarsResult<Series> {
    let len = valid.len();
    let ca = StructChunked::from_series(name.into(), len, fields.iter())?;
    let ca = if valid.iter().all(|&v| v) {
        ca
    } else {
        let bitmap: polars_arrow::bitmap::Bitmap = valid.iter().copied().collect();
        ca.rechunk().into_owned().with_outer_validity(Some(bitmap))
    };
    Ok(ca.into_series())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_pieces_cover_ranges() {
        let lens = [3usize, 0, 4, 2];
        assert_eq!(
            chunk_pieces(lens.iter().copied(), 2..8),
            vec![(0, 2..3), (2, 0..4), (3, 0..1)]
        );
        assert_eq!(chunk_pieces(lens.iter().copied(), 0..0), vec![]);
    }

    #[test]
    fn output_len_broadcasts_and_rejects() {
        assert_eq!(output_len("m", &[("a", 5), ("b", 1)]).unwrap(), 5);
        assert_eq!(output_len("m", &[("a", 1), ("b", 1)]).unwrap(), 1);
        assert_eq!(output_len("m", &[("a", 0), ("b", 1)]).unwrap(), 0);
        let err = output_len("m", &[("a", 5), ("b", 3)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("m:") && err.contains("'b'"), "{err}");
    }
}
