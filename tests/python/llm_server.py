"""Starts the local judge server of the real-model tests (``scripts/llm-server/server.mjs``) and
waits for its ``listening on URL`` line, for at most a given time: a server that hangs while
loading the model, or exits, is a clear error naming the part, never a test run that waits
forever."""

from __future__ import annotations

import selectors
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

SERVER = Path(__file__).resolve().parents[2] / "scripts" / "llm-server"

# Loading SmolLM2-135M takes a few seconds; a cold page cache on a loaded machine, a minute.
START_TIMEOUT_S = 180.0


class ServerStartError(RuntimeError):
    pass


def server_command(model: str) -> list[str]:
    return ["node", str(SERVER / "server.mjs"), "--model", model, "--port", "0"]


def start(command: list[str], timeout_s: float = START_TIMEOUT_S) -> tuple[subprocess.Popen[str], str]:
    """The started process and its base URL; on a timeout or an early exit the process is
    stopped and ServerStartError names the part, the command and what it wrote."""
    # The server logs to stderr for as long as it runs: a file, not a pipe nobody drains.
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    line = ""
    try:
        while not line.endswith("\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(timeout=left):
                raise ServerStartError(
                    f"the local judge server did not start within {timeout_s:g} s "
                    f"(no 'listening on' line from {' '.join(command)})"
                )
            chunk = process.stdout.readline()
            if not chunk:
                break
            line += chunk
        if not line.startswith("listening on "):
            stderr = _tail(process, log)  # waits a moment for the exit status
            raise ServerStartError(
                f"the local judge server exited before listening (status {process.poll()}): "
                f"stdout {line!r}, stderr {stderr!r}"
            )
    except BaseException:
        stop(process)
        raise
    finally:
        selector.close()
    return process, line.removeprefix("listening on ").strip()


def _tail(process: subprocess.Popen[str], log: IO[str]) -> str:
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    log.seek(0)
    return log.read()[-2000:]


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
