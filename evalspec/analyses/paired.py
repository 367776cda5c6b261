"""The ``paired_difference`` analysis: candidate minus baseline on the same cases.

Seed 000 ("Compare paired cases"): run both candidates on the same cases, look at the
cases where they disagree, and resample independent units — whole clusters when cases
share a document — keeping both candidates' outcomes together. The result carries the
2×2 disagreement table with the ids of the disagreeing cases, the difference with its
interval, McNemar's test, and how much of the net difference the top few clusters give.

Method ``auto``: without ``units.cluster``, Newcombe's interval (method 10). With clusters,
the paired cluster bootstrap when there are at least
:data:`~evalspec.analyses.params.AUTO_BOOTSTRAP_MIN_CLUSTERS` (50) clusters, and below that
the cluster-robust t interval of the per-case differences (CR1 standard error, t on G − 1
degrees of freedom). Why not always the bootstrap: in the coverage simulation
(``docs/coverage.md``) the cluster bootstrap under-covered with 10 clusters and any
intra-cluster correlation (81–90 % for a nominal 95 %) while the CR1 t interval held
88–96 %; with 50 clusters both were within 92–96 %. The pairs bootstrap cannot show more
between-cluster variation than the few clusters in hand; the t quantile on G − 1 df pays
for that honestly.

When no case disagrees (b = c = 0) every cluster method collapses to the zero-width
interval [0, 0], which would claim certainty the data cannot give; Newcombe's interval is
used instead and the result says so. Under the ``mean`` attempt rule case outcomes are
fractions, the 2×2 table is undefined, and only the cluster methods apply (every case its
own cluster when none is declared); the result says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalspec.analyses.context import AnalysisContext, AnalysisRefused, Pair
from evalspec.analyses.params import AUTO_BOOTSTRAP_MIN_CLUSTERS
from evalspec.analyses.registry import analysis
from evalspec.stats import (
    clustered_mean_interval,
    mcnemar,
    paired_cluster_bootstrap,
    paired_difference_interval,
    paired_equivalence_test,
)

__all__ = ["paired_difference", "paired_core", "resolve_method"]

MCNEMAR_METHOD = "exact"


CLUSTER_METHODS = ("cluster_bootstrap", "cluster_t")


def resolve_method(ctx: AnalysisContext, method: str, n_clusters: int | None = None) -> tuple[str, list[str]]:
    """The interval method actually used and notes explaining any substitution.

    ``n_clusters`` is the number of independent units of the pair (clusters, or cases when
    none is declared); ``auto`` uses it to choose between the bootstrap and the t interval.
    """
    notes: list[str] = []

    def cluster_auto() -> str:
        if n_clusters is not None and n_clusters >= AUTO_BOOTSTRAP_MIN_CLUSTERS:
            return "cluster_bootstrap"
        notes.append(
            f"Method auto: {n_clusters} independent units is fewer than {AUTO_BOOTSTRAP_MIN_CLUSTERS}, where the "
            "cluster bootstrap under-covers (docs/coverage.md); the cluster-robust t interval (CR1, t on G-1 df) "
            "was used."
        )
        return "cluster_t"

    if not ctx.outcomes.binary:
        if method in CLUSTER_METHODS:
            used = method
        else:
            used = cluster_auto()
            if method != "auto":
                notes.append(f"Attempt rule 'mean' gives fractional case outcomes, so the 2x2 table is undefined; "
                             f"{used} was used instead of the plan's {method!r}.")
        if ctx.case_cluster is None:
            notes.append("Attempt rule 'mean': no cluster is declared, so every case is its own cluster.")
        return used, notes
    if method == "auto":
        return (cluster_auto() if ctx.case_cluster is not None else "newcombe"), notes
    return method, notes


def _table(pair: Pair) -> dict[str, int]:
    x, y = pair.x, pair.y
    a = int(np.count_nonzero((x == 1) & (y == 1)))
    b = int(np.count_nonzero((x == 1) & (y == 0)))
    c = int(np.count_nonzero((x == 0) & (y == 1)))
    d = int(np.count_nonzero((x == 0) & (y == 0)))
    return {"a": a, "b": b, "c": c, "d": d, "n": a + b + c + d}


def _contributions(ctx: AnalysisContext, pair: Pair, top: int) -> dict[str, Any] | None:
    """Net difference per cluster, sorted by |net| (largest first), and the top clusters' share."""
    if pair.clusters is None:
        return None
    diff = pair.x - pair.y
    n_cl = len(ctx.cluster_ids) if ctx.cluster_ids is not None else 0
    cases = np.bincount(pair.clusters, minlength=n_cl)
    b = np.bincount(pair.clusters, weights=np.clip(diff, 0, None), minlength=n_cl)
    c = np.bincount(pair.clusters, weights=np.clip(-diff, 0, None), minlength=n_cl)
    net = b - c
    total = float(diff.sum())
    present = np.flatnonzero(cases > 0)
    labels = [ctx.cluster_label(int(j)) for j in present]
    order = sorted(range(len(present)), key=lambda t: (-abs(net[present[t]]), labels[t]))
    rows = []
    for t in order:
        j = present[t]
        binary = ctx.outcomes.binary
        rows.append({"cluster": labels[t], "cases": int(cases[j]),
                     "b": int(round(b[j])) if binary else float(b[j]),
                     "c": int(round(c[j])) if binary else float(c[j]),
                     "net": int(round(net[j])) if binary else float(net[j]),
                     "share": (float(net[j]) / total) if total != 0 else None})
    top_net = sum(float(net[present[t]]) for t in order[:top])
    return {"n": int(present.size), "contributions": rows, "top_clusters": int(min(top, present.size)),
            "top_share": (top_net / total) if total != 0 else None}


def paired_core(ctx: AnalysisContext, first: str, second: str, *, method: str, level: float,
                mask: np.ndarray | None = None, resamples: int = 10_000, seed: int = 0,
                bootstrap_interval: str = "bca") -> dict[str, Any] | None:
    """Estimate and interval of ``first − second`` on their paired cases (within ``mask``).

    Returns None when no case is paired. Used by ``paired_difference`` and ``slices``.
    """
    pair = ctx.pair(first, second, mask)
    n = int(pair.x.size)
    if n == 0:
        return None
    clusters = pair.clusters if pair.clusters is not None else np.arange(n)
    n_units = int(np.unique(clusters).size)
    used, notes = resolve_method(ctx, method, n_units)
    out: dict[str, Any] = {"n": n}
    table = _table(pair) if ctx.outcomes.binary else None
    if used in CLUSTER_METHODS and table is not None and table["b"] + table["c"] == 0:
        notes.append("No case disagrees (b = c = 0): a cluster interval would collapse to [0, 0] and claim a "
                     "certainty the data cannot give, so Newcombe's interval was used.")
        used = "newcombe"
    unit = "clusters" if pair.clusters is not None else "cases"
    out.update(bootstrap=None, cluster_t=None)
    if used in CLUSTER_METHODS and n_units < 2:
        notes.append("Fewer than two independent units: no cluster interval is possible.")
        out.update(estimate=float(pair.x.mean() - pair.y.mean()), low=-1.0, high=1.0,
                   method="none (fewer than 2 clusters)", confidence_level=level)
    elif used == "cluster_bootstrap":
        r = paired_cluster_bootstrap(pair.x, pair.y, clusters, resamples=resamples, confidence_level=level,
                                     interval=bootstrap_interval, seed=seed)
        out.update(estimate=r.estimate, low=r.low, high=r.high,
                   method=f"cluster_bootstrap ({r.method})" if pair.clusters is not None else f"case_bootstrap ({r.method})",
                   confidence_level=r.confidence_level,
                   bootstrap={"resamples": r.resamples, "seed": r.seed, "interval": r.method,
                              "requested_interval": r.requested_method, "units": unit,
                              "n_units": r.n_clusters, "standard_error": r.standard_error})
        if r.note:
            notes.append(r.note)
        if pair.clusters is not None and r.n_clusters < AUTO_BOOTSTRAP_MIN_CLUSTERS:
            notes.append(f"The plan asks for the cluster bootstrap with {r.n_clusters} clusters; below "
                         f"{AUTO_BOOTSTRAP_MIN_CLUSTERS} clusters it tends to under-cover (docs/coverage.md: 81-90% "
                         "for a nominal 95% at 10 clusters), so this interval may be too narrow. Method auto would "
                         "use the cluster-robust t interval.")
    elif used == "cluster_t":
        r = clustered_mean_interval(pair.x - pair.y, clusters, confidence_level=level, correction="CR1")
        out.update(estimate=r.estimate, low=max(-1.0, r.low), high=min(1.0, r.high),
                   method="cluster_t (CR1)" if pair.clusters is not None else "case_t (CR1)",
                   confidence_level=r.confidence_level,
                   cluster_t={"se": r.se, "df": r.df, "units": unit, "n_units": r.n_clusters,
                              "correction": r.correction, "clipped": bool(r.low < -1.0 or r.high > 1.0)})
    else:
        assert table is not None
        r = paired_difference_interval(table["a"], table["b"], table["c"], table["d"], method=used,
                                       confidence_level=level)
        out.update(estimate=r.estimate, low=r.low, high=r.high, method=r.method,
                   confidence_level=r.confidence_level)
    if used in CLUSTER_METHODS and 2 <= n_units < 10:
        notes.append(f"Only {n_units} independent {unit}: an interval from so few units may itself be unstable "
                     "(seed 000).")
    out["table"] = table
    out["notes"] = notes
    out["_pair"] = pair
    return out


@analysis("paired_difference")
def paired_difference(ctx: AnalysisContext, params: Any) -> dict[str, Any]:
    """Paired difference of pass rates, ``candidate − baseline`` (``compare[0] − compare[1]``)."""
    first, second = ctx.compared(params)
    level = ctx.level(params)
    core = paired_core(ctx, first, second, method=params.method, level=level, resamples=params.resamples,
                       seed=params.seed, bootstrap_interval=params.bootstrap_interval)
    if core is None:
        raise AnalysisRefused(f"no case was run for both {first} and {second}, so there is nothing to pair; "
                              "run both candidates on the same cases")
    pair: Pair = core.pop("_pair")
    table = core["table"]
    result: dict[str, Any] = {"candidate": first, "baseline": second, **core}
    if table is not None:
        m = mcnemar(table["b"], table["c"], method=MCNEMAR_METHOD)
        result["mcnemar"] = {"statistic": m.statistic, "pvalue": m.pvalue, "method": m.method}
    else:
        result["mcnemar"] = None
    diff = pair.x - pair.y

    def listed(sel: np.ndarray) -> list[dict[str, Any]]:
        idx = pair.cases[sel]
        return [{"case": str(ctx.case_ids[i]),
                 "cluster": None if ctx.case_cluster is None else ctx.cluster_label(int(ctx.case_cluster[i]))}
                for i in idx]

    result["disagreements"] = {"candidate_only": listed(diff > 0), "baseline_only": listed(diff < 0)}
    result["clusters"] = _contributions(ctx, pair, params.top_clusters)
    if ctx.goal == "equivalence" and ctx.margin is not None:
        result["equivalence"] = _tost(ctx, core, table, params, first, second, level)
    return result


def _tost(ctx: AnalysisContext, core: dict[str, Any], table: dict[str, int] | None, params: Any,
          first: str, second: str, level: float) -> dict[str, Any]:
    """The interval at level 1 − 2α that the equivalence decision reads (TOST)."""
    tost_level = 2 * level - 1
    if table is None or core["method"].startswith(("cluster_", "case_", "none")):
        again = paired_core(ctx, first, second, method=params.method, level=tost_level,
                            resamples=params.resamples, seed=params.seed, bootstrap_interval=params.bootstrap_interval)
        assert again is not None
        return {"low": again["low"], "high": again["high"], "method": again["method"],
                "confidence_level": tost_level, "margin": ctx.margin, "test": None}
    r = paired_difference_interval(table["a"], table["b"], table["c"], table["d"], method=core["method"],
                                   confidence_level=tost_level)
    t = paired_equivalence_test(table["a"], table["b"], table["c"], table["d"], margin=ctx.margin,
                                confidence_level=level)
    return {"low": r.low, "high": r.high, "method": r.method, "confidence_level": tost_level,
            "margin": ctx.margin, "test": {"pvalue": t.pvalue, "equivalent": t.equivalent,
                                           "pvalue_lower": t.pvalue_lower, "pvalue_upper": t.pvalue_upper}}
