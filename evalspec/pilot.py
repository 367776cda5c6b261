"""Variance assumptions for ``evalspec power`` estimated from pilot results.

:func:`pilot_assumptions` reads pilot results through the plan's own reader and estimates
the variance components of the paired difference (Evan Miller, "Adding Error Bars to Evals",
2024) and the intra-cluster correlation, as :class:`evalspec.power.Assumptions`; the power
calculation itself (:mod:`evalspec.power`) stays free of the results readers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalspec.power import Assumptions

__all__ = ["anova_icc", "pilot_assumptions"]


def pilot_assumptions(plan: Any, plan_path: Path, pilot: Path | list[Path]) -> Assumptions:
    """Estimate omega^2, sigma^2, the ICC and the cluster sizes from pilot results read with the plan's reader.

    The pilot's cluster sizes are kept: ``evalspec power`` resamples them when they are unequal.

    ``pilot`` is a results file, or a list of files and folders (tool logs hold one candidate
    per file, so a pilot of tool logs is several files or the folder that holds them).
    """
    import numpy as np

    from evalspec.analyses.contract import default_comparison
    from evalspec.errors import InputError
    from evalspec.results import load_results
    from evalspec.stats.power import variance_components

    comparison = plan.primary_comparison() or default_comparison(plan.candidates, plan.baseline)
    if comparison is None:
        raise InputError("a pilot estimates the variance of a paired difference; the plan compares no two candidates")
    pilots = list(pilot) if isinstance(pilot, list) else [pilot]
    shown = ", ".join(str(p) for p in pilots)
    results = [str(p.resolve()) for p in pilots]
    data = plan.data.model_copy(update={"results": results[0] if len(results) == 1 else results})
    pilot_plan = plan.model_copy(update={"data": data})
    try:
        checked = load_results(pilot_plan, plan_path)
    except InputError as exc:  # the run's advice for a candidate without rows is to edit the plan: here it is the pilot
        lacking = next((d.message for d in exc.diagnostics if "has no rows in the results" in d.message), None)
        if lacking is None:
            raise
        raise InputError(f"{shown}: the pilot lacks a candidate of the plan ({lacking.split(';')[0]}); give pilot "
                         "results of every candidate: repeat --pilot for each file, or give the folder of the tool's "
                         "logs") from None
    tidy = checked.tidy
    names = list(tidy.candidates)
    missing = [c for c in comparison if c not in names]
    if missing:
        raise InputError(f"{shown}: the pilot has no rows of {', '.join(missing)} (needed for the paired difference)")
    n_cases = len(tidy.case_ids)
    reps = np.asarray(tidy.repeat, dtype=np.int64)
    r_codes = np.unique(reps, return_inverse=True)[1]
    width = int(r_codes.max()) + 1 if r_codes.size else 1
    mats = []
    for name in comparison:
        j = names.index(name)
        mat = np.full((n_cases, width), np.nan)
        sel = np.asarray(tidy.cand) == j
        mat[np.asarray(tidy.case)[sel], r_codes[sel]] = np.asarray(tidy.passed, dtype=float)[sel]
        mats.append(mat)
    est = variance_components(mats[0], mats[1])
    icc, m, sizes = 0.0, None, None
    if tidy.cluster is not None:
        case_cluster = np.full(n_cases, -1, dtype=np.int64)
        case_cluster[np.asarray(tidy.case)] = np.asarray(tidy.cluster)
        both = np.isfinite(mats[0]).any(axis=1) & np.isfinite(mats[1]).any(axis=1)
        d = (np.nanmean(mats[0][both], axis=1) - np.nanmean(mats[1][both], axis=1))
        g = case_cluster[both]
        icc, m = anova_icc(d, g)
        counts = np.bincount(g[g >= 0])
        sizes = tuple(int(c) for c in counts[counts > 0])
    return Assumptions(omega2=max(est.omega2, 1e-12), sigma2_candidate=min(est.sigma_a2, 1.0),
                       sigma2_baseline=min(est.sigma_b2, 1.0), icc=icc, cluster_size=m, cluster_sizes=sizes,
                       source="pilot " + ", ".join(p.name for p in pilots), pilot_cases=est.questions)


def anova_icc(y: Any, groups: Any) -> tuple[float, float | None]:
    """One-way ANOVA estimator of the intra-cluster correlation (floored at 0) and the mean cluster size."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    labels, g = np.unique(groups, return_inverse=True)
    k = labels.size
    n = y.size
    if k < 2 or n <= k:
        return 0.0, (float(n / k) if k else None)
    sizes = np.bincount(g)
    means = np.bincount(g, weights=y) / sizes
    grand = y.mean()
    msb = float(np.sum(sizes * (means - grand) ** 2) / (k - 1))
    msw = float(np.sum((y - means[g]) ** 2) / (n - k))
    m0 = (n - np.sum(sizes**2) / n) / (k - 1)
    denom = msb + (m0 - 1) * msw
    icc = 0.0 if denom <= 0 else max(0.0, (msb - msw) / denom)
    return float(min(icc, 1.0)), float(n / k)
