"""The metric test vectors (tests/vectors/*.jsonl, one record shape for every metric; see
datasets/fixtures/make_vectors.py) through the Python face: each record's inputs become a frame,
its metric's function (``pr.<metric>(..., **options)``) scores it in a ``select``, and every
expected value, copied from the reference library's recorded output, is checked within the
record's tolerance. The Rust reader (tests/it/vectors.rs) checks the same records through the
library's `Expr` face."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import polars_rag as pr
import pytest
from polars_rag._internal import metric_catalogue

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors"
CATALOGUE = {entry["id"]: entry for entry in json.loads(metric_catalogue())}
FILES = sorted(VECTORS.glob("*.jsonl"))


def _check(got: Any, want: Any, tolerance: float, where: str) -> None:
    """`got` equals `want` within `tolerance` (numbers), field by field for the fields `want`
    names (structs), item by item (lists)."""
    if want is None:
        assert got is None, f"{where}: got {got!r}, want null"
    elif isinstance(want, (bool, str)):
        assert got == want, f"{where}: got {got!r}, want {want!r}"
    elif isinstance(want, (int, float)):
        assert isinstance(got, (int, float)), f"{where}: got {got!r}, want {want!r}"
        if math.isnan(want):
            assert math.isnan(got), f"{where}: got {got!r}, want NaN"
        else:
            assert abs(got - want) <= tolerance, f"{where}: got {got!r}, want {want!r} (tolerance {tolerance})"
    elif isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: got {got!r}, want a struct"
        for field, value in want.items():
            assert field in got, f"{where}: no field {field!r} in {got!r}"
            _check(got[field], value, tolerance, f"{where}.{field}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: got {got!r}, want {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            _check(g, w, tolerance, f"{where}[{i}]")
    else:
        raise AssertionError(f"{where}: an expected value of an unknown kind: {want!r}")


def _frame(inputs: dict[str, list[Any]]) -> pl.DataFrame:
    """The record's inputs as a frame; a column of nulls or of empty lists only (whose type
    nothing in it says) is given the text type its role reads."""
    frame = pl.DataFrame(inputs)
    casts = {}
    for name, dtype in frame.schema.items():
        if dtype == pl.Null:
            casts[name] = pl.String
        elif dtype == pl.List(pl.Null):
            casts[name] = pl.List(pl.String)
    return frame.cast(casts) if casts else frame


def _score(record: dict[str, Any]) -> Any:
    metric = record["metric"]
    entry = CATALOGUE[metric]
    assert sorted(record["inputs"]) == sorted(entry["inputs"]), f"{metric}: inputs named {entry['inputs']}"
    function = getattr(pr, metric)
    scored = _frame(record["inputs"]).select(function(*entry["inputs"], **record["options"]))
    column = scored.to_series()
    return column.item() if entry["kind"] == "aggregate" else column.to_list()


def test_there_are_vectors_for_every_file() -> None:
    assert [f.name for f in FILES] == [
        "nuggets.jsonl", "quoted_spans.jsonl", "rouge.jsonl", "sacrebleu.jsonl", "string_metrics.jsonl"
    ]


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_every_record_equals_its_reference(path: Path) -> None:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert records, f"{path.name} holds no record"
    for n, record in enumerate(records, start=1):
        assert set(record) == {"metric", "inputs", "options", "expected", "tolerance", "source", "case"}, record
        where = f"{path.name}:{n} {record['metric']} ({record['case']}; {record['source']})"
        _check(_score(record), record["expected"], record["tolerance"], where)


def test_the_check_fails_where_the_reference_differs() -> None:
    # The comparison can fail: a value off by more than the tolerance, a missing field, a length.
    with pytest.raises(AssertionError, match="tolerance"):
        _check(0.5, 0.5 + 1e-9, 1e-12, "x")
    with pytest.raises(AssertionError, match="no field"):
        _check({"a": 1.0}, {"b": 1.0}, 0.0, "x")
    with pytest.raises(AssertionError):
        _check([1.0], [1.0, 2.0], 0.0, "x")
    record = {"metric": "bleu", "inputs": {"answer": ["a b c d"], "references": [["a b c d"]]}, "options": {}}
    with pytest.raises(AssertionError):
        _check(_score(record), [0.5], 1e-12, "bleu")
