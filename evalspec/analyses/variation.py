"""The ``run_variation`` analysis: run-to-run variation against case-to-case variation.

Seed 000 ("Separate sources of variation"): case variation asks how outcomes differ
across cases; run variation how one configuration behaves when a case is repeated. With
``K_i`` attempts of case ``i`` and pass fraction ``p_i``, the decomposition of Miller
(2024, "Adding Error Bars to Evals", §4) is

* within-case (run) variance ``σ²_w = mean_i[ p_i (1 − p_i) K_i / (K_i − 1) ]`` — the
  unbiased per-case Bernoulli variance, averaged over cases;
* between-case variance ``σ²_b = Var_i(p_i) − mean_i(σ²_w,i / K_i)`` (floored at 0) — the
  sample variance of the case means with the part due to finite repeats removed;
* standard error of the mean with ``K`` repeats per case:
  ``SE(K) = sqrt((σ²_b + σ²_w / K) / n)``.

More repeats shrink only the ``σ²_w / K`` term: when ``σ²_b`` dominates, new independent
cases help and more repeats do not. Repeat agreement is the share of cases whose attempts
all agree. These are moment estimates of a few lines of NumPy (no interval is computed),
so they live here rather than in :mod:`evalspec.stats`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalspec.analyses.context import AnalysisContext
from evalspec.analyses.registry import analysis

__all__ = ["run_variation", "variance_decomposition", "SE_REPEATS"]

#: Repeats per case at which the standard error is shown.
SE_REPEATS = (1, 2, 5, 10, 20, 50)


def variance_decomposition(case: np.ndarray, passed: np.ndarray) -> dict[str, Any]:
    """Miller (2024) decomposition from attempt rows.

    Parameters
    ----------
    case : ndarray of int
        Case code of each attempt.
    passed : ndarray of float
        1.0 pass, 0.0 fail (missing already resolved).

    Returns
    -------
    dict
        ``cases`` (with at least one attempt), ``repeated_cases`` (at least two),
        ``mean_repeats``, ``mean``, ``within_case_variance``, ``between_case_variance``,
        ``agreement``; variances are None without repeated cases.
    """
    codes, inv = np.unique(case, return_inverse=True)
    k = np.bincount(inv).astype(np.float64)
    s = np.bincount(inv, weights=passed)
    p = s / k
    rep = k >= 2
    out: dict[str, Any] = {"cases": int(codes.size), "repeated_cases": int(rep.sum()),
                           "mean_repeats": float(k.mean()) if k.size else 0.0,
                           "mean": float(p.mean()) if p.size else None}
    if rep.sum() < 2:
        out.update(within_case_variance=None, between_case_variance=None, agreement=None)
        return out
    pr, kr = p[rep], k[rep]
    within_i = pr * (1 - pr) * kr / (kr - 1)
    within = float(within_i.mean())
    between = float(max(pr.var(ddof=1) - (within_i / kr).mean(), 0.0))
    agree = float(np.mean((pr == 0) | (pr == 1)))
    out.update(within_case_variance=within, between_case_variance=between, agreement=agree)
    return out


@analysis("run_variation")
def run_variation(ctx: AnalysisContext, params: Any) -> dict[str, Any]:
    """Repeat agreement, within/between-case variance and the SE as repeats grow, per candidate."""
    reps = ctx.repeats
    out: dict[str, Any] = {}
    for name in ctx.chosen(params):
        j = ctx.index(name)
        rows = reps.cand == j
        passed = reps.passed[rows]
        case = reps.case[rows]
        if ctx.missing_policy == "exclude":
            keep = ~np.isnan(passed)
            passed, case = passed[keep], case[keep]
        else:
            passed = np.where(np.isnan(passed), 0.0, passed)
        dec = variance_decomposition(case, passed)
        n = dec["cases"]
        entry: dict[str, Any] = {"cases": n, "repeats": ctx.planned_repeats,
                                 "repeats_observed_mean": dec["mean_repeats"],
                                 "repeated_cases": dec["repeated_cases"], "mean": dec["mean"],
                                 "agreement": dec["agreement"],
                                 "within_case_variance": dec["within_case_variance"],
                                 "between_case_variance": dec["between_case_variance"]}
        if dec["within_case_variance"] is None:
            entry.update(se=None, se_by_repeats=[], note=(
                "Fewer than two cases were attempted more than once, so run-to-run variation cannot be "
                "separated from case-to-case variation; repeat a representative subset of cases to measure it."))
        else:
            w, b = dec["within_case_variance"], dec["between_case_variance"]
            k_obs = max(1, int(round(dec["mean_repeats"])))
            ks = sorted(set(SE_REPEATS) | {k_obs})
            entry["se"] = float(np.sqrt((b + w / k_obs) / n))
            entry["se_by_repeats"] = [{"repeats": k, "se": float(np.sqrt((b + w / k) / n))} for k in ks]
            entry["se_limit"] = float(np.sqrt(b / n))
            share = w / k_obs / (b + w / k_obs) if (b + w / k_obs) > 0 else 0.0
            entry["run_share"] = float(share)
            entry["note"] = (
                f"With {k_obs} repeat(s) per case, run-to-run variation makes up {share:.0%} of the variance of "
                f"the mean; even infinitely many repeats would leave a standard error of {entry['se_limit']:.3f} "
                "from case-to-case variation, which only more independent cases reduce.")
        if ctx.case_cluster is not None and entry.get("se") is not None:
            entry["clustering_note"] = ("These standard errors treat cases as independent; cases share clusters, so "
                                        "the clustered analyses give the wider, honest interval. The decomposition "
                                        "still shows how much repeats can help.")
        out[name] = entry
    return {"candidates": out}
