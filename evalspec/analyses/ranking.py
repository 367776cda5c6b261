"""The ``ranking`` analysis: where each of many candidates ranks, with intervals that hold together.

With more than two candidates a leaderboard invites reading every gap as real. This kind
gives each candidate's rank an interval (rank 1 = highest pass rate) such that **all** the
intervals cover the true ranks together with the stated probability — from a max-t cluster
bootstrap-t of all pairwise differences on the same cases (Mogstad, Romano, Shaikh and
Wilhelm 2024, "Inference for ranks"; :mod:`evalspec.stats.ranking`) — the groups of
candidates that cannot be told apart, the set that holds the best candidate, and every
pairwise comparison with its p-value Holm-adjusted across all pairs (the plan's own paired
comparisons marked, so a reader sees which survive the adjustment).

It reads the cases every chosen candidate has an outcome for (the comparison is on the
same cases); other cases are left out and a caveat says how many. Clusters (units.cluster)
are resampled whole. It offers nothing to the decision: the verdict stays on the
preregistered primary comparison, for which no adjustment is needed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import AnalysisKind, Caveat, Outcome, ResultModel, SeedUse

__all__ = ["FEW_UNITS", "KIND", "RankingParams", "RankingResult", "compute"]

#: Below this many independent units the bootstrap rank intervals carry a caveat.
FEW_UNITS = 15


class RankingParams(AnalysisParams):
    """Simultaneous rank intervals of many candidates, groups not told apart, Holm-adjusted pairwise comparisons."""

    kind: Literal["ranking"]
    candidates: list[str] | None = Field(None, description="Candidates to rank (at least 3); default all.")
    confidence_level: ConfidenceLevel | None = Field(
        None, description="Simultaneous level of all rank intervals together; defaults to decision.confidence_level.")
    resamples: int = Field(4000, ge=500, le=200_000, description="Cluster bootstrap resamples.")
    seed: int = Field(0, ge=0, description="Seed of the bootstrap generator.")


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RankRow(_Part):
    candidate: str
    estimate: float = Field(description="Pass rate on the cases every ranked candidate has.")
    rank: int = Field(description="Rank of the estimate (1 = highest).")
    rank_low: int = Field(description="Best rank the data allow (simultaneous interval).")
    rank_high: int = Field(description="Worst rank the data allow.")


class PairRow(_Part):
    first: str
    second: str
    difference: float = Field(description="first minus second, in pass-rate units.")
    low: float = Field(description="Simultaneous interval (all pairs together).")
    high: float
    told_apart: bool = Field(description="The simultaneous interval excludes 0.")
    pvalue: float = Field(description="Two-sided, unadjusted (cluster-robust t).")
    holm_pvalue: float = Field(description="Holm-adjusted across all pairs.")
    in_plan: bool = Field(False, description="A comparison the plan names (compare of another analysis).")


class RankingResult(ResultModel):
    ranks: list[RankRow] = Field(description="Best estimate first.")
    pairs: list[PairRow]
    groups: list[list[str]] = Field(description="Runs of the ordered list not told apart (best first).")
    best_set: list[str] = Field(description="Candidates whose rank interval includes 1.")
    confidence_level: float
    critical_value: float | None = Field(description="Max-t bootstrap critical value of the simultaneous intervals "
                                         "(None: infinite, the resamples showed no variation).")
    resamples: int
    seed: int
    cases: int
    left_out: int = Field(description="Cases left out because some ranked candidate has no outcome there.")
    units: int
    unit_name: str
    method: str


def _plan_pairs(ctx: Any) -> set[frozenset[str]]:
    out: set[frozenset[str]] = set()
    for a in getattr(ctx.plan, "analyses", None) or []:
        compare = getattr(a, "compare", None)
        if compare is not None:
            out.add(frozenset(compare))
        elif getattr(a, "kind", None) == "paired_difference":
            try:
                out.add(frozenset(ctx.compared(a)))
            except ValueError:
                pass
    return out


def compute(ctx: Any, params: RankingParams) -> Outcome:
    """Rank intervals, groups and Holm-adjusted pairs of the chosen candidates on their common cases."""
    import numpy as np

    from evalspec.analyses.contract import AnalysisRefused
    from evalspec.stats.ranking import rank_intervals, tiers

    names = ctx.chosen(params)
    if len(names) < 3:
        raise AnalysisRefused(f"ranking needs at least three candidates, got {len(names)}; compare two with "
                              "paired_difference")
    level = ctx.level(params)
    rows = [ctx.index(n) for n in names]
    values = ctx.outcomes.values[rows].T  # cases x candidates
    keep = ~np.isnan(values).any(axis=1)
    left_out = int(values.shape[0] - keep.sum())
    if keep.sum() < 2:
        raise AnalysisRefused("fewer than two cases have an outcome for every ranked candidate")
    clusters = None if ctx.case_cluster is None else ctx.case_cluster[keep]
    r = rank_intervals(values[keep], clusters, confidence_level=level, resamples=params.resamples, seed=params.seed)
    order = [int(i) for i in np.argsort(-r.estimates, kind="stable")]
    point_rank = {j: 1 + int((r.estimates > r.estimates[j]).sum()) for j in range(len(names))}
    ranks = [RankRow(candidate=names[j], estimate=float(r.estimates[j]), rank=point_rank[j],
                     rank_low=int(r.rank_low[j]), rank_high=int(r.rank_high[j])) for j in order]
    planned = _plan_pairs(ctx)
    pairs = []
    for a_pos, j in enumerate(order):
        for k in order[a_pos + 1:]:
            pairs.append(PairRow(first=names[j], second=names[k], difference=float(r.diff[j, k]),
                                 low=float(r.low[j, k]) if np.isfinite(r.low[j, k]) else -1.0,
                                 high=float(r.high[j, k]) if np.isfinite(r.high[j, k]) else 1.0,
                                 told_apart=bool(r.low[j, k] > 0 or r.high[j, k] < 0), pvalue=float(r.pvalues[j, k]),
                                 holm_pvalue=float(r.holm[j, k]), in_plan=frozenset((names[j], names[k])) in planned))
    unit_name = "clusters" if clusters is not None else "cases"
    result = RankingResult(
        ranks=ranks, pairs=pairs, groups=[[names[i] for i in g] for g in tiers(r.estimates, r.low)],
        best_set=[names[j] for j in order if r.rank_low[j] == 1], confidence_level=level,
        critical_value=float(r.critical) if np.isfinite(r.critical) else None, resamples=r.resamples, seed=r.seed,
        cases=r.cases, left_out=left_out, units=r.units, unit_name=unit_name,
        method=f"max-t cluster bootstrap-t over all {len(pairs)} pairs (Mogstad, Romano, Shaikh and Wilhelm), "
        f"{r.resamples} resamples of {r.units} {unit_name}")
    caveats = _caveats(result, len(names))
    plan = ctx.plan
    grader = getattr(getattr(plan, "data", None), "grader", None)
    judged = grader == "model" or any(getattr(a, "human_label", None) for a in getattr(plan, "analyses", None) or [])
    if judged:
        caveats.append(Caveat(code="ranks_of_judge_labels", severity="note", message=(
            "The ranks are of the outcome column, the model grader's labels: a grader that favours some candidates "
            "moves them up. The judge-corrected analysis gives each candidate's pass rate as people would grade it.")))
    return Outcome(result=result, caveats=caveats,
                   seeds=[SeedUse(purpose="ranking bootstrap resamples", seed=params.seed)])


def _caveats(result: RankingResult, k: int) -> list[Caveat]:
    out: list[Caveat] = []
    if result.left_out:
        out.append(Caveat(code="cases_left_out", severity="note", message=(
            f"{result.left_out} cases lack an outcome for some ranked candidate and were left out: the ranking is on "
            f"the {result.cases} cases every candidate ran.")))
    if result.units < FEW_UNITS:
        out.append(Caveat(code="few_units", severity="note", message=(
            f"Only {result.units} independent {result.unit_name}: a bootstrap from so few can understate how uncertain "
            "the ranks are.")))
    if len(result.best_set) == k:
        out.append(Caveat(code="no_rank_told_apart", severity="note", message=(
            "No candidate can be told apart from the top one: any of them could be the best.")))
    lost = [p for p in result.pairs if p.in_plan and p.pvalue < 1 - result.confidence_level <= p.holm_pvalue]
    for p in lost:
        out.append(Caveat(code="planned_pair_not_adjusted", severity="note", message=(
            f"{p.first} versus {p.second}: p = {p.pvalue:.2g} alone, {p.holm_pvalue:.2g} after Holm's adjustment over "
            f"all {len(result.pairs)} pairs. It stands as a preregistered comparison, not as a pick from the table.")))
    return out


KIND = AnalysisKind(name="ranking", params=RankingParams, result=RankingResult, compute=compute,
                    title="Ranking of the candidates", order=30)
