"""Does the judge engine keep a real model server busy? Calls per second against the local
model server of the test suite (``scripts/llm-server``: SmolLM2-135M-Instruct on
node-llama-cpp, which serves one request at a time), first with a plain client replaying the
engine's own requests back to back (what the server sustains alone), then through the engine
at several ``max_concurrency`` values, without a cache so that every row is a call.

    model=$(scripts/llm-server/install.sh .venv/bin/python | tail -n 1)
    .venv/bin/python benches/judge_server_throughput.py --model "$model" [--rows 24] [--max-tokens 16]

The judge is a one-field custom card (is the statement true?), so that each call costs about
the same; the rows are distinct statements.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/python"))
import polars_rag as pr
from fake_judge import FakeJudge

CARD = {
    "id": "true_or_false",
    "version": "1",
    "inputs": ["statement"],
    "system": "Say whether the statement is true.",
    "schema": {"type": "object", "required": ["true"], "additionalProperties": False,
               "properties": {"true": {"type": "boolean"}}},
}


def start_server(model: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        ["node", str(ROOT / "scripts/llm-server/server.mjs"), "--model", model, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    line = process.stdout.readline() if process.stdout else ""
    if not line.startswith("listening on "):
        sys.exit(f"the local model server did not start: {line!r}")
    return process, line.removeprefix("listening on ").strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--rows", type=int, default=24)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--concurrency", default="1,2,4,8")
    args = parser.parse_args()
    statements = [f"The number {i} is larger than {i * 7 % 50}." for i in range(args.rows)]
    frame = pl.DataFrame({"statement": statements})

    # The engine's requests, recorded from a fake server, to replay them as they are.
    fake = FakeJudge()
    recorder = pr.Judge(base_url=fake.base_url, model="smollm2-135m", cache=None, max_tokens=args.max_tokens)
    frame.select(pr.custom_judge(CARD, ["statement"], judge=recorder))
    # First asks only (the fake server does not know this card, so the engine asks again).
    bodies = [body for body in fake.bodies if len(body["messages"]) == 2]
    fake.close()

    process, url = start_server(args.model)
    try:
        def post(body: dict[str, object]) -> None:
            request = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=300) as reply:
                reply.read()

        post(bodies[0])  # warm-up: the model's first call
        start = time.perf_counter()
        for body in bodies:
            post(body)
        alone = len(bodies) / (time.perf_counter() - start)
        print(f"server alone (one client, back to back): {len(bodies)} calls, {alone:.2f} calls/s")
        for concurrency in [int(c) for c in args.concurrency.split(",")]:
            judge = pr.Judge(base_url=url, model="smollm2-135m", cache=None, max_tokens=args.max_tokens,
                             timeout=600.0, max_concurrency=concurrency)
            start = time.perf_counter()
            out = frame.select(pr.custom_judge(CARD, ["statement"], judge=judge))
            seconds = time.perf_counter() - start
            usage = judge.usage().row(0, named=True)
            failed = out["true_or_false"].struct.field("judge_error").is_not_null().sum()
            rate = usage["calls"] / seconds
            print(f"engine, max_concurrency={concurrency}: {usage['calls']} calls, {rate:.2f} calls/s "
                  f"({rate / alone:.0%} of the server alone), {failed} rows failed")
    finally:
        process.terminate()
        process.wait(timeout=30)


if __name__ == "__main__":
    main()
