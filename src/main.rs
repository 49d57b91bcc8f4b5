//! `polars-rag`: score RAG evaluation tables from the command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(polars_rag::cli::app::run(std::env::args_os()))
}
