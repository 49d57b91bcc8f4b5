"""pr.calibrate: a judge's scores tables against labels, the same table as `polars-rag calibrate`
writes, its rank correlations checked against scipy and its PPI columns against pr.ppi_mean."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from scipy import stats

import polars_rag as pr

COMMAND = Path(sys.executable).parent / "polars-rag"


def tables(n: int = 200, every: int = 5, seed: int = 11) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A scores table with faithfulness (continuous) and g_eval (grades 1-5) judged on n items,
    and labels on every `every`-th item that follow the judge with noise."""
    rng = random.Random(seed)
    truth = [rng.random() for _ in range(n)]
    judge = [min(1.0, max(0.0, t + rng.gauss(0.05, 0.15))) for t in truth]
    grades = [1 + min(4, int(t * 5)) for t in truth]
    judged_grades = [min(5, max(1, g + rng.choice([-1, 0, 0, 1]))) for g in grades]
    ids = [f"q{i:03}" for i in range(n)]
    scores = pl.DataFrame(
        {
            "query_id": ids,
            "segment": ["a" if i % 2 else "b" for i in range(n)],
            "faithfulness": [{"score": s} for s in judge],
            "g_eval": [{"score": (g - 1) / 4, "raw_score": g} for g in judged_grades],
        }
    )
    labelled = list(range(0, n, every))
    labels = pl.DataFrame(
        {
            "query_id": [ids[i] for i in labelled],
            "faithfulness": [truth[i] for i in labelled],
            "g_eval.raw_score": [grades[i] for i in labelled],
        }
    )
    return scores, labels


def test_agreement_figures_equal_scipy():
    scores, labels = tables()
    row = pr.calibrate(scores, labels).table.filter(pl.col("metric") == "faithfulness.score").row(0, named=True)
    joined = labels.join(scores.select("query_id", pl.col("faithfulness").struct.field("score")), on="query_id")
    judge, truth = joined["score"].to_list(), joined["faithfulness"].to_list()
    assert row["spearman"] == pytest.approx(stats.spearmanr(judge, truth).statistic, rel=1e-12)
    assert row["kendall"] == pytest.approx(stats.kendalltau(judge, truth).statistic, rel=1e-12)
    assert row["mae"] == pytest.approx(sum(abs(j - t) for j, t in zip(judge, truth)) / len(judge), rel=1e-12)
    assert row["kind"] == "continuous" and row["n_compared"] == 40 and row["n_items"] == 200


def test_ppi_columns_are_pr_ppi_mean_on_the_same_items():
    scores, labels = tables(n=2000, every=50)
    table = pr.calibrate(scores, labels, alpha=0.1, lam=None).table
    row = table.filter(pl.col("metric") == "faithfulness.score").row(0, named=True)
    items = scores.select("query_id", pl.col("faithfulness").struct.field("score").alias("judge")).join(
        labels.select("query_id", pl.col("faithfulness").alias("label")), on="query_id", how="left"
    )
    want = items.select(pr.ppi_mean("judge", "label", alpha=0.1)).item()
    assert (row["ppi_estimate"], row["ppi_ci_low"], row["ppi_ci_high"], row["ppi_lam"]) == (
        want["estimate"],
        want["ci_low"],
        want["ci_high"],
        want["lam"],
    )
    assert row["labels_to_halve"] is not None and 0 < row["labels_to_halve"] <= 1960


def test_grades_get_quadratic_kappa_and_a_confusion_matrix():
    scores, labels = tables()
    result = pr.calibrate({"run_a": scores}, labels, by="segment")
    grades = result.table.filter(pl.col("metric") == "g_eval.raw_score")
    assert grades["segment"].to_list() == ["all", "a", "b"]
    assert set(grades["run"]) == {"run_a"}
    row = grades.row(0, named=True)
    assert (row["kind"], row["kappa_weights"]) == ("ordinal", "quadratic")
    cells = result.confusion.filter((pl.col("metric") == "g_eval.raw_score") & (pl.col("segment") == "all"))
    assert cells["count"].sum() == row["n_compared"] == 40
    agree = cells.filter(pl.col("label") == pl.col("predicted"))["count"].sum()
    assert row["accuracy"] == pytest.approx(agree / 40)


def test_the_command_writes_the_same_table(tmp_path: Path):
    scores, labels = tables()
    scores.write_parquet(tmp_path / "run_a.parquet")
    labels.write_parquet(tmp_path / "labels.parquet")
    out = tmp_path / "calibration.parquet"
    done = subprocess.run(
        [str(COMMAND), "calibrate", str(tmp_path / "run_a.parquet"), "--labels", str(tmp_path / "labels.parquet"),
         "--by", "segment", "--out", str(out)],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "| g_eval.raw_score | all | ordinal | 40 / 200 |" in done.stdout
    written = pl.read_parquet(out)
    from_python = pr.calibrate({"run_a": scores}, labels, by="segment")
    assert written.equals(from_python.table)
    assert pl.read_parquet(tmp_path / "calibration.confusion.parquet").equals(from_python.confusion)


def test_bad_labels_are_clear_errors():
    scores, labels = tables(n=20)
    with pytest.raises(ValueError, match=r"^calibrate: the labels table has no id column 'query_id'"):
        pr.calibrate(scores, labels.rename({"query_id": "id"}))
    # Numbers typed as text are read; a word is not a number.
    typed = labels.with_columns(pl.col("faithfulness").cast(pl.String))
    assert pr.calibrate(scores, typed).table.equals(pr.calibrate(scores, labels).table)
    bad = typed.with_columns(
        pl.when(pl.col("query_id") == "q005").then(pl.lit("high")).otherwise(pl.col("faithfulness")).alias("faithfulness")
    )
    with pytest.raises(ValueError, match=r"row 2 \(q005\) has \"high\""):
        pr.calibrate(scores, bad)
    with pytest.raises(ValueError, match="alternative must be"):
        pr.calibrate(scores, labels, alternative="sideways")  # type: ignore[arg-type]


def test_a_sample_filled_in_with_openpyxl_is_read_back(tmp_path: Path):
    openpyxl = pytest.importorskip("openpyxl")
    scores, labels = tables(n=120)
    book = tmp_path / "to-label.xlsx"
    sheet = pr.sample_for_labelling(scores, 30, by="segment", seed=3, xlsx=book)
    assert sheet.height == 30 and sheet.columns == ["query_id", "segment", "g_eval.raw_score", "faithfulness.score", "comment"]
    assert sheet.equals(pr.sample_for_labelling(scores, 30, by="segment", seed=3))
    assert sheet["g_eval.raw_score"].null_count() == 30
    # A person fills in the grades in a spreadsheet program (openpyxl stands in for it) and
    # saves; one cell is left empty, one holds a grade typed as text.
    truth = dict(zip(scores["query_id"], [g["raw_score"] for g in scores["g_eval"].to_list()]))
    workbook = openpyxl.load_workbook(book)
    page = workbook.active
    header = [c.value for c in page[1]]
    id_col, grade_col = header.index("query_id") + 1, header.index("g_eval.raw_score") + 1
    for row in range(2, 32):
        key = page.cell(row=row, column=id_col).value
        if row == 2:
            continue
        page.cell(row=row, column=grade_col).value = str(truth[key]) if row == 3 else truth[key]
    page.cell(row=2, column=header.index("comment") + 1).value = "unsure"
    workbook.save(book)
    result = pr.calibrate(scores, book)
    row = result.table.filter(pl.col("metric") == "g_eval.raw_score").row(0, named=True)
    assert (row["n_labelled"], row["accuracy"], row["kappa"]) == (29, 1.0, 1.0)
    # A word where a grade belongs names its row and key.
    page.cell(row=4, column=grade_col).value = "great"
    workbook.save(book)
    key = page.cell(row=4, column=id_col).value
    with pytest.raises(ValueError, match=rf"row 3 \({key}\) has \"great\""):
        pr.calibrate(scores, book)


def test_labelled_deltas_are_ppi_on_the_paired_differences():
    base, labels_b = tables(n=300, every=10, seed=5)
    cand, labels_c = tables(n=300, every=10, seed=6)
    got = pr.labelled_deltas(base, cand, labels_b, labels_c).filter(pl.col("metric") == "faithfulness.score")
    row = got.row(0, named=True)
    # The same estimate from pr.ppi_mean over per-item differences built here.
    judge = lambda f, name: f.select("query_id", pl.col("faithfulness").struct.field("score").alias(name))  # noqa: E731
    label = lambda f, name: f.select("query_id", pl.col("faithfulness").alias(name))  # noqa: E731
    items = (
        judge(base, "jb").join(judge(cand, "jc"), on="query_id")
        .join(label(labels_b, "lb"), on="query_id", how="left")
        .join(label(labels_c, "lc"), on="query_id", how="left")
        .select((pl.col("jc") - pl.col("jb")).alias("judged"), (pl.col("lc") - pl.col("lb")).alias("labels"))
    )
    want = items.select(pr.ppi_mean("judged", "labels")).item()
    assert (row["ppi_delta"], row["ppi_ci_low"], row["ppi_ci_high"]) == (want["estimate"], want["ci_low"], want["ci_high"])
    assert row["n_labelled"] == want["n_labelled"] == 30 and row["n_items"] == 300
    assert row["shift"] == pytest.approx(row["ppi_delta"] - row["judge_delta"])
