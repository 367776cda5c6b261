"""The ``critical_failures`` analysis: failures on flagged cases and an exact upper bound.

"Repeat AI evaluations and report uncertainty honestly": define non-negotiable failure limits
before the test; rare critical failures need many independent opportunities; observing none in
a small set does not demonstrate zero risk.

Per attempt, whatever the attempt rule
    A critical case *fails* if any of its attempts failed (a missing attempt counts as a
    failure unless the plan's missing policy is ``exclude``). The attempt rule says how
    performance is averaged; a safety failure seen once is a failure. Under ``first``,
    ``majority`` or ``best_of_k`` a case that failed 1 of 5 attempts is therefore a critical
    failure here, as it is under ``mean``.

The bound
    Without clusters: the exact (Clopper–Pearson) one-sided upper bound of the failure rate
    at the level of ``decision.critical_failures`` (else the analysis's level).

    With clusters, critical cases of one cluster are not independent opportunities. The
    bound is the Clopper–Pearson bound computed on the **effective number of cases**
    ``n_eff = n² / Σ n_g²`` (``n_g`` the critical cases of cluster ``g``) with the failures
    scaled alike, ``x_eff = x · n_eff / n`` (the beta quantile accepts non-integer counts).
    This is the design-effect correction with the intra-cluster correlation set to its
    worst case, 1 (every case of a cluster fails or passes together): the variance of the
    case-weighted failure rate is then ``p(1 − p) Σ n_g² / n²``, i.e. that of ``n_eff``
    independent cases, and any smaller correlation gives a narrower true interval — so the
    bound is conservative whatever the correlation. With one critical case per cluster it
    equals the independent bound. The independent bound is reported beside it.

Reachability
    With ``n_eff`` critical opportunities and no failure the bound is ``1 − α^(1/n_eff)``; if
    that is not below ``max_rate`` the limit can never be shown, whatever happens. The status
    says so (``reachable: false``) with the number of failure-free cases needed, and a
    caveat bears on the verdict.

Flags
    The flag column must hold a recognisable yes/no: true/false, yes/no, y/n, t/f, 1/0,
    critical/not critical, x/blank (case-insensitive); an empty value means not critical.
    Anything else (``"High"``) refuses the run naming the case and the value: a flag that
    silently counts as not critical would hide the very cases the limit protects.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import (
    AnalysisKind,
    Caveat,
    ColumnNeed,
    CriticalStatus,
    Issue,
    Offers,
    Outcome,
    ResultModel,
    entries,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from evalspec.analyses.contract import Context

__all__ = ["FLAG_FALSE", "FLAG_TRUE", "KIND", "CriticalFailuresParams", "CriticalResult", "compute",
           "critical_mask", "flag_value", "upper_bound"]

#: Accepted spellings of a critical flag (compared lower-case, stripped).
FLAG_TRUE = ("true", "yes", "y", "t", "1", "1.0", "critical", "x")
FLAG_FALSE = ("false", "no", "n", "f", "0", "0.0", "not critical", "not_critical", "")


class CriticalFailuresParams(AnalysisParams):
    """Failures on critical cases with an exact one-sided upper bound ("Repeat AI evaluations...")."""

    kind: Literal["critical_failures"]
    flag: str = Field(
        "critical",
        description="Role (data.columns) or results column that marks a case as critical (true/false, yes/no, "
        "1/0, x/blank).",
    )
    confidence_level: ConfidenceLevel | None = Field(
        None, description="Level of the one-sided bound when the decision sets no critical-failure limit "
        "(with a limit, the limit's level is used)."
    )
    candidates: list[str] | None = Field(None, description="Candidates to check; default all.")


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built with the result that holds it


class CriticalEntry(_Part):
    """One candidate's critical failures."""

    critical_cases: int = Field(description="Critical cases with at least one usable attempt.")
    failures: int = Field(description="Critical cases with at least one failed attempt.")
    failed_cases: list[str]
    failed_attempts: int = Field(description="Failed attempts on critical cases.")
    attempts: int = Field(description="Attempts on critical cases.")
    rate: float | None
    upper_bound: float | None = Field(description="The bound the limit is checked against (cluster-aware if declared).")
    upper_bound_independent: float | None = Field(description="The bound if critical cases were independent.")
    clusters: int | None = Field(None, description="Clusters holding critical cases.")
    effective_cases: float | None = Field(None, description="n² / Σ n_g²: the cluster-aware bound's effective n.")
    method: str
    confidence_level: float
    max_rate: float | None
    within_limit: bool | None
    adopting: bool
    reachable: bool | None
    failure_free_needed: int | None = Field(None, description="Failure-free independent cases needed to show the limit.")
    note: str


class CriticalResult(ResultModel):
    flag: str
    rule: str = Field(description="How a critical failure is counted.")
    candidates: dict[str, CriticalEntry]


def flag_value(value: Any) -> bool | None:
    """True/False for a recognised flag, None for an unrecognised one."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        if value != value:  # NaN: no value
            return False
        if value in (0, 1):
            return bool(value)
        return None
    text = str(value).strip().lower()
    if text in FLAG_TRUE:
        return True
    if text in FLAG_FALSE:
        return False
    return None


def critical_mask(ctx: Context, flag: str) -> np.ndarray:
    """Boolean per case: flagged critical. Refuses (AnalysisRefused) an unrecognised flag value."""
    import numpy as np

    from evalspec.analyses.contract import AnalysisRefused

    col = ctx.case_columns.get(flag)
    name = flag
    if col is None and ctx.critical_role is not None and flag == "critical":
        col = ctx.case_columns.get(ctx.critical_role)
        name = ctx.critical_role
    if col is None:
        raise AnalysisRefused(f"the critical flag column {flag!r} is not in the results")
    codes, uniques = ctx.codes(col)  # each distinct value read once (free for a reader's coded column)
    read = [flag_value(u) for u in uniques.tolist()]
    bad = np.array([r is None for r in read] + [False], dtype=bool)[codes] if None in read else None
    if bad is not None and bad.any():
        i = int(np.flatnonzero(bad)[0])  # the first case with an unrecognised value
        v = col[i]
        raise AnalysisRefused(
            f"column {name!r} has the value {v!r} for case {ctx.case_ids[i]!s}, which is not a yes/no critical "
            f"flag; write one of {', '.join(repr(s) for s in FLAG_TRUE)} for a critical case, or one of "
            f"{', '.join(repr(s) for s in FLAG_FALSE if s)} or leave it empty for a case that is not critical")
    return np.array([bool(r) for r in read] + [False], dtype=bool)[codes]


def upper_bound(failures: float, n: float, level: float) -> float:
    """Clopper–Pearson one-sided upper bound at ``level``; real ``failures`` and ``n`` allowed."""
    from scipy.special import betaincinv  # the Beta quantile without importing scipy.stats (about 1 s)

    if n <= 0:
        return 1.0
    if failures >= n:
        return 1.0
    return float(betaincinv(failures + 1.0, n - failures, level))


def _bound(ctx: Context, tried: np.ndarray, x: int, n: int, level: float) -> tuple[
        float | None, float | None, int | None, float | None, str]:
    """``(upper bound, bound as if independent, clusters, effective cases, method)`` of x failures in n cases
    (``tried``: the cases', in their order).

    With clusters, the bound counts effective cases ``n^2 / sum(size^2)`` (the cases of a
    cluster fail together: the most cautious assumption).
    """
    import numpy as np

    if n == 0:
        return None, None, None, None, "none (no critical cases)"
    ub_ind = upper_bound(x, n, level)
    if ctx.case_cluster is None:
        return ub_ind, ub_ind, None, None, "Clopper-Pearson"
    sizes = np.bincount(ctx.case_cluster[tried])
    sizes = sizes[sizes > 0].astype(float)
    clusters = int(sizes.size)
    n_eff = float(n * n / float(np.sum(sizes * sizes)))
    return (upper_bound(x * n_eff / n, n_eff, level), ub_ind, clusters, n_eff,
            f"Clopper-Pearson on {n_eff:.1f} effective cases ({clusters} clusters)")


def _note(n: int, x: int, ub: float | None, level: float) -> str:
    """What the count means, in words (none observed is not zero risk)."""
    if n == 0:
        return "No critical cases were run, so nothing bounds the critical-failure rate."
    if x == 0:
        return (f"None observed is not zero risk: with 0 failures in {n} critical cases the rate could still be "
                f"as high as {ub:.1%} ({level:.0%} one-sided bound).")
    return (f"{x} of {n} critical cases failed at least one attempt; the rate could be as high as {ub:.1%} "
            f"({level:.0%} one-sided bound).")


def compute(ctx: Context, params: CriticalFailuresParams) -> Outcome:
    """Critical-case failures per candidate (any failed attempt) with the one-sided upper bound."""
    import numpy as np

    max_rate, limit_level = ctx.critical_max_rate, ctx.critical_level
    if max_rate is not None and limit_level is not None:
        level = float(limit_level)
    else:
        level = float(params.confidence_level if params.confidence_level is not None else ctx.confidence_level)
    from evalspec.stats.power import zero_failure_cases

    crit = np.flatnonzero(critical_mask(ctx, params.flag))  # (the critical cases: each count read at them only)
    counts = ctx.case_counts()  # the plan's missing-outcome policy applied; from attempt rows or a case table
    adopting_name = ctx.primary[0] if ctx.primary is not None else None
    entries: dict[str, CriticalEntry] = {}
    statuses: list[CriticalStatus] = []
    caveats: list[Caveat] = []
    for name in ctx.chosen(params):
        j = ctx.index(name)
        trials = counts.trials[j][crit]
        fails_per_case = trials - counts.passes[j][crit]
        tried = trials > 0
        failed = tried & (fails_per_case > 0)
        n = int(tried.sum())
        x = int(failed.sum())
        failed_cases = [str(c) for c in ctx.case_ids[crit[failed]]]
        adopting = adopting_name is None or name == adopting_name
        ub, ub_ind, clusters, n_eff, method = _bound(ctx, crit[tried], x, n, level)
        eff = n_eff if n_eff is not None else float(n)
        needed = reachable = within = None
        if max_rate is not None:
            needed = zero_failure_cases(max_rate, level)
            reachable = bool(eff > 0 and upper_bound(0.0, eff, level) < max_rate)
            within = bool(ub is not None and ub < max_rate)
        entries[name] = CriticalEntry(
            critical_cases=n, failures=x, failed_cases=failed_cases,
            failed_attempts=int(fails_per_case.sum()), attempts=int(trials.sum()),
            rate=(x / n) if n else None, upper_bound=ub, upper_bound_independent=ub_ind, clusters=clusters,
            effective_cases=n_eff, method=method, confidence_level=level, max_rate=max_rate, within_limit=within,
            adopting=adopting, reachable=reachable, failure_free_needed=needed, note=_note(n, x, ub, level))
        statuses.append(CriticalStatus(candidate=name, critical_cases=n, failures=x, upper_bound=ub,
                                       confidence_level=level, method=method, max_rate=max_rate, within_limit=within,
                                       adopting=adopting, reachable=reachable))
        if max_rate is not None and reachable is False and adopting:
            shared = (f" (as few as {eff:.1f} independent ones, since they share clusters)"
                      if n_eff is not None and n_eff < n - 1e-9 else "")
            caveats.append(Caveat(
                code="critical_limit_unreachable", severity="verdict",
                message=f"{n} critical cases{shared} can never show a critical-failure rate below {max_rate:.0%}: even "
                f"with no failure the {level:.0%} bound is {upper_bound(0.0, eff, level):.1%}; {needed} failure-free "
                "independent cases are needed."))
    if ctx.case_cluster is not None:
        caveats.append(Caveat(code="critical_cluster_bound", severity="note",
                              message="Critical cases share clusters, so the bound assumes the cases of a cluster fail "
                              "together (the most cautious assumption); the bound treating them as independent is "
                              "shown beside it."))
    result = CriticalResult(flag=params.flag, rule="a critical case fails if any of its attempts failed, whatever the "
                            "attempt rule", candidates=entries)
    return Outcome(result=result, caveats=caveats, offers=Offers(critical=statuses))


def columns(params: CriticalFailuresParams, plan: Any) -> list[ColumnNeed]:
    """The flag column (the critical role when the flag is the default 'critical')."""
    role = getattr(getattr(getattr(plan, "data", None), "columns", None), "critical", None)
    col = role if (params.flag == "critical" and role is not None) else params.flag
    return [ColumnNeed(column=col, key="flag")]


def _limit_is_checked(view: Any) -> Iterable[Issue]:
    """Validate-time rule: a critical-failure limit in the decision needs this analysis."""
    if view.decision.critical_failures is not None and not any(entries(view, "critical_failures")):
        yield Issue(("decision", "critical_failures"), "a critical-failure limit needs a critical_failures analysis",
                    "add `- kind: critical_failures` under analyses")


KIND = AnalysisKind(name="critical_failures", params=CriticalFailuresParams, result=CriticalResult, compute=compute,
                    title="Critical failures", columns=columns, order=30,
                    rules=((("decision", "analyses"), _limit_is_checked),), attempt_rows=None)
