"""The errors polars-rag raises, one class per kind of problem.

Every function of the package that runs the library (:func:`polars_rag.score`,
:func:`polars_rag.compare` and the other table functions, the judge and embedding helpers,
:mod:`polars_rag.ray`) raises one of these classes, chosen by the kind the library gives its
error, never by its message. Each also derives from the built-in class a caller would catch
anyway, so code written against ``ValueError`` or ``FileNotFoundError`` keeps working::

    import polars_rag as pr
    from polars_rag.exceptions import BudgetSpentError, NotFoundError

    try:
        result = pr.score("run.parquet", "golden.parquet", judge=judge)
    except BudgetSpentError:
        ...  # what was judged is cached: raise max_calls and run again to resume
    except NotFoundError as e:  # also a FileNotFoundError
        print(e.kind, e)

=====================  ==================================  ====================================
class                  also a                              when
=====================  ==================================  ====================================
InvalidInputError      ``ValueError``                      data the job cannot score (a column,
                                                           a dtype, a span, a setting's value)
UnknownMetricError     ``InvalidInputError``               an id not in the metric table
InvalidOptionsError    ``InvalidInputError``               a metric option out of range
IntegrityError         ``ValueError``                      tables that do not belong together
NotFoundError          ``FileNotFoundError``               a file or folder the job was given
StorageError           ``OSError``                         reading or writing failed otherwise
EngineError            ``RuntimeError``                    a judge or embedding model failed
InvalidReplyError      ``EngineError``                     a reply that does not fit its schema
BudgetSpentError       ``EngineError``                     the judge's budget ran out
Interrupted            ``KeyboardInterrupt``               Ctrl-C stopped the engine's calls
=====================  ==================================  ====================================

The command line reports the same kinds as exit statuses: 2 for the first six (as a usage
error), 4 for an engine, 5 for a spent budget, 130 for Ctrl-C; 1 means it ran and found
something (a failed gate, ``validate`` problems), 3 a gate that could not decide.

Errors raised while Polars evaluates an expression (``df.select(pr.bleu(...))``) are Polars' own
(``polars.exceptions.ComputeError``), whose message starts with the metric's name: Polars raises
them, not this package.
"""

from __future__ import annotations

__all__ = [
    "BudgetSpentError",
    "EngineError",
    "IntegrityError",
    "Interrupted",
    "InvalidInputError",
    "InvalidOptionsError",
    "InvalidReplyError",
    "NotFoundError",
    "PolarsRagError",
    "StorageError",
    "UnknownMetricError",
    "from_kind",
]


class PolarsRagError(Exception):
    """The base of every error polars-rag raises (but :class:`Interrupted`, a
    ``KeyboardInterrupt``). ``kind`` names the kind as the library does (``not_found``, ...)."""

    kind = "error"


class InvalidInputError(PolarsRagError, ValueError):
    """Input the job cannot score: a column missing or of the wrong type, a span out of its
    document, a setting's value. The message names the function, the column or setting, and
    the row when one is to blame."""

    kind = "invalid_input"


class UnknownMetricError(InvalidInputError):
    """A metric id that is not in the metric table (``polars-rag metrics`` lists them)."""

    kind = "unknown_metric"


class InvalidOptionsError(InvalidInputError):
    """A metric option outside what the metric accepts."""

    kind = "invalid_options"


class IntegrityError(PolarsRagError, ValueError):
    """Tables that do not belong together: the parts of a job that do not add up to it, a
    summary or cache file another job or version wrote."""

    kind = "integrity"


class NotFoundError(PolarsRagError, FileNotFoundError):
    """A file or folder the job was given does not exist."""

    kind = "not_found"


class StorageError(PolarsRagError, OSError):
    """Reading or writing a file failed for another reason than its absence (permissions, a
    full disk, a folder where a file was expected)."""

    kind = "io"


class EngineError(PolarsRagError, RuntimeError):
    """A judge or embedding model could not do its work: its server failed or could not be
    reached, its cache could not be opened, or the build has no such engine."""

    kind = "engine"


class InvalidReplyError(EngineError):
    """A judge's reply that does not say what its prompt asks."""

    kind = "invalid_reply"


class BudgetSpentError(EngineError):
    """The judge's budget (``max_calls``, ``max_total_tokens``, ``max_seconds``) ran out before
    every row was judged. The replies received are cached: a larger budget resumes the run."""

    kind = "budget_spent"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped the engine's calls; the replies received so far are cached. A
    ``KeyboardInterrupt``, so that ``except Exception`` does not swallow it."""

    kind = "interrupted"


_BY_KIND: dict[str, type[BaseException]] = {
    cls.kind: cls
    for cls in (
        InvalidInputError,
        UnknownMetricError,
        InvalidOptionsError,
        IntegrityError,
        NotFoundError,
        StorageError,
        EngineError,
        InvalidReplyError,
        BudgetSpentError,
        Interrupted,
    )
}


def from_kind(kind: str, message: str) -> BaseException:
    """The exception of the library's error kind ``kind`` (an unknown kind gives a
    :class:`PolarsRagError`), with ``message``.

    Example:
        >>> from polars_rag.exceptions import from_kind
        >>> e = from_kind("not_found", "score: run table not found: run.parquet")
        >>> type(e).__name__, isinstance(e, FileNotFoundError), e.kind
        ('NotFoundError', True, 'not_found')
    """
    return _BY_KIND.get(kind, PolarsRagError)(message)
