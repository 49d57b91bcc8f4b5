//! Where a comparison reads a scores table: a frame in memory, or a Parquet file read a few
//! columns and a slice of rows at a time. A comparison of runs larger than memory reads its
//! tables through [`ParquetScores`]: it holds the pairing of the items and one group of metric
//! columns at a time, never a whole table.

use std::ops::Range;
#[cfg(feature = "job")]
use std::path::{Path, PathBuf};

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

/// A scores table in a Parquet file, read a slice of rows and a few columns at a time.
#[cfg(feature = "job")]
#[derive(Clone, Debug)]
pub struct ParquetScores {
    path: PathBuf,
    schema: Schema,
    height: usize,
    read_rows: usize,
}

#[cfg(feature = "job")]
impl ParquetScores {
    /// Opens a scores table: its schema and row count, from its metadata.
    pub fn open(path: &Path) -> PolarsResult<ParquetScores> {
        let mut reader =
            ParquetReader::new(crate::job::parquet::parquet_file(path, "scores table")?);
        let schema = Schema::from_arrow_schema(reader.schema()?.as_ref());
        let height = reader.num_rows()?;
        Ok(ParquetScores {
            path: path.to_path_buf(),
            schema,
            height,
            read_rows: READ_ROWS,
        })
    }

    /// The same table read `rows` rows at a time (at least one).
    pub fn with_read_rows(mut self, rows: usize) -> ParquetScores {
        self.read_rows = rows.max(1);
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(feature = "job")]
impl ScoresSource for ParquetScores {
    fn height(&self) -> usize {
        self.height
    }

    fn schema(&self) -> Schema {
        self.schema.clone()
    }

    fn read_rows(&self) -> usize {
        self.read_rows
    }

    fn read(&self, columns: &[String], rows: Range<usize>) -> PolarsResult<DataFrame> {
        let file = crate::job::parquet::parquet_file(&self.path, "scores table")?;
        ParquetReader::new(file)
            .with_columns(Some(columns.to_vec()))
            .with_slice(Some((rows.start, rows.len())))
            .finish()
            .map_err(|e| {
                crate::job::parquet::naming_read_errors(e, &[("scores table", &self.path)])
            })
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
