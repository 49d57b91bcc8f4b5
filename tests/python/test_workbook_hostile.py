"""A hostile labels workbook reaches Python as an error that names the workbook, never as a
crash of the interpreter: each call runs in a child interpreter, so that an abort fails the test
instead of killing pytest."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import polars as pl
import polars_rag as pr
import pytest

SHEET_HEAD = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
)
SHEET_TAIL = "</sheetData></worksheet>"


def write_book(path: Path, rows: str) -> None:
    """A workbook whose first sheet holds `rows` (the XML of its `<row>` elements), deflated."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr(
            "xl/workbook.xml",
            '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
            'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
            '<sheets><sheet name="Labels" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        book.writestr(
            "xl/_rels/workbook.xml.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        )
        book.writestr("xl/worksheets/sheet1.xml", SHEET_HEAD + rows + SHEET_TAIL)


HEADER = (
    '<row r="1"><c r="A1" t="inlineStr"><is><t>query_id</t></is></c>'
    '<c r="B1" t="inlineStr"><is><t>faithfulness</t></is></c></row>'
)


def xfd_book(path: Path) -> None:
    """100,000 rows of one cell each in column XFD: 1.6 billion cells read densely."""
    rows = "".join(f'<row r="{n}"><c r="XFD{n}"><v>1</v></c></row>' for n in range(2, 100_002))
    write_book(path, HEADER + rows)


CALL = textwrap.dedent(
    """
    import sys
    import polars as pl
    import polars_rag as pr

    ids = [f"q{i}" for i in range(10)]
    scores = pl.DataFrame({"query_id": ids, "faithfulness": [{"score": float(i % 2)} for i in range(10)]})
    try:
        if sys.argv[1] == "calibrate":
            pr.calibrate(scores, sys.argv[2])
        else:
            pr.labelled_deltas(scores, scores, sys.argv[2], sys.argv[2])
    except ValueError as error:
        print(error)
        sys.exit(3)
    print("read without an error")
    """
)


@pytest.mark.parametrize("function", ["calibrate", "labelled_deltas"])
def test_a_cell_in_column_xfd_on_every_row_is_an_error_naming_the_workbook(tmp_path: Path, function: str):
    book = tmp_path / "xfd.xlsx"
    xfd_book(book)
    assert book.stat().st_size < 2_000_000
    done = subprocess.run(
        [sys.executable, "-c", CALL, function, str(book)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    # 3: the call raised a ValueError; an abort or a signal gives another status.
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    assert done.stdout.startswith(f"{function}: cannot read the workbook {book}"), done.stdout
    assert "row 2 has a value in column XFD" in done.stdout, done.stdout


def test_blank_rows_are_skipped_and_a_label_without_its_key_names_the_row(tmp_path: Path):
    def cells(n: int, query_id: str | None, label: float) -> str:
        key = f'<c r="A{n}" t="inlineStr"><is><t>{query_id}</t></is></c>' if query_id else ""
        return f'<row r="{n}">{key}<c r="B{n}"><v>{label}</v></c></row>'

    ids = [f"q{i}" for i in range(10)]
    scores = pl.DataFrame({"query_id": ids, "faithfulness": [{"score": float(i % 2)} for i in range(10)]})
    book = tmp_path / "blank.xlsx"
    # Rows 3 and 4 left blank between the labelled ones.
    write_book(book, HEADER + cells(2, "q1", 1.0) + cells(5, "q2", 0.0))
    table = pr.calibrate(scores, book).table
    assert table.row(0, named=True)["n_labelled"] == 2
    # A label in row 6 whose query_id was left empty.
    write_book(book, HEADER + cells(2, "q1", 1.0) + cells(5, "q2", 0.0) + cells(6, None, 1.0))
    with pytest.raises(ValueError, match=r"^calibrate: row 6 of .*blank\.xlsx has no query_id"):
        pr.calibrate(scores, book)
    with pytest.raises(ValueError, match=r"^labelled_deltas: row 6 of .*blank\.xlsx has no query_id"):
        pr.labelled_deltas(scores, scores, book, book)
