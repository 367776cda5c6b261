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

**What is ranked.** When the plan has a ``judge_corrected`` analysis (a model grader and people's
labels on a random subset), the ranks are of the **human-label** pass rates: each candidate's rate
estimated by PPI++ from the judge's labels and the labelled subset (its own tuned lambda), the
simultaneous intervals from a cluster bootstrap-t of the corrected differences
(:func:`evalspec.stats.ranking.ppi_rank_intervals`). A judge that favours some candidates then
cannot move them up. ``ranks_of: outcome`` ranks the outcome column as it is (the judge's labels),
with a note saying so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import AnalysisKind, Caveat, ColumnNeed, Issue, Outcome, ResultModel, SeedUse, entries

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
    ranks_of: Literal["human_label", "outcome"] | None = Field(
        None, description="What is ranked. human_label: the pass rates people would give, from the plan's "
        "judge_corrected analysis (its human_label column and labelled subset; PPI++ per candidate); outcome: the "
        "outcome column as it is (with a model grader, the grader's labels). Default: human_label when the plan has "
        "a judge_corrected analysis, else outcome.")

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("ranks_of") is None:  # unset: the plan hashes as before the key
            data.pop("ranks_of", None)
        return data


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built with the result that holds it


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
    ranks_of: Literal["human_label", "outcome"] = Field(
        "outcome", description="human_label: judge-corrected (PPI++) pass rates; outcome: the outcome column.")
    human_label: str | None = Field(None, description="The human-label column the corrected ranks read.")
    labelled_cases: int | None = Field(None, description="Ranked cases with a human label for every candidate.")
    labelled_units: int | None = Field(None, description="Independent units among them (clusters, or cases).")
    judge_estimates: dict[str, float] | None = Field(None, description="The judge's own pass rates, beside the "
                                                     "corrected ones.")


def _labelled(a: Any) -> bool:
    """An analysis that measures the judge against people: it names a human_label and how the subset was drawn."""
    return bool(getattr(a, "human_label", None)) and getattr(a, "labelled_subset", None) is not None


def _judge(plan: Any) -> Any:
    """The plan's first analysis with a labelled subset (judge_corrected: its human_label, labelled_subset), or None."""
    return next((a for a in getattr(plan, "analyses", None) or [] if _labelled(a)), None)


def _corrected(params: RankingParams, plan: Any) -> bool:
    return params.ranks_of == "human_label" or (params.ranks_of is None and _judge(plan) is not None)


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


def _rank(ctx: Any, params: RankingParams, names: list[str], values: Any, keep: Any, level: float) -> tuple[Any,
                                                                                                       dict[str, Any]]:
    """The rank intervals: of the outcome column, or of the judge-corrected pass rates (and what they rest on)."""
    import numpy as np

    from evalspec.analyses.contract import AnalysisRefused
    from evalspec.stats.ranking import ppi_rank_intervals, rank_intervals

    clusters = None if ctx.case_cluster is None else ctx.case_cluster[keep]
    if not _corrected(params, ctx.plan):
        return rank_intervals(values[keep], clusters, confidence_level=level, resamples=params.resamples,
                              seed=params.seed), {}
    from evalspec.analyses.judge_corrected import MIN_LABELLED_UNITS, human_matrix

    judge = _judge(ctx.plan)
    if judge is None:
        raise AnalysisRefused("ranks_of: human_label needs a judge_corrected analysis (its human_label column and "
                              "labelled subset)")
    human, _ = human_matrix(ctx, judge.human_label)
    h = human[[ctx.index(n) for n in names]].T[keep]
    lab = ~np.isnan(h).any(axis=1)
    units = int(lab.sum()) if clusters is None else int(np.unique(clusters[lab]).size)
    if units < MIN_LABELLED_UNITS:
        raise AnalysisRefused(f"only {units} independent units hold a human label for every ranked candidate; at "
                              f"least {MIN_LABELLED_UNITS} are needed to rank what people would say (ranks_of: "
                              "outcome ranks the judge's labels)")
    strata = None
    if judge.labelled_subset.strata is not None:
        raw = np.asarray(ctx.case_columns[judge.labelled_subset.strata], dtype=object)
        strata = np.array([str(v) for v in raw.tolist()], dtype=object)[keep]
    try:
        r = ppi_rank_intervals(np.where(lab[:, None], h, np.nan), values[keep], lab, clusters, strata=strata,
                               confidence_level=level, resamples=params.resamples, seed=params.seed)
    except ValueError as exc:  # a stratum without a labelled case
        raise AnalysisRefused(str(exc).split(": ", 1)[-1]) from None
    return r, {"ranks_of": "human_label", "human_label": judge.human_label, "labelled_cases": int(lab.sum()),
               "labelled_units": units,
               "judge_estimates": {n: float(v) for n, v in zip(names, r.extra["judge_estimates"], strict=True)}}


def compute(ctx: Any, params: RankingParams) -> Outcome:
    """Rank intervals, groups and Holm-adjusted pairs of the chosen candidates on their common cases."""
    import numpy as np

    from evalspec.analyses.contract import AnalysisRefused
    from evalspec.stats.ranking import tiers

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
    r, corrected = _rank(ctx, params, names, values, keep, level)
    order = [int(i) for i in np.argsort(-r.estimates, kind="stable")]
    point_rank = {j: 1 + int((r.estimates > r.estimates[j]).sum()) for j in range(len(names))}
    ranks = [RankRow(candidate=names[j], estimate=float(r.estimates[j]), rank=point_rank[j],
                     rank_low=int(r.rank_low[j]), rank_high=int(r.rank_high[j])) for j in order]
    pairs = _pairs(ctx, names, order, r)
    unit_name = "clusters" if ctx.case_cluster is not None else "cases"
    how = ("judge-corrected (PPI++) pass rates, " if corrected else "") + "max-t cluster bootstrap-t"
    result = RankingResult(
        ranks=ranks, pairs=pairs, groups=[[names[i] for i in g] for g in tiers(r.estimates, r.low)],
        best_set=[names[j] for j in order if r.rank_low[j] == 1], confidence_level=level,
        critical_value=float(r.critical) if np.isfinite(r.critical) else None, resamples=r.resamples, seed=r.seed,
        cases=r.cases, left_out=left_out, units=r.units, unit_name=unit_name,
        method=f"{how} over all {len(pairs)} pairs (Mogstad, Romano, Shaikh and Wilhelm), "
        f"{r.resamples} resamples of {r.units} {unit_name}", **corrected)
    caveats = _caveats(result, len(names))
    plan = ctx.plan
    grader = getattr(getattr(plan, "data", None), "grader", None)
    if not corrected and (grader == "model" or _judge(plan) is not None):
        caveats.append(Caveat(code="ranks_of_judge_labels", severity="note", message=(
            "The ranks are of the outcome column, the model grader's labels: a grader that favours some candidates "
            "moves them up. The judge-corrected analysis gives each candidate's pass rate as people would grade it.")))
    return Outcome(result=result, caveats=caveats,
                   seeds=[SeedUse(purpose="ranking bootstrap resamples", seed=params.seed)])


def _pairs(ctx: Any, names: list[str], order: list[int], r: Any) -> list[PairRow]:
    import numpy as np

    planned = _plan_pairs(ctx)
    pairs = []
    for a_pos, j in enumerate(order):
        for k in order[a_pos + 1:]:
            pairs.append(PairRow(first=names[j], second=names[k], difference=float(r.diff[j, k]),
                                 low=float(r.low[j, k]) if np.isfinite(r.low[j, k]) else -1.0,
                                 high=float(r.high[j, k]) if np.isfinite(r.high[j, k]) else 1.0,
                                 told_apart=bool(r.low[j, k] > 0 or r.high[j, k] < 0), pvalue=float(r.pvalues[j, k]),
                                 holm_pvalue=float(r.holm[j, k]), in_plan=frozenset((names[j], names[k])) in planned))
    return pairs


def columns(params: RankingParams, plan: Any) -> list[ColumnNeed]:
    """The judge_corrected analysis's human labels (and strata), when the ranks are of them."""
    judge = _judge(plan)
    if not _corrected(params, plan) or judge is None:
        return []
    out = [ColumnNeed(column=judge.human_label, key="ranks_of", level="row")]
    if judge.labelled_subset.strata is not None:
        out.append(ColumnNeed(column=judge.labelled_subset.strata, key="ranks_of"))
    return out


def _needs_labels(view: Any) -> Iterable[Issue]:
    judged = any(_labelled(a) for _, a in view.analyses)
    for i, a in entries(view, "ranking"):
        if a.ranks_of == "human_label" and not judged:
            yield Issue(("analyses", i, "ranks_of"), "ranks_of: human_label needs a judge_corrected analysis",
                        "add a judge_corrected analysis naming the human_label column and how the labelled subset "
                        "was drawn, or rank the outcome column (ranks_of: outcome)")


def _caveats(result: RankingResult, k: int) -> list[Caveat]:
    out: list[Caveat] = []
    if result.left_out:
        out.append(Caveat(code="cases_left_out", severity="note", message=(
            f"{result.left_out} cases lack an outcome for some ranked candidate and were left out: the ranking is on "
            f"the {result.cases} cases every candidate ran.")))
    units = result.units if result.labelled_units is None else result.labelled_units
    if units < FEW_UNITS:
        what = result.unit_name if result.labelled_units is None else f"{result.unit_name} with people's labels"
        out.append(Caveat(code="few_units", severity="note", message=(
            f"Only {units} independent {what}: a bootstrap from so few can understate how uncertain the ranks are.")))
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
                    title="Ranking of the candidates", columns=columns, order=30,
                    rules=((("analyses",), _needs_labels),),
                    # ranks of human labels read attempt rows, but only beside judge_corrected, which is refused
                    attempt_rows=None)
