"""A metric is described once per layer. ARCHITECTURE.md's checklist ("Adding a metric") counts
the hand-written places of a row-wise metric over an existing input shape; this test reads the
sources and holds `chrf` (a row-wise metric with its own options section) to that count, so a
new per-metric `match`, shim list or export list anywhere else fails here.

The places, besides the kernel (`src/metrics/chrf.rs`, with its `Section` impl) and its tests:

    src/registry/table.rs        its entry (the MetricId variant is generated from it)
    src/registry/options.rs      one line of `metric_sections!`
    src/columnar/dispatch.rs     one `Columnar` arm (call, dtype, corpus statistics)
    src/columnar/columns.rs      its columnar function
    src/columnar/expr.rs         its `Expr` builder
    python/polars_rag/_answer.py its typed function and its `__all__` entry (and its options'
                                 TypedDict, shared with corpus_chrf)"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _code(text: str) -> str:
    """Rust text without comments (a doc example may name any metric)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


KERNEL = ROOT / "src" / "metrics" / "chrf.rs"


def _rust_lines(pattern: str) -> dict[str, int]:
    """Rust files of the library and the plugin, besides the kernel, whose code matches
    `pattern`, with the count of matching lines."""
    found: dict[str, int] = {}
    for path in sorted([*(ROOT / "src").rglob("*.rs"), *(ROOT / "python" / "src").rglob("*.rs")]):
        if path == KERNEL:
            continue
        lines = [line for line in _code(path.read_text()).splitlines() if re.search(pattern, line)]
        if lines:
            found[str(path.relative_to(ROOT))] = len(lines)
    return found


def test_the_metric_id_variant_is_named_once_per_layer() -> None:
    # The variant: its table entry, its options line and its columnar arm, one line each.
    assert _rust_lines(r"\bChrf\b") == {
        "src/columnar/dispatch.rs": 1,
        "src/registry/options.rs": 1,
        "src/registry/table.rs": 1,
    }


def test_the_metric_has_one_function_per_face() -> None:
    # The columnar function and the Expr builder; the job and the plugin reach it by id.
    assert _rust_lines(r"\bfn chrf\b") == {"src/columnar/columns.rs": 1, "src/columnar/expr.rs": 1}
    assert "chrf" not in _code((ROOT / "python" / "src" / "lib.rs").read_text())


def test_the_python_function_is_written_once() -> None:
    package = ROOT / "python" / "polars_rag"
    defining = [p.name for p in sorted(package.glob("*.py")) if re.search(r"^def chrf\(", p.read_text(), re.MULTILINE)]
    assert defining == ["_answer.py"]
    exported = re.search(r"__all__ = \[(.*?)\]", (package / "_answer.py").read_text(), re.DOTALL)
    assert exported is not None and '"chrf"' in exported.group(1)
    # The package's __init__ re-exports each module's __all__ and names no metric itself.
    assert not re.search(r"\bchrf\b", (package / "__init__.py").read_text())


def test_the_scan_sees_a_second_place() -> None:
    # The scan finds what it counts: a hypothetical second per-metric match is seen.
    extra = "fn f(m: MetricId) { match m { Chrf => 1, _ => 0 } }"
    assert re.search(r"\bChrf\b", _code(extra))
    assert not re.search(r"\bChrf\b", _code("// Chrf in a comment"))
