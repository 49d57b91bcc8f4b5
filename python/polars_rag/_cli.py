"""The ``polars-rag`` command that ``pip install`` puts on the PATH: the library's command line
(the same argument parser, jobs, outputs and exit codes as the cargo-built binary), run in this
process through the plugin."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from polars_rag._internal import main as _main

#: The demo tables shipped inside the package (what ``polars-rag`` with no arguments scores).
DEMO_DIR = Path(__file__).parent / "demo"
#: The labelled citation-support set shipped inside the package (what ``polars-rag judge-eval``
#: scores a judge on when no set is given).
JUDGE_EVAL_DIR = Path(__file__).parent / "judge_eval"


def run(argv: list[str]) -> int:
    """Runs the command line on ``argv`` (without the program name) and returns its exit status.

    Output goes to the process's standard output and error (file descriptors 1 and 2), as the
    binary's does.

    Example:
        >>> from polars_rag._cli import run
        >>> run(["score", "--no-such-flag"])  # a usage error: clap's message on stderr, status 2
        2
    """
    if (DEMO_DIR / "run_a.parquet").is_file():
        os.environ.setdefault("POLARS_RAG_DEMO_DIR", str(DEMO_DIR))
    if (JUDGE_EVAL_DIR / "citation_support.parquet").is_file():
        os.environ.setdefault("POLARS_RAG_JUDGE_EVAL_DIR", str(JUDGE_EVAL_DIR))
    # Rust writes to the file descriptors; what Python buffered goes first.
    sys.stdout.flush()
    sys.stderr.flush()
    return int(_main(["polars-rag", *argv]))


def main() -> None:
    """The console script's entry point. Ctrl-C ends the command as it ends the binary: the job
    runs in Rust without Python's interpreter loop, which would only note the signal for later."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(run(sys.argv[1:]))
