"""locate_quotes through the plugin: per-row sources, a shared corpus, soak parity on the
reference vectors (results, statistics, melted CSV, workbook order and layout), and errors."""

from __future__ import annotations

import doctest
import json
import re

import polars as pl
import pytest

import polars_rag as pr
from conftest import ROOT

SOAK = json.loads((ROOT / "tests/fixtures/soak_quotes_9c164e87.json").read_text(encoding="utf-8"))
DOCS = {d["name"]: d["content"] for d in SOAK["corpus"]["documents"]}
QUOTES = [q["quote"] for q in SOAK["quotes"]]


def hash_embed(texts):
    """The vectors' documented stand-in embedding: FNV-1a of each lowercase \\w+ word mod 16."""
    out = []
    for text in texts:
        v = [0.0] * 16
        for token in re.findall(r"\w+", text.lower()):
            h = 0x811C9DC5
            for byte in token.encode("utf-8"):
                h = ((h ^ byte) * 0x01000193) % 2**32
            v[h % 16] += 1.0
        out.append(v)
    return out


def soak_options(params: dict) -> dict:
    trim = "off" if params["trim_spans"] is False else params.get("trim_method", "fuzzy")
    return dict(
        compat="soak",
        k1=params["bm25_k1"],
        b=params["bm25_b"],
        trim=trim,
        min_match_ratio=params["min_fuzzy_ratio"],
        expand_neighbors=params["expand_window_neighbors"],
        context_chars=params["context_chars"],
        ellipsis_max_gap=params["ellipsis_max_gap"],
    )


@pytest.mark.parametrize("run", sorted(SOAK["runs_9c164e87"]))
def test_soak_runs_through_the_table_form(run, tmp_path):
    recorded = SOAK["runs_9c164e87"][run]
    got = pr.locate_quotes_in_corpus(
        QUOTES, DOCS, embed=hash_embed, xlsx=tmp_path / "q.xlsx", stats_csv=tmp_path / "s.csv",
        **soak_options(recorded["params"]),
    )
    rows = got.quotes.to_dicts()
    for i, (g, w) in enumerate(zip(rows, recorded["results"])):
        assert g["quote"] == w["quote"]
        assert g["file"] == w["source_doc"], i
        assert g["span_text"] == w["span_text"], i
        assert g["context"] == w["context_window"], i
        assert g["bm25_score"] == w["bm25_score"], i
        assert g["bm25_ratio"] == w["bm25_ratio"], i
        assert (g["global_start"], g["global_end"]) == (w["global_start"], w["global_end"]), i
        assert g["match_ratio"] == w["match_ratio"], i
        assert g["cosine"] == pytest.approx(w["cosine_similarity"], abs=1e-15), i
    stats = dict(got.stats.iter_rows())
    assert list(stats) == list(recorded["stats"])
    for name, value in recorded["stats"].items():
        assert stats[name] == pytest.approx(value, abs=1e-15), name
    assert (tmp_path / "s.csv").read_text() == got.stats_csv
    # Same lines in the same order; the stand-in embedding's cosines may differ in the last bit
    # (numpy's dot product sums in another order).
    got_lines = got.stats_csv.splitlines()
    want_lines = recorded["stats_csv_melted"].splitlines()
    assert [l.split(",")[0] for l in got_lines] == [l.split(",")[0] for l in want_lines]
    for g, w in zip(got_lines, want_lines):
        if "cosine," in g:
            assert float(g.split(",")[1]) == pytest.approx(float(w.split(",")[1]), abs=1e-15)
        else:
            assert g == w

    openpyxl = pytest.importorskip("openpyxl")
    sheet = openpyxl.load_workbook(tmp_path / "q.xlsx")["Quote Verification"]
    header = [c.value for c in sheet[1]]
    assert header[:4] == ["extracted_quote", "found_in_original", "context_in_original", "source_doc"]
    order = [QUOTES.index(r[0].value) for r in sheet.iter_rows(min_row=2)]
    assert order == recorded["excel_row_order_by_input_index"]
    assert sheet.column_dimensions["A"].width == pytest.approx(80, abs=1)
    assert sheet.column_dimensions["D"].width == pytest.approx(25, abs=1)
    assert sheet.column_dimensions["E"].width == pytest.approx(15, abs=1)
    assert sheet["B2"].alignment.wrap_text and sheet["B2"].font.sz == 13


def test_default_mode_table_form_finds_verbatim_quotes():
    got = pr.locate_quotes_in_corpus(QUOTES, pl.DataFrame({"file": list(DOCS), "text": list(DOCS.values())}))
    q = got.quotes
    assert q.height == len(QUOTES)
    for row in q.iter_rows(named=True):
        text = DOCS[row["file"]]
        assert text[row["start"]:row["end"]] == row["span_text"]
        assert 0.0 <= row["match_ratio"] <= 1.0
    absent = q.row(5, named=True)
    assert absent["found"] is False
    closing = q.row(10, named=True)
    assert (closing["file"], closing["span_text"], closing["found"]) == ("closing.txt", "thank you for listening.", True)
    stats = dict(got.stats.iter_rows())
    assert stats["n_quotes"] == 15 and stats["n_found"] == q["found"].sum()
    assert stats["mean_cosine"] is None  # no embedder given


def test_per_row_sources_in_every_engine():
    df = pl.DataFrame(
        {
            "quote": ["barely manage a mile", "the sea", None, "   "],
            "sources": [
                ["Nothing here.", "At first I could barely manage a mile."],
                ["I love the sea."],
                ["x"],
                ["x"],
            ],
        }
    )
    eager = df.select(pr.locate_quotes("quote", "sources")).unnest("locate_quotes")
    assert eager.row(0, named=True)["source"] == 1
    assert eager.row(0, named=True)["start"] == 17 and eager.row(0, named=True)["file"] is None
    assert eager.row(1, named=True)["span_text"] == "the sea"
    assert eager.row(2, named=True)["span_text"] is None
    assert "quote is empty" in eager.row(3, named=True)["error"]
    lazy = df.lazy().select(pl.col("quote").rag.locate_quotes(pl.col("sources"))).collect()
    streaming = df.lazy().select(pr.locate_quotes("quote", "sources")).collect(engine="streaming")
    assert lazy.unnest("locate_quotes").equals(eager)
    assert streaming.unnest("locate_quotes").equals(eager)


def test_named_sources_and_a_shared_corpus():
    corpus = pl.lit(
        pl.Series([[{"file": name, "text": text} for name, text in DOCS.items()]])
    )
    df = pl.DataFrame({"quote": QUOTES})
    got = df.select(pr.locate_quotes("quote", corpus)).unnest("locate_quotes")
    table = pr.locate_quotes_in_corpus(QUOTES, DOCS).quotes
    assert got["file"].to_list() == table["file"].to_list()
    assert got["start"].to_list() == table["start"].to_list()


def test_answers_quotes_exploded_then_located():
    df = pl.DataFrame(
        {
            "answer": ['She said “I could barely manage a mile” and “we adopted a rescue dog”.'],
            "sources": [[DOCS["interview_a.txt"]]],
        }
    )
    got = (
        df.with_columns(pr.extract_quotes("answer").alias("quote"))
        .explode("quote", empty_as_null=False)
        .with_columns(pr.locate_quotes("quote", "sources"))
        .unnest("locate_quotes")
    )
    assert got["quote"].to_list() == ["I could barely manage a mile", "we adopted a rescue dog"]
    assert got["found"].to_list() == [True, False]


def test_embedding_cosine_and_its_errors():
    df = pl.DataFrame({"a": [[3.0, 4.0], [0.0, 0.0]], "b": [[3.0, 4.0], [1.0, 2.0]]})
    assert df.select(pr.embedding_cosine("a", "b")).to_series().to_list() == [1.0, 0.0]
    bad = pl.DataFrame({"a": [[1.0, 0.0]], "b": [[1.0, 0.0, 0.0]]})
    with pytest.raises(pl.exceptions.ComputeError, match="row 0"):
        bad.select(pr.embedding_cosine("a", "b"))
    with pytest.raises(ValueError, match="2 vectors for 15 texts|vectors for"):
        pr.locate_quotes_in_corpus(QUOTES, DOCS, embed=lambda texts: [[1.0], [2.0]])


def test_bad_options_are_clear_errors():
    df = pl.DataFrame({"quote": ["a b c"], "sources": [["a b c d"]]})
    # Errors raised inside a plugin reach Python as ComputeError, with the library's message.
    with pytest.raises(pl.exceptions.ComputeError, match="window_size must be at least 1"):
        df.select(pr.locate_quotes("quote", "sources", window_size=0))
    with pytest.raises(pl.exceptions.ComputeError, match="sliding_bm25"):
        df.select(pr.locate_quotes("quote", "sources", trim="sliding_bm25"))
    with pytest.raises(pl.exceptions.ComputeError, match="invalid options"):
        df.select(pr.locate_quotes("quote", "sources", trim="exact"))
    with pytest.raises(pl.exceptions.ComputeError, match="sources"):
        df.select(pr.locate_quotes("quote", pl.lit(3)))
    with pytest.raises(ValueError, match="corpus has no documents|no documents"):
        pr.locate_quotes_in_corpus(["a"], {})


@pytest.mark.parametrize("fn", [pr.locate_quotes, pr.locate_quotes_in_corpus, pr.extract_quotes, pr.embedding_cosine])
def test_docstring_examples_run(fn):
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for test in finder.find(fn, fn.__name__, globs={}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


def test_located_spans_feed_the_span_metrics():
    docs = [{"file": "a.txt", "text": "At first I could barely manage a mile. Then it got easier."}]
    df = pl.DataFrame(
        {
            "answer": ["She said “I could barely manage a mile” and “then it got easier”."],
            "sources": [docs],
            "relevant_spans": [[{"file": "a.txt", "start": 9, "end": 37}]],
        }
    )
    cited = (
        df.with_columns(pr.extract_quotes("answer").alias("quote"))
        .explode("quote", empty_as_null=False)
        .with_columns(pr.locate_quotes("quote", "sources"))
        .group_by("answer", maintain_order=True)
        .agg(pl.col("locate_quotes").alias("cited"), pl.col("relevant_spans").first())
    )
    # The located structs carry file, start and end: the span metrics read them as they are.
    got = cited.select(pr.span_precision("cited", "relevant_spans"), pr.span_recall("cited", "relevant_spans"))
    # Cited [9, 37) and [39, 57): 28 of 46 cited code points are relevant, all 28 relevant ones cited.
    assert got.row(0) == pytest.approx((28 / 46, 1.0))


def test_soak_automatic_window_does_not_depend_on_streaming_batches():
    """soak's window size is 1.1 x the longest quote of the batch: in a streaming query the batch
    is the whole column, not a morsel, so every row equals the eager result."""
    corpus = pl.lit(pl.Series([[{"file": name, "text": text} for name, text in DOCS.items()]]))
    # Short quotes first, the longest last: a morsel of the first rows alone would size its
    # windows from the short quotes.
    quotes = sorted(QUOTES, key=len) * 3
    df = pl.concat([pl.DataFrame({"quote": [q]}) for q in quotes], rechunk=False)
    expr = pr.locate_quotes("quote", corpus, compat="soak")
    eager = df.select(expr)
    with pl.Config(streaming_chunk_size=2):
        streaming = df.lazy().select(expr).collect(engine="streaming")
    assert streaming.equals(eager)
    # The same through the namespace and with a fixed window (elementwise again).
    fixed = pr.locate_quotes("quote", corpus, compat="soak", window_size=200)
    with pl.Config(streaming_chunk_size=2):
        assert df.lazy().select(fixed).collect(engine="streaming").equals(df.select(fixed))
    # A morsel-sized batch would have found other windows: the whole column matters.
    first = df.head(2).select(expr).unnest("locate_quotes")["bm25_score"].to_list()
    whole = eager.unnest("locate_quotes")["bm25_score"].to_list()[:2]
    assert first != whole
