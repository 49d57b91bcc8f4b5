"""Records scikit-learn's cosine_similarity for the datapizza parity test (needs scikit-learn;
benches/requirements-embed.txt has it). The last bits depend on the OpenBLAS kernel set numpy's
OpenBLAS picks for the CPU: tests/reference-vectors/sklearn-cosine.json was recorded on an AVX-512
machine (SkylakeX kernels), sklearn-cosine-haswell.json (its first ten cases, from an earlier
version of this script) on an AVX2 machine.

Run: .venv-bench-embed/bin/python benches/record_sklearn_cosine.py
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
# One retrieved row, one ground-truth row, or both: numpy's matmul sends these shapes to BLAS
# ddot / dgemv instead of GEMM, with other accumulation orders. Dimensions cover every remainder
# of the kernels' blocks (4, 16, 32 and dgemv's 2,048 rows) and common embedding widths.
rng = np.random.default_rng(20261126)
small = [(1, 1), (1, 3), (1, 6), (1, 7), (5, 1), (6, 1)]
plan = [(dim, shape) for dim in (1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 64, 100, 257) for shape in small]
# Wide vectors: each kernel and remainder once (a file of reasonable size).
plan += [(384, (1, 1)), (384, (1, 3)), (384, (5, 1)), (385, (1, 2)), (386, (1, 1)), (387, (1, 3)),
         (387, (6, 1)), (520, (1, 6)), (768, (1, 1)), (1536, (1, 3)), (2049, (1, 1)), (3072, (1, 3))]
for dim, (m, n) in plan:
    # Inputs of five decimals keep the file small; every bit of the products still counts.
    X = rng.standard_normal((m, dim)).round(5); Y = rng.standard_normal((n, dim)).round(5)
    X[0] = Y[0] * 2.0 + rng.standard_normal(dim) * 1e-9  # a cosine within rounding of 1
    S = cosine_similarity(X, Y)
    cases.append({"dim": dim, "retrieved": X.tolist(), "ground_truth": Y.tolist(),
                  "cosine_matrix": [[float.hex(float(v)) for v in row] for row in S]})
# GEMM's blocked kernel past its depth block (SkylakeX: more than 1,200 outputs, so not the
# small-matrix kernel; a depth of 400 splits in two blocks rounded to its 16-row unroll).
X = rng.standard_normal((36, 400)).round(3); Y = rng.standard_normal((36, 400)).round(3)
cases.append({"dim": 400, "retrieved": X.tolist(), "ground_truth": Y.tolist(),
              "cosine_matrix": [[float.hex(float(v)) for v in row] for row in cosine_similarity(X, Y)]})
meta = {"what": "scikit-learn cosine_similarity on float64 matrices (numpy einsum norms; OpenBLAS DGEMM for 4x8, ddot for 1x1, dgemv for 1xn and mx1), values as float.hex",
        "scikit-learn": sklearn.__version__, "numpy": np.__version__, "machine": platform.machine(),
        "openblas": np.show_config(mode="dicts")["Build Dependencies"]["blas"].get("version", "?")}
json.dump({"_meta": meta, "cases": cases}, open(Path(__file__).resolve().parent.parent / "tests/reference-vectors/sklearn-cosine.json", "w"))
print(len(cases))
