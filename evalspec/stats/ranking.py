"""Simultaneous confidence intervals for ranks, from a max-t cluster bootstrap of all pairwise differences.

The construction of Mogstad, Romano, Shaikh and Wilhelm (2024, "Inference for ranks with
applications to mobility across neighbourhoods and academic achievement across
countries", *Review of Economic Studies*), with the rank-1-is-best convention:

1. every pairwise difference ``D_jk = theta_j - theta_k`` of the candidates' pass rates on
   the same cases, with a cluster-robust (CR1) standard error ``s_jk``;
2. a cluster bootstrap-t (whole clusters resampled, every candidate's outcomes kept together)
   of ``max_{j<k} |D*_jk - D_jk| / s*_jk``, each resample studentised by its own standard
   error (which keeps the level at small numbers of clusters better than a fixed ``s_jk``); its ``level`` quantile ``c`` makes the intervals
   ``D_jk +- c s_jk`` hold *simultaneously* (a max-type correction over all pairs);
3. candidate ``j``'s rank interval is ``[1 + #{k : D_kj interval above 0},
   K - #{k : D_jk interval above 0}]``. Because it is read from intervals that hold
   together, all K rank intervals cover the true ranks together with probability at least
   ``level`` (asymptotically; exactly what the projection argument of Mogstad et al. gives).

Candidates that cannot be told apart are the pairs whose simultaneous interval contains 0;
:func:`tiers` groups them in the compact "lines under the ordered list" display. Pairwise
p-values (t on G - 1 degrees of freedom) are Holm-adjusted (Holm 1979) across all pairs.
A pair whose per-cluster differences are all identical has ``s_jk = 0``: its interval is the
point ``D_jk`` and it takes no part in the maximum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalspec.stats._validation import InvalidArgument, _level

__all__ = ["RankResult", "holm", "ppi_rank_intervals", "rank_intervals", "ranks_from_intervals", "tiers"]


@dataclass(frozen=True)
class RankResult:
    estimates: np.ndarray  # (K,)
    diff: np.ndarray  # (K, K): theta_j - theta_k
    se: np.ndarray  # (K, K)
    low: np.ndarray  # (K, K) simultaneous
    high: np.ndarray
    critical: float
    rank_low: np.ndarray  # (K,) int
    rank_high: np.ndarray
    pvalues: np.ndarray  # (K, K) unadjusted two-sided
    holm: np.ndarray  # (K, K) Holm-adjusted
    units: int
    cases: int
    resamples: int
    seed: int
    confidence_level: float
    extra: dict[str, Any] = field(default_factory=dict)


def _pair_index(k: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(k, 1)


def _cluster_sums(values: np.ndarray, clusters: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    n, k = values.shape
    cl = np.arange(n) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1].reshape(-1)
    g = int(cl.max()) + 1
    sums = np.zeros((g, k))
    np.add.at(sums, cl, values)
    sizes = np.bincount(cl, minlength=g).astype(np.float64)
    keep = sizes > 0
    return sums[keep], sizes[keep]


def _pair_se(sums: np.ndarray, sizes: np.ndarray, diff_pairs: np.ndarray, ii: np.ndarray, jj: np.ndarray) -> np.ndarray:
    g = sizes.size
    n = sizes.sum()
    resid = (sums[:, ii] - sums[:, jj]) - sizes[:, None] * diff_pairs[None, :]
    factor = g / (g - 1) if g > 1 else 1.0
    return np.sqrt(factor * np.sum(resid**2, axis=0)) / n


def max_t_critical(sums: np.ndarray, sizes: np.ndarray, weights: np.ndarray, level: float) -> float:
    """The ``level`` quantile of ``max |D* - D| / s*`` over pairs (bootstrap-t: ``s*`` is each resample's own
    cluster-robust standard error), for resample weights (B x G: how often each cluster is drawn)."""
    k = sums.shape[1]
    ii, jj = _pair_index(k)
    theta = sums.sum(axis=0) / sizes.sum()
    d = theta[ii] - theta[jj]
    se = _pair_se(sums, sizes, d, ii, jj)
    use = se > 1e-15
    if not use.any():
        return 0.0
    s_pair = sums[:, ii[use]] - sums[:, jj[use]]  # G x P: cluster totals of the differences
    n_b = weights @ sizes  # B
    d_b = (weights @ s_pair) / n_b[:, None]  # B x P
    # sum_g w_g (S_g - n_g D*)^2 = sum w S^2 - 2 D* sum w S n + D*^2 sum w n^2
    ss = weights @ (s_pair**2) - 2 * d_b * (weights @ (s_pair * sizes[:, None])) + d_b**2 * (weights @ sizes**2)[:, None]
    g = sizes.size
    se_b = np.sqrt(np.maximum(ss, 0.0) * (g / (g - 1) if g > 1 else 1.0)) / n_b[:, None]
    dev = np.abs(d_b - d[use][None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se_b > 1e-15, dev / se_b, np.where(dev > 1e-15, np.inf, 0.0))
    return float(np.quantile(t.max(axis=1), level, method="higher"))


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (same order as given)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def ranks_from_intervals(low: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank intervals (1 = best) from simultaneous intervals of ``theta_j - theta_k`` (K x K)."""
    k = low.shape[0]
    above = low > 0  # above[j, k]: j surely better than k
    np.fill_diagonal(above, False)
    better_than_me = above.sum(axis=0)  # how many are surely better than j
    worse_than_me = above.sum(axis=1)
    return 1 + better_than_me, k - worse_than_me


def rank_intervals(values: Any, clusters: Any = None, *, confidence_level: float = 0.95, resamples: int = 2000,
                   seed: int = 0) -> RankResult:
    """Simultaneous rank intervals of the K columns of ``values`` (cases x candidates, no missing value)."""
    from scipy import special

    level = _level("confidence_level", confidence_level)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] < 2 or v.shape[0] < 2 or not np.all(np.isfinite(v)):
        raise InvalidArgument("values", values, "must be a cases x candidates matrix (at least 2 x 2) of finite values")
    if resamples < 100:
        raise InvalidArgument("resamples", resamples, "must be at least 100")
    k = v.shape[1]
    sums, sizes = _cluster_sums(v, None if clusters is None else np.asarray(clusters))
    g = sizes.size
    rng = np.random.default_rng(seed)
    weights = np.empty((resamples, g))
    chunk = 1000
    for s in range(0, resamples, chunk):
        e = min(resamples, s + chunk)
        weights[s:e] = rng.multinomial(g, np.full(g, 1.0 / g), size=e - s)
    crit = max_t_critical(sums, sizes, weights, level)
    ii, jj = _pair_index(k)
    theta = sums.sum(axis=0) / sizes.sum()
    d_pairs = theta[ii] - theta[jj]
    se_pairs = _pair_se(sums, sizes, d_pairs, ii, jj)
    diff = np.zeros((k, k))
    se = np.zeros((k, k))
    diff[ii, jj], diff[jj, ii] = d_pairs, -d_pairs
    se[ii, jj] = se[jj, ii] = se_pairs
    with np.errstate(invalid="ignore"):
        half = np.where(se > 1e-15, crit * se, 0.0)  # crit may be inf (resamples with no variation)
    low, high = diff - half, diff + half
    rank_low, rank_high = ranks_from_intervals(low)
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = np.abs(d_pairs) / se_pairs
    df = max(g - 1, 1)
    p_pairs = np.where(se_pairs > 1e-15, 2 * special.stdtr(df, -np.nan_to_num(tstat, nan=0.0, posinf=1e300)),
                       np.where(np.abs(d_pairs) > 1e-15, 0.0, 1.0))
    p = np.ones((k, k))
    p[ii, jj] = p[jj, ii] = p_pairs
    h = np.ones((k, k))
    adj = holm(p_pairs)
    h[ii, jj] = h[jj, ii] = adj
    return RankResult(estimates=theta, diff=diff, se=se, low=low, high=high, critical=crit, rank_low=rank_low,
                      rank_high=rank_high, pvalues=p, holm=h, units=g, cases=int(v.shape[0]), resamples=int(resamples),
                      seed=int(seed), confidence_level=level)


def tiers(estimates: np.ndarray, low: np.ndarray) -> list[list[int]]:
    """Groups of candidates not told apart, in order of estimate (best first): maximal runs of the ordered
    list in which no member is surely better than another (no pairwise interval excludes 0)."""
    order = [int(i) for i in np.argsort(-np.asarray(estimates), kind="stable")]
    apart = (low > 0) | (low.T > 0)
    runs: list[list[int]] = []
    for s in range(len(order)):
        e = s
        while e + 1 < len(order) and not any(apart[order[e + 1], order[t]] for t in range(s, e + 1)):
            e += 1
        run = order[s:e + 1]
        if not runs or not set(run) <= set(runs[-1]):
            runs.append(run)
    return runs


def ppi_max_t_critical(totals: list[np.ndarray], lams: np.ndarray, weights: np.ndarray, level: float) -> float:
    """The ``level`` quantile of ``max |D* - D| / s*`` over pairs of PPI++ estimates (one per candidate, each with
    its fixed ``lams[j]``), for resample weights (B x G); ``totals[j]`` are candidate j's cluster totals
    (:func:`evalspec.stats.ppi.cluster_totals`). ``s*`` is each resample's own cluster-robust standard error of
    the pair's difference (bootstrap-t); resamples a stratum of which has no labelled case are left out."""
    from evalspec.stats.ppi import resampled

    k = len(totals)
    ii, jj = _pair_index(k)
    ones = np.ones((1, weights.shape[1]))
    fit = [resampled(t, ones, float(lams[j])) for j, t in enumerate(totals)]
    d = np.array([fit[a][0][0] - fit[b][0][0] for a, b in zip(ii, jj, strict=True)])
    se = np.array([math.sqrt(float(np.sum((fit[a][2][0] - fit[b][2][0]) ** 2))) for a, b in zip(ii, jj, strict=True)])
    use = np.flatnonzero(se > 1e-15)
    if use.size == 0:
        return 0.0
    worst: list[np.ndarray] = []
    chunk = max(1, min(500, 2_000_000 // max(1, weights.shape[1] * k)))
    for s in range(0, weights.shape[0], chunk):
        w = weights[s:s + chunk]
        got = [resampled(t, w, float(lams[j])) for j, t in enumerate(totals)]
        est = np.stack([g[0] for g in got], axis=1)  # b x K
        psi = np.stack([g[2] for g in got], axis=2)  # b x G x K
        dev = np.abs((est[:, ii[use]] - est[:, jj[use]]) - d[use][None, :])
        se_b = np.sqrt(np.einsum("bg,bgp->bp", w, (psi[:, :, ii[use]] - psi[:, :, jj[use]]) ** 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(se_b > 1e-15, dev / se_b, np.where(dev > 1e-15, np.inf, 0.0))
        tmax = t.max(axis=1)
        worst.append(tmax[np.isfinite(est).all(axis=1)])
    every = np.concatenate(worst)
    return float(np.quantile(every, level, method="higher")) if every.size else math.inf


def ppi_rank_intervals(human: Any, judge: Any, labelled: Any, clusters: Any = None, *, strata: Any = None,
                       confidence_level: float = 0.95, resamples: int = 2000, seed: int = 0) -> RankResult:
    """Simultaneous rank intervals of the candidates' **human-label** pass rates, each estimated by PPI++.

    ``judge`` (cases x K) holds the judge's labels on every case; ``human`` (cases x K) people's labels, read
    on the ``labelled`` cases (labelled for every candidate: a random subset, drawn at random within
    ``strata`` when given). Each candidate gets its own tuned lambda (``ppi_py``'s per-coordinate tuning,
    ``lam_optim_mode="element"``), so the K estimates are one vector and their differences are transitive.
    The simultaneous intervals of all pairwise differences come from a cluster bootstrap-t of the largest
    studentised deviation (as :func:`rank_intervals`), with each pair's cluster-robust (CR1 on the labelled
    clusters) standard error; p-values are t on (labelled clusters - 1) degrees of freedom. ``extra`` holds
    the lambdas and the judge-only estimates.
    """
    from scipy import special

    from evalspec.stats.ppi import cluster_totals, ppi_mean_interval, resampled

    level = _level("confidence_level", confidence_level)
    f = np.asarray(judge, dtype=np.float64)
    h = np.asarray(human, dtype=np.float64)
    lab = np.asarray(labelled, dtype=bool)
    if f.ndim != 2 or f.shape[1] < 2 or f.shape != h.shape or lab.shape != (f.shape[0],) or not np.all(np.isfinite(f)):
        raise InvalidArgument("judge", judge, "judge and human must be cases x candidates matrices (at least 2 "
                              "candidates) with one labelled flag per case, the judge's labels finite")
    if resamples < 100:
        raise InvalidArgument("resamples", resamples, "must be at least 100")
    n, k = f.shape
    cl = np.arange(n) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1].reshape(-1)
    st = np.zeros(n, dtype=np.int64) if strata is None else np.unique(np.asarray(strata), return_inverse=True)[1]
    fits = [ppi_mean_interval(np.where(lab, h[:, j], np.nan), f[:, j], lab, clusters=cl, strata=st,
                              confidence_level=level) for j in range(k)]
    lams = np.array([r.lam for r in fits])
    g = int(cl.max()) + 1
    totals = [cluster_totals(np.nan_to_num(np.where(lab, h[:, j], 0.0)), f[:, j], lab, cl, st, g) for j in range(k)]
    rng = np.random.default_rng(seed)
    weights = np.concatenate([rng.multinomial(g, np.full(g, 1.0 / g), size=min(1000, resamples - s))
                              for s in range(0, resamples, 1000)]).astype(np.float64)
    crit = ppi_max_t_critical(totals, lams, weights, level)
    ones = np.ones((1, g))
    psi = np.stack([resampled(t, ones, float(lams[j]))[2][0] for j, t in enumerate(totals)], axis=1)  # G x K
    theta = np.array([r.estimate for r in fits])
    g_lab = int(np.unique(cl[lab]).size)
    factor = g_lab / (g_lab - 1) if g_lab > 1 else 1.0
    diff = theta[:, None] - theta[None, :]
    raw = np.sqrt(np.sum((psi[:, :, None] - psi[:, None, :]) ** 2, axis=0))  # the bootstrap-t's own scale
    with np.errstate(invalid="ignore"):
        half = np.where(raw > 1e-15, crit * raw, 0.0)
    low, high = diff - half, diff + half
    rank_low, rank_high = ranks_from_intervals(low)
    se = math.sqrt(factor) * raw
    ii, jj = _pair_index(k)
    df = max(g_lab - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = np.abs(diff[ii, jj]) / se[ii, jj]
    p_pairs = np.where(se[ii, jj] > 1e-15, 2 * special.stdtr(df, -np.nan_to_num(tstat, nan=0.0, posinf=1e300)),
                       np.where(np.abs(diff[ii, jj]) > 1e-15, 0.0, 1.0))
    p = np.ones((k, k))
    p[ii, jj] = p[jj, ii] = p_pairs
    hm = np.ones((k, k))
    hm[ii, jj] = hm[jj, ii] = holm(p_pairs)
    return RankResult(estimates=theta, diff=diff, se=se, low=low, high=high, critical=crit, rank_low=rank_low,
                      rank_high=rank_high, pvalues=p, holm=hm, units=g, cases=n, resamples=int(resamples),
                      seed=int(seed), confidence_level=level,
                      extra={"lams": lams, "judge_estimates": f.mean(axis=0), "labelled_units": g_lab,
                             "labelled_cases": int(lab.sum())})
