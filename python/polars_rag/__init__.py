"""polars-rag: RAG-evaluation metrics as Polars expressions.

Typed functions are the primary API; each returns a :class:`polars.Expr` that works in eager,
lazy and streaming queries::

    import polars as pl
    import polars_rag as pr

    df.with_columns(pr.quoted_spans("answer", "sources"))
    df.select(pr.citation_alignment("answer", "sources"))
    df.group_by("segment").agg(pr.citation_alignment("answer", "sources"))

Importing the package also registers the ``.rag`` expression namespace, a thin forwarder:
``pl.col("answer").rag.quoted_spans(pl.col("sources"))``.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Literal, Union

import polars as pl
from polars.plugins import register_plugin_function

from polars_rag._internal import __version__
from polars_rag._internal import metric_ids as _metric_ids

__all__ = [
    "__version__",
    "citation_alignment",
    "metric_ids",
    "quoted_spans",
    "QuoteStyle",
    "IntoExprColumn",
]

#: A column name or an expression.
IntoExprColumn = Union[pl.Expr, str]
#: Which quotation marks delimit spans: ``"standard"`` (paired typographic quotes, default) or
#: ``"ragas"`` (Ragas 0.4.3's four marks, reproduced bit for bit).
QuoteStyle = Literal["standard", "ragas"]

_PLUGIN_PATH = Path(__file__).parent


def metric_ids() -> List[str]:
    """The metric ids of this build, from the library's registry."""
    return list(_metric_ids())


def quoted_spans(
    answer: IntoExprColumn,
    sources: IntoExprColumn,
    *,
    casefold: bool = True,
    min_len: int = 3,
    quotes: QuoteStyle = "standard",
) -> pl.Expr:
    """Quoted spans of each answer found verbatim in its sources.

    Returns a struct column ``quoted_spans`` with fields ``matched: u32``, ``total: u32`` and
    ``score: f64`` (``matched / total``, null when the answer quotes nothing). A null answer gives
    a null row; null or empty sources count the spans and match none.

    Args:
        answer: string column of answers.
        sources: ``list[str]`` column of passages per answer, a ``str`` column (one passage), or a
            list of structs with a ``text`` field (a ``retrieved`` column).
        casefold: collapse whitespace and lowercase both sides before matching.
        min_len: minimum number of words for a quoted span to count.
        quotes: ``"standard"`` or ``"ragas"`` (see :data:`QuoteStyle`).

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"answer": ["It is “the capital of France”."],
        ...                    "sources": [["Paris is the capital of France."]]})
        >>> df.select(pr.quoted_spans("answer", "sources")).unnest("quoted_spans").row(0)
        (1, 1, 1.0)
    """
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name="quoted_spans",
        args=[answer, sources],
        kwargs={"casefold": casefold, "min_len": min_len, "quotes": quotes},
        is_elementwise=True,
    ).alias("quoted_spans")


def citation_alignment(
    answer: IntoExprColumn,
    sources: IntoExprColumn,
    *,
    casefold: bool = True,
    min_len: int = 3,
    quotes: QuoteStyle = "standard",
) -> pl.Expr:
    """Dataset-level quoted-span citation alignment, as Ragas' ``quoted_spans_alignment``.

    An aggregation: one row per column (``select``) or per group (``group_by().agg()``), a struct
    ``citation_alignment`` with float fields ``citation_alignment_quoted_spans`` (Σ matched /
    Σ total, 0.0 when nothing is quoted), ``matched`` and ``total``. Options as in
    :func:`quoted_spans`; ``quotes="ragas"`` reproduces Ragas 0.4.3 exactly.
    """
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name="citation_alignment",
        args=[answer, sources],
        kwargs={"casefold": casefold, "min_len": min_len, "quotes": quotes},
        is_elementwise=False,
        returns_scalar=True,
    ).alias("citation_alignment")


@pl.api.register_expr_namespace("rag")
class RagNamespace:
    """``pl.col("answer").rag.<metric>(...)``: forwards to the typed functions."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def quoted_spans(
        self,
        sources: IntoExprColumn,
        *,
        casefold: bool = True,
        min_len: int = 3,
        quotes: QuoteStyle = "standard",
    ) -> pl.Expr:
        """See :func:`polars_rag.quoted_spans`."""
        return quoted_spans(self._expr, sources, casefold=casefold, min_len=min_len, quotes=quotes)

    def citation_alignment(
        self,
        sources: IntoExprColumn,
        *,
        casefold: bool = True,
        min_len: int = 3,
        quotes: QuoteStyle = "standard",
    ) -> pl.Expr:
        """See :func:`polars_rag.citation_alignment`."""
        return citation_alignment(
            self._expr, sources, casefold=casefold, min_len=min_len, quotes=quotes
        )
