"""Checks polars-rag's local embeddings against sentence-transformers on the whole parity set
(benches/embed_texts.py, over 1,000 texts) recorded by benches/record_embeddings.py: prints the
largest per-component difference and the smallest cosine (tests/it/embed.rs checks every token id of
the same recording when it is present).

    .venv-bench-embed/bin/pip install --no-deps dist/polars_rag-*.whl
    .venv-bench-embed/bin/python benches/embed_parity.py MODEL_DIR
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import polars as pl

import polars_rag as pr

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    record = json.loads((ROOT / "bench-output" / "embeddings" / "reference.json").read_text())
    embedder = pr.Embedder(model=sys.argv[1], cache=None)
    got = pl.DataFrame({"t": record["texts"]}).select(pr.embed("t", embedder=embedder))["t"].to_list()
    worst_diff, worst_cos, worst_text = 0.0, 1.0, ""
    for text, mine, theirs in zip(record["texts"], got, record["vectors"]):
        diff = max(abs(a - b) for a, b in zip(mine, theirs))
        dot = sum(a * b for a, b in zip(mine, theirs))
        cos = dot / (math.sqrt(sum(a * a for a in mine)) * math.sqrt(sum(b * b for b in theirs)))
        if diff > worst_diff:
            worst_diff = diff
        if cos < worst_cos:
            worst_cos, worst_text = cos, text
    usage = embedder.usage()
    print(f"texts: {len(record['texts'])} (sentence-transformers {record['sentence_transformers']}, torch {record['torch']})")
    print(f"max |difference| per component: {worst_diff:.3e}")
    print(f"min cosine: {worst_cos:.9f} ({worst_text[:40]!r})")
    print(f"truncated at the token limit: {usage['truncated']}")
    ok = worst_diff <= 1e-4 and worst_cos >= 0.99999
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
