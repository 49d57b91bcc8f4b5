"""pr.nugget_scores and pr.claim_check_scores against values recorded from the real nuggetizer
0.0.5 and RAGChecker 0.1.9 (tests/fixtures, written by datasets/fixtures/make_claim_fixtures.py),
through the Polars plugin, eager and streaming."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import polars_rag as pr

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_claim_check_scores_equal_ragchecker_through_the_plugin():
    groups = json.loads((FIXTURES / "claim_checks.json").read_text())["groups"]
    cases = [case for group in groups for case in group["cases"]]
    df = pl.DataFrame(
        {
            "a": [c["labels"]["answer2response"] for c in cases],
            "b": [c["labels"]["response2answer"] for c in cases],
            "c": [c["labels"]["retrieved2response"] for c in cases],
            "d": [c["labels"]["retrieved2answer"] for c in cases],
        },
        schema={"a": pl.List(pl.String), "b": pl.List(pl.String), "c": pl.List(pl.List(pl.String)), "d": pl.List(pl.List(pl.String))},
    )
    expr = pr.claim_check_scores("a", "b", "c", "d", compat="ragchecker")
    got = df.select(expr).unnest("claim_check_scores")
    assert got.equals(df.lazy().select(expr).collect(engine="streaming").unnest("claim_check_scores"))
    for row, case in zip(got.iter_rows(named=True), cases):
        for name, want in case["metrics"].items():
            assert row[name] == pytest.approx(want, abs=1e-12), (name, case["labels"])
    # RAGChecker's report of each group, as its code printed it: claim_check_report equals it
    # exactly (the mean × 100, rounded to one decimal as numpy rounds), in a group_by too.
    groups_of_rows = []
    for g, group in enumerate(groups):
        groups_of_rows += [g] * len(group["cases"])
    per_group = (
        df.with_columns(pl.Series("group", groups_of_rows))
        .group_by("group", maintain_order=True)
        .agg(pr.claim_check_report(expr, compat="ragchecker"))
    )
    for (g, report), group in zip(per_group.iter_rows(), groups):
        assert report == group["aggregate"], g
    # The standard report is the plain means.
    means = df.select(pr.claim_check_report(expr)).item()
    assert means == pytest.approx(got.mean().row(0, named=True), abs=1e-12)
    assert pl.DataFrame({"s": got.to_struct("s").head(0)}).select(pr.claim_check_report("s")).item() is None


def test_nugget_scores_equal_nuggetizer_through_the_plugin():
    groups = json.loads((FIXTURES / "nugget_scores.json").read_text())["groups"]
    records = [(r, s) for g in groups for r, s in zip(g["records"], g["scores"])]
    df = pl.DataFrame(
        {"importance": [r["importance"] for r, _ in records], "assignment": [r["assignment"] for r, _ in records]},
        schema={"importance": pl.List(pl.String), "assignment": pl.List(pl.String)},
    )
    got = df.select(pr.nugget_scores("importance", "assignment", compat="nuggetizer")).unnest("nugget_scores")
    for row, (_, want) in zip(got.iter_rows(named=True), records):
        assert row == want


def test_unknown_labels_name_the_metric_and_the_row():
    df = pl.DataFrame({"importance": [["vital"], ["critical"]], "assignment": [["support"], ["support"]]})
    with pytest.raises(pl.exceptions.ComputeError, match=r"nugget_scores: unknown importance \"critical\".*row 2"):
        df.select(pr.nugget_scores("importance", "assignment"))
    # nuggetizer's reading counts it as okay.
    assert df.select(pr.nugget_scores("importance", "assignment", compat="nuggetizer"))["nugget_scores"][1]["strict_vital_score"] == 0.0
