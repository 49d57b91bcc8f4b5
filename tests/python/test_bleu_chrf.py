"""BLEU, corpus BLEU and chrF through the Python plugin, checked against the reference libraries themselves
(sacrebleu 2.6.0, installed from PyPI in the test environment),
on generated data (answer_data.py), and against the recorded reference vectors."""

from __future__ import annotations

import random

import polars as pl
import pytest
from polars.exceptions import ComputeError

import polars_rag as pr
from answer_data import close, pairs, sentence

sacrebleu = pytest.importorskip("sacrebleu")

# ------------------------------------------------------------------------------------- BLEU


@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"tokenize": "none"},
        {"tokenize": "char"},
        {"tokenize": "intl"},
        {"lowercase": True},
        {"smooth_method": "none"},
        {"smooth_method": "floor"},
        {"smooth_method": "add-k", "smooth_value": 2},
        {"use_effective_order": False},
    ],
)
def test_bleu_equals_sacrebleu(opts):
    data = pairs(300)
    df = pl.DataFrame({"answer": [h for h, _ in data], "ref": [r for _, r in data]})
    got = df.select(pr.bleu("answer", "ref", **opts))["bleu"].to_list()
    for (h, r), g in zip(data, got):
        want = sacrebleu.sentence_bleu(h, [r], **opts).score / 100
        assert close(g, want), (h, r, g, want)


def test_bleu_several_references_and_corpus():
    rng = random.Random(9)
    hyps = [sentence(rng, rng.randint(1, 20)) for _ in range(200)]
    refs = [[sentence(rng, rng.randint(1, 20)) for _ in range(3)] for _ in range(200)]
    for i in range(200):  # share words so n-grams match
        refs[i][0] = hyps[i] + " " + refs[i][0][:10]
    df = pl.DataFrame({"answer": hyps, "refs": refs, "g": [i % 4 for i in range(200)]})
    got = df.select(pr.bleu("answer", "refs"))["bleu"].to_list()
    for h, r, g in zip(hyps, refs, got):
        assert close(g, sacrebleu.sentence_bleu(h, r).score / 100)
    corpus = df.select(pr.corpus_bleu("answer", "refs")).item()
    streams = [list(s) for s in zip(*refs)]
    assert close(corpus, sacrebleu.corpus_bleu(hyps, streams).score / 100)
    per_group = df.group_by("g").agg(pr.corpus_bleu("answer", "refs")).sort("g")
    for g, value in per_group.iter_rows():
        idx = [i for i in range(200) if i % 4 == g]
        want = sacrebleu.corpus_bleu([hyps[i] for i in idx], [[refs[i][k] for i in idx] for k in range(3)])
        assert close(value, want.score / 100)


# ------------------------------------------------------------------------------------- chrF


@pytest.mark.parametrize("word_order", [0, 2])
def test_chrf_equals_sacrebleu(word_order):
    data = pairs(300, seed=6)
    df = pl.DataFrame({"answer": [h for h, _ in data], "ref": [[r, h[:5]] for h, r in data]})
    got = df.select(pr.chrf("answer", "ref", word_order=word_order))["chrf"].to_list()
    for (h, r), g in zip(data, got):
        want = sacrebleu.sentence_chrf(h, [r, h[:5]], word_order=word_order).score / 100
        assert close(g, want), (h, r, g, want)


@pytest.mark.parametrize(
    "opts",
    [{}, {"word_order": 2}, {"lowercase": True}, {"whitespace": True}, {"eps_smoothing": True}, {"char_order": 3, "beta": 1}],
)
def test_corpus_chrf_equals_sacrebleu(opts):
    data = pairs(400, seed=11)
    hyps = [h for h, _ in data]
    # Two reference streams: each segment scores with its best reference, as in sacrebleu.
    streams = [[r for _, r in data], [h[:7] for h, _ in data]]
    df = pl.DataFrame({"answer": hyps, "ref": [[a, b] for a, b in zip(*streams)]})
    got = df.select(pr.corpus_chrf("answer", "ref", **opts)).item()
    metric = sacrebleu.metrics.CHRF(**opts)
    want = metric.corpus_score(hyps, streams).score / 100
    assert close(got, want), (got, want)
    # Per group, as sacrebleu over each group's segments; lazy and streaming give the same.
    grouped = df.with_columns(group=pl.int_range(pl.len()) % 3).group_by("group").agg(pr.corpus_chrf("answer", "ref", **opts))
    for group, value in grouped.iter_rows():
        idx = [i for i in range(len(hyps)) if i % 3 == group]
        expected = metric.corpus_score([hyps[i] for i in idx], [[s[i] for i in idx] for s in streams]).score / 100
        assert close(value, expected), (group, value, expected)
    assert df.lazy().select(pr.corpus_chrf("answer", "ref", **opts)).collect(engine="streaming").item() == got


def test_corpus_chrf_leaves_out_rows_without_answer_or_reference():
    df = pl.DataFrame({"answer": ["the cat sat", None, "a dog"], "ref": [["the cat sat"], ["x"], []]})
    assert close(df.select(pr.corpus_chrf("answer", "ref")).item(), sacrebleu.corpus_chrf(["the cat sat"], [["the cat sat"]]).score / 100)
    empty = pl.DataFrame({"answer": [None], "ref": [["x"]]}, schema={"answer": pl.String, "ref": pl.List(pl.String)})
    assert empty.select(pr.corpus_chrf("answer", "ref")).item() == 0.0


def test_bleu_nulls_errors_lazy_streaming_namespace_and_signature(tmp_path):
    df = pl.DataFrame({"answer": ["a b c", None, "", "x"], "ref": [["a b c"], ["x"], [""], []]})
    out = df.select(pr.bleu("answer", "ref"), pr.chrf("answer", "ref"))
    assert out["bleu"][1] is None and out["chrf"][1] is None  # null answer
    assert out["bleu"][3] is None and out["chrf"][3] is None  # no reference
    assert close(out["bleu"][2], sacrebleu.sentence_bleu("", [""]).score / 100)
    assert close(out["chrf"][2], sacrebleu.sentence_chrf("", [""]).score / 100)
    with pytest.raises(ComputeError, match=r"bleu: column 'ref' \(references\) must be list\[str\]"):
        pl.DataFrame({"answer": ["x"], "ref": [1]}).select(pr.bleu("answer", "ref"))
    with pytest.raises(ComputeError, match=r"bleu: invalid options: option 'tokenize'"):
        df.select(pr.bleu("answer", "ref", tokenize="nope"))
    data = pairs(200, seed=11)
    path = tmp_path / "pairs.parquet"
    pl.DataFrame({"answer": [h for h, _ in data], "ref": [r for _, r in data]}).write_parquet(path)
    exprs = [pr.bleu("answer", "ref"), pr.chrf("answer", "ref", word_order=2)]
    eager = pl.read_parquet(path).select(exprs)
    streamed = pl.scan_parquet(path).select(exprs).collect(engine="streaming")
    assert eager.equals(streamed)
    via_ns = pl.read_parquet(path).select(
        pl.col("answer").rag.bleu("ref"), pl.col("answer").rag.chrf("ref", word_order=2)
    )
    assert via_ns.equals(eager)
    scorer = sacrebleu.BLEU(effective_order=True)
    scorer.sentence_score("a b", ["a b"])
    one_ref = scorer.get_signature().format()
    assert pr.signature("bleu") == one_ref.replace("nrefs:1", "nrefs:var")
    assert "tok:char" in pr.signature("bleu", tokenize="char")
    assert "eff:no" in pr.signature("corpus_bleu") and "eff:yes" in pr.signature("bleu")
    assert "nw:2" in pr.signature("chrf", word_order=2)


def test_datapizza_bleu_forms_equal_the_recorded_vectors(vectors):
    cases = vectors["datapizza.bleu_score"]
    df = pl.DataFrame(
        {"answer": [c["input"]["retrieved_chunk"] for c in cases], "refs": [c["input"]["ground_truth_chunks"] for c in cases]},
        schema={"answer": pl.String, "refs": pl.List(pl.String)},
    )
    got = df.select(pr.bleu("answer", "refs", compat="datapizza"))["bleu"].to_list()
    for case, value in zip(cases, got):
        assert close(value, case["output"]), case["description"]
    # Several answers per row (retrieved chunks): datapizza's corpus_bleu_score.
    cases = vectors["datapizza.corpus_bleu_score"]
    df = pl.DataFrame(
        {"answer": [c["input"]["retrieved_chunks"] for c in cases], "refs": [c["input"]["ground_truth_chunks"] for c in cases]},
        schema={"answer": pl.List(pl.String), "refs": pl.List(pl.String)},
    )
    got = df.select(pr.bleu("answer", "refs", compat="datapizza"))["bleu"].to_list()
    for case, value in zip(cases, got):
        want = None if "error" in case else case["output"]
        assert close(value, want), case["description"]
    assert "compat:datapizza" in pr.signature("bleu", compat="datapizza")
    with pytest.raises(pl.exceptions.ComputeError, match="corpus_bleu: datapizza's corpus BLEU is per query"):
        df.select(pr.corpus_bleu("answer", "refs", compat="datapizza"))
