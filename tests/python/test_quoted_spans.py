from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.exceptions import ComputeError

import polars_rag as pr
from ragas_oracle import counts as ragas_counts


def _frame(answers, sources) -> pl.DataFrame:
    return pl.DataFrame(
        {"answer": answers, "sources": sources},
        schema={"answer": pl.String, "sources": pl.List(pl.String)},
    )


# ---------------------------------------------------------------- parity with the reference


# Every recorded Ragas case is a metric vector (tests/vectors/quoted_spans.jsonl), read by
# test_vectors.py through pr.extract_quotes and pr.citation_alignment.


# ---------------------------------------------------------------- semantics


def test_rows_nulls_and_scores():
    df = _frame(
        ["It is “the capital of France”.", None, "no quotes", "“one two three”", "“x y z” and “p q r”"],
        [["Paris is the capital of France."], ["x"], None, [], ["x y z", "r"]],
    )
    out = df.with_columns(pr.quoted_spans("answer", "sources"))
    assert out.columns == ["answer", "sources", "quoted_spans"]
    assert out.schema["quoted_spans"] == pl.Struct(
        {"matched": pl.UInt32, "total": pl.UInt32, "score": pl.Float64}
    )
    rows = out["quoted_spans"].to_list()
    assert rows == [
        {"matched": 1, "total": 1, "score": 1.0},
        None,
        {"matched": 0, "total": 0, "score": None},
        {"matched": 0, "total": 1, "score": 0.0},
        {"matched": 1, "total": 2, "score": 0.5},
    ]


def test_standard_and_ragas_styles_differ_where_documented():
    df = _frame(
        ["He said “the capital of France” and I don't think it's wrong."],
        [["The capital of France is Paris."]],
    )
    std = df.select(pr.quoted_spans("answer", "sources")).unnest("quoted_spans").row(0)
    rag = df.select(pr.quoted_spans("answer", "sources", quotes="ragas")).unnest("quoted_spans").row(0)
    assert std == (1, 1, 1.0)  # the curly quotation is found; apostrophes open nothing
    assert rag == (0, 1, 0.0)  # curly quotes ignored; "t think it" opened by apostrophes


def test_string_sources_and_namespace_and_literal_broadcast():
    df = pl.DataFrame({"answer": ["“a b c”", "“d e f”"], "src": ["a b c d", "nothing"]})
    via_fn = df.select(pr.quoted_spans("answer", "src"))
    via_ns = df.select(pl.col("answer").rag.quoted_spans(pl.col("src")))
    assert via_fn.equals(via_ns)
    assert via_fn.unnest("quoted_spans")["matched"].to_list() == [1, 0]
    lit = df.select(pr.quoted_spans("answer", pl.lit("d e f g")))
    assert lit.unnest("quoted_spans")["matched"].to_list() == [0, 1]


def test_retrieved_structs_are_sources(demo_dir: Path):
    run = pl.read_parquet(demo_dir / "run_a.parquet")
    a = run.select(pr.quoted_spans("answer", "sources"))
    b = run.select(pr.quoted_spans("answer", "retrieved"))
    assert a.equals(b)


def test_group_by_segments(demo_dir: Path):
    run = pl.read_parquet(demo_dir / "run_b.parquet")
    per_kind = (
        run.group_by("answer_kind", maintain_order=True)
        .agg(pr.citation_alignment("answer", "sources"))
        .unnest("citation_alignment")
    )
    assert per_kind.height == run["answer_kind"].n_unique()
    exact = per_kind.filter(pl.col("answer_kind").is_in(["curly", "straight"]))
    assert exact["citation_alignment_quoted_spans"].to_list() == [1.0] * exact.height
    edited = per_kind.filter(pl.col("answer_kind") == "edited")
    assert edited["citation_alignment_quoted_spans"].to_list() == [0.0]
    overall = run.select(pr.citation_alignment("answer", "sources")).unnest("citation_alignment")
    assert overall["total"][0] == per_kind["total"].sum()
    assert overall["matched"][0] == per_kind["matched"].sum()


# ---------------------------------------------------------------- engines


def test_eager_lazy_streaming_and_sink_agree(demo_dir: Path, tmp_path: Path):
    path = demo_dir / "run_a.parquet"
    expr = [pl.col("query_id"), pr.quoted_spans("answer", "sources")]
    eager = pl.read_parquet(path).select(expr)
    lazy = pl.scan_parquet(path).select(expr).collect()
    streaming = pl.scan_parquet(path).select(expr).collect(engine="streaming")
    out = tmp_path / "scores.parquet"
    pl.scan_parquet(path).select(expr).sink_parquet(out)
    sunk = pl.read_parquet(out)
    assert eager.equals(lazy)
    assert eager.equals(streaming)
    assert eager.equals(sunk)
    agg = pl.scan_parquet(path).select(pr.citation_alignment("answer", "sources")).collect()
    assert agg.height == 1


# ---------------------------------------------------------------- errors


def test_wrong_dtype_names_metric_and_column():
    df = pl.DataFrame({"answer": ["“a b c”"], "n": [3]})
    with pytest.raises(ComputeError, match=r"quoted_spans: column 'n' \(sources\) must be list\[str\]"):
        df.select(pr.quoted_spans("answer", "n"))
    with pytest.raises(ComputeError, match=r"quoted_spans: column 'n' \(answer\) must be of type String"):
        df.select(pr.quoted_spans("n", "answer"))


def test_bad_options_name_the_metric():
    df = _frame(["“a b c”"], [["a b c"]])
    with pytest.raises(ComputeError, match=r"quoted_spans: invalid options: option 'quotes'"):
        df.select(pr.quoted_spans("answer", "sources", quotes="curly"))  # type: ignore[arg-type]
    with pytest.raises(ComputeError, match=r"citation_alignment: invalid options: option 'min_len'"):
        df.select(pr.citation_alignment("answer", "sources", min_len=-1))


# ---------------------------------------------------------------- registry


# The judged metrics and how many columns each reads.
JUDGED_ARITY = {
    "citation_support": 2,
    "citation_precision": 2,
    "answer_match": 3,
    "g_eval": 3,
    "faithfulness": 3,
    "answer_relevancy": 2,
    "context_precision": 3,
    "context_utilization": 3,
    "context_recall": 3,
    "relevance_grade": 2,
    "citation_recall_precision": 2,
    "claim_checks": 3,
    "create_nuggets": 2,
}


def test_every_metric_id_is_a_function_and_a_namespace_method():
    df = _frame(["“a b c”"], [["a b c"]])
    ids = pr.metric_ids()
    assert ids[:2] == ["quoted_spans", "citation_alignment"] and len(set(ids)) == len(ids)
    for metric in ids:
        fn = getattr(pr, metric)
        ns = getattr(pl.col("answer").rag, metric)
        if metric == "citation_indicators":  # reads the answer alone
            out, via_ns = df.select(fn("answer")), df.select(ns())
        elif metric == "checks":  # the answer and a list of check structs
            with_checks = df.with_columns(pl.lit([{"kind": "contains", "value": "a"}]).alias("checks"))
            out = with_checks.select(fn("answer", "checks"))
            via_ns = with_checks.select(ns(pl.col("checks")))
        elif metric == "extract_quotes":  # the answer alone
            out, via_ns = df.select(fn("answer")), df.select(ns())
        elif metric == "embedding_cosine":  # two embedding columns
            vectors = pl.DataFrame({"a": [[0.6, 0.8]], "b": [[1.0, 0.0]]})
            out = vectors.select(fn("a", "b"))
            via_ns = vectors.select(getattr(pl.col("a").rag, metric)(pl.col("b")))
        elif metric == "split_claims":  # the answer alone; the rules need no judge
            out, via_ns = df.select(fn("answer", method="rules")), df.select(ns(method="rules"))
        elif metric == "nugget_assignment":  # the answer and the question's nuggets; no rows
            nugget = pl.Struct({"text": pl.String, "importance": pl.String})
            given = pl.DataFrame({"a": [], "n": []}, schema={"a": pl.String, "n": pl.List(nugget)})
            out = given.select(fn("a", "n"))
            via_ns = given.select(getattr(pl.col("a").rag, metric)(pl.col("n")))
        elif metric in JUDGED_ARITY:
            # Judged (test_judge.py and test_rag_judged.py ask a local judge); no rows here, so
            # no judge (and no embedding model) is needed.
            texts = pl.DataFrame({"a": [], "b": [], "c": []}, schema=dict.fromkeys("abc", pl.String))
            rest = ["b", "c"][: JUDGED_ARITY[metric] - 1]
            options = {"criteria": "Is it right?"} if metric == "g_eval" else {}
            out = texts.select(fn("a", *rest, **options))
            via_ns = texts.select(getattr(pl.col("a").rag, metric)(*[pl.col(c) for c in rest], **options))
        elif metric.startswith("span_"):  # retrieved spans against golden spans
            span = [{"file": "a", "start": 0, "end": 3}]
            spans = pl.DataFrame({"retrieved": [span], "golden": [span]})
            out = spans.select(fn("retrieved", "golden"))
            via_ns = spans.select(getattr(pl.col("retrieved").rag, metric)(pl.col("golden")))
        elif metric in ("nugget_scores", "claim_check_scores"):  # verdicts given elsewhere
            lists = ["entailment"] if metric == "claim_check_scores" else ["vital"]
            given = pl.DataFrame({
                "a": [lists], "b": [["entailment"] if metric == "claim_check_scores" else ["support"]],
                "c": [[["entailment"]]], "d": [[["neutral"]]],
            })
            names = ["a", "b", "c", "d"] if metric == "claim_check_scores" else ["a", "b"]
            out = given.select(fn(*names))
            via_ns = given.select(getattr(pl.col("a").rag, metric)(*[pl.col(c) for c in names[1:]]))
        elif metric == "ppi_mean":  # judge scores, and labels where there are some
            scores = pl.DataFrame({"judged": [1.0, 0.0, 1.0], "label": [1.0, None, None]})
            out = scores.select(fn("judged", "label", lam=1.0))
            via_ns = scores.select(getattr(pl.col("judged").rag, metric)(pl.col("label"), lam=1.0))
        else:  # the answer and a list of texts: sources, references, or ground truth
            out, via_ns = df.select(fn("answer", "sources")), df.select(ns(pl.col("sources")))
        assert out.columns == [metric]
        assert via_ns.equals(out)


# ---------------------------------------------------------------- properties

_ALPHABET = "ab AB\"'`´“”‘’«»\n\u00a0\u001f\u2003ΣσςİÉé."
texts = st.text(alphabet=_ALPHABET, max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(texts, st.lists(texts, max_size=3)), min_size=1, max_size=20),
    casefold=st.booleans(),
    min_len=st.integers(min_value=0, max_value=3),
)
def test_ragas_mode_equals_ragas_semantics_in_every_engine(rows, casefold, min_len):
    df = _frame([a for a, _ in rows], [s for _, s in rows])
    expr = pr.quoted_spans("answer", "sources", quotes="ragas", casefold=casefold, min_len=min_len)
    eager = df.select(expr).unnest("quoted_spans")
    expected = [ragas_counts(a, s, casefold, min_len) for a, s in rows]
    assert list(zip(eager["matched"], eager["total"])) == expected
    lazy = df.lazy().select(expr).collect().unnest("quoted_spans")
    streaming = df.lazy().select(expr).collect(engine="streaming").unnest("quoted_spans")
    assert eager.equals(lazy) and eager.equals(streaming)
    for m, t, s in eager.iter_rows():
        assert 0 <= m <= t
        assert (s is None) == (t == 0)
        assert s is None or 0.0 <= s <= 1.0


@settings(max_examples=200, deadline=None)
@given(answer=st.text(max_size=200), source=st.text(max_size=200))
def test_arbitrary_unicode_never_fails(answer, source):
    df = _frame([answer], [[source]])
    out = df.select(pr.quoted_spans("answer", "sources")).unnest("quoted_spans").row(0)
    assert out[0] <= out[1]
