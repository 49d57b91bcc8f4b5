"""pr.compare and pr.summary: the statistics checked against scipy and by simulation."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import polars as pl
import pytest
from scipy import stats

import polars_rag as pr


def frames(baseline: list, candidate: list) -> tuple[pl.DataFrame, pl.DataFrame]:
    ids = [f"q{i}" for i in range(len(baseline))]
    # Any registry id is a metric column; these two are plain floats.
    return (
        pl.DataFrame({"query_id": ids, "mrr": baseline}),
        pl.DataFrame({"query_id": ids, "mrr": candidate}),
    )


def test_t_test_and_effect_size_equal_scipy():
    rng = random.Random(3)
    for n in (5, 40, 1000):
        base = [rng.random() for _ in range(n)]
        cand = [b + rng.gauss(0.02, 0.1) for b in base]
        a, b = frames(base, cand)
        row = pr.compare(a, b).metrics.row(0, named=True)
        want = stats.ttest_rel(cand, base)
        assert row["p_t_test"] == pytest.approx(want.pvalue, rel=1e-10, abs=1e-300)
        deltas = [c - x for c, x in zip(cand, base)]
        mean = sum(deltas) / n
        sd = math.sqrt(sum((d - mean) ** 2 for d in deltas) / (n - 1))
        assert row["effect_size"] == pytest.approx(mean / sd, rel=1e-10)
        assert row["delta"] == pytest.approx(mean, rel=1e-12)
        assert row["improved"] + row["regressed"] + row["unchanged"] == n


def test_randomization_p_values_are_roughly_uniform_under_the_null():
    rng = random.Random(11)
    ps = []
    for sim in range(150):
        base = [rng.random() for _ in range(60)]
        cand = [b + rng.gauss(0.0, 0.2) for b in base]  # no true difference
        a, b = frames(base, cand)
        ps.append(pr.compare(a, b, resamples=299, seed=sim).metrics["p_randomization"][0])
    below = sum(p < 0.05 for p in ps) / len(ps)
    assert 0.01 <= below <= 0.11, below
    assert 0.4 <= sum(ps) / len(ps) <= 0.6
    # The deciles are each roughly a tenth.
    for lo in (0.0, 0.5):
        share = sum(lo <= p < lo + 0.1 for p in ps) / len(ps)
        assert 0.03 <= share <= 0.2, (lo, share)


def test_bootstrap_interval_covers_a_known_delta_at_about_its_rate():
    rng = random.Random(5)
    true_delta, covered, sims = 0.05, 0, 150
    for sim in range(sims):
        base = [rng.random() for _ in range(80)]
        cand = [b + true_delta + rng.gauss(0.0, 0.15) for b in base]
        a, b = frames(base, cand)
        row = pr.compare(a, b, resamples=400, seed=sim).metrics.row(0, named=True)
        covered += row["ci_low"] <= true_delta <= row["ci_high"]
    assert 0.88 <= covered / sims <= 0.99, covered / sims


def test_same_seed_same_numbers_other_seed_other_interval():
    rng = random.Random(2)
    base = [rng.random() for _ in range(200)]
    cand = [b + rng.gauss(0.01, 0.1) for b in base]
    a, b = frames(base, cand)
    one = pr.compare(a, b, seed=1).metrics
    assert one.equals(pr.compare(a, b, seed=1).metrics)
    other = pr.compare(a, b, seed=2).metrics
    assert other["ci_low"][0] != one["ci_low"][0]
    assert other["delta"][0] == one["delta"][0]


def test_segments_regressions_and_struct_metrics():
    ids = [f"q{i}" for i in range(6)]
    rouge = lambda f: {t: {"precision": f, "recall": f, "fmeasure": f} for t in ("rouge1", "rouge2", "rougeL", "rougeLsum")}  # noqa: E731
    a = pl.DataFrame(
        {
            "query_id": ids,
            "segment": ["x", "x", "x", "y", "y", "y"],
            "answer": [f"old {i}" for i in range(6)],
            "rouge": [rouge(0.5)] * 6,
        }
    )
    b = a.with_columns(
        pl.Series("rouge", [rouge(0.5), rouge(0.1), rouge(0.5), rouge(0.9), rouge(0.9), rouge(0.9)]),
        pl.Series("answer", [f"new {i}" for i in range(6)]),
    )
    c = pr.compare(a, b, by="segment", top=2)
    metrics = c.metrics["metric"].to_list()
    assert metrics[:4] == [f"rouge.{t}.fmeasure" for t in ("rouge1", "rouge2", "rougeL", "rougeLsum")]
    seg = c.segments.filter(pl.col("metric") == "rouge.rougeL.fmeasure").sort("segment")
    assert seg["segment"].to_list() == ["x", "y"]
    assert seg["delta"].to_list() == pytest.approx([-0.4 / 3, 0.4])
    drops = c.regressions.filter(pl.col("metric") == "rouge.rouge1.fmeasure")
    assert drops.select("key", "baseline_answer", "candidate_answer").row(0) == ("q1", "old 1", "new 1")


def test_summary_means_and_intervals():
    rng = random.Random(8)
    values = [rng.random() for _ in range(500)]
    scores = pl.DataFrame({"query_id": [str(i) for i in range(500)], "mrr": values,
                           "segment": ["a", "b"] * 250})
    out = pr.summary(scores, by="segment")
    overall = out.filter(pl.col("segment") == "all").row(0, named=True)
    assert overall["mean"] == pytest.approx(sum(values) / 500, rel=1e-12)
    se = stats.sem(values)
    assert overall["ci_low"] == pytest.approx(overall["mean"] - 1.96 * se, abs=0.3 * se)
    assert overall["ci_high"] == pytest.approx(overall["mean"] + 1.96 * se, abs=0.3 * se)
    assert sorted(out["segment"].unique().to_list()) == ["a", "all", "b"]


def test_bad_input_is_a_clear_error():
    a, b = frames([0.1, 0.2], [0.3, 0.4])
    with pytest.raises(ValueError, match=r"compare: the baseline table has no id column 'qid'"):
        pr.compare(a, b, id="qid")
    dup = pl.concat([a, a])
    with pytest.raises(ValueError, match=r"compare: 2 keys occur more than once in the baseline table"):
        pr.compare(dup, b)
    with pytest.raises(ValueError, match=r"compare: confidence must be in \(0, 1\), got 1\.5"):
        pr.compare(a, b, confidence=1.5)


def test_settings_left_out_are_the_libraries_defaults():
    a = pl.DataFrame({"query_id": [f"q{i}" for i in range(40)], "mrr": [0.5 + 0.01 * (i % 7) for i in range(40)]})
    b = a.with_columns(pl.col("mrr") + 0.02)
    defaults = pr.compare_defaults()
    implicit = pr.compare(a, b).metrics
    explicit = pr.compare(
        a, b, resamples=defaults["resamples"], confidence=defaults["confidence"], seed=defaults["seed"], top=defaults["top"]
    ).metrics
    assert implicit.equals(explicit)
    assert pr.summary(a).equals(pr.summary(a, resamples=defaults["resamples"], seed=defaults["seed"]))


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_alternatives_and_t_interval_equal_scipy(alternative):
    rng = random.Random(8)
    for n, shift in ((6, 0.05), (40, -0.01), (500, 0.004)):
        base = [rng.random() for _ in range(n)]
        cand = [b + rng.gauss(shift, 0.1) for b in base]
        a, b = frames(base, cand)
        row = pr.compare(a, b, alternative=alternative, confidence=0.9).metrics.row(0, named=True)
        want = stats.ttest_rel(cand, base, alternative=alternative)
        interval = want.confidence_interval(confidence_level=0.9)
        assert row["p_t_test"] == pytest.approx(want.pvalue, rel=1e-10, abs=1e-300)
        for got, expected in ((row["t_ci_low"], interval.low), (row["t_ci_high"], interval.high)):
            if math.isinf(expected):
                assert got == expected
            else:
                assert got == pytest.approx(expected, rel=1e-10, abs=1e-14), (alternative, n)


def test_one_sided_randomization_p_values():
    rng = random.Random(4)
    base = [rng.random() for _ in range(200)]
    better = [b + 0.05 + rng.gauss(0, 0.05) for b in base]
    a, b = frames(base, better)
    p = {alt: pr.compare(a, b, alternative=alt, resamples=999).metrics.row(0, named=True) for alt in ("two-sided", "greater", "less")}
    # A clear improvement: no sign flip reaches it from above, every one from below.
    assert p["greater"]["p_randomization"] == 0.001 and p["greater"]["significant"]
    assert p["less"]["p_randomization"] == 1.0 and not p["less"]["significant"]
    assert p["two-sided"]["p_randomization"] == 0.001
    # Under the null, each one-sided p is about uniform and the two sum to about 1.
    ps = []
    for sim in range(120):
        base = [rng.random() for _ in range(50)]
        cand = [x + rng.gauss(0.0, 0.2) for x in base]
        a, b = frames(base, cand)
        greater = pr.compare(a, b, resamples=299, seed=sim, alternative="greater").metrics["p_randomization"][0]
        less = pr.compare(a, b, resamples=299, seed=sim, alternative="less").metrics["p_randomization"][0]
        assert 1.0 < greater + less <= 1.0 + 3 / 300, (greater, less)
        ps.append(greater)
    assert 0.01 <= sum(x < 0.05 for x in ps) / len(ps) <= 0.12
    with pytest.raises(ValueError, match="compare: alternative must be"):
        pr.compare(a, b, alternative="bigger")  # type: ignore[arg-type]


VERDICT_FIXTURES = Path(__file__).parent.parent / "fixtures" / "verdicts.json"


def test_adjust_p_values_equals_statsmodels_multipletests():
    # Recorded from statsmodels' multipletests by datasets/fixtures/make_verdict_fixtures.py.
    cases = json.loads(VERDICT_FIXTURES.read_text())["multiplicity"]
    assert len(cases) >= 40
    def number(v: float | str) -> float | None:
        # The generator writes a missing p-value (and its adjusted value) as "NaN".
        return None if isinstance(v, str) else v

    for case in cases:
        frame = pl.DataFrame({"p": [number(v) for v in case["p"]]}, schema={"p": pl.Float64})
        for method, key in (("holm", "holm"), ("bh", "fdr_bh")):
            got = frame.select(pr.adjust_p_values("p", method))["p"].to_list()
            for g, want in zip(got, map(number, case[key])):
                if want is None:
                    assert g is None, (method, case)
                    continue
                assert g == pytest.approx(want, rel=1e-12, abs=1e-15), (method, case)
            alpha = case["alpha"]
            assert [g is not None and g <= alpha for g in got] == case[f"{key}_reject"] or any(
                g is not None and abs(g - alpha) < 1e-12 for g in got
            ), (method, case)


def test_adjust_p_values_per_group_keeps_nulls_and_names_bad_rows():
    df = pl.DataFrame({"g": ["a", "a", "b", "b"], "p": [0.01, 0.04, None, 0.02]})
    per_group = df.group_by("g", maintain_order=True).agg(pr.adjust_p_values("p", "holm"))
    assert per_group["p"].to_list() == [[0.02, 0.04], [None, 0.02]]
    with pytest.raises(ValueError, match=r"adjust_p_values: a p-value must be in \[0, 1\], got 1.5 at row 1"):
        pl.DataFrame({"p": [0.1, 1.5]}).select(pr.adjust_p_values("p"))
    with pytest.raises(ValueError, match="adjust must be 'none', 'holm' or 'bh'"):
        pr.adjust_p_values("p", "bonferroni")  # type: ignore[arg-type]


def twelve_metric_frames(seed: int, shift: float, n: int = 200) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = random.Random(seed)
    ids = [f"q{i}" for i in range(n)]
    # Twelve registry ids with plain float values.
    names = ["mrr", "bleu", "chrf", "exact_match", "string_similarity", "keyword_coverage",
             "answer_completeness", "precision_at_k", "recall_at_k", "f1_at_k", "ndcg_at_k", "r_precision"]
    base = {name: [rng.random() for _ in range(n)] for name in names}
    cand = {name: [v + (shift if name == "mrr" else 0.0) + rng.gauss(0, 0.2) for v in base[name]] for name in names}
    segment = [f"s{i % 4}" for i in range(n)]
    return (
        pl.DataFrame({"query_id": ids, "segment": segment, **base}),
        pl.DataFrame({"query_id": ids, "segment": segment, **cand}),
    )


def test_significant_is_decided_for_the_family_of_every_metric_and_segment():
    a, b = twelve_metric_frames(5, 0.08)
    holm = pr.compare(a, b, by="segment", resamples=199)
    rows = pl.concat([holm.metrics.with_columns(segment=pl.lit("all")).select(holm.segments.columns), holm.segments])
    assert rows["family_size"].unique().to_list() == [60]
    # Holm's adjusted p-values over all 60 rows, as statsmodels computes them (recorded cases
    # above); significant where at most alpha.
    p = rows["p_value"].to_list()
    assert (rows["p_value_source"] == "t-test").all()
    assert rows["p_value"].to_list() == rows["p_t_test"].to_list()
    expected = pl.DataFrame({"p": p}).select(pr.adjust_p_values("p", "holm"))["p"].to_list()
    assert rows["p_holm"].to_list() == expected
    assert rows["significant"].to_list() == [q <= 0.05 for q in expected]
    mrr = holm.metrics.filter(pl.col("metric") == "mrr").row(0, named=True)
    assert mrr["significant"] and mrr["win_rate"] > 0.5 and mrr["win_rate_low"] < mrr["win_rate"] < mrr["win_rate_high"]
    # Without adjustment: the randomization p-value decides each row alone (the 0.2 numbers).
    none = pr.compare(a, b, by="segment", resamples=199, adjust="none")
    assert none.metrics["significant"].to_list() == (none.metrics["p_randomization"] < 0.05).to_list()
    assert (none.metrics["p_value_source"] == "randomization").all()
    old = ["delta", "ci_low", "ci_high", "p_randomization", "p_t_test"]
    assert none.metrics.select(old).equals(holm.metrics.select(old))
    # The family named: mrr alone, its rows over all items and per segment (5 tests).
    named = pr.compare(a, b, by="segment", resamples=199, family=["mrr"])
    assert named.metrics.filter(pl.col("metric") == "mrr")["family_size"].to_list() == [5]
    assert named.metrics.filter(pl.col("metric") == "bleu")["family_size"].to_list() == [55]
    with pytest.raises(ValueError, match="compare: family: no metric 'mrr2'"):
        pr.compare(a, b, family=["mrr2"])
    with pytest.raises(TypeError, match="family must be a list of metric names"):
        pr.compare(a, b, family="mrr")  # type: ignore[arg-type]


def test_win_rate_interval_equals_statsmodels_wilson():
    # Recorded from statsmodels' proportion_confint(count, nobs, alpha, method="wilson").
    cases = json.loads(VERDICT_FIXTURES.read_text())["wilson"]
    for count, nobs in ((7, 20), (1, 3)):
        case = next(c for c in cases if (c["count"], c["nobs"], c["alpha"]) == (count, nobs, 0.05))
        base = [0.5] * (nobs + 3)
        cand = [0.6] * count + [0.4] * (nobs - count) + [0.5] * 3
        a, b = frames(base, cand)
        row = pr.compare(a, b).metrics.row(0, named=True)
        assert (row["improved"], row["regressed"], row["unchanged"]) == (count, nobs - count, 3)
        assert row["win_rate"] == pytest.approx(count / nobs)
        assert row["win_rate_low"] == pytest.approx(case["low"], rel=1e-12, abs=1e-15)
        assert row["win_rate_high"] == pytest.approx(case["high"], rel=1e-12, abs=1e-15)


def test_clustered_comparison_equals_statsmodels_cluster_robust_ols():
    # Recorded from statsmodels' OLS(delta, 1).fit(cov_type="cluster", use_correction=True,
    # df_correction=True, use_t=True) by datasets/fixtures/make_verdict_fixtures.py.
    cases = [c for c in json.loads(VERDICT_FIXTURES.read_text())["cluster"] if "no_test" not in c]
    checked = 0
    for case in cases:
        deltas = case["deltas"]
        if isinstance(case["tvalues"], str) or len(set(deltas)) == 1:
            continue  # no test: the library gives a reason instead (below)
        ids = [f"q{i}" for i in range(len(deltas))]
        topic = [str(g) for g in case["clusters"]]
        a = pl.DataFrame({"query_id": ids, "topic": topic, "mrr": [0.0] * len(deltas)})
        b = pl.DataFrame({"query_id": ids, "topic": topic, "mrr": deltas})
        row = pr.compare(a, b, cluster="topic", resamples=99).metrics.row(0, named=True)
        assert row["clusters"] == case["n_clusters"]
        assert row["t_statistic"] == pytest.approx(case["tvalues"], rel=1e-9)
        assert row["p_t_test"] == pytest.approx(case["pvalues"], rel=1e-9, abs=1e-300)
        assert (row["t_ci_low"], row["t_ci_high"]) == pytest.approx(tuple(case["conf_int_95"]), rel=1e-9)
        assert row["design_effect"] == pytest.approx(case["design_effect"], rel=1e-9)
        assert row["interval"] == "cluster-robust t"
        assert (row["ci_low"], row["ci_high"]) == (row["t_ci_low"], row["t_ci_high"])
        checked += 1
    assert checked >= 10


def test_clusters_widen_the_interval_and_bad_clusters_are_named():
    rng = random.Random(11)
    ids = [f"q{i}" for i in range(400)]
    topic = [f"t{i // 10}" for i in range(400)]
    shared = {t: rng.gauss(0, 0.3) for t in set(topic)}
    a = pl.DataFrame({"query_id": ids, "topic": topic, "mrr": [0.5] * 400})
    b = a.with_columns(mrr=pl.Series([0.5 + 0.02 + shared[t] + rng.gauss(0, 0.05) for t in topic]))
    plain = pr.compare(a, b, resamples=299).metrics.row(0, named=True)
    clustered = pr.compare(a, b, resamples=299, cluster="topic").metrics.row(0, named=True)
    assert clustered["delta"] == pytest.approx(plain["delta"], rel=1e-12)
    assert clustered["clusters"] == 40 and clustered["design_effect"] > 5
    assert clustered["effective_n"] == pytest.approx(400 / clustered["design_effect"])
    assert clustered["ci_high"] - clustered["ci_low"] > 2 * (plain["ci_high"] - plain["ci_low"])
    assert plain["clusters"] is None and plain["design_effect"] is None
    # An item in another cluster in the candidate is named; a missing column too.
    moved = b.with_columns(topic=pl.when(pl.col("query_id") == "q7").then(pl.lit("t39")).otherwise("topic"))
    with pytest.raises(ValueError, match=r"item q7 is in cluster 't0' in the baseline table and 't39' in the candidate table"):
        pr.compare(a, moved, cluster="topic")
    with pytest.raises(ValueError, match="compare: the baseline table has no cluster column `topik`"):
        pr.compare(a, b, cluster="topik")
    # One cluster: no cluster-robust test, and the reason.
    one = pr.compare(a.with_columns(topic=pl.lit("x")), b.with_columns(topic=pl.lit("x")), cluster="topic")
    row = one.metrics.row(0, named=True)
    assert row["p_t_test"] is None and row["no_test_reason"] == "no cluster-robust t-test: all items are in one cluster"


def test_integrity_counts_each_run_before_any_delta():
    ids = [f"q{i}" for i in range(10)]
    a = pl.DataFrame({"query_id": ids, "mrr": [0.5] * 10, "bleu": [0.2] * 10})
    # The candidate lacks q9, has no mrr for q0 and a NaN bleu for q1.
    b = pl.DataFrame({"query_id": ids[:9], "mrr": [None] + [0.6] * 8, "bleu": [0.3, float("nan")] + [0.3] * 7})
    integrity = pr.compare(a, b).integrity
    rows = {r["metric"]: r for r in integrity.iter_rows(named=True)}
    assert set(rows) == {"mrr", "bleu"}
    for metric in ("mrr", "bleu"):
        row = rows[metric]
        assert (row["expected"], row["baseline_rows"], row["baseline_scored"], row["baseline_complete"]) == (10, 10, 10, 1.0)
        assert (row["candidate_rows"], row["candidate_scored"], row["candidate_missing"]) == (9, 8, 1)
        assert row["candidate_complete"] == 0.8 and row["candidate_judge_errors"] == 0


def test_integrity_counts_the_judges_errors():
    demo = Path(pr.__file__).parent / "demo"
    a, b = pl.read_parquet(demo / "judged_a.parquet"), pl.read_parquet(demo / "judged_b.parquet")
    failed = pl.col("query_id") == b["query_id"][0]
    b = b.with_columns(
        pl.col("faithfulness").struct.with_fields(
            score=pl.when(failed).then(None).otherwise(pl.field("score")),
            judge_error=pl.when(failed).then(pl.lit("the reply was cut off at max_tokens")).otherwise(pl.field("judge_error")),
        )
    )
    row = pr.compare(a, b).integrity.filter(pl.col("metric") == "faithfulness.score").row(0, named=True)
    assert (row["baseline_judge_errors"], row["candidate_judge_errors"]) == (0, 1)
    assert row["candidate_scored"] == row["baseline_scored"] - 2  # one judge error, one answer missing


def test_plan_equals_statsmodels_ttestpower():
    # Recorded with statsmodels 0.15.0 (datasets/fixtures/requirements-verdicts.txt):
    #   d = [0.1 * (-1) ** i for i in range(100)]; sd = np.std(d, ddof=1)
    #   TTestPower().solve_power(0.02 / sd, power=0.8, alpha=0.05)       -> 200.1327727636366
    #   TTestPower().solve_power(0.02 / sd, power=0.8, alpha=0.05 / 12)  -> 351.10228872972436
    #   TTestPower().solve_power(nobs=100, power=0.8, alpha=0.05) * sd   -> 0.02843369689086483
    #   TTestPower().power(0.02 / sd, nobs=100, alpha=0.05)              -> 0.5043066618312109
    ids = [f"q{i}" for i in range(100)]
    a = pl.DataFrame({"query_id": ids, "mrr": [0.5] * 100})
    b = pl.DataFrame({"query_id": ids, "mrr": [0.5 + 0.1 * (-1) ** i for i in range(100)]})
    row = pr.plan(a, b, mde=0.02).row(0, named=True)
    assert row["delta_sd"] == pytest.approx(0.10050378152592122, rel=1e-12)
    assert row["items_needed"] == 201 and row["design_effect"] == 1.0
    # statsmodels' root for the effect stops at its solver's tolerance (its power there is
    # 0.8 - 2.6e-6); the library's is the exact root (power 0.8 + 1e-15, by statsmodels' own
    # TTestPower().power).
    assert row["detectable_delta"] == pytest.approx(0.02843369689086483, rel=1e-5)
    assert row["power_at_pilot_size"] == pytest.approx(0.5043066618312109, rel=1e-9)
    assert pr.plan(a, b, mde=0.02, tests=12).row(0, named=True)["items_needed"] == 352
    # Clustered: 20 topics of 5 that move together need more items, in whole topics.
    topic = [f"t{i // 5}" for i in range(100)]
    rng = random.Random(4)
    shared = {t: rng.gauss(0, 0.1) for t in set(topic)}
    b2 = pl.DataFrame({"query_id": ids, "topic": topic, "mrr": [0.5 + shared[t] + rng.gauss(0, 0.05) for t in topic]})
    a2 = a.with_columns(topic=pl.Series(topic))
    plain = pr.plan(a2, b2, mde=0.02).row(0, named=True)
    clustered = pr.plan(a2, b2, mde=0.02, cluster="topic").row(0, named=True)
    assert clustered["design_effect"] > 2 and clustered["pilot_clusters"] == 20
    assert clustered["items_needed"] > 2 * plain["items_needed"]
    assert clustered["items_needed"] == clustered["clusters_needed"] * 5
    with pytest.raises(ValueError, match="plan: mde must be a finite delta other than 0"):
        pr.plan(a, b, mde=0.0)
    # No spread: a reason instead of numbers.
    flat = pr.plan(a, a, mde=0.02).row(0, named=True)
    assert flat["items_needed"] is None and "do not vary" in flat["reason"]


def test_leaderboard_ranks_runs_and_its_pairs_are_the_paired_comparisons():
    rng = random.Random(21)
    ids = [f"q{i}" for i in range(300)]
    base = [rng.random() for _ in ids]
    runs = {
        name: pl.DataFrame({"query_id": ids, "mrr": [min(1.0, max(0.0, v + shift + rng.gauss(0, 0.1))) for v in base]})
        for name, shift in (("small", 0.0), ("large", 0.08), ("tuned", 0.09))
    }
    board = pr.leaderboard(runs, resamples=300)
    standings = {r["run"]: r for r in board.standings.iter_rows(named=True)}
    assert standings["small"]["rank"] == 3 and standings["small"]["p_best"] == 0.0
    assert standings["small"]["rank_low"] == standings["small"]["rank_high"] == 3
    # The two close runs share the top: their rank intervals overlap and both win sometimes.
    assert standings["large"]["rank_low"] == 1 and standings["tuned"]["rank_high"] == 2
    assert standings["large"]["p_best"] + standings["tuned"]["p_best"] == pytest.approx(1.0)
    for name, row in standings.items():
        assert row["ci_low"] < row["mean"] < row["ci_high"]
        assert row["mean"] == pytest.approx(runs[name]["mrr"].mean(), rel=1e-12)
    # Each pair's delta and t-test are those of the paired comparison of the two runs.
    pair = board.pairs.filter((pl.col("first") == "small") & (pl.col("second") == "large")).row(0, named=True)
    compared = pr.compare(runs["small"], runs["large"]).metrics.row(0, named=True)
    assert pair["delta"] == pytest.approx(compared["delta"], rel=1e-12)
    assert pair["p_value"] == pytest.approx(compared["p_t_test"], rel=1e-12)
    assert pair["significant"] and board.pairs["p_holm"].min() <= pair["p_holm"]
    with pytest.raises(ValueError, match="leaderboard: needs at least two runs, got 1"):
        pr.leaderboard([runs["small"]])


def _cluster_cases() -> list[dict]:
    cases = json.loads(VERDICT_FIXTURES.read_text())["cluster"]
    return [c for c in cases if "no_test" not in c and not isinstance(c["tvalues"], str) and len(set(c["deltas"])) > 1]


def test_clustered_summary_equals_statsmodels_cluster_robust_ols():
    # The mean of the scores, clustered: statsmodels' OLS(values, 1) with cov_type="cluster"
    # on the recorded cases (the values there are deltas; a summary reads them as scores).
    checked = 0
    for case in _cluster_cases():
        values = case["deltas"]
        scores = pl.DataFrame({"query_id": [f"q{i}" for i in range(len(values))],
                               "topic": [str(g) for g in case["clusters"]], "mrr": values})
        row = pr.summary(scores, cluster="topic", resamples=99).row(0, named=True)
        assert row["clusters"] == case["n_clusters"]
        assert row["mean"] == pytest.approx(sum(values) / len(values), rel=1e-9, abs=1e-15)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(case["conf_int_95"]), rel=1e-9)
        assert row["design_effect"] == pytest.approx(case["design_effect"], rel=1e-9)
        assert row["interval"] == "cluster-robust t"
        checked += 1
    assert checked >= 10
    plain = pr.summary(pl.DataFrame({"mrr": [0.1, 0.2, 0.4]}))
    assert "clusters" not in plain.columns
    with pytest.raises(ValueError, match="summary: the scores table has no cluster column `topik`"):
        pr.summary(pl.DataFrame({"mrr": [0.1, 0.2], "topic": ["a", "b"]}), cluster="topik")
    with pytest.raises(ValueError, match="summary: row 2 of the scores table has no cluster"):
        pr.summary(pl.DataFrame({"mrr": [0.1, 0.2], "topic": ["a", None]}), cluster="topic")


def test_plan_of_one_scores_table_assumes_the_correlation_and_says_so():
    ids = [f"q{i}" for i in range(100)]
    scores = pl.DataFrame({"query_id": ids, "mrr": [0.5 + 0.1 * (-1) ** i for i in range(100)]})
    # The scores' sd (0.1005..., as the paired test above) times sqrt(2 (1 - 0.5)) = 1: the
    # deltas' spread of that test, and statsmodels' 200.13 items, rounded up.
    row = pr.plan(scores, mde=0.02, correlation=0.5).row(0, named=True)
    assert row["delta_sd"] == pytest.approx(0.10050378152592122, rel=1e-12)
    assert (row["items_needed"], row["assumed_correlation"]) == (201, 0.5)
    closer = pr.plan(scores, mde=0.02, correlation=0.75).row(0, named=True)
    assert closer["delta_sd"] == pytest.approx(0.10050378152592122 * math.sqrt(0.5), rel=1e-12)
    assert closer["items_needed"] < 201
    with pytest.raises(ValueError, match="plan: a single scores table needs an assumed correlation"):
        pr.plan(scores, mde=0.02)
    with pytest.raises(ValueError, match="plan: correlation is assumed for a single-table pilot only"):
        pr.plan(scores, scores, mde=0.02, correlation=0.5)
    with pytest.raises(ValueError, match=r"plan: correlation must be in \[-1, 1\)"):
        pr.plan(scores, mde=0.02, correlation=1.0)


def _judged(ids: list[str], samples: list[list[float]], extra: dict | None = None) -> pl.DataFrame:
    faithfulness = [{"score": sum(s) / len(s), "sample_scores": s} for s in samples]
    return pl.DataFrame({"query_id": ids, "faithfulness": faithfulness, **(extra or {})})


def test_plan_for_other_judge_samples_moves_the_judges_share():
    rng = random.Random(5)
    n, k = 300, 3
    ids = [f"q{i}" for i in range(n)]
    quality = [rng.random() for _ in ids]
    delta = [0.03 + rng.gauss(0, 0.05) for _ in ids]
    a = _judged(ids, [[q + rng.gauss(0, 0.2) for _ in range(k)] for q in quality], {"mrr": quality})
    b = _judged(ids, [[q + d + rng.gauss(0, 0.2) for _ in range(k)] for q, d in zip(quality, delta)],
                {"mrr": [q + d for q, d in zip(quality, delta)]})
    rows = {s: {r["metric"]: r for r in pr.plan(a, b, mde=0.02, samples=s).iter_rows(named=True)}
            for s in (None, 1, 10)}
    pilot, one, ten = (rows[s]["faithfulness.score"] for s in (None, 1, 10))
    share = pilot["judge_share"]
    assert pilot["judge_samples"] == 3.0 and 0.5 < share < 1.0
    # The pilot's own spread is the paired deltas' (what compare reports) ...
    compared = pr.compare(a, b, resamples=9).metrics.filter(pl.col("metric") == "faithfulness.score")
    assert pilot["delta_sd"] == pytest.approx(compared["delta_sd"][0], rel=1e-12)
    # ... and the judge's part of its variance scales as 1 / samples.
    for row, samples in ((one, 1), (ten, 10)):
        assert row["judge_samples"] == samples
        expected = pilot["delta_sd"] ** 2 * ((1 - share) + share * 3 / samples)
        assert row["delta_sd"] ** 2 == pytest.approx(expected, rel=1e-12)
    assert one["items_needed"] > pilot["items_needed"] > ten["items_needed"]
    # A metric without judge samples is planned as it is.
    assert rows[1]["mrr"]["judge_samples"] is None
    assert rows[1]["mrr"]["delta_sd"] == rows[None]["mrr"]["delta_sd"]
    with pytest.raises(ValueError, match="plan: samples must be at least 1"):
        pr.plan(a, b, mde=0.02, samples=0)


def test_calibrate_and_labelled_deltas_with_clusters_are_cluster_robust():
    rng = random.Random(9)
    n = 240
    ids = [f"q{i}" for i in range(n)]
    topic = [f"t{i // 12}" for i in range(n)]
    effect = {t: rng.gauss(0, 0.15) for t in set(topic)}
    truth = [0.5 + effect[t] + rng.gauss(0, 0.1) for t in topic]
    scores = pl.DataFrame({"query_id": ids, "topic": topic,
                           "faithfulness": [{"score": v + 0.1 + rng.gauss(0, 0.1)} for v in truth]})
    # Labels on the judge's scale: within the range of its scores.
    low, high = scores["faithfulness"].struct.field("score").min(), scores["faithfulness"].struct.field("score").max()
    labels = pl.DataFrame({"query_id": ids[::4], "faithfulness": [min(max(v, low), high) for v in truth[::4]]})
    plain = pr.calibrate(scores, labels).table.row(0, named=True)
    clustered = pr.calibrate(scores, labels, cluster="topic").table.row(0, named=True)
    assert clustered["ppi_estimate"] == plain["ppi_estimate"] and clustered["ppi_lam"] == plain["ppi_lam"]
    width = lambda r, what: r[f"{what}_ci_high"] - r[f"{what}_ci_low"]  # noqa: E731
    assert width(clustered, "ppi") > 1.5 * width(plain, "ppi")
    assert width(clustered, "classical") > 1.5 * width(plain, "classical")
    assert clustered["labels_to_halve"] is None and "clustered interval" in clustered["reason"]
    with pytest.raises(ValueError, match="calibrate: scores table scores has no cluster column 'topik'"):
        pr.calibrate(scores, labels, cluster="topik")
    # The labelled deltas of two runs: the same estimate, a cluster-robust interval.
    lift = [0.05 + effect[t] / 3 + rng.gauss(0, 0.05) for t in topic]
    better = scores.with_columns(pl.col("faithfulness").struct.with_fields(score=pl.field("score") + pl.Series(lift)))
    scale = better["faithfulness"].struct.field("score")
    gained = labels.with_columns(
        (pl.col("faithfulness") + pl.Series([v - 0.03 + rng.gauss(0, 0.02) for v in lift[::4]])).clip(scale.min(), scale.max())
    )
    plain = pr.labelled_deltas(scores, better, labels, gained).row(0, named=True)
    clustered = pr.labelled_deltas(scores, better, labels, gained, cluster="topic").row(0, named=True)
    assert clustered["ppi_delta"] == pytest.approx(plain["ppi_delta"], rel=1e-12)
    assert clustered["ppi_ci_low"] < clustered["ppi_delta"] < clustered["ppi_ci_high"]
    with pytest.raises(ValueError, match="labelled_deltas: not found: compare: the baseline table has no cluster column 'topik'"):
        pr.labelled_deltas(scores, better, labels, gained, cluster="topik")


def test_plan_with_labels_gives_the_labels_the_labelled_delta_needs():
    rng = random.Random(13)
    n = 400
    ids = [f"q{i}" for i in range(n)]
    truth_a = [rng.random() for _ in ids]
    truth_b = [t + rng.gauss(0.02, 0.1) for t in truth_a]

    def judged(truth: list[float], noise: float) -> pl.DataFrame:
        return pl.DataFrame({"query_id": ids, "faithfulness": [{"score": t + rng.gauss(0, noise)} for t in truth]})

    def labels(truth: list[float], scores: pl.DataFrame) -> pl.DataFrame:
        values = scores["faithfulness"].struct.field("score")
        clip = lambda v: min(max(v, values.min()), values.max())  # noqa: E731
        return pl.DataFrame({"query_id": ids[::4], "faithfulness": [clip(t) for t in truth[::4]]})

    rows = {}
    for noise in (0.02, 0.5):
        a, b = judged(truth_a, noise), judged(truth_b, noise)
        row = pr.plan(a, b, mde=0.03, labels=(labels(truth_a, a), labels(truth_b, b))).row(0, named=True)
        assert row["metric"] == "faithfulness.score" and row["pilot_labels"] == 100
        rows[noise] = row
    # A judge that tracks the labels needs few of them; a noisy one nearly the labels alone.
    assert 1 <= rows[0.02]["labels_needed"] < rows[0.5]["labels_needed"] <= n
    with pytest.raises(ValueError, match="plan: labels are planned from a labelled pilot pair of runs"):
        pr.plan(a, mde=0.03, correlation=0.5, labels=(labels(truth_a, a), labels(truth_b, b)))
    with pytest.raises(ValueError, match="plan: labels are planned for independent items only"):
        pr.plan(a.with_columns(topic=pl.lit("t")), b.with_columns(topic=pl.lit("t")), mde=0.03, cluster="topic",
                labels=(labels(truth_a, a), labels(truth_b, b)))
    with pytest.raises(TypeError, match="plan: labels must be a pair"):
        pr.plan(a, b, mde=0.03, labels=labels(truth_a, a))


def test_integrity_counts_the_judge_samples_scored_rows_lack():
    demo = Path(pr.__file__).parent / "demo"
    a, b = pl.read_parquet(demo / "judged_a.parquet"), pl.read_parquet(demo / "judged_b.parquet")
    samples = b["faithfulness"].struct.field("sample_scores")
    most = samples.list.len().max()
    assert most >= 2
    # One sample call of the first scored row failed: its list holds one sample fewer.
    row = b["faithfulness"].struct.field("score").is_not_null().arg_true()[0]
    short = samples.to_list()
    short[row] = short[row][:-1]
    b = b.with_columns(pl.col("faithfulness").struct.with_fields(sample_scores=pl.Series(short)))
    integrity = pr.compare(a, b).integrity.filter(pl.col("metric") == "faithfulness.score").row(0, named=True)
    assert (integrity["baseline_samples_missing"], integrity["candidate_samples_missing"]) == (0, 1)
    plain = pr.compare(a, b).integrity.filter(pl.col("metric") == "answer_match.score").row(0, named=True)
    assert plain["candidate_samples_missing"] == 0
