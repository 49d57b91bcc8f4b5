"""Answer metrics through the Python plugin, checked against the reference libraries themselves
(rouge-score 0.1.2 and NLTK 3.10.4, installed from PyPI in the test environment),
on generated data (answer_data.py), and against the recorded reference vectors."""

from __future__ import annotations

import random

import polars as pl
import pytest
from polars.exceptions import ComputeError

import polars_rag as pr
from answer_data import close, pairs, sentence

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

# ------------------------------------------------------------------------------------- ROUGE


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_equals_rouge_score(use_stemmer):
    rng = random.Random(3)
    data = pairs(300, seed=7)
    data = [(h.replace(" . ", " .\n"), r.replace(" . ", " .\n")) for h, r in data]
    multi = [[r, sentence(rng, 8)] for _, r in data]
    df = pl.DataFrame({"answer": [h for h, _ in data], "ref": [r for _, r in data], "refs": multi})
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=use_stemmer)
    single = df.select(pr.rouge("answer", "ref", use_stemmer=use_stemmer))["rouge"].to_list()
    several = df.select(pr.rouge("answer", "refs", use_stemmer=use_stemmer))["rouge"].to_list()
    for (h, r), refs, one, many in zip(data, multi, single, several):
        for got, want in ((one, scorer.score(r, h)), (many, scorer.score_multi(refs, h))):
            for key, s in want.items():
                for field in ("precision", "recall", "fmeasure"):
                    assert close(got[key][field], getattr(s, field)), (h, r, key, field)


def test_rouge_unicode_tokenizer_scores_other_scripts():
    df = pl.DataFrame({"answer": ["東京大学は日本にある", "café crème brûlée"], "ref": ["東京大学", "café crème"]})
    compat = df.select(pr.rouge("answer", "ref"))["rouge"].to_list()
    uni = df.select(pr.rouge("answer", "ref", tokenizer="unicode"))["rouge"].to_list()
    assert compat[0]["rouge1"]["fmeasure"] == 0.0  # rouge-score drops non-ASCII text
    assert uni[0]["rouge1"]["recall"] == 1.0
    assert uni[1]["rouge1"]["recall"] == 1.0


def test_rouge_nulls_errors_lazy_streaming_namespace_and_signature(tmp_path):
    df = pl.DataFrame({"answer": ["a b c", None, "", "x"], "ref": [["a b c"], ["x"], [""], []]})
    out = df.select(pr.rouge("answer", "ref"))["rouge"].to_list()
    assert out[0]["rougeL"]["fmeasure"] == 1.0
    assert out[1] is None and out[3] is None  # null answer; no reference
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL"])
    assert out[2]["rouge1"]["fmeasure"] == scorer.score("", "")["rouge1"].fmeasure
    with pytest.raises(ComputeError, match=r"rouge: column 'ref' \(references\) must be list\[str\]"):
        pl.DataFrame({"answer": ["x"], "ref": [1]}).select(pr.rouge("answer", "ref"))
    with pytest.raises(ComputeError, match=r"rouge: invalid options: option 'tokenizer'"):
        df.select(pr.rouge("answer", "ref", tokenizer="nope"))
    data = pairs(200, seed=11)
    path = tmp_path / "pairs.parquet"
    pl.DataFrame({"answer": [h for h, _ in data], "ref": [r for _, r in data]}).write_parquet(path)
    eager = pl.read_parquet(path).select(pr.rouge("answer", "ref", use_stemmer=True))
    streamed = pl.scan_parquet(path).select(pr.rouge("answer", "ref", use_stemmer=True)).collect(engine="streaming")
    assert eager.equals(streamed)
    via_ns = pl.read_parquet(path).select(pl.col("answer").rag.rouge("ref", use_stemmer=True))
    assert via_ns.equals(eager)
    assert pr.signature("rouge") == "rouge|tok:rouge_score|stem:none|version:rouge-score-0.1.2"
    assert pr.signature("rouge", use_stemmer=True, tokenizer="unicode").startswith("rouge|tok:unicode|stem:porter")
    assert pr.signature("quoted_spans", quotes="ragas").startswith("quotes:ragas|")
    with pytest.raises(ValueError, match="unknown metric"):
        pr.signature("nope")
    with pytest.raises(ValueError, match="invalid options"):
        pr.signature("rouge", stemmer=True)


def _prf(struct: dict | None) -> tuple | None:
    return None if struct is None else (struct["precision"], struct["recall"], struct["fmeasure"])


def test_datapizza_rouge_forms_equal_the_recorded_vectors(vectors):
    for section, answer_key, ref_key, dtype in (
        ("datapizza.rouge_score", "retrieved_chunk", "ground_truth_chunk", pl.String),
        ("datapizza.corpus_rouge_scores", "retrieved_chunks", "ground_truth_chunks", pl.List(pl.String)),
    ):
        cases = vectors[section]
        df = pl.DataFrame(
            {"answer": [c["input"][answer_key] for c in cases], "refs": [c["input"][ref_key] for c in cases]},
            schema={"answer": dtype, "refs": dtype},
        )
        got = df.select(pr.rouge("answer", "refs", compat="datapizza"))["rouge"].to_list()
        for case, row in zip(cases, got):
            if "error" in case:
                assert row is None, case["description"]
                continue
            for rouge_type in ("rouge1", "rouge2", "rougeL"):
                want = case["output"][rouge_type]
                got_prf = _prf(row[rouge_type])
                assert got_prf is not None
                for g, w in zip(got_prf, (want["precision"], want["recall"], want["fmeasure"])):
                    assert close(g, w), (section, case["description"], rouge_type)
            assert row["rougeLsum"] is None  # datapizza computes no ROUGE-Lsum
