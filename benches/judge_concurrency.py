"""Does the judge engine keep a server that serves many requests at once busy? Against a server
with a fixed service time and no limit on concurrent requests (``benches/servers/fixed_latency.mjs``,
Node's HTTP server: what vLLM, SGLang or a hosted API look like to a client), the engine's calls
per second at several ``max_concurrency`` values, beside the ideal ``max_concurrency / service
time``, with the CPU time per call of the client process and of the server, and the TCP
connections the server saw (the engine reuses its connections: one per worker, kept alive).

    .venv/bin/python benches/judge_concurrency.py [--service-ms 50] [--concurrency 1,8,64,256] [--calls-per-worker 40]

No cache: every row is a distinct call. The judge is a one-field custom card the server's fixed
reply satisfies.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import polars as pl

import polars_rag as pr

ROOT = Path(__file__).resolve().parents[1]
CARD = {
    "id": "true_or_false",
    "version": "1",
    "inputs": ["statement"],
    "system": "Say whether the statement is true.",
    "schema": {"type": "object", "required": ["true"], "additionalProperties": False,
               "properties": {"true": {"type": "boolean"}}},
}


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_cpu_seconds(pid: int) -> float:
    """User and system CPU time of another process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stats(url: str) -> dict[str, int]:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=10) as reply:
        return dict(json.loads(reply.read()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--service-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", default="1,8,64,256")
    parser.add_argument("--calls-per-worker", type=int, default=40)
    args = parser.parse_args()
    server = subprocess.Popen(
        ["node", str(ROOT / "benches/servers/fixed_latency.mjs"), "--service-ms", str(args.service_ms)],
        stdout=subprocess.PIPE, text=True,
    )
    line = server.stdout.readline() if server.stdout else ""
    if not line.startswith("listening on "):
        sys.exit(f"the server did not start: {line!r}")
    url = line.removeprefix("listening on ").strip()
    print(f"polars-rag {pr.__version__}; service time {args.service_ms:g} ms, no limit on concurrent requests")
    print("| max_concurrency | calls | seconds | calls/s | ideal calls/s | share of ideal | client CPU µs per call "
          "| server CPU µs per call | connections |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for concurrency in [int(c) for c in args.concurrency.split(",")]:
            calls = concurrency * args.calls_per_worker
            frame = pl.DataFrame({"statement": [f"Statement {concurrency}-{i} is true." for i in range(calls)]})
            judge = pr.Judge(base_url=url, model="fixed", cache=None, max_concurrency=concurrency, timeout=60.0)
            before, cpu, served = stats(url), cpu_seconds(), process_cpu_seconds(server.pid)
            start = time.perf_counter()
            out = frame.select(pr.custom_judge(CARD, ["statement"], judge=judge))
            seconds = time.perf_counter() - start
            cpu = cpu_seconds() - cpu
            served = process_cpu_seconds(server.pid) - served
            after = stats(url)
            failed = out["true_or_false"].struct.field("judge_error").is_not_null().sum()
            made = after["requests"] - before["requests"]
            if failed or made != calls:
                sys.exit(f"max_concurrency {concurrency}: {failed} rows failed, {made} requests for {calls} rows")
            ideal = concurrency / (args.service_ms / 1000)
            rate = made / seconds
            print(f"| {concurrency} | {made:,} | {seconds:.2f} | {rate:,.0f} | {ideal:,.0f} | {rate / ideal:.0%} | "
                  f"{cpu / made * 1e6:.0f} | {served / made * 1e6:.0f} | {after['connections'] - before['connections']} |")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
