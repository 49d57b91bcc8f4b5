"""The judge engine's own cost: a cold run against a local fake server (calls/s the engine gets
out of it), then the same column again with every reply in the cache (the engine's overhead per
cached row: rendering, hashing, one SQLite read per distinct prompt, validation, the output
struct), then a 1M-row column of those rows repeated, all cached.

    .venv/bin/python benches/judge_cached_overhead.py [DISTINCT] [ROWS]

DISTINCT (default 100,000) distinct claims are judged cold, then warm; ROWS (default 1,000,000)
rows cycle through them. The fake server is tests/python/fake_judge.py (Python's threading HTTP
server, in this process), so the cold rate is the fake server's, not a model's.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests/python"))
import polars_rag as pr
from fake_judge import FakeJudge


def timed(label: str, rows: int, run) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    print(f"  {label:<58} {rows:>9,} rows {seconds:8.2f} s {rows / seconds:>12,.0f} rows/s")
    return seconds


def main() -> None:
    distinct = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    span = "The bridge opened in 1932 after six years of work by four thousand people."
    claims = [f"The bridge opened in {1000 + i % 1000} (claim {i})" for i in range(distinct)]
    frame = pl.DataFrame({"claim": claims, "cited_span": [span] * distinct})
    repeated = pl.DataFrame({
        "claim": [claims[i % distinct] for i in range(rows)],
        "cited_span": [span] * rows,
    })
    server = FakeJudge()
    with tempfile.TemporaryDirectory() as cache:
        judge = pr.Judge(base_url=server.base_url, model="fake", cache=cache, max_concurrency=8)
        expr = pr.citation_support("claim", "cited_span", judge=judge)
        print(f"polars {pl.__version__}, polars-rag {pr.__version__}; cache in {cache}")
        cold = timed("cold: every distinct row asked of the fake server", distinct, lambda: frame.select(expr))
        print(f"    {server.requests:,} calls, {server.requests / cold:,.0f} calls/s")
        calls = server.requests
        timed("warm: the same rows, every reply from the cache", distinct, lambda: frame.select(expr))
        timed(f"warm: {rows:,} rows cycling through them", rows, lambda: repeated.select(expr))
        if server.requests != calls:
            sys.exit(f"the warm runs made {server.requests - calls} calls")
        print("    0 calls in the warm runs")
    server.close()


if __name__ == "__main__":
    main()
