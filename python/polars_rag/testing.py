"""A local stand-in for an OpenAI-compatible chat-completions (and embeddings) server that judges
by fixed rules, for examples and tests that must run without a model: a claim found verbatim in
its span is fully supported, quoted; otherwise not supported; an answer containing the reference
matches; claims are the answer's sentences. It also injects the faults named in a claim (``#429``
once with ``Retry-After: 0``, ``#500`` once, ``#badjson`` always, ``#wait-50`` a 429 asking for
50 s always).

In Python::

    from polars_rag.testing import FakeJudge
    server = FakeJudge()
    judge = pr.Judge(base_url=server.base_url, model="fake-judge")

From a shell, ``python -m polars_rag.testing --port 8808`` serves until interrupted and prints its
base URL for ``--judge-base-url``.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeJudge:
    def __init__(self, port: int = 0) -> None:
        self.requests = 0
        #: Every chat-completions request body received, in arrival order.
        self.bodies: list[dict[str, Any]] = []
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without TCP_NODELAY a kept-alive client
            # waits for its delayed ACK (40 ms) on every reply, as real servers do not make it.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # the name http.server calls
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

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
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
        marker = str(data.get("claim", data.get("passage", data.get("answer", data.get("statements", data.get("reference", ""))))))
        with self.lock:
            self.requests += 1
            self.bodies.append(body)
            attempt = self.attempts[marker] = self.attempts.get(marker, 0) + 1
        if "#wait-50" in marker:
            return 429, {"Retry-After": "50"}, '{"error": "come back in 50 s"}'
        if "#429" in marker and attempt == 1:
            return 429, {"Retry-After": "0"}, '{"error": "slow down"}'
        if "#500" in marker and attempt == 1:
            return 500, {}, '{"error": "boom"}'
        if "#badjson" in marker:
            return 200, {}, completion("not json at all")
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        if "\nCriteria:\n" in system:
            return 200, {}, rubric_reply(body)
        reply = judged_reply(data)
        return 200, {}, completion(json.dumps(reply))


def completion(content: str) -> str:
    return json.dumps({
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
    })


def statements(text: str) -> list[str]:
    """The statements of a text by the fake judge's rule: pieces between ". ", without a final "."."""
    return [s.strip().rstrip(".") for s in text.split(". ") if s.strip().rstrip(".")]


def listed(text: str) -> list[str]:
    """The items of a numbered list ("1. first" per line), without their numbers."""
    return [re.sub(r"^\d+\. ", "", line) for line in text.splitlines() if line.strip()]


def long_words(text: str) -> list[str]:
    """The words of four letters or more of a text, lowercased."""
    return [w for w in re.findall(r"[^\W_]+", text.lower()) if len(w) >= 4]


def judged_reply(data: dict[str, Any]) -> dict[str, Any]:
    """The fake judge's reply, by the inputs the card sends (the same rules as the Rust tests'
    fake judge): a claim in its span is fully supported; a statement, reference statement,
    reference or answer found in the context (ignoring case) is supported, attributed or useful;
    answer relevancy's questions are the answer itself, noncommittal when it says "don't know";
    the tests' custom card (passage, term) gets how often the term occurs;
    an answer containing the reference matches; statements and claims are the answer's pieces
    between ". "; a passage is graded 0-3 by the share of the question's words of four letters
    or more it holds; a premise entails a hypothesis when it has every word of it; nuggets are the
    sources' statements, vital when they share a word of four letters or more with the question,
    supported by an answer holding all their words (partially: half or more)."""
    text = {k: str(v) for k, v in data.items()}
    if "question" in text and "sources" in text and "nuggets" in text:
        # Nuggets: those so far, then each statement of the sources not yet among them, cut.
        nuggets = listed(text["nuggets"])
        for source in listed(text["sources"]):
            nuggets += [s for s in statements(source) if s not in nuggets]
        return {"nuggets": nuggets[: int(text.get("max_nuggets", "30"))]}
    if "question" in text and "nugget" in text:
        # Importance: vital when the nugget shares a word of four letters or more with the question.
        vital = set(long_words(text["question"])) & set(long_words(text["nugget"]))
        return {"label": "vital" if vital else "okay", "reason": "by rule"}
    if "nugget" in text and "answer" in text:
        # Support: the share of the nugget's [a-z0-9]+ words in the answer: all, half or more, less.
        known = set(re.findall(r"[a-z0-9]+", text["answer"].lower()))
        wanted = re.findall(r"[a-z0-9]+", text["nugget"].lower())
        hits = sum(w in known for w in wanted)
        label = "support" if hits == len(wanted) else "partial_support" if 2 * hits >= len(wanted) else "not_support"
        return {"label": label, "reason": "by rule"}
    if "passage" in text and "term" in text:
        # The custom card of the tests: whether and how often the term occurs, ignoring case.
        count = text["passage"].lower().count(text["term"].lower())
        words = text["passage"].split()
        return {"mentions": count > 0, "count": count, "share": count / max(len(words), 1),
                "first_words": words[:2], "detail": {"term": text["term"]},
                "tone": "on_topic" if count > 0 else "off_topic"}
    if "premise" in text and "hypothesis" in text:
        # Entailment: every [a-z0-9]+ word of the lowercased hypothesis is one of the premise's.
        known = set(re.findall(r"[a-z0-9]+", text["premise"].lower()))
        entailed = all(w in known for w in re.findall(r"[a-z0-9]+", text["hypothesis"].lower()))
        return {"label": "entailment" if entailed else "neutral", "reason": "by rule"}
    if "question" in text and "passage" in text:
        # Relevance: the share of the question's words of four letters or more in the passage.
        asked, found = long_words(text["question"]), set(long_words(text["passage"]))
        hits = sum(w in found for w in asked)
        grade = 0 if hits == 0 else 3 if hits == len(asked) else 2 if 2 * hits >= len(asked) else 1
        return {"grade": grade, "reason": "by rule"}
    if "claim" in text and "cited_span" in text:
        core = text["claim"].split(" #")[0]
        if core and core in text["cited_span"]:
            return {"verdict": "fully_supported", "supporting_phrase": core, "missing_or_extra": "",
                    "decision_basis": "stated"}
        return {"verdict": "not_supported", "supporting_phrase": "", "missing_or_extra": "all",
                "decision_basis": "absent"}
    if "context" in text and "statements" in text:
        verdicts = []
        for line in text["statements"].splitlines():
            statement = line.split(". ", 1)[1] if ". " in line else line
            supported = statement.lower() in text["context"].lower()
            verdicts.append({"statement": statement, "reason": "stated" if supported else "absent",
                             "verdict": int(supported)})
        return {"verdicts": verdicts}
    if "contexts" in text and "reference" in text:
        return {"classifications": [
            {"statement": s, "reason": "by rule", "attributed": int(s.lower() in text["contexts"].lower())}
            for s in statements(text["reference"])
        ]}
    if "truths" in text and "claims" in text:
        verdicts = []
        for line in text["claims"].splitlines():
            claim = line.split(". ", 1)[1] if ". " in line else line
            agrees = claim.lower() in text["truths"].lower()
            verdicts.append({"verdict": "yes" if agrees else "no", "reason": "" if agrees else "absent"})
        return {"verdicts": verdicts}
    if "context" in text and "question" not in text:
        return {"truths": [s for part in text["context"].split("\n\n") for s in statements(part)]}
    if "context" in text:
        other = text.get("reference", text.get("answer", ""))
        return {"reason": "by rule", "verdict": int(bool(other) and other.lower() in text["context"].lower())}
    if "answer" in text and "question_count" in text:
        noncommittal = int("don't know" in text["answer"].lower())
        return {"questions": [{"question": text["answer"], "noncommittal": noncommittal}
                              for _ in range(int(text["question_count"]))]}
    if "answer" in text and "reference" in text:
        same = text["reference"].lower() in text["answer"].lower()
        return {"match": same, "reasoning": "same" if same else "differs"}
    if "question" in text and "answer" in text:
        return {"statements": statements(text["answer"])}
    if "answer" in text:
        return {"claims": [c for c in text["answer"].split(". ") if c]}
    return {}


def rubric_reply(body: dict[str, Any]) -> str:
    """A rubric (g_eval) reply: score 4; with log-probabilities asked for, the score token's
    candidates are 4 (60 %), 3 (30 %) and 5 (10 %), a weighted score of 3.8."""
    import math

    content = json.dumps({"reason": "by rule", "score": 4}, separators=(",", ":"))
    reply = json.loads(completion(content))
    if body.get("logprobs") is True:
        at = content.index('"score":') + len('"score":')
        top = [{"token": t, "logprob": math.log(p)} for t, p in (("4", 0.6), ("3", 0.3), ("5", 0.1))]
        reply["choices"][0]["logprobs"] = {"content": [
            {"token": content[:at], "logprob": 0.0, "top_logprobs": []},
            {"token": "4", "logprob": math.log(0.6), "top_logprobs": top},
            {"token": content[at + 1:], "logprob": 0.0, "top_logprobs": []},
        ]}
    return json.dumps(reply)


def main() -> None:
    """Serves the fake judge on ``--port`` (default: any free port) until interrupted."""
    import argparse
    import time

    parser = argparse.ArgumentParser(prog="python -m polars_rag.testing", description=main.__doc__)
    parser.add_argument("--port", type=int, default=0)
    server = FakeJudge(parser.parse_args().port)
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.close()


if __name__ == "__main__":
    main()
