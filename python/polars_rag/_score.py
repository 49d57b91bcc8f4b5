"""The scoring job from Python: golden ⋈ run ⋈ corpus → every metric whose inputs are there →
a scores table with signatures, and the summary. It is the library's job, the one ``polars-rag
score`` runs (the same Rust code, called in this process through the plugin), so the numbers are
the command's by construction."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Union

import polars as pl

from polars_rag._common import _has_zero_width_array
from polars_rag._internal import score_job as _score_job
from polars_rag.exceptions import InvalidInputError

__all__ = [
    "ScoreResult",
    "score",
]

#: A table given to :func:`score`: a frame, a lazy frame (collected; with ``batch_rows`` and
#: ``out`` written to Parquet by streaming instead) or the path of a Parquet file (a corpus may
#: also be a folder of text files).
TableLike = Union[pl.DataFrame, pl.LazyFrame, str, "os.PathLike[str]"]


class ScoreResult(NamedTuple):
    """What :func:`score` produced. ``str(result)`` is the summary as ``polars-rag score`` prints
    it."""

    #: The scores table: the run's key and kept columns, one column (or struct) per metric. A lazy
    #: scan of ``out`` when the run was a lazy frame and ``out`` was given (nothing is collected).
    scores: pl.DataFrame | pl.LazyFrame
    #: The summary as a table: ``segment`` (null for the whole table), ``value`` (a metric's value
    #: label, or a corpus-level metric), ``rows``, ``scored`` (rows with a value) and ``mean``.
    summary: pl.DataFrame
    #: The summary's text, as ``polars-rag score`` prints it (per metric; per segment with ``by``).
    text: str
    #: The corpus-level metrics' values (``corpus_bleu``, ``citation_alignment``, ...), by metric id.
    aggregates: dict[str, float | None]
    #: Each metric's signature (the settings that produced its numbers), by metric id.
    signatures: dict[str, str]
    #: What the job noticed: unmatched and repeated ids, skipped metrics and why, span problems.
    notes: list[str]
    #: What the judges and embedding models spent: one dict per judge prompt or embedding model.
    usage: list[dict[str, Any]]
    #: The claims the job audited, one row per claim (answer id, claim, the span it was judged
    #: against and how it was found, the ``citation_support`` judgement); ``None`` when it audited
    #: none (it does with a judge, answers and sources, no ``claim`` / ``cited_span`` columns, and
    #: ``citation_support`` or ``citation_precision`` among the metrics, or no metric list).
    claims: pl.DataFrame | None
    #: Where the scores table was written (``None``: it was kept in memory).
    out: Path | None

    def __str__(self) -> str:
        return self.text


def _settings_of(name: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` without the ``None`` values (a setting left out takes its default), nested
    mappings likewise; keys must be strings."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if not isinstance(key, str):
            raise TypeError(f"score: {name}: settings are named by strings, got {key!r}")
        if isinstance(value, Mapping):
            out[key] = _settings_of(f"{name}.{key}", value)
        elif value is not None:
            out[key] = value
    return out


def _engine_settings(engine: Any, portable: bool) -> dict[str, Any]:
    """An engine's settings as its ``[judge]`` / ``[embed]`` section (a cache of ``None``, no
    cache, is the empty path the configuration reads as none). ``portable`` settings leave a
    default cache out, so that each machine the job runs on uses its own default."""
    settings = engine.settings()
    if portable and getattr(engine, "_default_cache", False):
        settings.pop("cache", None)
    elif settings.get("cache") is None:
        settings["cache"] = ""
    return _settings_of("engine", settings)


def _frame_or_path(table: TableLike | None, what: str, stream: bool, folder: Path) -> pl.DataFrame | str | None:
    """``table`` as :func:`score` hands it to the job: a frame in memory, or a path. A lazy frame
    is collected; with ``stream`` (a run scored in batches into a file) a frame or lazy frame is
    written to a Parquet file in ``folder`` instead (a lazy one by streaming), since the job's
    batches read slices of a file."""
    if table is None:
        return None
    if isinstance(table, (str, os.PathLike)):
        return os.fspath(table)
    if not isinstance(table, (pl.DataFrame, pl.LazyFrame)):
        raise TypeError(f"score: {what} must be a DataFrame, a LazyFrame or a Parquet path, got {type(table).__name__}")
    # Arrays of width 0 cannot cross to the library (their import fails): refused by name.
    for name, dtype in table.collect_schema().items():
        if _has_zero_width_array(dtype):
            raise InvalidInputError(f"score: {what} column '{name}' holds arrays of width 0 ({dtype}); give the vectors a width")
    if stream:
        path = folder / f"{what}.parquet"
        if isinstance(table, pl.LazyFrame):
            table.sink_parquet(path)
        else:
            table.write_parquet(path)
        return str(path)
    return table.collect() if isinstance(table, pl.LazyFrame) else table


def _job_settings(
    function: str,
    *,
    metrics: Sequence[str] | None = None,
    by: str | None = None,
    config: str | os.PathLike[str] | None = None,
    judge: Any = None,
    embedder: Any = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    batch_rows: int | None = None,
    out: str | os.PathLike[str] | None = None,
    grade_relevance: str | os.PathLike[str] | None = None,
    columns: Mapping[str, str] | None = None,
    k: int | None = None,
    relevance_level: float | None = None,
    invalid_spans: str | None = None,
    unit: str | None = None,
    chunks: str | os.PathLike[str] | None = None,
    portable: bool = False,
) -> dict[str, Any]:
    """The scoring job's settings as one dict of the config file's keys (what the library's
    ``ScoreConfig`` reads), from the keywords :func:`score` and ``polars_rag.ray.score`` share.
    A keyword left at ``None`` is left out, so the config file's value or the default applies.
    ``portable`` settings run on other machines: an engine's default cache is left to each."""
    if isinstance(metrics, str):
        raise TypeError(f"{function}: metrics must be a list of metric ids, not one string")
    if columns is not None and not isinstance(columns, Mapping):
        raise TypeError(f"{function}: columns must be a mapping of column roles to names, got {type(columns).__name__}")
    settings: dict[str, Any] = {}
    for title, section in (options or {}).items():
        if not isinstance(section, Mapping):
            raise TypeError(f"{function}: options[{title!r}] must be a mapping of settings, got {type(section).__name__}")
        if (title == "judge" and judge is not None) or (title == "embed" and embedder is not None):
            raise ValueError(f"{function}: give the {title} as {title}= or as options[{title!r}], not both")
        settings[title] = _settings_of(f"options[{title!r}]", section)
    if judge is not None:
        settings["judge"] = _engine_settings(judge, portable)
    if embedder is not None:
        settings["embed"] = _engine_settings(embedder, portable)
    if settings and config is not None:
        raise ValueError(
            f"{function}: give the judge, embedder and options in the config file or as judge= / embedder= / options=, not both"
        )
    if metrics:
        settings["metrics"] = list(metrics)
    if columns:
        settings["columns"] = _settings_of("columns", columns)
    keys = {
        "by": by, "batch_rows": batch_rows, "out": out, "grade_relevance": grade_relevance, "k": k,
        "relevance_level": relevance_level, "invalid_spans": invalid_spans, "unit": unit, "chunks": chunks,
    }
    for key, value in keys.items():
        if value is not None:
            settings[key] = os.fspath(value) if isinstance(value, os.PathLike) else value
    return settings


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
    options: Mapping[str, Mapping[str, Any]] | None = None,
    batch_rows: int | None = None,
    out: str | os.PathLike[str] | None = None,
    grade_relevance: str | os.PathLike[str] | None = None,
    columns: Mapping[str, str] | None = None,
    k: int | None = None,
    relevance_level: float | None = None,
    invalid_spans: str | None = None,
    unit: str | None = None,
    chunks: str | os.PathLike[str] | None = None,
) -> ScoreResult:
    """Scores a run as ``polars-rag score`` does: joined with its golden table (one row per
    golden question) and its corpus (spans checked, retrieved spans given their text), every
    metric whose inputs are there (or ``metrics``), a scores table with each metric's signature in
    its metadata, and the summary.

    ``run``, ``golden`` and ``corpus`` are frames, lazy frames or Parquet paths (a corpus may be a
    folder of text files). Frames go to the job in memory (Arrow, no file is written) and the
    scores come back in memory unless ``out`` is given; a lazy frame is collected. With
    ``batch_rows`` and ``out`` the frames are written to a temporary Parquet file instead (a lazy
    one by streaming) and the run is scored one batch at a time, so that neither a lazy run nor
    its scores is ever held whole.
    ``columns`` names the tables' columns where they differ from the defaults (``{"id":
    "qid", "question": "query"}``; the keys of the config file's ``[columns]``).
    ``config`` is a TOML file of the job's settings (as ``--config``); ``judge`` and ``embedder``
    (:class:`Judge`, :class:`Embedder`) are the engines of the judged and embedding metrics;
    ``options`` are metric options by section, as in the config file
    (``{"rouge": {"use_stemmer": True}}``); ``batch_rows`` scores a larger run one batch at a time
    (as ``--batch-rows``); ``grade_relevance`` is a qrels table the judge grades the run's
    retrieved passages into (``relevance_grade``, 0-3; pairs already in it are not asked again)
    and, without ground truth of the tables' own, the ranked metrics score against (as
    ``--grade-relevance``). ``out`` is where the scores table is written (default: kept in memory);
    a lazy ``run`` with an ``out`` gives ``scores`` as a lazy scan of it. ``k`` and
    ``relevance_level`` set the cutoff and the least relevant grade of every ranked metric (as
    ``--k`` and ``--relevance-level``); ``invalid_spans`` (``"error"`` or ``"null"``), ``unit``
    (``"codepoints"`` or ``"bytes"``) and ``chunks`` (the chunking of ``span_precision_omega``)
    are the config file's keys of the same names. Every keyword is a setting of the job, read and
    checked as the config file's are.

    Errors are the classes of :mod:`polars_rag.exceptions` (a missing table is a
    ``NotFoundError``, a column of the wrong type an ``InvalidInputError``, a spent judge budget a
    ``BudgetSpentError``).

    Example:
        >>> import polars_rag as pr
        >>> result = pr.score("datasets/demo/run_a.parquet", "datasets/demo/golden.parquet",
        ...                   metrics=["rouge", "mrr"])  # doctest: +SKIP
        >>> result.scores.columns[:2]  # doctest: +SKIP
        ['query_id', 'in_run']
        >>> print(result)  # doctest: +SKIP
    """
    settings = _job_settings(
        "score", metrics=metrics, by=by, config=config, judge=judge, embedder=embedder, options=options,
        batch_rows=batch_rows, out=out, grade_relevance=grade_relevance, columns=columns, k=k,
        relevance_level=relevance_level, invalid_spans=invalid_spans, unit=unit, chunks=chunks,
    )
    stream = batch_rows is not None and out is not None
    with tempfile.TemporaryDirectory(prefix="polars-rag-score-") if stream else _no_folder() as scratch:
        tables = [_frame_or_path(table, what, stream, Path(scratch or "."))
                  for table, what in ((run, "run"), (golden, "golden"), (corpus, "corpus"))]
        frames: list[pl.DataFrame | None] = []
        for table, what in zip(tables, ("run", "golden", "corpus")):
            if isinstance(table, str):
                settings[what] = table
                frames.append(None)
            else:
                frames.append(table)
        report = _score_job(frames[0], frames[1], frames[2], settings, None if config is None else os.fspath(config))
    written = Path(out) if out is not None else None
    scores = report["scores"]
    if scores is None and written is not None:
        # A lazy run with an output stays lazy: its scores are a scan of the written table.
        scores = pl.scan_parquet(written) if isinstance(run, pl.LazyFrame) else pl.read_parquet(written)
    claims = report["claims"]
    if claims is None and report["claims_file"] is not None:
        claims = pl.read_parquet(report["claims_file"])
    return ScoreResult(
        scores=scores,
        summary=report["summary"],
        text=report["text"],
        aggregates=dict(report["aggregates"]),
        signatures=dict(report["signatures"]),
        notes=list(report["notes"]),
        usage=list(report["usage"]),
        claims=claims,
        out=written,
    )


class _no_folder:
    """A stand-in for a scratch folder a call does not need (no file is written)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
