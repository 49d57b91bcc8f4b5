"""Records scikit-learn's cosine_similarity for the datapizza parity test (needs scikit-learn).

Run: python benches/record_sklearn_cosine.py
"""
import json, platform
from pathlib import Path

import numpy as np
import sklearn
from sklearn.metrics.pairwise import cosine_similarity
rng = np.random.default_rng(20261125)
cases = []
for dim in (2, 3, 5, 8, 16, 33, 64, 100, 257, 520):
    # Multiples of 4 rows by 8 columns fill OpenBLAS's micro-kernel tiles.
    m, n = 4, 8
    X = rng.standard_normal((m, dim)); Y = rng.standard_normal((n, dim))
    # Some rows scaled copies / near copies, so cosines land near round thresholds.
    X[1] = Y[0] * 3.0
    S = cosine_similarity(X, Y)
    cases.append({"dim": dim, "retrieved": X.tolist(), "ground_truth": Y.tolist(),
                  "cosine_matrix": [[float.hex(float(v)) for v in row] for row in S]})
meta = {"what": "scikit-learn cosine_similarity on 4x8 float64 matrices (numpy einsum norms, OpenBLAS DGEMM), values as float.hex",
        "scikit-learn": sklearn.__version__, "numpy": np.__version__, "machine": platform.machine()}
json.dump({"_meta": meta, "cases": cases}, open(Path(__file__).resolve().parent.parent / "tests/reference-vectors/sklearn-cosine.json", "w"))
print(len(cases))
