//! Where a comparison reads a scores table: a frame in memory, or a Parquet file read a few
//! columns and a slice of rows at a time. A comparison of runs larger than memory reads its
//! tables from files (`job::compare::ParquetScores`): it holds the pairing of the items and one
//! group of metric columns at a time, never a whole table.

use std::ops::Range;

use polars::prelude::*;

/// Rows a comparison reads from a table at once.
pub const READ_ROWS: usize = 262_144;

/// A scores table a comparison reads piecewise.
pub trait ScoresSource {
    /// Rows.
    fn height(&self) -> usize;
    /// Columns and their types.
    fn schema(&self) -> Schema;
    /// The columns `columns` of the rows `rows`.
    fn read(&self, columns: &[String], rows: Range<usize>) -> PolarsResult<DataFrame>;
    /// Rows read at once.
    fn read_rows(&self) -> usize {
        READ_ROWS
    }
    /// The file the table is read from, which messages name (`None`: a frame in memory).
    fn file(&self) -> Option<&std::path::Path> {
        None
    }
}

impl ScoresSource for DataFrame {
    fn height(&self) -> usize {
        DataFrame::height(self)
    }

    fn schema(&self) -> Schema {
        DataFrame::schema(self).as_ref().clone()
    }

    fn read(&self, columns: &[String], rows: Range<usize>) -> PolarsResult<DataFrame> {
        Ok(self
            .select(columns.iter().map(String::as_str))?
            .slice(rows.start as i64, rows.len()))
    }
}

/// The rows of `source` in slices of its [`ScoresSource::read_rows`]: `(first row, frame of
/// `columns`)`.
pub(crate) fn slices<'a>(
    source: &'a dyn ScoresSource,
    columns: &'a [String],
) -> impl Iterator<Item = PolarsResult<(usize, DataFrame)>> + 'a {
    let height = source.height();
    let step = source.read_rows().max(1);
    (0..height.div_ceil(step)).map(move |k| {
        let start = k * step;
        let rows = start..(start + step).min(height);
        Ok((start, source.read(columns, rows)?))
    })
}
