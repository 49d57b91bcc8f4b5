"""The scoring job from the installed package: the `polars-rag` command `pip install` puts on the
PATH (the library's own command line, run in process) and `pr.score`, against each other and
against the cargo-built binary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars_rag as pr
import pytest
from polars.testing import assert_frame_equal

import polars as pl

DEMO = Path(pr.__file__).parent / "demo"
#: The `polars-rag` command installed beside this Python.
COMMAND = Path(sys.executable).parent / "polars-rag"


def metric_lines(summary: str) -> list[str]:
    """The summary's metric and aggregate lines (without the lines that name the input files,
    which differ between the package's demo folder and the source tree's)."""
    lines = summary.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("metric "))
    return [line for line in lines[start:] if line and not line.startswith(("note:", "golden ", "run "))]


def command(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(COMMAND), *args], capture_output=True, text=True, cwd=cwd, check=False)


def test_the_installed_command_runs_the_demo_from_any_folder(tmp_path: Path) -> None:
    assert COMMAND.is_file(), f"pip install did not put the polars-rag command at {COMMAND}"
    done = command(cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "run_b_vs_run_a.html" in done.stdout
    for name in ("run_a.scores.parquet", "run_b.scores.parquet", "run_b_vs_run_a.html"):
        assert (tmp_path / "demo-output" / name).is_file(), name
    binary = os.environ.get("POLARS_RAG_BIN")
    if binary is None:
        pytest.skip("POLARS_RAG_BIN is not set: the cargo-built binary's demo is not compared (scripts/test.sh sets it)")
    built = tmp_path / "built"
    built.mkdir()
    reference = subprocess.run([binary], capture_output=True, text=True, cwd=built, check=True)
    assert metric_lines(done.stdout) == metric_lines(reference.stdout)
    for run in ("run_a", "run_b"):
        assert_frame_equal(
            pl.read_parquet(tmp_path / "demo-output" / f"{run}.scores.parquet"),
            pl.read_parquet(built / "demo-output" / f"{run}.scores.parquet"),
        )


def test_the_installed_command_has_the_binarys_exit_codes(tmp_path: Path) -> None:
    usage = command("score", "--no-such-flag")
    assert usage.returncode == 2 and "unexpected argument '--no-such-flag'" in usage.stderr
    missing = command("score", "--run", str(tmp_path / "absent.parquet"))
    assert missing.returncode == 2 and "run table not found" in missing.stderr
    listing = command("metrics")
    assert listing.returncode == 0 and listing.stdout.split()[0] == "quoted_spans"


def test_pr_score_equals_the_command_on_files_frames_and_lazy_frames(tmp_path: Path) -> None:
    run, golden, corpus = DEMO / "run_a.parquet", DEMO / "golden.parquet", DEMO / "corpus.parquet"
    out = tmp_path / "cli.parquet"
    done = command("score", "--quiet", "--run", str(run), "--golden", str(golden), "--corpus", str(corpus),
                   "--by", "segment", "--out", str(out))
    assert done.returncode == 0, done.stderr
    expected = pl.read_parquet(out)

    from_files = pr.score(run, golden, corpus, by="segment")
    assert_frame_equal(from_files.scores, expected)
    assert metric_lines(from_files.text) == metric_lines(done.stdout)
    assert str(from_files) == from_files.text
    assert from_files.notes == [line.removeprefix("note: ") for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert from_files.out is None
    assert from_files.signatures["bleu"].startswith("nrefs:")  # sacrebleu's own form
    assert set(from_files.signatures) == {
        k.removeprefix("polars-rag:signature:") for k in pl.read_parquet_metadata(out) if k.startswith("polars-rag:signature:")
    }

    streamed = pr.score(pl.scan_parquet(run), golden, corpus, by="segment", batch_rows=5, out=tmp_path / "lazy.parquet")
    assert isinstance(streamed.scores, pl.LazyFrame)  # a lazy run with an output stays lazy
    assert_frame_equal(streamed.scores.collect().sort("query_id"), expected.sort("query_id"))
    assert any(note.startswith("streamed in batches of 5 rows") for note in streamed.notes)
    frames = pr.score(pl.read_parquet(run), pl.read_parquet(golden), pl.read_parquet(corpus), by="segment",
                      out=tmp_path / "frames.parquet")
    assert_frame_equal(frames.scores, expected)
    assert frames.out == tmp_path / "frames.parquet" and frames.out.is_file()
    lazy = pr.score(pl.scan_parquet(run), pl.scan_parquet(golden), corpus, by="segment")
    assert_frame_equal(lazy.scores, expected)
    assert metric_lines(lazy.text) == metric_lines(done.stdout)


def test_pr_score_summary_table_aggregates_and_usage_are_the_scores_numbers() -> None:
    result = pr.score(DEMO / "run_a.parquet", DEMO / "golden.parquet", DEMO / "corpus.parquet", by="segment")
    scores, summary = result.scores, result.summary
    assert summary.columns == ["segment", "value", "rows", "scored", "mean"]
    overall = summary.filter(pl.col("segment").is_null() & pl.col("scored").is_not_null())
    # Each whole-table row is the mean of its column over the scored rows, computed here by Polars.
    for name in ("exact_match", "mrr", "chrf"):
        row = overall.filter(pl.col("value") == name).row(0, named=True)
        assert row["rows"] == scores.height
        assert row["scored"] == scores[name].count()
        assert row["mean"] == pytest.approx(scores[name].mean(), rel=1e-12)
    # Per segment: the same means within each segment.
    by_segment = scores.group_by("segment").agg(pl.len().alias("n"), pl.col("mrr").mean().alias("m"))
    for segment, n, mean in by_segment.iter_rows():
        row = summary.filter((pl.col("segment") == segment) & (pl.col("value") == "mrr")).row(0, named=True)
        assert (row["rows"], row["mean"]) == (n, pytest.approx(mean, rel=1e-12))
    # Corpus-level metrics: the value the summary's text prints, to its four decimals.
    assert result.aggregates, "the demo has corpus-level metrics"
    for metric, value in result.aggregates.items():
        printed = next(line for line in result.text.splitlines() if line.startswith(metric + " "))
        assert f"{value:.4f}" in printed.split()
        assert summary.filter(pl.col("value") == metric)["scored"].null_count() == 1
    assert result.usage == []  # no judge, no embedding model
    # A corpus-level value combines the per-row statistics of the scores table: exactly the
    # value of the metric over the joined table's texts.
    golden, run = pl.read_parquet(DEMO / "golden.parquet"), pl.read_parquet(DEMO / "run_a.parquet")
    joined = golden.join(run, on="query_id", how="left")
    direct = joined.select(pr.corpus_bleu("answer", "reference_answers"), pr.corpus_chrf("answer", "reference_answers"))
    assert (result.aggregates["corpus_bleu"], result.aggregates["corpus_chrf"]) == direct.row(0)


def test_pr_score_options_are_the_config_files_sections(tmp_path: Path) -> None:
    run, golden = DEMO / "run_a.parquet", DEMO / "golden.parquet"
    config = tmp_path / "job.toml"
    config.write_text("[rouge]\nuse_stemmer = true\n", encoding="utf-8")
    from_file = pr.score(run, golden, metrics=["rouge"], config=config)
    from_options = pr.score(run, golden, metrics=["rouge"], options={"rouge": {"use_stemmer": True}})
    assert from_options.signatures == from_file.signatures
    assert from_options.signatures != pr.score(run, golden, metrics=["rouge"]).signatures
    assert_frame_equal(from_options.scores, from_file.scores)
    # A section or key name cannot smuggle settings in: it is one quoted TOML key.
    with pytest.raises(ValueError, match="score: .*unknown"):
        pr.score(run, golden, options={'rouge"]\n[judge': {"model": "x"}})
    with pytest.raises(TypeError, match="options"):
        pr.score(run, golden, options={"rouge": True})  # type: ignore[dict-item]
    # A float whose repr is not TOML (NumPy 2's floats) is written as a float.
    class Float(float):
        def __repr__(self) -> str:
            return f"Float({float(self)})"

    hybrid = pr.score(run, golden, metrics=["hybrid_log_rank"], options={"hybrid_log_rank": {"alpha": Float(0.25)}})
    assert "alpha:0.25" in hybrid.signatures["hybrid_log_rank"], hybrid.signatures
    # A nested mapping is a sub-table: a metric's own judge.
    from fake_judge import FakeJudge

    server = FakeJudge()
    try:
        own = {"answer_match": {"judge": {"base_url": server.base_url, "model": "own-judge", "cache": ""}}}
        judged = pr.score(run, golden, metrics=["answer_match"], options=own, columns={"question": "query"})
        with pytest.raises(ValueError, match="not both"):
            pr.score(run, golden, options={"judge": {"model": "x"}}, judge=pr.Judge(base_url=server.base_url, model="m"))
    finally:
        server.close()
    assert "|model:own-judge|" in judged.signatures["answer_match"], judged.signatures


def test_pr_score_options_and_errors(tmp_path: Path) -> None:
    run, golden = DEMO / "run_a.parquet", DEMO / "golden.parquet"
    chosen = pr.score(run, golden, metrics=["rouge", "mrr"], k=3)
    metric_columns = [c for c in chosen.scores.columns if c in pr.metric_ids()]
    assert sorted(metric_columns) == ["mrr", "rouge"]
    assert "k:3" in chosen.signatures["mrr"]
    with pytest.raises(ValueError, match="score: .*no_such_metric"):
        pr.score(run, golden, metrics=["no_such_metric"])
    with pytest.raises(pr.exceptions.NotFoundError, match="score: run table not found"):
        pr.score(tmp_path / "absent.parquet")
    with pytest.raises(TypeError, match="score: metrics must be a list"):
        pr.score(run, metrics="rouge")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="score: run must be a DataFrame"):
        pr.score(7)  # type: ignore[arg-type]
    judge = pr.Judge(base_url="http://127.0.0.1:9/v1", model="m", cache=None)
    with pytest.raises(ValueError, match="not both"):
        pr.score(run, judge=judge, config=tmp_path / "job.toml")


def test_pr_score_judges_with_the_given_judge_and_each_call_is_its_own_run() -> None:
    from fake_judge import FakeJudge

    server = FakeJudge()
    try:
        # No cache, and a budget that one run (24 questions) fits but two would not: each call is
        # one run with its own budget, as each `polars-rag score` process is.
        judge = pr.Judge(base_url=server.base_url, model="fake", cache=None, max_calls=30)
        for _ in range(2):
            result = pr.score(DEMO / "run_a.parquet", DEMO / "golden.parquet", metrics=["answer_match"],
                              judge=judge, columns={"question": "query"})
            verdicts = result.scores["answer_match"].struct.field("judge_error")
            assert verdicts.null_count() == result.scores.height
            assert "|model:fake|" in result.signatures["answer_match"], result.signatures["answer_match"]
        assert server.requests == 48
    finally:
        server.close()


def test_pr_score_equals_the_command_on_a_generated_run_of_100k_rows(tmp_path: Path) -> None:
    import random

    rows = 100_000
    rng = random.Random(11)
    words = ["the", "a", "river", "bridge", "city", "council", "budget", "school", "water", "energy", "market", "report", "people", "plan"]
    sentence = lambda: " ".join(rng.choices(words, k=rng.randint(1, 15)))
    items = lambda most: [f"d{rng.randrange(40)}" for _ in range(rng.randint(0, most))]
    ids = [f"q{i:06d}" for i in range(rows)]
    run = pl.DataFrame({
        "query_id": ids,
        "answer": [sentence() for _ in range(rows)],
        "retrieved": [items(7) for _ in range(rows)],
    })
    golden = pl.DataFrame({
        "query_id": ids[:-7] + ["extra1", "extra2"],  # 7 unanswered ids out, 2 unanswered golden rows in
        "reference": [sentence() for _ in range(rows - 5)],
        "relevant_ids": [items(3) for _ in range(rows - 5)],
    })
    run_path, golden_path, out = tmp_path / "run.parquet", tmp_path / "golden.parquet", tmp_path / "cli.parquet"
    run.write_parquet(run_path)
    golden.write_parquet(golden_path)
    metrics = ["exact_match", "rouge", "bleu", "corpus_bleu", "chrf", "mrr", "ndcg_at_k"]
    done = command("score", "--quiet", "--run", str(run_path), "--golden", str(golden_path),
                   "--metrics", ",".join(metrics), "--out", str(out))
    assert done.returncode == 0, done.stderr
    expected = pl.read_parquet(out)
    assert expected.height == rows - 5

    result = pr.score(run.lazy(), golden, metrics=metrics)
    assert_frame_equal(result.scores, expected)
    assert metric_lines(result.text) == metric_lines(done.stdout)
    assert any("not in the golden table" in note for note in result.notes)
    binary = os.environ.get("POLARS_RAG_BIN")
    if binary is None:
        pytest.skip("POLARS_RAG_BIN is not set: the cargo-built binary is not compared (scripts/test.sh sets it)")
    built = tmp_path / "built.parquet"
    reference = subprocess.run([binary, "score", "--quiet", "--run", str(run_path), "--golden", str(golden_path),
                                "--metrics", ",".join(metrics), "--out", str(built)], capture_output=True, text=True, check=False)
    assert reference.returncode == 0, reference.stderr
    assert_frame_equal(pl.read_parquet(built), expected)
    assert metric_lines(reference.stdout) == metric_lines(done.stdout)


def test_pr_score_on_frames_writes_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Frames cross to the job as Arrow and the scores come back in memory: no scratch file, no
    output file, in the temporary folder or the working directory."""
    import tempfile

    rows = 100_000
    ids = [f"q{i:06d}" for i in range(rows)]
    answers = [f"the river {i % 97} bridge" for i in range(rows)]
    run = pl.DataFrame({"query_id": ids, "answer": answers, "retrieved": [[f"d{i % 40}", f"d{i % 7}"] for i in range(rows)]})
    golden = pl.DataFrame({"query_id": ids, "reference": [f"the river {i % 89} bridge" for i in range(rows)],
                           "relevant_ids": [[f"d{i % 40}"] for i in range(rows)]})
    scratch, work = tmp_path / "scratch", tmp_path / "work"
    scratch.mkdir()
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.chdir(work)
    metrics = ["exact_match", "rouge", "mrr"]
    result = pr.score(run, golden, metrics=metrics)
    assert list(scratch.iterdir()) == [] and list(work.iterdir()) == [], "pr.score wrote a file"
    assert result.out is None and isinstance(result.scores, pl.DataFrame)
    assert result.scores.height == rows
    # The same numbers as the command on the same tables written to Parquet.
    run.write_parquet(tmp_path / "run.parquet")
    golden.write_parquet(tmp_path / "golden.parquet")
    done = command("score", "--quiet", "--run", str(tmp_path / "run.parquet"), "--golden", str(tmp_path / "golden.parquet"),
                   "--metrics", ",".join(metrics), "--out", str(tmp_path / "cli.parquet"))
    assert done.returncode == 0, done.stderr
    assert_frame_equal(result.scores, pl.read_parquet(tmp_path / "cli.parquet"))
    assert metric_lines(result.text) == metric_lines(done.stdout)


def test_columns_are_a_keyword_of_pr_score() -> None:
    run = pl.DataFrame({"qid": ["q1", "q2"], "reply": ["Paris", "Lyon"], "gold": ["Paris", "Paris"]})
    result = pr.score(run, metrics=["exact_match"], columns={"id": "qid", "answer": "reply", "references": "gold"})
    assert result.scores["exact_match"].to_list() == [1.0, 0.0]
    with pytest.raises(pr.exceptions.InvalidInputError, match="identifier"):
        pr.score(run, metrics=["exact_match"], columns={"identifier": "qid"})
    with pytest.raises(pr.exceptions.InvalidInputError, match="rouge.use_stemmer: a object cannot be a setting"):
        pr.score(run, metrics=["exact_match"], options={"rouge": {"use_stemmer": object()}})
    with pytest.raises(pr.exceptions.InvalidInputError, match=r"None is not a value"):
        pr.score(run, metrics=["exact_match"], options={"citation_indicators": {"indicators": ["x", None]}})


def test_pr_score_audits_raw_answers_claim_by_claim() -> None:
    from fake_judge import FakeJudge

    server = FakeJudge()
    try:
        judge = pr.Judge(base_url=server.base_url, model="fake", cache=None)
        run = pl.DataFrame({
            "query_id": ["q1", "q2"],
            "answer": ["Paris is the capital of France. The moon is cheese", "Berlin is big [2]"],
            "sources": [["Paris is the capital of France"], ["Berlin is big", "Munich is south"]],
        })
        result = pr.score(run, metrics=["citation_support"], judge=judge)
    finally:
        server.close()
    claims = result.claims
    assert claims is not None
    assert claims["query_id"].to_list() == ["q1", "q1", "q2"]
    assert claims["claim"].to_list() == ["Paris is the capital of France", "The moon is cheese", "Berlin is big [2]"]
    assert claims["cited_by"].to_list() == ["sources", "sources", "marker"]
    assert claims["cited_span"].to_list()[2] == "Munich is south"
    assert claims["citation_support"].struct.field("fully_supported").to_list() == [1.0, 0.0, 0.0]
    audit = result.scores["claim_audit"].struct.unnest()
    assert audit["claims"].to_list() == [2, 1]
    assert audit["citation_precision"].to_list() == [0.5, 0.0]
    assert result.aggregates["citation_precision"] == pytest.approx(1 / 3)
    assert "claim_audit" in result.signatures


def test_the_installed_command_judges_the_judge_on_the_set_it_ships(tmp_path: Path) -> None:
    from fake_judge import FakeJudge

    server = FakeJudge()
    try:
        done = command("judge-eval", "--judge-base-url", server.base_url, "--judge-model", "fake", "--no-judge-cache",
                       cwd=tmp_path)
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    labelled = pl.read_parquet(Path(pr.__file__).parent / "judge_eval" / "citation_support.parquet")
    assert f"({labelled.height} items) judged by" in done.stdout, done.stdout
    assert f"items judged {labelled.height}, failed 0" in done.stdout, done.stdout
