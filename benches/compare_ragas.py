"""Times polars-rag's quoted-span citation alignment against Ragas 0.4.3 on the same data.

Usage (from the repository root, after scripts/test.sh has built and installed the plugin):

    .venv/bin/python benches/compare_ragas.py [--rows 1000000] [--ragas-rows 1000000]

The reference runs in its own virtual environment (.venv-bench-ragas, created on first use from
benches/requirements-ragas.txt). Both sides generate the same rows from the same seed: answers of
~600 characters with 2–3 quotations (most verbatim from a source, some edited, some invented),
and 5 sources of ~1,500 characters drawn from a pool of passages cut from the bundled demo corpus.
Ragas is timed on `quoted_spans_alignment(answers, sources)` alone (data already in Python lists);
polars-rag on `df.select(pr.citation_alignment(..., quotes="ragas"))` over a DataFrame already in
memory (the median of 5 runs). The script checks that both report the same matched and total counts, then prints the
ratio. Peak resident memory of each process is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The demo corpus's text for the engine processes (the Ragas one has no Polars), kept out of the
# repository: datasets/demo is the package's demo folder and ships in the wheel.
CORPUS_TEXT = Path(tempfile.gettempdir()) / "polars-rag-bench-corpus_text.txt"
RAGAS_VENV = ROOT / ".venv-bench-ragas"


ASCII_WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an "
    "they you were her she there been one all we their has would when if so no will more can who its out time "
    "about up some into only other new two could may first then these any also after most made over such did "
    "where through many before must well back years just much way those people being state between under never "
    "system data model answer question source document evidence claim result score value table column query "
    "retrieval ranking passage corpus index search language context reference metric benchmark quality number"
).split()


def ascii_pool(size: int = 4000, length: int = 1600) -> list[str]:
    """Passages of ~`length` characters of plain lowercase ASCII words (the case where Ragas'
    Python string methods are fastest)."""
    rng = random.Random(13)
    pool = []
    for _ in range(size):
        words: list[str] = []
        n = 0
        while n < length:
            w = rng.choice(ASCII_WORDS)
            words.append(w)
            n += len(w) + 1
        pool.append(" ".join(words))
    return pool


def passage_pool(size: int = 4000, length: int = 1500) -> list[str]:
    """Passages of ~`length` characters cut at word boundaries from the demo corpus, or of
    lowercase ASCII words when BENCH_TEXT=ascii."""
    import re

    if os.environ.get("BENCH_TEXT") == "ascii":
        return ascii_pool()

    text_file = CORPUS_TEXT
    if not text_file.exists():
        raise SystemExit(f"{text_file} missing: run with the main venv first (it writes it)")
    text = re.sub(r"\s+", " ", text_file.read_text(encoding="utf-8"))
    rng = random.Random(11)
    pool = []
    for _ in range(size):
        start = rng.randint(0, len(text) - length - 1)
        start = text.find(" ", start) + 1
        pool.append(text[start : start + length])
    return pool


def generate(rows: int, seed: int = 7):
    """Deterministic rows: (answers, source index lists, pool)."""
    pool = passage_pool()
    rng = random.Random(seed)
    answers, source_idx = [], []
    filler = "This answer summarises what the retrieved passages say about the question at hand and cites them".split()
    if os.environ.get("BENCH_TEXT") == "ascii":
        filler = [w.lower() for w in filler]
    # Filler words per part: the ASCII answers reach ~690 characters, like the mixed ones.
    filler_words = (34, 44) if os.environ.get("BENCH_TEXT") == "ascii" else (18, 26)
    for _ in range(rows):
        idx = [rng.randrange(len(pool)) for _ in range(5)]
        parts = []
        for q in range(rng.choice((2, 3))):
            parts.append(" ".join(rng.choice(filler) for _ in range(rng.randint(*filler_words))))
            words = pool[idx[q]].split(" ")
            at = rng.randrange(0, len(words) - 12)
            quote = " ".join(words[at : at + rng.randint(6, 11)])
            roll = rng.random()
            if roll < 0.15:
                quote = quote.replace(" the ", " a ", 1) + " indeed"
            elif roll < 0.25:
                quote = "nothing in the sources says this at all"
            parts.append(f'"{quote}"')
        answers.append(" ".join(parts) + ".")
        source_idx.append(idx)
    return answers, source_idx, pool


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_ragas(rows: int) -> dict:
    from ragas.metrics.quoted_spans import quoted_spans_alignment  # type: ignore

    answers, source_idx, pool = generate(rows)
    sources = [[pool[i] for i in idx] for idx in source_idx]
    t0 = time.perf_counter()
    out = quoted_spans_alignment(answers, sources)
    secs = time.perf_counter() - t0
    return {"engine": "ragas", "rows": rows, "seconds": secs, "matched": out["matched"], "total": out["total"], "peak_mb": peak_mb()}


def run_plugin(rows: int) -> dict:
    import polars as pl

    import polars_rag as pr

    answers, source_idx, pool = generate(rows)
    pool_s = pl.Series("pool", pool, dtype=pl.String)
    flat = pl.Series("i", [i for idx in source_idx for i in idx], dtype=pl.UInt32)
    # Gathering string views shares the pool's buffers: 5 sources per row cost 16 bytes each.
    sources = pool_s.gather(flat).reshape((rows, 5)).cast(pl.List(pl.String))
    df = pl.DataFrame({"answer": answers, "sources": sources})
    del answers, source_idx, flat
    threads = pl.thread_pool_size()

    def timed(expr: pl.Expr) -> tuple[float, pl.DataFrame]:
        """The median of 5 runs (a run takes well under a second, so one is noisy)."""
        times, out = [], pl.DataFrame()
        for _ in range(5):
            t0 = time.perf_counter()
            out = df.select(expr)
            times.append(time.perf_counter() - t0)
        return sorted(times)[len(times) // 2], out

    secs, agg = timed(pr.citation_alignment("answer", "sources", quotes="ragas"))
    agg = agg.unnest("citation_alignment")
    secs_rows, per_row = timed(pr.quoted_spans("answer", "sources", quotes="ragas"))
    secs_std, _ = timed(pr.quoted_spans("answer", "sources"))
    assert per_row.height == rows
    return {
        "engine": "polars-rag",
        "rows": rows,
        "threads": threads,
        "seconds": secs,
        "seconds_per_row_struct": secs_rows,
        "seconds_standard_quotes": secs_std,
        "matched": agg["matched"][0],
        "total": agg["total"][0],
        "peak_mb": peak_mb(),
    }


def ensure_ragas_venv() -> Path:
    py = RAGAS_VENV / "bin/python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(RAGAS_VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "-r", str(ROOT / "benches/requirements-ragas.txt")], check=True)
    return py


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--ragas-rows", type=int, default=None, help="rows for Ragas (default: --rows)")
    ap.add_argument(
        "--text",
        choices=["mixed", "ascii"],
        default="mixed",
        help="mixed: passages of the demo corpus (mixed Unicode); ascii: lowercase ASCII words",
    )
    ap.add_argument("--engine", choices=["ragas", "plugin"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ["BENCH_TEXT"] = args.text
    if args.engine == "ragas":
        print(json.dumps(run_ragas(args.rows)))
        return
    if args.engine == "plugin":
        print(json.dumps(run_plugin(args.rows)))
        return

    import polars as pl

    corpus = pl.read_parquet(ROOT / "datasets/demo/corpus.parquet")
    CORPUS_TEXT.write_text("\n".join(corpus["text"]), encoding="utf-8")
    ragas_rows = args.ragas_rows or args.rows
    me = subprocess.run([sys.executable, __file__, "--engine", "plugin", "--rows", str(args.rows), "--text", args.text], check=True, capture_output=True, text=True)
    plugin = json.loads(me.stdout)
    ref_py = ensure_ragas_venv()
    ref = subprocess.run([str(ref_py), __file__, "--engine", "ragas", "--rows", str(ragas_rows), "--text", args.text], check=True, capture_output=True, text=True)
    ragas = json.loads(ref.stdout)
    print(f"text: {args.text}; machine: {os.cpu_count()} cores; polars-rag threads: {plugin['threads']}")
    print(f"{'engine':<34}{'rows':>10}{'seconds':>10}{'rows/s':>14}{'peak MB':>10}   matched/total")
    for name, r, secs in [
        ("ragas 0.4.3", ragas, ragas["seconds"]),
        ("polars-rag citation_alignment", plugin, plugin["seconds"]),
        ("polars-rag quoted_spans (rows)", plugin, plugin["seconds_per_row_struct"]),
        ("polars-rag quoted_spans standard", plugin, plugin["seconds_standard_quotes"]),
    ]:
        print(f"{name:<34}{r['rows']:>10}{secs:>10.3f}{r['rows'] / secs:>14,.0f}{r['peak_mb']:>10.0f}   {r['matched']:.0f}/{r['total']:.0f}")
    ratio = (ragas["seconds"] / ragas["rows"]) / (plugin["seconds"] / plugin["rows"])
    print(f"speed-up (per row, citation_alignment vs ragas): {ratio:.0f}x")
    if ragas_rows == args.rows:
        same = (ragas["matched"], ragas["total"]) == (plugin["matched"], plugin["total"])
        print("identical counts:", same)
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
