"""Hostile ``--set`` overrides through ``pr.score``: refused with an error that names the key,
never a crash of the interpreter. Each case runs in its own subprocess, so a stack overflow
(SIGSEGV) fails the test instead of ending the run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CASES = {
    # A key 20,000 levels deep overflowed the stack while its sections were read.
    "deep key": (
        "'.'.join(['a'] * 20_000) + '=1'",
        ["--set a.a.a.a", "the key has 20000 levels", "at most 32"],
    ),
    # What followed the line break was read as another key and dropped.
    "line break": (
        "'rouge.use_stemmer=true\\nbleu.lowercase=true'",
        ["--set rouge.use_stemmer: the value holds a line break"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_set_is_an_error_naming_the_key(case: str) -> None:
    setting, expected = CASES[case]
    program = textwrap.dedent(
        f"""
        from pathlib import Path
        import polars_rag as pr

        demo = Path(pr.__file__).parent / "demo"
        try:
            pr.score(demo / "run_a.parquet", demo / "golden.parquet", args=["--set", {setting}])
        except ValueError as e:
            print("refused:", e)
        else:
            print("accepted")
        """
    )
    done = subprocess.run([sys.executable, "-c", program], check=False, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stderr[-4000:]}"
    out = done.stdout
    assert out.startswith("refused: score: --set "), out[:2000]
    for text in expected:
        assert text in out, out[:2000]
    # The key is cut in the message, not echoed whole.
    assert len(out) < 2000, len(out)
