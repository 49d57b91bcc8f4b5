"""Run against baseline: comparison and summary of scores tables."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal, NamedTuple

import polars as pl

from polars_rag._common import (
    FrameLike,
    _as_float,
    _as_int,
    _frame,
    _names_its_errors,
    _settings,
)
from polars_rag._internal import compare_defaults as _compare_defaults
from polars_rag.exceptions import InvalidInputError

__all__ = [
    "Adjust",
    "Alternative",
    "Calibration",
    "Comparison",
    "Leaderboard",
    "adjust_p_values",
    "calibrate",
    "compare",
    "compare_defaults",
    "judge_drift",
    "labelled_deltas",
    "leaderboard",
    "plan",
    "sample_for_labelling",
    "summary",
]

#: The alternative hypothesis of :func:`compare`'s tests, as scipy names it.
Alternative = Literal["two-sided", "greater", "less"]

#: How :func:`compare` decides its family of tests: Holm's adjustment (the chance of any false
#: alarm is at most the level), Benjamini-Hochberg (the expected share of false alarms among the
#: flagged is at most the level), or none (each test on its own).
Adjust = Literal["none", "holm", "bh"]


def _alternative(value: Any) -> str:
    if value not in ("two-sided", "greater", "less"):
        raise InvalidInputError(f"compare: alternative must be 'two-sided', 'greater' or 'less', got {value!r}")
    return str(value)


class Comparison(NamedTuple):
    """A candidate compared with a baseline (see :func:`compare`)."""

    #: One row per metric: ``metric``, ``kind`` (``mean`` / ``corpus``), ``n``, ``baseline``,
    #: ``candidate``, ``delta``, ``ci_low``, ``ci_high``, ``p_randomization``, ``p_t_test``,
    #: ``t_ci_low``, ``t_ci_high``, ``effect_size``, ``baseline_judge_spread`` and
    #: ``candidate_judge_spread`` (a judged metric scored with ``samples`` > 1 in both runs: the
    #: mean per-item spread of the judge's samples, its own noise beside the delta; else null),
    #: ``improved``, ``regressed``, ``unchanged``, ``significant``, ``interval`` (``items``, or
    #: ``items and judge samples``: with samples in both runs the interval is a two-level
    #: bootstrap that resamples the judge's samples within each item as well; with ``cluster``,
    #: ``cluster-robust t``: the cluster-robust t-test's two-sided interval, or ``clusters`` /
    #: ``clusters and judge samples`` where there is no such test),
    #: ``judge_variance_share`` (the share of an item's delta variance that is the judge's own; with clusters, of a cluster's)
    #: and ``judge_flips`` (items whose samples disagree); then the family's columns:
    #: ``p_value`` (the p-value the row brings to the family), ``p_value_source`` (``t-test``,
    #: or ``randomization`` without a t-test or without adjustment), ``p_holm`` (Holm's adjusted
    #: p-value), ``q_bh`` (the Benjamini-Hochberg q-value), ``family_size`` (the tests decided
    #: together: every metric over all items and per segment); and ``win_rate`` with
    #: ``win_rate_low`` / ``win_rate_high`` (the share of changed items the candidate improved,
    #: with its Wilson interval); with ``cluster``: ``clusters``, ``design_effect``,
    #: ``effective_n``; ``no_test_reason`` says why a row has no t-test. ``significant`` is
    #: decided by ``adjust``.
    metrics: pl.DataFrame
    #: The same per segment value (a ``segment`` column first); empty without ``by``.
    segments: pl.DataFrame
    #: The largest drops per metric: ``metric``, ``key``, ``baseline``, ``candidate``,
    #: ``delta``, ``baseline_answer``, ``candidate_answer``.
    regressions: pl.DataFrame
    #: Whether both runs are complete enough to compare, one row per compared value:
    #: ``metric``, ``expected`` (the items of either run), per run (``baseline_`` /
    #: ``candidate_``) ``rows``, ``scored`` (a finite value), ``missing``, ``judge_errors`` (rows
    #: whose judge gave no verdict), ``complete`` (scored over expected) and ``samples_missing``
    #: (a value judged with several samples per item: the samples its scored rows lack, each
    #: row's shortfall from the most any row holds). Read it before the
    #: deltas: ``polars-rag compare`` refuses to gate on a value below ``--min-complete``.
    integrity: pl.DataFrame


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


def _resampling(function: str, resamples: Any, confidence: Any, seed: Any) -> dict[str, Any]:
    """The resampling settings every comparing function takes, checked and with the library's
    defaults for those left at ``None``."""
    return {
        "resamples": _as_int(function, "resamples", _setting("resamples", resamples)),
        "confidence": _as_float(function, "confidence", _setting("confidence", confidence)),
        "seed": _as_int(function, "seed", _setting("seed", seed)),
    }


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
    adjust: Adjust | None = None,
    family: Sequence[str] | None = None,
    cluster: str | None = None,
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

    Every row tested (each metric over all items, and per value of ``by``) is one family, and
    ``significant`` is decided for the family as a whole: ``adjust="holm"`` (default) flags a
    row when its Holm-adjusted p-value ``p_holm`` is at most ``1 - confidence``, so that the
    chance of any false alarm among all rows stays at that level; ``"bh"`` uses the
    Benjamini-Hochberg q-value ``q_bh``; ``"none"`` flags each row on its own when its
    randomization p-value is below the level (the numbers of ``polars-rag`` 0.2). With an
    adjustment, a row brings its t-test's p-value to the family (the randomization test's has
    a floor of 1 / (resamples + 1), too coarse for a large family); corpus-level rows bring
    their randomization p-value. ``family`` names the metrics whose rows are the family (the
    ones a release decision rests on, say); the other rows are then decided as a family of
    their own.

    ``cluster`` names a column whose values group items that are not independent (questions on
    one document, topic or conversation; the same in both tables): the bootstrap resamples whole
    clusters, the randomization test flips the sign of a cluster's summed delta, the t-test is
    cluster-robust (statsmodels' OLS on a constant with ``cov_type="cluster"``: CR1, Student t
    with G - 1 degrees of freedom), and each row gains ``clusters``, ``design_effect`` (clustered
    over naive variance) and ``effective_n``. Fewer than about 20 clusters make the intervals
    too narrow; the ``polars-rag compare`` report warns.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> a = pl.DataFrame({"query_id": [f"q{i}" for i in range(50)], "mrr": [0.5] * 50})
        >>> b = a.with_columns(pl.col("mrr") + 0.25)
        >>> row = pr.compare(a, b).metrics.row(0, named=True)
        >>> (row["delta"], row["improved"], row["significant"])
        (0.25, 50, True)
    """
    from polars_rag._internal import compare_tables as _compare

    metrics, segments, regressions, integrity = _compare(
        _frame(baseline),
        _frame(candidate),
        _settings(
            id=id,
            by=by,
            cluster=cluster,
            **_resampling("compare", resamples, confidence, seed),
            top=_as_int("compare", "top", _setting("top", top)),
            alternative=_alternative(_setting("alternative", alternative)),
            adjust=_adjust("compare", _setting("adjust", adjust)),
            family=_names("compare", "family", family),
        ),
    )
    return Comparison(metrics, segments, regressions, integrity)


class Leaderboard(NamedTuple):
    """Several runs ranked per metric (see :func:`leaderboard`)."""

    #: One row per metric and run: ``metric``, ``run``, ``n`` (items every run has), ``mean``,
    #: ``ci_low``, ``ci_high``, ``rank`` (1: the highest mean), ``rank_low``, ``rank_high`` (the
    #: rank interval), ``p_best`` (the share of resamples in which the run ranks first).
    standings: pl.DataFrame
    #: One row per metric and pair of runs: ``metric``, ``first``, ``second``, ``n``, ``delta``
    #: (second minus first), ``ci_low``, ``ci_high``, ``p_value`` (paired t-test;
    #: cluster-robust with ``cluster``), ``p_holm``, ``q_bh``, ``significant`` (decided over
    #: every pair of every metric as one family).
    pairs: pl.DataFrame


@_names_its_errors
def leaderboard(
    runs: dict[str, FrameLike] | Sequence[FrameLike],
    *,
    id: str = "query_id",
    cluster: str | None = None,
    resamples: int | None = None,
    confidence: float | None = None,
    seed: int | None = None,
    alternative: Alternative | None = None,
    adjust: Adjust | None = None,
) -> Leaderboard:
    """Ranks several scores tables per metric, as ``polars-rag leaderboard``.

    ``runs``: a dict of name to scores table, or a list (named ``run1``, ``run2``, ...). The
    items of the first run are matched by ``id`` in each other one; per metric the items every
    run has a value for are resampled jointly (the same bootstrap weights for every run; whole
    clusters with ``cluster``), giving each run's mean interval, its rank interval and its share
    of resamples in first place; every pair's delta has its resampled interval and a paired
    t-test, and all pairs of all metrics are decided as one family (``adjust``, Holm by default).

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> ids = [f"q{i}" for i in range(200)]
        >>> base = [0.5 + 0.3 * ((i * 7) % 10) / 10 for i in range(200)]
        >>> runs = {name: pl.DataFrame({"query_id": ids, "mrr": [v + shift for v in base]})
        ...         for name, shift in (("a", 0.0), ("b", 0.05), ("c", -0.05))}
        >>> board = pr.leaderboard(runs, resamples=200)
        >>> board.standings.select("run", "rank", "p_best").rows()
        [('a', 2, 0.0), ('b', 1, 1.0), ('c', 3, 0.0)]
    """
    from polars_rag._internal import leaderboard_tables as _leaderboard

    if isinstance(runs, dict):
        named = [(str(name), _frame(frame)) for name, frame in runs.items()]
    else:
        named = [(f"run{i + 1}", _frame(frame)) for i, frame in enumerate(runs)]
    standings, pairs = _leaderboard(
        named,
        _settings(
            id=id,
            cluster=cluster,
            **_resampling("leaderboard", resamples, confidence, seed),
            alternative=_alternative(_setting("alternative", alternative)),
            adjust=_adjust("leaderboard", _setting("adjust", adjust)),
        ),
    )
    return Leaderboard(standings, pairs)


@_names_its_errors
def plan(
    baseline: FrameLike,
    candidate: FrameLike | None = None,
    *,
    mde: float,
    power: float = 0.8,
    alpha: float = 0.05,
    tests: int = 1,
    alternative: Alternative = "two-sided",
    cluster: str | None = None,
    samples: int | None = None,
    correlation: float | None = None,
    labels: tuple[FrameLike | str | os.PathLike[str], FrameLike | str | os.PathLike[str]] | None = None,
    id: str = "query_id",
) -> pl.DataFrame:
    """Plans the next comparison from a pilot pair of scores tables, as ``polars-rag plan``.

    Per metric: ``delta_sd`` (the standard deviation of the pilot's paired deltas, divisor
    n - 1), ``design_effect`` (with ``cluster``: the pilot's, else 1), ``effect_size``
    (``mde / delta_sd``), ``items_needed`` to detect a delta of ``mde`` (the metric's own units)
    with probability ``power`` at level ``alpha / tests`` (``tests``: the rows the comparison
    will decide as one family; Holm's smallest threshold), ``clusters_needed`` at the pilot's
    mean cluster size, ``detectable_delta`` (the smallest delta the pilot's size detects) and
    ``power_at_pilot_size``; ``reason`` says why a number is missing. Without clusters the
    sizes are statsmodels' ``TTestPower().solve_power`` (exact roots, rounded up).

    ``samples``: the judge's samples per item and run the comparison will score with. A judged
    metric whose pilot has samples in both runs is planned through the judge's share of its
    delta variance (``judge_share``; the judge's part shrinks as 1 / samples, the items' part
    stays); ``judge_samples`` says what was planned for.

    Without ``candidate`` the baseline alone is the pilot: its scores' spread stands for both
    runs, with an *assumed* ``correlation`` (required, in [-1, 1)) between two runs' scores of an
    item, so the deltas' spread is the scores' times sqrt(2 (1 - correlation));
    ``assumed_correlation`` says so in every row. A pilot pair measures it instead.

    ``labels=(baseline_labels, candidate_labels)``: labels of some of the pilot's items in both
    runs (tables or paths, as :func:`calibrate` reads them). Each judged value then gets
    ``labels_needed``, the items of the pilot's size to label in both runs for the
    prediction-powered delta (:func:`labelled_deltas`) to detect ``mde`` with the power (PPI's
    variance projected from the pilot's spreads, its λ re-tuned for each count), beside
    ``pilot_labels``; ``reason`` says when no number of labels among those items would.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> ids = [f"q{i}" for i in range(100)]
        >>> a = pl.DataFrame({"query_id": ids, "mrr": [0.5] * 100})
        >>> b = pl.DataFrame({"query_id": ids, "mrr": [0.5 + 0.1 * (-1) ** i for i in range(100)]})
        >>> row = pr.plan(a, b, mde=0.02).row(0, named=True)
        >>> round(row["delta_sd"], 4), row["items_needed"]
        (0.1005, 201.0)
        >>> row = pr.plan(b, mde=0.02, correlation=0.5).row(0, named=True)
        >>> round(row["delta_sd"], 4), row["assumed_correlation"]
        (0.1005, 0.5)
    """
    from polars_rag._internal import plan_tables as _plan

    return _plan(
        _frame(baseline),
        None if candidate is None else _frame(candidate),
        None if labels is None else _label_pair("plan", labels, id),
        _settings(
            id=id,
            cluster=cluster,
            mde=_as_float("plan", "mde", mde),
            power=_as_float("plan", "power", power),
            alpha=_as_float("plan", "alpha", alpha),
            tests=_as_int("plan", "tests", tests),
            alternative=_alternative(alternative),
            samples=None if samples is None else _as_int("plan", "samples", samples),
            correlation=None if correlation is None else _as_float("plan", "correlation", correlation),
        ),
    )


def _label_pair(function: str, labels: Any, id: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    if not isinstance(labels, (tuple, list)) or len(labels) != 2:
        raise TypeError(f"{function}: labels must be a pair (baseline labels, candidate labels), got {labels!r}")
    return _labels_frame(labels[0], function, id), _labels_frame(labels[1], function, id)


def _names(function: str, option: str, value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{function}: {option} must be a list of metric names, got {value!r}")
    return list(value)


def _adjust(function: str, value: Any) -> str:
    if value not in ("none", "holm", "bh"):
        raise InvalidInputError(f"{function}: adjust must be 'none', 'holm' or 'bh', got {value!r}")
    return str(value)


def adjust_p_values(p: str | pl.Expr, method: Adjust = "holm") -> pl.Expr:
    """A column of p-values adjusted as one family (statsmodels' ``multipletests``):
    ``"holm"`` gives Holm's adjusted p-values (reject where at most α: the chance of any false
    rejection is at most α), ``"bh"`` the Benjamini-Hochberg q-values (the expected share of
    false rejections among the rejected is at most α), ``"none"`` the p-values as they are.
    Null and NaN p-values stay null and are left out of the family; a value outside [0, 1] is
    an error naming the row. Over the whole column in ``select`` / ``with_columns``, per group
    in ``group_by().agg()``.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"p": [0.01, 0.04, 0.03, None]})
        >>> df.select(pr.adjust_p_values("p", "holm"))["p"].to_list()
        [0.03, 0.06, 0.06, None]
    """
    from polars_rag._internal import adjust_p_values as _adjust_p_values

    method = _adjust("adjust_p_values", method)  # type: ignore[assignment]
    expr = pl.col(p) if isinstance(p, str) else p

    def adjusted(values: pl.Series) -> pl.Series:
        if not (values.dtype.is_numeric() or values.dtype == pl.Null):
            raise TypeError(f"adjust_p_values: the p-values must be numbers, got a column of {values.dtype}")
        return _adjust_p_values(values.cast(pl.Float64), method)

    return expr.map_batches(adjusted, return_dtype=pl.Float64)


@_names_its_errors
def summary(
    scores: FrameLike,
    *,
    by: str | None = None,
    cluster: str | None = None,
    resamples: int | None = None,
    confidence: float | None = None,
    seed: int | None = None,
) -> pl.DataFrame:
    """Per-metric means of a scores table with bootstrap intervals, overall (segment ``all``) and
    per value of ``by``: ``segment``, ``metric``, ``n``, ``mean``, ``ci_low``, ``ci_high``.

    With ``cluster`` (a column whose values group the rows: a document, a topic, a
    conversation) a mean's interval is the cluster-robust t interval (G - 1 degrees of freedom;
    the percentile bootstrap of few clusters falls short of its confidence), a corpus-level
    metric's the bootstrap of whole clusters, and the table gains ``clusters``,
    ``design_effect`` (the clustered variance of the mean over its variance were the rows
    independent) and ``interval`` (``cluster-robust t`` or ``clusters``). Settings left at
    ``None`` take the library's defaults (:func:`compare_defaults`)."""
    from polars_rag._internal import summarize_table as _summary

    return _summary(
        _frame(scores),
        _settings(
            by=by,
            cluster=cluster,
            **_resampling("summary", resamples, confidence, seed),
        ),
    )


class Calibration(NamedTuple):
    """A judge's scores tables against labels (see :func:`calibrate`)."""

    #: One row per scores table (``run``), judged value (``metric``) and segment (``all``
    #: first): ``kind`` (``binary``, ``ordinal``, ``continuous``, ``categorical``), ``n_items``,
    #: ``n_labelled``, ``n_compared`` (label and judge value both there), ``n_unjudged`` (a label
    #: but no judge value), ``accuracy``, ``kappa``, ``kappa_weights``, ``mae``, ``bias``
    #: (judge − label), ``spearman``, ``kendall``, ``judge_mean``, ``label_mean``,
    #: ``ppi_estimate`` / ``ppi_ci_low`` / ``ppi_ci_high`` / ``ppi_lam``, ``classical_ci_low`` /
    #: ``classical_ci_high`` (the labels alone), ``labels_to_halve`` and ``reason``.
    table: pl.DataFrame
    #: The confusion matrices of grades and verdicts: ``run``, ``metric``, ``segment``,
    #: ``label``, ``predicted``, ``count``.
    confusion: pl.DataFrame


def _labels_frame(
    labels: FrameLike | str | os.PathLike[str], function: str = "calibrate", id: str | None = None
) -> pl.DataFrame:
    """A labels table given as a frame, or as the path of a workbook (.xlsx) or Parquet file
    (read as ``polars-rag calibrate --labels`` reads it: a FIFO, directory or device is refused,
    not waited on; a workbook's row with a label but no ``id`` is an error naming the row)."""
    if isinstance(labels, (str, os.PathLike)):
        from polars_rag._internal import read_labels

        return read_labels(os.fspath(labels), function, id)
    return _frame(labels)


@_names_its_errors
def calibrate(
    scores: FrameLike | dict[str, FrameLike],
    labels: FrameLike | str | os.PathLike[str],
    *,
    id: str = "query_id",
    by: str | None = None,
    cluster: str | None = None,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    lam: float | None = None,
) -> Calibration:
    """How far a judge can be trusted, as ``polars-rag calibrate``: each judged value of the
    scores tables (``faithfulness.score``, ``g_eval.raw_score``, ``citation_support.verdict``, a
    judge card's fields) against the labels table's column of the same name (or the metric's id
    when it has one value), items matched on ``id``, overall and per value of ``by``.

    Per value: the judge's agreement with the labels (accuracy and Cohen's kappa for grades and
    verdicts, quadratic-weighted for ordinal grades; MAE, bias, Spearman and Kendall for
    numbers, as scipy and scikit-learn compute them), the judge-only and labels-only means, the
    prediction-powered estimate of the mean over all items with its interval (as
    :func:`ppi_mean`, ``alpha``, ``alternative`` and ``lam`` as there) and how many more labels
    would halve that interval. With ``cluster`` (a column of the scores tables whose values
    group the items: a document, a topic) the PPI and labels-only intervals are cluster-robust
    (CR1, Student t with G - 1 degrees of freedom). ``scores`` is one table or ``{name: table}``. ``labels`` is a
    frame, or the path of a filled-in :func:`sample_for_labelling` workbook (``.xlsx``) or a
    Parquet file; it may be another judge's scores table: then the figures measure judge drift.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> scores = pl.DataFrame({"query_id": ["a", "b", "c", "d", "e", "f"],
        ...                        "faithfulness": [{"score": s} for s in [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]]})
        >>> labels = pl.DataFrame({"query_id": ["a", "b", "c"], "faithfulness": [1.0, 0.0, 0.0]})
        >>> row = pr.calibrate(scores, labels).table.row(0, named=True)
        >>> row["metric"], row["kind"], row["n_labelled"], round(row["accuracy"], 3)
        ('faithfulness.score', 'binary', 3, 0.667)
    """
    from polars_rag._internal import calibrate_tables as _calibrate

    runs = scores.items() if isinstance(scores, dict) else [("scores", scores)]
    table, confusion = _calibrate(
        [(str(name), _frame(frame)) for name, frame in runs],
        _labels_frame(labels, "calibrate", id),
        _settings(
            id=id,
            by=by,
            cluster=cluster,
            alpha=_as_float("calibrate", "alpha", alpha),
            alternative=_alternative(alternative),
            lam=None if lam is None else _as_float("calibrate", "lam", lam),
        ),
    )
    return Calibration(table, confusion)


@_names_its_errors
def sample_for_labelling(
    scores: FrameLike,
    n: int = 100,
    *,
    id: str = "query_id",
    by: str | None = None,
    values: list[str] | None = None,
    seed: int = 12345,
    min_per_stratum: int = 0,
    xlsx: str | os.PathLike[str] | None = None,
) -> pl.DataFrame:
    """The items of a scores table to give people to label, as ``polars-rag sample``: ``n``
    rows picked at random (the same ``seed``, the same rows), stratified by ``by`` and by the
    judge's verdict on the first of ``values`` (default: every judged value a person would label,
    such as ``faithfulness.score``, ``g_eval.raw_score``, ``citation_support.verdict``), in
    proportion to the strata's sizes so that the labels stay a representative sample (what
    :func:`calibrate`'s PPI estimates assume; ``min_per_stratum`` > 0 trades that for rare
    verdicts). Columns: the keys, the segment, the scores table's texts, one empty column per
    value and an empty ``comment``; never the judge's values. With ``xlsx``, also written there
    as a workbook to fill in; :func:`calibrate` reads it back.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> scores = pl.DataFrame({"query_id": [f"q{i}" for i in range(10)], "answer": ["..."] * 10,
        ...                        "faithfulness": [{"score": float(i % 2)} for i in range(10)]})
        >>> sheet = pr.sample_for_labelling(scores, 4, seed=1)
        >>> sheet.columns, sheet.height
        (['query_id', 'answer', 'faithfulness.score', 'comment'], 4)
    """
    from polars_rag._internal import labelling_sheet

    return labelling_sheet(
        _frame(scores),
        _settings(
            n=_as_int("sample_for_labelling", "n", n),
            id=id,
            by=by,
            values=None if values is None else [str(v) for v in values],
            seed=_as_int("sample_for_labelling", "seed", seed),
            min_per_stratum=_as_int("sample_for_labelling", "min_per_stratum", min_per_stratum),
            xlsx=None if xlsx is None else os.fspath(xlsx),
        ),
    )


@_names_its_errors
def labelled_deltas(
    baseline: FrameLike,
    candidate: FrameLike,
    baseline_labels: FrameLike | str | os.PathLike[str],
    candidate_labels: FrameLike | str | os.PathLike[str],
    *,
    id: str = "query_id",
    cluster: str | None = None,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    lam: float | None = None,
) -> pl.DataFrame:
    """The run-versus-baseline delta of each judged value estimated from labels of both runs, as
    ``polars-rag compare --baseline-labels ... --candidate-labels ...`` reports it: PPI (as
    :func:`ppi_mean`) on the paired differences, the judge's per-item deltas on every item both
    runs judged, the labels' deltas on the items labelled in both. One row per value:
    ``metric``, ``n_items``, ``n_labelled``, ``judge_delta``, ``ppi_delta`` / ``ppi_ci_low`` /
    ``ppi_ci_high`` / ``ppi_lam``, ``labels_delta`` / ``labels_ci_low`` / ``labels_ci_high``
    (the labels alone), ``shift`` (how far the labels moved the delta), ``labelled_keys`` (up to
    20) and ``reason``. Labels are tables (or workbook / Parquet paths) as :func:`calibrate`
    reads them. With ``cluster`` (a column of the baseline grouping the items) the intervals
    are cluster-robust, as :func:`calibrate`'s.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> ids = [f"q{i}" for i in range(6)]
        >>> base = pl.DataFrame({"query_id": ids, "faithfulness": [{"score": 0.5}] * 6})
        >>> cand = pl.DataFrame({"query_id": ids, "faithfulness": [{"score": 0.7}] * 6})
        >>> lb = pl.DataFrame({"query_id": ids[:3], "faithfulness": [0.5, 0.4, 0.6]})
        >>> lc = pl.DataFrame({"query_id": ids[:3], "faithfulness": [0.6, 0.5, 0.7]})
        >>> row = pr.labelled_deltas(base, cand, lb, lc, lam=1.0).row(0, named=True)
        >>> round(row["judge_delta"], 3), round(row["ppi_delta"], 3), round(row["shift"], 3)
        (0.2, 0.1, -0.1)
    """
    from polars_rag._internal import labelled_deltas as _labelled_deltas

    return _labelled_deltas(
        _frame(baseline),
        _frame(candidate),
        _labels_frame(baseline_labels, "labelled_deltas", id),
        _labels_frame(candidate_labels, "labelled_deltas", id),
        _settings(
            id=id,
            cluster=cluster,
            alpha=_as_float("labelled_deltas", "alpha", alpha),
            alternative=_alternative(alternative),
            lam=None if lam is None else _as_float("labelled_deltas", "lam", lam),
        ),
    )


@_names_its_errors
def judge_drift(
    baseline: FrameLike,
    candidate: FrameLike,
    rejudged_baseline: FrameLike,
    rejudged_candidate: FrameLike,
    *,
    id: str = "query_id",
    resamples: int | None = None,
    confidence: float | None = None,
    seed: int | None = None,
    alternative: Alternative | None = None,
) -> pl.DataFrame:
    """Judge drift where it matters, in the decision: the same two runs compared twice, scored
    by one judge setting (``baseline``, ``candidate``) and by another (``rejudged_*``), as
    ``polars-rag compare --rejudged-baseline ... --rejudged-candidate ...`` reports it. One row per
    metric whose delta differs: ``metric``, ``first_delta``, ``first_verdict``, ``second_delta``,
    ``second_verdict`` (``better``, ``worse``, ``no significant change``) and ``flipped``. Settings
    as :func:`compare`'s. For agreement item by item, use :func:`calibrate` with one judge's
    scores table as the labels of the other's.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> ids = [f"q{i}" for i in range(40)]
        >>> score = lambda values: pl.DataFrame({"query_id": ids, "faithfulness": [{"score": v} for v in values]})
        >>> base = [0.4 + 0.01 * (i % 5) for i in range(40)]
        >>> drift = pr.judge_drift(score(base), score([b + 0.2 for b in base]), score(base), score(base))
        >>> drift.select("first_verdict", "second_verdict", "flipped").row(0)
        ('better', 'no significant change', True)
    """
    from polars_rag._internal import judge_drift as _judge_drift

    return _judge_drift(
        _frame(baseline),
        _frame(candidate),
        _frame(rejudged_baseline),
        _frame(rejudged_candidate),
        _settings(
            id=id,
            **_resampling("judge_drift", resamples, confidence, seed),
            alternative=_alternative(_setting("alternative", alternative)),
        ),
    )
