"""The same `score` job on one machine (`polars-rag score`, streamed in batches) and on a Ray
cluster (`polars_rag.ray.score`), on the generated runs of benches/scale_score.py: wall time,
rows/s, and a check that both wrote the same scores.

    .venv/bin/python benches/ray_score.py --rows 100000 [--binary PATH] [--cpus 2]
        [--polars-threads 1] [--dir /tmp/polars-rag-ray]

--binary is the one-process reference: by default the `polars-rag` command installed beside this
Python, i.e. the same wheel the cluster runs (install a release wheel to measure).

The cluster is a local one started by the script (`ray.init(num_cpus=CPUS)`): on one machine it
measures what Ray's orchestration costs against the single process; on a real cluster the
blocks spread over the nodes' cores and the rate grows with them, as long as each node can read
the run's files and write to the output folder (a shared file system).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))

from scale_score import write_tables  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--binary", type=Path, default=Path(sys.executable).parent / "polars-rag")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--polars-threads", type=int, default=1)
    parser.add_argument("--files", type=int, default=8, help="the run is split into this many Parquet files")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/polars-rag-ray"))
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    import polars_rag.ray as prr

    run, golden, corpus = write_tables(args.rows, args.dir)
    # The run as several files, as a distributed job reads it.
    run_dir = args.dir / f"run-{args.rows}-files"
    if not run_dir.exists():
        run_dir.mkdir()
        frame = pl.read_parquet(run)
        size = -(-frame.height // args.files)
        for i, part in enumerate(frame.iter_slices(n_rows=size)):
            part.write_parquet(run_dir / f"run-{i:03}.parquet")
        del frame

    one_out = args.dir / "one.parquet"
    start = time.perf_counter()
    subprocess.run([str(args.binary), "score", "--quiet", "--run", str(run), "--golden", str(golden),
                    "--corpus", str(corpus), "--out", str(one_out)], check=True, capture_output=True)
    one_seconds = time.perf_counter() - start

    ray_out = args.dir / "ray-scores"
    shutil.rmtree(ray_out, ignore_errors=True)
    start = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter() - start
    start = time.perf_counter()
    report = prr.score(str(run_dir), out=ray_out, golden=golden, corpus=corpus, polars_threads=args.polars_threads)
    ray_seconds = time.perf_counter() - start
    ray.shutdown()

    whole = pl.read_parquet(one_out).sort("query_id")
    parts = pl.read_parquet([str(p) for p in report.parts]).sort("query_id")
    same = parts.select(whole.columns).equals(whole)
    print(f"{args.rows:,} rows; {os.cpu_count()} cores; Ray {ray.__version__}: {args.cpus} CPUs, "
          f"{args.polars_threads} Polars thread(s) per block; run in {args.files} files")
    print(f"{'engine':<46}{'seconds':>9}{'rows/s':>10}")
    print(f"{'polars-rag score (one process, batches)':<46}{one_seconds:>9.1f}{args.rows / one_seconds:>10,.0f}")
    print(f"{'polars_rag.ray.score (local cluster)':<46}{ray_seconds:>9.1f}{args.rows / ray_seconds:>10,.0f}"
          f"   (+{started:.1f} s to start Ray)")
    print(f"parts: {len(report.parts)}; same scores as one process: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
