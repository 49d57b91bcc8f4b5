"""Nugget evaluation on a real golden dataset: chroma-general, two runs assessed and compared.

1. The nuggets of each question are written once, by the judge, from its golden spans (the
   passages known to answer it), and stored in the golden table's ``nuggets`` column.
2. Two runs answer the questions extractively from BM25 retrieval over the corpus (the answer is
   the top chunk's text): run A with 800-character chunks, run B with 400-character ones.
3. ``score`` assesses every nugget against every answer (``nugget_assignment``) and ``compare``
   says which run holds more of the nuggets, with paired intervals.

Every judge reply is cached (``--cache``), so a second run of the script against the same server
asks nothing.

    .venv/bin/python examples/chroma_nuggets.py --base-url http://127.0.0.1:8080/v1 --model M
    .venv/bin/python examples/chroma_nuggets.py --fake-judge      # rules instead of a model

A local model server as the test suite runs it (SmolLM2-135M over node-llama-cpp):

    node scripts/llm-server/server.mjs --port 8090 \\
        --model "$(scripts/llm-server/install.sh .venv/bin/python | tail -n 1)" &
    .venv/bin/python examples/chroma_nuggets.py --base-url http://127.0.0.1:8090/v1 --model smollm2

The test suite's 135M model is there to exercise the plumbing, not to judge: on the first 12
questions it wrote 6 nuggets for 4 of them (an empty list for the others, one reply cut off), and
the two runs tied. A real judge writes several nuggets per question.

The data is not part of the repository: pass its folder, or keep it at ../shared/datasets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl

import polars_rag as pr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chroma_general import DEFAULT_DATA, ROOT, bm25_top_k, load  # noqa: E402


def chunk(corpus: pl.DataFrame, window: int, overlap: int) -> list[dict]:
    """Fixed-size windows (code points) with overlap."""
    chunks = []
    for file, text in corpus.iter_rows():
        for start in range(0, max(len(text) - overlap, 1), window - overlap):
            chunks.append({"file": file, "start": start, "text": text[start : start + window]})
    return chunks


def extractive_run(golden: pl.DataFrame, corpus: pl.DataFrame, window: int) -> pl.DataFrame:
    """A run whose answer to each question is the text of the top BM25 chunk of `window` code
    points (a quarter of it overlapping the next)."""
    chunks = chunk(corpus, window, window // 4)
    hits = bm25_top_k(chunks, golden["query"].to_list(), 1)
    answers = [chunks[row[0][0]]["text"].strip() if row else "" for row in hits]
    return pl.DataFrame({"query_id": golden["query_id"], "answer": answers})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--questions", type=int, default=24, help="the first N questions (default 24)")
    parser.add_argument("--base-url", help="an OpenAI-compatible server's /v1 URL")
    parser.add_argument("--model", default="judge")
    parser.add_argument("--fake-judge", action="store_true", help="the test suite's rule-based judge")
    parser.add_argument("--cache", type=Path, default=ROOT / "demo-output/chroma-nuggets/judge-cache")
    parser.add_argument("--out", type=Path, default=ROOT / "demo-output/chroma-nuggets")
    args = parser.parse_args()
    if not (args.data / "questions_df.csv").is_file():
        sys.exit(f"chroma-general not found at {args.data}: pass its folder")
    if not args.fake_judge and not args.base_url:
        sys.exit("give a judge: --base-url URL --model NAME, or --fake-judge")

    fake = None
    if args.fake_judge:
        from polars_rag.testing import FakeJudge

        fake = FakeJudge()
        args.base_url, args.model = fake.base_url, "fake-judge"
    judge = pr.Judge(base_url=args.base_url, model=args.model, cache=args.cache, max_tokens=512)
    try:
        golden, corpus = load(args.data)
        golden = golden.head(args.questions)
        # 1. Nuggets from the golden spans, written once into the golden table.
        created = golden.select(pr.create_nuggets("query", "relevant_chunks", judge=judge, max_nuggets=10))
        golden = golden.with_columns(
            created["create_nuggets"].struct.field("nuggets").alias("nuggets"),
            created["create_nuggets"].struct.field("judge_error").alias("nuggets_error"),
        )
        failed = golden.filter(pl.col("nuggets").is_null())
        with_nuggets = golden.filter(pl.col("nuggets").list.len() > 0).height
        print(
            f"nuggets: {golden['nuggets'].list.len().sum()} in all; {with_nuggets} of {golden.height} questions have "
            f"some; {failed.height} failed: {failed['nuggets_error'].unique().to_list()}"
        )
        with pl.Config(tbl_cols=10, float_precision=3, tbl_width_chars=160):
            print(judge.usage().select("prompt", "rows", "calls", "cache_hits", "seconds"))
        args.out.mkdir(parents=True, exist_ok=True)
        golden_path = args.out / "golden.parquet"
        golden.drop("nuggets_error").write_parquet(golden_path)
        # 2. Two runs, 3. each scored against the same nuggets, then compared.
        results = {}
        for name, window in (("a", 800), ("b", 400)):
            run_path = args.out / f"run_{name}.parquet"
            extractive_run(golden, corpus, window).write_parquet(run_path)
            results[name] = pr.score(
                run_path, golden_path, metrics=["nugget_assignment"], judge=judge,
                out=args.out / f"scores_{name}.parquet",
            )
            print(f"run {name} ({window}-character chunks):")
            print(results[name])
        comparison = pr.compare(results["a"].scores, results["b"].scores)
        print("run b against run a (paired bootstrap 95% interval, randomization p-value):")
        columns = ["metric", "n", "baseline", "candidate", "delta", "ci_low", "ci_high", "p_randomization"]
        with pl.Config(tbl_cols=10, float_precision=3, tbl_width_chars=160, fmt_str_lengths=40):
            print(comparison.metrics.select(columns))
    finally:
        if fake is not None:
            fake.close()


if __name__ == "__main__":
    main()
