"""Times polars-rag's answer metrics against the reference libraries on the same pairs.

Usage (from the repository root, after scripts/test.sh has built the wheel into dist/):

    python3 benches/compare_answer_metrics.py [--pairs 20000] [--reference-pairs 2000]

Everything runs in one virtual environment, .venv-bench-answers (created on first use from
benches/requirements-answers.txt, plus the wheel in dist/). Pairs are answers and references of
60 tokens cut from the demo corpus, deterministic (seeded), the second half of each answer
shuffled so scores spread. Each engine is timed in its own process on the same pairs:

* ROUGE (rouge1, rouge2, rougeL, rougeLsum, Porter stemmer): rouge-score 0.1.2 `score` in a loop,
  rouge-score-rs 0.2.1 `score_batch` (Rust, its own threads), polars-rag `pr.rouge` with
  POLARS_MAX_THREADS=1 and with every core;
* sentence BLEU: sacrebleu 2.6.0 `sentence_bleu` in a loop, polars-rag `pr.bleu`.

The slow Python references run on the first `--reference-pairs` pairs and are reported per pair.
Every engine's scores on those pairs are compared; the script fails if any differ.
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
VENV = ROOT / ".venv-bench-answers"
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def make_pairs(n: int, seed: int = 13) -> list[tuple[str, str]]:
    import polars as pl

    text = " ".join(pl.read_parquet(ROOT / "datasets/demo/corpus.parquet")["text"])
    words = text.split()
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        start = rng.randrange(len(words) - 200)
        ref = words[start : start + 60]
        shift = rng.randint(0, 20)
        hyp = words[start + shift : start + shift + 60]
        half = hyp[30:]
        rng.shuffle(half)
        pairs.append((" ".join(hyp[:30] + half), " ".join(ref)))
    return pairs


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def engine(name: str, n: int, check: int) -> dict:
    pairs = make_pairs(n)
    hyps = [h for h, _ in pairs]
    refs = [r for _, r in pairs]
    if name == "rouge-score":
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
        t = time.perf_counter()
        out = [scorer.score(r, h) for h, r in pairs]
        secs = time.perf_counter() - t
        sample = [[s[k].fmeasure for k in TYPES] for s in out[:check]]
    elif name == "rouge-score-rs":
        from rouge_score_rs import rouge_scorer

        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
        t = time.perf_counter()
        out = scorer.score_batch(refs, hyps)
        secs = time.perf_counter() - t
        sample = [[s[k].fmeasure for k in TYPES] for s in out[:check]]
    elif name == "sacrebleu":
        import sacrebleu

        t = time.perf_counter()
        out = [sacrebleu.sentence_bleu(h, [r]).score / 100 for h, r in pairs]
        secs = time.perf_counter() - t
        sample = out[:check]
    else:
        import polars as pl
        import polars_rag as pr

        df = pl.DataFrame({"answer": hyps, "ref": refs})
        if name.startswith("polars-rag rouge"):
            t = time.perf_counter()
            got = df.select(pr.rouge("answer", "ref", use_stemmer=True))
            secs = time.perf_counter() - t
            rows = got["rouge"].head(check).to_list()
            sample = [[r[k]["fmeasure"] for k in TYPES] for r in rows]
        else:
            t = time.perf_counter()
            got = df.select(pr.bleu("answer", "ref"))
            secs = time.perf_counter() - t
            sample = got["bleu"].head(check).to_list()
    return {"engine": name, "pairs": n, "seconds": secs, "peak_mb": peak_mb(), "sample": sample}


def ensure_venv() -> Path:
    py = VENV / "bin/python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "-r", str(ROOT / "benches/requirements-answers.txt")], check=True)
    wheels = sorted((ROOT / "dist").glob("polars_rag-*.whl"))
    if not wheels:
        raise SystemExit("no wheel in dist/: run scripts/test.sh (or maturin build --release --out dist) first")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", str(wheels[-1])], check=True)
    return py


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--reference-pairs", type=int, default=2_000)
    ap.add_argument("--engine", help=argparse.SUPPRESS)
    ap.add_argument("--check", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.engine:
        print(json.dumps(engine(args.engine, args.pairs, args.check)))
        return
    py = ensure_venv()
    check = args.reference_pairs
    runs = [
        ("rouge-score", args.reference_pairs, {}),
        ("rouge-score-rs", args.pairs, {}),
        ("polars-rag rouge, 1 thread", args.pairs, {"POLARS_MAX_THREADS": "1"}),
        ("polars-rag rouge, all cores", args.pairs, {}),
        ("sacrebleu", args.reference_pairs, {}),
        ("polars-rag bleu, 1 thread", args.pairs, {"POLARS_MAX_THREADS": "1"}),
        ("polars-rag bleu, all cores", args.pairs, {}),
    ]
    results = {}
    for name, n, env in runs:
        proc = subprocess.run(
            [str(py), __file__, "--engine", name, "--pairs", str(n), "--check", str(check)],
            check=True, capture_output=True, text=True, env={**os.environ, **env},
        )
        results[name] = json.loads(proc.stdout)
    print(f"machine: {os.cpu_count()} cores; pairs of 60 tokens; references timed on {check} pairs")
    print(f"{'engine':<30}{'pairs':>8}{'seconds':>10}{'µs/pair':>10}{'peak MB':>9}")
    for name, r in results.items():
        print(f"{name:<30}{r['pairs']:>8}{r['seconds']:>10.3f}{1e6 * r['seconds'] / r['pairs']:>10.2f}{r['peak_mb']:>9.0f}")

    def per_pair(name: str) -> float:
        return results[name]["seconds"] / results[name]["pairs"]

    for ours, ref in [
        ("polars-rag rouge, 1 thread", "rouge-score-rs"),
        ("polars-rag rouge, 1 thread", "rouge-score"),
        ("polars-rag rouge, all cores", "rouge-score"),
        ("polars-rag bleu, 1 thread", "sacrebleu"),
        ("polars-rag bleu, all cores", "sacrebleu"),
    ]:
        print(f"speed-up {ours} vs {ref}: {per_pair(ref) / per_pair(ours):.1f}x")
    same = True
    for group in (["rouge-score", "rouge-score-rs", "polars-rag rouge, 1 thread", "polars-rag rouge, all cores"],
                  ["sacrebleu", "polars-rag bleu, 1 thread", "polars-rag bleu, all cores"]):
        base = results[group[0]]["sample"]
        for other in group[1:]:
            if results[other]["sample"] != base:
                same = False
                print(f"DIFFERENT scores: {other} vs {group[0]}")
    print("identical scores on the checked pairs:", same)
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
