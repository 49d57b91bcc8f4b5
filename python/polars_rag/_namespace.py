"""The ``.rag`` expression namespace: one method per metric id, forwarding to the typed functions."""

from __future__ import annotations

from typing import Any, Callable

import polars as pl


def _namespace_method(function: Callable[..., pl.Expr]) -> Callable[..., pl.Expr]:
    """A ``.rag`` method forwarding to ``function`` with the expression as its first argument,
    with the function's signature (less that argument) for ``help()`` and editors."""
    import inspect

    def method(self: RagNamespace, *args: Any, **kwargs: Any) -> pl.Expr:
        return function(self._expr, *args, **kwargs)

    signature = inspect.signature(function)
    rest = list(signature.parameters.values())[1:]
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(parameters=[this, *rest])  # type: ignore[attr-defined]
    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = f"See :func:`polars_rag.{function.__name__}`."
    return method


@pl.api.register_expr_namespace("rag")
class RagNamespace:
    """``pl.col("answer").rag.<metric>(...)``: forwards to the typed functions, one method per
    metric id of the library's table (the first argument is the expression)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def __getattr__(self, name: str) -> Any:
        # Only for type checkers: the methods are set on the class below.
        raise AttributeError(f"'.rag' has no metric '{name}'; polars_rag.metric_ids() lists them")
