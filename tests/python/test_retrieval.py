"""Retrieval metrics through the Python plugin, checked against references: trec_eval itself
(pytrec-eval-terrier 0.5.11, installed from PyPI in the test environment) on generated runs and
qrels, pure-Python implementations of the trec definitions and of span overlap, and the recorded
datapizza-ai vectors (tests/reference-vectors/vectors-seeds.json)."""

from __future__ import annotations

import math
import random
import struct

import polars as pl
import pytest
from polars.exceptions import ComputeError
from polars.testing import assert_frame_equal

import polars_rag as pr
from answer_data import close

pytrec_eval = pytest.importorskip("pytrec_eval")

STR_LIST = pl.List(pl.String)
QREL = pl.List(pl.Struct({"id": pl.String, "grade": pl.Int64}))
RUN = pl.List(pl.Struct({"id": pl.String, "score": pl.Float64}))
SPAN = pl.Struct({"file": pl.String, "start": pl.Int64, "end": pl.Int64})
SPANS = pl.List(SPAN)
EMB = pl.List(pl.List(pl.Float64))

#: trec_eval measure -> (polars-rag function, k).
TREC_MEASURES = {
    "P_10": (pr.precision_at_k, 10),
    "P_5": (pr.precision_at_k, 5),
    "recall_100": (pr.recall_at_k, 100),
    "recall_5": (pr.recall_at_k, 5),
    "map": (pr.average_precision, None),
    "recip_rank": (pr.mrr, None),
    "ndcg_cut_10": (pr.ndcg_at_k, 10),
    "Rprec": (pr.r_precision, None),
}


def f32(x: float) -> float:
    """`x` rounded to the nearest float32 (as trec_eval stores run scores)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_next_up(x: float) -> float:
    """The float32 just above the positive float32 `x`."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    return struct.unpack("<f", struct.pack("<I", bits + 1))[0]


def trec_exprs(retrieved: str, relevant: str, **options) -> list[pl.Expr]:
    return [
        f(retrieved, relevant, k=k, **options).alias(measure)
        for measure, (f, k) in TREC_MEASURES.items()
    ]


def pytrec(qrels: dict, run: dict, relevance_level: int = 1) -> dict:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES), relevance_level=relevance_level)
    return evaluator.evaluate(run)


# ------------------------------------------------------------------ parity with trec_eval


def generated_trec_collection(seed: int, n_queries: int = 200):
    """Queries with binary or graded (-1..3) qrels and runs of unique ids in rank order."""
    rng = random.Random(seed)
    queries = []
    for q in range(n_queries):
        pool = [f"d{q}_{j}" for j in range(rng.randint(5, 160))]
        kind = rng.random()
        n_judged = 0 if kind < 0.03 else rng.randint(1, min(len(pool), 45))
        judged = rng.sample(pool, n_judged)
        if kind < 0.08:
            grades = [0] * n_judged  # judged, nothing relevant
        elif kind < 0.5:
            grades = [rng.choice([0, 1]) for _ in judged]  # binary
        else:
            grades = [rng.choice([-1, 0, 0, 1, 2, 3]) for _ in judged]  # graded (trec_eval ignores negative gains)
        length = rng.choice([0, 1, 3, 7, 9, rng.randint(10, 40), rng.randint(60, 150)])
        # Relevant documents tend to be retrieved near the top, so scores cover the range.
        ranked = sorted(pool, key=lambda d: rng.random() - (0.5 if d in judged else 0.0))
        retrieved = ranked[: min(length, len(pool))]
        queries.append((f"q{q}", retrieved, dict(zip(judged, grades))))
    return queries


def test_ranked_metrics_equal_trec_eval():
    queries = generated_trec_collection(seed=11)
    df = pl.DataFrame(
        {
            "retrieved": [r for _, r, _ in queries],
            "relevant": [[{"id": d, "grade": g} for d, g in qrel.items()] for _, _, qrel in queries],
        },
        schema={"retrieved": STR_LIST, "relevant": QREL},
    )
    got = df.select(trec_exprs("retrieved", "relevant", relevance="id")).to_dicts()
    # Strictly decreasing scores, exact in float32: trec_eval ranks in list order.
    run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r, _ in queries}
    qrels = {q: qrel for q, _, qrel in queries if qrel}
    want = pytrec(qrels, {q: run[q] for q in qrels})
    compared = nulls = judged_not_relevant = 0
    for (q, retrieved, qrel), row in zip(queries, got):
        if not qrel:
            # No judgments at all: trec_eval leaves the query out.
            assert q not in want and all(v is None for v in row.values()), (q, qrel, row)
            nulls += 1
            continue
        for measure, value in row.items():
            assert value is not None and abs(value - want[q][measure]) <= 1e-12, (
                q, measure, value, want[q][measure], retrieved, qrel,
            )
        judged_not_relevant += not any(g >= 1 for g in qrel.values())
        compared += 1
    assert compared >= 190 and nulls >= 2 and judged_not_relevant >= 8, (compared, nulls, judged_not_relevant)
    # The data exercise what the measures distinguish.
    assert any(len(r) < 10 for _, r, _ in queries) and any(len(r) > 100 for _, r, _ in queries)
    assert any(len(qrel) >= 24 for _, _, qrel in queries)  # long ground truth (hashed lookup)
    assert len({round(want[q]["ndcg_cut_10"], 6) for q in want}) > 50


def test_relevance_level_equals_trec_eval():
    """Graded qrels scored at relevance levels 1 to 3, as pytrec_eval's ``relevance_level``: grades
    below the level are not relevant (a query can be judged with nothing relevant), nDCG keeps
    every grade above 0 as its gain."""
    queries = generated_trec_collection(seed=21)
    df = pl.DataFrame(
        {
            "retrieved": [r for _, r, _ in queries],
            "relevant": [[{"id": d, "grade": g} for d, g in qrel.items()] for _, _, qrel in queries],
        },
        schema={"retrieved": STR_LIST, "relevant": QREL},
    )
    run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r, _ in queries}
    qrels = {q: qrel for q, _, qrel in queries if qrel}
    for level in (1, 2, 3):
        got = df.select(trec_exprs("retrieved", "relevant", relevance="id", relevance_level=level)).to_dicts()
        want = pytrec(qrels, {q: run[q] for q in qrels}, relevance_level=level)
        nothing_relevant = 0
        for (q, retrieved, qrel), row in zip(queries, got):
            if not qrel:
                assert all(v is None for v in row.values()), (q, row)
                continue
            nothing_relevant += not any(g >= level for g in qrel.values())
            for measure, value in row.items():
                assert value is not None and abs(value - want[q][measure]) <= 1e-12, (
                    level, q, measure, value, want[q][measure], retrieved, qrel,
                )
        assert nothing_relevant >= 8 * level, (level, nothing_relevant)
    # The level is part of the signature.
    assert "level:2" in pr.signature("average_precision", relevance_level=2)
    with pytest.raises(pl.exceptions.ComputeError, match="average_precision: relevance_level must be"):
        df.select(pr.average_precision("retrieved", "relevant", relevance_level=0))


def test_rank_by_trec_equals_trec_eval_order():
    """Tied scores, scores equal only in float32, shuffled lists: trec_eval's own ranking."""
    rng = random.Random(12)
    third = f32(1 / 3)
    score_pool = [
        2.0, 1.0, 0.5, 0.5 + 1e-12, 0.5 - 1e-12, 0.25, 1 / 3, third, f32_next_up(third),
        0.1, 0.1 + 1e-10, -0.75, -0.75 - 1e-13, 1e-3, 7.0,
    ]
    names = ["a", "b", "A", "B", "d1", "d10", "d2", "d9", "z", "Z", "é", "ß", "中", "a b", "a_", "0"]
    queries = []
    for q in range(300):
        ids = rng.sample(names, rng.randint(1, len(names)))
        scores = [rng.choice(score_pool) for _ in ids]
        judged = rng.sample(names, rng.randint(1, 8))
        qrel = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        queries.append((f"q{q}", dict(zip(ids, scores)), qrel))
    df = pl.DataFrame(
        {
            "retrieved": [[{"id": d, "score": s} for d, s in run.items()] for _, run, _ in queries],
            "relevant": [[{"id": d, "grade": g} for d, g in qrel.items()] for _, _, qrel in queries],
        },
        schema={"retrieved": RUN, "relevant": QREL},
    )
    got = df.select(trec_exprs("retrieved", "relevant", rank_by="trec")).to_dicts()
    as_listed = df.select(trec_exprs("retrieved", "relevant")).to_dicts()
    by_score = df.select(trec_exprs("retrieved", "relevant", rank_by="score")).to_dicts()
    want = pytrec({q: qrel for q, _, qrel in queries}, {q: run for q, run, _ in queries})
    compared = differs_from_list_order = 0
    differs_from_score_order = 0
    for (q, run, qrel), row, listed, scored in zip(queries, got, as_listed, by_score):
        for measure, value in row.items():
            assert value is not None and abs(value - want[q][measure]) <= 1e-12, (q, measure, value, want[q][measure], run, qrel)
        differs_from_list_order += any(abs(listed[m] - want[q][m]) > 1e-12 for m in row)
        differs_from_score_order += any(abs(scored[m] - want[q][m]) > 1e-12 for m in row)
        compared += 1
    assert compared >= 250
    # The order really matters here, ties and float32 rounding included.
    assert differs_from_list_order >= 50 and differs_from_score_order >= 20, (differs_from_list_order, differs_from_score_order)


def test_rank_by_trec_ties_positive_and_negative_zero():
    """trec_eval compares scores with `>` and `<`: 0.0 and -0.0 tie (so does a tiny negative score,
    -0.0 in float32), and the tie goes to the larger id."""
    qrel = {"q": {"a": 1}}
    for run in ({"a": 0.0, "b": -0.0}, {"b": -0.0, "a": 0.0}, {"a": 0.0, "b": -1e-50}):
        want = pytrec_eval.RelevanceEvaluator(qrel, {"recip_rank"}).evaluate({"q": run})["q"]["recip_rank"]
        assert want == 0.5
        df = pl.DataFrame(
            {"retrieved": [[{"id": d, "score": s} for d, s in run.items()]], "relevant": [["a"]]},
            schema={"retrieved": RUN, "relevant": STR_LIST},
        )
        assert df.select(pr.mrr("retrieved", "relevant", rank_by="trec")).item() == want, run


def test_rank_by_score_ties_positive_and_negative_zero():
    df = pl.DataFrame(
        {"retrieved": [[{"id": "b", "score": -0.0}, {"id": "a", "score": 0.0}]], "relevant": [["a"]]},
        schema={"retrieved": RUN, "relevant": STR_LIST},
    )
    assert df.select(pr.mrr("retrieved", "relevant", rank_by="score")).item() == 0.5


def test_rank_by_score_is_a_stable_sort_by_score():
    rng = random.Random(13)
    rows = []
    for _ in range(300):
        ids = [f"d{j}" for j in rng.sample(range(40), rng.randint(0, 25))]
        rows.append(
            (
                [{"id": d, "score": rng.choice([0.1, 0.2, 0.5, 0.5 + 1e-12, 0.9, -1.0])} for d in ids],
                rng.sample([f"d{j}" for j in range(40)], rng.randint(1, 10)),
            )
        )
    df = pl.DataFrame(
        {"retrieved": [r for r, _ in rows], "relevant": [g for _, g in rows]},
        schema={"retrieved": RUN, "relevant": STR_LIST},
    )
    got = df.select(
        pr.mrr("retrieved", "relevant", rank_by="score"),
        pr.ndcg_at_k("retrieved", "relevant", k=5, rank_by="score"),
        pr.average_precision("retrieved", "relevant", rank_by="score"),
    ).to_dicts()
    for (run, relevant), row in zip(rows, got):
        order = [item["id"] for item in sorted(run, key=lambda item: -item["score"])]  # stable
        want = reference_scores(order, {d: 1 for d in relevant})
        assert close(row["mrr"], want["mrr"]), (run, relevant)
        assert close(row["ndcg_at_k"], want["ndcg_5"]), (run, relevant)
        assert close(row["average_precision"], want["average_precision"]), (run, relevant)


def test_auto_relevance_judges_plain_strings_against_id_structs():
    # The mirror shape (retrieved struct{id} against list[str] ground truth) resolves to ids.
    df = pl.DataFrame(
        {
            "retrieved": [["a", "b", "c"]],
            "relevant": [[{"id": "c", "grade": 2}, {"id": "x", "grade": 1}]],
        },
        schema={"retrieved": STR_LIST, "relevant": QREL},
    )
    assert df.select(pr.mrr("retrieved", "relevant")).item() == pytest.approx(1 / 3)


# ------------------------------------------------------------ the trec definitions in Python


def reference_scores(retrieved: list, grades: dict, alpha: float = 0.5, gamma: float = 1.0) -> dict:
    """trec_eval's definitions on a ranked list of keys; `grades` maps each ground-truth key to its
    grade (> 0 relevant). A repeated key is not relevant again. None without ground truth; 0 where
    a division by the number of relevant items has none (trec_eval's rule)."""
    relevant_total = sum(1 for g in grades.values() if g > 0)
    names = ["P_5", "P_10", "recall_5", "recall_10", "f1_5", "hit_3", "ndcg_5", "ndcg_10",
             "mrr", "average_precision", "r_precision", "hybrid_log_rank"]
    if not grades:
        return dict.fromkeys(names)
    if relevant_total == 0:
        return dict.fromkeys(names, 0.0)
    seen, gains = set(), []
    for d in retrieved:
        gains.append(grades.get(d, 0) if grades.get(d, 0) > 0 and d not in seen else 0)
        seen.add(d)
    hit = [g > 0 for g in gains]
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)

    def precision(k):
        return sum(hit[:k]) / k

    def recall(k):
        return sum(hit[:k]) / relevant_total

    def ndcg(k):
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]) if g > 0)
        return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))

    ap, found = 0.0, 0
    for i, h in enumerate(hit):
        if h:
            found += 1
            ap += found / (i + 1)
    n = len(retrieved)
    quality = 0.0
    for i, h in enumerate(hit):
        if h:
            quality += 1.0 if n <= 1 else 1 - math.log(1 + gamma * i) / math.log(1 + gamma * (n - 1))
    p5, r5 = precision(5), recall(5)
    return {
        "P_5": p5,
        "P_10": precision(10),
        "recall_5": r5,
        "recall_10": recall(10),
        "f1_5": 0.0 if p5 + r5 == 0 else 2 * p5 * r5 / (p5 + r5),
        "hit_3": float(any(hit[:3])),
        "ndcg_5": ndcg(5),
        "ndcg_10": ndcg(10),
        "mrr": next((1 / (i + 1) for i, h in enumerate(hit) if h), 0.0),
        "average_precision": ap / relevant_total,
        "r_precision": sum(hit[:relevant_total]) / relevant_total,
        "hybrid_log_rank": alpha * recall(n) + (1 - alpha) * quality / relevant_total,
    }


def reference_exprs(retrieved: str = "retrieved", relevant: str = "relevant") -> list[pl.Expr]:
    return [
        pr.precision_at_k(retrieved, relevant, k=5).alias("P_5"),
        pr.precision_at_k(retrieved, relevant).alias("P_10"),  # k defaults to 10
        pr.recall_at_k(retrieved, relevant, k=5).alias("recall_5"),
        pr.recall_at_k(retrieved, relevant).alias("recall_10"),
        pr.f1_at_k(retrieved, relevant, k=5).alias("f1_5"),
        pr.hit_rate_at_k(retrieved, relevant, k=3).alias("hit_3"),
        pr.ndcg_at_k(retrieved, relevant, k=5).alias("ndcg_5"),
        pr.ndcg_at_k(retrieved, relevant).alias("ndcg_10"),
        pr.mrr(retrieved, relevant),
        pr.average_precision(retrieved, relevant),
        pr.r_precision(retrieved, relevant),
        pr.hybrid_log_rank(retrieved, relevant, alpha=0.3, gamma=2.0),
    ]


def generated_string_rows(seed: int, n: int):
    """list[str] runs (with repeated items, empty and null rows) and ground truth (with repeated
    keys, empty and null rows, sometimes long)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        vocab = [f"passage {j}" for j in range(rng.randint(1, 60))]
        retrieved = [rng.choice(vocab) for _ in range(rng.choice([0, 1, 2, 4, 8, 12, 30]))]
        relevant = [rng.choice(vocab) for _ in range(rng.choice([0, 1, 2, 3, 6, 30]))]
        u = rng.random()
        rows.append((None if u < 0.02 else retrieved, None if 0.02 <= u < 0.04 else relevant))
    return rows


def test_eager_lazy_streaming_agree_with_the_definitions():
    rows = generated_string_rows(seed=14, n=4000)
    df = pl.DataFrame(
        {"retrieved": [r for r, _ in rows], "relevant": [g for _, g in rows]},
        schema={"retrieved": STR_LIST, "relevant": STR_LIST},
    )
    eager = df.select(reference_exprs())
    lazy = df.lazy().select(reference_exprs()).collect()
    streaming = df.lazy().select(reference_exprs()).collect(engine="streaming")
    # Several chunks, as a concatenated frame brings them.
    chunked = pl.concat([df.slice(0, 1234), df.slice(1234, 1), df.slice(1235)], rechunk=False)
    assert chunked.n_chunks() > 1
    chunked_out = chunked.select(reference_exprs())
    for other in (lazy, streaming, chunked_out):
        assert_frame_equal(eager, other, check_exact=True)
    assert eager.schema == pl.Schema({c: pl.Float64 for c in eager.columns})
    nulls = zeros = 0
    for (retrieved, relevant), row in zip(rows, eager.iter_rows(named=True)):
        if retrieved is None or relevant is None:
            want = dict.fromkeys(row)
        else:
            want = reference_scores(retrieved, {d: 1 for d in relevant}, alpha=0.3, gamma=2.0)
        for name, value in row.items():
            assert close(value, want[name]), (name, value, want[name], retrieved, relevant)
        nulls += row["mrr"] is None
        zeros += row["mrr"] == 0.0
    assert nulls > 100 and zeros > 100 and sum(r is not None and len(set(r)) < len(r) for r, _ in rows) > 500


def test_graded_ground_truth_with_repeated_keys_keeps_the_highest_grade():
    grades = {"a": 3, "b": 1, "c": 2}
    relevant = [{"id": "b", "grade": 1}, {"id": "a", "grade": 1}, {"id": "c", "grade": 2},
                {"id": "a", "grade": 3}, {"id": "d", "grade": 0}]
    retrieved = ["d", "c", "x", "a", "c", "b"]
    df = pl.DataFrame({"retrieved": [retrieved], "relevant": [relevant]}, schema={"retrieved": STR_LIST, "relevant": QREL})
    row = df.select(pr.ndcg_at_k("retrieved", "relevant", k=5, relevance="id"),
                    pr.average_precision("retrieved", "relevant", relevance="id")).row(0, named=True)
    want = reference_scores(retrieved, grades)
    assert close(row["ndcg_at_k"], want["ndcg_5"]) and close(row["average_precision"], want["average_precision"])


def test_namespace_forwards_to_the_functions():
    rows = generated_string_rows(seed=15, n=300)
    df = pl.DataFrame(
        {"retrieved": [r for r, _ in rows], "relevant": [g for _, g in rows]},
        schema={"retrieved": STR_LIST, "relevant": STR_LIST},
    )
    via_namespace = df.select(
        pl.col("retrieved").rag.mrr("relevant", k=3),
        pl.col("retrieved").rag.precision_at_k("relevant", k=4),
        pl.col("retrieved").rag.ndcg_at_k(pl.col("relevant"), k=2),
    )
    direct = df.select(
        pr.mrr("retrieved", "relevant", k=3),
        pr.precision_at_k("retrieved", "relevant", k=4),
        pr.ndcg_at_k("retrieved", "relevant", k=2),
    )
    assert_frame_equal(via_namespace, direct, check_exact=True)
    for (retrieved, relevant), value in zip(rows, direct["mrr"]):
        want = None if retrieved is None or relevant is None else reference_scores(retrieved[:3], dict.fromkeys(relevant, 1))["mrr"]
        assert close(value, want), (retrieved, relevant)


# ------------------------------------------------------------------------ datapizza parity


def _datapizza_frame(retrieved, ground_truth, dtype) -> pl.DataFrame:
    return pl.DataFrame({"retrieved": [retrieved], "relevant": [ground_truth]}, schema={"retrieved": dtype, "relevant": dtype})


def _check_datapizza(section: str, case: dict, got) -> None:
    what = (section, case["description"])
    if "error" in case:
        assert got is None, what
    else:
        want = case["output"]
        assert got is not None and abs(got - want) <= 1e-12, (what, got, want)


@pytest.mark.parametrize("metric", ["precision_at_k", "recall_at_k", "f1_at_k"])
@pytest.mark.parametrize("variant", ["exact", "similarity"])
def test_datapizza_precision_recall_f1(vectors, metric, variant):
    section = f"datapizza.{metric}_{variant}"
    cases = vectors[section]
    f = getattr(pr, metric)
    for case in cases:
        inp = case["input"]
        if variant == "exact":
            df = _datapizza_frame(inp["retrieved_chunks"], inp["ground_truth_chunks"], STR_LIST)
            options = {}
        else:
            as_float = lambda vs: [[float(x) for x in v] for v in vs]  # noqa: E731
            df = _datapizza_frame(as_float(inp["retrieved_embeddings"]), as_float(inp["ground_truth_embeddings"]), EMB)
            options = {"similarity_threshold": inp.get("similarity_threshold", 0.8)}
        got = df.select(f("retrieved", "relevant", k=inp["k"], compat="datapizza", **options)).item()
        _check_datapizza(section, case, got)
    assert len(cases) == (19 if variant == "exact" else 18)


@pytest.mark.parametrize("variant", ["exact", "similarity"])
def test_datapizza_hybrid_log_rank(vectors, variant):
    section = f"datapizza.hybrid_log_rank_score_{variant}"
    cases = vectors[section]
    for case in cases:
        inp = case["input"]
        if variant == "exact":
            df = _datapizza_frame(inp["retrieved_chunks"], inp["ground_truth_chunks"], STR_LIST)
            options = {}
        else:
            as_float = lambda vs: [[float(x) for x in v] for v in vs]  # noqa: E731
            df = _datapizza_frame(as_float(inp["retrieved_embeddings"]), as_float(inp["ground_truth_embeddings"]), EMB)
            options = {"similarity_threshold": inp.get("similarity_threshold", 0.8)}
        expr = pr.hybrid_log_rank(
            "retrieved", "relevant", alpha=inp.get("alpha", 0.5), gamma=inp.get("gamma", 1.0), compat="datapizza", **options
        )
        _check_datapizza(section, case, df.select(expr).item())
    assert len(cases) == (19 if variant == "exact" else 17)


@pytest.mark.parametrize("metric", ["precision_at_k", "recall_at_k", "f1_at_k"])
def test_datapizza_cases_evaluated_together(vectors, metric):
    """All the exact cases sharing a k in one frame: each row gives its own case's number."""
    section = f"datapizza.{metric}_exact"
    by_k: dict = {}
    for case in vectors[section]:
        by_k.setdefault(case["input"]["k"], []).append(case)
    for k, cases in by_k.items():
        df = pl.DataFrame(
            {
                "retrieved": [c["input"]["retrieved_chunks"] for c in cases],
                "relevant": [c["input"]["ground_truth_chunks"] for c in cases],
            },
            schema={"retrieved": STR_LIST, "relevant": STR_LIST},
        )
        got = df.select(getattr(pr, metric)("retrieved", "relevant", k=k, compat="datapizza")).to_series()
        for case, value in zip(cases, got):
            _check_datapizza(section, case, value)
    assert max(len(c) for c in by_k.values()) >= 5


# ---------------------------------------------------------------------------- span metrics


def reference_spans(retrieved, golden):
    """(precision, recall, iou) from sets of (file, character) pairs; None without golden characters."""
    chars = lambda spans: {(s["file"], c) for s in spans for c in range(s["start"], s["end"])}  # noqa: E731
    r, g = chars(retrieved), chars(golden)
    if not g:
        return None
    shared = len(r & g)
    return (shared / len(r) if r else 0.0, shared / len(g), shared / len(r | g))


def test_span_metrics_equal_character_sets():
    rng = random.Random(16)

    def span():
        start = rng.randint(0, 120)
        return {"file": rng.choice(["a.md", "b.md", "ç.txt"]), "start": start, "end": start + rng.choice([0, 1, 3, 10, 40])}

    rows = []
    for _ in range(2000):
        retrieved = [span() for _ in range(rng.choice([0, 1, 2, 3, 5, 8]))]
        golden = [span() for _ in range(rng.choice([0, 1, 1, 2, 4]))]
        u = rng.random()
        rows.append((None if u < 0.02 else retrieved, None if 0.02 <= u < 0.04 else golden))
    df = pl.DataFrame(
        {"retrieved": [r for r, _ in rows], "golden": [g for _, g in rows]},
        schema={"retrieved": SPANS, "golden": SPANS},
    )
    exprs = [pr.span_precision("retrieved", "golden"), pr.span_recall("retrieved", "golden"), pr.span_iou("retrieved", "golden")]
    out = df.select(exprs)
    assert_frame_equal(out, df.lazy().select(exprs).collect(engine="streaming"), check_exact=True)
    assert_frame_equal(
        out.rename(lambda c: c + "_ns"),
        df.select(
            pl.col("retrieved").rag.span_precision("golden").alias("span_precision_ns"),
            pl.col("retrieved").rag.span_recall("golden").alias("span_recall_ns"),
            pl.col("retrieved").rag.span_iou("golden").alias("span_iou_ns"),
        ),
        check_exact=True,
    )
    checked = 0
    for (retrieved, golden), row in zip(rows, out.iter_rows()):
        want = None if retrieved is None or golden is None else reference_spans(retrieved, golden)
        if want is None:
            assert row == (None, None, None), (retrieved, golden, row)
        else:
            assert all(close(a, b) for a, b in zip(row, want)), (retrieved, golden, row, want)
            checked += 1
    assert checked > 1200


def _spans(*spans):
    return [{"file": f, "start": s, "end": e} for f, s, e in spans]


def test_span_metrics_chroma_counts_overlapping_chunks_twice():
    # Golden a[10, 20). Chunks a[0, 15) and a[5, 25) overlap on a[5, 15); b[0, 100) is elsewhere.
    # Chroma (chunking_evaluation base_evaluation.py): numerator = union of the intersections
    # a[10, 20) = 10; recall denominator = golden lengths = 10; precision denominator = chunk
    # lengths summed unmerged = 15 + 20 + 100 = 135; IoU denominator = 135 + unused golden 0.
    # Standard: retrieved characters a[0, 25) + b[0, 100) = 125.
    # Second row: golden a[0, 10), a[20, 30); chunks a[5, 12), a[8, 25). Chroma: numerator
    # a[5, 10) + a[20, 25) = 10; recall 10 / 20; precision 10 / (7 + 17); unused golden a[0, 5)
    # and a[25, 30) = 10, so IoU 10 / 34. Standard: retrieved a[5, 25) = 20, union 30.
    df = pl.DataFrame(
        {
            "retrieved": [_spans(("a", 0, 15), ("a", 5, 25), ("b", 0, 100)), _spans(("a", 5, 12), ("a", 8, 25))],
            "golden": [_spans(("a", 10, 20)), _spans(("a", 0, 10), ("a", 20, 30))],
        },
        schema={"retrieved": SPANS, "golden": SPANS},
    )

    def scores(compat):
        out = df.select(
            pr.span_precision("retrieved", "golden", compat=compat),
            pr.span_recall("retrieved", "golden", compat=compat),
            pr.span_iou("retrieved", "golden", compat=compat),
        )
        return out.rows()

    chroma, standard = scores("chroma"), scores("standard")
    want_chroma = [(10 / 135, 1.0, 10 / 135), (10 / 24, 10 / 20, 10 / 34)]
    want_standard = [(10 / 125, 1.0, 10 / 125), (10 / 20, 10 / 20, 10 / 30)]
    for got, want in ((chroma, want_chroma), (standard, want_standard)):
        for g_row, w_row in zip(got, want):
            assert all(close(a, b) for a, b in zip(g_row, w_row)), (got, want)


def test_span_metrics_null_and_empty_cases():
    df = pl.DataFrame(
        {
            "retrieved": [_spans(("a", 0, 5)), [], _spans(("a", 0, 5)), None],
            "golden": [[], _spans(("a", 0, 5)), _spans(("a", 3, 3)), _spans(("a", 0, 5))],
        },
        schema={"retrieved": SPANS, "golden": SPANS},
    )
    out = df.select(pr.span_precision("retrieved", "golden"), pr.span_recall("retrieved", "golden"), pr.span_iou("retrieved", "golden"))
    assert out.rows() == [(None, None, None), (0.0, 0.0, 0.0), (None, None, None), (None, None, None)]


# -------------------------------------------------------------------------------- embeddings


def _cosine(a, b):
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in b))
    na, nb = na or 1.0, nb or 1.0
    return sum((x / na) * (y / nb) for x, y in zip(a, b))


def test_embeddings_as_float32_arrays_equal_float64_lists():
    rng = random.Random(17)
    d, threshold = 4, 0.8
    rows = []
    while len(rows) < 400:
        vec = lambda: [rng.choice([-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 3.0]) for _ in range(d)]  # noqa: E731
        retrieved = [vec() for _ in range(rng.randint(0, 8))]
        golden = [vec() for _ in range(rng.randint(1, 3))]
        # Stay clear of the threshold, where rounding could decide, and of repeated vectors.
        if any(abs(_cosine(r, g) - threshold) < 1e-9 for r in retrieved for g in golden):
            continue
        if len({tuple(r) for r in retrieved}) < len(retrieved):
            continue
        rows.append((retrieved, golden))
    as_lists = pl.DataFrame(
        {"retrieved": [r for r, _ in rows], "relevant": [g for _, g in rows]},
        schema={"retrieved": EMB, "relevant": EMB},
    )
    as_arrays = as_lists.select(pl.all().cast(pl.List(pl.Array(pl.Float32, d))))
    assert as_arrays.schema["retrieved"] == pl.List(pl.Array(pl.Float32, d))
    mixed = pl.DataFrame([as_arrays["retrieved"], as_lists["relevant"]])

    def metrics(frame):
        return frame.select(
            pr.precision_at_k("retrieved", "relevant", k=3),
            pr.recall_at_k("retrieved", "relevant", k=5),
            pr.mrr("retrieved", "relevant"),
            pr.ndcg_at_k("retrieved", "relevant", k=4),
            pr.average_precision("retrieved", "relevant"),
            pr.hybrid_log_rank("retrieved", "relevant"),
            pr.precision_at_k("retrieved", "relevant", k=3, compat="datapizza").alias("dp_precision"),
            pr.hybrid_log_rank("retrieved", "relevant", compat="datapizza").alias("dp_hybrid"),
        )

    want = metrics(as_lists)
    assert_frame_equal(metrics(as_arrays), want, check_exact=True)
    assert_frame_equal(metrics(mixed), want, check_exact=True)
    # And the numbers follow the definitions: an item is relevant when its cosine with some
    # ground-truth vector reaches the threshold; recall counts the ground-truth vectors reached.
    for (retrieved, golden), row in zip(rows, want.iter_rows(named=True)):
        hits = [[_cosine(r, g) >= threshold for g in golden] for r in retrieved]
        relevant = [any(h) for h in hits]
        reached_in_5 = sum(any(h[j] for h in hits[:5]) for j in range(len(golden)))
        assert close(row["precision_at_k"], sum(relevant[:3]) / 3), (retrieved, golden)
        assert close(row["dp_precision"], sum(relevant[:3]) / 3 if retrieved else 0.0), (retrieved, golden)
        assert close(row["recall_at_k"], reached_in_5 / len(golden)), (retrieved, golden)
        assert close(row["mrr"], next((1 / (i + 1) for i, h in enumerate(relevant) if h), 0.0)), (retrieved, golden)
    assert want["precision_at_k"].n_unique() >= 3


# ------------------------------------------------------------------------------------ errors


def test_k_below_one_is_an_error_naming_the_metric():
    df = pl.DataFrame({"retrieved": [["a"]], "relevant": [["a"]]})
    with pytest.raises(ComputeError, match=r"precision_at_k: k must be at least 1, got 0"):
        df.select(pr.precision_at_k("retrieved", "relevant", k=0))
    with pytest.raises(ComputeError, match=r"ndcg_at_k: k must be at least 1, got -3"):
        df.lazy().select(pr.ndcg_at_k("retrieved", "relevant", k=-3)).collect()
    with pytest.raises(ComputeError, match=r"mrr: k must be at least 1, got 0"):
        df.select(pl.col("retrieved").rag.mrr("relevant", k=0))


@pytest.mark.parametrize("metric", ["span_precision", "span_recall", "span_iou"])
def test_reversed_span_is_an_error_naming_column_row_and_span(metric):
    df = pl.DataFrame(
        {
            "retrieved": [_spans(("a", 0, 5)), _spans(("a", 0, 5))],
            "golden": [_spans(("a", 0, 5)), _spans(("a", 1, 2), ("a", 7, 3))],
        },
        schema={"retrieved": SPANS, "golden": SPANS},
    )
    with pytest.raises(ComputeError, match=rf"{metric}: column 'golden' row 1 span #1: start 7 > end 3") as info:
        df.select(getattr(pr, metric)("retrieved", "golden"))
    message = str(info.value)
    for part in (metric, "'golden'", "row 1", "#1", "7", "3"):
        assert part in message, (part, message)


def test_reversed_span_in_ranked_metric_is_an_error():
    df = pl.DataFrame(
        {"retrieved": [_spans(("a", 9, 4))], "golden": [_spans(("a", 0, 5))]},
        schema={"retrieved": SPANS, "golden": SPANS},
    )
    with pytest.raises(ComputeError, match=r"recall_at_k: column 'retrieved' row 0 span #0: start 9 > end 4"):
        df.select(pr.recall_at_k("retrieved", "golden"))


def test_embedding_dimension_mismatch_is_an_error():
    df = pl.DataFrame(
        {"retrieved": [[[1.0, 0.0]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], "relevant": [[[1.0, 0.0]], [[1.0, 0.0]]]},
        schema={"retrieved": EMB, "relevant": EMB},
    )
    with pytest.raises(
        ComputeError,
        match=r"precision_at_k: row 1: embeddings of different dimensions \(2 and 3\) in 'retrieved' and 'relevant'",
    ):
        df.select(pr.precision_at_k("retrieved", "relevant"))
    # datapizza: scikit-learn raises on the row it compares, so that row is null.
    got = df.select(pr.precision_at_k("retrieved", "relevant", compat="datapizza"))["precision_at_k"].to_list()
    assert got == [0.1, None]


def _random_chunking(rng: random.Random, length: int) -> list[tuple[int, int]]:
    """Fixed-size or uneven chunks, sometimes overlapping, over a document of `length` code points."""
    chunks, start = [], 0
    while start < length:
        size = rng.choice([5, 10, 20, rng.randint(1, 40)])
        chunks.append((start, min(length, start + size)))
        start += size - (rng.choice([0, 0, 2]) if size > 2 else 0)
    return chunks


def test_span_precision_omega_equals_chroma_and_the_definition():
    from chroma_oracle import precision_omega

    rng = random.Random(31)
    rows, chunkings = [], []
    for _ in range(300):
        length = rng.randint(20, 300)
        chunks = _random_chunking(rng, length)
        golden = []
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            s = rng.randint(0, length - 1)
            golden.append((s, min(length, s + rng.randint(0, 40))))
        rows.append((chunks, golden))
    span = lambda s, e: {"file": "doc", "start": s, "end": e}  # noqa: E731
    df = pl.DataFrame(
        {
            "chunks": [[span(*c) for c in chunks] for chunks, _ in rows],
            "golden": [[span(*g) for g in golden] for _, golden in rows],
        },
        schema={"chunks": SPANS, "golden": SPANS},
    )
    got = df.select(
        pr.span_precision_omega("chunks", "golden", compat="chroma").alias("chroma"),
        pr.span_precision_omega("chunks", "golden").alias("standard"),
    ).to_dicts()
    differ = 0
    for (chunks, golden), row in zip(rows, got):
        try:
            want: float | None = float(precision_omega(chunks, golden))
        except (ZeroDivisionError, IndexError):
            want = None  # Chroma raises: the plugin gives null
        if want is None:
            assert row["chroma"] is None, (chunks, golden, row)
        else:
            assert close(row["chroma"], want), (chunks, golden, row, want)
        # Standard: character sets, chunks sharing at least one code point with a golden span.
        gold = {i for s, e in golden for i in range(s, e)}
        if not gold:
            assert row["standard"] is None
            continue
        covered = {i for s, e in chunks if gold & set(range(s, e)) for i in range(s, e)}
        assert close(row["standard"], len(covered & gold) / len(covered | gold)), (chunks, golden, row)
        differ += abs(row["standard"] - row["chroma"]) > 1e-12
    assert differ > 10  # touching chunks make the two differ


def test_span_precision_omega_shared_chunking_literal():
    span = lambda f, s, e: {"file": f, "start": s, "end": e}  # noqa: E731
    chunking = pl.Series([[span("a", 0, 10), span("a", 10, 20), span("b", 0, 5)]], dtype=SPANS)
    df = pl.DataFrame({"golden": [[span("a", 12, 18)], [span("b", 1, 3), span("a", 0, 10)], None]}, schema={"golden": SPANS})
    out = df.select(pr.span_precision_omega(pl.lit(chunking), "golden")).to_series().to_list()
    assert out == [0.6, 12 / 15, None]
    lazy = df.lazy().select(pr.span_precision_omega(pl.lit(chunking), "golden")).collect(engine="streaming")
    assert lazy.to_series().to_list() == out


def _ragas_value(record: dict) -> float | None:
    """A Ragas output as polars-rag gives it: NaN and errors are null."""
    value = record.get("output")
    return None if value is None or value == "NaN" else float(value)


def test_ragas_mode_equals_ragas_context_metrics(vectors):
    cases = vectors["ragas.non_llm_context_precision_recall"]
    df = pl.DataFrame(
        {
            "retrieved": [c["input"]["retrieved_contexts"] for c in cases],
            "reference": [c["input"]["reference_contexts"] for c in cases],
        },
        schema={"retrieved": STR_LIST, "reference": STR_LIST},
    )
    opts = {"relevance": "similarity", "compat": "ragas"}
    out = df.select(
        pr.average_precision("retrieved", "reference", **opts),  # type: ignore[arg-type]
        pr.recall_at_k("retrieved", "reference", **opts),  # type: ignore[arg-type]
    ).to_dicts()
    for case, row in zip(cases, out):
        want_p = _ragas_value(case["outputs"]["NonLLMContextPrecisionWithReference"])
        want_r = _ragas_value(case["outputs"]["NonLLMContextRecall"])
        assert row["average_precision"] == want_p, case["description"]
        assert row["recall_at_k"] == want_r, case["description"]
    cases = vectors["ragas.id_based_context_precision_recall"]
    as_ids = lambda v: [x if isinstance(x, str) else str(x) for x in v]  # noqa: E731 - Ragas' str()
    df = pl.DataFrame(
        {
            "retrieved": [as_ids(c["input"]["retrieved_context_ids"]) for c in cases],
            "reference": [as_ids(c["input"]["reference_context_ids"]) for c in cases],
        },
        schema={"retrieved": STR_LIST, "reference": STR_LIST},
    )
    out = df.select(
        pr.precision_at_k("retrieved", "reference", relevance="id", compat="ragas"),
        pr.recall_at_k("retrieved", "reference", relevance="id", compat="ragas"),
    ).to_dicts()
    for case, row in zip(cases, out):
        assert row["precision_at_k"] == _ragas_value(case["outputs"]["IDBasedContextPrecision"]), case["description"]
        assert row["recall_at_k"] == _ragas_value(case["outputs"]["IDBasedContextRecall"]), case["description"]
    # Metrics Ragas does not have are refused by name.
    with pytest.raises(pl.exceptions.ComputeError, match="f1_at_k: Ragas has no such metric"):
        df.select(pr.f1_at_k("retrieved", "reference", compat="ragas"))
    with pytest.raises(pl.exceptions.ComputeError, match="average_precision: compat=\"ragas\" with relevance=\"id\""):
        df.select(pr.average_precision("retrieved", "reference", relevance="id", compat="ragas"))


def test_similarity_relevance_in_standard_mode():
    df = pl.DataFrame(
        {"retrieved": [["Paris is the capital of France.", "zzzz", "Berlin is a city"]], "relevant": [["Paris is the capital of France!", "Berlin is the capital"]]},
        schema={"retrieved": STR_LIST, "relevant": STR_LIST},
    )
    row = df.select(
        pr.precision_at_k("retrieved", "relevant", k=3, relevance="similarity").alias("p"),
        pr.recall_at_k("retrieved", "relevant", relevance="similarity").alias("r"),
        pr.mrr("retrieved", "relevant", relevance="similarity", string_similarity_threshold=0.99).alias("strict"),
        pr.recall_at_k("retrieved", "relevant", relevance="similarity", string_distance="jaro_winkler").alias("jw"),
    ).row(0, named=True)
    # Levenshtein: "Paris ... France." vs "...France!" is 30/31; "Berlin is a city" vs "Berlin is the capital" is 0.52.
    assert row["p"] == pytest.approx(2 / 3) and row["r"] == 1.0 and row["strict"] == 0.0 and row["jw"] == 1.0
    assert "sim:levenshtein:0.5" in pr.signature("recall_at_k", relevance="similarity")


def test_datapizza_mode_compares_only_the_vectors_datapizza_compares():
    """datapizza builds the similarity matrix of retrieved[:k] only: a vector of another dimension
    further down the list does not matter there; the standard mode refuses the row."""
    df = pl.DataFrame(
        {"retrieved": [[[1.0, 0.0], [0.0, 1.0], [1.0, 0.0, 0.0]]], "relevant": [[[1.0, 0.0]]]},
        schema={"retrieved": pl.List(pl.List(pl.Float64)), "relevant": pl.List(pl.List(pl.Float64))},
    )
    got = df.select(pr.precision_at_k("retrieved", "relevant", k=2, compat="datapizza")).item()
    assert got == 0.5
    # Inside the first k, mixed dimensions are scikit-learn's ValueError: a null.
    assert df.select(pr.precision_at_k("retrieved", "relevant", k=3, compat="datapizza")).item() is None
    with pytest.raises(pl.exceptions.ComputeError, match="precision_at_k: row 0: embeddings of different dimensions"):
        df.select(pr.precision_at_k("retrieved", "relevant", k=2))
