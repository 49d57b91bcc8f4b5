"""The scoring job from Python: golden ⋈ run ⋈ corpus → every metric whose inputs are there →
a scores table with signatures, and the summary. It is the library's job, the one ``polars-rag
score`` runs (the same Rust code, called in this process through the plugin), so the numbers are
the command's by construction."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Union

import polars as pl

from polars_rag._common import _has_zero_width_array
from polars_rag._internal import score_captured as _score_captured
from polars_rag._internal import score_job as _score_job
from polars_rag.exceptions import InvalidInputError, from_kind

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


def _toml_value(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))  # an int subclass's repr may not be TOML
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"score: setting {name} must be finite, got {value}")
        return repr(float(value))  # NumPy 2's repr of its floats is np.float64(...)
    if isinstance(value, str):
        return _toml_string(name, value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(name, item) for item in value) + "]"
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


def _engine_section(title: str, settings: Mapping[str, Any]) -> str:
    """The ``[judge]`` / ``[embed]`` table of an engine's settings (a cache of ``None``, no cache,
    is the empty path the configuration reads as none)."""
    return _section_of((title,), {**settings, "cache": "" if settings.get("cache") is None else settings["cache"]})


def _section_of(path: tuple[str, ...], settings: Mapping[str, Any]) -> str:
    """A TOML table of a metric's options at ``path`` (``("rouge",)``; a nested mapping is a
    sub-table, ``("citation_support", "judge")``), ``None`` left out (the default applies). Every
    name is written as a quoted TOML key, so no name can add settings of its own."""
    where = ".".join(path)
    if not all(isinstance(key, str) for key in (*path, *settings)):
        raise TypeError(f"score: options[{where!r}]: sections and settings are named by strings")
    header = ".".join(_toml_string("options", part) for part in path)
    lines = [f"[{header}]"]
    tables = []
    for key, value in settings.items():
        if isinstance(value, Mapping):
            tables.append(_section_of((*path, key), value))
        elif value is not None:
            lines.append(f"{_toml_string(f'{where}.{key}', key)} = {_toml_value(f'{where}.{key}', value)}")
    return "\n".join(lines) + "\n" + "".join(tables)


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


def _engine_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """An engine's settings as its ``[judge]`` / ``[embed]`` section (a cache of ``None``, no
    cache, is the empty path the configuration reads as none)."""
    return _settings_of("engine", {**settings, "cache": "" if settings.get("cache") is None else settings["cache"]})


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
    args: Sequence[str] = (),
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
    a lazy ``run`` with an ``out`` gives ``scores`` as a lazy scan of it. ``args`` are flags of
    ``polars-rag score`` that have no keyword here (``--k 5``, ``--block``): given any, the job runs
    as the command line does, through temporary Parquet files.

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
    if isinstance(metrics, str):
        raise TypeError("score: metrics must be a list of metric ids, not one string")
    if isinstance(args, str):
        raise TypeError("score: args must be a list of flags, not one string")
    if columns is not None and not isinstance(columns, Mapping):
        raise TypeError(f"score: columns must be a mapping of column roles to names, got {type(columns).__name__}")
    if args:
        if columns:
            raise ValueError("score: give the columns as columns= or as flags in args=, not both")
        return _score_by_command(run, golden, corpus, metrics=metrics, by=by, config=config, judge=judge,
                                 embedder=embedder, options=options, batch_rows=batch_rows, out=out,
                                 grade_relevance=grade_relevance, args=args)
    settings: dict[str, Any] = {}
    for title, section in (options or {}).items():
        if not isinstance(section, Mapping):
            raise TypeError(f"score: options[{title!r}] must be a mapping of settings, got {type(section).__name__}")
        if (title == "judge" and judge is not None) or (title == "embed" and embedder is not None):
            raise ValueError(f"score: give the {title} as {title}= or as options[{title!r}], not both")
        settings[title] = _settings_of(f"options[{title!r}]", section)
    if judge is not None:
        settings["judge"] = _engine_settings(judge.settings())
    if embedder is not None:
        settings["embed"] = _engine_settings(embedder.settings())
    if settings and config is not None:
        raise ValueError("score: give the judge, embedder and options in the config file or as judge= / embedder= / options=, not both")
    if metrics:
        settings["metrics"] = list(metrics)
    if columns:
        settings["columns"] = _settings_of("columns", columns)
    for key, value in (("by", by), ("batch_rows", batch_rows), ("out", out), ("grade_relevance", grade_relevance)):
        if value is not None:
            settings[key] = value
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


def _score_by_command(
    run: TableLike,
    golden: TableLike | None,
    corpus: TableLike | None,
    *,
    metrics: Sequence[str] | None,
    by: str | None,
    config: str | os.PathLike[str] | None,
    judge: Any,
    embedder: Any,
    options: Mapping[str, Mapping[str, Any]] | None,
    batch_rows: int | None,
    out: str | os.PathLike[str] | None,
    grade_relevance: str | os.PathLike[str] | None,
    args: Sequence[str],
) -> ScoreResult:
    """:func:`score` with flags of the command line: the job run as ``polars-rag score`` is, on
    Parquet files (frames are written to a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="polars-rag-score-") as scratch:
        folder = Path(scratch)
        argv = ["score", "--quiet"]
        for flag, table, what in (("--run", run, "run"), ("--golden", golden, "golden"), ("--corpus", corpus, "corpus")):
            path = _table_path(table, what, folder)
            if path is not None:
                argv += [flag, path]
        sections = []
        for title, settings in (options or {}).items():
            if not isinstance(settings, Mapping):
                raise TypeError(f"score: options[{title!r}] must be a mapping of settings, got {type(settings).__name__}")
            if (title == "judge" and judge is not None) or (title == "embed" and embedder is not None):
                raise ValueError(f"score: give the {title} as {title}= or as options[{title!r}], not both")
            sections.append(_section_of((title,), settings))
        if judge is not None:
            sections.append(_engine_section("judge", judge.settings()))
        if embedder is not None:
            sections.append(_engine_section("embed", embedder.settings()))
        if sections:
            if config is not None:
                raise ValueError("score: give the judge, embedder and options in the config file or as judge= / embedder= / options=, not both")
            config = folder / "engines.toml"
            Path(config).write_text("".join(sections), encoding="utf-8")
        if config is not None:
            argv += ["--config", os.fspath(config)]
        if metrics:
            argv += ["--metrics", ",".join(metrics)]
        if by is not None:
            argv += ["--by", by]
        if batch_rows is not None:
            argv += ["--batch-rows", str(int(batch_rows))]
        if grade_relevance is not None:
            argv += ["--grade-relevance", os.fspath(grade_relevance)]
        written = Path(out) if out is not None else folder / "scores.parquet"
        argv += ["--out", str(written), *args]
        status, text, errors, kind, data = _score_captured(["polars-rag", *argv])
        if status != 0:
            raise from_kind(kind or "invalid_input", f"score: {errors.strip().removeprefix('error: ')}")
        # A lazy run with an output stays lazy: its scores are a scan of the written table.
        scores = pl.scan_parquet(written) if isinstance(run, pl.LazyFrame) and out is not None else pl.read_parquet(written)
        report = json.loads(data) if data else {}
        claims = pl.read_parquet(report["claims_file"]) if report.get("claims_file") else None
    summary = pl.DataFrame(
        report.get("summary_rows", []),
        schema={"segment": pl.String, "value": pl.String, "rows": pl.UInt64, "scored": pl.UInt64, "mean": pl.Float64},
    )
    return ScoreResult(
        scores=scores,
        summary=summary,
        text=text,
        aggregates={a["metric"]: a["value"] for a in report.get("aggregates", [])},
        signatures=dict(report.get("signatures", [])),
        notes=list(report.get("notes", [])),
        usage=list(report.get("usage", [])),
        claims=claims,
        out=written if out is not None else None,
    )
