from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def vectors() -> dict:
    return json.loads((ROOT / "tests/reference-vectors/vectors-seeds.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def demo_dir() -> Path:
    return ROOT / "datasets/demo"
