"""The README's and the getting-started page's examples run as a reader would run them: every
Python block, and every `polars-rag` command of the shell blocks, in a folder holding the demo
tables; the Rust block is the doctest of `columnar::expr` (compiled by `cargo test`)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars_rag._cli import DEMO_DIR

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "docs" / "getting-started.md"]
COMMAND = Path(sys.executable).parent / "polars-rag"


def _blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", page.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)


@pytest.fixture()
def demo_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for table in DEMO_DIR.glob("*.parquet"):
        shutil.copy(table, tmp_path / table.name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_python_examples_run(page: Path, demo_folder: Path) -> None:
    blocks = _blocks(page, "python")
    assert blocks, f"{page.name} has no Python example"
    for block in blocks:
        namespace: dict[str, object] = {}
        exec(compile(block, f"{page.name} example", "exec"), namespace)  # noqa: S102 (the page's own examples)
        if "result" in namespace:
            result = namespace["result"]
            assert result.scores.height == pl.read_parquet(demo_folder / "golden.parquet").height  # type: ignore[attr-defined]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_commands_run(page: Path, demo_folder: Path) -> None:
    commands = [
        line.split("#")[0].strip()
        for block in _blocks(page, "bash")
        for line in block.splitlines()
        if line.startswith("polars-rag")
    ]
    assert commands, f"{page.name} has no polars-rag command"
    for command in commands:
        argv = shlex.split(command)
        done = subprocess.run([str(COMMAND), *argv[1:]], check=False, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    if any("--html report.html" in c for c in commands):
        assert (demo_folder / "report.html").stat().st_size > 0


def test_the_rust_example_is_a_doctest() -> None:
    doctest = (ROOT / "src" / "columnar" / "expr.rs").read_text(encoding="utf-8")
    documented = "\n".join(line.removeprefix("//!").strip() for line in doctest.splitlines() if line.startswith("//!"))
    for page in PAGES:
        for block in _blocks(page, "rust"):
            for line in block.splitlines():
                assert line.strip() in documented, f"{page.name}: {line!r} is not in the doctest of src/columnar/expr.rs"
