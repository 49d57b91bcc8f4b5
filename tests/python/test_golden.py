"""The golden-dataset functions: validate_golden, check_spans, collapse_run, join_golden."""

from __future__ import annotations

import polars as pl
import pytest

import polars_rag as pr

SPANS = pl.List(pl.Struct({"file": pl.String, "start": pl.Int64, "end": pl.Int64}))
CORPUS = {"a.md": "héllo wörld, héllo again", "b.md": "Paris is the capital of France."}


def golden_frame(rows: dict) -> pl.DataFrame:
    return pl.DataFrame(rows, schema_overrides={"relevant_spans": SPANS} if "relevant_spans" in rows else None)


def test_validate_finds_every_kind_of_problem():
    golden = golden_frame(
        {
            "query_id": ["q1", "q1", "q2", None],
            "relevant_spans": [
                [{"file": "a.md", "start": 0, "end": 5}],
                [{"file": "a.md", "start": 20, "end": 99}],
                [{"file": "../etc/passwd", "start": 0, "end": 1}],
                [{"file": "b.md", "start": 0, "end": 5}],
            ],
            "reference_answers": [["Paris"], [], [""], ["x"]],
        }
    )
    problems = pr.validate_golden(golden, CORPUS)
    assert problems.columns == ["check", "query_id", "column", "detail"]
    found = {(r["check"], r["query_id"], r["column"]) for r in problems.to_dicts()}
    assert ("duplicate_id", "q1", "query_id") in found
    assert ("null_id", None, "query_id") in found
    assert ("empty_ground_truth", "q1", "reference_answers") in found
    assert ("empty_ground_truth", "q2", "reference_answers") in found
    details = " ".join(problems["detail"].to_list())
    assert "end 99 is beyond 'a.md' (24 code points)" in details
    assert "escapes the corpus root" in details
    # Without a corpus the spans are not checked, the rest still is.
    no_corpus = pr.validate_golden(golden.lazy())
    assert "span_outside_document" not in no_corpus["check"].to_list()
    assert "duplicate_id" in no_corpus["check"].to_list()


def test_validate_compares_stored_span_text_with_the_corpus():
    spans = pl.List(pl.Struct({"file": pl.String, "start": pl.Int64, "end": pl.Int64, "text": pl.String}))
    golden = pl.DataFrame(
        {
            "query_id": ["q1", "q2"],
            "relevant_spans": [
                [{"file": "b.md", "start": 0, "end": 5, "text": "Paris"}],
                [{"file": "b.md", "start": 0, "end": 5, "text": "Rome"}],
            ],
        },
        schema_overrides={"relevant_spans": spans},
    )
    problems = pr.validate_golden(golden, pl.DataFrame({"file": list(CORPUS), "text": list(CORPUS.values())}))
    assert problems["check"].to_list() == ["span_text_mismatch"]
    assert problems["query_id"].to_list() == ["q2"]


def test_a_clean_dataset_has_no_problem():
    golden = golden_frame({"query_id": ["q1"], "relevant_spans": [[{"file": "b.md", "start": 0, "end": 5}]]})
    assert pr.validate_golden(golden, CORPUS).is_empty()


def test_check_spans_converts_bytes_and_fills_texts():
    frame = golden_frame(
        {
            "query_id": ["q1", "q2"],
            # "héllo" is bytes 0..6, "wörld" bytes 7..13; byte 2 is inside "é".
            "relevant_spans": [[{"file": "a.md", "start": 0, "end": 6}, {"file": "a.md", "start": 7, "end": 13}],
                               [{"file": "a.md", "start": 2, "end": 6}]],
        }
    )
    out, problems = pr.check_spans(frame, "relevant_spans", CORPUS, unit="bytes", fill_text=True)
    first = out["relevant_spans"][0].to_list()
    assert [(s["start"], s["end"], s["text"]) for s in first] == [(0, 5, "héllo"), (6, 11, "wörld")]
    assert problems["query_id"].to_list() == ["q2"]
    assert "inside a character" in problems["detail"][0]
    # Code points by default: the same numbers mean other characters.
    out, problems = pr.check_spans(frame, "relevant_spans", CORPUS, fill_text=True)
    assert out["relevant_spans"][0].to_list()[0]["text"] == "héllo "
    assert problems.is_empty()


def test_join_golden_collapses_a_long_run_and_reports():
    golden = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "relevant_ids": [["a", "c"], ["z"], ["a"]]})
    run = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2", "q2", "zz"],
            "doc_id": ["c", "a", "b", "y", "z", "a"],
            "rank": [3, 1, 2, 2, 1, 1],
        }
    )
    joined = pr.join_golden(golden.lazy(), run)
    assert joined.missing == ["q3"]
    assert joined.unknown == ["zz"]
    assert joined.duplicate_golden == [] and joined.duplicate_run == []
    frame = joined.frame.sort("query_id")
    assert frame["in_run"].to_list() == [True, True, False]
    assert [[i["id"] for i in r] if r is not None else None for r in frame["retrieved"].to_list()] == [
        ["a", "b", "c"],
        ["z", "y"],
        None,
    ]
    ap = frame.select(pr.average_precision("retrieved", "relevant_ids"))["average_precision"].to_list()
    assert ap == [pytest.approx((1 + 2 / 3) / 2), 1.0, None]


def test_join_golden_reports_duplicates():
    golden = pl.DataFrame({"query_id": ["q1", "q1"], "x": [1, 2]})
    run = pl.DataFrame({"query_id": ["q1", "q1"], "retrieved": [["a"], ["b"]]})
    joined = pr.join_golden(golden, run)
    assert joined.duplicate_golden == ["q1"] and joined.duplicate_run == ["q1"]
    assert joined.frame.height == 4  # every pairing is kept, none dropped


def test_a_span_unit_is_codepoints_or_bytes_and_a_wrong_one_names_the_function():
    golden = pl.DataFrame({"query_id": ["q"], "relevant_spans": [[{"file": "a.md", "start": 0, "end": 5}]]})
    with pytest.raises(ValueError, match="validate_golden: unit must be 'codepoints' or 'bytes', got 'chars'"):
        pr.validate_golden(golden, CORPUS, unit="chars")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="check_spans: unit must be 'codepoints' or 'bytes', got 'chars'"):
        pr.check_spans(golden, "relevant_spans", CORPUS, unit="chars")  # type: ignore[arg-type]
