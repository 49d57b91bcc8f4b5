"""Labels under hostile inputs, from Python: a labels path that is a FIFO or a directory is an
error (not a wait holding the interpreter), and the labelling workbook keeps 64-bit and float ids
digit for digit through a spreadsheet program's save."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import openpyxl
import polars as pl
import polars_rag as pr
import pytest

SCRIPT = """
import sys
import polars as pl
import polars_rag as pr

labels = sys.argv[1]
scores = pl.DataFrame({"query_id": ["a", "b"], "faithfulness": [{"score": 0.5}, {"score": 1.0}]})
for call in (
    lambda: pr.calibrate(scores, labels),
    lambda: pr.labelled_deltas(scores, scores, labels, labels),
):
    try:
        call()
    except ValueError as e:
        print(e)
    else:
        print("no error")
"""


@pytest.mark.parametrize("kind", ["fifo.xlsx", "fifo.parquet", "folder.xlsx"])
def test_a_labels_path_that_is_not_a_file_is_an_error_not_a_wait(tmp_path: Path, kind: str):
    path = tmp_path / kind
    if kind.startswith("fifo"):
        os.mkfifo(path)
    else:
        path.mkdir()
    # A child interpreter, so that a wait fails this test after a minute instead of hanging it.
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path)], check=False, capture_output=True, text=True, timeout=60
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == 2, done.stdout + done.stderr
    calibrate, deltas = lines
    assert calibrate.startswith("calibrate: labels table") and "not a regular file" in calibrate, calibrate
    assert str(path) in calibrate
    assert deltas.startswith("labelled_deltas: labels table") and "not a regular file" in deltas, deltas


def test_the_workbook_keeps_64_bit_and_float_ids(tmp_path: Path):
    for ids in (
        [9_000_000_000_000_173, 9_000_000_000_000_174, 2**63 - 1, 2**63 - 2, -(2**63), 12],
        [0.1, 0.30000000000000004, 1e-7, 123456789.123456789, 2.5e20],
    ):
        n = len(ids)
        scores = pl.DataFrame({"query_id": ids, "faithfulness": [{"score": (i % 3) / 2} for i in range(n)]})
        book = tmp_path / "to-label.xlsx"
        pr.sample_for_labelling(scores, n, values=["faithfulness.score"], xlsx=book)
        # A person fills in every label in a spreadsheet program (openpyxl stands in for it).
        workbook = openpyxl.load_workbook(book)
        page = workbook.active
        header = [c.value for c in page[1]]
        id_col, label_col = header.index("query_id") + 1, header.index("faithfulness.score") + 1
        # Text cells, whose digits give each id back exactly.
        cells = [page.cell(row=r, column=id_col).value for r in range(2, n + 2)]
        assert all(isinstance(c, str) for c in cells), cells
        kind = type(ids[0])
        assert sorted(kind(c) for c in cells) == sorted(ids)
        for row in range(2, n + 2):
            page.cell(row=row, column=label_col).value = 0.5
        workbook.save(book)
        row = pr.calibrate(scores, book).table.filter(pl.col("metric") == "faithfulness.score").row(0, named=True)
        assert row["n_labelled"] == n, ids
