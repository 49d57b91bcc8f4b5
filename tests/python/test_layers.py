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
code (comments and doc comments are not code: a doc link may point anywhere).

Inside every module with submodules (`job`, `compare`, `engines::judge`, ...) the submodules form
no cycle either: a submodule's references (`crate::job::plan::...`, `super::plan::...`, grouped
imports) to its siblings make the graph that is checked. The parent (`mod.rs`) is the module's
face and may use any of them; the pieces two siblings share live in a third below both."""

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


def _module_path(path: Path) -> tuple[str, ...]:
    """`src/job/plan.rs` -> ("job", "plan"); `src/engines/judge/mod.rs` -> ("engines", "judge")."""
    parts = path.relative_to(SRC).with_suffix("").parts
    return parts[:-1] if parts[-1] == "mod" else parts


_PATH = r"[a-z_0-9]+(?:::[a-z_0-9]+)*"


def _references(path: Path, code: str) -> set[tuple[str, ...]]:
    """Every module path a file's code names: `crate::a::b`, `super::b` (resolved against the
    file's module), and the members of grouped imports (`use super::{a, b::c}`)."""
    module = _module_path(path)
    above = module[:-1]
    found: set[tuple[str, ...]] = set()
    for prefix, base in (("crate", ()), ("super", above)):
        for m in re.finditer(rf"\b{prefix}::({_PATH})", code):
            found.add((*base, *m.group(1).split("::")))
        for m in re.finditer(rf"\b{prefix}::((?:[a-z_0-9]+::)*)\{{([^}}]*)\}}", code):
            head = tuple(p for p in m.group(1).split("::") if p)
            for member in re.findall(rf"(?:^|,)\s*({_PATH})", m.group(2)):
                found.add((*base, *head, *member.split("::")))
    return found


def _sibling_graphs() -> dict[tuple[str, ...], dict[str, set[str]]]:
    """Per module with submodules, its submodules' references to each other."""
    children: dict[tuple[str, ...], set[str]] = {}
    files = sorted(p for p in SRC.rglob("*.rs") if p.name not in ("lib.rs", "main.rs") or p.parent != SRC)
    for path in files:
        module = _module_path(path)
        if len(module) >= 1:
            children.setdefault(module[:-1], set()).add(module[-1])
    graphs: dict[tuple[str, ...], dict[str, set[str]]] = {parent: {} for parent in children}
    for path in files:
        module = _module_path(path)
        for ref in _references(path, _code(path.read_text(encoding="utf-8"))):
            # The nearest common parent: the reference and the file's module are siblings there.
            for depth in range(1, min(len(ref), len(module)) + 1):
                parent = module[: depth - 1]
                if ref[: depth - 1] != parent:
                    break
                if ref[depth - 1] != module[depth - 1]:
                    if depth < len(module) + 1 and ref[depth - 1] in children.get(parent, set()):
                        graphs[parent].setdefault(module[depth - 1], set()).add(ref[depth - 1])
                    break
    return graphs


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_submodules_use_each_other_in_a_cycle() -> None:
    graphs = _sibling_graphs()
    assert graphs.get(("job",)) and graphs.get(("compare",)), "no references inside job or compare: the scan is broken"
    cycles = []
    for parent, graph in sorted(graphs.items()):
        for component in _cycles(graph):
            edges = [f"{a} -> {b}" for a in component for b in sorted(graph.get(a, ())) if b in component]
            cycles.append(f"{'::'.join(parent) or 'crate'}: {', '.join(edges)}")
    assert not cycles, "submodules in a cycle:\n" + "\n".join(cycles)


def test_the_submodule_scan_sees_a_cycle() -> None:
    """The check itself: `super::` and grouped imports are read, and a cycle is found."""
    refs = _references(SRC / "job" / "claims.rs", "use super::{plan::Resolved, output};\nlet x = crate::job::tally::X;")
    assert {("job", "plan"), ("job", "output"), ("job", "tally")} <= refs
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
