"""String similarity, presence and exact match through the Python plugin, checked against the reference libraries themselves
(rapidfuzz 3.14.6, installed from PyPI in the test environment),
on generated data (answer_data.py). Ragas' recorded string metrics are metric vectors
(tests/vectors/string_metrics.jsonl, read by test_vectors.py)."""

from __future__ import annotations


import polars as pl
import pytest
from polars.exceptions import ComputeError

import polars_rag as pr
from answer_data import close, pairs

rapidfuzz = pytest.importorskip("rapidfuzz")

# ------------------------------------------------------------------- similarity and lexical


@pytest.mark.parametrize("distance", ["levenshtein", "hamming", "jaro", "jaro_winkler"])
def test_string_similarity_equals_rapidfuzz(distance):
    from rapidfuzz import distance as rd

    module = {"levenshtein": rd.Levenshtein, "hamming": rd.Hamming, "jaro": rd.Jaro, "jaro_winkler": rd.JaroWinkler}[distance]
    data = pairs(300, seed=8)
    df = pl.DataFrame({"answer": [h for h, _ in data], "ref": [r for _, r in data]})
    got = df.select(pr.string_similarity("answer", "ref", distance=distance))["string_similarity"].to_list()
    for (h, r), g in zip(data, got):
        assert close(g, 1 - module.normalized_distance(r, h)), (h, r)


def test_exact_match_and_nulls():
    df = pl.DataFrame(
        {"answer": ["  The answer is\n  PARIS ", "Paris.", None, "x"], "ref": [["nope", "the answer is paris"], ["Paris"], ["x"], []]}
    )
    out = df.select(pr.exact_match("answer", "ref"), pr.string_presence("answer", "ref"))
    assert out["exact_match"].to_list() == [1.0, 0.0, None, None]
    # Ragas' ExactMatch compares the raw strings.
    raw = df.select(pr.exact_match("answer", "ref", compat="ragas"))["exact_match"].to_list()
    assert raw == [0.0, 0.0, None, None]
    assert out["string_presence"].to_list() == [0.0, 1.0, None, None]
    assert pr.signature("string_similarity", distance="jaro") == "distance:jaro|version:rapidfuzz-3.14.6"
    with pytest.raises(ComputeError, match=r"string_similarity: invalid options: option 'distance'"):
        df.select(pr.string_similarity("answer", "ref", distance="cosine"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid options"):
        pr.signature("exact_match", casefold=True)


def test_lexical_examples():
    df = pl.DataFrame(
        {
            "answer": ["  The answer is   PARIS ", "Territory 118 paid $604 (1000 units), 0.305%", "no numbers here"],
            "ref": ["the answer is paris", "In Territory 118 the fee was 604, for 1,000 units, 0.305%", "It cost 604."],
        }
    )
    out = df.select(
        pr.exact_match("answer", "ref"), pr.number_match("answer", "ref"), pr.keyword_coverage("answer", "ref")
    )
    assert out["exact_match"].to_list() == [1.0, 0.0, 0.0]
    assert out["number_match"].to_list() == [None, 1.0, 0.0]  # the first reference has no number
    # territory 118, territory, 118, units, 604, 1,000, 0.305%: all in the answer
    assert out["keyword_coverage"].to_list() == [1.0, 1.0, 0.0]
    completeness = df.select(pr.answer_completeness("answer", "ref"))["answer_completeness"].to_list()
    assert completeness[1] == pytest.approx((7 / 11 + 1.0) / 2)  # 7 of 11 words, every keyword
    cites = pl.DataFrame({"a": ["According to the source: page 4 of the PDF", "It is so."]})
    assert cites.select(pr.citation_indicators("a"))["citation_indicators"].to_list() == [1.0, 0.0]
    custom = cites.select(pr.citation_indicators("a", indicators=["so."]))["citation_indicators"].to_list()
    assert custom == [0.0, pytest.approx(1 / 3)]


def test_checks_scores_and_reports_failures():
    checks_type = pl.List(
        pl.Struct({"kind": pl.String, "value": pl.String, "values": pl.List(pl.String), "weight": pl.Float64, "name": pl.String})
    )
    df = pl.DataFrame(
        {
            "answer": ["The fee is $604 and applies to Territory 118.", "Nothing useful.", None],
            "checks": [
                [
                    {"kind": "contains", "value": "territory 118", "values": None, "weight": 1.0, "name": "territory"},
                    {"kind": "number", "value": "604", "values": None, "weight": 2.0, "name": "fee"},
                    {"kind": "regex", "value": r"\bRule C-\d\b", "values": None, "weight": 1.0, "name": "rule"},
                ],
                [{"kind": "not_contains", "value": "useful", "values": None, "weight": None, "name": None}],
                [],
            ],
        },
        schema={"answer": pl.String, "checks": checks_type},
    )
    out = df.select(pr.checks("answer", "checks"))["checks"].to_list()
    assert out[0]["score"] == pytest.approx(3 / 4)
    assert out[0]["failed"] == ["rule"]
    assert out[1]["score"] == 0.0 and len(out[1]["failed"]) == 1
    assert out[2] is None
    bad = df.with_columns(
        pl.lit([{"kind": "regex", "value": "(unclosed", "values": None, "weight": 1.0, "name": "broken"}], dtype=checks_type).alias("checks")
    )
    with pytest.raises(ComputeError, match=r"checks: row 0: check 'broken': invalid regex"):
        bad.select(pr.checks("answer", "checks"))
