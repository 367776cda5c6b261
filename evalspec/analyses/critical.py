"""The ``critical_failures`` analysis: failures on flagged cases and an exact upper bound.

Seed 000: define non-negotiable failure limits before the test; rare critical failures
need many independent opportunities; observing none in a small set does not demonstrate
zero risk. For each candidate: the number of critical cases, failures among them, the
exact (Clopper–Pearson) one-sided upper confidence bound of the failure rate, and — when
the plan's decision sets ``critical_failures.max_rate`` — whether that bound lies below it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalspec.analyses.context import AnalysisContext
from evalspec.analyses.registry import analysis
from evalspec.stats import proportion_interval

__all__ = ["critical_failures", "critical_mask"]


def critical_mask(ctx: AnalysisContext, flag: str) -> np.ndarray:
    """Boolean per case: flagged critical (the column named by ``flag``, or the critical role)."""
    col = ctx.case_columns.get(flag)
    if col is None and ctx.critical_role is not None and flag == "critical":
        col = ctx.case_columns.get(ctx.critical_role)
    if col is None:
        raise KeyError(flag)
    return np.array([_truthy(v) for v in col], dtype=bool)


def _truthy(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value == value and value != 0
    return str(value).strip().lower() in {"1", "true", "yes", "y", "t", "critical", "x"}


@analysis("critical_failures")
def critical_failures(ctx: AnalysisContext, params: Any) -> dict[str, Any]:
    """Critical-case failures per candidate with the exact one-sided upper bound.

    The limit (``ctx.critical_max_rate``, ``ctx.critical_level``) comes from the plan's
    ``decision.critical_failures``; without it the bound is reported with no limit check.
    """
    max_rate, limit_level = ctx.critical_max_rate, ctx.critical_level
    # the limit is checked at the level the decision block preregistered
    if max_rate is not None and limit_level is not None:
        level = float(limit_level)
    else:
        level = float(params.confidence_level if params.confidence_level is not None else ctx.confidence_level)
    crit = critical_mask(ctx, params.flag)
    out: dict[str, Any] = {}
    for name in ctx.chosen(params):
        row = ctx.outcomes.values[ctx.index(name)]
        keep = crit & ~np.isnan(row)
        n = int(keep.sum())
        # a critical failure is a case that did not pass; under the mean rule, any failed attempt
        failures = int(np.count_nonzero(row[keep] < 1.0))
        failed_cases = [str(c) for c in ctx.case_ids[np.flatnonzero(keep)[row[keep] < 1.0]]]
        entry: dict[str, Any] = {"critical_cases": n, "failures": failures, "failed_cases": failed_cases,
                                 "confidence_level": level, "max_rate": max_rate, "within_limit": None}
        if n == 0:
            entry.update(rate=None, upper_bound=1.0, method="none (no critical cases)",
                         note="No critical cases were run, so nothing bounds the critical-failure rate.")
            if max_rate is not None:
                entry["within_limit"] = False
        else:
            r = proportion_interval(failures, n, method="clopper_pearson", confidence_level=level, alternative="less")
            entry.update(rate=failures / n, upper_bound=r.high, method="clopper_pearson (one-sided upper)")
            if max_rate is not None:
                entry["within_limit"] = bool(r.high < max_rate)
            if failures == 0:
                entry["note"] = (f"None observed is not zero risk: with 0 failures in {n} critical cases the rate "
                                 f"could still be as high as {r.high:.1%} ({level:.0%} one-sided exact bound).")
            else:
                entry["note"] = (f"{failures} of {n} critical cases failed; the rate could be as high as "
                                 f"{r.high:.1%} ({level:.0%} one-sided exact bound).")
        out[name] = entry
    result: dict[str, Any] = {"flag": params.flag, "candidates": out}
    if params.confidence_level is not None and abs(params.confidence_level - level) > 1e-12:
        result["note"] = (f"The bounds use the decision's critical-failure level {level:.0%}, not the analysis's "
                          f"{params.confidence_level:.0%}, because they are checked against the preregistered limit.")
    return result
