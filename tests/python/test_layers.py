"""The crate's modules stand in layers: each may use the ones below it and never one above it,
so the import map has no arrow back up and no cycle. The layers, from the ground up:

    error, settings              the error type; settings read from text (one parser)
    atomic, text, files          plain utilities (no metric knowledge)
    engines                      the judge and the embedding model (clients, caches)
    metrics                      the kernels and their options types (may hold engine settings)
    registry                     the metric table: MetricId, MetricInfo, MetricOptions
    columnar                     the columnar layer: dispatch, Expr builders, joins
    compare                      paired comparison of scores tables
    job                          the scoring job every face calls
    cli                          the command's argument parsing and printing

A reference is any `crate::<module>` path, or `super::` reaching out of a top-level module, in
code (comments and doc comments are not code: a doc link may point anywhere)."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
LAYERS = ["error", "settings", "atomic", "text", "files", "workbook", "engines", "metrics", "registry", "columnar", "compare", "job", "cli"]
RANK = {name: rank for rank, name in enumerate(LAYERS)}


def _code(text: str) -> str:
    """The text without comments and string literals (a message may say `crate::...`)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)


def _uses(code: str) -> set[str]:
    """The top-level modules a file's code names through `crate::`, including inside grouped
    imports (`use crate::{a::b, c}`)."""
    names = set(re.findall(r"\bcrate::([a-z_]+)", code))
    for group in re.findall(r"\bcrate::\{([^}]*)\}", code):
        names.update(re.findall(r"(?:^|,)\s*([a-z_]+)", group))
    return names


def _room(path: Path) -> str | None:
    rel = path.relative_to(SRC)
    top = rel.parts[0].removesuffix(".rs")
    return top if top in RANK else None


def _arrows() -> list[tuple[str, str, str]]:
    arrows = []
    for path in sorted(SRC.rglob("*.rs")):
        room = _room(path)
        if room is None:  # lib.rs and main.rs: the crate's roots
            continue
        for used in _uses(_code(path.read_text(encoding="utf-8"))):
            if used in RANK and used != room:
                arrows.append((str(path.relative_to(SRC)), room, used))
    return arrows


def test_every_top_level_module_has_a_layer() -> None:
    rooms = {p.name.removesuffix(".rs") for p in SRC.iterdir()} - {"lib", "main"}
    assert rooms <= set(RANK), f"modules without a layer: {sorted(rooms - set(RANK))}"


def test_no_module_uses_one_above_it() -> None:
    arrows = _arrows()
    assert arrows, "no references found: the scan is broken"
    upward = [f"{file}: {room} -> {used}" for file, room, used in arrows if RANK[used] > RANK[room]]
    assert not upward, "arrows back up:\n" + "\n".join(upward)


def test_the_scan_sees_an_arrow_back_up() -> None:
    """The check itself: grouped imports are read; comments and strings are not code."""
    code = _code('use crate::{columnar::dispatch, text};\n// crate::job in a comment\nlet s = "crate::cli";')
    assert _uses(code) == {"columnar", "text"}
