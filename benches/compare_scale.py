"""`polars-rag compare` and `summary` at scale: wall time and peak memory of two binaries side by
side on the same scores tables, and whether their numbers agree.

    .venv/bin/python benches/compare_scale.py --rows 1000000 10000000 \
        --binary target/release/polars-rag [--reference /path/to/an/earlier/polars-rag] \
        [--reference-max-rows 1000000] [--dir /tmp/polars-rag-scale]

The scores tables are those of the scale workload (`benches/scale_score.py`: 29 metrics, every
lexical and retrieval metric with its inputs, scored in batches): the 1M-row table is scored
once; larger sizes repeat it under new ids. The candidate is the baseline with each item's
values moved to the next item (its ids rotated by one), so every metric has real deltas and the
items are not in the same order in both tables (they are paired by key). Both binaries run
`compare --json` (1,000 resamples, the default) and `summary`; the script prints seconds, rows
per second and peak RSS (`/usr/bin/time -v`), and checks that the two binaries' JSON
comparisons are identical. The reference binary is skipped above `--reference-max-rows` (an
in-memory comparison of 10M rows needs about 30 GB).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_score import score, timed, write_tables  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def scores_tables(rows: int, directory: Path, binary: Path) -> tuple[Path, Path]:
    """The baseline scores table of `rows` rows and the candidate (ids rotated by one)."""
    base = 1_000_000 if rows >= 1_000_000 else rows
    base_scores = directory / f"scores-{base}-batched.parquet"
    if not base_scores.exists():
        run, golden, corpus = write_tables(base, directory)
        score(binary, run, golden, corpus, base_scores, 100_000)
    baseline = directory / f"compare-baseline-{rows}.parquet"
    candidate = directory / f"compare-candidate-{rows}.parquet"
    if not baseline.exists():
        copies = range(max(1, rows // base))
        (pl.concat([pl.scan_parquet(base_scores).with_columns(
            (pl.lit(f"c{k}-") + pl.col("query_id")).alias("query_id")) for k in copies])
         .sink_parquet(baseline))
    if not candidate.exists():
        (pl.scan_parquet(baseline)
         .with_columns(pl.col("query_id").shift(-1, fill_value=pl.col("query_id").first()))
         .sink_parquet(candidate))
    return baseline, candidate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--binary", type=Path, default=ROOT / "target/release/polars-rag")
    parser.add_argument("--reference", type=Path, help="an earlier polars-rag binary to run side by side")
    parser.add_argument("--reference-max-rows", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/polars-rag-scale"))
    args = parser.parse_args()
    print(f"polars-rag compare / summary on scores tables; {os.cpu_count()} cores")
    print(f"{'rows':>11} {'command':>8} {'binary':>10} {'seconds':>8} {'rows/s':>9} {'peak RSS GB':>11}")
    for rows in args.rows:
        baseline, candidate = scores_tables(rows, args.dir, args.binary)
        binaries = [("this", args.binary)]
        if args.reference and rows <= args.reference_max_rows:
            binaries.append(("reference", args.reference))
        comparisons = {}
        for name, binary in binaries:
            out = args.dir / f"compare-{rows}-{name}.json"
            seconds, rss, _ = timed([str(binary), "compare", "--baseline", str(baseline), "--candidate",
                                     str(candidate), "--json", str(out)])
            print(f"{rows:>11,} {'compare':>8} {name:>10} {seconds:>8.1f} {rows / seconds:>9,.0f} {rss:>11.2f}")
            comparisons[name] = json.loads(out.read_text())["comparison"]
            seconds, rss, _ = timed([str(binary), "summary", str(baseline)])
            print(f"{rows:>11,} {'summary':>8} {name:>10} {seconds:>8.1f} {rows / seconds:>9,.0f} {rss:>11.2f}")
        if len(comparisons) == 2:
            same = comparisons["this"] == comparisons["reference"]
            metrics = len(comparisons["this"]["metrics"])
            print(f"{rows:>11,} the two comparisons ({metrics} metrics): {'identical' if same else 'DIFFER'}")
            if not same:
                raise SystemExit("the binaries' comparisons differ")


if __name__ == "__main__":
    main()
