"""The ``ranking`` kind: the kernel's numbers in the claim's shape, plan pairs marked, caveats, the plot."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from evalspec.analyses.contract import AnalysisRefused
from evalspec.testing import context_from_arrays
from evalspec.analyses.ranking import RankingParams, compute
from evalspec.report.sections.ranking import section_plots
from evalspec.stats.ranking import rank_intervals


def ctx_for(rates, n=200, clusters=50, seed=0, drop=0, names=None):
    rng = np.random.default_rng(seed)
    k = len(rates)
    names = names or [f"M{j}" for j in range(k)]
    values = (rng.random((n, k)) < np.asarray(rates)).astype(float)
    cand, case, passed = [], [], []
    for j in range(k):
        for i in range(n):
            if j == 0 and i < drop:
                continue  # M0 has no outcome on the first `drop` cases
            cand.append(j)
            case.append(i)
            passed.append(values[i, j])
    ctx = context_from_arrays(names, [f"c{i}" for i in range(n)], cand, case, passed,
                                      clusters=[f"g{i * clusters // n}" for i in range(n)], baseline=names[-1],
                                      missing_policy="exclude")
    return ctx, values


def params(**kw) -> RankingParams:
    return RankingParams.model_validate({"kind": "ranking", "resamples": 1000, **kw})


def test_result_is_the_kernels_on_common_cases() -> None:
    ctx, values = ctx_for([0.3, 0.5, 0.52, 0.8], drop=10)
    out = compute(ctx, params(seed=3))
    r = rank_intervals(values[10:], ctx.case_cluster[10:], resamples=1000, seed=3)
    res = out.result
    assert res.cases == 190 and res.left_out == 10
    names = ["M0", "M1", "M2", "M3"]
    assert [row.candidate for row in res.ranks] == [names[j] for j in np.argsort(-r.estimates, kind="stable")]
    by = {row.candidate: row for row in res.ranks}
    for j, name in enumerate(["M0", "M1", "M2", "M3"]):
        assert (by[name].rank_low, by[name].rank_high) == (r.rank_low[j], r.rank_high[j])
        assert by[name].estimate == pytest.approx(r.estimates[j])
    assert res.critical_value == pytest.approx(r.critical)
    assert len(res.pairs) == 6 and res.best_set == ["M3"]
    assert any({"M1", "M2"} <= set(g) for g in res.groups)
    assert "cases_left_out" in {c.code for c in out.caveats}
    assert [s.seed for s in out.seeds] == [3]
    assert out.offers.primary is None


def test_plan_pairs_are_marked_and_adjusted() -> None:
    ctx, _ = ctx_for([0.4, 0.47, 0.5, 0.55, 0.6], n=300, clusters=100, seed=4)
    plan_analyses = [SimpleNamespace(kind="paired_difference", compare=("M1", "M0"))]
    ctx = dataclasses.replace(ctx, plan=SimpleNamespace(decision=ctx.plan.decision, analyses=plan_analyses))
    out = compute(ctx, params())
    marked = [p for p in out.result.pairs if p.in_plan]
    assert [(p.first, p.second) for p in marked] == [("M1", "M0")]
    for p in out.result.pairs:
        assert p.holm_pvalue >= p.pvalue
        assert p.told_apart == (p.low > 0 or p.high < 0)


def test_needs_three_candidates() -> None:
    ctx, _ = ctx_for([0.3, 0.6])
    with pytest.raises(AnalysisRefused, match="at least three"):
        compute(ctx, params())


def test_few_units_and_nothing_told_apart() -> None:
    ctx, _ = ctx_for([0.5, 0.5, 0.5], n=24, clusters=8, seed=1)
    out = compute(ctx, params())
    codes = {c.code for c in out.caveats}
    assert {"few_units", "no_rank_told_apart"} <= codes
    assert all(c.severity == "note" for c in out.caveats)


def test_plot_escapes_names_and_shows_every_candidate() -> None:
    names = ["<b>x</b>", "a & b", "plain"]
    ctx, _ = ctx_for([0.2, 0.5, 0.8], names=names)
    out = compute(ctx, params())
    record = {"index": 4, "kind": "ranking", "result": out.result.model_dump(mode="json")}
    svg = section_plots(record)["ranks-4"]
    assert svg.startswith("<svg") and "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg and "a &amp; b" in svg
    assert svg.count("<circle") == 3 and 'aria-label="Rank of each candidate' in svg


def test_a_model_grader_is_named() -> None:
    ctx, _ = ctx_for([0.3, 0.5, 0.8])
    judged = SimpleNamespace(decision=ctx.plan.decision, analyses=[], data=SimpleNamespace(grader="model"))
    out = compute(dataclasses.replace(ctx, plan=judged), params())
    assert "ranks_of_judge_labels" in {c.code for c in out.caveats}
    assert "ranks_of_judge_labels" not in {c.code for c in compute(ctx, params()).caveats}


def judged_ctx(seed: int = 0, n: int = 300, clusters: int = 60, share: float = 0.3):
    """Four candidates, the judge lenient with the weaker ones; people label a random share of the cases."""
    from evalspec.analyses.judge_corrected import JudgeCorrectedParams

    rng = np.random.default_rng(seed)
    truth, lenient = np.array([0.55, 0.62, 0.69, 0.76]), np.array([0.7, 0.45, 0.2, 0.0])
    y = (rng.random((n, 4)) < truth).astype(float)
    f = np.where(y == 1, 1.0, (rng.random((n, 4)) < lenient).astype(float))
    lab = rng.random(n) < share
    names = ["M0", "M1", "M2", "M3"]
    cand = [j for j in range(4) for _ in range(n)]
    case = list(range(n)) * 4
    ctx = context_from_arrays(names, [f"c{i}" for i in range(n)], cand, case, list(f.T.reshape(-1)),
                              clusters=[f"g{i * clusters // n}" for i in range(n)], baseline="M0")
    human = np.array([y[i, j] if lab[i] else None for j in range(4) for i in range(n)], dtype=object)
    jc = JudgeCorrectedParams.model_validate({"kind": "judge_corrected", "human_label": "human",
                                              "labelled_subset": {"selection": "simple_random"}})
    plan = SimpleNamespace(decision=ctx.plan.decision, analyses=[jc], data=SimpleNamespace(grader="model"))
    ctx = dataclasses.replace(ctx, plan=plan, repeats=dataclasses.replace(ctx.repeats, columns={"human": human}))
    return ctx, y, f, lab


def test_with_a_labelled_subset_the_ranks_are_of_the_corrected_rates() -> None:
    from evalspec.stats.ranking import ppi_rank_intervals

    ctx, y, f, lab = judged_ctx()
    out = compute(ctx, params(seed=4))
    res = out.result
    r = ppi_rank_intervals(np.where(lab[:, None], y, np.nan), f, lab, ctx.case_cluster, resamples=1000, seed=4)
    by = {row.candidate: row for row in res.ranks}
    for j, name in enumerate(["M0", "M1", "M2", "M3"]):
        assert by[name].estimate == pytest.approx(r.estimates[j])
        assert (by[name].rank_low, by[name].rank_high) == (r.rank_low[j], r.rank_high[j])
        assert res.judge_estimates[name] == pytest.approx(f[:, j].mean())
    assert res.ranks_of == "human_label" and res.human_label == "human"
    assert res.labelled_cases == int(lab.sum()) and res.labelled_units == len(set(ctx.case_cluster[lab].tolist()))
    assert "PPI++" in res.method
    assert "ranks_of_judge_labels" not in {c.code for c in out.caveats}
    # the judge alone puts M0 (truly worst) on top; the corrected ranks put M3 first
    judge_only = compute(ctx, params(seed=4, ranks_of="outcome"))
    assert judge_only.result.ranks[0].candidate == "M0" and judge_only.result.ranks_of == "outcome"
    assert "ranks_of_judge_labels" in {c.code for c in judge_only.caveats}
    assert res.ranks[0].candidate == "M3"


def test_corrected_ranks_refuse_too_few_labelled_units() -> None:
    ctx, *_ = judged_ctx(share=0.02)
    with pytest.raises(AnalysisRefused, match="ranks_of: outcome"):
        compute(ctx, params())


def test_ranks_of_is_left_out_of_the_plan_hash_when_unset() -> None:
    assert "ranks_of" not in params().model_dump()
    assert params(ranks_of="outcome").model_dump()["ranks_of"] == "outcome"
