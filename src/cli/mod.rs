//! The `polars-rag` command line: Parquet in, metrics, Parquet out, and a summary on stdout.
//!
//! The CLI plans a lazy query from the same `Expr` builders Rust users call
//! ([`crate::columnar::expr`]); it holds no metric logic.

pub mod app;
mod args;
mod settings;

use std::path::{Path, PathBuf};

/// Locates the bundled demo folder: `$POLARS_RAG_DEMO_DIR` (the Python package's `polars-rag`
/// command sets it to the copy inside the package), else `datasets/demo` under the current
/// directory, else under the source tree the binary was built from.
pub fn demo_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("POLARS_RAG_DEMO_DIR").map(PathBuf::from),
        Some(PathBuf::from("datasets/demo")),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/demo")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("run_a.parquet").is_file())
}
