//! Python Polars plugin: `#[polars_expr]` shims over `polars_rag::polars::columns`. No metric
//! logic lives here: each shim decodes its keyword arguments into the library's `Options` struct
//! and calls the columnar function the Rust API and the CLI also call.

use polars::prelude::*;
use polars_rag::metrics::citation::QuotedSpansOptions;
use polars_rag::polars::columns;
use pyo3::prelude::*;
use pyo3_polars::derive::{polars_expr, CallerContext, DefaultKwargs};
use serde::de::DeserializeOwned;

/// Decodes pickled keyword arguments into `T`, with an error naming the metric.
fn options<T: DeserializeOwned>(metric: &str, kwargs: DefaultKwargs) -> PolarsResult<T> {
    serde_pickle::from_value(kwargs)
        .map_err(|e| polars_err!(InvalidOperation: "{metric}: invalid options: {e}"))
}

/// The inputs a shim expects, checked so a wrong call is an error, never an index panic.
fn arity<'a>(metric: &str, inputs: &'a [Series], n: usize) -> PolarsResult<&'a [Series]> {
    polars_ensure!(
        inputs.len() == n,
        InvalidOperation: "{metric}: expected {n} input columns, got {}", inputs.len()
    );
    Ok(inputs)
}

fn quoted_spans_field(_: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new(
        "quoted_spans".into(),
        columns::quoted_spans_dtype(),
    ))
}

fn citation_alignment_field(_: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new(
        "citation_alignment".into(),
        columns::citation_alignment_dtype(),
    ))
}

#[polars_expr(output_type_func=quoted_spans_field)]
fn quoted_spans(
    inputs: &[Series],
    context: CallerContext,
    kwargs: DefaultKwargs,
) -> PolarsResult<Series> {
    let opts: QuotedSpansOptions = options("quoted_spans", kwargs)?;
    let inputs = arity("quoted_spans", inputs, 2)?;
    // When Polars already runs this call in parallel (streaming morsels, group_by), stay on
    // this thread instead of nesting a second level of parallelism.
    columns::quoted_spans(&inputs[0], &inputs[1], &opts, !context.parallel())
}

#[polars_expr(output_type_func=citation_alignment_field)]
fn citation_alignment(
    inputs: &[Series],
    context: CallerContext,
    kwargs: DefaultKwargs,
) -> PolarsResult<Series> {
    let opts: QuotedSpansOptions = options("citation_alignment", kwargs)?;
    let inputs = arity("citation_alignment", inputs, 2)?;
    columns::citation_alignment_series(&inputs[0], &inputs[1], &opts, !context.parallel())
}

/// The metric ids this build exposes, from the library's registry.
#[pyfunction]
fn metric_ids() -> Vec<&'static str> {
    polars_rag::registry::ids().collect()
}

#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(metric_ids, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
