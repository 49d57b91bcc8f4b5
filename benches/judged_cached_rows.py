"""The cost of a cached row for each claim-, citation-, nugget- and relevance-level judged metric:
DISTINCT rows judged cold against the test suite's fake server (polars_rag.testing.FakeJudge, in
this process), then the same rows with every reply in the cache, then ROWS rows cycling through
them, all cached (0 calls, checked).

    .venv/bin/python benches/judged_cached_rows.py [DISTINCT] [ROWS]

DISTINCT defaults to 10,000 and ROWS to 1,000,000. A row of these metrics asks several questions
(claim_checks: two splits and a check per claim and context), so the cold rate is the fake
server's and the number of questions, not a model's.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable

import polars as pl

import polars_rag as pr
from polars_rag.testing import FakeJudge


def rows_of(metric: str, i: int) -> dict:
    """Row `i` of `metric`'s input: distinct text per `i`, the shape a run has."""
    bridge = f"Bridge {i}"
    if metric == "relevance_grade":
        return {"a": f"When did {bridge} open?", "b": f"{bridge} opened in {1900 + i % 100}."}
    if metric == "citation_recall_precision":
        return {"a": f"{bridge} opened in 1932 [1][2]. It is long [2].",
                "b": [f"{bridge} opened in 1932.", "It is long and red."]}
    if metric == "claim_checks":
        return {"a": f"{bridge} opened in 1932. It is long", "b": f"{bridge} opened in 1932",
                "c": [f"{bridge} opened in 1932.", "It is long."]}
    if metric == "create_nuggets":
        return {"a": f"Where is {bridge}?", "b": [f"{bridge} is in Paris. It is long", "It opened in 1932"]}
    if metric == "nugget_assignment":
        return {"a": f"{bridge} is in Paris.",
                "b": [{"text": f"{bridge} is in Paris", "importance": "vital"},
                      {"text": "It opened in 1932", "importance": "okay"}]}
    raise AssertionError(metric)


EXPRESSIONS: dict[str, Callable[[pr.Judge], pl.Expr]] = {
    "relevance_grade": lambda j: pr.relevance_grade("a", "b", judge=j),
    "citation_recall_precision": lambda j: pr.citation_recall_precision("a", "b", judge=j),
    "claim_checks": lambda j: pr.claim_checks("a", "b", "c", judge=j),
    "create_nuggets": lambda j: pr.create_nuggets("a", "b", judge=j),
    "nugget_assignment": lambda j: pr.nugget_assignment("a", "b", judge=j),
}


def timed(run: Callable[[], pl.DataFrame]) -> tuple[float, pl.DataFrame]:
    start = time.perf_counter()
    out = run()
    return time.perf_counter() - start, out


def main() -> None:
    distinct = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else list(EXPRESSIONS)
    print(f"polars {pl.__version__}, polars-rag {pr.__version__}; {distinct:,} distinct rows, {rows:,} cached rows")
    print(f"| metric | cold: {distinct:,} rows | calls | warm: the same rows | warm: {rows:,} rows | µs per cached row |")
    print("|---|---:|---:|---:|---:|---:|")
    server = FakeJudge()
    for metric in only:
        frame = pl.DataFrame([rows_of(metric, i) for i in range(distinct)])
        repeated = frame.select(pl.all().gather([i % distinct for i in range(rows)]))
        with tempfile.TemporaryDirectory() as cache:
            judge = pr.Judge(base_url=server.base_url, model="fake", cache=cache, max_concurrency=8)
            expr = EXPRESSIONS[metric](judge)
            before = server.requests
            cold, out = timed(lambda: frame.select(expr))
            calls = server.requests - before
            failed = out.select(pl.col(metric).struct.field("judge_error").is_not_null().sum()).item()
            if failed:
                sys.exit(f"{metric}: {failed} rows failed cold")
            warm, _ = timed(lambda: frame.select(expr))
            many, _ = timed(lambda: repeated.select(expr))
            if server.requests != before + calls:
                sys.exit(f"{metric}: the warm runs made {server.requests - before - calls} calls")
        print(f"| `{metric}` | {cold:.2f} s | {calls:,} | {warm:.2f} s | {many:.2f} s | {many / rows * 1e6:.2f} |")
    server.close()


if __name__ == "__main__":
    main()
