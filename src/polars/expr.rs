//! Native Polars `Expr` builders (feature `lazy`). Each builder wraps the columnar function of
//! [`super::columns`] that the Python plugin and the CLI also call, so all faces agree.
//!
//! ```
//! use polars::prelude::*;
//! use polars_rag::metrics::citation::QuotedSpansOptions;
//! use polars_rag::polars::expr;
//!
//! let df = df!(
//!     "answer" => ["It is “the capital of France”.", "No quotes."],
//!     "source" => ["Paris is the capital of France.", "Anything."],
//! )
//! .unwrap();
//! let out = df
//!     .lazy()
//!     .select([expr::quoted_spans(col("answer"), col("source"), QuotedSpansOptions::default())
//!         .struct_()
//!         .field_by_name("score")])
//!     .collect()
//!     .unwrap();
//! let score = out.column("score").unwrap().f64().unwrap();
//! assert_eq!(score.get(0), Some(1.0));
//! assert_eq!(score.get(1), None);
//! ```

use polars::prelude::*;

use super::columns;
use crate::metrics::citation::QuotedSpansOptions;

/// Per-row `struct{matched: u32, total: u32, score: f64}`, named `quoted_spans`. Elementwise, so
/// it runs in streaming queries. `sources` may be `list[str]`, `str`, or a list of structs with
/// a `text` field.
pub fn quoted_spans(answer: Expr, sources: Expr, options: QuotedSpansOptions) -> Expr {
    map_multiple(
        move |cols: &mut [Column]| {
            let (answer, sources) = two_series("quoted_spans", cols)?;
            columns::quoted_spans(answer, sources, &options, true).map(Column::from)
        },
        [answer, sources],
        |_, _| {
            Ok(Field::new(
                "quoted_spans".into(),
                columns::quoted_spans_dtype(),
            ))
        },
    )
    .alias("quoted_spans")
}

/// Dataset-level alignment (one row per column or per group), named `citation_alignment`:
/// `struct{citation_alignment_quoted_spans, matched, total}` as Ragas returns it.
pub fn citation_alignment(answer: Expr, sources: Expr, options: QuotedSpansOptions) -> Expr {
    apply_multiple(
        move |cols: &mut [Column]| {
            let (answer, sources) = two_series("citation_alignment", cols)?;
            columns::citation_alignment_series(answer, sources, &options, true).map(Column::from)
        },
        [answer, sources],
        |_, _| {
            Ok(Field::new(
                "citation_alignment".into(),
                columns::citation_alignment_dtype(),
            ))
        },
        true,
    )
    .alias("citation_alignment")
}

fn two_series<'a>(metric: &str, cols: &'a [Column]) -> PolarsResult<(&'a Series, &'a Series)> {
    match cols {
        [a, b] => Ok((a.as_materialized_series(), b.as_materialized_series())),
        _ => polars_bail!(InvalidOperation: "{metric}: expected 2 inputs, got {}", cols.len()),
    }
}
