"""Where the time of `polars-rag score` goes on the scale workload: the job's stages (read and
join, corpus check, score, aggregates and write) from `--timings`, then each metric scored alone
(`--metrics ID --timings`: its score stage, and for the corpus-level metrics the aggregates stage
too), in µs per row, and the share of the wall time the job spends outside its score stage.

    .venv/bin/python benches/scale_profile.py [--rows 100000] [--binary .venv/bin/polars-rag] [--dir /tmp/polars-rag-profile]

The tables are `benches/scale_score.py`'s (generated once per size). A metric scored alone still
pays for the job around it; its score stage is the kernel's time over the joined table plus the
plumbing of one metric. The whole job's score stage runs the metrics side by side on two cores,
so it can be less than their sum.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))
from scale_score import write_tables  # noqa: E402

STAGE = re.compile(r"([a-z ]+) (\d+\.\d+) s")


def timings(binary: Path, tables: tuple[Path, Path, Path], out: Path, metrics: str | None) -> dict[str, float]:
    run, golden, corpus = tables
    command = [str(binary), "score", "--golden", str(golden), "--run", str(run), "--corpus", str(corpus),
               "--out", str(out), "--timings", "--quiet"]
    if metrics:
        command += ["--metrics", metrics]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)}\n{done.stdout}\n{done.stderr}")
    line = next(line for line in done.stdout.splitlines() if line.startswith("timings: "))
    return {name.strip(): float(seconds) for name, seconds in STAGE.findall(line.removeprefix("timings: "))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--binary", type=Path, default=ROOT / ".venv/bin/polars-rag")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/polars-rag-profile"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    tables = write_tables(args.rows, args.dir)
    out = args.dir / "scores.parquet"
    whole = timings(args.binary, tables, out, None)
    import polars as pl

    scored = [c for c in pl.read_parquet_schema(out) if c not in
              ("query_id", "reference_answers", "relevant_spans", "answer", "in_run")
              and not c.endswith("_stats")]
    scored += ["citation_alignment", "corpus_bleu", "corpus_chrf"]
    per_row = 1e6 / args.rows
    print(f"{args.rows:,} rows, {len(scored)} metrics; µs per row")
    print("| stage | whole job |")
    print("|---|---:|")
    for name, seconds in whole.items():
        print(f"| {name} | {seconds * per_row:.1f} |")
    print()
    print("| metric alone | score stage | aggregates and write | total |")
    print("|---|---:|---:|---:|")
    kernels = 0.0
    alone_totals = []
    for metric in scored:
        t = timings(args.binary, tables, args.dir / f"alone-{metric}.parquet", metric)
        (args.dir / f"alone-{metric}.parquet").unlink(missing_ok=True)
        own = t.get("score", 0.0) + (t.get("aggregates and write", 0.0) if metric.startswith(("corpus_", "citation_al")) else 0.0)
        kernels += own
        alone_totals.append(t.get("total", 0.0))
        print(f"| `{metric}` | {t.get('score', 0.0) * per_row:.1f} | {t.get('aggregates and write', 0.0) * per_row:.1f} "
              f"| {t.get('total', 0.0) * per_row:.1f} |")
    total = whole["total"]
    outside = total - whole["score"]
    print()
    print(f"whole job: {total * per_row:.1f} µs per row; its stages outside `score` (read and join, corpus, "
          f"aggregates and write): {outside * per_row:.1f} µs per row, {outside / total:.0%} of the wall time")
    print(f"the score stage ({whole['score'] * per_row:.1f} µs per row) against the metrics' own time scored alone "
          f"(score stage, + aggregates for corpus-level ones), summed: {kernels * per_row:.1f} µs per row")


if __name__ == "__main__":
    main()
