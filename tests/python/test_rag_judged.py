"""Ragas' judged RAG metrics from Python against a local chat-completions server (and its
/embeddings endpoint): scores from the fake judge's fixed rules, the statements and verdicts
beside them, batching (one verdict call per answer, one call per context), the cache (a re-run
makes no call and gives the same frame), samples, nulls with reasons, lazy and streaming queries,
and the scoring rules replayed against Ragas' own scores."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars_rag as pr
import pytest
from fake_judge import FakeJudge

import polars as pl
from polars.exceptions import ComputeError

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "judged" / "ragas-judged.json"


@pytest.fixture()
def server():
    fake = FakeJudge()
    yield fake
    fake.close()


def judge_of(server: FakeJudge, **settings) -> pr.Judge:
    return pr.Judge(base_url=server.base_url, model="fake", retry_base_delay=0.01, **{"cache": None, **settings})


def rag_frame() -> pl.DataFrame:
    return pl.DataFrame({
        "question": ["When did the bridge open?", "Who built it?", "What colour is it?", None, "Why?"],
        "answer": [
            "The bridge opened in 1932. It cost 10 million. It is red",
            "Engineers from Sydney built it",
            "I don't know",
            "x",
            "",
        ],
        "contexts": [
            ["The bridge opened in 1932 after six years.", "It is red and long."],
            ["Engineers from Sydney built it.", "Unrelated text.", "Engineers from Sydney built it."],
            [],
            ["a"],
            ["b"],
        ],
        "reference": ["The bridge opened in 1932", "Engineers from Sydney built it", "red", "y", "z"],
    })


def test_faithfulness_scores_statements_and_reasons(server, tmp_path):
    judge = judge_of(server, cache=tmp_path)
    df = rag_frame()
    first = df.select(pr.faithfulness("question", "answer", "contexts", judge=judge))
    out = first["faithfulness"].struct.unnest()
    # Row 0: three statements, two found in the contexts; row 1: one, found.
    assert out["statements"][0].to_list() == ["The bridge opened in 1932", "It cost 10 million", "It is red"]
    assert out["verdicts"][0].to_list() == [True, False, True]
    assert out["score"][0] == pytest.approx(2 / 3, abs=1e-15)
    assert out["score"][1] == 1.0
    assert len(out["reasons"][0]) == 3
    # No contexts, a null question, an empty answer: null score with the reason, no call made.
    assert out["judge_error"].to_list()[2:] == ["there are no contexts", None, "the answer is empty"]
    assert first["faithfulness"].is_null().to_list() == [False, False, False, True, False]
    # Two judged rows: one statements call and one verdicts call each (never one per statement).
    assert server.requests == 4
    again = df.select(pr.faithfulness("question", "answer", "contexts", judge=judge))
    assert server.requests == 4
    assert again.equals(first)
    usage = {row["prompt"]: row for row in judge.usage().iter_rows(named=True)}
    assert usage["faithfulness_statements"]["calls"] == 2 and usage["faithfulness_verdicts"]["calls"] == 2


def test_faithfulness_as_deepeval_scores_it(server):
    judge = judge_of(server)
    df = rag_frame()
    out = df.select(pr.faithfulness("question", "answer", "contexts", judge=judge, compat="deepeval"))
    values = out["faithfulness"].struct.unnest()
    # Claims not contradicted by the contexts' facts / verdicts; no contexts is allowed (no facts).
    assert values["statements"][0].to_list() == ["The bridge opened in 1932", "It cost 10 million", "It is red"]
    assert values["verdicts"][0].to_list() == [True, False, True]
    assert values["score"].to_list()[:3] == [pytest.approx(2 / 3, abs=1e-15), 1.0, 0.0]
    assert values["judge_error"].to_list()[4] == "the answer is empty"
    assert "compat:deepeval" in pr.signature("faithfulness", judge=judge, compat="deepeval")
    with pytest.raises(ComputeError, match="context_recall: compat is an option of faithfulness only"):
        df.select(pr.context_recall("question", "contexts", "reference", judge=judge, compat="ragas"))


def test_g_eval_weights_the_score_by_token_probabilities(server, tmp_path):
    judge = judge_of(server, cache=tmp_path)
    df = pl.DataFrame({"question": ["Where is it?", None], "answer": ["In Paris.", "x"]})
    rubric = dict(criteria="Does the answer answer the question?", evaluation_steps=["Read both.", "Decide."])
    out = df.select(pr.g_eval("question", "answer", judge=judge, **rubric)).unnest("g_eval")
    # The fake judge's score token: 4 (60 %), 3 (30 %), 5 (10 %) -> 3.8 on 1..5 -> 0.7.
    assert out["raw_score"].to_list() == [4, None]
    assert out["weighted_score"][0] == pytest.approx(3.8, abs=1e-12)
    assert out["score"][0] == pytest.approx(0.7, abs=1e-12)
    plain = df.select(pr.g_eval("question", "answer", judge=judge, logprobs=False, **rubric)).unnest("g_eval")
    assert plain["score"][0] == 0.75 and plain["weighted_score"][0] is None
    ten = df.select(pr.g_eval("question", "answer", pl.lit("Paris"), judge=judge, score_min=0, score_max=10,
                              logprobs=False, **rubric)).unnest("g_eval")
    assert ten["score"][0] == 0.4
    with pytest.raises(ComputeError, match="g_eval: criteria is required"):
        df.select(pr.g_eval("question", "answer", judge=judge))
    assert pr.signature("g_eval", judge=judge, **rubric) != pr.signature("g_eval", judge=judge, criteria="Other?")


def test_context_precision_utilization_and_recall(server):
    judge = judge_of(server)
    df = rag_frame().head(2)
    out = df.select(
        pr.context_precision("question", "contexts", "reference", judge=judge),
        pr.context_utilization("question", "contexts", "answer", judge=judge),
        pr.context_recall("question", "contexts", "reference", judge=judge),
    )
    precision = out["context_precision"].struct.unnest()
    assert precision["verdicts"].to_list() == [[True, False], [True, False, True]]
    assert precision["score"][0] == pytest.approx(1.0, abs=1e-9)
    # Ragas' average precision with its 1e-10: (1/1 + 2/3) / (2 + 1e-10).
    assert precision["score"][1] == (1.0 + 2.0 / 3.0) / (2.0 + 1e-10)
    utilization = out["context_utilization"].struct.unnest()
    assert utilization["verdicts"].to_list() == [[False, False], [True, False, True]]
    assert utilization["score"][0] == 0.0
    recall = out["context_recall"].struct.unnest()
    assert recall["statements"].to_list() == [["The bridge opened in 1932"], ["Engineers from Sydney built it"]]
    assert recall["attributed"].to_list() == [[True], [True]]
    assert recall["score"].to_list() == [1.0, 1.0]


def test_answer_relevancy_with_a_remote_embedder(server):
    judge = judge_of(server)
    embedder = pr.Embedder(base_url=server.base_url, model="fake-embed", cache=None, retry_base_delay=0.0)
    df = pl.DataFrame({
        "question": ["Paris is the capital of France", "Where?"],
        "answer": ["Paris is the capital of France", "I don't know"],
    })
    out = df.select(pr.answer_relevancy("question", "answer", judge=judge, embedder=embedder, strictness=2))
    values = out["answer_relevancy"].struct.unnest()
    # The fake judge echoes the answer as each question: the first question equals the original.
    assert values["questions"][0].to_list() == ["Paris is the capital of France"] * 2
    assert values["similarities"][0].to_list() == pytest.approx([1.0, 1.0], abs=1e-12)
    assert values["score"][0] == pytest.approx(1.0, abs=1e-12)
    # Every question noncommittal: 0, whatever the cosines.
    assert values["noncommittal"][1].to_list() == [True, True]
    assert values["score"][1] == 0.0
    assert pr.signature("answer_relevancy", judge=judge, embedder=embedder).startswith("answer_relevancy|strictness:3|judge")


def test_samples_report_the_spread_and_agreement(server):
    judge = judge_of(server)
    df = rag_frame().head(1)
    out = df.select(pr.faithfulness("question", "answer", "contexts", judge=judge, samples=3))
    values = out["faithfulness"].struct.unnest().row(0, named=True)
    # The fake judge is deterministic: three samples, three cache keys, one score.
    assert values["spread"] == 0.0 and values["samples_agree"] is True
    assert values["sample_scores"] == [values["score"]] * 3
    assert server.requests == 6
    single = df.select(pr.faithfulness("question", "answer", "contexts", judge=judge))
    assert single["faithfulness"].struct.field("spread").to_list() == [None]
    assert single["faithfulness"].struct.field("sample_scores").to_list() == [None]
    # compare resamples the samples within each item when both runs have them: this judge is
    # deterministic, so none of the variance is its own and no item's samples disagree.
    both = rag_frame()
    scored = both.with_row_index("query_id").select(
        pl.col("query_id").cast(pl.String), pr.faithfulness("question", "answer", "contexts", judge=judge, samples=3)
    )
    row = pr.compare(scored, scored).metrics.row(0, named=True)
    assert (row["metric"], row["interval"], row["judge_flips"]) == ("faithfulness.score", "items and judge samples", 0)
    assert row["judge_variance_share"] == 0.0
    assert "samples:3" in pr.signature("faithfulness", judge=judge, samples=3)


def test_lazy_streaming_and_namespace(server):
    judge = judge_of(server)
    df = rag_frame()
    eager = df.select(pr.context_recall("question", "contexts", "reference", judge=judge))
    streamed = (
        df.lazy()
        .select(pl.col("question").rag.context_recall("contexts", "reference", judge=judge))
        .collect(engine="streaming")
    )
    assert eager.equals(streamed)


def test_failures_and_bad_options_are_named(server):
    judge = judge_of(server, max_retries=0)
    df = pl.DataFrame({"question": ["q"], "answer": ["An answer #badjson"], "contexts": [["c"]]})
    out = df.select(pr.faithfulness("question", "answer", "contexts", judge=judge))
    error = out["faithfulness"].struct.field("judge_error")[0]
    assert error is not None and out["faithfulness"].struct.field("score")[0] is None
    with pytest.raises(ComputeError, match=r"faithfulness: samples must be in 1\.\.=20, got 0"):
        df.select(pr.faithfulness("question", "answer", "contexts", judge=judge, samples=0))
    with pytest.raises(TypeError, match="faithfulness"):
        pr.faithfulness("question", "answer", "contexts", judge=judge, strict=True)  # type: ignore[call-arg]
    with pytest.raises(ComputeError, match=r"context_recall: column 'literal' \(contexts\) must be list\[str\]"):
        df.select(pr.context_recall("question", pl.lit(3), "answer", judge=judge))


def _ragas_cases(metric: str) -> list[dict]:
    cases = json.loads(FIXTURE.read_text())["cases"]
    return [c for c in cases if c["metric"] == metric and "error" not in c]


def test_context_recall_replayed_from_ragas_replies():
    """Ragas' recorded replies, served by a scripted judge, through the plugin: the same scores."""
    cases = [c for c in _ragas_cases("context_recall")
             if all(x["attributed"] in (0, 1) for x in c["replies"][0]["json"]["classifications"])]
    assert len(cases) >= 8
    with ScriptedJudge([c["replies"][0]["json"] for c in cases]) as server:
        judge = pr.Judge(base_url=server.base_url, model="replay", cache=None, max_concurrency=1)
        df = pl.DataFrame({
            "question": [f"{i}: {c['inputs']['user_input']}" for i, c in enumerate(cases)],
            "contexts": [c["inputs"]["retrieved_contexts"] for c in cases],
            "reference": [c["inputs"]["reference"] for c in cases],
        })
        scores = df.select(pr.context_recall("question", "contexts", "reference", judge=judge))
    for case, ours in zip(cases, scores["context_recall"].struct.field("score").to_list()):
        theirs = case["score"]
        if theirs == "NaN":
            assert ours is None, case["name"]
        else:
            assert ours == pytest.approx(theirs, abs=1e-12), case["name"]


class ScriptedJudge(FakeJudge):
    """A chat-completions server that answers the request whose question starts with ``i:`` with
    reply ``i``."""

    def __init__(self, replies: list[dict]) -> None:
        self.replies = replies
        super().__init__()

    def respond(self, body):  # type: ignore[no-untyped-def]
        from fake_judge import completion

        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        index = int(json.loads(user)["question"].split(":", 1)[0])
        with self.lock:
            self.requests += 1
        return 200, {}, completion(json.dumps(self.replies[index]))

    def __enter__(self) -> ScriptedJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def test_ragas_fixture_is_complete():
    cases = json.loads(FIXTURE.read_text())["cases"]
    metrics = {c["metric"] for c in cases}
    assert metrics == {"faithfulness", "answer_relevancy", "context_precision_with_reference",
                       "context_precision_without_reference", "context_recall"}
    assert all(isinstance(c.get("score"), float) or c.get("score") in ("NaN", None) for c in cases)
    assert all(("score" in c) != ("error" in c) for c in cases)
    assert not any(isinstance(c.get("score"), float) and math.isinf(c["score"]) for c in cases)
