"""`polars-rag compare --cluster` against plain `compare`, and `leaderboard` of several runs, on
the scale workload's scores tables: wall time and peak memory side by side in one run.

    .venv/bin/python benches/verdicts_scale.py --rows 1000000 --runs 10 \\
        --binary target/release/polars-rag [--dir /tmp/polars-rag-scale]

The tables are `benches/compare_scale.py`'s (29 metrics, the candidate the baseline with each
item's values moved to the next item). A `topic` column groups the items ten at a time (the
same in both runs), for `--cluster topic`. The leaderboard's runs are the baseline with its
values moved by 0, 1, ... items. The script prints seconds and peak RSS (`/usr/bin/time -v`)
and the clustered-over-plain time ratio. `--runs 0` leaves the leaderboard out.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_scale import scores_tables
from scale_score import timed

ROOT = Path(__file__).resolve().parents[1]


def with_topics(path: Path, out: Path) -> Path:
    """`path` with a `topic` column: ten items a topic, from the item's id."""
    if not out.exists():
        (pl.scan_parquet(path)
         .with_columns(topic=(pl.col("query_id").str.extract(r"(\d+)$").cast(pl.Int64) // 10).cast(pl.String))
         .sink_parquet(out))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--binary", type=Path, default=ROOT / "target/release/polars-rag")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/polars-rag-scale"))
    args = parser.parse_args()
    rows = args.rows
    print(f"polars-rag compare --cluster and leaderboard; {os.cpu_count()} cores; {rows:,} rows")
    baseline, candidate = scores_tables(rows, args.dir, args.binary)
    baseline = with_topics(baseline, args.dir / f"verdicts-baseline-{rows}.parquet")
    candidate = with_topics(candidate, args.dir / f"verdicts-candidate-{rows}.parquet")
    print(f"{'command':>32} {'seconds':>8} {'peak RSS GB':>11}")
    seconds = {}
    for name, extra in (("compare", []), ("compare --cluster topic", ["--cluster", "topic"])):
        out = args.dir / f"verdicts-{rows}-{len(extra)}.json"
        took, rss, _ = timed([str(args.binary), "compare", "--baseline", str(baseline),
                              "--candidate", str(candidate), "--json", str(out), *extra])
        seconds[name] = took
        print(f"{name:>32} {took:>8.1f} {rss:>11.2f}")
    print(f"{'clustered / plain':>32} {seconds['compare --cluster topic'] / seconds['compare']:>8.2f}")
    if args.runs == 0:
        return
    runs = []
    frame = None
    for k in range(args.runs):
        path = args.dir / f"verdicts-run{k}-{rows}.parquet"
        if not path.exists():
            frame = pl.read_parquet(baseline) if frame is None else frame
            ids = frame["query_id"]
            # The ids rotated by k: each item gets the values of the item k after it.
            frame.with_columns(query_id=pl.concat([ids.slice(k), ids.slice(0, k)])).write_parquet(path)
        runs.append(str(path))
    out = args.dir / f"verdicts-board-{rows}.parquet"
    took, rss, _ = timed([str(args.binary), "leaderboard", *runs, "--out", str(out)])
    print(f"{f'leaderboard of {args.runs} runs':>32} {took:>8.1f} {rss:>11.2f}")


if __name__ == "__main__":
    main()
