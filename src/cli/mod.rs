//! The `polars-rag` command line: Parquet in, metrics, Parquet out, and a summary on stdout.
//!
//! The CLI plans a lazy query from the same `Expr` builders Rust users call
//! ([`polars_rag::polars::expr`]); it holds no metric logic.

pub mod compare;
pub mod config;
pub mod corpus;
pub mod judge_eval;
pub mod locate;
pub mod progress;
pub mod score;
pub mod tally;
pub mod validate;

use std::path::{Path, PathBuf};

/// Locates the bundled demo folder: `datasets/demo` under the current directory, else under the
/// source tree the binary was built from.
pub fn demo_dir() -> Option<PathBuf> {
    let candidates = [
        PathBuf::from("datasets/demo"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/demo"),
    ];
    candidates
        .into_iter()
        .find(|p| p.join("run_a.parquet").is_file())
}

/// Whether two paths name the same existing file (a path that does not exist names none).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
