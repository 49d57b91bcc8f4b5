"""Answer metrics: quoted-span citation alignment, BLEU, chrF, ROUGE and the lexical checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TypedDict

import polars as pl

from polars_rag._common import IntoExprColumn, _plugin

__all__ = [
    "BleuOptions",
    "BleuTokenizer",
    "ChrfOptions",
    "Distance",
    "ExactMatchCompat",
    "QuoteStyle",
    "QuotedSpanOptions",
    "RougeOptions",
    "RougeTokenizer",
    "SmoothMethod",
    "TextCompat",
    "answer_completeness",
    "bleu",
    "checks",
    "chrf",
    "citation_alignment",
    "citation_indicators",
    "corpus_bleu",
    "corpus_chrf",
    "exact_match",
    "keyword_coverage",
    "number_match",
    "quoted_spans",
    "rouge",
    "string_presence",
    "string_similarity",
]

if TYPE_CHECKING:
    from typing_extensions import Unpack

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

#: ``"standard"`` (lowercased, whitespace collapsed) or ``"ragas"`` (raw strings, Ragas' ``ExactMatch``).
ExactMatchCompat = Literal["standard", "ragas"]

#: ``"standard"`` (sacrebleu / rouge-score) or ``"datapizza"`` (datapizza-ai's ``bleu_score``,
#: ``corpus_bleu_score``, ``rouge_score``, ``corpus_rouge_scores``).
TextCompat = Literal["standard", "datapizza"]

#: Edit distances of :func:`string_similarity` (rapidfuzz's).
Distance = Literal["levenshtein", "hamming", "jaro", "jaro_winkler"]


class QuotedSpanOptions(TypedDict, total=False):
    """Keyword options of :func:`quoted_spans` and :func:`citation_alignment`; each left out (or
    ``None``) takes the library's default (:func:`~polars_rag.option_defaults`).

    ``casefold``: collapse whitespace and lowercase both sides before matching. ``min_len``:
    minimum number of words for a quoted span to count. ``quotes``: :data:`QuoteStyle`.
    """

    casefold: bool | None
    min_len: int | None
    quotes: QuoteStyle | None


class BleuOptions(TypedDict, total=False):
    """Keyword options of :func:`bleu` and :func:`corpus_bleu`, sacrebleu's: ``tokenize``
    (:data:`BleuTokenizer`), ``smooth_method`` (:data:`SmoothMethod`), ``smooth_value`` (default:
    sacrebleu's, 0.1 for ``floor`` and 1 for ``add-k``), ``lowercase``, ``use_effective_order``;
    ``compat`` (:data:`TextCompat`, :func:`bleu` only)."""

    tokenize: BleuTokenizer | None
    smooth_method: SmoothMethod | None
    smooth_value: float | None
    lowercase: bool | None
    use_effective_order: bool | None
    compat: TextCompat | None


class ChrfOptions(TypedDict, total=False):
    """Keyword options of :func:`chrf` and :func:`corpus_chrf`, sacrebleu's: ``char_order``,
    ``word_order`` (2 gives chrF++), ``beta``, ``lowercase``, ``whitespace``, ``eps_smoothing``."""

    char_order: int | None
    word_order: int | None
    beta: int | None
    lowercase: bool | None
    whitespace: bool | None
    eps_smoothing: bool | None


class RougeOptions(TypedDict, total=False):
    """Keyword options of :func:`rouge`: ``use_stemmer`` (Porter, as rouge-score),
    ``tokenizer`` (:data:`RougeTokenizer`) and ``compat`` (:data:`TextCompat`)."""

    use_stemmer: bool | None
    tokenizer: RougeTokenizer | None
    compat: TextCompat | None


def quoted_spans(
    answer: IntoExprColumn, sources: IntoExprColumn, **options: Unpack[QuotedSpanOptions]
) -> pl.Expr:
    """Quoted spans of each answer found verbatim in its sources.

    Returns a struct column ``quoted_spans`` with fields ``matched: u32``, ``total: u32`` and
    ``score: f64`` (``matched / total``, null when the answer quotes nothing). A null answer gives
    a null row; null or empty sources count the spans and match none.

    Args:
        answer: string column of answers.
        sources: ``list[str]`` column of passages per answer, a ``str`` column (one passage), or a
            list of structs with a ``text`` field (a ``retrieved`` column).
        options: ``casefold``, ``min_len``, ``quotes`` (see :class:`QuotedSpanOptions`).

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
        options,
        accepted=QuotedSpanOptions,
    )


def citation_alignment(
    answer: IntoExprColumn, sources: IntoExprColumn, **options: Unpack[QuotedSpanOptions]
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
        options,
        accepted=QuotedSpanOptions,
        aggregate=True,
    )


def bleu(
    answer: IntoExprColumn, references: IntoExprColumn, **options: Unpack[BleuOptions]
) -> pl.Expr:
    """Sentence BLEU in [0, 1]: sacrebleu 2.6.0 ``sentence_bleu(answer, refs).score / 100``.

    Several references combine as in sacrebleu: n-gram counts are clipped by the maximum count
    over the references and the closest reference length gives the brevity penalty.
    ``smooth_value`` defaults to sacrebleu's (0.1 for ``floor``, 1 for ``add-k``).

    ``compat="datapizza"`` is datapizza-ai's ``bleu_score`` (0.0 without references; an empty
    answer scores 1.0 when every reference is empty, else 0.0); with a ``list[str]`` answer column
    (several answers per row, e.g. retrieved chunks), its ``corpus_bleu_score``: per reference,
    the best BLEU of any answer against it alone, averaged (null without references, where
    datapizza raises).

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"answer": ["the cat sat on the mat"], "ref": ["the cat sat on the mat"]})
        >>> round(df.select(pr.bleu("answer", "ref")).item(), 6)
        1.0
    """
    return _plugin(
        "bleu",
        [answer, references],
        options,
        accepted=BleuOptions,
    )


def corpus_bleu(
    answer: IntoExprColumn, references: IntoExprColumn, **options: Unpack[BleuOptions]
) -> pl.Expr:
    """Corpus BLEU in [0, 1] over a column or a group: sacrebleu ``corpus_bleu(...).score / 100``.

    An aggregation (``select`` or ``group_by().agg()``). Statistics are summed over the rows,
    as sacrebleu does; rows with a null answer or no reference are left out.
    """
    return _plugin(
        "corpus_bleu",
        [answer, references],
        options,
        accepted=BleuOptions,
        aggregate=True,
    )


def chrf(
    answer: IntoExprColumn, references: IntoExprColumn, **options: Unpack[ChrfOptions]
) -> pl.Expr:
    """chrF in [0, 1] (``word_order=2`` gives chrF++): sacrebleu ``sentence_chrf(...).score / 100``.

    With several references the best-scoring one counts, as in sacrebleu.
    """
    return _plugin(
        "chrf",
        [answer, references],
        options,
        accepted=ChrfOptions,
    )

def corpus_chrf(
    answer: IntoExprColumn, references: IntoExprColumn, **options: Unpack[ChrfOptions]
) -> pl.Expr:
    """Corpus chrF in [0, 1] over a column or a group: sacrebleu ``corpus_chrf(...).score / 100``.

    An aggregation (``select`` or ``group_by().agg()``). Each row contributes the n-gram
    statistics of its best reference; the statistics are summed over the rows and scored once, as
    sacrebleu does. Rows with a null answer or no reference are left out. Options as :func:`chrf`.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"answer": ["the cat sat", "a dog"], "ref": ["the cat sat", "a dog ran"]})
        >>> round(df.select(pr.corpus_chrf("answer", "ref")).item(), 4)  # sacrebleu: 0.7657
        0.7657
    """
    return _plugin(
        "corpus_chrf",
        [answer, references],
        options,
        accepted=ChrfOptions,
        aggregate=True,
    )


def rouge(
    answer: IntoExprColumn, references: IntoExprColumn, **options: Unpack[RougeOptions]
) -> pl.Expr:
    """ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum as rouge-score 0.1.2's ``RougeScorer``.

    Returns a struct ``rouge`` with fields ``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum``,
    each a struct of ``precision``, ``recall``, ``fmeasure``. Several references combine as
    ``score_multi``: per ROUGE type, the reference with the highest F-measure. ``rougeLsum``
    splits summaries on newlines. ``tokenizer="unicode"`` scores text of any script.

    ``compat="datapizza"`` is datapizza-ai's ``corpus_rouge_scores`` over the row's answers (a
    ``str`` or ``list[str]`` column) and references: per reference and ROUGE type, the answer with
    the highest recall (the first on ties), averaged; stemmed, zeros for an empty text, rougeLsum
    null, null without references. For one answer and one reference it is datapizza's
    ``rouge_score``.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"answer": ["the cat sat"], "ref": ["the cat sat down"]})
        >>> df.select(pr.rouge("answer", "ref").struct.field("rouge1").struct.field("recall")).item()
        0.75
    """
    return _plugin("rouge", [answer, references], options, accepted=RougeOptions)


def exact_match(
    answer: IntoExprColumn, references: IntoExprColumn, *, compat: ExactMatchCompat | None = None
) -> pl.Expr:
    """1.0 when the answer equals a reference after lowercasing and collapsing whitespace, else
    0.0; ``compat="ragas"`` compares the raw strings, as Ragas 0.4.3's ``ExactMatch``.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"answer": [" PARIS "], "ref": ["paris"]})
        >>> df.select(pr.exact_match("answer", "ref"), pr.exact_match("answer", "ref", compat="ragas").alias("raw")).row(0)
        (1.0, 0.0)
    """
    return _plugin("exact_match", [answer, references], {"compat": compat})


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
    return _plugin("citation_indicators", [answer], {"indicators": indicators})

def checks(answer: IntoExprColumn, checks: IntoExprColumn) -> pl.Expr:
    """Declarative per-question checks stored as data.

    ``checks`` is a ``list[struct{kind, value, values, weight, name}]`` column; ``kind`` is one of
    ``contains``, ``not_contains``, ``regex``, ``number``, ``any_of``, ``list_items``. Returns a
    struct ``checks`` with ``score`` (weighted share passed, null when a row has no checks) and
    ``failed`` (names of the failed checks). Every check of every row is validated before
    scoring: an invalid regex is an error naming the row and the check.
    """
    return _plugin("checks", [answer, checks])
