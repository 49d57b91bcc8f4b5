"""Run against baseline: comparison and summary of scores tables."""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Literal, NamedTuple

import polars as pl

from polars_rag._common import (
    FrameLike,
    _as_float,
    _as_int,
    _frame,
    _names_its_errors,
)
from polars_rag._internal import compare_defaults as _compare_defaults

#: The alternative hypothesis of :func:`compare`'s tests, as scipy names it.
Alternative = Literal["two-sided", "greater", "less"]


def _alternative(value: Any) -> str:
    if value not in ("two-sided", "greater", "less"):
        raise ValueError(f"compare: alternative must be 'two-sided', 'greater' or 'less', got {value!r}")
    return str(value)


class Comparison(NamedTuple):
    """A candidate compared with a baseline (see :func:`compare`)."""

    #: One row per metric: ``metric``, ``kind`` (``mean`` / ``corpus``), ``n``, ``baseline``,
    #: ``candidate``, ``delta``, ``ci_low``, ``ci_high``, ``p_randomization``, ``p_t_test``,
    #: ``t_ci_low``, ``t_ci_high``, ``effect_size``, ``baseline_judge_spread`` and
    #: ``candidate_judge_spread`` (a judged metric scored with ``samples`` > 1 in both runs: the
    #: mean per-item spread of the judge's samples, its own noise beside the delta; else null),
    #: ``improved``, ``regressed``, ``unchanged``, ``significant``.
    metrics: pl.DataFrame
    #: The same per segment value (a ``segment`` column first); empty without ``by``.
    segments: pl.DataFrame
    #: The largest drops per metric: ``metric``, ``key``, ``baseline``, ``candidate``,
    #: ``delta``, ``baseline_answer``, ``candidate_answer``.
    regressions: pl.DataFrame


@cache
def _defaults() -> dict[str, Any]:
    return dict(json.loads(_compare_defaults()))


def compare_defaults() -> dict[str, Any]:
    """The library's default comparison settings: what a setting left at ``None`` means.

    Example:
        >>> import polars_rag as pr
        >>> {k: pr.compare_defaults()[k] for k in ("resamples", "confidence", "seed", "top")}
        {'resamples': 1000, 'confidence': 0.95, 'seed': 12345, 'top': 10}
    """
    return dict(_defaults())


def _setting(name: str, value: Any) -> Any:
    """``value``, or the library's default for a setting left at ``None``."""
    return _defaults()[name] if value is None else value


@_names_its_errors
def compare(
    baseline: FrameLike,
    candidate: FrameLike,
    *,
    id: str = "query_id",
    by: str | None = None,
    resamples: int | None = None,
    confidence: float | None = None,
    seed: int | None = None,
    top: int | None = None,
    alternative: Alternative | None = None,
) -> Comparison:
    """Compares two scores tables (as ``polars-rag score`` writes them), as ``polars-rag compare``.

    Items are matched on ``id`` (and ``sample`` / ``repeat`` when both tables have it). Per
    metric column: means, delta, a paired bootstrap interval (Poisson resampling, seeded), a
    paired approximate-randomization p-value, a paired t-test (equal to
    ``scipy.stats.ttest_rel``), Cohen's d_z, and counts of improved / regressed / unchanged
    items. ``citation_alignment`` and ``corpus_bleu`` are resampled at corpus level. Settings left
    at ``None`` take the library's defaults (:func:`compare_defaults`).

    ``alternative`` is scipy's: ``"two-sided"`` (default), ``"greater"`` (the candidate scores
    higher) or ``"less"``; it applies to both p-values (the one-sided randomization test counts
    sign flips on one side) and to the t interval ``t_ci_low`` / ``t_ci_high`` (scipy's
    ``ttest_rel(...).confidence_interval``, one end infinite when one-sided). The bootstrap
    interval ``ci_low`` / ``ci_high`` stays two-sided.

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
        _as_int("compare", "resamples", _setting("resamples", resamples)),
        _as_float("compare", "confidence", _setting("confidence", confidence)),
        _as_int("compare", "seed", _setting("seed", seed)),
        _as_int("compare", "top", _setting("top", top)),
        _alternative(_setting("alternative", alternative)),
    )
    return Comparison(metrics, segments, regressions)


@_names_its_errors
def summary(
    scores: FrameLike,
    *,
    by: str | None = None,
    resamples: int | None = None,
    confidence: float | None = None,
    seed: int | None = None,
) -> pl.DataFrame:
    """Per-metric means of a scores table with bootstrap intervals, overall (segment ``all``) and
    per value of ``by``: ``segment``, ``metric``, ``n``, ``mean``, ``ci_low``, ``ci_high``.
    Settings left at ``None`` take the library's defaults (:func:`compare_defaults`)."""
    from polars_rag._internal import summarize_table as _summary

    return _summary(
        _frame(scores),
        by,
        _as_int("summary", "resamples", _setting("resamples", resamples)),
        _as_float("summary", "confidence", _setting("confidence", confidence)),
        _as_int("summary", "seed", _setting("seed", seed)),
    )
