"""Cluster-robust standard errors and intervals for a mean.

When cases share a source (a document, a customer, a prompt template), their outcomes are
correlated and the row-level standard error ``sd / sqrt(n)`` is too small. The sandwich
(cluster-robust) standard error of a mean sums residuals within each cluster first.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from evalspec.stats._results import ClusteredMeanResult
from evalspec.stats._validation import InvalidArgument, _choice, _cluster_codes, _finite_array, _level

__all__ = ["CORRECTIONS", "clustered_mean_interval", "clustered_standard_error"]

#: Small-sample corrections accepted by the clustered functions.
CORRECTIONS = ("CR0", "CR1")


def _clustered_se(values: np.ndarray, codes: np.ndarray, n_clusters: int, correction: str) -> float:
    n = values.size
    resid = values - values.mean()
    totals = np.bincount(codes, weights=resid, minlength=n_clusters)
    se = math.sqrt(float(np.dot(totals, totals))) / n
    if correction == "CR1":
        # Stata / statsmodels / sandwich default: G/(G-1) * (n-1)/(n-K) with K = 1 regressor
        se *= math.sqrt(n_clusters / (n_clusters - 1.0))
    return se


def _prepare(values: ArrayLike, clusters: ArrayLike, correction: str) -> tuple[np.ndarray, np.ndarray, int, str]:
    arr = _finite_array("values", values)
    correction = _choice("correction", correction, CORRECTIONS)
    codes, n_clusters = _cluster_codes(clusters, arr.size)
    if n_clusters < 2:
        raise InvalidArgument(
            "clusters", clusters, f"need at least 2 distinct clusters for a cluster-robust error (got {n_clusters})"
        )
    return arr, codes, n_clusters, correction


def clustered_standard_error(values: ArrayLike, clusters: ArrayLike, correction: str = "CR1") -> float:
    """Cluster-robust standard error of the mean of ``values``.

    Parameters
    ----------
    values : array_like of float, shape (n,)
        Per-row outcomes (for example 0/1 pass indicators or per-case scores).
    clusters : array_like, shape (n,)
        Cluster label of each row (any hashable values).
    correction : {"CR1", "CR0"}
        ``"CR0"``: ``sqrt(sum_g (sum_{i in g} (s_i - mean))^2) / n`` (the plain sandwich).
        ``"CR1"`` (default): CR0 times ``sqrt(G/(G-1) * (n-1)/(n-K))`` with K = 1, i.e.
        ``sqrt(G/(G-1))`` -- the default of Stata, statsmodels and R ``sandwich``.

    Returns
    -------
    float
        The standard error. With every row its own cluster and CR0 it equals the row-level
        ``sqrt(var(ddof=0)/n)``.

    Raises
    ------
    InvalidArgument
        Empty or non-finite values, labels of a different length, fewer than 2 clusters.
    """
    arr, codes, n_clusters, correction = _prepare(values, clusters, correction)
    return _clustered_se(arr, codes, n_clusters, correction)


def clustered_mean_interval(
    values: ArrayLike, clusters: ArrayLike, confidence_level: float = 0.95, correction: str = "CR1"
) -> ClusteredMeanResult:
    """Mean with a cluster-robust t interval on ``G - 1`` degrees of freedom.

    Parameters
    ----------
    values, clusters, correction
        As for :func:`clustered_standard_error`.
    confidence_level : float
        Two-sided nominal coverage in (0, 1).

    Returns
    -------
    ClusteredMeanResult
        ``estimate`` (the mean), ``low``/``high`` = ``mean -/+ t_{G-1} se``, ``se``, ``df =
        G - 1``, ``n_clusters`` and ``correction``. The interval is not clipped: for 0/1
        outcomes with few clusters it may leave [0, 1], which is itself a warning sign.

    Notes
    -----
    With few clusters (say G < 30) CR1 with t(G-1) still tends to under-cover when cluster
    sizes are unequal (Cameron & Miller 2015); see ``docs/coverage.md`` for simulations.
    """
    arr, codes, n_clusters, correction = _prepare(values, clusters, correction)
    level = _level("confidence_level", confidence_level)
    se = _clustered_se(arr, codes, n_clusters, correction)
    df = n_clusters - 1
    t = float(special.stdtrit(df, 0.5 + level / 2.0))
    mean = float(arr.mean())
    return ClusteredMeanResult(
        estimate=mean,
        low=mean - t * se,
        high=mean + t * se,
        method=f"cluster_robust_t_{correction.lower()}",
        confidence_level=level,
        n=int(arr.size),
        se=se,
        df=df,
        n_clusters=n_clusters,
        correction=correction,
    )
