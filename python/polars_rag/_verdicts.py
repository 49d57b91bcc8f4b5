"""Scoring rules over verdicts given elsewhere (a judge, an NLI model, people): nugget evaluation
(the TREC 2024 RAG track's AutoNuggetizer) and RAGChecker's claim-level scores. Elementwise
expressions over list columns, one row per answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

import polars as pl

from polars_rag._common import IntoExprColumn, _plugin

__all__ = [
    "ClaimCheckOptions",
    "NuggetOptions",
    "claim_check_scores",
    "nugget_scores",
]

if TYPE_CHECKING:
    from typing_extensions import Unpack


class NuggetOptions(TypedDict, total=False):
    """Keyword options of :func:`nugget_scores`; left out (or ``None``), the library's default.

    ``compat``: ``"standard"`` (labels in any case; an unknown one is an error naming it) or
    ``"nuggetizer"`` (only the exact words ``vital``, ``support``, ``partial_support`` count, any
    other text counts as neither).
    """

    compat: str | None


class ClaimCheckOptions(TypedDict, total=False):
    """Keyword options of :func:`claim_check_scores`; left out (or ``None``), the library's
    default.

    ``compat``: ``"standard"`` (``entailment`` / ``neutral`` / ``contradiction`` in any case; an
    unknown label is an error naming it) or ``"ragchecker"`` (only exactly ``Entailment``
    entails).
    """

    compat: str | None


def nugget_scores(
    importance: IntoExprColumn,
    assignment: IntoExprColumn,
    **options: Unpack[NuggetOptions],
) -> pl.Expr:
    """Nugget evaluation of each answer (nuggetizer's ``calculate_nugget_scores``): per row, a
    ``list[str]`` of the question's nuggets' importance (``vital`` / ``okay``) and a ``list[str]``
    of their assessment in the answer (``support`` / ``partial_support`` / ``not_support``), one
    entry per nugget. A struct of ``strict_vital_score`` and ``strict_all_score`` (the share of
    vital / all nuggets supported) and ``vital_score`` and ``all_score`` (partial support counting
    one half); 0 without nuggets. The mean of each field over the answers is nuggetizer's global
    metric.

    Example:
        >>> import polars as pl
        >>> import polars_rag as pr
        >>> df = pl.DataFrame({"importance": [["vital", "vital", "okay"]],
        ...                    "assignment": [["support", "partial_support", "not_support"]]})
        >>> df.select(pr.nugget_scores("importance", "assignment")).unnest("nugget_scores").row(0)
        (0.5, 0.3333333333333333, 0.75, 0.5)
    """
    return _plugin("nugget_scores", [importance, assignment], options, accepted=NuggetOptions)


def claim_check_scores(
    response_in_reference: IntoExprColumn,
    reference_in_response: IntoExprColumn,
    response_in_chunks: IntoExprColumn,
    reference_in_chunks: IntoExprColumn,
    **options: Unpack[ClaimCheckOptions],
) -> pl.Expr:
    """RAGChecker's eleven claim-level scores of each answer from entailment verdicts
    (``entailment`` / ``neutral`` / ``contradiction``): per response claim against the reference
    answer (``list[str]``), per reference claim against the response (``list[str]``), and per
    claim of each against each retrieved chunk (``list[list[str]]``, one list per claim, a verdict
    per chunk). A struct of ``precision``, ``recall``, ``f1``, ``claim_recall``,
    ``context_precision``, ``context_utilization``, ``noise_sensitivity_in_relevant``,
    ``noise_sensitivity_in_irrelevant``, ``hallucination``, ``self_knowledge`` and
    ``faithfulness``, in [0, 1], as ``ragchecker/computation.py`` computes them. RAGChecker's
    report gives the mean of each over the answers × 100, rounded to one decimal.

    Example:
        >>> import polars as pl
        >>> import polars_rag as pr
        >>> df = pl.DataFrame({
        ...     "response_in_reference": [["entailment", "neutral"]],
        ...     "reference_in_response": [["entailment"]],
        ...     "response_in_chunks": [[["entailment", "neutral"], ["neutral", "neutral"]]],
        ...     "reference_in_chunks": [[["entailment", "neutral"]]],
        ... })
        >>> s = df.select(pr.claim_check_scores(*df.columns)).unnest("claim_check_scores").row(0, named=True)
        >>> s["precision"], s["recall"], s["faithfulness"], s["hallucination"]
        (0.5, 1.0, 0.5, 0.5)
    """
    return _plugin(
        "claim_check_scores",
        [response_in_reference, reference_in_response, response_in_chunks, reference_in_chunks],
        options,
        accepted=ClaimCheckOptions,
    )
