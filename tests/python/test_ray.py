"""polars_rag.ray on a local Ray cluster of two nodes started by the test: the job scored block
by block, in the workers' processes through the installed package (no executable anywhere),
equals one call of the pip-installed `polars-rag score` over the whole run (scores table and
summary)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_judge import FakeJudge
from polars.testing import assert_frame_equal

import polars as pl
import polars_rag as pr

try:
    import ray

    import polars_rag.ray as prr
except ImportError as error:  # a visible skip (a failure where parts are required), not a silent one
    ray = prr = None
    RAY_MISSING = f"Ray is not installed here (pip install '.[ray]'): {error}"

pytestmark = pytest.mark.real_part("ray")


@pytest.fixture(autouse=True)
def _ray_installed() -> None:
    if ray is None:
        pytest.skip(RAY_MISSING)

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "datasets/demo"


#: The `polars-rag` command `pip install` put beside this Python (the reference: one call over
#: the whole run). The cluster itself runs no executable.
COMMAND = Path(sys.executable).parent / "polars-rag"


@pytest.fixture(autouse=True)
def _no_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    """No cargo-built binary is named anywhere: the job runs from the installed package alone."""
    monkeypatch.delenv("POLARS_RAG_BIN", raising=False)
    assert COMMAND.is_file(), f"pip install did not put the polars-rag command at {COMMAND}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def node_caches(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The cache folders (POLARS_RAG_CACHE_DIR) of the head node and of the worker node: two
    machines do not share their caches."""
    base = tmp_path_factory.mktemp("node-caches")
    return base / "head", base / "worker"


@pytest.fixture(scope="module")
def cluster(node_caches: tuple[Path, Path]) -> Iterator[str]:
    """A head node and a second worker node, one CPU each, each with its own cache folder."""
    ray_cli = str(Path(sys.executable).parent / "ray")
    # A throwaway cluster on this machine: no token authentication (which a head node turns
    # on by default, and which a driver reads from its environment when Ray is imported).
    settings = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    env = dict(os.environ)
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = ["--num-cpus=1", "--disable-usage-stats"]
    subprocess.run([ray_cli, "stop", "--force"], env=env, capture_output=True, check=False)
    try:
        head_cache, worker_cache = node_caches
        subprocess.run(
            [ray_cli, "start", "--head", f"--port={port}", "--include-dashboard=false", *common],
            env={**env, "POLARS_RAG_CACHE_DIR": str(head_cache)}, capture_output=True, check=True, timeout=120,
        )
        subprocess.run(
            [ray_cli, "start", f"--address={address}", *common],
            env={**env, "POLARS_RAG_CACHE_DIR": str(worker_cache)}, capture_output=True, check=True, timeout=120,
        )
        ray.init(address=address, log_to_driver=False)
        for _ in range(120):
            if sum(1 for node in ray.nodes() if node["Alive"]) == 2:
                break
            time.sleep(0.5)
        yield address
    finally:
        ray.shutdown()
        subprocess.run([ray_cli, "stop", "--force"], env=env, capture_output=True, check=False)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _node_copies() -> list[Path]:
    """The job files the nodes of this machine still hold (every node here shares /tmp)."""
    folder = Path(tempfile.gettempdir()) / "polars-rag-ray-job-files"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def _metric_lines(summary: str) -> list[str]:
    """The summary's metric and aggregate lines (its header and notes name files)."""
    lines = summary.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("metric "))
    return [line for line in lines[start:] if line and not line.startswith("note:")]


def test_a_job_on_two_nodes_equals_one_score_call(cluster: str, tmp_path: Path) -> None:
    assert sum(1 for node in ray.nodes() if node["Alive"]) == 2
    # The run without three questions (so the golden table has unanswered ones), in four files.
    run = pl.read_parquet(DEMO / "run_a.parquet")
    run = run.filter(~pl.col("query_id").is_in(run["query_id"].head(3).to_list()))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for i, part in enumerate(run.iter_slices(n_rows=6)):
        part.write_parquet(run_dir / f"run-{i}.parquet")
    run.write_parquet(tmp_path / "run.parquet")
    golden, corpus = DEMO / "golden.parquet", DEMO / "corpus.parquet"

    report = prr.score(
        str(run_dir), out=tmp_path / "scores", golden=golden, corpus=corpus, polars_threads=1
    )
    one = subprocess.run(
        [str(COMMAND), "score", "--quiet", "--run", str(tmp_path / "run.parquet"), "--golden", str(golden),
         "--corpus", str(corpus), "--out", str(tmp_path / "one.parquet")],
        capture_output=True, text=True, check=True,
    )

    assert report.rows == run.height
    assert len(report.parts) >= 2 and report.parts[-1].name == "unanswered.parquet"
    blocks = pl.read_parquet([str(p) for p in report.parts]).sort("query_id")
    whole = pl.read_parquet(tmp_path / "one.parquet").sort("query_id")
    assert blocks.height == whole.height == pl.read_parquet(golden).height
    assert blocks.filter(~pl.col("in_run")).height == 3
    assert_frame_equal(blocks.select(whole.columns), whole)
    assert _metric_lines(report.summary) == _metric_lines(one.stdout)
    assert "3 of 24 questions have no answer" in report.summary
    # The summary merged the statistics each block wrote beside its part.
    blocks_written = [p for p in report.parts if p.name != "unanswered.parquet"]
    assert all(Path(f"{p}.summary.json").is_file() for p in blocks_written)
    n = len(blocks_written)
    assert f"the tallies their blocks wrote, {n} of {n} parts\n" in report.summary
    # Every part carries the metrics' signatures, as a scores table of `score` does.
    for part in report.parts:
        assert "polars-rag:signature:bleu" in pl.read_parquet_metadata(part)
    assert _node_copies() == [], "the nodes removed their copies of the job's files"


def test_bad_input_is_named(cluster: str, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="golden table not found"):
        prr.score(str(DEMO / "run_a.parquet"), out=tmp_path / "a", golden=tmp_path / "nope.parquet")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "old.parquet").write_bytes(b"")
    with pytest.raises(FileExistsError, match="not empty"):
        prr.score(str(DEMO / "run_a.parquet"), out=tmp_path / "b")
    with pytest.raises(RuntimeError, match="metric"):
        prr.score(str(DEMO / "run_a.parquet"), out=tmp_path / "d", metrics=["no_such_metric"])
    assert _node_copies() == [], "a failed job leaves no copies of its files either"


def test_a_dataset_with_options_of_the_command_line(cluster: str, tmp_path: Path) -> None:
    """A ray.data.Dataset in several blocks, with the job's settings (`by`, a metric list and an
    option): the same scores and summary, segment table included, as the command with the same
    settings as flags."""
    run = pl.read_parquet(DEMO / "run_b.parquet")
    run.write_parquet(tmp_path / "run.parquet")
    golden = DEMO / "golden.parquet"
    dataset = ray.data.from_arrow(run.to_arrow()).repartition(3)
    metrics = ["bleu", "rouge", "quoted_spans", "citation_alignment", "corpus_bleu", "mrr"]
    flags = ["--by", "segment", "--set", "quoted_spans.quotes=ragas"]
    report = prr.score(dataset, out=tmp_path / "scores", golden=golden, metrics=metrics, by="segment",
                       options={"quoted_spans": {"quotes": "ragas"}})
    one = subprocess.run(
        [str(COMMAND), "score", "--quiet", "--run", str(tmp_path / "run.parquet"), "--golden", str(golden),
         "--metrics", ",".join(metrics), *flags, "--out", str(tmp_path / "one.parquet")],
        capture_output=True, text=True, check=True,
    )
    assert sum(p.name.startswith("part-") for p in report.parts) == 3
    blocks = pl.read_parquet([str(p) for p in report.parts]).sort("query_id")
    whole = pl.read_parquet(tmp_path / "one.parquet").sort("query_id")
    assert_frame_equal(blocks.select(whole.columns), whole)
    assert "by segment:" in report.summary
    assert "quotes:ragas" in report.summary
    assert _metric_lines(report.summary) == _metric_lines(one.stdout)
    with pytest.raises(TypeError, match="must be a mapping"):
        prr.score(dataset, out=tmp_path / "again", golden=golden, options={"rouge": True})  # type: ignore[dict-item]


def test_judged_job_merges_the_node_caches_into_the_driver(
    cluster: str, node_caches: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judged metric on the cluster: each node caches its own replies; afterwards the driver's
    cache holds every reply, so the same job on the driver alone asks the judge nothing."""
    driver_cache = tmp_path / "driver-cache"
    monkeypatch.setenv("POLARS_RAG_CACHE_DIR", str(driver_cache))
    judge = FakeJudge()
    try:
        run = pl.read_parquet(DEMO / "run_a.parquet")
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        for i, part in enumerate(run.iter_slices(n_rows=6)):
            part.write_parquet(run_dir / f"run-{i}.parquet")
        run.write_parquet(tmp_path / "run.parquet")
        golden = DEMO / "golden.parquet"
        flags = ["--judge-base-url", judge.base_url, "--judge-model", "fake-judge", "--question-col", "query"]
        report = prr.score(
            str(run_dir), out=tmp_path / "scores", golden=golden, metrics=["answer_match"],
            judge=pr.Judge(base_url=judge.base_url, model="fake-judge"), columns={"question": "query"},
        )
        calls = judge.requests
        assert calls >= run.height, "every answer was judged once on the cluster"
        node_files = [cache / "judge" / "judge-cache.sqlite3" for cache in node_caches]
        assert any(f.is_file() for f in node_files), "the nodes cached their replies"
        assert "judge replies to" in report.caches
        assert not (tmp_path / "scores" / ".caches").exists(), "the copies are removed"
        # The same job on the driver alone: every reply comes from its merged cache.
        one = subprocess.run(
            [str(COMMAND), "score", "--quiet", "--run", str(tmp_path / "run.parquet"), "--golden", str(golden),
             "--metrics", "answer_match", *flags, "--out", str(tmp_path / "one.parquet")],
            capture_output=True, text=True, check=True,
        )
        assert judge.requests == calls, one.stdout
        blocks = pl.read_parquet([str(p) for p in report.parts]).sort("query_id")
        whole = pl.read_parquet(tmp_path / "one.parquet").sort("query_id")
        assert_frame_equal(blocks.select(whole.columns), whole)
    finally:
        judge.close()
