"""The posterior predictive check: replicated data sets at posterior draws against the observed counts."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evalspec.stats.beta_binomial.counts import _unique

__all__ = ["PPCStatistic", "PPCSummary"]


@dataclass(frozen=True)
class PPCStatistic:
    """Observed value of a statistic against its posterior predictive distribution."""

    name: str
    observed: float
    replicated_mean: float
    low: float
    high: float
    p_value: float = field(metadata={"doc": "two-sided posterior predictive p-value"})


@dataclass(frozen=True)
class PPCSummary:
    """Posterior predictive check of the per-question proportions y_i / J_i.

    ``bin_edges`` split [0, 1] into bins of y/J; ``observed`` counts questions per bin;
    ``replicated_median``/``replicated_low``/``replicated_high`` are the median and central
    ``band`` interval of those counts over ``replicates`` replicated data sets.
    ``p_min`` is the smallest two-sided p-value of the statistics (below 0.05 flags misfit;
    with four statistics one of them falls below 0.05 by chance about one time in six).
    """

    statistics: tuple[PPCStatistic, ...]
    bin_edges: np.ndarray
    observed: np.ndarray
    replicated_median: np.ndarray
    replicated_low: np.ndarray
    replicated_high: np.ndarray
    band: float
    replicates: int
    p_min: float
    bins_outside: int


def _ppc(y: np.ndarray, j: np.ndarray, alpha: np.ndarray, beta: np.ndarray, rng: np.random.Generator,
         band: float = 0.9, bins: int = 10) -> PPCSummary:
    """Replicated data sets at posterior draws vs the observed data."""
    from scipy.special import betaln, gammaln

    n_rep = alpha.size
    tu, tw, _ = _unique(j)
    edges = np.linspace(0.0, 1.0, bins + 1)
    stats_rep = {"mean proportion": np.zeros(n_rep), "sd of proportions": np.zeros(n_rep),
                 "share always right": np.zeros(n_rep), "share always wrong": np.zeros(n_rep)}
    hist_rep = np.zeros((n_rep, bins))
    s1 = np.zeros(n_rep)
    s2 = np.zeros(n_rep)
    n = float(y.size)
    for jv, nq in zip(tu.tolist(), tw.tolist(), strict=True):
        yy = np.arange(jv + 1, dtype=np.float64)
        a = alpha[:, None]
        b = beta[:, None]
        logpmf = (gammaln(jv + 1.0) - gammaln(yy + 1.0) - gammaln(jv - yy + 1.0)
                  + betaln(a + yy, b + jv - yy) - betaln(a, b))
        pmf = np.exp(logpmf - logpmf.max(axis=1, keepdims=True))
        pmf /= pmf.sum(axis=1, keepdims=True)
        counts = rng.multinomial(int(nq), pmf)  # (n_rep, jv + 1)
        p = yy / jv
        s1 += counts @ p
        s2 += counts @ (p * p)
        stats_rep["share always right"] += counts[:, -1]
        stats_rep["share always wrong"] += counts[:, 0]
        b_idx = np.minimum(np.searchsorted(edges, p, side="right") - 1, bins - 1)
        for bi in range(bins):
            sel = b_idx == bi
            if sel.any():
                hist_rep[:, bi] += counts[:, sel].sum(axis=1)
    stats_rep["mean proportion"] = s1 / n
    stats_rep["sd of proportions"] = np.sqrt(np.maximum(s2 / n - (s1 / n) ** 2, 0.0) * n / max(n - 1.0, 1.0))
    stats_rep["share always right"] /= n
    stats_rep["share always wrong"] /= n
    p_obs = y / j
    observed = {
        "mean proportion": float(p_obs.mean()),
        "sd of proportions": float(p_obs.std(ddof=1)) if y.size > 1 else 0.0,
        "share always right": float(np.mean(y == j)),
        "share always wrong": float(np.mean(y == 0)),
    }
    out = []
    tail = (1.0 - band) / 2.0
    for name, rep in stats_rep.items():
        obs = observed[name]
        p_ge = float(np.mean(rep >= obs - 1e-12))
        p_le = float(np.mean(rep <= obs + 1e-12))
        pval = min(1.0, 2.0 * min(p_ge, p_le))
        out.append(PPCStatistic(name=name, observed=obs, replicated_mean=float(rep.mean()),
                                low=float(np.quantile(rep, tail)), high=float(np.quantile(rep, 1 - tail)),
                                p_value=pval))
    b_obs = np.minimum(np.searchsorted(edges, p_obs, side="right") - 1, bins - 1)
    obs_hist = np.bincount(b_obs, minlength=bins).astype(np.float64)
    lo = np.quantile(hist_rep, tail, axis=0)
    hi = np.quantile(hist_rep, 1 - tail, axis=0)
    outside = int(np.sum((obs_hist < lo) | (obs_hist > hi)))
    return PPCSummary(statistics=tuple(out), bin_edges=edges, observed=obs_hist,
                      replicated_median=np.median(hist_rep, axis=0), replicated_low=lo, replicated_high=hi,
                      band=band, replicates=n_rep, p_min=min(s.p_value for s in out), bins_outside=outside)
