"""`pr.score` against the `polars-rag score` command on the same generated run: wall time side by
side, and the scores tables compared (they must be equal).

    .venv/bin/python benches/score_faces.py [--rows 100000] [--repeats 3] [--dir /tmp/polars-rag-faces]

The run has per row an id, an answer of 8-20 words and 10 retrieved document ids; its golden table
a reference answer and 1-3 relevant ids. Metrics: exact_match, string_similarity, rouge, bleu (with
corpus_bleu), chrf, mrr, ndcg_at_k and recall_at_k. The command is the one `pip install` puts
beside this Python (the same wheel as `pr.score`), run as a subprocess; `pr.score` is timed on the Parquet paths, on
the frames read in memory (handed to the job as Arrow, the scores kept in memory), and on the same frames through the
command-line path it took before (`args=`: the frames written to temporary Parquet files, the scores read back).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars_rag as pr
from polars.testing import assert_frame_equal

import polars as pl

METRICS = ["exact_match", "string_similarity", "rouge", "bleu", "chrf", "mrr", "ndcg_at_k", "recall_at_k"]
WORDS = ["the", "a", "river", "bridge", "city", "council", "budget", "school", "water", "energy", "market", "report", "people", "plan"]


def generate(rows: int, seed: int = 3) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    sentence = lambda: " ".join(rng.choice(WORDS, rng.integers(8, 21)))
    ids = [f"q{i:07d}" for i in range(rows)]
    run = pl.DataFrame({
        "query_id": ids,
        "answer": [sentence() for _ in range(rows)],
        "retrieved": [[f"d{j}" for j in rng.integers(0, 50, 10)] for _ in range(rows)],
    })
    golden = pl.DataFrame({
        "query_id": ids,
        "reference": [sentence() for _ in range(rows)],
        "relevant_ids": [[f"d{j}" for j in rng.integers(0, 50, rng.integers(1, 4))] for _ in range(rows)],
    })
    return run, golden


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/polars-rag-faces"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    run, golden = generate(args.rows)
    run_path, golden_path = args.dir / "run.parquet", args.dir / "golden.parquet"
    run.write_parquet(run_path)
    golden.write_parquet(golden_path)
    command = Path(sys.executable).parent / "polars-rag"
    cli_out = args.dir / "cli.parquet"

    def by_command() -> None:
        subprocess.run([str(command), "score", "--quiet", "--run", str(run_path), "--golden", str(golden_path),
                        "--metrics", ",".join(METRICS), "--out", str(cli_out)], check=True, capture_output=True)

    results: dict[str, pl.DataFrame] = {}

    def on_paths() -> None:
        results["paths"] = pr.score(run_path, golden_path, metrics=METRICS).scores

    def on_frames() -> None:
        results["frames"] = pr.score(run, golden, metrics=METRICS).scores

    def on_frames_through_files() -> None:
        # The path before, by hand: the frames written to Parquet files, the job run on them in
        # batches of the command line's default size into a file, the scores read back.
        with tempfile.TemporaryDirectory(prefix="polars-rag-faces-") as scratch:
            folder = Path(scratch)
            run.write_parquet(folder / "run.parquet")
            golden.write_parquet(folder / "golden.parquet")
            pr.score(folder / "run.parquet", folder / "golden.parquet", metrics=METRICS, batch_rows=100_000,
                     out=folder / "scores.parquet")
            results["frames, files"] = pl.read_parquet(folder / "scores.parquet")

    faces = [("polars-rag score (command)", by_command), ("pr.score on Parquet paths", on_paths),
             ("pr.score on in-memory frames", on_frames),
             ("pr.score on frames through Parquet files (the path before)", on_frames_through_files)]
    timings: dict[str, list[float]] = {name: [] for name, _ in faces}
    for _ in range(args.repeats):
        for name, face in faces:  # interleaved, so drift affects every face alike
            started = time.perf_counter()
            face()
            timings[name].append(time.perf_counter() - started)
    expected = pl.read_parquet(cli_out)
    for name, scores in results.items():
        assert_frame_equal(scores, expected)
    base = statistics.median(timings[faces[0][0]])
    print(f"{args.rows:,} rows, {len(METRICS)} metrics, median of {args.repeats}; scores tables equal")
    print("| face | median s | runs (s) | ratio to the command |")
    print("|---|--:|---|--:|")
    for name, _ in faces:
        median = statistics.median(timings[name])
        runs = ", ".join(f"{t:.2f}" for t in timings[name])
        print(f"| {name} | {median:.2f} | {runs} | {median / base:.3f} |")


if __name__ == "__main__":
    main()
