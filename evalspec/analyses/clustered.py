"""The ``clustered_mean`` analysis: mean numeric score with a cluster-robust interval.

Every attempt with a score counts; attempts of one case — and cases of one cluster —
are correlated, so the standard error is clustered (CR1 by default) on the plan's cluster
(or on the case when no cluster is declared) and the t interval uses ``C − 1`` degrees of
freedom for ``C`` clusters. The kernel is :func:`evalspec.stats.clustered_mean_interval`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalspec.analyses.context import AnalysisContext
from evalspec.analyses.registry import analysis
from evalspec.stats import clustered_mean_interval

__all__ = ["clustered_mean"]


def _numbers(col: np.ndarray) -> np.ndarray:
    out = np.full(col.shape[0], np.nan)
    for i, v in enumerate(col):
        if isinstance(v, bool) or v is None:
            continue
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            continue
    return out


@analysis("clustered_mean")
def clustered_mean(ctx: AnalysisContext, params: Any) -> dict[str, Any]:
    """Mean score per candidate, CR1 (or CR0) clustered SE, t interval on C − 1 df."""
    reps = ctx.repeats
    level = ctx.level(params)
    if params.score is not None:
        if params.score not in reps.columns:
            raise KeyError(params.score)
        scores = _numbers(reps.columns[params.score])
    else:
        scores = reps.score
    clusters_all = ctx.case_cluster[reps.case] if ctx.case_cluster is not None else reps.case
    unit = "clusters" if ctx.case_cluster is not None else "cases"
    out: dict[str, Any] = {}
    for name in ctx.chosen(params):
        rows = (reps.cand == ctx.index(name)) & ~np.isnan(scores)
        values, clusters = scores[rows], clusters_all[rows]
        n_cl = int(np.unique(clusters).size)
        entry: dict[str, Any] = {"n": int(values.size), "n_clusters": n_cl, "cluster_unit": unit,
                                 "correction": params.correction, "confidence_level": level,
                                 "missing_scores": int(np.count_nonzero((reps.cand == ctx.index(name))
                                                                        & np.isnan(scores)))}
        if n_cl < 2:
            entry.update(estimate=float(values.mean()) if values.size else None, se=None, df=None, low=None,
                         high=None, note="Fewer than two clusters: no clustered standard error.")
        else:
            r = clustered_mean_interval(values, clusters, confidence_level=level, correction=params.correction)
            entry.update(estimate=r.estimate, se=r.se, df=r.df, low=r.low, high=r.high, method=r.method)
        out[name] = entry
    return {"candidates": out}
