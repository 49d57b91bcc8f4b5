"""Every public function of polars_rag under hypothesis-generated hostile input: random dtypes
(Categorical, Enum, 8- to 128-bit integers, Float16, Decimal, nested lists and structs,
zero-width arrays), random and hostile option values, hostile Unicode with NUL characters.

Each function runs in its own subprocess (``hostile_worker.py``), so a crash or an abort of the
interpreter fails the test instead of ending the run. Examples per function:
``POLARS_RAG_HOSTILE_EXAMPLES`` (1,000 by default). A long run::

    cd tests/python && POLARS_RAG_HOSTILE_EXAMPLES=100000 ../../.venv/bin/python -m pytest test_hostile.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hostile_worker import EXPRESSIONS, FRAME_FUNCTIONS

WORKER = Path(__file__).with_name("hostile_worker.py")
EXAMPLES = int(os.environ.get("POLARS_RAG_HOSTILE_EXAMPLES", "1000"))


@pytest.mark.parametrize("function", [*EXPRESSIONS, *FRAME_FUNCTIONS])
def test_hostile_inputs(function: str) -> None:
    done = subprocess.run(
        [sys.executable, str(WORKER), function, "--examples", str(EXAMPLES)],
        capture_output=True,
        text=True,
        timeout=max(600, EXAMPLES // 10),
        cwd=WORKER.parent,
    )
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-4000:]
        pytest.fail(f"{function}: exit status {done.returncode}\n{tail}")


def test_every_public_function_is_exercised() -> None:
    import polars_rag as pr

    functions = {
        name for name in pr.__all__ if callable(getattr(pr, name)) and type(getattr(pr, name)).__name__ == "function"
    }
    missing = functions - set(EXPRESSIONS) - set(FRAME_FUNCTIONS)
    assert not missing, f"functions without hostile tests: {sorted(missing)}"
