"""Embeddings: text columns to ``array[f32, d]`` vectors through the library's embedding engine
(a local sentence-transformers model run in Rust, or an OpenAI-compatible ``/embeddings``
server), with a persistent vector cache; and :func:`semantic_similarity`, Ragas' answer
similarity on those vectors."""

from __future__ import annotations

import json
import os
from typing import Any

import polars as pl
from polars.plugins import register_plugin_function

from polars_rag._common import _PLUGIN_PATH, IntoExprColumn, _names_its_errors, _plugin
from polars_rag._internal import embed_cache as _embed_cache
from polars_rag._settings import Embedder

__all__ = [
    "embed",
    "embed_cache_clear",
    "embed_cache_stats",
    "semantic_similarity",
]


def _embedder(function: str, embedder: Embedder | None) -> Embedder:
    if embedder is None:
        return Embedder()
    if not isinstance(embedder, Embedder):
        raise TypeError(f"{function}: embedder must be a polars_rag.Embedder, got {embedder!r}")
    return embedder


def embed(text: IntoExprColumn, *, embedder: Embedder | None = None) -> pl.Expr:
    """Embeds a ``str`` column: one ``array[f32, d]`` vector per row (384 wide for
    all-MiniLM-L6-v2), the column keeping its name. A null text gives null; an empty text the
    model's embedding of empty input, as sentence-transformers gives it; a text past the model's
    token limit is truncated as sentence-transformers truncates it (``Embedder.usage()`` counts
    them). Repeated texts are embedded once and every vector is cached, so embedding a corpus
    again costs nothing. Elementwise: works in eager, lazy and streaming queries.

    ``embedder=None`` uses the local model of :func:`default_model_dir`.
    """
    settings = _embedder("embed", embedder).settings()
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name="embed",
        args=[text],
        kwargs=settings,
        is_elementwise=True,
    )


def semantic_similarity(
    answer: IntoExprColumn,
    reference: IntoExprColumn,
    *,
    embedder: Embedder | None = None,
    threshold: float | None = None,
) -> pl.Expr:
    """Ragas' ``SemanticSimilarity``: the cosine of the answer's and the reference's
    embeddings (each normalised first, in float64; an empty text embedded as ``" "``), with
    ``reference`` a ``str`` or a ``list[str]`` column (several references: the closest counts).
    With ``threshold`` in (0, 1] the score is 1.0 when the cosine reaches it, else 0.0. Null
    when the answer or its references are null or it has none.

    ``embedder=None`` uses the local model of :func:`default_model_dir`.
    """
    settings = _embedder("semantic_similarity", embedder).settings()
    return _plugin(
        "semantic_similarity",
        [answer, reference],
        {"embedder": settings, "threshold": threshold},
    )


@_names_its_errors
def embed_cache_stats(cache: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """What the embedding cache in directory ``cache`` (default: the library's) holds: its
    file, entries, bytes and entries per model signature."""
    stats: dict[str, Any] = json.loads(_embed_cache("stats", None if cache is None else os.fspath(cache)))
    return stats


@_names_its_errors
def embed_cache_clear(cache: str | os.PathLike[str] | None = None) -> int:
    """Removes every cached vector of directory ``cache`` (default: the library's). Returns how
    many."""
    return int(_embed_cache("clear", None if cache is None else os.fspath(cache)))
