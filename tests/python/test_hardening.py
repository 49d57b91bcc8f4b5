"""Hostile input through the Python faces, case by case: each either works as documented or
raises an error that names the function, the argument or column, and the problem."""

from __future__ import annotations

import decimal

import polars as pl
import pytest

import polars_rag as pr


def _message(excinfo: pytest.ExceptionInfo) -> str:
    assert type(excinfo.value).__name__ != "PanicException", excinfo.value
    return str(excinfo.value)


def test_categorical_and_enum_texts_score_like_strings():
    df = pl.DataFrame({"answer": ["the cat sat on the mat", "a dog"], "ref": ["the cat sat on a mat", "a dog"]})
    want = df.select(pr.bleu("answer", "ref"), pr.rouge("answer", "ref"), pr.number_match("answer", "ref"))
    for dtype in (pl.Categorical, pl.Enum(sorted(set(df["answer"]) | set(df["ref"])))):
        cast = df.with_columns(pl.all().cast(dtype))
        got = cast.select(pr.bleu("answer", "ref"), pr.rouge("answer", "ref"), pr.number_match("answer", "ref"))
        assert got.equals(want)
        lazy = cast.lazy().select(pr.bleu("answer", "ref")).collect()
        assert lazy["bleu"].to_list() == want["bleu"].to_list()


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Int16, pl.UInt8, pl.UInt16, pl.Int32, pl.UInt32, pl.UInt64])
def test_span_offsets_of_every_integer_width(dtype):
    span = pl.Struct({"file": pl.String, "start": dtype, "end": dtype})
    df = pl.DataFrame(
        {"retrieved": [[{"file": "a", "start": 0, "end": 10}]], "golden": [[{"file": "a", "start": 5, "end": 10}]]},
        schema={"retrieved": pl.List(span), "golden": pl.List(span)},
    )
    assert df.select(pr.span_recall("retrieved", "golden"))["span_recall"].to_list() == [1.0]
    assert df.select(pr.span_precision("retrieved", "golden"))["span_precision"].to_list() == [0.5]


_WIDE = [getattr(pl, name) for name in ("Int128", "UInt128") if hasattr(pl, name)]


@pytest.mark.skipif(not _WIDE, reason="this Polars has no 128-bit integers")
@pytest.mark.parametrize("dtype", _WIDE)
def test_span_offsets_of_128_bit_integers_are_read_exactly(dtype):
    span = pl.Struct({"file": pl.String, "start": dtype, "end": dtype})
    df = pl.DataFrame(
        {"retrieved": [[{"file": "a", "start": 0, "end": 10}]], "golden": [[{"file": "a", "start": 5, "end": 10}]]},
        schema={"retrieved": pl.List(span), "golden": pl.List(span)},
    )
    assert df.select(pr.span_precision("retrieved", "golden"))["span_precision"].to_list() == [0.5]
    too_large = pl.DataFrame(
        {"retrieved": [[{"file": "a", "start": 0, "end": 2**70}]], "golden": [[{"file": "a", "start": 5, "end": 10}]]},
        schema={"retrieved": pl.List(span), "golden": pl.List(span)},
    )
    with pytest.raises(pl.exceptions.PolarsError) as e:
        too_large.select(pr.span_precision("retrieved", "golden"))
    assert "span_precision" in _message(e) and "retrieved" in _message(e)


@pytest.mark.skipif(not hasattr(pl, "Float16"), reason="this Polars has no Float16")
def test_float16_embeddings_and_grades_are_read_as_floats():
    df = pl.DataFrame(
        {"a": [[1.0, 0.0]], "b": [[1.0, 0.0]]}, schema={"a": pl.Array(pl.Float16, 2), "b": pl.Array(pl.Float16, 2)}
    )
    assert df.select(pr.embedding_cosine("a", "b")).to_series().to_list() == [1.0]
    item = pl.Struct({"id": pl.String, "grade": pl.Float16})
    truth = pl.Series("truth", [[{"id": "d1", "grade": 2.0}]], dtype=pl.List(item))
    graded = pl.DataFrame({"run": [["d1", "d2"]]}).with_columns(truth)
    assert graded.select(pr.ndcg_at_k("run", "truth"))["ndcg_at_k"].to_list() == [1.0]


def test_decimal_grades_and_small_integer_grades_are_read():
    item = pl.Struct({"id": pl.String, "grade": pl.Decimal(10, 2)})
    truth = pl.Series("truth", [[{"id": "d1", "grade": decimal.Decimal("2.00")}]], dtype=pl.List(item))
    df = pl.DataFrame({"run": [["d1", "d2"]]}).with_columns(truth)
    assert df.select(pr.ndcg_at_k("run", "truth"))["ndcg_at_k"].to_list() == [1.0]
    small = df.with_columns(pl.col("truth").cast(pl.List(pl.Struct({"id": pl.String, "grade": pl.Int8}))))
    assert small.select(pr.ndcg_at_k("run", "truth"))["ndcg_at_k"].to_list() == [1.0]


def test_float_offsets_must_be_whole_finite_numbers():
    span = pl.Struct({"file": pl.String, "start": pl.Float64, "end": pl.Float64})
    for bad, says in [(-0.5, "-0.5 is not a whole number"), (float("nan"), "not a finite number"), (1e19, "64-bit")]:
        df = pl.DataFrame(
            {"retrieved": [[{"file": "a", "start": bad, "end": 3.0}]], "golden": [[{"file": "a", "start": 0.0, "end": 3.0}]]},
            schema={"retrieved": pl.List(span), "golden": pl.List(span)},
        )
        with pytest.raises(pl.exceptions.ComputeError) as e:
            df.select(pr.span_iou("retrieved", "golden"))
        assert "span_iou" in _message(e) and "retrieved" in _message(e) and says in _message(e)
    whole = pl.DataFrame(
        {"retrieved": [[{"file": "a", "start": 0.0, "end": 3.0}]], "golden": [[{"file": "a", "start": 0.0, "end": 3.0}]]},
        schema={"retrieved": pl.List(span), "golden": pl.List(span)},
    )
    assert whole.select(pr.span_iou("retrieved", "golden"))["span_iou"].to_list() == [1.0]


def test_zero_width_embeddings_are_rejected_before_import():
    df = pl.DataFrame({"a": [[]], "b": [[]]}, schema={"a": pl.Array(pl.Float32, 0), "b": pl.Array(pl.Float32, 0)})
    with pytest.raises(pl.exceptions.PolarsError) as e:
        df.select(pr.embedding_cosine("a", "b"))
    assert "embedding_cosine" in _message(e) and "width 0" in _message(e)


def test_nul_characters_in_messages_do_not_break_the_error():
    df = pl.DataFrame({"answer": ["a b"], "ref": ["a b"]})
    with pytest.raises(pl.exceptions.PolarsError) as e:
        df.select(pr.bleu("answer", "ref", tokenize="\x00"))  # type: ignore[arg-type]
    assert "bleu" in _message(e) and "tokenize" in _message(e) and "\\0" in _message(e)
    checks = pl.DataFrame({"answer": ["x"], "checks": [[{"kind": "con\x00tains", "value": "x"}]]})
    with pytest.raises(pl.exceptions.PolarsError) as e:
        checks.select(pr.checks("answer", "checks"))
    assert "checks" in _message(e)


@pytest.mark.parametrize("order", [2**40, 10**8, 101])
def test_size_options_are_bounded(order):
    df = pl.DataFrame({"answer": ["a b"], "ref": ["a b"]})
    with pytest.raises(pl.exceptions.PolarsError) as e:
        df.select(pr.chrf("answer", "ref", char_order=order))
    assert "chrf" in _message(e) and "char_order" in _message(e)


def test_options_beyond_64_bits_name_the_option():
    df = pl.DataFrame({"answer": ["a b"], "ref": ["a b"]})
    with pytest.raises(ValueError) as e:
        df.select(pr.chrf("answer", "ref", char_order=2**64))
    assert "chrf" in _message(e) and "char_order" in _message(e) and "decoding error" not in _message(e)


def test_options_beyond_64_bits_name_the_option_in_table_functions():
    with pytest.raises(ValueError) as e:
        pr.locate_quotes_in_corpus(["a quote"], {"a.txt": "a quote here"}, window_size=2**64)
    assert "locate_quotes_in_corpus" in _message(e) and "window_size" in _message(e)
    with pytest.raises(ValueError) as e:
        pr.signature("chrf", char_order=2**64)
    assert "signature" in _message(e) and "char_order" in _message(e)
    with pytest.raises(ValueError) as e:
        pr.locate_quotes_in_corpus(["a quote"], {"a.txt": "a quote here"}, window_size=-3)
    assert "locate_quotes_in_corpus" in _message(e) and "window_size" in _message(e)


def test_scores_stay_in_their_documented_range():
    df = pl.DataFrame({"answer": ["the cat sat on the mat today"] * 2, "ref": ["the cat sat on the mat today"] * 2})
    assert df.select(pr.bleu("answer", "ref"))["bleu"].to_list() == [1.0, 1.0]
    assert df.select(pr.corpus_bleu("answer", "ref"))["corpus_bleu"].to_list() == [1.0]
    for value in (5.0, -1.0, float("inf")):
        with pytest.raises(pl.exceptions.PolarsError) as e:
            df.select(pr.bleu("answer", "ref", smooth_method="floor", smooth_value=value))
        assert "smooth_value" in _message(e)
    with pytest.raises(pl.exceptions.PolarsError) as e:
        df.select(pr.chrf("answer", "ref", char_order=0, word_order=0))
    assert "at least one n-gram order" in _message(e)
    ranked = pl.DataFrame({"run": [["a", "b", "c"]], "truth": [["b"]]})
    for gamma in (1e-300, 5e-324, 1e308):
        value = ranked.select(pr.hybrid_log_rank("run", "truth", gamma=gamma))["hybrid_log_rank"][0]
        assert value is not None and 0.0 <= value <= 1.0, (gamma, value)


def test_an_infinite_grade_is_an_error():
    truth = pl.Series("truth", [[{"id": "a", "grade": float("inf")}]])
    df = pl.DataFrame({"run": [["a"]]}).with_columns(truth)
    with pytest.raises(pl.exceptions.ComputeError) as e:
        df.select(pr.ndcg_at_k("run", "truth"))
    assert "ndcg_at_k" in _message(e) and "grade" in _message(e)


def test_number_match_compares_the_decimals_written():
    df = pl.DataFrame(
        {
            "answer": ["id 1234567891", "it costs 1,000 and 604.", "2.50 units", "0.1 percent"],
            "expected": ["id 1234567890", "1000 and 604", "2.5 units", "0.10000000001 percent"],
        }
    )
    assert df.select(pr.number_match("answer", "expected"))["number_match"].to_list() == [0.0, 1.0, 1.0, 0.0]


def test_locate_quotes_names_documents_by_position_and_refuses_duplicate_names():
    doc = pl.Struct({"file": pl.String, "text": pl.String})
    df = pl.DataFrame(
        {
            "quote": ["quick brown fox", "quick brown fox", "quick brown fox"],
            "sources": [
                [{"file": None, "text": "nothing here"}, {"file": "b.txt", "text": "the quick brown fox"}],
                [{"file": "a.txt", "text": "alpha"}, {"file": "a.txt", "text": "the quick brown fox"}],
                [{"file": "1", "text": "the quick brown fox"}, {"file": None, "text": "other words"}],
            ],
        },
        schema={"quote": pl.String, "sources": pl.List(doc)},
    )
    out = df.select(pr.locate_quotes("quote", "sources").struct.unnest())
    assert out["file"].to_list() == ["b.txt", None, "1"]
    assert out["source"].to_list() == [1, None, 0]
    assert "two sources are named 'a.txt'" in out["error"][1]
    with_nulls = pl.DataFrame({"quote": ["quick brown fox"], "sources": [[None, "zzz", "the quick brown fox"]]})
    located = with_nulls.select(pr.locate_quotes("quote", "sources").struct.unnest())
    assert located["source"].to_list() == [2]


def test_locate_quotes_rejects_k1_zero_and_scores_tokenless_sources_as_zero():
    df = pl.DataFrame({"quote": ["some words"], "sources": ["... !!! ???"]})
    with pytest.raises(pl.exceptions.PolarsError) as e:
        df.select(pr.locate_quotes("quote", "sources", k1=0.0))
    assert "k1" in _message(e)
    for compat in ("none", "soak"):
        out = df.select(pr.locate_quotes("quote", "sources", compat=compat).struct.unnest())
        for field in ("bm25_score", "bm25_ratio", "match_ratio"):
            value = out[field][0]
            assert value is None or value == value and abs(value) != float("inf"), (compat, field, value)


def test_join_golden_accounts_for_every_run_row():
    golden = pl.DataFrame({"query_id": ["q1", "q2"], "reference_answers": ["a", "b"]})
    run = pl.DataFrame({"query_id": ["q1", None, "zz"], "answer": ["a", "b", "c"]})
    joined = pr.join_golden(golden, run)
    assert joined.unknown == [None, "zz"]
    assert joined.missing == ["q2"]
    assert joined.frame.height + len(joined.unknown) == run.height + len(joined.missing)


def test_python_side_arguments_get_clear_errors():
    a = pl.DataFrame({"query_id": ["q1", "q2"], "mrr": [0.5, 0.7]})
    with pytest.raises(ValueError, match="compare: seed"):
        pr.compare(a, a, seed=-1)
    with pytest.raises(ValueError, match="compare: resamples"):
        pr.compare(a, a, resamples=2**70)
    with pytest.raises(ValueError, match="^summary: resamples"):
        pr.summary(a, resamples=0)
    with pytest.raises(ValueError, match="^summary: "):
        pr.summary(a, by="no_such_column")
    with pytest.raises(TypeError, match="hybrid_log_rank: alpha"):
        pr.hybrid_log_rank("run", "truth", alpha="0.5")  # type: ignore[arg-type]


def test_table_functions_refuse_zero_width_arrays_by_name():
    run = pl.DataFrame(
        {"query_id": ["q1"], "emb": [[]]}, schema={"query_id": pl.String, "emb": pl.List(pl.Array(pl.Float32, 0))}
    )
    golden = pl.DataFrame({"query_id": ["q1"]})
    for call in (lambda: pr.join_golden(golden, run), lambda: pr.collapse_run(run)):
        with pytest.raises(ValueError) as e:
            call()
        assert "emb" in _message(e) and "width 0" in _message(e)
        assert _message(e).split(":")[0] in ("join_golden", "collapse_run")
