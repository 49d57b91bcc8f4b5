"""Write the demo's judged tables (python/polars_rag/demo/judged_{a,b}.parquet) and its labels
(labels_{a,b}.parquet), the data of the README's "trust the judge" example.

The judge is the package's rule-following stand-in server (``polars_rag.testing.FakeJudge``), so
this runs anywhere and writes the same tables every time: both demo runs scored with
``faithfulness`` (three samples per item) and ``answer_match``. The labels are on 12 items chosen
by ``pr.sample_for_labelling`` (seeded, stratified by segment and verdict) from run a, the same
items in both runs. They are filled by a stated rule that stands in for a person, so the example
is reproducible: the demo answers quote the source, and an answer that adds an invented clause
("..., and also “the national debt was fully repaid last year”") is half faithful (one of its two
statements is supported), any other answer fully faithful.

Run from the repository root, with the package installed (``scripts/test.sh`` makes ``.venv``):

    .venv/bin/python datasets/make_demo_judged.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl

import polars_rag as pr
from polars_rag.testing import FakeJudge

DEMO = Path(__file__).resolve().parents[1] / "python" / "polars_rag" / "demo"


def faithfulness_by_rule(answer: str) -> float:
    """The stand-in for a person's faithfulness label of a demo answer."""
    return 0.5 if "and also" in answer else 1.0


def main() -> None:
    server = FakeJudge()
    try:
        judge = pr.Judge(base_url=server.base_url, model="fake-judge", cache=tempfile.mkdtemp())
        judged = {}
        for run in ("a", "b"):
            result = pr.score(
                DEMO / f"run_{run}.parquet",
                DEMO / "golden.parquet",
                DEMO / "corpus.parquet",
                metrics=["faithfulness", "answer_match"],
                judge=judge,
                options={"faithfulness": {"samples": 3}},
                args=["--question-col", "query"],
                out=DEMO / f"judged_{run}.parquet",
            )
            judged[run] = result.scores
    finally:
        server.close()
    sheet = pr.sample_for_labelling(judged["a"], 12, by="segment", values=["faithfulness.score"], seed=7)
    ids = sheet["query_id"]
    for run in ("a", "b"):
        answers = judged[run].filter(pl.col("query_id").is_in(ids.implode()) & pl.col("answer").is_not_null())
        labels = answers.select(
            "query_id",
            pl.col("answer").map_elements(faithfulness_by_rule, return_dtype=pl.Float64).alias("faithfulness.score"),
        )
        labels.write_parquet(DEMO / f"labels_{run}.parquet")
        print(f"labels_{run}.parquet: {labels.height} labelled items")


if __name__ == "__main__":
    main()
