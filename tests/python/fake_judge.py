"""A local OpenAI-compatible chat-completions server for the judge tests: it judges by fixed rules
(a claim found verbatim in its span is fully supported, quoted; otherwise not supported; an answer
containing the reference matches; claims are the answer's sentences) and injects faults named in
the claim (``#429`` once with ``Retry-After: 0``, ``#500`` once, ``#badjson`` always)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeJudge:
    def __init__(self) -> None:
        self.requests = 0
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                status, headers, text = owner.respond(body)
                data = text.encode()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def embeddings(self, body: dict[str, Any]) -> tuple[int, dict[str, str], str]:
        """An ``/embeddings`` reply: a 4-dimensional vector per text (its length, its counts of
        "a" and "e", 1), in reverse order with explicit indices; a batch holding "#500" fails
        once."""
        texts = [str(t) for t in body["input"]]
        key = "embed:" + "|".join(texts)
        with self.lock:
            self.requests += 1
            attempt = self.attempts[key] = self.attempts.get(key, 0) + 1
        if any("#500" in t for t in texts) and attempt == 1:
            return 500, {}, '{"error": "try again"}'
        data = [
            {"object": "embedding", "index": i, "embedding": [float(len(t)), float(t.count("a")), float(t.count("e")), 1.0]}
            for i, t in enumerate(texts)
        ]
        usage = {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0}
        return 200, {}, json.dumps({"object": "list", "data": data[::-1], "usage": usage})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def respond(self, body: dict[str, Any]) -> tuple[int, dict[str, str], str]:
        if "input" in body:
            return self.embeddings(body)
        messages = body.get("messages", [])
        user = next((m["content"] for m in messages if m.get("role") == "user"), "{}")
        try:
            data = json.loads(user)
        except ValueError:
            data = {}
        marker = str(data.get("claim", data.get("answer", "")))
        with self.lock:
            self.requests += 1
            attempt = self.attempts[marker] = self.attempts.get(marker, 0) + 1
        if "#429" in marker and attempt == 1:
            return 429, {"Retry-After": "0"}, '{"error": "slow down"}'
        if "#500" in marker and attempt == 1:
            return 500, {}, '{"error": "boom"}'
        if "#badjson" in marker:
            return 200, {}, completion("not json at all")
        if "claim" in data and "cited_span" in data:
            core = str(data["claim"]).split(" #")[0]
            if core and core in str(data["cited_span"]):
                reply = {"verdict": "fully_supported", "supporting_phrase": core, "missing_or_extra": "",
                         "decision_basis": "stated"}
            else:
                reply = {"verdict": "not_supported", "supporting_phrase": "", "missing_or_extra": "all",
                         "decision_basis": "absent"}
        elif "reference" in data:
            same = str(data["reference"]).lower() in str(data["answer"]).lower()
            reply = {"match": same, "reasoning": "same" if same else "differs"}
        elif "answer" in data:
            reply = {"claims": [c for c in str(data["answer"]).split(". ") if c]}
        else:
            reply = {}
        return 200, {}, completion(json.dumps(reply))


def completion(content: str) -> str:
    return json.dumps({
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
    })
