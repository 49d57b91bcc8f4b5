//! Opening the job's files: Parquet inputs checked before they are read, and read errors that
//! name the input they belong to.

use std::path::Path;

/// Whether two paths name the same existing file (a path that does not exist names none).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Opens the Parquet file `path` (a `what`: "run table", "golden table", ...) after checking
/// that it is a regular file with a readable Parquet footer: an empty, truncated or corrupt
/// file, a wrong magic number or a footer claiming more bytes than the file has is an error
/// naming the file and what it is, not Polars' bare "File out of specification".
pub fn parquet_file(path: &Path, what: &str) -> polars::prelude::PolarsResult<std::fs::File> {
    use polars::prelude::*;
    let shown = path.display();
    let metadata = std::fs::metadata(path)
        .map_err(|e| crate::job::prefixed(&format!("{what} {shown}: cannot read it: "), e))?;
    if !metadata.is_file() {
        polars_bail!(ComputeError: "{what} {shown} is not a regular file; give the path of a Parquet file");
    }
    let file = std::fs::File::open(path)
        .map_err(|e| crate::job::prefixed(&format!("{what} {shown}: cannot open it: "), e))?;
    let mut reader = ParquetReader::new(
        file.try_clone()
            .map_err(|e| polars_err!(ComputeError: "{what} {shown}: {e}"))?,
    );
    reader.get_metadata().map_err(|e| {
        let message = e.to_string();
        let problem = parquet_problem(&message);
        polars_err!(ComputeError: "{what} {shown} is not a readable Parquet file ({} bytes): {problem}", metadata.len())
    })?;
    Ok(file)
}

/// `e` with the Parquet inputs `inputs` (role, path) named when it is an error of reading
/// Parquet data (a corrupt page, a failed decompression): Polars' message names no file.
pub fn naming_read_errors(
    e: polars::prelude::PolarsError,
    inputs: &[(&str, &Path)],
) -> polars::prelude::PolarsError {
    let message = e.to_string();
    let lower = message.to_ascii_lowercase();
    // Polars' own messages name no file; the job's name the input they are about, and are
    // left as they are (a path ending in `.parquet` says nothing of what went wrong).
    let names_an_input = inputs
        .iter()
        .any(|(_, path)| message.contains(&path.display().to_string()));
    if inputs.is_empty()
        || names_an_input
        || !(lower.starts_with("parquet")
            || lower.contains("parquet error")
            || lower.contains("out of specification")
            || lower.contains("decompress")
            || lower.contains("corrupt"))
    {
        return e;
    }
    let problem = parquet_problem(&message);
    let named: Vec<String> = inputs
        .iter()
        .map(|(role, path)| format!("{role} {}", path.display()))
        .collect();
    let which = if named.len() == 1 { "" } else { "one of " };
    polars::prelude::polars_err!(
        ComputeError: "cannot read the data of {which}{}: {problem} (a corrupt or truncated Parquet file?)",
        named.join(", ")
    )
}

/// The problem in a Parquet error of Polars, without the layers of prefix it wraps it in
/// (`parquet: File out of specification: underlying IO error: ...`): what the messages that
/// name the file go on to say.
pub(crate) fn parquet_problem(message: &str) -> &str {
    message
        .strip_prefix("parquet: ")
        .unwrap_or(message)
        .trim_start_matches("File out of specification: ")
        .trim_start_matches("underlying IO error: ")
}

/// A failed write of the output `path`, naming it (Polars' own error names no file).
pub(crate) fn write_error(
    path: &Path,
    e: polars::prelude::PolarsError,
) -> polars::prelude::PolarsError {
    let message = e.to_string();
    crate::job::io_err(format!(
        "cannot write {}: {}",
        path.display(),
        crate::job::parquet::parquet_problem(&message)
    ))
}
