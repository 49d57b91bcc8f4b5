"""Shared plumbing of the package: argument checks, the plugin call, the library's option defaults."""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping, Sequence
from functools import cache, wraps
from pathlib import Path
from typing import Any, Callable, TypeVar, Union

import polars as pl
from polars.plugins import register_plugin_function

from polars_rag._internal import metric_ids as _metric_ids
from polars_rag._internal import option_defaults as _option_defaults
from polars_rag._internal import reads_whole_column as _reads_whole_column
from polars_rag._internal import signature_of as _signature_of
from polars_rag._settings import Embedder, Judge
from polars_rag.exceptions import InvalidInputError, InvalidOptionsError

__all__ = [
    "IntoExprColumn",
    "metric_ids",
    "option_defaults",
    "signature",
]

#: A column name or an expression.
IntoExprColumn = Union[pl.Expr, str]

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


def _settings(**values: Any) -> dict[str, Any]:
    """A table function's settings as the library reads them: one dict, the settings left at
    ``None`` left out (the library's default applies)."""
    return {name: value for name, value in values.items() if value is not None}


def _as_float(function: str, name: str, value: Any) -> float:
    """``value`` as a float, or a ``TypeError`` / ``ValueError`` naming the function and the
    argument."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{function}: {name} must be a number, got {value!r}")
    try:
        return float(value)
    except OverflowError:
        raise InvalidInputError(f"{function}: {name} is too large, got {value!r}") from None


def _as_int(function: str, name: str, value: Any, low: int = 0, high: int = 2**64 - 1) -> int:
    """``value`` as an int in ``[low, high]``, or a ``TypeError`` / ``ValueError`` naming the
    function and the argument (instead of the bare errors of the conversion to Rust)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{function}: {name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise InvalidInputError(f"{function}: {name} must be between {low} and {high}, got {value}")
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
        raise InvalidOptionsError(f"{function}: option {option}={value} is outside the 64-bit integer range")
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
        {'compat': 'standard'}
        >>> pr.option_defaults("number_match")
        {}
    """
    return dict(_defaults(metric))


def _typed_option(metric: str, option: str, value: Any, default: Any) -> Any:
    """``value`` checked against the type of the library's default for the option (a number where
    the default is a number, ...), so a wrong type is a ``TypeError`` naming the metric and the
    option when the expression is built, not a decoding error when it runs. Integers given for
    float options become floats; sequences given for list options become lists."""

    def wrong(expected: str) -> TypeError:
        return TypeError(f"{metric}: option {option} must be {expected}, got {value!r}")

    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise wrong("a bool")
    elif isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("an integer")
    elif isinstance(default, float):
        return _as_float(metric, option, value)
    elif isinstance(default, str):
        if not isinstance(value, str):
            raise wrong("a string")
    elif isinstance(default, list):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise wrong("a list")
        return list(value)
    return value


def _with_defaults(metric: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with every ``None`` replaced by the library's default, after checking each
    given value against the default's type and that integers fit the 64 bits options travel in."""
    defaults = _defaults(metric)
    checked = {}
    for option, value in options.items():
        _check_option_int(metric, option, value)
        default = defaults.get(option)
        checked[option] = default if value is None else _typed_option(metric, option, value, default)
    return checked


def _accepted_options(metric: str, options: Mapping[str, Any], accepted: Any) -> None:
    """A ``TypeError`` naming the metric when ``options`` holds a keyword that ``accepted`` (the
    function's options ``TypedDict``) does not declare, as Python does for a named parameter."""
    known: frozenset[str] = accepted.__optional_keys__ | accepted.__required_keys__
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(
            f"{metric}: unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"it takes {', '.join(sorted(known)) or 'none'}"
        )


def _plugin(
    name: str,
    args: Sequence[IntoExprColumn],
    kwargs: Mapping[str, Any] | None = None,
    *,
    accepted: Any = None,
    aggregate: bool = False,
) -> pl.Expr:
    """Calls the plugin's ``metric`` function for metric ``name``; its output column is named after it. Options
    left at ``None`` take the library's defaults (:func:`option_defaults`); with ``accepted``
    (the function's options ``TypedDict``) every keyword it declares is sent and no other is
    allowed. A :class:`~polars_rag.Judge` option travels as its settings."""
    options = dict(kwargs or {})
    if accepted is not None:
        _accepted_options(name, options, accepted)
        options = {key: options.get(key) for key in accepted.__annotations__}
    if "judge" in options:
        judge = options["judge"]
        if judge is not None and not isinstance(judge, Judge):
            raise TypeError(f"{name}: judge must be a polars_rag.Judge, got {judge!r}")
        options["judge"] = None if judge is None else judge.settings()
    kwargs = _with_defaults(name, options)
    # A metric that reads its whole column (soak's automatic window size) is not elementwise, so
    # the streaming engine hands it the column whole rather than in morsels.
    elementwise = not aggregate and not _reads_whole_column(name, pickle.dumps(kwargs, protocol=4))
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name="metric",
        args=list(args),
        kwargs={"metric": name, "options": kwargs},
        is_elementwise=elementwise,
        returns_scalar=aggregate,
    ).alias(name)


@_names_its_errors
def metric_ids() -> list[str]:
    """The metric ids of this build, from the library's registry."""
    return list(_metric_ids())

@_names_its_errors
def signature(metric: str, **options: Any) -> str:
    """The settings behind a metric's numbers, in sacrebleu's signature style.

    Takes the same keyword options as the metric's function.

    Example:
        >>> import polars_rag as pr
        >>> pr.signature("rouge", use_stemmer=True)
        'rouge|tok:rouge_score|stem:porter|version:rouge-score-0.1.2'
    """
    # A judge or an embedder is given as an object; its settings are what the signature records.
    options = {
        key: value.settings() if isinstance(value, (Judge, Embedder)) else value for key, value in options.items()
    }
    # A metric that embeds (its options have an embedder; a ranked-list metric when its relevance
    # is "embedding") records the default model's signature.
    defaults = _defaults(metric) if metric in _metric_ids() else {}
    embeds = defaults.get("embedder") is not None or ("embedder" in defaults and options.get("relevance") == "embedding")
    if embeds and options.get("embedder") is None:
        options["embedder"] = Embedder().settings()
    for option, value in options.items():
        _check_option_int("signature", option, value)
    if metric in _metric_ids():
        options = _with_defaults(metric, options)
    return _signature_of(metric, pickle.dumps(options, protocol=4))


FrameLike = Union[pl.DataFrame, pl.LazyFrame]

def _has_zero_width_array(dtype: pl.DataType) -> bool:
    """Whether ``dtype`` holds a fixed-size array of width 0 anywhere: Polars cannot hand such a
    column to a library (its import fails), so the table functions refuse it by name."""
    if isinstance(dtype, pl.Array):
        return dtype.size == 0 or _has_zero_width_array(dtype.inner)  # type: ignore[arg-type]
    if isinstance(dtype, pl.List):
        return _has_zero_width_array(dtype.inner)  # type: ignore[arg-type]
    if isinstance(dtype, pl.Struct):
        return any(_has_zero_width_array(f.dtype) for f in dtype.fields)  # type: ignore[arg-type]
    return False


def _frame(frame: FrameLike) -> pl.DataFrame:
    """A frame to pass to the library: collected, with no column the library cannot import."""
    if not isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        raise TypeError(f"expected a polars DataFrame or LazyFrame, got {type(frame).__name__}")
    df = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    for name, dtype in df.schema.items():
        if _has_zero_width_array(dtype):
            raise InvalidInputError(f"column '{name}' holds arrays of width 0 ({dtype}); give the vectors a width")
    return df


def _corpus_frame(corpus: FrameLike | dict[str, str]) -> pl.DataFrame:
    if isinstance(corpus, dict):
        return pl.DataFrame({"file": list(corpus), "text": list(corpus.values())}, schema={"file": pl.String, "text": pl.String})
    return _frame(corpus).select("file", "text")

