"""Fidelity edges from Python: ``citation_recall_precision`` in ALCE's QAMPARI reading and on
ALCE's edge answers (the numbers recorded from ALCE's own eval.py, tests/fixtures/
alce_citations.json), through the expression and through ``score``; ``ppi_mean`` with a judge that
gave every item the same score (ppi_python's NaN in compat mode)."""

from __future__ import annotations

import json
from pathlib import Path

import polars_rag as pr
import pytest
from fake_judge import FakeJudge

import polars as pl

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "alce_citations.json").read_text())


@pytest.fixture()
def server():
    fake = FakeJudge()
    yield fake
    fake.close()


def cases(key: str) -> list[dict]:
    return [case for group in FIXTURE[key] for case in group["cases"]]


def frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame({
        "query_id": [f"q{i}" for i in range(len(rows))],
        "answer": [c["answer"] for c in rows],
        "passages": [c["passages"] for c in rows],
        "question": [c.get("question", "") for c in rows],
    })


def close(got: list[float | None], want: list[float | None]) -> bool:
    return all((g is None and w is None) or (g is not None and w is not None and abs(g - w) < 1e-12)
               for g, w in zip(got, want, strict=True))


def test_qampari_reading_equals_alce(server):
    rows = cases("qampari_groups")
    judge = pr.Judge(base_url=server.base_url, model="fake", cache=None)
    out = frame(rows).select(
        pr.citation_recall_precision("answer", "passages", question="question", qampari=True, judge=judge)
    ).unnest("citation_recall_precision")
    assert close(out["citation_recall"].to_list(), [c["citation_recall"] for c in rows])
    assert close(out["citation_precision"].to_list(), [c["citation_precision"] for c in rows])
    assert out["judge_error"].null_count() == len(rows)


def test_edges_of_the_marker_reading_equal_alce(server):
    rows = FIXTURE["edge_groups"][2]["cases"]
    judge = pr.Judge(base_url=server.base_url, model="fake", cache=None)
    out = frame(rows).select(pr.citation_recall_precision("answer", "passages", judge=judge)).unnest(
        "citation_recall_precision")
    assert close(out["citation_recall"].to_list(), [c["citation_recall"] for c in rows])
    assert close(out["citation_precision"].to_list(), [c["citation_precision"] for c in rows])


def test_qampari_without_its_question_is_refused(server):
    judge = pr.Judge(base_url=server.base_url, model="fake", cache=None)
    df = frame(cases("qampari_groups")[:2])
    with pytest.raises(pl.exceptions.ComputeError, match="qampari reads each answer's question: give the question column"):
        df.select(pr.citation_recall_precision("answer", "passages", qampari=True, judge=judge))
    with pytest.raises(pl.exceptions.ComputeError, match="'question' is read only with qampari"):
        df.select(pr.citation_recall_precision("answer", "passages", question="question", judge=judge))


def test_score_reads_the_question_column_in_qampari_mode(server):
    rows = cases("qampari_groups")[:12]
    judge = pr.Judge(base_url=server.base_url, model="fake", cache=None)
    run = frame(rows).rename({"passages": "sources"})
    result = pr.score(run, metrics=["citation_recall_precision"], judge=judge,
                      options={"citation_recall_precision": {"qampari": True}})
    got = result.scores.unnest("citation_recall_precision")
    assert close(got["citation_recall"].to_list(), [c["citation_recall"] for c in rows])
    assert "qampari" in result.signatures["citation_recall_precision"]
    with pytest.raises(ValueError, match="questions"):
        pr.score(run.drop("question"), metrics=["citation_recall_precision"], judge=judge,
                 options={"citation_recall_precision": {"qampari": True}})


def test_ppi_mean_of_a_judge_with_one_score():
    df = pl.DataFrame({"judged": [1.0] * 7, "label": [1.0, 0.0, 1.0, 1.0, None, None, None]})
    compat = df.select(pr.ppi_mean("judged", "label", compat="ppi_py")).unnest("ppi_mean").row(0, named=True)
    assert compat["estimate"] is None and compat["ci_low"] is None
    assert "ppi_python's tuned λ is 0/0" in compat["reason"]
    standard = df.select(pr.ppi_mean("judged", "label")).unnest("ppi_mean").row(0, named=True)
    assert (standard["lam"], standard["estimate"]) == (0.0, 0.75)
    assert (standard["ci_low"], standard["ci_high"]) == (standard["classical_ci_low"], standard["classical_ci_high"])
