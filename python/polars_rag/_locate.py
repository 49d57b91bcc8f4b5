"""Quote localisation: where each quote is in its sources."""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, NamedTuple, TypedDict

import polars as pl

from polars_rag._answer import QuoteStyle
from polars_rag._common import (
    FrameLike,
    IntoExprColumn,
    _accepted_options,
    _corpus_frame,
    _names_its_errors,
    _plugin,
    _with_defaults,
    _write_atomically,
)
from polars_rag._embed import embed as _embed_expr
from polars_rag._internal import locate_stats as _locate_stats
from polars_rag._internal import locate_table as _locate_table
from polars_rag._internal import write_locate_workbook as _write_locate_workbook
from polars_rag._settings import Embedder

__all__ = [
    "LocateCompat",
    "LocateOptions",
    "LocatedQuotes",
    "Trim",
    "embedding_cosine",
    "extract_quotes",
    "locate_quotes",
    "locate_quotes_in_corpus",
]

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: ``"none"`` (corrected algorithm, default) or ``"soak"`` (soak 9c164e87's VerifyQuotes, bit for bit).
LocateCompat = Literal["none", "soak"]
#: How the best window is narrowed to the quote. ``"sliding_bm25"`` and ``"hybrid"`` are soak's
#: heuristics (their match ratio is a BM25 score) and need ``compat="soak"``.
Trim = Literal["fuzzy", "sliding_bm25", "hybrid", "off"]
#: Turns a list of texts into one vector per text.
EmbedFunction = Callable[[list[str]], Sequence[Sequence[float]]]


class LocateOptions(TypedDict, total=False):
    """Keyword options of :func:`locate_quotes` and :func:`locate_quotes_in_corpus`; each left out
    (or ``None``) takes the library's default (:func:`~polars_rag.option_defaults`).

    ``window_size`` / ``overlap``: BM25 windows in code points and their overlap; ``k1``, ``b``:
    BM25Okapi's parameters; ``ellipsis_max_gap``: the largest gap between the parts of a quote
    with an ellipsis; ``trim``: :data:`Trim`; ``min_match_ratio``: the similarity at which a quote
    counts as found; ``expand_neighbors``: windows added on each side before trimming;
    ``context_chars``: the width of ``context``; ``tokenizer``: ``"unicode_words"`` or
    ``"nltk"``; ``compat``: :data:`LocateCompat`.
    """

    window_size: int | None
    overlap: int | None
    k1: float | None
    b: float | None
    ellipsis_max_gap: int | None
    trim: Trim | None
    min_match_ratio: float | None
    expand_neighbors: int | None
    context_chars: int | None
    tokenizer: Literal["unicode_words", "nltk"] | None
    compat: LocateCompat | None


def locate_quotes(
    quotes: IntoExprColumn,
    sources: IntoExprColumn,
    *,
    embedder: Embedder | None = None,
    **options: Unpack[LocateOptions],
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
    joined by two newlines), ``cosine`` and ``error`` (why a row has no match: empty quote,
    empty sources). A null quote or null sources give a null row.

    ``cosine`` is the similarity of the quote and its span under ``embedder``'s model (soak's
    embedding stage; ``pr.Embedder()`` is the local model of :func:`default_model_dir`); null
    without one, and where nothing was located.

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
    _accepted_options("locate_quotes", options, LocateOptions)
    given: dict[str, Any] = {key: options.get(key) for key in LocateOptions.__annotations__}
    if embedder is not None:
        if not isinstance(embedder, Embedder):
            raise TypeError(f"locate_quotes: embedder must be a polars_rag.Embedder, got {embedder!r}")
        given["embedder"] = embedder.settings()
    return _plugin("locate_quotes", [quotes, sources], given)


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
    embed: EmbedFunction | Embedder | bool | None = None,
    xlsx: str | Path | None = None,
    stats_csv: str | Path | None = None,
    **options: Unpack[LocateOptions],
) -> LocatedQuotes:
    """Every quote located in one shared corpus (the soak case, e.g. interview transcripts).

    ``corpus`` is a ``file``, ``text`` table or a ``{file: text}`` dict, in the order the
    documents are joined. ``embed`` fills ``cosine`` between each quote and its span (soak's
    embedding stage): ``True`` for the local model (:func:`default_model_dir`), an
    :class:`Embedder`, or a callable from a list of texts to one vector each. ``xlsx`` writes the workbook (least confident
    first) and ``stats_csv`` the melted statistics. Options as in :func:`locate_quotes`;
    ``compat="soak"`` reproduces soak 9c164e87 for the whole batch.

    Example:
        >>> import polars_rag as pr
        >>> corpus = {"a.txt": "Hills are the worst part of any route.", "b.txt": "I love the sea."}
        >>> got = pr.locate_quotes_in_corpus(["the worst part", "a dog"], corpus)
        >>> got.quotes.select("file", "start", "end", "found").rows()
        [('a.txt', 10, 24, True), ('b.txt', 0, 6, False)]
    """
    _accepted_options("locate_quotes_in_corpus", options, LocateOptions)
    given = {key: options.get(key) for key in LocateOptions.__annotations__}
    packed = pickle.dumps(_with_defaults("locate_quotes", given), protocol=4)
    series = quotes if isinstance(quotes, pl.Series) else pl.Series("quote", list(quotes), dtype=pl.String)
    located = _locate_table(series.cast(pl.String), _corpus_frame(corpus), packed)
    if embed is True or isinstance(embed, Embedder):
        model = embed if isinstance(embed, Embedder) else Embedder()
        vectors = pl.DataFrame(
            {"q": located["quote"].fill_null(""), "s": located["span_text"].fill_null("")}
        ).select(_embed_expr("q", embedder=model), _embed_expr("s", embedder=model))
    elif callable(embed):
        texts = located["quote"].fill_null("").to_list()
        spans = located["span_text"].fill_null("").to_list()
        vectors = pl.DataFrame(
            [_embedding_series("q", embed(texts), len(texts)), _embedding_series("s", embed(spans), len(spans))]
        )
    elif embed is not None and embed is not False:
        raise TypeError(f"locate_quotes_in_corpus: embed must be True, an Embedder or a callable, got {embed!r}")
    if embed is not None and embed is not False:
        cos = vectors.select(embedding_cosine("q", "s")).to_series()
        located = located.with_columns(
            pl.when(pl.col("span_text").is_not_null()).then(cos).otherwise(None).alias("cosine")
        )
    stats, csv = _locate_stats(located, packed)
    if xlsx is not None:
        left_out = _write_locate_workbook(located, str(xlsx), packed)
        if left_out:
            warnings.warn(
                f"locate_quotes_in_corpus: the {left_out:,} most confident located quotes do not fit in one worksheet; "
                f"{xlsx} holds the 1,048,575 least confident, the returned table holds all",
                stacklevel=2,
            )
    if stats_csv is not None:
        _write_atomically(Path(stats_csv), csv.encode("utf-8"))
    return LocatedQuotes(located, stats, csv)
