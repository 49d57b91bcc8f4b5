"""Ragas' judged RAG metrics on the library's judge engine: faithfulness, answer relevancy,
context precision (with a reference, or against the answer as context utilization) and context
recall. Each is an elementwise expression returning a struct whose ``score`` means what Ragas
0.4.3's score means, beside the judged statements, verdicts and reasons that explain it; every
judge call is cached, so a re-run makes no call and returns the same table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

from polars_rag._common import IntoExprColumn, _plugin
from polars_rag._embed import _embedder
from polars_rag._settings import Embedder, Judge

__all__ = [
    "JudgedRagOptions",
    "RagCompat",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "context_utilization",
    "faithfulness",
]

if TYPE_CHECKING:
    import polars as pl
    from typing_extensions import Unpack

RagCompat = Literal["ragas", "deepeval"]


class JudgedRagOptions(TypedDict, total=False):
    """Keyword options of :func:`faithfulness`, :func:`context_precision`,
    :func:`context_utilization` and :func:`context_recall`; each left out (or ``None``) takes
    the library's default.

    ``judge``: the :class:`Judge` (default: the one of the ``POLARS_RAG_JUDGE_*`` environment
    variables). ``samples``: how many times each row is judged (separate cache entries, sample
    ``k`` sent ``seed + k``); ``score`` is their mean, ``sample_scores`` each sample's score
    (what :func:`compare` resamples within an item), ``spread`` the largest minus the smallest
    and ``samples_agree`` whether they all gave the same score. ``compat`` (faithfulness only):
    ``"ragas"`` divides by the verdicts the judge returned even when their number differs from
    the statements', as Ragas does (by default such a reply is asked again once, then the row is
    null with the reason); ``"deepeval"`` is DeepEval's faithfulness: the facts of the contexts
    and the claims of the answer are extracted, every claim is judged ``yes`` / ``no`` /
    ``borderline`` against the facts in one call, and the score is the share not contradicted
    (1.0 without claims; rows without contexts are judged, as DeepEval judges them).
    """

    judge: Judge | None
    samples: int | None
    compat: RagCompat | None


def faithfulness(
    question: IntoExprColumn,
    answer: IntoExprColumn,
    contexts: IntoExprColumn,
    **options: Unpack[JudgedRagOptions],
) -> pl.Expr:
    """Ragas' faithfulness: the share of the answer's statements that the contexts support.

    The judge breaks the answer into standalone statements (one call), then gives every
    statement a 0/1 verdict against the contexts joined with newlines (one call for all of an
    answer's statements). ``contexts`` is a ``list[str]`` column, a ``str`` column, or a list of
    structs with a ``text`` field. Returns a struct ``faithfulness``: ``score`` (null when the
    answer has no statements), ``statements``, ``verdicts`` and ``reasons`` (parallel lists:
    explode them together to see which statement failed), ``sample_scores``, ``spread``, ``samples_agree`` and
    ``judge_error``. A null input gives a null row.
    """
    return _plugin("faithfulness", [question, answer, contexts], options, accepted=JudgedRagOptions)


def context_precision(
    question: IntoExprColumn,
    contexts: IntoExprColumn,
    reference: IntoExprColumn,
    **options: Unpack[JudgedRagOptions],
) -> pl.Expr:
    """Ragas' context precision with a reference: each retrieved context (in rank order) gets a
    0/1 verdict on whether it was useful to reach the reference answer, one call per context, all
    in flight together; ``score`` = Σ_k precision@k · v_k / (Σ v + 1e-10), 0 when none was
    useful, null without contexts. ``reference`` is a ``str`` column or a ``list[str]`` column
    (its first answer is the reference). Returns a struct ``context_precision``: ``score``,
    ``verdicts``, ``reasons``, ``sample_scores``, ``spread``, ``samples_agree``, ``judge_error``.
    """
    return _plugin("context_precision", [question, contexts, reference], options, accepted=JudgedRagOptions)


def context_utilization(
    question: IntoExprColumn,
    contexts: IntoExprColumn,
    answer: IntoExprColumn,
    **options: Unpack[JudgedRagOptions],
) -> pl.Expr:
    """Context precision without a reference (Ragas' context utilization): as
    :func:`context_precision`, with each context judged useful or not for the answer the system
    gave. Returns a struct ``context_utilization`` of the same fields.
    """
    return _plugin("context_utilization", [question, contexts, answer], options, accepted=JudgedRagOptions)


def context_recall(
    question: IntoExprColumn,
    contexts: IntoExprColumn,
    reference: IntoExprColumn,
    **options: Unpack[JudgedRagOptions],
) -> pl.Expr:
    """Ragas' context recall: the judge breaks the reference answer into statements and
    attributes each to the contexts (joined with newlines) or not, in one call; ``score`` =
    attributed / statements, null when the reference has none. Returns a struct
    ``context_recall``: ``score``, ``statements``, ``attributed``, ``reasons``, ``sample_scores``, ``spread``,
    ``samples_agree``, ``judge_error``.
    """
    return _plugin("context_recall", [question, contexts, reference], options, accepted=JudgedRagOptions)


def answer_relevancy(
    question: IntoExprColumn,
    answer: IntoExprColumn,
    *,
    judge: Judge | None = None,
    embedder: Embedder | None = None,
    strictness: int | None = None,
    samples: int | None = None,
) -> pl.Expr:
    """Ragas' answer relevancy: the judge writes ``strictness`` questions that the answer would
    answer (one call), each flagged when the answer is noncommittal; ``score`` is the mean cosine
    between their embeddings and the question's, and 0 when every question is flagged
    noncommittal. Returns a struct ``answer_relevancy``: ``score``, ``questions``,
    ``noncommittal``, ``similarities``, ``sample_scores``, ``spread``, ``samples_agree``, ``judge_error``.

    ``embedder=None`` uses the local model of :func:`default_model_dir`; ``samples`` as for
    :func:`faithfulness`.
    """
    settings = _embedder("answer_relevancy", embedder).settings()
    return _plugin(
        "answer_relevancy",
        [question, answer],
        {"judge": judge, "embedder": settings, "strictness": strictness, "samples": samples},
    )
