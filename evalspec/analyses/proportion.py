"""The ``proportion`` analysis: each candidate's pass rate with an interval.

Seed 000's worked example: A passes 82 of 100, 95 % Wilson 73.3 %–88.3 %. The interval
is for one candidate's proportion under binomial assumptions, not for a difference.

Under the ``mean`` attempt rule a case outcome is a fraction, so "successes" are
fractional and a binomial interval would treat repeats as independent trials. Then the
interval is the clustered mean's t interval (CR1 over clusters, or over cases when no
cluster is declared) and the result says so in ``note``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalspec.analyses.context import AnalysisContext
from evalspec.analyses.registry import analysis
from evalspec.stats import clustered_mean_interval, proportion_interval

__all__ = ["proportion", "proportion_of"]

MEAN_RULE_NOTE = (
    "Attempt rule 'mean': each case contributes the fraction of its attempts that passed, so successes "
    "are fractional; the interval is a t interval on the cluster-robust (CR1) standard error of the mean "
    "case outcome, not a binomial interval."
)


def proportion_of(ctx: AnalysisContext, name: str, method: str, level: float,
                  mask: np.ndarray | None = None) -> dict[str, Any] | None:
    """Pass rate of ``name`` (within ``mask``) as a claim entry; None when it has no cases."""
    row = ctx.outcomes.values[ctx.index(name)]
    keep = ~np.isnan(row)
    if mask is not None:
        keep &= mask
    idx = np.flatnonzero(keep)
    n = int(idx.size)
    if n == 0:
        return None
    vals = row[idx]
    if ctx.outcomes.binary:
        successes = int(vals.sum())
        r = proportion_interval(successes, n, method=method, confidence_level=level)
        return {"successes": successes, "n": n, "estimate": r.estimate, "low": r.low, "high": r.high,
                "method": r.method, "confidence_level": r.confidence_level}
    clusters = ctx.case_cluster[idx] if ctx.case_cluster is not None else np.arange(n)
    if n < 2 or np.unique(clusters).size < 2:
        return {"successes": float(vals.sum()), "n": n, "estimate": float(vals.mean()), "low": 0.0, "high": 1.0,
                "method": "none (fewer than 2 clusters)", "confidence_level": level, "note": MEAN_RULE_NOTE}
    r = clustered_mean_interval(vals, clusters, confidence_level=level, correction="CR1")
    return {"successes": float(vals.sum()), "n": n, "estimate": r.estimate, "low": max(0.0, r.low),
            "high": min(1.0, r.high), "method": "clustered_mean_t (CR1)", "confidence_level": r.confidence_level,
            "note": MEAN_RULE_NOTE}


@analysis("proportion")
def proportion(ctx: AnalysisContext, params: Any) -> dict[str, Any]:
    """Each chosen candidate's pass rate with the plan's interval method."""
    level = ctx.level(params)
    out: dict[str, Any] = {}
    for name in ctx.chosen(params):
        res = proportion_of(ctx, name, params.method, level)
        if res is not None:
            out[name] = res
    return {"candidates": out}
