"""The engines against hostile servers from Python: Ctrl-C while a request is in flight, and
what the settings' reprs show."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import polars_rag as pr
import pytest

SLOW_SERVER_SCRIPT = """
import threading, time, polars as pl, polars_rag as pr
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Slow(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(30)
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
judge = pr.Judge(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="slow", cache=None)
print("judging", flush=True)
try:
    pl.DataFrame({"claim": ["x", "y", "z"], "cited_span": ["x", "y", "z"]}).select(
        pr.citation_support("claim", "cited_span", judge=judge)
    )
    print("finished without interruption", flush=True)
except pl.exceptions.PolarsError as error:
    print("stopped:", str(error).splitlines()[0], flush=True)
print("sleeping", flush=True)
time.sleep(60)
print("slept", flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
def test_ctrl_c_while_requests_are_in_flight_stops_the_call_at_once():
    # Every request takes 30 s (then fails, and would be retried): the first Ctrl-C must end the
    # call within seconds, not when the requests and their retries are done.
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW_SERVER_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "judging"
        time.sleep(1.0)  # the requests are in flight
        child.send_signal(signal.SIGINT)
        # A watchdog, not a timing claim: without the fix the call takes minutes.
        stopped = subprocess_line_within(child, 15)
        assert "citation_support: interrupted (Ctrl-C): 3 of 3 distinct rows were not judged" in stopped, stopped
        assert subprocess_line_within(child, 15).strip() == "sleeping"
        # Outside the engine, Ctrl-C is Python's again.
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=20)
    finally:
        child.kill()
    assert "slept" not in stdout
    assert "KeyboardInterrupt" in stderr, stderr


def subprocess_line_within(child: subprocess.Popen[str], seconds: float) -> str:
    """The child's next line of output, failing when none comes within `seconds`."""
    import threading

    assert child.stdout is not None
    stream = child.stdout
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    if not line:
        child.kill()
        pytest.fail(f"no output within {seconds} s: the call was not interrupted")
    return line[0]


def test_the_embedders_repr_hides_the_urls_password():
    embedder = pr.Embedder(base_url="http://user:PW-secret@127.0.0.1:9/v1", model="m", cache=None)
    shown = repr(embedder)
    assert "PW-secret" not in shown and "user" not in shown, shown
    assert "http://***@127.0.0.1:9/v1" in shown, shown
    judge = pr.Judge(base_url="http://user:PW-secret@127.0.0.1:9/v1", model="m", cache=None)
    assert "PW-secret" not in repr(judge)


def test_the_judge_takes_a_bound_on_the_items_of_a_reply():
    assert pr.Judge(cache=None).settings()["max_reply_items"] == 200
    assert pr.Judge(cache=None, max_reply_items=5).settings()["max_reply_items"] == 5
    with pytest.raises(TypeError, match="max_reply_items must be an integer"):
        pr.Judge(max_reply_items="5")  # type: ignore[arg-type]
