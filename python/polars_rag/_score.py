"""The scoring job from Python: golden ⋈ run ⋈ corpus → every metric whose inputs are there →
a scores table with signatures, and the summary. It is the library's job, the one ``polars-rag
score`` runs (the same Rust code, called in this process through the plugin), so the numbers are
the command's by construction."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Union

import polars as pl
from polars_rag._internal import main_captured as _main_captured

#: A table given to :func:`score`: a frame, a lazy frame (written to Parquet by streaming, never
#: collected) or the path of a Parquet file (a corpus may also be a folder of text files).
TableLike = Union[pl.DataFrame, pl.LazyFrame, str, "os.PathLike[str]"]

#: The signature keys of a scores table's Parquet metadata.
_SIGNATURE_PREFIX = "polars-rag:signature:"


class ScoreResult(NamedTuple):
    """What :func:`score` produced."""

    #: The scores table: the run's key and kept columns, one column (or struct) per metric.
    scores: pl.DataFrame
    #: The summary, as ``polars-rag score`` prints it (per metric; per segment with ``by``).
    summary: str
    #: Each metric's signature (the settings that produced its numbers), by metric id.
    signatures: dict[str, str]
    #: Where the scores table was written (``None``: a temporary file, removed once read).
    out: Path | None

    def __str__(self) -> str:
        return self.summary


def _toml_value(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"score: setting {name} must be finite, got {value}")
        return repr(value)
    if isinstance(value, str):
        return _toml_string(name, value)
    raise TypeError(f"score: setting {name} cannot be written to the job's configuration: {value!r}")


def _toml_string(name: str, value: str) -> str:
    """``value`` as a TOML basic string: quotes, backslashes and every control character escaped
    (TOML allows none of them raw); a lone surrogate (a path decoded with ``surrogateescape``)
    cannot be written and is refused, naming the setting."""
    out = []
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        elif "\ud800" <= ch <= "\udfff":
            raise ValueError(f"score: setting {name} holds a lone surrogate ({ch!r}) and cannot be passed on")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _section(title: str, settings: Mapping[str, Any]) -> str:
    """A TOML table of scalar settings (``None`` left out: the job's default applies; a cache of
    ``None``, no cache, is the empty path the configuration reads as none)."""
    settings = {**settings, "cache": "" if settings.get("cache") is None else settings["cache"]}
    lines = [f"[{title}]"]
    lines += [f"{key} = {_toml_value(f'{title}.{key}', value)}" for key, value in settings.items() if value is not None]
    return "\n".join(lines) + "\n"


def _table_path(table: TableLike | None, what: str, folder: Path) -> str | None:
    """A Parquet path for ``table``: its own path, or a file in ``folder`` it is written to."""
    if table is None:
        return None
    if isinstance(table, (str, os.PathLike)):
        return os.fspath(table)
    path = folder / f"{what}.parquet"
    if isinstance(table, pl.LazyFrame):
        table.sink_parquet(path)
    elif isinstance(table, pl.DataFrame):
        table.write_parquet(path)
    else:
        raise TypeError(f"score: {what} must be a DataFrame, a LazyFrame or a Parquet path, got {type(table).__name__}")
    return str(path)


def score(
    run: TableLike,
    golden: TableLike | None = None,
    corpus: TableLike | None = None,
    *,
    metrics: Sequence[str] | None = None,
    by: str | None = None,
    config: str | os.PathLike[str] | None = None,
    judge: Any = None,
    embedder: Any = None,
    out: str | os.PathLike[str] | None = None,
    args: Sequence[str] = (),
) -> ScoreResult:
    """Scores a run as ``polars-rag score`` does: joined with its golden table (one row per
    golden question) and its corpus (spans checked, retrieved spans given their text), every
    metric whose inputs are there (or ``metrics``), a scores table with each metric's signature in
    its metadata, and the summary.

    ``run``, ``golden`` and ``corpus`` are frames, lazy frames or Parquet paths (a corpus may be a
    folder of text files); a lazy frame is written to Parquet by streaming, not collected.
    ``config`` is a TOML file of the job's settings (as ``--config``); ``judge`` and ``embedder``
    (:class:`Judge`, :class:`Embedder`) are the engines of the judged and embedding metrics;
    ``args`` are further flags of ``polars-rag score`` (column names, metric options). ``out`` is
    where the scores table goes (default: a temporary file, read back into ``scores``).

    Example:
        >>> import polars_rag as pr
        >>> result = pr.score("datasets/demo/run_a.parquet", "datasets/demo/golden.parquet",
        ...                   metrics=["rouge", "mrr"])  # doctest: +SKIP
        >>> result.scores.columns[:2]  # doctest: +SKIP
        ['query_id', 'in_run']
        >>> print(result)  # doctest: +SKIP
    """
    if isinstance(metrics, str):
        raise TypeError("score: metrics must be a list of metric ids, not one string")
    if isinstance(args, str):
        raise TypeError("score: args must be a list of flags, not one string")
    with tempfile.TemporaryDirectory(prefix="polars-rag-score-") as scratch:
        folder = Path(scratch)
        argv = ["score", "--quiet"]
        for flag, table, what in (("--run", run, "run"), ("--golden", golden, "golden"), ("--corpus", corpus, "corpus")):
            path = _table_path(table, what, folder)
            if path is not None:
                argv += [flag, path]
        sections = []
        if judge is not None:
            sections.append(_section("judge", judge.settings()))
        if embedder is not None:
            sections.append(_section("embed", embedder.settings()))
        if sections:
            if config is not None:
                raise ValueError("score: give the judge and embedder in the config file or as judge= / embedder=, not both")
            config = folder / "engines.toml"
            Path(config).write_text("".join(sections), encoding="utf-8")
        if config is not None:
            argv += ["--config", os.fspath(config)]
        if metrics:
            argv += ["--metrics", ",".join(metrics)]
        if by is not None:
            argv += ["--by", by]
        written = Path(out) if out is not None else folder / "scores.parquet"
        argv += ["--out", str(written), *args]
        status, summary, errors = _main_captured(["polars-rag", *argv])
        if status != 0:
            raise ValueError(f"score: {errors.strip().removeprefix('error: ')}")
        scores = pl.read_parquet(written)
        metadata = pl.read_parquet_metadata(written)
    signatures = {k[len(_SIGNATURE_PREFIX):]: v for k, v in metadata.items() if k.startswith(_SIGNATURE_PREFIX)}
    return ScoreResult(scores=scores, summary=summary, signatures=signatures, out=written if out is not None else None)
