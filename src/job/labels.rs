//! Reading a labels table (a person's labels of judged rows): a workbook as `polars-rag sample`
//! writes it and a person fills it in, or Parquet. Below `calibrate` and `compare`, which both
//! read labels.

use std::path::Path;

use polars::prelude::*;

/// The labels table: a workbook (`.xlsx`, its first sheet, as `polars-rag sample` writes it and
/// a person fills it in) or Parquet; `who` (`calibrate`, `compare`) names the caller in errors.
/// A path that is not a regular file is refused before it is opened (opening a FIFO would wait
/// for a writer forever).
pub fn read_labels(path: &Path, who: &str) -> PolarsResult<DataFrame> {
    read_labels_keyed(path, who, None)
}

/// [`read_labels`], the labels matched on the column `id` (when given): in a workbook, a row
/// that holds a label but no `id` is an error naming the sheet's row (blank rows are skipped).
pub fn read_labels_keyed(path: &Path, who: &str, id: Option<&str>) -> PolarsResult<DataFrame> {
    if std::fs::symlink_metadata(path).is_err() {
        return Err(crate::job::not_found(format!(
            "{who}: labels table not found: {}",
            path.display()
        )));
    }
    crate::files::regular_file(path, "labels table")
        .map_err(|e| crate::job::prefixed(&format!("{who}: "), e))?;
    let is_workbook = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xlsx"));
    if is_workbook {
        return match id {
            Some(id) => crate::columnar::sheets::read_keyed_frame(path, who, id),
            None => crate::columnar::sheets::read_frame(path, who),
        };
    }
    ParquetReader::new(crate::job::parquet::parquet_file(path, "labels table")?)
        .finish()
        .map_err(|e| crate::job::parquet::naming_read_errors(e, &[("labels table", path)]))
}
