"""Each analysis on small hand-made tables whose answers are worked out here.

Closed forms used (each stated where used): the Wilson interval (the guide's formula), the
exact McNemar p-value ``2 P(Bin(b + c, 1/2) <= min(b, c))``, the Clopper–Pearson one-sided
upper bound ``Beta(1 − α; x + 1, n − x)`` (``1 − α^(1/n)`` at x = 0), the Miller (2024)
variance decomposition, and the CR0/CR1 cluster-robust standard error of a mean.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalspec.analyses.context import AnalysisContext
from evalspec.testing import context_from_arrays
from evalspec.analyses.clustered import ClusteredMeanParams
from evalspec.analyses.critical import CriticalFailuresParams
from evalspec.analyses.paired import PairedDifferenceParams
from evalspec.analyses.proportion import ProportionParams
from evalspec.analyses.slices import SlicesParams
from evalspec.analyses.variation import RunVariationParams
from evalspec.analyses.registry import get
from evalspec.plan.model import Slice

Z95 = 1.959963984540054


def wilson(x: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The guide "Repeat AI evaluations and report uncertainty honestly": centre (p + z²/2n)/(1 + z²/n), half-width z sqrt(p(1−p)/n + z²/4n²)/(1 + z²/n)."""
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def ctx_two(a: list[int], b: list[int], *, clusters: list[str] | None = None, columns: dict | None = None,
            **kw) -> AnalysisContext:
    """Two candidates A, B with one attempt per case."""
    n = len(a)
    ids = [f"c{i + 1}" for i in range(n)]
    return context_from_arrays(["A", "B"], ids, [0] * n + [1] * n, list(range(n)) * 2,
                                       [float(v) for v in a + b], clusters=clusters, case_columns=columns,
                                       baseline="B", **kw)


def test_proportion_wilson() -> None:
    ctx = ctx_two([1, 1, 1, 0], [1, 0, 0, 0])
    res = get("proportion")(ctx, ProportionParams(kind="proportion"))
    a = res["candidates"]["A"]
    assert (a["successes"], a["n"], a["estimate"]) == (3, 4, 0.75)
    lo, hi = wilson(3, 4)
    assert a["low"] == pytest.approx(lo, abs=1e-12) and a["high"] == pytest.approx(hi, abs=1e-12)
    assert res["candidates"]["B"]["successes"] == 1


def test_proportion_reproduces_the_guides_worked_example() -> None:
    ctx = ctx_two([1] * 82 + [0] * 18, [1] * 78 + [0] * 22)
    a = get("proportion")(ctx, ProportionParams(kind="proportion"))["candidates"]["A"]
    assert round(a["low"], 3) == 0.733 and round(a["high"], 3) == 0.883


A6 = [1, 1, 1, 0, 0, 1]
B6 = [1, 0, 0, 0, 1, 1]   # a = 2 (c1, c6), b = 2 (c2, c3), c = 1 (c5), d = 1 (c4)


def test_paired_difference_table_ids_mcnemar() -> None:
    ctx = ctx_two(A6, B6)
    res = get("paired_difference")(ctx, PairedDifferenceParams(kind="paired_difference"))
    # auto without clusters, at most 100 pass/fail cases: the interval of the exact unconditional test
    assert res["method"] == "exact (inverted exact unconditional test, Sidik 2003)"
    assert res["table"] == {"a": 2, "b": 2, "c": 1, "d": 1, "n": 6}
    assert res["estimate"] == pytest.approx(1 / 6)
    assert [d["case"] for d in res["disagreements"]["candidate_only"]] == ["c2", "c3"]
    assert [d["case"] for d in res["disagreements"]["baseline_only"]] == ["c5"]
    # exact McNemar, b = 2, c = 1: 2 * P(Bin(3, 1/2) <= 1) = 2 * 4/8 = 1
    assert res["mcnemar"]["pvalue"] == pytest.approx(1.0)
    assert res["low"] < res["estimate"] < res["high"]
    assert res["clusters"] is None and res["bootstrap"] is None


def test_paired_difference_cluster_contributions() -> None:
    # clusters x = {c1, c2}, y = {c3, c4}, z = {c5, c6}: nets +1, +1, -1; total net = 1.
    # Three clusters are too few for any cluster interval (evalspec.analyses.paired.MIN_CLUSTERS = 5):
    # the interval is marked uninformative, but the contributions are still listed.
    ctx = ctx_two(A6, B6, clusters=["x", "x", "y", "y", "z", "z"])
    params = PairedDifferenceParams(kind="paired_difference", method="cluster_bootstrap", top_clusters=2,
                                    resamples=500, seed=3)
    res = get("paired_difference")(ctx, params)
    assert res["method"].startswith("none (only 3 clusters") and res["informative"] is False
    assert res["bootstrap"] is None          # not run, so no seed was used
    rows = res["clusters"]["contributions"]
    assert [(r["cluster"], r["b"], r["c"], r["net"], r["share"]) for r in rows] == [
        ("x", 1, 0, 1, 1.0), ("y", 1, 0, 1, 1.0), ("z", 0, 1, -1, -1.0)]
    assert res["clusters"]["top_share"] == pytest.approx(2.0)   # the top two give twice the net difference
    assert res["disagreements"]["baseline_only"] == [{"case": "c5", "cluster": "z"}]


def test_paired_difference_under_mean_rule_uses_a_cluster_method() -> None:
    # three cases, two repeats per candidate: A means (1, .5, 0), B means (.5, 0, 0)
    ctx = context_from_arrays(
        ["A", "B"], ["c1", "c2", "c3"], [0] * 6 + [1] * 6, [0, 0, 1, 1, 2, 2] * 2,
        [1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0], repeat=[1, 2] * 6, rule="mean", baseline="B")
    res = get("paired_difference")(ctx, PairedDifferenceParams(kind="paired_difference", method="newcombe",
                                                              resamples=200))
    assert res["table"] is None and res["mcnemar"] is None
    # only 2 cases differ: fewer than MIN_DISAGREEING_UNITS (5), so the case-level t interval cannot mean anything
    assert res["method"].startswith("none (only 2 of 3 cases") and res["informative"] is False
    assert res["estimate"] == pytest.approx((1 + 0.5 + 0 - 0.5 - 0 - 0) / 3)
    assert any("2x2 table is undefined" in n for n in res["notes"])


def test_critical_failures_bounds() -> None:
    # A: 5 critical cases, none failed; B: 1 of 5 failed
    crit = [True] * 5 + [False]
    ctx = ctx_two([1, 1, 1, 1, 1, 0], [1, 1, 0, 1, 1, 1], columns={"critical": crit}, critical_max_rate=0.05,
                  critical_level=0.95)
    res = get("critical_failures")(ctx, CriticalFailuresParams(kind="critical_failures"))
    a, b = res["candidates"]["A"], res["candidates"]["B"]
    assert (a["critical_cases"], a["failures"], a["rate"]) == (5, 0, 0.0)
    assert a["upper_bound"] == pytest.approx(1 - 0.05 ** (1 / 5), abs=1e-10)       # 0.4507
    assert a["within_limit"] is False
    assert a["note"].startswith("None observed is not zero risk")
    assert (b["failures"], b["failed_cases"]) == (1, ["c3"])
    assert b["upper_bound"] == pytest.approx(sps.beta.ppf(0.95, 2, 4), abs=1e-10)   # CP: Beta(1−α; x+1, n−x)


def test_critical_failures_no_limit_and_no_cases() -> None:
    ctx = ctx_two([1, 0], [1, 1], columns={"critical": [False, False]})
    res = get("critical_failures")(ctx, CriticalFailuresParams(kind="critical_failures"))
    a = res["candidates"]["A"]
    assert a["critical_cases"] == 0 and a["upper_bound"] is None and a["within_limit"] is None


def test_run_variation_decomposition() -> None:
    # one candidate, 3 cases x 2 repeats: p = (1, .5, 0)
    ctx = context_from_arrays(["M"], ["c1", "c2", "c3"], [0] * 6, [0, 0, 1, 1, 2, 2],
                                      [1, 1, 1, 0, 0, 0], repeat=[1, 2] * 3, rule="mean", planned_repeats=2)
    m = get("run_variation")(ctx, RunVariationParams(kind="run_variation"))["candidates"]["M"]
    # within_i = p(1-p) K/(K-1) = (0, .5, 0): mean 1/6
    assert m["within_case_variance"] == pytest.approx(1 / 6)
    # Var(p, ddof=1) = .25; minus mean(within_i / K) = 1/12  ->  1/6
    assert m["between_case_variance"] == pytest.approx(0.25 - 1 / 12)
    assert m["agreement"] == pytest.approx(2 / 3)
    se = {row["repeats"]: row["se"] for row in m["se_by_repeats"]}
    assert se[2] == pytest.approx(math.sqrt(0.25 / 3))   # at the observed K: the plain SE of the case means
    assert se[1] == pytest.approx(1 / 3)                 # (1/6 + 1/6) / 3
    assert m["se_limit"] == pytest.approx(math.sqrt((1 / 6) / 3))


def test_run_variation_without_repeats_says_so() -> None:
    ctx = ctx_two([1, 0, 1], [0, 0, 1])
    m = get("run_variation")(ctx, RunVariationParams(kind="run_variation"))["candidates"]["A"]
    assert m["within_case_variance"] is None and m["se_by_repeats"] == []
    assert "cannot be separated" in m["note"]


def test_slices_confirmatory_and_exploratory() -> None:
    cols = {"topic": ["x", "x", "y", "y", "y", "x"], "lang": ["en", "de", "en", "en", "de", "en"]}
    ctx = ctx_two(A6, B6, columns=cols, slices=[Slice(name="topic", column="topic")])
    res = get("slices")(ctx, SlicesParams(kind="slices", exploratory=["lang"]))["slices"]
    topic, lang = res
    assert (topic["name"], topic["confirmatory"]) == ("topic", True)
    x = next(g for g in topic["groups"] if g["value"] == "x")        # c1, c2, c6
    assert x["n"] == 3
    assert x["candidates"]["A"]["successes"] == 3 and x["candidates"]["B"]["successes"] == 2
    assert x["paired"]["table"] == {"a": 2, "b": 1, "c": 0, "d": 0, "n": 3}
    assert (lang["confirmatory"], lang["label"]) == (False, "exploratory")
    assert sorted(g["value"] for g in lang["groups"]) == ["de", "en"]


def test_clustered_mean_cr1_by_hand() -> None:
    # one candidate, scores on 4 cases in 2 clusters, one attempt each
    scores = [2.0, 4.0, 6.0, 10.0]
    ctx = context_from_arrays(["M"], ["c1", "c2", "c3", "c4"], [0] * 4, [0, 1, 2, 3], [1, 1, 1, 1],
                                      score=scores, clusters=["g", "g", "h", "h"])
    m = get("clustered_mean")(ctx, ClusteredMeanParams(kind="clustered_mean"))["candidates"]["M"]
    # mean 5.5; residual totals: g = -3.5 - 1.5 = -5, h = .5 + 4.5 = 5; CR0 = sqrt(50)/4; CR1 x sqrt(G/(G-1))
    se = math.sqrt(50) / 4 * math.sqrt(2)
    assert m["estimate"] == pytest.approx(5.5)
    assert m["se"] == pytest.approx(se)
    assert m["df"] == 1 and m["n_clusters"] == 2
    t = sps.t.ppf(0.975, 1)
    assert m["low"] == pytest.approx(5.5 - t * se) and m["high"] == pytest.approx(5.5 + t * se)


def test_equivalence_goal_reads_the_primary_interval() -> None:
    # one error rate: equivalence is decided by the same two one-sided bounds as every goal, so there is no
    # separate 1 - 2 alpha (TOST) interval in the result (tests/decision covers the verdicts)
    from evalspec.stats import paired_difference_interval

    a = [1] * 40 + [1] * 3 + [0] * 2 + [0] * 5
    b = [1] * 40 + [0] * 3 + [1] * 2 + [0] * 5     # table (40, 3, 2, 5)
    ctx = ctx_two(a, b, goal="equivalence", margin=0.1)
    res = get("paired_difference")(ctx, PairedDifferenceParams(kind="paired_difference", method="newcombe"))
    assert "equivalence" not in res
    ref = paired_difference_interval(40, 3, 2, 5, method="newcombe", confidence_level=0.95)
    assert (res["low"], res["high"]) == (pytest.approx(ref.low), pytest.approx(ref.high))
    assert res["one_sided_level"] == pytest.approx(0.975)


def test_paired_difference_auto_few_clusters_is_uninformative() -> None:
    # three clusters: below MIN_CLUSTERS (5) a cluster interval cannot mean anything
    ctx = ctx_two(A6, B6, clusters=["x", "x", "y", "y", "z", "z"])
    res = get("paired_difference")(ctx, PairedDifferenceParams(kind="paired_difference"))
    assert res["informative"] is False and "only 3 clusters" in res["why_uninformative"]
    assert res["estimate"] == pytest.approx(1 / 6)
    assert res["bootstrap"] is None and res["cluster_t"] is None


def test_paired_difference_auto_cluster_t_matches_stats_kernel() -> None:
    # 12 clusters of 5: the interval is exactly evalspec.stats' CR2 t interval of x - y; with equal cluster
    # sizes CR2 equals CR1 and the Bell-McCaffrey df equals G - 1 = 11.
    from evalspec.stats import clustered_mean_interval
    rng = np.random.default_rng(11)
    a = [int(v) for v in rng.random(60) < 0.8]
    b = [int(v) for v in rng.random(60) < 0.7]
    clusters = [f"k{i // 5}" for i in range(60)]
    res = get("paired_difference")(ctx_two(a, b, clusters=clusters), PairedDifferenceParams(kind="paired_difference"))
    ref = clustered_mean_interval(np.array(a) - np.array(b), clusters, confidence_level=0.95, correction="CR2")
    cr1 = clustered_mean_interval(np.array(a) - np.array(b), clusters, confidence_level=0.95, correction="CR1")
    assert res["method"] == "cluster_t (CR2, t on 11.0 df)"
    assert (res["low"], res["high"]) == (pytest.approx(ref.low), pytest.approx(ref.high))
    assert (res["low"], res["high"]) == (pytest.approx(cr1.low), pytest.approx(cr1.high))
    assert res["cluster_t"]["df"] == pytest.approx(11)


def test_paired_difference_auto_at_50_clusters_is_still_cr2() -> None:
    # no switch to the bootstrap at G = 50 (coverage dropped 1.5-5 points there)
    rng = np.random.default_rng(5)
    a = [int(v) for v in rng.random(100) < 0.8]
    b = [int(v) for v in rng.random(100) < 0.7]
    clusters = [f"k{i // 2}" for i in range(100)]
    res = get("paired_difference")(ctx_two(a, b, clusters=clusters),
                                   PairedDifferenceParams(kind="paired_difference", resamples=300, seed=1))
    assert res["method"].startswith("cluster_t (CR2")
    assert res["cluster_t"]["n_units"] == 50 and res["bootstrap"] is None


def test_paired_difference_no_disagreement_falls_back_to_newcombe() -> None:
    # b = c = 0 in 6 clusters of 2: a cluster interval would be [0, 0]; Newcombe with the clusters as the units,
    # i.e. the table (6, 0, 0, 6) scaled to 6 units: (3, 0, 0, 3)
    a = [1] * 6 + [0] * 6
    ctx = ctx_two(a, list(a), clusters=[f"k{i // 2}" for i in range(12)])
    res = get("paired_difference")(ctx, PairedDifferenceParams(kind="paired_difference", method="cluster_bootstrap"))
    from evalspec.stats import paired_difference_interval

    ref = paired_difference_interval(3, 0, 0, 3, method="newcombe")
    assert res["method"] == "newcombe on 6 clusters (no disagreement)" and res["estimate"] == 0.0
    assert (res["low"], res["high"]) == (pytest.approx(ref.low), pytest.approx(ref.high))
    assert res["low"] < 0 < res["high"]
    assert any("No case disagrees" in n for n in res["notes"])
