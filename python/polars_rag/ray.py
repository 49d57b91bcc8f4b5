"""Score a run on a Ray cluster: the ``pr.score`` job, block by block on many machines.

Install with ``pip install polars-rag[ray]`` (Ray Data 2.60.0 with pyarrow). The job is the
library's, with ``pr.score``'s settings: the same metric names, configuration file, golden table
and corpus, and the same per-row scores and summary as one ``pr.score`` (or ``polars-rag score``)
call over the whole run.

How it runs:

* the driver puts the golden table, the corpus and the configuration into Ray's object store
  once; a node copies each to its temporary folder
  (``polars-rag-ray-job-files/<node id>/<object id>/``, shared by the node's worker processes) the first time one
  of its tasks needs it, and removes the copies when the job ends, failed or not;
* Ray Data reads the run (a Dataset, or Parquet files) and hands each worker blocks of rows;
  the worker scores a block with the library's job (the function ``pr.score`` calls, the block
  handed over as Arrow, settings as one dict, ``parts = "block"``) in the worker's own process
  (no executable, no subprocess; Polars limited to
  ``polars_threads`` threads through the task's ``runtime_env``, so workers do not
  oversubscribe cores) and writes its scores as one Parquet file ``part-*.parquet`` of ``out``,
  with the metrics' signatures in its metadata, atomically, and beside it the block's
  sufficient statistics for the summary (``part-*.parquet.summary.json``: each value's sum and
  count, the segments', the corpus-level metrics' summed per-row statistics);
* every node's judge and embedding caches are copied (``polars-rag cache export``, a task
  pinned to each node) and merged into the driver's (``polars-rag cache merge``): replies and
  vectors are keyed by everything that determines them, so caches merge without conflict;
* the driver then runs the job once more with ``parts = {summarise = ...}``: the golden questions no block
  answered are scored into ``out/unanswered.parquet`` (``in_run`` false), and the summary is
  the merge of the blocks' statistics and those of the unanswered questions (the driver reads
  the parts' ids, not their scores).

``out`` must be a folder every worker can write to and the driver can read (a shared file
system on a real cluster; any local folder on one machine). Workers need only this package
installed (``pip install polars-rag[ray]``).

Example (a local cluster; ``ray.init(address="auto")`` joins a running one)::

    import ray
    import polars_rag.ray as prr

    ray.init(num_cpus=2, include_dashboard=False)
    report = prr.score("run.parquet", golden="golden.parquet", corpus="corpus.parquet", out="scores/")
    print(report.summary)
    scores = pl.read_parquet("scores/*.parquet")
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Union

from polars_rag._score import _job_settings
from polars_rag.exceptions import Interrupted, PolarsRagError, from_kind

PathLike = Union[str, "os.PathLike[str]"]


class RayScoreReport(NamedTuple):
    """What :func:`score` produced."""

    #: The summary, as ``polars-rag score`` prints it for the whole run.
    summary: str
    #: The Parquet files of per-row scores (the blocks, then the unanswered golden questions).
    parts: list[Path]
    #: Rows scored by the blocks.
    rows: int
    #: What merging the nodes' judge and embedding caches into this machine's added
    #: (``polars-rag cache merge`` per node; empty when nothing was cached or merging was off).
    caches: str = ""


def _command(argv: list[str], what: str) -> str:
    """Runs ``polars-rag`` with ``argv`` in this process (the package's command line, the same
    as the binary's); returns what it printed, or raises with its error."""
    from polars_rag._internal import main_captured

    status, stdout, stderr, kind = main_captured(["polars-rag", *argv])
    if status != 0:
        raise from_kind(kind or "engine", f"polars-rag {what} failed:\n{stderr}")
    return stdout


def _file_bytes(path: PathLike | None, what: str) -> bytes | None:
    if path is None:
        return None
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"polars_rag.ray.score: {what} not found: {p}")
    return p.read_bytes()


#: Where a node keeps the job files copied from the object store: one folder per object, shared
#: by the node's worker processes (a process scoring several blocks, or several processes, copy a
#: file once per node), removed when the job ends.
_NODE_FILES = "polars-rag-ray-job-files"


def _node_folder(key: str) -> Path:
    """This node's folder for the object ``key`` (under the node's id, so that nodes sharing a
    temporary folder, as on one machine, do not remove each other's copies)."""
    import ray  # type: ignore[import-not-found,import-untyped,unused-ignore]

    node = ray.get_runtime_context().get_node_id()
    return Path(tempfile.gettempdir()) / _NODE_FILES / node / key


def _local_file(ref: Any, name: str) -> Path:
    """The job file ``ref`` on this node, copied from the object store the first time."""
    import ray  # type: ignore[import-not-found,import-untyped,unused-ignore]

    path = _node_folder(ref.hex()) / name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written beside, then renamed: a process never runs another's half-written copy.
        partial = path.with_name(f".{name}.{os.getpid()}.{uuid.uuid4().hex}")
        partial.write_bytes(ray.get(ref))
        partial.chmod(stat.S_IRWXU)
        os.replace(partial, path)
    return path


def _release_node_files(keys: list[str]) -> None:
    """Removes this node's copies of a finished job's files."""
    for key in keys:
        shutil.rmtree(_node_folder(key), ignore_errors=True)
    if keys:
        with contextlib.suppress(OSError):
            _node_folder(keys[0]).parent.rmdir()  # the node's folder, when no other job uses it


#: How a block's failure begins, so the driver finds it among Ray's wrappers.
_BLOCK_FAILED = "polars_rag.ray.score: a block of"


def _score_block(block: Any, shipped: dict[str, Any], settings: dict[str, Any], out: str) -> Any:
    """Scores one block of the run with the library's job (the one ``pr.score`` runs, the block
    handed over in memory as Arrow) into a part file of ``out``; returns the part's path and row
    count."""
    import polars as pl
    import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]

    from polars_rag._internal import score_job

    files = {name: _local_file(ref, name) for name, ref in shipped.items() if ref is not None}
    part = Path(out) / f"part-{uuid.uuid4().hex}.parquet"
    job = {**settings, "parts": "block", "batch_rows": 0, "out": str(part)}
    for key, file in (("golden", "golden.parquet"), ("corpus", "corpus.parquet")):
        if file in files:
            job[key] = str(files[file])
    config = str(files["config.toml"]) if "config.toml" in files else None
    frame = pl.from_arrow(block)
    assert isinstance(frame, pl.DataFrame)
    try:
        score_job(frame, None, None, job, config)
    except (PolarsRagError, Interrupted) as error:
        raise from_kind(error.kind, f"{_BLOCK_FAILED} {block.num_rows} rows: {error}") from error
    return pa.table({"part": [str(part)], "rows": [pq.read_metadata(part).num_rows]})


def _cache_dirs(settings: dict[str, Any]) -> list[str]:
    """``polars-rag cache`` flags for the cache folders the job's judge and embedder name (else
    the defaults of each machine)."""
    dirs: list[str] = []
    for section, target in (("judge", "--judge-dir"), ("embed", "--embed-dir")):
        cache = settings.get(section, {}).get("cache")
        if cache:
            dirs += [target, str(cache)]
    return dirs


def _finish_node(shipped: dict[str, Any], to: str | None, dirs: list[str]) -> str | None:
    """On one node, once the blocks are done: consistent copies of its judge and embedding
    caches into ``to`` (unless None), then its copies of the job's files removed. (``shipped``
    holds the object references: Ray would resolve a reference passed on its own into bytes.)"""
    keys = [ref.hex() for ref in shipped.values() if ref is not None]
    try:
        if to is None:
            return None
        _command(["cache", "export", to, *dirs], "cache export (on a node)")
        return to
    finally:
        _release_node_files(keys)


def _finish_nodes(shipped: dict[str, Any], out_dir: Path, dirs: list[str], merge: bool) -> str:
    """A task pinned to every live node removes its copies of the job's files and, with
    ``merge``, first copies its caches into ``out_dir/.caches``; the driver then merges those
    copies into this machine's caches and removes them. Returns what the merges added."""
    import ray  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from ray.util.scheduling_strategies import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
        NodeAffinitySchedulingStrategy,
    )

    copies = out_dir / ".caches"
    finish = ray.remote(num_cpus=0)(_finish_node)
    nodes = [node["NodeID"] for node in ray.nodes() if node["Alive"]]  # type: ignore[no-untyped-call,unused-ignore]
    merged: list[str] = []
    try:
        folders = ray.get([
            finish.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False)).remote(
                shipped, str(copies / node) if merge else None, dirs
            )
            for node in nodes
        ])
        for folder in folders:
            if folder is None or not any(Path(folder).rglob("*.sqlite3")):
                continue
            merged.append(_command(["cache", "merge", folder, *dirs], "cache merge"))
    finally:
        shutil.rmtree(copies, ignore_errors=True)
    return "".join(merged)


def _score_blocks(
    dataset: Any,
    shipped: dict[str, Any],
    settings: dict[str, Any],
    out_dir: Path,
    polars_threads: int,
    num_cpus: float,
    concurrency: int | None,
) -> list[dict[str, Any]]:
    """Every block of ``dataset`` scored by a task; each task's part path and row count."""
    try:
        written: list[dict[str, Any]] = dataset.map_batches(
            _score_block,  # type: ignore[arg-type,unused-ignore]
            fn_kwargs={"shipped": shipped, "settings": settings, "out": str(out_dir)},
            batch_format="pyarrow",
            batch_size=None,
            concurrency=concurrency,
            num_cpus=num_cpus,
            runtime_env={"env_vars": {"POLARS_MAX_THREADS": str(polars_threads)}},
        ).take_all()
    except Exception as error:
        failure = _block_failure(error)
        if failure is None:
            raise RuntimeError(f"polars_rag.ray.score: {error}") from error
        # The block's own error, of its kind (a missing file, a spent budget, ...).
        raise from_kind(failure.kind, f"polars_rag.ray.score: {failure}") from error
    return written


def _block_failure(error: BaseException) -> PolarsRagError | Interrupted | None:
    """The error a block's job raised, unwrapped from Ray's exceptions (``None`` when the
    task failed otherwise)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (PolarsRagError, Interrupted)) and str(current).startswith(_BLOCK_FAILED):
            return current
        current = getattr(current, "cause", None) or current.__cause__
    return None


def score(
    run: Any,
    *,
    out: PathLike,
    golden: PathLike | None = None,
    corpus: PathLike | None = None,
    config: PathLike | None = None,
    metrics: Sequence[str] | None = None,
    by: str | None = None,
    columns: Mapping[str, str] | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    judge: Any = None,
    embedder: Any = None,
    k: int | None = None,
    relevance_level: float | None = None,
    invalid_spans: str | None = None,
    unit: str | None = None,
    polars_threads: int = 1,
    num_cpus: float = 1,
    concurrency: int | None = None,
    merge_caches: bool = True,
) -> RayScoreReport:
    """Scores ``run`` on the connected Ray cluster as :func:`polars_rag.score` (and ``polars-rag
    score``) scores it on one machine; see the module's documentation for how.

    Parameters
    ----------
    run
        A ``ray.data.Dataset``, or a Parquet path, folder or glob (read with
        ``ray.data.read_parquet``).
    out
        The folder of the per-row scores (created; it must be empty): ``part-*.parquet``, one per
        block, and ``unanswered.parquet`` when golden questions have no answer in the run.
    golden, corpus, config
        The golden table, the corpus and a TOML file of the job's settings, as files shipped to
        the workers once. A corpus must be a Parquet file here (``file``, ``text``).
    metrics, by, columns, options, judge, embedder, k, relevance_level, invalid_spans, unit
        The job's settings, as :func:`polars_rag.score` takes them. A judge or embedder whose
        cache is left at its default uses each node's default cache.
    polars_threads
        Polars' thread count in each block's process (``POLARS_MAX_THREADS``).
    num_cpus, concurrency
        CPUs reserved per block's task, and at most this many tasks at once (default: Ray's
        choice).
    merge_caches
        After the blocks, copy every node's judge and embedding caches (the judge's and the
        embedder's ``cache`` folders when given, else each node's defaults) and merge them into
        this machine's, so a re-run here, or on nodes seeded from here, makes no call the cluster
        already made.

    Returns
    -------
    RayScoreReport
        The summary, the written parts and the number of rows the blocks scored.
    """
    import ray  # type: ignore[import-not-found,import-untyped,unused-ignore]

    from polars_rag._internal import score_job

    if not ray.is_initialized():
        raise RuntimeError("polars_rag.ray.score: connect to a Ray cluster first (ray.init(...))")
    if polars_threads < 1:
        raise ValueError(f"polars_rag.ray.score: polars_threads must be at least 1, got {polars_threads}")
    settings = _job_settings(
        "polars_rag.ray.score", metrics=metrics, by=by, config=config, judge=judge, embedder=embedder,
        options=options, columns=columns, k=k, relevance_level=relevance_level, invalid_spans=invalid_spans,
        unit=unit, portable=True,
    )
    out_dir = Path(out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(out_dir.iterdir()):
        raise FileExistsError(f"polars_rag.ray.score: {out_dir} is not empty (the parts of an earlier job?)")
    shipped = {
        "golden.parquet": ray.put(data) if (data := _file_bytes(golden, "golden table")) else None,
        "corpus.parquet": ray.put(data) if (data := _file_bytes(corpus, "corpus")) else None,
        "config.toml": ray.put(data) if (data := _file_bytes(config, "config")) else None,
    }
    dataset = run if isinstance(run, ray.data.Dataset) else ray.data.read_parquet(str(run))
    try:
        written = _score_blocks(dataset, shipped, settings, out_dir, polars_threads, num_cpus, concurrency)
    except BaseException:
        # Each node's copies of the job's files go whatever happened; the block's error is the
        # one to report.
        with contextlib.suppress(Exception):
            _finish_nodes(shipped, out_dir, [], merge=False)
        raise
    # Before the summary: the unanswered golden questions are judged here, from the merged cache.
    caches = _finish_nodes(shipped, out_dir, _cache_dirs(settings), merge_caches)
    parts = [Path(r["part"]) for r in written]
    rows = sum(int(r["rows"]) for r in written)
    if not parts:
        raise ValueError(f"polars_rag.ray.score: the run has no rows ({run!r})")

    # The run's columns for the summary: an empty table of its schema.
    with tempfile.TemporaryDirectory(prefix="polars-rag-ray-") as folder:
        import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]

        if isinstance(run, (str, os.PathLike)) and Path(run).is_file():
            schema_file = Path(run)  # only its columns are read
        else:
            schema_file = Path(folder) / "run-columns.parquet"
            pq.write_table(dataset.schema().base_schema.empty_table(), schema_file)
        unanswered = out_dir / "unanswered.parquet"
        job = {
            **settings,
            "run": str(schema_file),
            "out": str(unanswered),
            "parts": {"summarise": str(out_dir / "part-*.parquet")},
        }
        for key, path in (("golden", golden), ("corpus", corpus)):
            if path is not None:
                job[key] = os.fspath(path)
        try:
            report = score_job(None, None, None, job, None if config is None else os.fspath(config))
        except (PolarsRagError, Interrupted) as error:
            raise from_kind(error.kind, f"polars_rag.ray.score: the summary of the parts: {error}") from error
    if unanswered.exists():
        parts.append(unanswered)
    return RayScoreReport(summary=report["text"], parts=parts, rows=rows, caches=caches)
