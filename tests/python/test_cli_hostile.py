"""Hostile ``--set`` overrides through the package's command (run in process): refused with an
error that names the key, never a crash of the interpreter. Each case runs in its own subprocess, so a stack overflow
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
        from polars_rag._internal import main_captured

        demo = Path(pr.__file__).parent / "demo"
        status, out, err, kind = main_captured(
            ["polars-rag", "score", "--quiet", "--run", str(demo / "run_a.parquet"),
             "--golden", str(demo / "golden.parquet"), "--set", {setting}]
        )
        if status == 2:  # an input error (the kind names which)
            print("refused:", err.strip())
        else:
            print("accepted", status, kind)
        """
    )
    done = subprocess.run([sys.executable, "-c", program], check=False, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stderr[-4000:]}"
    out = done.stdout
    assert out.startswith("refused: error: --set "), out[:2000]
    for text in expected:
        assert text in out, out[:2000]
    # The key is cut in the message, not echoed whole.
    assert len(out) < 2000, len(out)
