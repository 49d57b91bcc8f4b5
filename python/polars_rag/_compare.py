"""Run against baseline: comparison and summary of scores tables."""

from __future__ import annotations

from typing import NamedTuple

import polars as pl
from polars_rag._common import (
    FrameLike,
    _as_float,
    _as_int,
    _frame,
    _names_its_errors,
)


class Comparison(NamedTuple):
    """A candidate compared with a baseline (see :func:`compare`)."""

    #: One row per metric: ``metric``, ``kind`` (``mean`` / ``corpus``), ``n``, ``baseline``,
    #: ``candidate``, ``delta``, ``ci_low``, ``ci_high``, ``p_randomization``, ``p_t_test``,
    #: ``effect_size``, ``improved``, ``regressed``, ``unchanged``, ``significant``.
    metrics: pl.DataFrame
    #: The same per segment value (a ``segment`` column first); empty without ``by``.
    segments: pl.DataFrame
    #: The largest drops per metric: ``metric``, ``key``, ``baseline``, ``candidate``,
    #: ``delta``, ``baseline_answer``, ``candidate_answer``.
    regressions: pl.DataFrame


@_names_its_errors
def compare(
    baseline: FrameLike,
    candidate: FrameLike,
    *,
    id: str = "query_id",
    by: str | None = None,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 12345,
    top: int = 10,
) -> Comparison:
    """Compares two scores tables (as ``polars-rag score`` writes them), as ``polars-rag compare``.

    Items are matched on ``id`` (and ``sample`` / ``repeat`` when both tables have it). Per
    metric column: means, delta, a paired bootstrap interval (Poisson resampling, seeded), a
    paired approximate-randomization p-value, a paired t-test (equal to
    ``scipy.stats.ttest_rel``), Cohen's d_z, and counts of improved / regressed / unchanged
    items. ``citation_alignment`` and ``corpus_bleu`` are resampled at corpus level.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> a = pl.DataFrame({"query_id": [f"q{i}" for i in range(50)], "mrr": [0.5] * 50})
        >>> b = a.with_columns(pl.col("mrr") + 0.25)
        >>> row = pr.compare(a, b).metrics.row(0, named=True)
        >>> (row["delta"], row["improved"], row["significant"])
        (0.25, 50, True)
    """
    from polars_rag._internal import compare_tables as _compare

    metrics, segments, regressions = _compare(
        _frame(baseline),
        _frame(candidate),
        id,
        by,
        _as_int("compare", "resamples", resamples),
        _as_float("compare", "confidence", confidence),
        _as_int("compare", "seed", seed),
        _as_int("compare", "top", top),
    )
    return Comparison(metrics, segments, regressions)


@_names_its_errors
def summary(
    scores: FrameLike,
    *,
    by: str | None = None,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 12345,
) -> pl.DataFrame:
    """Per-metric means of a scores table with bootstrap intervals, overall (segment ``all``) and
    per value of ``by``: ``segment``, ``metric``, ``n``, ``mean``, ``ci_low``, ``ci_high``."""
    from polars_rag._internal import summarize_table as _summary

    return _summary(
        _frame(scores),
        by,
        _as_int("summary", "resamples", resamples),
        _as_float("summary", "confidence", confidence),
        _as_int("summary", "seed", seed),
    )
