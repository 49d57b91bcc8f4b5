"""Errors by kind on every Python face: ``pr.score`` (the job), ``pr.compare`` and the other table
functions, the judge's helpers, and the command line run in process. Each kind raises its class
of ``polars_rag.exceptions`` (a subclass of the built-in class a caller would catch); the
command's exit statuses are checked in Rust (tests/it/error_kinds.rs) and here for the package's
``polars-rag``. An expression's error is raised by Polars itself (``ComputeError``), its message
naming the metric."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import polars_rag as pr
import pytest
from fake_judge import FakeJudge
from polars_rag.exceptions import (
    BudgetSpentError,
    EngineError,
    IntegrityError,
    InvalidInputError,
    InvalidOptionsError,
    NotFoundError,
    PolarsRagError,
    StorageError,
    UnknownMetricError,
)

DEMO = Path(pr.__file__).parent / "demo"
SPAN = "Paris is the capital of France."


def claims_run() -> pl.DataFrame:
    return pl.DataFrame({
        "query_id": ["q1", "q2", "q3"],
        "claim": ["Paris is the capital", "Berlin", "Rome"],
        "cited_span": [SPAN, SPAN, SPAN],
    })


def test_a_missing_table_is_not_found_on_every_face(tmp_path: Path) -> None:
    missing = tmp_path / "nope.parquet"
    with pytest.raises(NotFoundError, match="golden table not found") as caught:
        pr.score(DEMO / "run_a.parquet", missing)
    assert isinstance(caught.value, FileNotFoundError) and caught.value.kind == "not_found"
    # A table function that reads a file (compare and summary take frames).
    scores = pl.DataFrame({"query_id": ["q1"], "answer_match": [1.0]})
    with pytest.raises(NotFoundError, match="calibrate: labels table not found"):
        pr.calibrate(scores, missing)
    # A frame expected, a path given: a TypeError, not an AttributeError.
    with pytest.raises(TypeError, match="compare: expected a polars DataFrame or LazyFrame, got PosixPath"):
        pr.compare(missing, scores)  # type: ignore[arg-type]


def test_invalid_input_and_unknown_metrics_are_value_errors() -> None:
    run = pl.DataFrame({"query_id": ["q1"], "answer": [7], "reference": ["7"]})
    with pytest.raises(InvalidInputError, match="answer") as caught:
        pr.score(run, metrics=["exact_match"])
    assert isinstance(caught.value, ValueError) and caught.value.kind == "invalid_input"
    with pytest.raises(UnknownMetricError, match="no_such_metric") as unknown:
        pr.score(run, metrics=["no_such_metric"])
    assert isinstance(unknown.value, InvalidInputError)
    # A table function: a key column that is not there.
    scores = pl.DataFrame({"query_id": ["q1", "q2"], "m": [0.1, 0.2]})
    with pytest.raises(InvalidInputError, match="nope"):
        pr.compare(scores, scores, id="nope")


def test_a_write_that_fails_is_a_storage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    run = pl.DataFrame({"query_id": ["q1"], "answer": ["a"], "reference": ["a"]})
    with pytest.raises(StorageError, match="cannot") as caught:
        pr.score(run, metrics=["exact_match"], out=blocker / "scores.parquet")
    assert isinstance(caught.value, OSError) and not isinstance(caught.value, FileNotFoundError)


def test_parts_of_different_jobs_are_an_integrity_error(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    # A job scored in parts (as polars_rag.ray does): the `parts` setting of the job's config.
    block = tmp_path / "block.toml"
    block.write_text('parts = "block"\n')
    for i, metric in enumerate(["exact_match", "bleu"]):
        pr.score(DEMO / "run_a.parquet", DEMO / "golden.parquet", metrics=[metric],
                 out=parts / f"part-{i}.parquet", config=block)
    summarise = tmp_path / "summarise.toml"
    summarise.write_text(f"parts = {{ summarise = {json.dumps(str(parts / 'part-*.parquet'))} }}\n")
    with pytest.raises(IntegrityError, match="different metrics") as caught:
        pr.score(DEMO / "run_a.parquet", DEMO / "golden.parquet", out=tmp_path / "whole.parquet",
                 config=summarise)
    assert isinstance(caught.value, ValueError)


def test_engine_errors_and_a_spent_budget(tmp_path: Path) -> None:
    server = FakeJudge()
    try:
        cache_file = tmp_path / "cache-is-a-file"
        cache_file.write_text("x")
        judge = pr.Judge(base_url=server.base_url, model="fake", cache=cache_file)
        with pytest.raises(EngineError, match="cache") as caught:
            pr.score(claims_run(), metrics=["citation_support"], judge=judge)
        assert isinstance(caught.value, RuntimeError) and caught.value.kind == "engine"
        # The same failure in an expression: Polars raises it, the message names the metric.
        with pytest.raises(pl.exceptions.ComputeError, match="citation_support: judge cache"):
            claims_run().select(pr.citation_support("claim", "cited_span", judge=judge))

        judge = pr.Judge(base_url=server.base_url, model="fake", cache=tmp_path / "cache", max_calls=1,
                         max_concurrency=1)
        with pytest.raises(BudgetSpentError, match="max_calls = 1") as spent:
            pr.score(claims_run(), metrics=["citation_support"], judge=judge)
        assert isinstance(spent.value, EngineError) and spent.value.kind == "budget_spent"
        assert server.requests == 1
    finally:
        server.close()


def test_invalid_options_on_every_face(tmp_path: Path) -> None:
    """A metric option the metric does not take, or a value it does not accept: the options
    kind on pr.score (a config section or options=), pr.compare (a family of no compared metric),
    the expression face (Polars' error naming the metric, or a TypeError for an unknown keyword)
    and the command (status 2)."""
    run = pl.DataFrame({"query_id": ["q1"], "answer": ["a"], "reference": ["a"]})
    with pytest.raises(InvalidOptionsError, match="nope") as caught:
        pr.score(run, metrics=["rouge"], options={"rouge": {"nope": 1}})
    assert isinstance(caught.value, ValueError) and caught.value.kind == "invalid_options"
    config = tmp_path / "job.toml"
    config.write_text("[rouge]\ntokenizer = 'nope'\n")
    with pytest.raises(InvalidOptionsError, match="tokenizer"):
        pr.score(run, metrics=["rouge"], config=config)
    scores = pl.DataFrame({"query_id": ["q1", "q2"], "bleu": [0.1, 0.2]})
    with pytest.raises(InvalidOptionsError, match="no metric 'no_such_metric'"):
        pr.compare(scores, scores, family=["no_such_metric"])
    with pytest.raises(pl.exceptions.PolarsError, match="rouge"):
        run.select(pr.rouge("answer", "reference", tokenizer="nope"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rouge: unexpected keyword argument"):
        run.select(pr.rouge("answer", "reference", stemmer=True))  # type: ignore[call-arg]
    command = Path(sys.executable).parent / "polars-rag"
    run.write_parquet(tmp_path / "run.parquet")
    refused = subprocess.run(
        [str(command), "score", "--run", str(tmp_path / "run.parquet"), "--metrics", "rouge",
         "--set", "rouge.tokenizer=nope", "--out", str(tmp_path / "s.parquet")],
        capture_output=True, text=True, check=False,
    )
    assert refused.returncode == 2, refused.stderr
    assert "error: " in refused.stderr and "tokenizer" in refused.stderr


def test_compare_settings_and_pairs_are_invalid_input() -> None:
    """pr.compare's own settings out of range and a pair of runs it cannot compare (an item in
    two clusters): invalid input, each a ValueError naming compare and the setting or item."""
    baseline = pl.DataFrame({"query_id": ["q1", "q2"], "bleu": [0.1, 0.2], "c": ["x", "y"]})
    candidate = pl.DataFrame({"query_id": ["q1", "q2"], "bleu": [0.2, 0.3], "c": ["x", "x"]})
    for settings, message in (
        ({"confidence": 2.0}, "confidence must be in"),
        ({"adjust": "nope"}, "adjust must be"),
        ({"alternative": "sideways"}, "alternative must be"),
        ({"resamples": -1}, "resamples must be between"),
        ({"cluster": "c"}, "item q2 is in cluster 'y' in the baseline"),
    ):
        with pytest.raises(InvalidInputError, match=message) as caught:
            pr.compare(baseline, candidate, **settings)
        assert caught.value.kind == "invalid_input" and str(caught.value).startswith("compare: ")


def test_an_expressions_error_is_polars_own_naming_the_metric() -> None:
    df = pl.DataFrame({"answer": [7], "reference": ["7"]})
    with pytest.raises(pl.exceptions.ComputeError, match="exact_match"):
        df.select(pr.exact_match("answer", "reference"))


def test_every_class_is_a_polars_rag_error_but_the_interrupt() -> None:
    from polars_rag import exceptions

    for name in exceptions.__all__:
        cls = getattr(exceptions, name)
        if isinstance(cls, type) and name != "Interrupted":
            assert issubclass(cls, PolarsRagError), name
    assert issubclass(exceptions.Interrupted, KeyboardInterrupt)
    assert not issubclass(exceptions.Interrupted, Exception)


def test_the_packages_command_exits_with_the_kinds_status(tmp_path: Path) -> None:
    command = Path(sys.executable).parent / "polars-rag"
    missing = subprocess.run([str(command), "summary", str(tmp_path / "nope.parquet")],
                             capture_output=True, text=True, check=False)
    assert missing.returncode == 2, missing.stderr
    assert "error: " in missing.stderr and "not found" in missing.stderr
    server = FakeJudge()
    try:
        run = tmp_path / "claims.parquet"
        claims_run().write_parquet(run)
        spent = subprocess.run(
            [str(command), "score", "--run", str(run), "--metrics", "citation_support", "--out",
             str(tmp_path / "s.parquet"), "--judge-base-url", server.base_url, "--judge-model", "fake",
             "--judge-cache", str(tmp_path / "cache"), "--judge-max-calls", "1", "--judge-max-concurrency", "1"],
            capture_output=True, text=True, check=False,
        )
        assert spent.returncode == 5, spent.stderr
        assert "budget is spent" in spent.stderr
    finally:
        server.close()


CTRL_C_SCORE_SCRIPT = """
import sys, polars as pl, polars_rag as pr
sys.path.insert(0, {tests!r})
from fake_judge import FakeJudge
from polars_rag.exceptions import Interrupted
server = FakeJudge()
judge = pr.Judge(base_url=server.base_url, model="fake", cache=None, max_retry_wait=100)
run = pl.DataFrame({{"query_id": ["q1"], "claim": ["x #wait-50"], "cited_span": ["x"]}})
print("judging", flush=True)
try:
    pr.score(run, metrics=["citation_support"], judge=judge)
    print("finished without interruption", flush=True)
except Interrupted as error:
    print("interrupted:", type(error).__name__, error.kind, str(error).splitlines()[0], flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
def test_ctrl_c_during_pr_score_raises_interrupted() -> None:
    import signal
    import time

    script = CTRL_C_SCORE_SCRIPT.format(tests=str(Path(__file__).parent))
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "judging"
        time.sleep(1.5)  # the server has asked for 50 s and the judge is waiting
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        stopped = child.stdout.readline()
        assert time.monotonic() - started < 10
        assert stopped.startswith("interrupted: Interrupted interrupted score:"), stopped
        assert "interrupted (Ctrl-C)" in stopped, stopped
        child.communicate(timeout=20)
    finally:
        child.kill()
