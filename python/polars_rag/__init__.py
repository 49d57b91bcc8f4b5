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
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Sequence
from functools import cache, wraps
from pathlib import Path
from typing import Any, Callable, Literal, NamedTuple, TypeVar, Union

from polars.plugins import register_plugin_function

import polars as pl
from polars_rag._internal import __version__
from polars_rag._internal import locate_stats as _locate_stats
from polars_rag._internal import locate_table as _locate_table
from polars_rag._internal import metric_ids as _metric_ids
from polars_rag._internal import option_defaults as _option_defaults
from polars_rag._internal import signature_of as _signature_of
from polars_rag._internal import write_locate_workbook as _write_locate_workbook

__all__ = [
    "BleuTokenizer",
    "Comparison",
    "Distance",
    "GoldenJoin",
    "IntoExprColumn",
    "LocateCompat",
    "LocatedQuotes",
    "QuoteStyle",
    "RankBy",
    "Relevance",
    "RetrievalCompat",
    "RougeTokenizer",
    "SmoothMethod",
    "SpanCompat",
    "Trim",
    "__version__",
    "answer_completeness",
    "average_precision",
    "bleu",
    "check_spans",
    "checks",
    "chrf",
    "citation_alignment",
    "citation_indicators",
    "collapse_run",
    "compare",
    "corpus_bleu",
    "embedding_cosine",
    "exact_match",
    "extract_quotes",
    "f1_at_k",
    "hit_rate_at_k",
    "hybrid_log_rank",
    "join_golden",
    "keyword_coverage",
    "locate_quotes",
    "locate_quotes_in_corpus",
    "metric_ids",
    "mrr",
    "ndcg_at_k",
    "number_match",
    "option_defaults",
    "precision_at_k",
    "quoted_spans",
    "r_precision",
    "recall_at_k",
    "rouge",
    "signature",
    "span_iou",
    "span_precision",
    "span_recall",
    "string_presence",
    "string_similarity",
    "summary",
    "validate_golden",
]

#: A column name or an expression.
IntoExprColumn = Union[pl.Expr, str]
#: Which quotation marks delimit spans: ``"standard"`` (paired typographic quotes, default) or
#: ``"ragas"`` (Ragas 0.4.3's four marks, reproduced bit for bit).
QuoteStyle = Literal["standard", "ragas"]

#: sacrebleu's tokenizers: ``"13a"`` (default), ``"none"``, ``"char"``, ``"intl"``.
BleuTokenizer = Literal["13a", "none", "char", "intl"]
#: sacrebleu's BLEU smoothing methods.
SmoothMethod = Literal["exp", "none", "floor", "add-k"]
#: ``"rouge_score"`` (rouge-score 0.1.2 exactly: ASCII letters and digits) or ``"unicode"``
#: (letters and digits of every script; CJK scored per character).
RougeTokenizer = Literal["rouge_score", "unicode"]

#: Edit distances of :func:`string_similarity` (rapidfuzz's).
Distance = Literal["levenshtein", "hamming", "jaro", "jaro_winkler"]

_PLUGIN_PATH = Path(__file__).parent


_F = TypeVar("_F", bound=Callable[..., Any])

#: Keyword arguments of the table functions that name a column or choose a unit: strings.
_STRING_ARGUMENTS = ("id", "by", "column", "unit")


def _names_its_errors(function: _F) -> _F:
    """Every error a table function raises names it: string arguments are checked first, and an
    error from Polars or the library that does not start with the function's name gets it as a
    prefix (same exception type, original chained)."""
    name = function.__name__

    @wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        for argument in _STRING_ARGUMENTS:
            value = kwargs.get(argument, "")
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name}: {argument} must be a column name (str), got {value!r}")
        try:
            return function(*args, **kwargs)
        except (pl.exceptions.PolarsError, ValueError, TypeError) as e:
            if str(e).startswith(f"{name}:"):
                raise
            try:
                renamed = type(e)(f"{name}: {e}")
            except Exception:  # noqa: BLE001 - an exception type that takes other arguments
                raise ValueError(f"{name}: {e}") from e
            raise renamed from e

    return call  # type: ignore[return-value]


def _as_float(function: str, name: str, value: Any) -> float:
    """``value`` as a float, or a ``TypeError`` / ``ValueError`` naming the function and the
    argument."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{function}: {name} must be a number, got {value!r}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{function}: {name} is too large, got {value!r}") from None


def _as_optional_float(function: str, name: str, value: Any) -> float | None:
    """:func:`_as_float`, with ``None`` (the library's default) passed through."""
    return None if value is None else _as_float(function, name, value)


def _as_int(function: str, name: str, value: Any, low: int = 0, high: int = 2**64 - 1) -> int:
    """``value`` as an int in ``[low, high]``, or a ``TypeError`` / ``ValueError`` naming the
    function and the argument (instead of the bare errors of the conversion to Rust)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{function}: {name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{function}: {name} must be between {low} and {high}, got {value}")
    return value


def _write_atomically(path: Path, data: bytes) -> None:
    """Writes ``path`` through a temporary file in its directory and a rename, so a failure or a
    kill mid-write leaves the previous file (or none), never a truncated one."""
    import os
    import tempfile

    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent or Path("."))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _check_option_int(function: str, option: str, value: Any) -> None:
    """Options travel to Rust as 64-bit integers at most: a larger one gets an error naming the
    function and the option (the plugin's decoder would only say "integer too large")."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        raise ValueError(f"{function}: option {option}={value} is outside the 64-bit integer range")
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_option_int(function, option, item)
    if isinstance(value, dict):
        for item in value.values():
            _check_option_int(function, option, item)


@cache
def _defaults(metric: str) -> dict[str, Any]:
    return dict(json.loads(_option_defaults(metric)))


def option_defaults(metric: str) -> dict[str, Any]:
    """The default keyword options of a metric, as the library defines them: what an option left
    at ``None`` means.

    Example:
        >>> import polars_rag as pr
        >>> pr.option_defaults("chrf")["char_order"]
        6
        >>> pr.option_defaults("exact_match")
        {}
    """
    return dict(_defaults(metric))


def _with_defaults(metric: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with every ``None`` replaced by the library's default, after checking that
    integers fit the 64 bits options travel in."""
    for option, value in options.items():
        _check_option_int(metric, option, value)
    defaults = _defaults(metric)
    return {key: defaults.get(key) if value is None else value for key, value in options.items()}


def _plugin(
    name: str,
    args: Sequence[IntoExprColumn],
    kwargs: dict[str, Any] | None = None,
    *,
    aggregate: bool = False,
) -> pl.Expr:
    """Calls the plugin function ``name``; its output column is named after the metric. Options
    left at ``None`` take the library's defaults (:func:`option_defaults`)."""
    kwargs = _with_defaults(name, kwargs or {})
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name=name,
        args=list(args),
        kwargs=kwargs,
        is_elementwise=not aggregate,
        returns_scalar=aggregate,
    ).alias(name)


@_names_its_errors
def metric_ids() -> list[str]:
    """The metric ids of this build, from the library's registry."""
    return list(_metric_ids())


def quoted_spans(
    answer: IntoExprColumn,
    sources: IntoExprColumn,
    *,
    casefold: bool | None = None,
    min_len: int | None = None,
    quotes: QuoteStyle | None = None,
) -> pl.Expr:
    """Quoted spans of each answer found verbatim in its sources.

    Returns a struct column ``quoted_spans`` with fields ``matched: u32``, ``total: u32`` and
    ``score: f64`` (``matched / total``, null when the answer quotes nothing). A null answer gives
    a null row; null or empty sources count the spans and match none.

    Args:
        answer: string column of answers.
        sources: ``list[str]`` column of passages per answer, a ``str`` column (one passage), or a
            list of structs with a ``text`` field (a ``retrieved`` column).
        casefold: collapse whitespace and lowercase both sides before matching.
        min_len: minimum number of words for a quoted span to count.
        quotes: ``"standard"`` or ``"ragas"`` (see :data:`QuoteStyle`).

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"answer": ["It is “the capital of France”."],
        ...                    "sources": [["Paris is the capital of France."]]})
        >>> df.select(pr.quoted_spans("answer", "sources")).unnest("quoted_spans").row(0)
        (1, 1, 1.0)
    """
    return _plugin(
        "quoted_spans",
        [answer, sources],
        {"casefold": casefold, "min_len": min_len, "quotes": quotes},
    )


def citation_alignment(
    answer: IntoExprColumn,
    sources: IntoExprColumn,
    *,
    casefold: bool | None = None,
    min_len: int | None = None,
    quotes: QuoteStyle | None = None,
) -> pl.Expr:
    """Dataset-level quoted-span citation alignment, as Ragas' ``quoted_spans_alignment``.

    An aggregation: one row per column (``select``) or per group (``group_by().agg()``), a struct
    ``citation_alignment`` with float fields ``citation_alignment_quoted_spans`` (Σ matched /
    Σ total, 0.0 when nothing is quoted), ``matched`` and ``total``. Options as in
    :func:`quoted_spans`; ``quotes="ragas"`` reproduces Ragas 0.4.3 exactly.
    """
    return _plugin(
        "citation_alignment",
        [answer, sources],
        {"casefold": casefold, "min_len": min_len, "quotes": quotes},
        aggregate=True,
    )


@_names_its_errors
def signature(metric: str, **options: Any) -> str:
    """The settings behind a metric's numbers, in sacrebleu's signature style.

    Takes the same keyword options as the metric's function.

    Example:
        >>> import polars_rag as pr
        >>> pr.signature("rouge", use_stemmer=True)
        'rouge|tok:rouge_score|stem:porter|version:rouge-score-0.1.2'
    """
    for option, value in options.items():
        _check_option_int("signature", option, value)
    if metric in _metric_ids():
        options = _with_defaults(metric, options)
    return _signature_of(metric, pickle.dumps(options, protocol=4))


def _bleu_options(
    tokenize: BleuTokenizer | None,
    smooth_method: SmoothMethod | None,
    smooth_value: float | None,
    lowercase: bool | None,
    use_effective_order: bool | None,
) -> dict[str, Any]:
    return {
        "tokenize": tokenize,
        "smooth_method": smooth_method,
        "smooth_value": smooth_value,
        "lowercase": lowercase,
        "use_effective_order": use_effective_order,
    }


def bleu(
    answer: IntoExprColumn,
    references: IntoExprColumn,
    *,
    tokenize: BleuTokenizer | None = None,
    smooth_method: SmoothMethod | None = None,
    smooth_value: float | None = None,
    lowercase: bool | None = None,
    use_effective_order: bool | None = None,
) -> pl.Expr:
    """Sentence BLEU in [0, 1]: sacrebleu 2.6.0 ``sentence_bleu(answer, refs).score / 100``.

    Several references combine as in sacrebleu: n-gram counts are clipped by the maximum count
    over the references and the closest reference length gives the brevity penalty.
    ``smooth_value`` defaults to sacrebleu's (0.1 for ``floor``, 1 for ``add-k``).

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"answer": ["the cat sat on the mat"], "ref": ["the cat sat on the mat"]})
        >>> round(df.select(pr.bleu("answer", "ref")).item(), 6)
        1.0
    """
    return _plugin(
        "bleu",
        [answer, references],
        _bleu_options(tokenize, smooth_method, smooth_value, lowercase, use_effective_order),
    )


def corpus_bleu(
    answer: IntoExprColumn,
    references: IntoExprColumn,
    *,
    tokenize: BleuTokenizer | None = None,
    smooth_method: SmoothMethod | None = None,
    smooth_value: float | None = None,
    lowercase: bool | None = None,
    use_effective_order: bool | None = None,
) -> pl.Expr:
    """Corpus BLEU in [0, 1] over a column or a group: sacrebleu ``corpus_bleu(...).score / 100``.

    An aggregation (``select`` or ``group_by().agg()``). Statistics are summed over the rows,
    as sacrebleu does; rows with a null answer or no reference are left out.
    """
    return _plugin(
        "corpus_bleu",
        [answer, references],
        _bleu_options(tokenize, smooth_method, smooth_value, lowercase, use_effective_order),
        aggregate=True,
    )


def chrf(
    answer: IntoExprColumn,
    references: IntoExprColumn,
    *,
    char_order: int | None = None,
    word_order: int | None = None,
    beta: int | None = None,
    lowercase: bool | None = None,
    whitespace: bool | None = None,
    eps_smoothing: bool | None = None,
) -> pl.Expr:
    """chrF in [0, 1] (``word_order=2`` gives chrF++): sacrebleu ``sentence_chrf(...).score / 100``.

    With several references the best-scoring one counts, as in sacrebleu.
    """
    return _plugin(
        "chrf",
        [answer, references],
        {
            "char_order": char_order,
            "word_order": word_order,
            "beta": beta,
            "lowercase": lowercase,
            "whitespace": whitespace,
            "eps_smoothing": eps_smoothing,
        },
    )

def rouge(
    answer: IntoExprColumn,
    references: IntoExprColumn,
    *,
    use_stemmer: bool | None = None,
    tokenizer: RougeTokenizer | None = None,
) -> pl.Expr:
    """ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum as rouge-score 0.1.2's ``RougeScorer``.

    Returns a struct ``rouge`` with fields ``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum``,
    each a struct of ``precision``, ``recall``, ``fmeasure``. Several references combine as
    ``score_multi``: per ROUGE type, the reference with the highest F-measure. ``rougeLsum``
    splits summaries on newlines. ``tokenizer="unicode"`` scores text of any script.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"answer": ["the cat sat"], "ref": ["the cat sat down"]})
        >>> df.select(pr.rouge("answer", "ref").struct.field("rouge1").struct.field("recall")).item()
        0.75
    """
    return _plugin(
        "rouge", [answer, references], {"use_stemmer": use_stemmer, "tokenizer": tokenizer}
    )


def exact_match(answer: IntoExprColumn, references: IntoExprColumn) -> pl.Expr:
    """1.0 when the answer equals a reference after lowercasing and collapsing whitespace, else 0.0."""
    return _plugin("exact_match", [answer, references])


def string_similarity(
    answer: IntoExprColumn,
    references: IntoExprColumn,
    *,
    distance: Distance | None = None,
) -> pl.Expr:
    """1 − rapidfuzz's normalised distance between answer and reference (best reference).

    Equal to Ragas' ``NonLLMStringSimilarity`` and to rapidfuzz 3.14.6.
    """
    return _plugin("string_similarity", [answer, references], {"distance": distance})


def string_presence(answer: IntoExprColumn, references: IntoExprColumn) -> pl.Expr:
    """1.0 when a reference occurs verbatim in the answer (Ragas ``StringPresence``), else 0.0."""
    return _plugin("string_presence", [answer, references])


def keyword_coverage(answer: IntoExprColumn, references: IntoExprColumn) -> pl.Expr:
    """Share of the reference's keywords found in the answer (best reference).

    Keywords are capitalised phrases ("Territory 118", "Rule C-1"), numbers with their sign,
    currency and percent ("293", "0.305%", "$604", "-0.133%"), and words of 4+ letters that are
    not stop words. Null when the reference has no keywords.
    """
    return _plugin("keyword_coverage", [answer, references])


def number_match(answer: IntoExprColumn, references: IntoExprColumn) -> pl.Expr:
    """Share of the reference's numbers present in the answer, compared as numbers (best reference).

    "$604" and "604" match, "1,000" and "1000" match, "604." is 604. Null when the reference
    has no numbers.
    """
    return _plugin("number_match", [answer, references])


def answer_completeness(answer: IntoExprColumn, references: IntoExprColumn) -> pl.Expr:
    """Mean of min(answer words / reference words, 1) and :func:`keyword_coverage` (best reference)."""
    return _plugin("answer_completeness", [answer, references])


def citation_indicators(
    answer: IntoExprColumn, *, indicators: Sequence[str] | None = None
) -> pl.Expr:
    """min(citation phrases found / 3, 1): does the answer say where its facts come from.

    The default phrases are "source:", "table:", "page", "document", "pdf", "according to",
    "based on" and "from", matched case-insensitively; pass ``indicators`` to replace them.
    """
    # None selects the default list; the key is always sent so the plugin gets its options.
    kwargs = {"indicators": None if indicators is None else list(indicators)}
    return _plugin("citation_indicators", [answer], kwargs)

def checks(answer: IntoExprColumn, checks: IntoExprColumn) -> pl.Expr:
    """Declarative per-question checks stored as data.

    ``checks`` is a ``list[struct{kind, value, values, weight, name}]`` column; ``kind`` is one of
    ``contains``, ``not_contains``, ``regex``, ``number``, ``any_of``, ``list_items``. Returns a
    struct ``checks`` with ``score`` (weighted share passed, null when a row has no checks) and
    ``failed`` (names of the failed checks). Every check of every row is validated before
    scoring: an invalid regex is an error naming the row and the check.
    """
    return _plugin("checks", [answer, checks])

# ------------------------------------------------------------------------------ retrieval

#: How a retrieved item is judged relevant: ``"auto"`` (from the column shapes), ``"text"``
#: (exact text), ``"id"``, ``"span"`` (character overlap in the same file) or ``"embedding"``
#: (cosine similarity).
Relevance = Literal["auto", "text", "id", "span", "embedding"]
#: Rank order: ``"order"`` (list order), ``"score"`` (score descending, ties keep list order),
#: ``"trec"`` (trec_eval's: score descending as float32, ties by id descending).
RankBy = Literal["order", "score", "trec"]
#: ``"standard"`` (trec_eval's definitions) or ``"datapizza"`` (datapizza-ai's metrics.py).
RetrievalCompat = Literal["standard", "datapizza"]
#: ``"standard"`` (merged intervals) or ``"chroma"`` (Chroma chunking_evaluation's formulas).
SpanCompat = Literal["standard", "chroma"]


def _ranked(
    name: str,
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    k: int | None,
    relevance: Relevance | None,
    min_overlap: int | None,
    min_overlap_fraction: float | None,
    similarity_threshold: float | None,
    rank_by: RankBy | None,
    compat: RetrievalCompat | None,
    alpha: float | None = None,
    gamma: float | None = None,
) -> pl.Expr:
    return _plugin(
        name,
        [retrieved, relevant],
        {
            "k": k,
            "relevance": relevance,
            "min_overlap": min_overlap,
            "min_overlap_fraction": _as_optional_float(name, "min_overlap_fraction", min_overlap_fraction),
            "similarity_threshold": _as_optional_float(name, "similarity_threshold", similarity_threshold),
            "rank_by": rank_by,
            "compat": compat,
            "alpha": _as_optional_float(name, "alpha", alpha),
            "gamma": _as_optional_float(name, "gamma", gamma),
        },
    )


def precision_at_k(
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    *,
    k: int | None = None,
    relevance: Relevance | None = None,
    min_overlap: int | None = None,
    min_overlap_fraction: float | None = None,
    similarity_threshold: float | None = None,
    rank_by: RankBy | None = None,
    compat: RetrievalCompat | None = None,
) -> pl.Expr:
    """Relevant items among the first ``k`` retrieved, divided by ``k`` (trec_eval ``P_k``).

    ``retrieved`` is a list per row in rank order: ``list[str]`` (texts or ids), a list of
    structs with ``text`` / ``id`` / ``file``, ``start``, ``end`` / ``score`` fields, or a list of
    embeddings. ``relevant`` is the question's ground truth in the same shapes (structs may carry
    a ``grade``). Null when a side is null or nothing is relevant; ``compat="datapizza"``
    reproduces datapizza-ai (null where it raises).

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"retrieved": [["a", "b", "c", "d"]], "relevant": [["a", "c", "e"]]})
        >>> df.select(pr.precision_at_k("retrieved", "relevant", k=2)).item()
        0.5
    """
    return _ranked("precision_at_k", retrieved, relevant, k, relevance, min_overlap,
                   min_overlap_fraction, similarity_threshold, rank_by, compat)


def recall_at_k(
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    *,
    k: int | None = None,
    relevance: Relevance | None = None,
    min_overlap: int | None = None,
    min_overlap_fraction: float | None = None,
    similarity_threshold: float | None = None,
    rank_by: RankBy | None = None,
    compat: RetrievalCompat | None = None,
) -> pl.Expr:
    """Relevant ground-truth items found among the first ``k`` retrieved / all relevant items.

    Equal to trec_eval ``recall_k``. Inputs and options as :func:`precision_at_k`.
    """
    return _ranked("recall_at_k", retrieved, relevant, k, relevance, min_overlap,
                   min_overlap_fraction, similarity_threshold, rank_by, compat)


def f1_at_k(
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    *,
    k: int | None = None,
    relevance: Relevance | None = None,
    min_overlap: int | None = None,
    min_overlap_fraction: float | None = None,
    similarity_threshold: float | None = None,
    rank_by: RankBy | None = None,
    compat: RetrievalCompat | None = None,
) -> pl.Expr:
    """Harmonic mean of :func:`precision_at_k` and :func:`recall_at_k` (0 when both are 0)."""
    return _ranked("f1_at_k", retrieved, relevant, k, relevance, min_overlap,
                   min_overlap_fraction, similarity_threshold, rank_by, compat)


def hit_rate_at_k(
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    *,
    k: int | None = None,
    relevance: Relevance | None = None,
    min_overlap: int | None = None,
    min_overlap_fraction: float | None = None,
    similarity_threshold: float | None = None,
    rank_by: RankBy | None = None,
) -> pl.Expr:
    """1.0 when a relevant item is among the first ``k`` retrieved, else 0.0."""
    return _ranked("hit_rate_at_k", retrieved, relevant, k, relevance, min_overlap,
                   min_overlap_fraction, similarity_threshold, rank_by, "standard")


def ndcg_at_k(
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    *,
    k: int | None = None,
    relevance: Relevance | None = None,
    min_overlap: int | None = None,
    min_overlap_fraction: float | None = None,
    similarity_threshold: float | None = None,
    rank_by: RankBy | None = None,
) -> pl.Expr:
    """nDCG over the first ``k`` ranks with linear gains (trec_eval ``ndcg_cut_k``).

    Grades come from a ``grade`` field of the ground-truth structs (1 when absent).
    """
    return _ranked("ndcg_at_k", retrieved, relevant, k, relevance, min_overlap,
                   min_overlap_fraction, similarity_threshold, rank_by, "standard")


def mrr(
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    *,
    k: int | None = None,
    relevance: Relevance | None = None,
    min_overlap: int | None = None,
    min_overlap_fraction: float | None = None,
    similarity_threshold: float | None = None,
    rank_by: RankBy | None = None,
) -> pl.Expr:
    """1 / rank of the first relevant item, 0 when none (trec_eval ``recip_rank``).

    Average it over queries for MRR; ``k`` cuts the list first.
    """
    return _ranked("mrr", retrieved, relevant, k, relevance, min_overlap,
                   min_overlap_fraction, similarity_threshold, rank_by, "standard")


def average_precision(
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    *,
    k: int | None = None,
    relevance: Relevance | None = None,
    min_overlap: int | None = None,
    min_overlap_fraction: float | None = None,
    similarity_threshold: float | None = None,
    rank_by: RankBy | None = None,
) -> pl.Expr:
    """Average precision of each query (trec_eval ``map``); average it over queries for MAP."""
    return _ranked("average_precision", retrieved, relevant, k, relevance, min_overlap,
                   min_overlap_fraction, similarity_threshold, rank_by, "standard")


def r_precision(
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    *,
    k: int | None = None,
    relevance: Relevance | None = None,
    min_overlap: int | None = None,
    min_overlap_fraction: float | None = None,
    similarity_threshold: float | None = None,
    rank_by: RankBy | None = None,
) -> pl.Expr:
    """Precision at R, R the number of relevant items (trec_eval ``Rprec``)."""
    return _ranked("r_precision", retrieved, relevant, k, relevance, min_overlap,
                   min_overlap_fraction, similarity_threshold, rank_by, "standard")


def hybrid_log_rank(
    retrieved: IntoExprColumn,
    relevant: IntoExprColumn,
    *,
    alpha: float | None = None,
    gamma: float | None = None,
    k: int | None = None,
    relevance: Relevance | None = None,
    min_overlap: int | None = None,
    min_overlap_fraction: float | None = None,
    similarity_threshold: float | None = None,
    rank_by: RankBy | None = None,
    compat: RetrievalCompat | None = None,
) -> pl.Expr:
    """``alpha * recall + (1 - alpha) * rank quality``, datapizza's hybrid log-rank score.

    Rank quality is the mean over relevant ground-truth items of
    ``1 - ln(1 + gamma (r - 1)) / ln(1 + gamma (n - 1))`` at each item's first rank ``r`` among
    the ``n`` retrieved (0 when not found).
    """
    return _ranked("hybrid_log_rank", retrieved, relevant, k, relevance, min_overlap,
                   min_overlap_fraction, similarity_threshold, rank_by, compat, alpha, gamma)


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


def span_iou(
    retrieved: IntoExprColumn, relevant_spans: IntoExprColumn, *, compat: SpanCompat | None = None
) -> pl.Expr:
    """Characters both cover / characters either covers (see :func:`span_precision`)."""
    return _plugin("span_iou", [retrieved, relevant_spans], {"compat": compat})


# ------------------------------------------------------------------------- golden datasets

FrameLike = Union[pl.DataFrame, pl.LazyFrame]

#: Item columns of a long (TREC-style) run and the ``retrieved`` struct fields they become.
_LONG_RUN_FIELDS = {"doc_id": "id", "text": "text", "file": "file", "start": "start", "end": "end", "score": "score"}


def _frame(frame: FrameLike) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _corpus_frame(corpus: FrameLike | dict[str, str]) -> pl.DataFrame:
    if isinstance(corpus, dict):
        return pl.DataFrame({"file": list(corpus), "text": list(corpus.values())}, schema={"file": pl.String, "text": pl.String})
    return _frame(corpus).select("file", "text")


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
    from polars_rag._internal import validate_golden as _validate

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
    rank order (by ``rank`` when present, else row order); other columns keep their first value.
    """
    df = _frame(run)
    fields = [pl.col(c).alias(f) for c, f in _LONG_RUN_FIELDS.items() if c in df.columns]
    others = [c for c in df.columns if c != id and c not in _LONG_RUN_FIELDS and c != "rank"]
    if "rank" in df.columns:
        df = df.sort("rank", maintain_order=True)
    return df.group_by(id, maintain_order=True).agg(
        pl.struct(fields).alias("retrieved"), *[pl.col(c).first() for c in others]
    )


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
    g = _frame(golden)
    r = _frame(run)
    if "retrieved" not in r.columns and "doc_id" in r.columns:
        r = collapse_run(r, id=id)
    def dup(df: pl.DataFrame) -> list[Any]:
        return df.group_by(id).len().filter(pl.col("len") > 1).sort(id)[id].to_list()

    frame = g.join(r.with_columns(pl.lit(True).alias("in_run")), on=id, how="left", suffix="_run").with_columns(
        pl.col("in_run").fill_null(False)
    )
    return GoldenJoin(
        frame=frame,
        missing=frame.filter(~pl.col("in_run"))[id].to_list(),
        # A null run id matches no golden row: it is reported here, never dropped silently.
        unknown=r.filter(pl.col(id).is_null() | ~pl.col(id).is_in(g[id].implode()))[id].to_list(),
        duplicate_golden=dup(g),
        duplicate_run=dup(r),
    )


# ------------------------------------------------------------------------ run vs baseline


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


# ---------------------------------------------------------------------------- quote localisation

#: ``"none"`` (corrected algorithm, default) or ``"soak"`` (soak 9c164e87's VerifyQuotes, bit for bit).
LocateCompat = Literal["none", "soak"]
#: How the best window is narrowed to the quote. ``"sliding_bm25"`` and ``"hybrid"`` are soak's
#: heuristics (their match ratio is a BM25 score) and need ``compat="soak"``.
Trim = Literal["fuzzy", "sliding_bm25", "hybrid", "off"]
#: Turns a list of texts into one vector per text.
Embedder = Callable[[list[str]], Sequence[Sequence[float]]]


def _locate_options(
    window_size: int | None,
    overlap: int | None,
    k1: float | None,
    b: float | None,
    ellipsis_max_gap: int | None,
    trim: Trim | None,
    min_match_ratio: float | None,
    expand_neighbors: int | None,
    context_chars: int | None,
    tokenizer: str | None,
    compat: LocateCompat | None,
) -> dict[str, Any]:
    return {
        "window_size": window_size,
        "overlap": overlap,
        "k1": k1,
        "b": b,
        "ellipsis_max_gap": ellipsis_max_gap,
        "trim": trim,
        "min_match_ratio": min_match_ratio,
        "expand_neighbors": expand_neighbors,
        "context_chars": context_chars,
        "tokenizer": tokenizer,
        "compat": compat,
    }


def locate_quotes(
    quotes: IntoExprColumn,
    sources: IntoExprColumn,
    *,
    window_size: int | None = None,
    overlap: int | None = None,
    k1: float | None = None,
    b: float | None = None,
    ellipsis_max_gap: int | None = None,
    trim: Trim | None = None,
    min_match_ratio: float | None = None,
    expand_neighbors: int | None = None,
    context_chars: int | None = None,
    tokenizer: Literal["unicode_words", "nltk"] | None = None,
    compat: LocateCompat | None = None,
) -> pl.Expr:
    """Where each quote is in its row's sources: a struct per row.

    ``quotes`` is a ``str`` column (one quote per row; explode :func:`extract_quotes` to
    locate the quotes of answers). ``sources`` is ``str`` (one document), ``list[str]``
    (unnamed documents: ``file`` is null, ``source`` is the position in the list) or
    ``list[struct{file, text}]``. A length-1 ``sources`` (``pl.lit(...)``) is one corpus shared
    by every row and indexed once; otherwise one index is built per distinct source list.

    Fields: ``file``, ``source``, ``start``, ``end`` (code points in that document, end
    exclusive), ``span_text``, ``context`` (±``context_chars``), ``bm25_score``, ``bm25_ratio``
    (top1 / (top2 + 1e-6)), ``match_ratio`` (difflib similarity of quote and span), ``found``
    (verbatim or ``match_ratio >= min_match_ratio``), ``has_ellipsis``, ``head_start`` …
    ``tail_end`` (ellipsis quotes), ``global_start``/``global_end`` (offsets in the sources
    joined by two newlines), ``cosine`` (null here; see :func:`embedding_cosine`) and
    ``error`` (why a row has no match: empty quote, empty sources). A null quote or null sources
    give a null row.

    Windows of ``window_size`` code points (default 400; ``compat="soak"``: 1.1 × the longest
    quote of the batch, capped at 500) overlap by ``overlap`` (30 %). BM25 is rank_bm25's
    BM25Okapi with ``k1``, ``b``.

    Example:
        >>> import polars as pl
        >>> import polars_rag as pr
        >>> df = pl.DataFrame({"quote": ["barely manage a mile"],
        ...                    "sources": [["At first I could barely manage a mile."]]})
        >>> m = df.select(pr.locate_quotes("quote", "sources")).unnest("locate_quotes")
        >>> m.select("source", "start", "end", "span_text", "found").row(0)
        (0, 17, 37, 'barely manage a mile', True)
    """
    options = _locate_options(
        window_size, overlap, k1, b, ellipsis_max_gap, trim, min_match_ratio, expand_neighbors, context_chars, tokenizer, compat
    )
    return _plugin("locate_quotes", [quotes, sources], options)


def extract_quotes(answer: IntoExprColumn, *, min_len: int | None = None, quotes: QuoteStyle | None = None) -> pl.Expr:
    """The quoted spans of each answer as ``list[str]``, as :func:`quoted_spans` counts them.

    Example:
        >>> import polars as pl
        >>> import polars_rag as pr
        >>> pl.select(pr.extract_quotes(pl.lit('He said “revenue grew by 12 percent” today.'))).item().to_list()
        ['revenue grew by 12 percent']
    """
    return _plugin("extract_quotes", [answer], {"casefold": True, "min_len": min_len, "quotes": quotes})


def embedding_cosine(a: IntoExprColumn, b: IntoExprColumn) -> pl.Expr:
    """Row-wise cosine similarity of two embedding columns (``list[float]`` or
    ``array[float, d]``): 0.0 for a zero vector, an error naming the row when dimensions differ.

    Example:
        >>> import polars as pl
        >>> import polars_rag as pr
        >>> df = pl.DataFrame({"a": [[0.8, 0.6], [0.0, 0.0]], "b": [[1.0, 0.0], [1.0, 0.0]]})
        >>> df.select(pr.embedding_cosine("a", "b")).to_series().to_list()
        [0.8, 0.0]
    """
    return _plugin("embedding_cosine", [a, b])


class LocatedQuotes(NamedTuple):
    """What :func:`locate_quotes_in_corpus` returns."""

    #: One row per quote, in input order: ``quote`` and the fields of :func:`locate_quotes`.
    quotes: pl.DataFrame
    #: The aggregate statistics as ``variable``, ``value`` rows.
    stats: pl.DataFrame
    #: The same statistics as soak's melted ``variable,value`` CSV text.
    stats_csv: str


def _embedding_series(name: str, vectors: Sequence[Sequence[float]], n: int) -> pl.Series:
    rows = [list(map(float, v)) for v in vectors]
    if len(rows) != n:
        raise ValueError(f"locate_quotes: the embedder returned {len(rows)} vectors for {n} texts")
    return pl.Series(name, rows, dtype=pl.List(pl.Float64))


@_names_its_errors
def locate_quotes_in_corpus(
    quotes: Sequence[str] | pl.Series,
    corpus: FrameLike | dict[str, str],
    *,
    embed: Embedder | None = None,
    xlsx: str | Path | None = None,
    stats_csv: str | Path | None = None,
    window_size: int | None = None,
    overlap: int | None = None,
    k1: float | None = None,
    b: float | None = None,
    ellipsis_max_gap: int | None = None,
    trim: Trim | None = None,
    min_match_ratio: float | None = None,
    expand_neighbors: int | None = None,
    context_chars: int | None = None,
    tokenizer: Literal["unicode_words", "nltk"] | None = None,
    compat: LocateCompat | None = None,
) -> LocatedQuotes:
    """Every quote located in one shared corpus (the soak case, e.g. interview transcripts).

    ``corpus`` is a ``file``, ``text`` table or a ``{file: text}`` dict, in the order the
    documents are joined. ``embed`` (a callable from a list of texts to one vector each) fills
    ``cosine`` between each quote and its span. ``xlsx`` writes the workbook (least confident
    first) and ``stats_csv`` the melted statistics. Options as in :func:`locate_quotes`;
    ``compat="soak"`` reproduces soak 9c164e87 for the whole batch.

    Example:
        >>> import polars_rag as pr
        >>> corpus = {"a.txt": "Hills are the worst part of any route.", "b.txt": "I love the sea."}
        >>> got = pr.locate_quotes_in_corpus(["the worst part", "a dog"], corpus)
        >>> got.quotes.select("file", "start", "end", "found").rows()
        [('a.txt', 10, 24, True), ('b.txt', 0, 6, False)]
    """
    options = _locate_options(
        window_size, overlap, k1, b, ellipsis_max_gap, trim, min_match_ratio, expand_neighbors, context_chars, tokenizer, compat
    )
    for option, value in options.items():
        _check_option_int("locate_quotes_in_corpus", option, value)
    options = _with_defaults("locate_quotes", options)
    packed = pickle.dumps(options, protocol=4)
    series = quotes if isinstance(quotes, pl.Series) else pl.Series("quote", list(quotes), dtype=pl.String)
    located = _locate_table(series.cast(pl.String), _corpus_frame(corpus), packed)
    if embed is not None:
        texts = located["quote"].fill_null("").to_list()
        spans = located["span_text"].fill_null("").to_list()
        vectors = pl.DataFrame(
            [_embedding_series("q", embed(texts), len(texts)), _embedding_series("s", embed(spans), len(spans))]
        )
        cos = vectors.select(embedding_cosine("q", "s")).to_series()
        located = located.with_columns(
            pl.when(pl.col("span_text").is_not_null()).then(cos).otherwise(None).alias("cosine")
        )
    stats, csv = _locate_stats(located, packed)
    if xlsx is not None:
        _write_locate_workbook(located, str(xlsx), packed)
    if stats_csv is not None:
        _write_atomically(Path(stats_csv), csv.encode("utf-8"))
    return LocatedQuotes(located, stats, csv)


def _document_defaults() -> None:
    """Adds each metric function's defaults, read from the library, to its docstring, so the
    documentation never restates a default by hand."""
    import inspect

    for metric in _metric_ids():
        function = globals().get(metric)
        if function is None or not function.__doc__:
            continue
        parameters = inspect.signature(function).parameters
        shown = ", ".join(f"``{key}={value!r}``" for key, value in _defaults(metric).items() if key in parameters)
        if shown:
            function.__doc__ = (
                function.__doc__.rstrip() + f"\n\n    Options left at ``None`` take the library's defaults: {shown}.\n"
            )


_document_defaults()


def _namespace_method(function: Callable[..., pl.Expr]) -> Callable[..., pl.Expr]:
    """A ``.rag`` method forwarding to ``function`` with the expression as its first argument,
    with the function's signature (less that argument) for ``help()`` and editors."""
    import inspect

    def method(self: RagNamespace, *args: Any, **kwargs: Any) -> pl.Expr:
        return function(self._expr, *args, **kwargs)

    signature = inspect.signature(function)
    rest = list(signature.parameters.values())[1:]
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(parameters=[this, *rest])  # type: ignore[attr-defined]
    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = f"See :func:`polars_rag.{function.__name__}`."
    return method


@pl.api.register_expr_namespace("rag")
class RagNamespace:
    """``pl.col("answer").rag.<metric>(...)``: forwards to the typed functions, one method per
    metric id of the library's table (the first argument is the expression)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def __getattr__(self, name: str) -> Any:
        # Only for type checkers: the methods are set on the class below.
        raise AttributeError(f"'.rag' has no metric '{name}'; polars_rag.metric_ids() lists them")


for _metric in _metric_ids():
    setattr(RagNamespace, _metric, _namespace_method(globals()[_metric]))
