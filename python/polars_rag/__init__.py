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

import pickle
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Sequence, Union

import polars as pl
from polars.plugins import register_plugin_function

from polars_rag._internal import __version__
from polars_rag._internal import metric_ids as _metric_ids
from polars_rag._internal import signature_of as _signature_of

__all__ = [
    "__version__",
    "checks",
    "answer_completeness",
    "citation_indicators",
    "keyword_coverage",
    "number_match",
    "exact_match",
    "string_presence",
    "string_similarity",
    "Distance",
    "bleu",
    "chrf",
    "corpus_bleu",
    "BleuTokenizer",
    "SmoothMethod",
    "citation_alignment",
    "metric_ids",
    "quoted_spans",
    "rouge",
    "signature",
    "IntoExprColumn",
    "QuoteStyle",
    "RougeTokenizer",
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


def _plugin(
    name: str,
    args: Sequence[IntoExprColumn],
    kwargs: Optional[Dict[str, Any]] = None,
    *,
    aggregate: bool = False,
) -> pl.Expr:
    """Calls the plugin function ``name``; its output column is named after the metric."""
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name=name,
        args=list(args),
        kwargs=kwargs or {},
        is_elementwise=not aggregate,
        returns_scalar=aggregate,
    ).alias(name)


def metric_ids() -> List[str]:
    """The metric ids of this build, from the library's registry."""
    return list(_metric_ids())


def quoted_spans(
    answer: IntoExprColumn,
    sources: IntoExprColumn,
    *,
    casefold: bool = True,
    min_len: int = 3,
    quotes: QuoteStyle = "standard",
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
    casefold: bool = True,
    min_len: int = 3,
    quotes: QuoteStyle = "standard",
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


def signature(metric: str, **options: Any) -> str:
    """The settings behind a metric's numbers, in sacrebleu's signature style.

    Takes the same keyword options as the metric's function.

    Example:
        >>> import polars_rag as pr
        >>> pr.signature("rouge", use_stemmer=True)
        'rouge|tok:rouge_score|stem:porter|version:rouge-score-0.1.2'
    """
    return _signature_of(metric, pickle.dumps(options, protocol=4))











def _bleu_options(tokenize, smooth_method, smooth_value, lowercase, use_effective_order):
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
    tokenize: BleuTokenizer = "13a",
    smooth_method: SmoothMethod = "exp",
    smooth_value: Optional[float] = None,
    lowercase: bool = False,
    use_effective_order: bool = True,
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
    tokenize: BleuTokenizer = "13a",
    smooth_method: SmoothMethod = "exp",
    smooth_value: Optional[float] = None,
    lowercase: bool = False,
    use_effective_order: bool = False,
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
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
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
    use_stemmer: bool = False,
    tokenizer: RougeTokenizer = "rouge_score",
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
    distance: Distance = "levenshtein",
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
    answer: IntoExprColumn, *, indicators: Optional[Sequence[str]] = None
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

@pl.api.register_expr_namespace("rag")
class RagNamespace:
    """``pl.col("answer").rag.<metric>(...)``: forwards to the typed functions."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def quoted_spans(
        self,
        sources: IntoExprColumn,
        *,
        casefold: bool = True,
        min_len: int = 3,
        quotes: QuoteStyle = "standard",
    ) -> pl.Expr:
        """See :func:`polars_rag.quoted_spans`."""
        return quoted_spans(self._expr, sources, casefold=casefold, min_len=min_len, quotes=quotes)

    def citation_alignment(
        self,
        sources: IntoExprColumn,
        *,
        casefold: bool = True,
        min_len: int = 3,
        quotes: QuoteStyle = "standard",
    ) -> pl.Expr:
        """See :func:`polars_rag.citation_alignment`."""
        return citation_alignment(
            self._expr, sources, casefold=casefold, min_len=min_len, quotes=quotes
        )




    def rouge(
        self,
        references: IntoExprColumn,
        *,
        use_stemmer: bool = False,
        tokenizer: RougeTokenizer = "rouge_score",
    ) -> pl.Expr:
        """See :func:`polars_rag.rouge`."""
        return rouge(self._expr, references, use_stemmer=use_stemmer, tokenizer=tokenizer)

    def bleu(
        self,
        references: IntoExprColumn,
        *,
        tokenize: BleuTokenizer = "13a",
        smooth_method: SmoothMethod = "exp",
        smooth_value: Optional[float] = None,
        lowercase: bool = False,
        use_effective_order: bool = True,
    ) -> pl.Expr:
        """See :func:`polars_rag.bleu`."""
        return bleu(
            self._expr,
            references,
            tokenize=tokenize,
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            lowercase=lowercase,
            use_effective_order=use_effective_order,
        )

    def corpus_bleu(
        self,
        references: IntoExprColumn,
        *,
        tokenize: BleuTokenizer = "13a",
        smooth_method: SmoothMethod = "exp",
        smooth_value: Optional[float] = None,
        lowercase: bool = False,
        use_effective_order: bool = False,
    ) -> pl.Expr:
        """See :func:`polars_rag.corpus_bleu`."""
        return corpus_bleu(
            self._expr,
            references,
            tokenize=tokenize,
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            lowercase=lowercase,
            use_effective_order=use_effective_order,
        )

    def chrf(
        self,
        references: IntoExprColumn,
        *,
        char_order: int = 6,
        word_order: int = 0,
        beta: int = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
    ) -> pl.Expr:
        """See :func:`polars_rag.chrf`."""
        return chrf(
            self._expr,
            references,
            char_order=char_order,
            word_order=word_order,
            beta=beta,
            lowercase=lowercase,
            whitespace=whitespace,
            eps_smoothing=eps_smoothing,
        )

    def exact_match(self, references: IntoExprColumn) -> pl.Expr:
        """See :func:`polars_rag.exact_match`."""
        return exact_match(self._expr, references)

    def string_similarity(
        self, references: IntoExprColumn, *, distance: Distance = "levenshtein"
    ) -> pl.Expr:
        """See :func:`polars_rag.string_similarity`."""
        return string_similarity(self._expr, references, distance=distance)

    def string_presence(self, references: IntoExprColumn) -> pl.Expr:
        """See :func:`polars_rag.string_presence`."""
        return string_presence(self._expr, references)

    def keyword_coverage(self, references: IntoExprColumn) -> pl.Expr:
        """See :func:`polars_rag.keyword_coverage`."""
        return keyword_coverage(self._expr, references)

    def number_match(self, references: IntoExprColumn) -> pl.Expr:
        """See :func:`polars_rag.number_match`."""
        return number_match(self._expr, references)

    def answer_completeness(self, references: IntoExprColumn) -> pl.Expr:
        """See :func:`polars_rag.answer_completeness`."""
        return answer_completeness(self._expr, references)

    def citation_indicators(self, *, indicators: Optional[Sequence[str]] = None) -> pl.Expr:
        """See :func:`polars_rag.citation_indicators`."""
        return citation_indicators(self._expr, indicators=indicators)

    def checks(self, checks_column: IntoExprColumn) -> pl.Expr:
        """See :func:`polars_rag.checks`."""
        return checks(self._expr, checks_column)

