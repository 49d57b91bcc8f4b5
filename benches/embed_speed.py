"""Embedding throughput, side by side on the same texts: sentence-transformers (PyTorch CPU,
its default batch size 32, which sorts by length) and polars-rag's local model (`pr.embed`,
batch 32, sorted by length and not), on 10,000 RAG-sized chunks (20 to 250 tokens) and on the
short (≤ 32 tokens) and long (> 32 tokens) ones apart. No cache on either side.

    .venv-bench-embed/bin/pip install --no-deps dist/polars_rag-*.whl
    .venv-bench-embed/bin/python benches/embed_speed.py MODEL_DIR [N] [--rounds R]

With `--rounds R` (R > 1) the two engines run R times each on the N texts, taking turns which
goes first, and the script prints the median of the per-round ratios: on a shared VM whose
speed drifts by 10 % over minutes, a ratio of back-to-back runs is steadier than one pass each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_texts import speed_texts  # noqa: E402

import polars_rag as pr  # noqa: E402


def timed(label: str, n: int, run) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    print(f"  {label:<44} {n / seconds:9.1f} texts/s  ({seconds:.2f} s)")
    return n / seconds


def main() -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("model_dir")
    parser.add_argument("n", nargs="?", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    model_dir, n = args.model_dir, args.n
    texts = speed_texts(n)
    st = SentenceTransformer(model_dir, device="cpu")
    lengths = [len(ids) for ids in st.tokenizer(texts, truncation=True, max_length=256)["input_ids"]]
    short = [t for t, k in zip(texts, lengths) if k <= 32]
    long = [t for t, k in zip(texts, lengths) if k > 32]
    print(f"{n} texts, {sum(lengths) / n:.0f} tokens on average; {len(short)} short (<= 32 tokens), {len(long)} long")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    sorted_model = pr.Embedder(model=model_dir, cache=None)
    unsorted_model = pr.Embedder(model=model_dir, cache=None, sort_by_length=False)

    def ours(embedder: pr.Embedder, batch: list[str]):  # type: ignore[no-untyped-def]
        return lambda: pl.DataFrame({"t": batch}).select(pr.embed("t", embedder=embedder))

    # Load both models once before timing.
    st.encode(["warm up"])
    pl.DataFrame({"t": ["warm up"]}).select(pr.embed("t", embedder=sorted_model))
    pl.DataFrame({"t": ["warm up"]}).select(pr.embed("t", embedder=unsorted_model))

    def time_theirs(batch: list[str]) -> float:
        return timed("sentence-transformers encode(batch_size=32)", len(batch), lambda: st.encode(batch, batch_size=32))

    def time_mine(batch: list[str]) -> float:
        return timed("polars-rag pr.embed (sorted by length)", len(batch), ours(sorted_model, batch))

    if args.rounds > 1:
        ratios = []
        runs = {"theirs": time_theirs, "mine": time_mine}
        for round_number in range(args.rounds):
            print(f"round {round_number + 1} of {args.rounds} ({len(texts)} texts)")
            order = ["theirs", "mine"] if round_number % 2 == 0 else ["mine", "theirs"]
            speed = {name: runs[name](texts) for name in order}
            ratios.append(speed["mine"] / speed["theirs"])
            print(f"  ratio polars-rag / sentence-transformers: {ratios[-1]:.3f}")
        print(
            f"median ratio over {args.rounds} rounds: {statistics.median(ratios):.3f} (all: {', '.join(f'{r:.3f}' for r in ratios)})"
        )
        return
    for label, batch in (("all", texts), ("short", short), ("long", long)):
        if not batch:
            continue
        print(f"{label} ({len(batch)} texts)")
        theirs = time_theirs(batch)
        mine = time_mine(batch)
        if label == "all":
            timed("polars-rag pr.embed (input order)", len(batch), ours(unsorted_model, batch))
        print(f"  ratio polars-rag / sentence-transformers: {mine / theirs:.2f}")


if __name__ == "__main__":
    main()
