"""proportion, run_variation and clustered_mean under the contract: typed results, caveats,
and cluster-aware numbers checked against values worked out here from the formulas.

Formulas used (each independent of the code under test):

* CR2 standard error of a mean (intercept-only model, working independence): with residual
  totals ``E_g`` and cluster sizes ``n_g``, ``se² = Σ_g E_g² / (1 − n_g/n) / n²`` (Bell and
  McCaffrey 2002; the leverage of cluster g is ``n_g/n``).
* The Korn–Graubard cluster-aware proportion interval is never narrower than the
  independent-cases interval of the same method (its definition), and with homogeneous
  clusters (every case of a cluster alike) the design effect exceeds 1, so it is wider.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.analyses.context import AnalysisContext
from evalspec.testing import context_from_arrays
from evalspec.analyses.registry import get_kind
from evalspec.stats import clustered_mean_interval, proportion_interval


def _one(values: list[float], clusters: list[str] | None = None, *, repeats: list[list[float]] | None = None,
         **kw) -> AnalysisContext:
    """One candidate M; ``values`` one attempt per case, or ``repeats`` per case."""
    if repeats is None:
        repeats = [[v] for v in values]
    cand, case, rep, passed = [], [], [], []
    for i, attempts in enumerate(repeats):
        for r, v in enumerate(attempts, start=1):
            cand.append(0)
            case.append(i)
            rep.append(r)
            passed.append(v)
    return context_from_arrays(["M"], [f"c{i}" for i in range(len(repeats))], cand, case, passed,
                                       repeat=rep, clusters=clusters, **kw)


def _run(kind: str, ctx: AnalysisContext, **params):
    k = get_kind(kind)
    return k.compute(ctx, k.params(kind=kind, **params))


def _cr2_se(values: list[float], clusters: list[str]) -> float:
    x = np.asarray(values, dtype=float)
    n = x.size
    resid = x - x.mean()
    total = 0.0
    for g in sorted(set(clusters)):
        sel = np.array([c == g for c in clusters])
        total += resid[sel].sum() ** 2 / (1 - sel.sum() / n)
    return math.sqrt(total) / n


def test_clustered_mean_defaults_to_cr2_worked_by_hand() -> None:
    # unequal clusters g (2 cases), h (3 cases): mean 4.6, residual totals -3.2 and 3.2
    scores, clusters = [2.0, 4.0, 6.0, 10.0, 1.0], ["g", "g", "h", "h", "h"]
    ctx = context_from_arrays(["M"], [f"c{i}" for i in range(5)], [0] * 5, list(range(5)), [1] * 5,
                                      score=scores, clusters=clusters)
    out = _run("clustered_mean", ctx)
    m = out.result.candidates["M"]
    se = math.sqrt((3.2 ** 2 / 0.6 + 3.2 ** 2 / 0.4) / 25)   # = 1.306395...
    assert m.correction == "CR2" and m.estimate == pytest.approx(4.6)
    assert m.se == pytest.approx(se, rel=1e-12)
    kernel = clustered_mean_interval(scores, clusters, confidence_level=0.95, correction="CR2")
    assert m.df == pytest.approx(kernel.df) and (m.low, m.high) == pytest.approx((kernel.low, kernel.high))
    assert m.low < m.estimate < m.high
    assert [c.code for c in out.caveats] == ["few_clusters"]   # 2 clusters: an unstable interval, said so


def test_clustered_mean_cr1_on_request_uses_g_minus_1_df() -> None:
    scores, clusters = [2.0, 4.0, 6.0, 10.0, 1.0], ["g", "g", "h", "h", "h"]
    ctx = context_from_arrays(["M"], [f"c{i}" for i in range(5)], [0] * 5, list(range(5)), [1] * 5,
                                      score=scores, clusters=clusters)
    m = _run("clustered_mean", ctx, correction="CR1").result.candidates["M"]
    # CR1: sqrt(G/(G-1)) * sqrt(sum E_g^2) / n = sqrt(2) * sqrt(2 * 3.2^2) / 5
    assert m.se == pytest.approx(math.sqrt(2) * math.sqrt(2 * 3.2 ** 2) / 5, rel=1e-12) and m.df == 1


def test_proportion_with_clusters_is_cluster_aware_and_never_narrower() -> None:
    # 10 clusters of 4 alike cases: 6 clusters pass, 4 fail -> 24 of 40, design effect > 1
    values = [1.0] * 24 + [0.0] * 16
    clusters = [f"g{i // 4}" for i in range(40)]
    out = _run("proportion", _one(values, clusters))
    m = out.result.candidates["M"]
    ind = proportion_interval(24, 40, method="wilson", confidence_level=0.95)
    assert m.method.startswith("wilson") and "cluster" in m.method
    assert (m.successes, m.n, m.n_clusters) == (24, 40, 10)
    assert m.design_effect > 1
    assert m.low < ind.low and m.high > ind.high       # strictly wider than the independent Wilson
    assert out.caveats == []


def test_proportion_without_clusters_is_the_plan_method_and_method_substitution_is_said() -> None:
    m = _run("proportion", _one([1.0] * 82 + [0.0] * 18)).result.candidates["M"]
    assert m.method == "wilson" and round(m.low, 3) == 0.733 and round(m.high, 3) == 0.883
    clusters = [f"g{i % 10}" for i in range(100)]
    out = _run("proportion", _one([1.0] * 82 + [0.0] * 18, clusters), method="jeffreys")
    assert [c.code for c in out.caveats] == ["method_substituted"]
    assert "jeffreys interval has no cluster-aware form" in out.caveats[0].message


def test_proportion_mean_rule_is_a_cr2_t_interval() -> None:
    repeats = [[1.0, 1.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 1.0]]
    clusters = ["a", "a", "b", "b", "c", "c"]
    m = _run("proportion", _one([], clusters, repeats=repeats, rule="mean")).result.candidates["M"]
    means = [1.0, 0.5, 0.0, 1.0, 0.5, 1.0]
    kernel = clustered_mean_interval(means, clusters, confidence_level=0.95, correction="CR2")
    assert m.method == "clustered_mean_t (CR2)" and m.successes == pytest.approx(4.0)
    assert m.low == pytest.approx(max(0.0, kernel.low)) and m.high == pytest.approx(min(1.0, kernel.high))
    assert m.note and "not a binomial interval" in m.note


@pytest.mark.parametrize(("clusters", "relation"), [
    # alike cases share a cluster: the clustered SE is wider than the independent one
    (["a", "a", "a", "b", "b", "b"], "wider than"),
    # each cluster holds one high and one low case: the clustered SE is narrower
    (["a", "b", "c", "a", "b", "c"], "narrower than"),
])
def test_run_variation_gives_the_cr2_se_over_clusters_and_says_which_way_it_goes(clusters: list[str],
                                                                                  relation: str) -> None:
    repeats = [[1.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 1.0]]
    out = _run("run_variation", _one([], clusters, repeats=repeats, planned_repeats=2))
    m = out.result.candidates["M"]
    means = [1.0, 1.0, 0.5, 0.0, 0.0, 0.5]
    assert m.se_clustered == pytest.approx(_cr2_se(means, clusters), rel=1e-12)
    assert m.n_clusters == len(set(clusters))
    assert m.se == pytest.approx(math.sqrt(np.var(means, ddof=1) / 6))   # at the observed K: plain SE of case means
    (caveat,) = out.caveats
    assert caveat.code == "cases_independent" and caveat.severity == "note"
    assert f"{m.se_clustered:.3f}, {relation} the {m.se:.3f}" in caveat.message


def test_results_are_typed_and_refuse_wrong_types() -> None:
    from pydantic import ValidationError

    out = _run("proportion", _one([1.0, 0.0, 1.0]))
    dumped = out.result.model_dump(mode="json")
    assert type(out.result).model_validate(dumped) == out.result
    dumped["candidates"]["M"]["low"] = "low"
    with pytest.raises(ValidationError):
        type(out.result).model_validate(dumped, strict=True)


# -- invariants (hypothesis) ----------------------------------------------------------------------

@st.composite
def clustered_binary(draw: st.DrawFn) -> tuple[list[float], list[str]]:
    n = draw(st.integers(min_value=4, max_value=60))
    g = draw(st.integers(min_value=2, max_value=min(12, n)))
    clusters = [f"g{i % g}" for i in range(n)]
    values = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))
    return values, clusters


@settings(max_examples=60, deadline=None, derandomize=True)
@given(clustered_binary(), st.sampled_from(["wilson", "clopper_pearson", "jeffreys"]))
def test_cluster_aware_proportion_contains_its_estimate_and_is_never_narrower(data, method: str) -> None:
    values, clusters = data
    m = _run("proportion", _one(values, clusters), method=method).result.candidates["M"]
    assert 0.0 <= m.low <= m.estimate <= m.high <= 1.0
    kernel_method = "clopper_pearson" if method == "clopper_pearson" else "wilson"
    ind = proportion_interval(int(sum(values)), len(values), method=kernel_method, confidence_level=0.95)
    assert m.low <= ind.low + 1e-12 and m.high >= ind.high - 1e-12


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=2, max_size=2), min_size=3, max_size=40))
def test_run_variation_is_coherent(repeats: list[list[float]]) -> None:
    m = _run("run_variation", _one([], None, repeats=repeats, planned_repeats=2)).result.candidates["M"]
    assert m.within_case_variance is not None and m.within_case_variance >= 0
    assert m.between_case_variance is not None and m.between_case_variance >= 0
    ses = [row.se for row in m.se_by_repeats]
    assert all(a >= b - 1e-15 for a, b in zip(ses, ses[1:]))     # more repeats never widen the SE
    assert m.se_limit is not None and m.se is not None and m.se_limit <= m.se + 1e-15
    assert m.agreement is not None and 0.0 <= m.agreement <= 1.0
