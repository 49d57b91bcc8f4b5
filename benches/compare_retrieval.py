"""Times the polars-rag CLI's retrieval scoring against pytrec_eval and ranx on the same run.

Usage (from the repository root):

    cargo build --release --features cli
    python3 benches/compare_retrieval.py [--queries 10000] [--depth 100] [--bin PATH]

The script makes its own environment, .venv-bench-retrieval, from
benches/requirements-retrieval.txt. Workload (seeded): `--queries` queries, each with
`--depth` retrieved documents in a long, TREC-style run table (query_id, doc_id, rank, score:
1M rows by default) and 1 to 8 judged documents with grades 1 or 2 (about half of them
retrieved). Measures: P@10, recall@100, MRR, MAP, nDCG@10.

* polars-rag: one `polars-rag score` process reads the golden and run Parquet files, collapses
  the run per query, joins, scores the five measures and writes the scores table; the wall time
  of the whole process is reported.
* pytrec_eval: `RelevanceEvaluator(qrels, {...}).evaluate(run)` from dicts already in memory
  (the time to read the Parquet files and build the dicts is reported separately).
* ranx: `evaluate(Qrels, Run, metrics)` from the same dicts, a first (JIT-compiling) call and a
  second call.

Then the same scale of character spans: 100 retrieved spans per query against 1 to 4 golden
spans, span_precision / span_recall / span_iou through the CLI.

Per-query values of every measure are compared between polars-rag and pytrec_eval; the script
fails if any differ by more than 1e-12.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-bench-retrieval"
DEFAULT_BIN = Path.home() / ".cache/polars-rag/target/release/polars-rag"
MEASURES = {  # polars-rag id (and k) -> pytrec_eval measure, ranx metric
    "precision_at_k": (10, "P_10", "precision@10"),
    "recall_at_k": (100, "recall_100", "recall@100"),
    "mrr": (None, "recip_rank", "mrr"),
    "average_precision": (None, "map", "map"),
    "ndcg_at_k": (10, "ndcg_cut_10", "ndcg@10"),
}


def ensure_venv() -> None:
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    if not (VENV / "bin/python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(VENV / "bin/pip"), "install", "--quiet", "-r", str(ROOT / "benches/requirements-retrieval.txt")],
            check=True,
        )
    os.execv(str(VENV / "bin/python"), [str(VENV / "bin/python"), *sys.argv])


def make_tables(queries: int, depth: int, out: Path, seed: int = 7) -> None:
    import polars as pl

    rng = random.Random(seed)
    qids, docs, ranks, scores = [], [], [], []
    golden_ids, golden_rel = [], []
    span_run, span_golden = [], []
    for q in range(queries):
        qid = f"q{q:05d}"
        pool = rng.sample(range(depth * 20), depth + 20)
        retrieved = pool[:depth]
        n_rel = rng.randint(1, 8)
        relevant = rng.sample(retrieved, n_rel // 2) + pool[depth : depth + n_rel - n_rel // 2]
        golden_ids.append(qid)
        golden_rel.append([{"id": f"d{d}", "grade": rng.choice([1, 2])} for d in relevant])
        score = 100.0
        for r, d in enumerate(retrieved):
            score -= rng.random() + 1e-3  # strictly decreasing: the list order is the rank order
            qids.append(qid)
            docs.append(f"d{d}")
            ranks.append(r + 1)
            scores.append(round(score, 4))
        doc_len = 200_000
        golden_spans = []
        for _ in range(rng.randint(1, 4)):
            s = rng.randrange(doc_len - 500)
            golden_spans.append({"file": "doc.md", "start": s, "end": s + rng.randint(50, 500)})
        chunks = []
        for _ in range(depth):
            s = rng.randrange(doc_len - 800)
            chunks.append({"file": "doc.md", "start": s, "end": s + 800})
        span_golden.append(golden_spans)
        span_run.append(chunks)
    pl.DataFrame({"query_id": golden_ids, "relevant_ids": golden_rel}).write_parquet(out / "golden.parquet")
    pl.DataFrame({"query_id": qids, "doc_id": docs, "rank": ranks, "score": scores}).write_parquet(out / "run.parquet")
    pl.DataFrame({"query_id": golden_ids, "relevant_spans": span_golden}).write_parquet(out / "span_golden.parquet")
    pl.DataFrame({"query_id": golden_ids, "retrieved": span_run}).write_parquet(out / "span_run.parquet")


def run_cli(bin_path: Path, args: list[str]) -> tuple[float, float, str]:
    """Wall time, peak resident memory (MB, of this process alone) and stdout of one CLI run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(bin_path), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - t0
    # The peak memory of that child alone: a second, identical run reaped with wait4.
    if proc.returncode != 0:
        sys.exit(f"polars-rag failed:\n{stderr}")
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(str(bin_path), [str(bin_path), *args])
    _, _, usage = os.wait4(pid, 0)
    return seconds, usage.ru_maxrss / 1024, stdout


def main() -> None:
    ensure_venv()
    import polars as pl
    import pytrec_eval

    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--bin", type=Path, default=DEFAULT_BIN)
    parser.add_argument("--skip-ranx", action="store_true")
    args = parser.parse_args()
    if not args.bin.is_file():
        sys.exit(f"no polars-rag binary at {args.bin}: run `cargo build --release --features cli`")
    work = ROOT / "bench-output/retrieval"
    work.mkdir(parents=True, exist_ok=True)
    make_tables(args.queries, args.depth, work)
    rows = args.queries * args.depth
    print(f"{args.queries:,} queries × {args.depth} retrieved = {rows:,} run rows; {os.cpu_count()} cores")

    config = work / "job.toml"
    sections = "".join(f"[{m}]\nk = {k}\n" for m, (k, _, _) in MEASURES.items() if k)
    config.write_text(
        f'golden = "{work}/golden.parquet"\nrun = "{work}/run.parquet"\nout = "{work}/scores.parquet"\n'
        f"metrics = {json.dumps(list(MEASURES))}\n{sections}",
        encoding="utf-8",
    )
    cli_s, cli_mb, _ = run_cli(args.bin, ["score", "--config", str(config)])
    ours = pl.read_parquet(work / "scores.parquet").sort("query_id")

    t0 = time.perf_counter()
    golden = pl.read_parquet(work / "golden.parquet")
    qrels = {
        q: {g["id"]: g["grade"] for g in rel} for q, rel in zip(golden["query_id"], golden["relevant_ids"].to_list())
    }
    run_df = pl.read_parquet(work / "run.parquet")
    run: dict[str, dict[str, float]] = {}
    for q, d, s in zip(run_df["query_id"].to_list(), run_df["doc_id"].to_list(), run_df["score"].to_list()):
        run.setdefault(q, {})[d] = s
    load_s = time.perf_counter() - t0
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"P_10", "recall_100", "recip_rank", "map", "ndcg_cut_10"})
    t0 = time.perf_counter()
    trec = evaluator.evaluate(run)
    trec_s = time.perf_counter() - t0
    trec_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # dicts and all

    worst = 0.0
    for metric, (_, trec_name, _) in MEASURES.items():
        values = ours[metric].to_list()
        for q, v in zip(ours["query_id"].to_list(), values):
            worst = max(worst, abs(v - trec[q][trec_name]))
    if worst > 1e-12:
        sys.exit(f"polars-rag and pytrec_eval disagree: largest difference {worst}")

    lines = [
        ("polars-rag CLI: read Parquet, collapse, join, score 5 measures, write", cli_s, cli_mb),
        ("pytrec_eval 0.5.11 evaluate() from in-memory dicts (peak: the Python process)", trec_s, trec_mb),
        ("  (reading the Parquet files into those dicts)", load_s, None),
    ]
    if not args.skip_ranx:
        from ranx import Qrels, Run, evaluate

        ranx_metrics = [m[2] for m in MEASURES.values()]
        qr, rr = Qrels(qrels), Run(run)
        t0 = time.perf_counter()
        first = evaluate(qr, rr, ranx_metrics, make_comparable=True)
        ranx_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        evaluate(qr, rr, ranx_metrics, make_comparable=True)
        ranx_warm = time.perf_counter() - t0
        lines.append(("ranx 0.3.21 evaluate(), first call (numba JIT)", ranx_first, None))
        lines.append(("ranx 0.3.21 evaluate(), second call", ranx_warm, None))
        means = {m: ours[m].mean() for m in MEASURES}
        print("means polars-rag / ranx:", {m: (round(means[m], 6), round(first[MEASURES[m][2]], 6)) for m in MEASURES})

    span_out = work / "span_scores.parquet"
    span_s, span_mb, _ = run_cli(
        args.bin,
        [
            "score", "--golden", str(work / "span_golden.parquet"), "--run", str(work / "span_run.parquet"),
            "--out", str(span_out), "--metrics", "span_precision,span_recall,span_iou",
        ],
    )
    lines.append((f"polars-rag CLI: span precision/recall/IoU, {rows:,} retrieved spans", span_s, span_mb))

    print(f"per-query values equal pytrec_eval's (largest difference {worst:.1e})")
    print(f"{'engine':<74} {'seconds':>8} {'peak MB':>8}")
    for name, s, mb in lines:
        print(f"{name:<74} {s:>8.3f} {('-' if mb is None else f'{mb:,.0f}'):>8}")
    print(f"ratio pytrec_eval evaluate() / polars-rag end to end: {trec_s / cli_s:.2f}")


if __name__ == "__main__":
    main()
