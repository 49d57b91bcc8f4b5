"""Score a run on a Ray cluster: the ``polars-rag score`` job, block by block on many machines.

Install with ``pip install polars-rag[ray]`` (Ray Data 2.60.0 with pyarrow). The job is the
command line's: the same metric names, configuration file, golden table and corpus, and the
same per-row scores and summary as one ``polars-rag score`` call over the whole run.

How it runs:

* the driver puts the golden table, the corpus and the configuration into Ray's object store
  once; a node copies each to its temporary folder
  (``polars-rag-ray-job-files/<node id>/<object id>/``, shared by the node's worker processes) the first time one
  of its tasks needs it, and removes the copies when the job ends, failed or not;
* Ray Data reads the run (a Dataset, or Parquet files) and hands each worker blocks of rows;
  the worker scores a block with the library's ``polars-rag score --block``, run in the
  worker's own process through the package (no executable, no subprocess; Polars limited to
  ``polars_threads`` threads through the task's ``runtime_env``, so workers do not
  oversubscribe cores) and writes its scores as one Parquet file ``part-*.parquet`` of ``out``,
  with the metrics' signatures in its metadata, atomically, and beside it the block's
  sufficient statistics for the summary (``part-*.parquet.summary.json``: each value's sum and
  count, the segments', the corpus-level metrics' summed per-row statistics);
* every node's judge and embedding caches are copied (``polars-rag cache export``, a task
  pinned to each node) and merged into the driver's (``polars-rag cache merge``): replies and
  vectors are keyed by everything that determines them, so caches merge without conflict;
* the driver then runs ``polars-rag score --summarise-parts``: the golden questions no block
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, Union

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


def _cli_flags(
    metrics: Sequence[str] | None,
    id: str,
    cli_args: Sequence[str],
) -> list[str]:
    flags = ["--id-col", id]
    if metrics:
        flags += ["--metrics", ",".join(metrics)]
    flags += list(cli_args)
    for flag in ("--run", "--out", "--golden", "--corpus", "--config", "--block", "--summarise-parts"):
        if flag in cli_args:
            raise ValueError(f"polars_rag.ray.score: {flag} is set by score(); pass it as an argument, not in cli_args")
    return flags


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


def _score_block(block: Any, shipped: dict[str, Any], flags: list[str], out: str) -> Any:
    """Scores one block of the run with ``polars-rag score --block`` into a part file of
    ``out``; returns the part's path and row count."""
    import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]

    files = {name: _local_file(ref, name) for name, ref in shipped.items() if ref is not None}
    name = f"part-{uuid.uuid4().hex}"
    part = Path(out) / f"{name}.parquet"
    with tempfile.TemporaryDirectory(prefix="polars-rag-block-") as folder:
        run = Path(folder) / "run.parquet"
        pq.write_table(block, run)
        command = ["score", "--block", "--quiet", "--batch-rows", "0", "--run", str(run), "--out", str(part)]
        for flag, file in (("--golden", "golden.parquet"), ("--corpus", "corpus.parquet"), ("--config", "config.toml")):
            if file in files:
                command += [flag, str(files[file])]
        _command(command + flags, f"score --block (a block of {block.num_rows} rows)")
    return pa.table({"part": [str(part)], "rows": [pq.read_metadata(part).num_rows]})


def _cache_dirs(cli_args: Sequence[str]) -> list[str]:
    """``polars-rag cache`` flags for the cache folders the job's flags name (else the
    defaults of each machine)."""
    args = list(cli_args)
    dirs: list[str] = []
    for flag, target in (("--judge-cache", "--judge-dir"), ("--embed-cache", "--embed-dir")):
        for i, arg in enumerate(args):
            if arg == flag and i + 1 < len(args):
                dirs += [target, args[i + 1]]
            elif arg.startswith(flag + "="):
                dirs += [target, arg.split("=", 1)[1]]
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
    flags: list[str],
    out_dir: Path,
    polars_threads: int,
    num_cpus: float,
    concurrency: int | None,
) -> list[dict[str, Any]]:
    """Every block of ``dataset`` scored by a task; each task's part path and row count."""
    try:
        written: list[dict[str, Any]] = dataset.map_batches(
            _score_block,  # type: ignore[arg-type,unused-ignore]
            fn_kwargs={"shipped": shipped, "flags": flags, "out": str(out_dir)},
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
        if isinstance(current, (PolarsRagError, Interrupted)) and str(current).startswith("polars-rag score --block"):
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
    id: str = "query_id",
    polars_threads: int = 1,
    num_cpus: float = 1,
    concurrency: int | None = None,
    cli_args: Sequence[str] = (),
    merge_caches: bool = True,
) -> RayScoreReport:
    """Scores ``run`` on the connected Ray cluster as ``polars-rag score`` scores it on one
    machine; see the module's documentation for how.

    Parameters
    ----------
    run
        A ``ray.data.Dataset``, or a Parquet path, folder or glob (read with
        ``ray.data.read_parquet``).
    out
        The folder of the per-row scores (created; it must be empty): ``part-*.parquet``, one per
        block, and ``unanswered.parquet`` when golden questions have no answer in the run.
    golden, corpus, config, metrics, id
        As ``polars-rag score``'s ``--golden``, ``--corpus``, ``--config``, ``--metrics`` and
        ``--id-col``. ``golden``, ``corpus`` and ``config`` are files, shipped to the workers once.
        A corpus must be a Parquet file here (``file``, ``text``).
    polars_threads
        Polars' thread count in each block's process (``POLARS_MAX_THREADS``).
    num_cpus, concurrency
        CPUs reserved per block's task, and at most this many tasks at once (default: Ray's
        choice).
    cli_args
        Further ``polars-rag score`` flags (column names, ``--invalid-spans``, metric options).
    merge_caches
        After the blocks, copy every node's judge and embedding caches (the folders of
        ``--judge-cache`` / ``--embed-cache`` in ``cli_args``, else each node's defaults) and
        merge them into this machine's, so a re-run here, or on nodes seeded from here, makes no
        call the cluster already made.

    Returns
    -------
    RayScoreReport
        The summary, the written parts and the number of rows the blocks scored.
    """
    import ray  # type: ignore[import-not-found,import-untyped,unused-ignore]

    if not ray.is_initialized():
        raise RuntimeError("polars_rag.ray.score: connect to a Ray cluster first (ray.init(...))")
    if polars_threads < 1:
        raise ValueError(f"polars_rag.ray.score: polars_threads must be at least 1, got {polars_threads}")
    out_dir = Path(out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(out_dir.iterdir()):
        raise FileExistsError(f"polars_rag.ray.score: {out_dir} is not empty (the parts of an earlier job?)")
    flags = _cli_flags(metrics, id, cli_args)
    shipped = {
        "golden.parquet": ray.put(data) if (data := _file_bytes(golden, "golden table")) else None,
        "corpus.parquet": ray.put(data) if (data := _file_bytes(corpus, "corpus")) else None,
        "config.toml": ray.put(data) if (data := _file_bytes(config, "config")) else None,
    }
    dataset = run if isinstance(run, ray.data.Dataset) else ray.data.read_parquet(str(run))
    try:
        written = _score_blocks(dataset, shipped, flags, out_dir, polars_threads, num_cpus, concurrency)
    except BaseException:
        # Each node's copies of the job's files go whatever happened; the block's error is the
        # one to report.
        with contextlib.suppress(Exception):
            _finish_nodes(shipped, out_dir, [], merge=False)
        raise
    # Before the summary: the unanswered golden questions are judged here, from the merged cache.
    caches = _finish_nodes(shipped, out_dir, _cache_dirs(cli_args), merge_caches)
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
        command = ["score", "--quiet", "--run", str(schema_file), "--out", str(unanswered)]
        command += ["--summarise-parts", str(out_dir / "part-*.parquet")]
        for flag, path in (("--golden", golden), ("--corpus", corpus), ("--config", config)):
            if path is not None:
                command += [flag, str(path)]
        summary = _command(command + flags, "score --summarise-parts")
    if unanswered.exists():
        parts.append(unanswered)
    return RayScoreReport(summary=summary, parts=parts, rows=rows, caches=caches)
