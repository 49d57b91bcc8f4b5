"""`polars-rag score` at scale: wall time and peak memory on generated runs of N rows, streamed
in batches (the default) and read whole (`--batch-rows 0`).

    .venv/bin/python benches/scale_score.py --rows 100000 1000000 [--modes batched,memory]
        [--binary target/release/polars-rag] [--dir /tmp/polars-rag-scale]

Each run row has an answer of about 600 characters of random lowercase prose with 2-3 quoted
spans taken from its sources, 5 retrieved chunks of about 300 characters with their spans in a
5-document corpus, and the question's golden row has a reference answer, 1-2 relevant spans and
three checks: every lexical and retrieval metric has its inputs. The tables are written once per
size and reused (about 0.5 KB of Parquet per row: the small vocabulary compresses well; larger
sizes than 1M repeat the 1M-row tables under new ids). Peak memory is the maximum resident set size
of the `score` process (from `/usr/bin/time -v`). Mode `compare` times `polars-rag compare` of the
batched scores table against itself (the run MB column is then the scores table's size). Modes
`locate` and `locate-memory` time `polars-rag locate` of every quoted span of the answers (2-3 a
row; the rows column then counts quotes, the run MB column is the quotes table's size) in the
5-document corpus, streamed in batches of 100,000 quotes and in one batch.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import time
from pathlib import Path

import numpy as np

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
VOCABULARY = [
    "river", "bridge", "city", "council", "budget", "school", "water", "energy", "market", "report",
    "people", "system", "policy", "health", "year", "plan", "road", "train", "station", "price",
    "the", "a", "of", "and", "to", "in", "is", "was", "for", "on", "that", "with", "by", "from",
    "opened", "built", "cost", "million", "new", "old", "north", "south", "public", "private",
    "growth", "rate", "tax", "law", "court", "service", "network", "data", "model", "answer",
]


def words(rng: np.random.Generator, n: int) -> str:
    return " ".join(VOCABULARY[i] for i in rng.integers(0, len(VOCABULARY), n))


def write_tables(rows: int, directory: Path, seed: int = 7) -> tuple[Path, Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    run_path, golden_path, corpus_path = (directory / f"{name}-{rows}.parquet" for name in ("run", "golden", "corpus"))
    if run_path.exists() and golden_path.exists() and corpus_path.exists():
        return run_path, golden_path, corpus_path
    base = 1_000_000
    if rows > base and rows % base == 0:
        # Larger sizes repeat the 1M-row tables under new ids (generating rows one by one in
        # Python would take longer than scoring them).
        base_run, base_golden, base_corpus = write_tables(base, directory, seed)
        copies = range(rows // base)
        prefixed = lambda path, k: pl.scan_parquet(path).with_columns(  # noqa: E731
            (pl.lit(f"c{k}-") + pl.col("query_id")).alias("query_id"))
        pl.concat([prefixed(base_run, k) for k in copies]).sink_parquet(run_path)
        pl.concat([prefixed(base_golden, k) for k in copies]).sink_parquet(golden_path)
        corpus_path.write_bytes(base_corpus.read_bytes())
        return run_path, golden_path, corpus_path
    rng = np.random.default_rng(seed)
    documents = {f"doc{d}.txt": words(rng, 40_000) for d in range(5)}
    pl.DataFrame({"file": list(documents), "text": list(documents.values())}).write_parquet(corpus_path)
    names = list(documents)
    lengths = [len(documents[n]) for n in names]
    chunk = 300
    block = 50_000  # rows generated and written per step, to bound the generator's memory
    run_parts, golden_parts = [], []
    for first in range(0, rows, block):
        n = min(block, rows - first)
        doc = rng.integers(0, 5, n)
        starts = [rng.integers(0, lengths[d] - chunk, 5) for d in doc]
        ids = [f"q{first + i:08d}" for i in range(n)]
        retrieved, answers, spans, references, checks = [], [], [], [], []
        for i in range(n):
            name = names[doc[i]]
            text = documents[name]
            items = [
                {"file": name, "start": int(s), "end": int(s) + chunk, "text": text[s:s + chunk],
                 "id": f"{name}:{s}", "score": float(1.0 - k / 10)}
                for k, s in enumerate(starts[i])
            ]
            retrieved.append(items)
            quotes = []
            for item in items[: int(rng.integers(2, 4))]:
                offset = int(rng.integers(0, chunk - 60))
                quotes.append(f"\u201c{item['text'][offset:offset + 50]}\u201d")
            filler = words(rng, 60)
            answers.append(" ".join(quotes) + " " + filler)
            first_span = int(starts[i][0])
            spans.append([{"file": name, "start": first_span + 20, "end": first_span + 220}]
                         + ([{"file": name, "start": int(starts[i][2]), "end": int(starts[i][2]) + 150}]
                            if rng.random() < 0.5 else []))
            references.append([filler[:200]])
            checks.append([
                {"kind": "contains", "value": filler.split(" ")[0], "weight": 1.0, "name": "opening word"},
                {"kind": "number", "value": str(int(rng.integers(1, 100))), "weight": 1.0, "name": "figure"},
                {"kind": "not_contains", "value": "free electric car", "weight": 1.0, "name": "no invention"},
            ])
        run_part = directory / f"run-{rows}-{first}.parquet"
        golden_part = directory / f"golden-{rows}-{first}.parquet"
        pl.DataFrame({"query_id": ids, "answer": answers, "retrieved": retrieved}).write_parquet(run_part)
        pl.DataFrame({"query_id": ids, "reference_answers": references, "relevant_spans": spans,
                      "checks": checks}).write_parquet(golden_part)
        run_parts.append(run_part)
        golden_parts.append(golden_part)
    pl.scan_parquet(run_parts).sink_parquet(run_path)
    pl.scan_parquet(golden_parts).sink_parquet(golden_path)
    for part in run_parts + golden_parts:
        part.unlink()
    return run_path, golden_path, corpus_path


def quotes_table(run: Path, path: Path) -> Path:
    """The quoted spans of the run's answers, one per row (column `quote`), for `locate`."""
    if not path.exists():
        (pl.scan_parquet(run)
         .select(pl.col("answer").str.extract_all("\u201c[^\u201d]*\u201d").alias("quote"))
         .explode("quote")
         .select(pl.col("quote").str.strip_chars("\u201c\u201d"))
         .sink_parquet(path))
    return path


def score(binary: Path, run: Path, golden: Path, corpus: Path, out: Path, batch_rows: int) -> tuple[float, float, str]:
    return timed([str(binary), "score", "--run", str(run), "--golden", str(golden), "--corpus", str(corpus),
                  "--out", str(out), "--batch-rows", str(batch_rows), "--quiet"])


def timed(arguments: list[str]) -> tuple[float, float, str]:
    """Runs a polars-rag command: wall seconds, peak RSS in GB, stdout."""
    command = ["/usr/bin/time", "-v", *arguments]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{arguments[1]} failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    rss_kb = float(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))  # type: ignore[union-attr]
    return seconds, rss_kb / 1024 / 1024, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--modes", default="batched,memory",
                        help="batched, memory, compare (the batched scores against themselves), "
                             "locate / locate-memory (`locate` of the answers' quotes, streamed / in one batch)")
    parser.add_argument("--binary", type=Path, default=ROOT / "target/release/polars-rag")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/polars-rag-scale"))
    parser.add_argument("--keep", action="store_true", help="keep the generated tables and scores")
    args = parser.parse_args()
    print(f"polars-rag score on generated runs; {os.cpu_count()} cores; binary {args.binary}")
    print(f"{'rows':>10} {'mode':>8} {'run MB':>8} {'seconds':>8} {'rows/s':>9} {'peak RSS GB':>11}")
    for rows in args.rows:
        start = time.perf_counter()
        run, golden, corpus = write_tables(rows, args.dir)
        generated = time.perf_counter() - start
        size = run.stat().st_size / 1e6
        for mode in args.modes.split(","):
            if mode == "compare":
                scores = args.dir / f"scores-{rows}-batched.parquet"
                if not scores.exists():
                    score(args.binary, run, golden, corpus, scores, 100_000)
                seconds, rss, _ = timed([str(args.binary), "compare", "--baseline", str(scores), "--candidate", str(scores)])
                print(f"{rows:>10,} {mode:>8} {scores.stat().st_size / 1e6:>8,.0f} {seconds:>8.1f} {rows / seconds:>9,.0f} {rss:>11.2f}")
                continue
            if mode in ("locate", "locate-memory"):
                quotes = quotes_table(run, args.dir / f"quotes-{rows}.parquet")
                n_quotes = pl.scan_parquet(quotes).select(pl.len()).collect().item()
                out_dir = args.dir / f"located-{rows}-{mode}"
                seconds, rss, _ = timed([str(args.binary), "locate", "--quotes", str(quotes), "--corpus", str(corpus),
                                         "--out", str(out_dir), "--batch-rows",
                                         "0" if mode == "locate-memory" else "100000", "--quiet"])
                located_mb = (out_dir / "located.parquet").stat().st_size / 1e6
                print(f"{n_quotes:>10,} {mode:>8} {quotes.stat().st_size / 1e6:>8,.0f} {seconds:>8.1f} "
                      f"{n_quotes / seconds:>9,.0f} {rss:>11.2f}   (quotes; located.parquet {located_mb:,.0f} MB)")
                continue
            out = args.dir / f"scores-{rows}-{mode}.parquet"
            seconds, rss, _ = score(args.binary, run, golden, corpus, out, 0 if mode == "memory" else 100_000)
            print(f"{rows:>10,} {mode:>8} {size:>8,.0f} {seconds:>8.1f} {rows / seconds:>9,.0f} {rss:>11.2f}"
                  f"   (tables generated in {generated:.0f} s)")
        if not args.keep:
            for path in args.dir.glob(f"*-{rows}.parquet"):
                path.unlink()
            for path in args.dir.glob(f"scores-{rows}-*.parquet"):
                path.unlink()


if __name__ == "__main__":
    main()
