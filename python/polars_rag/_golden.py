"""Golden datasets: validation, span checks, long-run collapse and the golden ⋈ run join."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import polars as pl

from polars_rag._common import (
    FrameLike,
    _corpus_frame,
    _frame,
    _names_its_errors,
)
from polars_rag._internal import collapse_run as _collapse_run
from polars_rag._internal import join_golden as _join_golden
from polars_rag._internal import validate_golden as _validate

__all__ = [
    "GoldenJoin",
    "check_spans",
    "collapse_run",
    "join_golden",
    "validate_golden",
]


@_names_its_errors
def validate_golden(
    golden: FrameLike,
    corpus: FrameLike | dict[str, str] | None = None,
    *,
    id: str = "query_id",
    unit: Literal["codepoints", "bytes"] = "codepoints",
) -> pl.DataFrame:
    """Checks a golden dataset, as ``polars-rag validate`` does: one row per problem.

    Columns ``check`` (``duplicate_id``, ``null_id``, ``empty_ground_truth``,
    ``span_outside_document``, ``span_text_mismatch``), ``query_id``, ``column``, ``detail``.
    Spans (``relevant_spans``) are checked only when a corpus is given: a ``file``, ``text``
    frame or a ``{file: text}`` dict. An empty frame means no problem was found.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> golden = pl.DataFrame({"query_id": ["q1", "q1"], "relevant_spans": [
        ...     [{"file": "a.md", "start": 0, "end": 5}], [{"file": "a.md", "start": 3, "end": 99}]]})
        >>> pr.validate_golden(golden, {"a.md": "Paris is nice."})["check"].to_list()
        ['duplicate_id', 'span_outside_document']
    """

    corpus_df = None if corpus is None else _corpus_frame(corpus)
    return _validate(_frame(golden), corpus_df, id, unit)


@_names_its_errors
def check_spans(
    frame: FrameLike,
    column: str,
    corpus: FrameLike | dict[str, str],
    *,
    id: str = "query_id",
    unit: Literal["codepoints", "bytes"] = "codepoints",
    fill_text: bool = False,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Checks the spans of ``column`` (``list[struct{file, start, end, ...}]``) against a corpus.

    Returns the frame with the column's offsets in code points (converted from UTF-8 bytes when
    ``unit="bytes"``) and, with ``fill_text=True``, a ``text`` field holding each span's text;
    and a problems frame as :func:`validate_golden` gives (unknown file, offsets outside the
    document or inside a character, stored text that differs from the corpus).
    """
    from polars_rag._internal import check_spans as _check

    return _check(_frame(frame), column, _corpus_frame(corpus), id, unit, fill_text)


@_names_its_errors
def collapse_run(run: FrameLike, *, id: str = "query_id") -> pl.DataFrame:
    """A long run (one row per retrieved item: ``doc_id`` and any of ``rank``, ``score``,
    ``text``, ``file``, ``start``, ``end``) as one row per query with a ``retrieved`` list in
    rank order (a stable sort by ``rank`` within each query when present, else row order; a null
    rank first); queries keep the order of their first row, and other columns the value of the
    query's first item. The same code as the CLI's ``score`` runs it.
    """
    return _collapse_run(_frame(run), id)


class GoldenJoin(NamedTuple):
    """The golden table joined with a run, and what the join found."""

    #: One row per golden question, ``in_run`` false where the run has no row for it.
    frame: pl.DataFrame
    #: Golden questions with no run row.
    missing: list[Any]
    #: Run ids that are not in the golden table (their rows are not in ``frame``); a null id is
    #: listed as ``None``, once per run row.
    unknown: list[Any]
    #: Ids that occur more than once in the golden table.
    duplicate_golden: list[Any]
    #: Ids that occur more than once in the run (each row is kept).
    duplicate_run: list[Any]


@_names_its_errors
def join_golden(golden: FrameLike, run: FrameLike, *, id: str = "query_id") -> GoldenJoin:
    """Joins a run to its golden table as the CLI does, reporting instead of dropping silently.

    A long run (``doc_id`` per row, no ``retrieved`` column) is collapsed first
    (:func:`collapse_run`). Columns the run shares with the golden table get a ``_run`` suffix.
    Ids must have the same dtype on both sides (integers of different widths join as ``Int64``).
    The same code as the CLI's ``score`` runs it.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> golden = pl.DataFrame({"query_id": ["q1", "q2"], "relevant_ids": [["a"], ["b"]]})
        >>> run = pl.DataFrame({"query_id": ["q1", "q1", "zz"], "doc_id": ["a", "c", "b"], "rank": [1, 2, 1]})
        >>> joined = pr.join_golden(golden, run)
        >>> joined.missing, joined.unknown
        (['q2'], ['zz'])
        >>> joined.frame.select(pr.mrr("retrieved", "relevant_ids"))["mrr"].to_list()
        [1.0, None]
    """
    frame, missing, unknown, duplicate_golden, duplicate_run = _join_golden(_frame(golden), _frame(run), id)
    return GoldenJoin(
        frame=frame,
        missing=missing.to_list(),
        unknown=unknown.to_list(),
        duplicate_golden=duplicate_golden.to_list(),
        duplicate_run=duplicate_run.to_list(),
    )
