"""Times `polars-rag compare` on large scores tables, beside a NumPy/SciPy baseline.

Usage (from the repository root):

    cargo build --release --features cli
    python3 benches/compare_regression.py [--items 1000000] [--metrics 10] [--resamples 1000]
                                          [--numpy-items 100000]

The script makes its own environment, .venv-bench-compare, from
benches/requirements-compare.txt. Workload (seeded): two scores tables of `--items` rows with
`--metrics` metric columns in [0, 1] (the candidate a little better on some metrics, worse on
others) and a `segment` column of 8 values.

* polars-rag: one `polars-rag compare` process reads both Parquet files, matches the items by
  id, and for every metric computes the means, a paired bootstrap interval, a paired
  approximate-randomization p-value and a paired t-test, overall and per segment
  (`--by segment`), and writes the Parquet summary. Wall time of the whole process.
* NumPy/SciPy: the same statistics the textbook way, from arrays already in memory: classic
  paired bootstrap of the mean delta (resampling indices with `numpy.random.Generator.integers`,
  in chunks), sign-flip randomization, `scipy.stats.ttest_rel`; overall only, on the first
  `--numpy-items` items (it needs minutes at 1M), reported per item.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-bench-compare"
DEFAULT_BIN = Path.home() / ".cache/polars-rag/target/release/polars-rag"
METRIC_IDS = [
    "bleu", "chrf", "exact_match", "string_similarity", "keyword_coverage", "number_match",
    "answer_completeness", "precision_at_k", "recall_at_k", "mrr", "average_precision",
    "ndcg_at_k", "r_precision", "span_iou",
]


def ensure_venv() -> None:
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    if not (VENV / "bin/python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(VENV / "bin/pip"), "install", "--quiet", "-r", str(ROOT / "benches/requirements-compare.txt")],
            check=True,
        )
    os.execv(str(VENV / "bin/python"), [str(VENV / "bin/python"), *sys.argv])


def make_tables(items: int, metrics: list[str], out: Path) -> None:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(17)
    ids = [f"q{i:07d}" for i in range(items)]
    base = {m: rng.random(items) for m in metrics}
    shift = {m: (0.01 if i % 3 == 0 else -0.01 if i % 3 == 1 else 0.0) for i, m in enumerate(metrics)}
    cand = {m: np.clip(base[m] + shift[m] + rng.normal(0, 0.1, items), 0, 1) for m in metrics}
    segment = [f"s{i % 8}" for i in range(items)]
    pl.DataFrame({"query_id": ids, "segment": segment, **base}).write_parquet(out / "baseline.scores.parquet")
    pl.DataFrame({"query_id": ids, "segment": segment, **cand}).write_parquet(out / "candidate.scores.parquet")


def numpy_baseline(base, cand, resamples: int, seed: int = 0) -> float:
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    for b, c in zip(base, cand):
        d = c - b
        n = len(d)
        boot = []
        for start in range(0, resamples, 20):
            idx = rng.integers(0, n, size=(min(20, resamples - start), n))
            boot.extend(d[idx].mean(axis=1))
        np.percentile(boot, [2.5, 97.5])
        observed = abs(d.sum())
        hits = 0
        for start in range(0, resamples, 20):
            signs = rng.integers(0, 2, size=(min(20, resamples - start), n)) * 2 - 1
            hits += int((np.abs((signs * d).sum(axis=1)) >= observed).sum())
        stats.ttest_rel(c, b)
    return time.perf_counter() - t0


def main() -> None:
    ensure_venv()
    import polars as pl

    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--numpy-items", type=int, default=100_000)
    parser.add_argument("--bin", type=Path, default=DEFAULT_BIN)
    args = parser.parse_args()
    if not args.bin.is_file():
        sys.exit(f"no polars-rag binary at {args.bin}: run `cargo build --release --features cli`")
    metrics = METRIC_IDS[: args.metrics]
    work = ROOT / "bench-output/compare"
    work.mkdir(parents=True, exist_ok=True)
    make_tables(args.items, metrics, work)
    print(f"{args.items:,} items × {len(metrics)} metrics × {args.resamples} resamples; {os.cpu_count()} cores")

    cmd = [
        str(args.bin), "compare", "--baseline", str(work / "baseline.scores.parquet"),
        "--candidate", str(work / "candidate.scores.parquet"), "--resamples", str(args.resamples),
        "--parquet", str(work / "summary.parquet"),
    ]
    results = []
    for label, extra in [("overall", []), ("overall + 8 segments (--by segment)", ["--by", "segment"])]:
        t0 = time.perf_counter()
        done = subprocess.run(cmd + extra, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if done.returncode != 0:
            sys.exit(done.stderr)
        results.append((f"polars-rag compare, {label}", args.items, seconds))

    base = pl.read_parquet(work / "baseline.scores.parquet").head(args.numpy_items)
    cand = pl.read_parquet(work / "candidate.scores.parquet").head(args.numpy_items)
    np_s = numpy_baseline([base[m].to_numpy() for m in metrics], [cand[m].to_numpy() for m in metrics], args.resamples)
    results.append(("NumPy + SciPy (classic bootstrap, sign flips, ttest_rel), overall", args.numpy_items, np_s))

    print(f"{'engine':<72} {'items':>10} {'seconds':>9} {'ns/item/metric':>15}")
    for name, n, s in results:
        print(f"{name:<72} {n:>10,} {s:>9.2f} {s / n / len(metrics) * 1e9:>15.1f}")
    ours = results[0][2] / args.items
    print(f"per-item speed-up of polars-rag (overall, end to end) over NumPy/SciPy: {np_s / args.numpy_items / ours:.1f}x")


if __name__ == "__main__":
    main()
