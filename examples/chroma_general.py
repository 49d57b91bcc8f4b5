"""Retrieval evaluation on a real golden dataset: chroma-general (Chroma's chunking research).

472 questions, 790 golden spans (file, start, end in code points) over five documents. The
script chunks the documents into fixed-size windows with overlap, retrieves the top 10 windows
for every question with a plain BM25 (written here, nothing to install), and scores the run
with polars-rag: ranked metrics judged by span overlap, character-span precision / recall / IoU,
and Chroma's own IoU formula beside the merged one. It also writes the tables as Parquet so the
same numbers come out of the CLI:

    .venv/bin/python examples/chroma_general.py [path/to/chroma-general] [--out DIR]
    polars-rag score --golden DIR/golden.parquet --run DIR/run.parquet --corpus DIR/corpus.parquet --by corpus

The data is not part of the repository: pass its folder, or keep it at ../shared/datasets.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import polars as pl

import polars_rag as pr

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared/datasets/chroma-general"
WINDOW, OVERLAP, TOP_K = 800, 200, 10
WORD = re.compile(r"\w+")


def load(src: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The golden table (query_id, query, relevant_spans, relevant_chunks, corpus) and the corpus."""
    files = sorted(p.name for p in (src / "corpora").glob("*.md"))
    corpus = pl.DataFrame(
        {"file": files, "text": [(src / "corpora" / f).read_text(encoding="utf-8") for f in files]}
    )
    questions = pl.read_csv(src / "questions_df.csv")
    rows = []
    for i, q in enumerate(questions.iter_rows(named=True)):
        refs = json.loads(q["references"])
        file = f"{q['corpus_id']}.md"
        rows.append(
            {
                "query_id": f"q{i:03d}",
                "query": q["question"],
                "relevant_spans": [
                    {"file": file, "start": r["start_index"], "end": r["end_index"], "text": r["content"]}
                    for r in refs
                ],
                "relevant_chunks": [r["content"] for r in refs],
                "corpus": q["corpus_id"],
            }
        )
    return pl.DataFrame(rows), corpus


def chunk(corpus: pl.DataFrame) -> list[dict]:
    """Fixed-size windows (code points) with overlap: the simplest chunker there is."""
    chunks = []
    for file, text in corpus.iter_rows():
        step = WINDOW - OVERLAP
        for start in range(0, max(len(text) - OVERLAP, 1), step):
            end = min(start + WINDOW, len(text))
            chunks.append({"id": f"{file}:{start}", "file": file, "start": start, "end": end, "text": text[start:end]})
    return chunks


def bm25_top_k(chunks: list[dict], queries: list[str], k: int) -> list[list[tuple[int, float]]]:
    """Okapi BM25 (k1 = 1.5, b = 0.75) over lowercase word tokens; top k chunk indices per query."""
    docs = [Counter(WORD.findall(c["text"].lower())) for c in chunks]
    lengths = [sum(d.values()) for d in docs]
    avgdl = sum(lengths) / len(lengths)
    postings: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(docs):
        for term in d:
            postings[term].append(i)
    n = len(docs)
    idf = {t: math.log((n - len(p) + 0.5) / (len(p) + 0.5) + 1.0) for t, p in postings.items()}
    results = []
    for query in queries:
        scores: dict[int, float] = defaultdict(float)
        for term in set(WORD.findall(query.lower())):
            for i in postings.get(term, ()):
                tf = docs[i][term]
                scores[i] += idf[term] * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * lengths[i] / avgdl))
        results.append(sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=ROOT / "demo-output/chroma-general")
    args = parser.parse_args()
    if not (args.data / "questions_df.csv").is_file():
        sys.exit(f"chroma-general not found at {args.data}: pass its folder")

    golden, corpus = load(args.data)
    chunks = chunk(corpus)
    t0 = time.perf_counter()
    hits = bm25_top_k(chunks, golden["query"].to_list(), TOP_K)
    retrieve_s = time.perf_counter() - t0
    run = pl.DataFrame(
        {
            "query_id": golden["query_id"],
            "retrieved": [
                [{**{f: chunks[i][f] for f in ("id", "file", "start", "end", "text")}, "score": s} for i, s in row]
                for row in hits
            ],
        }
    )
    df = golden.join(run, on="query_id", how="left")

    t0 = time.perf_counter()
    per_query = df.select(
        "query_id",
        "corpus",
        pr.recall_at_k("retrieved", "relevant_spans", k=5),
        pr.precision_at_k("retrieved", "relevant_spans", k=5),
        pr.mrr("retrieved", "relevant_spans"),
        pr.ndcg_at_k("retrieved", "relevant_spans", k=10),
        # A chunk counts as relevant only when it holds at least half of a golden span.
        pr.recall_at_k("retrieved", "relevant_spans", k=5, min_overlap_fraction=0.5).alias("recall_at_5_half"),
        pr.span_recall("retrieved", "relevant_spans"),
        pr.span_precision("retrieved", "relevant_spans"),
        pr.span_iou("retrieved", "relevant_spans"),
        pr.span_iou("retrieved", "relevant_spans", compat="chroma").alias("span_iou_chroma"),
    )
    score_s = time.perf_counter() - t0
    metrics = [c for c in per_query.columns if c not in ("query_id", "corpus")]
    overall = per_query.select(pl.lit("all").alias("corpus"), *[pl.col(m).mean() for m in metrics])
    by_corpus = per_query.group_by("corpus").agg(pl.col(m).mean() for m in metrics).sort("corpus")
    with pl.Config(tbl_rows=20, tbl_cols=20, float_precision=3, tbl_width_chars=200):
        print(
            f"chroma-general: {golden.height} questions, {df['relevant_spans'].list.len().sum()} golden spans, "
            f"{len(chunks)} chunks of {WINDOW} characters ({OVERLAP} overlap), BM25 top {TOP_K}"
        )
        print(pl.concat([by_corpus, overall]))
    print(f"retrieval (pure-Python BM25): {retrieve_s:.2f} s; scoring {len(metrics)} metrics: {score_s * 1000:.1f} ms")

    args.out.mkdir(parents=True, exist_ok=True)
    golden.write_parquet(args.out / "golden.parquet")
    run.write_parquet(args.out / "run.parquet")
    corpus.write_parquet(args.out / "corpus.parquet")
    print(f"wrote {args.out}/golden.parquet, run.parquet, corpus.parquet; score them with:")
    print(
        f"  polars-rag score --golden {args.out}/golden.parquet --run {args.out}/run.parquet "
        f"--corpus {args.out}/corpus.parquet --by corpus"
    )


if __name__ == "__main__":
    main()
