"""Retrieval metrics on ranked lists and on character spans."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import polars as pl

from polars_rag._answer import Distance
from polars_rag._common import IntoExprColumn, _plugin

__all__ = [
    "HybridLogRankOptions",
    "RankBy",
    "RankedCompatOptions",
    "RankedOptions",
    "Relevance",
    "RetrievalCompat",
    "SpanCompat",
    "average_precision",
    "f1_at_k",
    "hit_rate_at_k",
    "hybrid_log_rank",
    "mrr",
    "ndcg_at_k",
    "precision_at_k",
    "r_precision",
    "recall_at_k",
    "span_iou",
    "span_precision",
    "span_precision_omega",
    "span_recall",
]

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from polars_rag._settings import Embedder

#: How a retrieved item is judged relevant: ``"auto"`` (from the column shapes), ``"text"``
#: (exact text), ``"id"``, ``"span"`` (character overlap in the same file) or ``"embedding"``
#: (cosine similarity) or ``"similarity"`` (string similarity of the texts, Ragas' non-LLM context
#: metrics).
Relevance = Literal["auto", "text", "id", "span", "embedding", "similarity"]
#: Rank order: ``"order"`` (list order), ``"score"`` (score descending, ties keep list order),
#: ``"trec"`` (trec_eval's: score descending as float32, ties by id descending).
RankBy = Literal["order", "score", "trec"]
#: ``"standard"`` (trec_eval's definitions), ``"datapizza"`` (datapizza-ai's metrics.py) or
#: ``"ragas"`` (Ragas 0.4.3's ID-based and non-LLM context precision and recall).
RetrievalCompat = Literal["standard", "datapizza", "ragas"]
#: ``"standard"`` (merged intervals) or ``"chroma"`` (Chroma chunking_evaluation's formulas).
SpanCompat = Literal["standard", "chroma"]


class RankedOptions(TypedDict, total=False):
    """Keyword options of the ranked-list metrics; each left out (or ``None``) takes the library's
    default (:func:`~polars_rag.option_defaults`).

    ``k``: cut-off rank (default: the whole list). ``relevance``: how a retrieved item is judged
    relevant (:data:`Relevance`). ``min_overlap`` / ``min_overlap_fraction``: code points / share
    of the golden span a retrieved span must overlap (``relevance="span"``).
    ``similarity_threshold``: cosine at which an embedding counts as relevant.
    ``rank_by``: rank order (:data:`RankBy`). ``relevance_level``: the least grade of a relevant
    ground-truth item (trec_eval's ``-l``; default: any grade above 0). ``string_distance`` and
    ``string_similarity_threshold``: ``relevance="similarity"`` (a :data:`Distance`, default
    Levenshtein; default threshold 0.5, Ragas'). ``embedder``: with ``relevance="embedding"`` on
    text columns (``list[str]`` or structs with ``text``), the :class:`~polars_rag.Embedder`
    that embeds both sides (default: the local model of :func:`~polars_rag.default_model_dir`);
    columns of vectors are used as they are.
    """

    k: int | None
    relevance: Relevance | None
    min_overlap: int | None
    min_overlap_fraction: float | None
    similarity_threshold: float | None
    rank_by: RankBy | None
    relevance_level: float | None
    string_distance: Distance | None
    string_similarity_threshold: float | None
    embedder: Embedder | None


class RankedCompatOptions(RankedOptions, total=False):
    """:class:`RankedOptions` and ``compat`` (:data:`RetrievalCompat`)."""

    compat: RetrievalCompat | None


class HybridLogRankOptions(RankedCompatOptions, total=False):
    """:class:`RankedCompatOptions` and the weights ``alpha`` (of recall) and ``gamma`` (of the
    log-rank decay)."""

    alpha: float | None
    gamma: float | None


def _ranked(
    name: str,
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    options: Mapping[str, Any],
    accepted: Any = RankedOptions,
) -> pl.Expr:
    from polars_rag._embed import _embedder

    options = dict(options)
    embedder = options.get("embedder")
    # Embedding relevance embeds text columns itself: the model travels as its settings.
    if embedder is not None or options.get("relevance") == "embedding":
        options["embedder"] = _embedder(name, embedder).settings()
    return _plugin(name, [retrieved, relevant], options, accepted=accepted)


def precision_at_k(
    retrieved: IntoExprColumn, relevant: IntoExprColumn, **options: Unpack[RankedCompatOptions]
) -> pl.Expr:
    """Relevant items among the first ``k`` retrieved, divided by ``k`` (trec_eval ``P_k``).

    ``retrieved`` is a list per row in rank order: ``list[str]`` (texts or ids), a list of
    structs with ``text`` / ``id`` / ``file``, ``start``, ``end`` / ``score`` fields, or a list of
    embeddings. ``relevant`` is the question's ground truth in the same shapes (structs may carry
    a ``grade``). Null when a side is null or the ground truth is empty; a judged query with
    nothing relevant scores 0, as in trec_eval; ``compat="datapizza"``
    reproduces datapizza-ai (null where it raises); ``compat="ragas"`` (by ids or texts) is Ragas'
    ``IDBasedContextPrecision`` over the distinct retrieved ids (null when nothing was retrieved).

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"retrieved": [["a", "b", "c", "d"]], "relevant": [["a", "c", "e"]]})
        >>> df.select(pr.precision_at_k("retrieved", "relevant", k=2)).item()
        0.5
    """
    return _ranked("precision_at_k", retrieved, relevant, options, RankedCompatOptions)


def recall_at_k(
    retrieved: IntoExprColumn, relevant: IntoExprColumn, **options: Unpack[RankedCompatOptions]
) -> pl.Expr:
    """Relevant ground-truth items found among the first ``k`` retrieved / all relevant items.

    Equal to trec_eval ``recall_k``. Inputs and options as :func:`precision_at_k`. With
    ``compat="ragas"`` (the whole list unless ``k`` is given): by ids or texts, Ragas'
    ``IDBasedContextRecall`` (distinct ids); with ``relevance="similarity"``, its
    ``NonLLMContextRecall`` (a reference context counts when its best similarity to a retrieved
    one is *above* the threshold). Null where Ragas raises or returns NaN.
    """
    return _ranked("recall_at_k", retrieved, relevant, options, RankedCompatOptions)


def f1_at_k(
    retrieved: IntoExprColumn, relevant: IntoExprColumn, **options: Unpack[RankedCompatOptions]
) -> pl.Expr:
    """Harmonic mean of :func:`precision_at_k` and :func:`recall_at_k` (0 when both are 0)."""
    return _ranked("f1_at_k", retrieved, relevant, options, RankedCompatOptions)


def hit_rate_at_k(
    retrieved: IntoExprColumn, relevant: IntoExprColumn, **options: Unpack[RankedOptions]
) -> pl.Expr:
    """1.0 when a relevant item is among the first ``k`` retrieved, else 0.0."""
    return _ranked("hit_rate_at_k", retrieved, relevant, options)


def ndcg_at_k(
    retrieved: IntoExprColumn, relevant: IntoExprColumn, **options: Unpack[RankedOptions]
) -> pl.Expr:
    """nDCG over the first ``k`` ranks with linear gains (trec_eval ``ndcg_cut_k``).

    Grades come from a ``grade`` field of the ground-truth structs (1 when absent).
    """
    return _ranked("ndcg_at_k", retrieved, relevant, options)


def mrr(
    retrieved: IntoExprColumn, relevant: IntoExprColumn, **options: Unpack[RankedOptions]
) -> pl.Expr:
    """1 / rank of the first relevant item, 0 when none (trec_eval ``recip_rank``).

    Average it over queries for MRR; ``k`` cuts the list first.
    """
    return _ranked("mrr", retrieved, relevant, options)


def average_precision(
    retrieved: IntoExprColumn, relevant: IntoExprColumn, **options: Unpack[RankedCompatOptions]
) -> pl.Expr:
    """Average precision of each query (trec_eval ``map``); average it over queries for MAP.

    ``relevance="similarity", compat="ragas"`` is Ragas' ``NonLLMContextPrecisionWithReference``
    (a retrieved context is relevant when its best string similarity to a reference context
    reaches ``string_similarity_threshold``; Σ precision@i · vᵢ / (Σ vᵢ + 1e-10); null where Ragas
    raises).

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"retrieved": [["zzzz", "Paris is the capital"]], "reference": [["Paris is the capital"]]})
        >>> df.select(pr.average_precision("retrieved", "reference", relevance="similarity", compat="ragas")).item()
        0.49999999995
    """
    return _ranked("average_precision", retrieved, relevant, options, RankedCompatOptions)


def r_precision(
    retrieved: IntoExprColumn, relevant: IntoExprColumn, **options: Unpack[RankedOptions]
) -> pl.Expr:
    """Precision at R, R the number of relevant items (trec_eval ``Rprec``)."""
    return _ranked("r_precision", retrieved, relevant, options)


def hybrid_log_rank(
    retrieved: IntoExprColumn, relevant: IntoExprColumn, **options: Unpack[HybridLogRankOptions]
) -> pl.Expr:
    """``alpha * recall + (1 - alpha) * rank quality``, datapizza's hybrid log-rank score.

    Rank quality is the mean over relevant ground-truth items of
    ``1 - ln(1 + gamma (r - 1)) / ln(1 + gamma (n - 1))`` at each item's first rank ``r`` among
    the ``n`` retrieved (0 when not found).
    """
    return _ranked("hybrid_log_rank", retrieved, relevant, options, HybridLogRankOptions)


def span_precision(
    retrieved: IntoExprColumn, relevant_spans: IntoExprColumn, *, compat: SpanCompat | None = None
) -> pl.Expr:
    """Retrieved characters inside golden spans / retrieved characters.

    Both columns are ``list[struct{file, start, end}]`` (code points, end exclusive). Spans are
    merged per file first, so overlapping chunks never count twice; ``compat="chroma"``
    reproduces Chroma's chunking evaluation, which counts them twice.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> span = lambda f, s, e: {"file": f, "start": s, "end": e}
        >>> df = pl.DataFrame({"retrieved": [[span("a", 0, 15), span("a", 5, 25)]],
        ...                    "relevant_spans": [[span("a", 10, 20)]]})
        >>> df.select(pr.span_precision("retrieved", "relevant_spans")).item()
        0.4
    """
    return _plugin("span_precision", [retrieved, relevant_spans], {"compat": compat})


def span_recall(
    retrieved: IntoExprColumn, relevant_spans: IntoExprColumn, *, compat: SpanCompat | None = None
) -> pl.Expr:
    """Golden characters retrieved / golden characters (see :func:`span_precision`)."""
    return _plugin("span_recall", [retrieved, relevant_spans], {"compat": compat})


def span_precision_omega(
    chunks: IntoExprColumn, relevant_spans: IntoExprColumn, *, compat: SpanCompat | None = None
) -> pl.Expr:
    """Precision Ω: the precision the chunking allows each question (Chroma's upper bound).

    ``chunks`` is every chunk of the chunking (``list[struct{file, start, end}]``, usually one
    list shared by all rows: ``pl.lit(...)``); ``relevant_spans`` the question's golden spans.
    Standard: the chunks sharing a code point with a golden span, merged; their golden characters
    over the characters of them and the golden spans together (null when the golden spans cover
    nothing). ``compat="chroma"``: chunking_evaluation's ``_full_precision_score`` (a chunk that
    only touches a golden span at a boundary counts; 0 when no chunk touches one).

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> span = lambda f, s, e: {"file": f, "start": s, "end": e}
        >>> chunks = [span("a", 0, 10), span("a", 10, 20), span("a", 20, 30)]
        >>> df = pl.DataFrame({"relevant_spans": [[span("a", 12, 18)], [span("a", 10, 20)]]})
        >>> df.select(pr.span_precision_omega(pl.lit(pl.Series([chunks])), "relevant_spans")).to_series().to_list()
        [0.6, 1.0]
    """
    return _plugin("span_precision_omega", [chunks, relevant_spans], {"compat": compat})


def span_iou(
    retrieved: IntoExprColumn, relevant_spans: IntoExprColumn, *, compat: SpanCompat | None = None
) -> pl.Expr:
    """Characters both cover / characters either covers (see :func:`span_precision`)."""
    return _plugin("span_iou", [retrieved, relevant_spans], {"compat": compat})
