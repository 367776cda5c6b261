"""Cluster-robust standard errors and intervals for a mean.

When cases share a source (a document, a customer, a prompt template), their outcomes are
correlated and the row-level standard error ``sd / sqrt(n)`` is too small. The sandwich
(cluster-robust) standard error of a mean sums residuals within each cluster first.

The default is CR2, the bias-reduced linearisation of Bell and McCaffrey (2002), with their
Satterthwaite degrees of freedom (as developed by Pustejovsky and Tipton 2018). For a mean
(an intercept-only regression, working model: independence, unweighted) both have closed
forms. With ``n`` rows, ``G`` clusters, cluster ``g`` holding ``n_g`` rows (share
``pi_g = n_g / n``) and residual total ``E_g = sum_{i in g} (y_i - mean)``:

* CR0: ``V = sum_g E_g^2 / n^2``;
* CR1: ``V = G / (G - 1) * CR0`` (Stata, statsmodels and R ``sandwich``; K = 1 regressor);
* CR2: ``V = sum_g E_g^2 / (1 - pi_g) / n^2``. The adjustment matrix ``A_g = (I - H_gg)^(-1/2)``
  with hat block ``H_gg = J / n`` maps the cluster's unit vector to ``1 / sqrt(1 - pi_g)`` times
  itself, hence the factor;
* CR3: ``V = sum_g E_g^2 / (1 - pi_g)^2 / n^2``, the same with ``A_g = (I - H_gg)^(-1)``: the
  cluster jackknife's variance ``sum_g (mean_(-g) - mean)^2`` (delete-one-cluster means), which
  MacKinnon, Nielsen and Webb (2023) recommend with unbalanced clusters; larger than CR2 when a
  big cluster is influential;
* Bell-McCaffrey degrees of freedom ``nu = (sum_g p_g'p_g)^2 / sum_{g,h} (p_g'p_h)^2`` where
  ``p_g = (I - H)_g' A_g X_g M`` are the columns of the estimator as a quadratic form in the
  errors. Here ``p_g'p_h = pi_g (delta_gh - pi_h) / (n sqrt((1 - pi_g)(1 - pi_h)))``, so with
  ``q_g = pi_g^2 / (1 - pi_g)``: ``1 / nu = sum_g pi_g^2 + (sum_g q_g)^2 - sum_g q_g^2``.

With equal cluster sizes CR2 equals CR1 and ``nu = G - 1``; with unequal sizes CR2 is larger
(a large cluster's residuals are shrunk towards the mean, so they are inflated back) and ``nu``
falls below ``G - 1`` -- towards 1 when one cluster dominates, which is what keeps the t
interval honest there. ``nu`` depends only on the cluster sizes, not on the outcomes.

References
----------
Bell RM, McCaffrey DF (2002). Bias reduction in standard errors for linear regression with
multi-stage samples. Survey Methodology 28:169-181.
Pustejovsky JE, Tipton E (2018). Small-sample methods for cluster-robust variance estimation
and hypothesis testing in fixed effects models. J Business & Economic Statistics 36:672-683.
Cameron AC, Miller DL (2015). A practitioner's guide to cluster-robust inference. J Human
Resources 50:317-372.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from evalspec.stats._numeric import t_upper_quantile
from evalspec.stats._results import ClusteredMeanResult
from evalspec.stats._validation import (
    ClusterLabels,
    InvalidArgument,
    _choice,
    _cluster_codes,
    _cluster_sizes_of,
    _finite_array,
    _integer_bins,
    _level,
)

__all__ = [
    "CORRECTIONS",
    "HEAVY_TAIL_SIZE_CV",
    "bell_mccaffrey_df",
    "cluster_robust_variance",
    "ClusteredMeanParts",
    "cluster_sizes",
    "clustered_mean_interval",
    "clustered_mean_parts",
    "clustered_standard_error",
    "clusters_among",
]

#: Small-sample corrections accepted by the clustered functions (the first is the default).
#: ``"CR3"`` (the cluster jackknife) is the kernel's only: plans name CR2, CR1 or CR0, and method
#: ``auto`` uses CR3 for heavy-tailed cluster sizes (:data:`HEAVY_TAIL_SIZE_CV`).
CORRECTIONS = ("CR2", "CR1", "CR0", "CR3")

#: Cluster sizes whose coefficient of variation exceeds this are "heavy-tailed": there the
#: paired interval of method ``auto`` is the skewness-corrected jackknife (CR3) interval
#: (:func:`clustered_mean_interval` with ``correction="CR3", skew_corrected=True``).
HEAVY_TAIL_SIZE_CV = 1.0


def cluster_robust_variance(resid_totals: np.ndarray, sizes: np.ndarray, correction: str = "CR2") -> float:
    """Cluster-robust variance of a mean from residual totals ``E_g`` and cluster sizes ``n_g``.

    The building block of :func:`clustered_standard_error` for callers that already hold
    per-cluster totals (float arrays of length G >= 2, ``correction`` one of
    :data:`CORRECTIONS`; not validated). Formulas in the module notes.
    """
    n = float(sizes.sum())
    g = sizes.size
    sq = resid_totals * resid_totals
    if correction in ("CR2", "CR3"):
        return float(np.sum(sq / (1.0 - sizes / n) ** (2 if correction == "CR3" else 1))) / (n * n)
    v = float(np.sum(sq)) / (n * n)
    if correction == "CR1":
        v *= g / (g - 1.0)
    return v


def _bm_df(sizes: np.ndarray) -> float:
    pi = sizes / float(sizes.sum())
    q = pi * pi / (1.0 - pi)
    inv = float(np.sum(pi * pi)) + float(np.sum(q)) ** 2 - float(np.sum(q * q))
    return 1.0 / inv


def bell_mccaffrey_df(cluster_sizes: ArrayLike) -> float:
    """Bell-McCaffrey (Satterthwaite) degrees of freedom of the CR2 variance of a mean.

    Parameters
    ----------
    cluster_sizes : array_like of positive numbers, shape (G,)
        Rows in each cluster, ``G >= 2``.

    Returns
    -------
    float
        ``1 / (sum pi_g^2 + (sum q_g)^2 - sum q_g^2)`` with ``pi_g = n_g / n`` and ``q_g =
        pi_g^2 / (1 - pi_g)`` (see the module notes); ``G - 1`` for equal sizes, between
        about 1 and ``G - 1`` otherwise.
    """
    sizes = _finite_array("cluster_sizes", cluster_sizes)
    if sizes.size < 2 or np.any(sizes <= 0):
        raise InvalidArgument("cluster_sizes", cluster_sizes, "need at least 2 clusters, each with a positive size")
    return _bm_df(sizes)


def cluster_sizes(clusters: ArrayLike) -> np.ndarray:
    """Rows in each cluster, in the sorted order of the cluster labels (``np.unique``'s order).

    Parameters
    ----------
    clusters : array_like, shape (n,)
        One cluster label per row.

    Returns
    -------
    ndarray of int64, shape (G,)
        ``np.bincount(np.unique(clusters, return_inverse=True)[1])``; integer labels are counted in
        O(n), without sorting (cases' cluster codes, millions of them).
    """
    arr = clusters if isinstance(clusters, np.ndarray) else np.asarray(clusters)
    if arr.ndim == 1 and arr.size and arr.dtype.kind in "iu":
        bins = _integer_bins(arr)  # (the rows of each label, counted once: no codes needed)
        if bins is not None:
            counts = bins[1]
            return counts[counts > 0].astype(np.int64, copy=False)
    codes, n_clusters = _cluster_codes(arr, arr.shape[0] if arr.ndim else 0)
    return np.bincount(codes, minlength=n_clusters).astype(np.int64, copy=False)


def clusters_among(clusters: ArrayLike, where: np.ndarray) -> int:
    """Distinct clusters among the rows ``where`` is true: ``cluster_sizes(clusters[where]).size``, from the codes of
    :class:`~evalspec.stats._validation.ClusterLabels` (made once: no labels counted again)."""
    if type(clusters) is ClusterLabels:
        codes, n_clusters = _cluster_codes(clusters, clusters.shape[0])
        return int(np.count_nonzero(np.bincount(codes[where], minlength=n_clusters)))
    return int(cluster_sizes(np.asarray(clusters)[where]).size)


#: Rows of residuals made at a time by :func:`_residual_totals` (a 512 KiB buffer, in cache).
_RESIDUAL_CHUNK = 1 << 16


def _residual_totals(arr: np.ndarray, mean: float, codes: np.ndarray, n_clusters: int,
                     chunk: int = _RESIDUAL_CHUNK) -> np.ndarray:
    """``np.bincount(codes, weights=arr - mean, minlength=n_clusters)``, bit for bit, without the residuals of every
    row in memory at once.

    ``bincount`` adds each row's weight to its cluster's total in row order, starting from zero; ``np.add.at`` on a
    zeroed array adds in the same order, so the residuals can be made ``chunk`` rows at a time into one small
    buffer (the same numbers, added in the same order: the same totals). Over millions of rows this saves the
    fresh array of every row's residual (on this project's benchmark, 40 MB a candidate, faulted in afresh each
    time) and a pass over it. Fewer than two chunks of rows take the one ``bincount`` (the general path); both are
    held equal in ``tests/stats/test_clustered.py``.
    """
    n = arr.shape[0]
    if n < 2 * chunk or codes.dtype != np.intp:
        return np.bincount(codes, weights=arr - mean, minlength=n_clusters)
    totals = np.zeros(n_clusters)
    buf = np.empty(chunk)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        part = buf[: stop - start]
        np.subtract(arr[start:stop], mean, out=part)
        np.add.at(totals, codes[start:stop], part)
    return totals


def _prepare(values: ArrayLike, clusters: ArrayLike, correction: str) -> tuple[np.ndarray, float, np.ndarray,
                                                                                np.ndarray, str]:
    """Validated values, their mean, residual totals per cluster, cluster sizes and the correction."""
    arr = _finite_array("values", values)
    correction = _choice("correction", correction, CORRECTIONS)
    codes, n_clusters = _cluster_codes(clusters, arr.size)
    if n_clusters < 2:
        raise InvalidArgument(
            "clusters", clusters, f"need at least 2 distinct clusters for a cluster-robust error (got {n_clusters})"
        )
    mean = arr.mean()
    totals = _residual_totals(arr, mean, codes, n_clusters)
    sizes = _cluster_sizes_of(clusters, codes, n_clusters).astype(np.float64)
    return arr, float(mean), totals, sizes, correction


def clustered_standard_error(values: ArrayLike, clusters: ArrayLike, correction: str = "CR2") -> float:
    """Cluster-robust standard error of the mean of ``values``.

    Parameters
    ----------
    values : array_like of float, shape (n,)
        Per-row outcomes (for example 0/1 pass indicators or per-case scores).
    clusters : array_like, shape (n,)
        Cluster label of each row (any hashable values).
    correction : {"CR2", "CR1", "CR0", "CR3"}
        ``"CR2"`` (default): Bell-McCaffrey bias-reduced linearisation,
        ``sqrt(sum_g E_g^2 / (1 - n_g/n)) / n``. ``"CR3"``: the jackknife form
        ``sqrt(sum_g E_g^2 / (1 - n_g/n)^2) / n``. ``"CR1"``: CR0 times ``sqrt(G/(G-1))`` (the
        default of Stata, statsmodels and R ``sandwich`` with K = 1). ``"CR0"``:
        ``sqrt(sum_g E_g^2) / n``, the plain sandwich. ``E_g`` is cluster g's residual total.

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
    _, _, totals, sizes, correction = _prepare(values, clusters, correction)
    return math.sqrt(cluster_robust_variance(totals, sizes, correction))


def _hall_limits(mean: float, se: float, t: float, contributions: np.ndarray) -> tuple[float, float]:
    """Hall's (1992) skewness-removing transformation of a t statistic, inverted.

    ``T = (mean - mu) / se`` has a skewed distribution when the cluster contributions are
    skewed; ``g(T) = T + c T^2 + c^2 T^3 / 3 + c / 2`` with ``c = gamma / (3 sqrt(G))`` (gamma the
    contributions' skewness) is close to symmetric, so ``mu`` lies in
    ``[mean - se g^-1(t), mean - se g^-1(-t)]``; ``g`` is monotone with the closed-form inverse
    ``g^-1(x) = ((1 + 3 c (x - c / 2))^(1/3) - 1) / c``.
    """
    g = contributions.size
    m2 = float(np.mean(contributions * contributions))
    gamma = float(np.mean(contributions**3)) / m2**1.5 if m2 > 0.0 else 0.0
    c = gamma / (3.0 * math.sqrt(g))
    if abs(c) < 1e-12 or se <= 0.0:
        return mean - t * se, mean + t * se

    def inv(x: float) -> float:
        return (float(np.cbrt(1.0 + 3.0 * c * (x - c / 2.0))) - 1.0) / c

    a, b = inv(-t), inv(t)
    return min(mean - se * b, mean - se * a), max(mean - se * b, mean - se * a)


def clustered_mean_interval(
    values: ArrayLike, clusters: ArrayLike, confidence_level: float = 0.95, correction: str = "CR2",
    skew_corrected: bool = False,
) -> ClusteredMeanResult:
    """Mean with a cluster-robust t interval.

    Parameters
    ----------
    values, clusters, correction
        As for :func:`clustered_standard_error`. The default ``"CR2"`` with Bell-McCaffrey
        degrees of freedom is what R clubSandwich's ``coef_test(vcov = "CR2", test =
        "Satterthwaite")`` reports for an intercept-only ``lm``.
    confidence_level : float
        Two-sided nominal coverage in (0, 1).
    skew_corrected : bool
        CR2 or CR3 only. The t interval on the smaller of the Bell-McCaffrey df and the plug-in
        Welch-Satterthwaite df of the clusters' variance terms (about the number of clusters that
        carry the variance), with Hall's (1992) transformation removing the skewness of the
        cluster contributions (:func:`_hall_limits`), so the interval can be asymmetric. For
        heavy-tailed cluster sizes whose effect grows with size (lognormal sizes, CV 1.8) the
        symmetric CR2 interval covered 86-91 % with the error nearly all on one side; with CR3
        and this correction 95-97 %, one-sided misses 2.7-4.0 % against 2.5 % nominal
        (``benchmarks/coverage.py --grid informative``): better, not exact.

    Returns
    -------
    ClusteredMeanResult
        ``estimate`` (the mean), ``low``/``high`` = ``mean -/+ t_df se``, ``se``, ``df``,
        ``n_clusters``, ``correction``, ``max_cluster_share`` and ``effective_clusters``. ``df`` is the Bell-McCaffrey value (a real
        number, ``G - 1`` for equal cluster sizes) under CR2 and CR3 and ``G - 1`` under CR0/CR1.
        The interval is not clipped: for 0/1 outcomes with few clusters it may leave [0, 1],
        which is itself a warning sign. When every cluster's residual total is zero the
        interval has zero width; it is then uninformative, not certain.

    Notes
    -----
    CR1 on ``G - 1`` df under-covers with unequal cluster sizes and whenever one cluster
    dominates; CR2 with Bell-McCaffrey df holds its level far better there (the simulations
    are in the project's coverage study).
    """
    return clustered_mean_parts(values, clusters, correction, skew_corrected).interval(confidence_level)


@dataclass(frozen=True)
class ClusteredMeanParts:
    """What :func:`clustered_mean_interval` computes before its level: :meth:`interval` gives the interval at any
    level, with the numbers the function gives (a paired difference is read at several levels on one group)."""

    mean: float
    n: int
    se: float
    df: float
    n_clusters: int
    correction: str
    skew: bool
    contributions: np.ndarray | None  # (the skewness correction's cluster contributions)
    note: str
    max_cluster_share: float
    effective_clusters: float

    def interval(self, confidence_level: float = 0.95) -> ClusteredMeanResult:
        """The interval at ``confidence_level``."""
        level = _level("confidence_level", confidence_level)
        mean, se = self.mean, self.se
        t = t_upper_quantile(self.df, (1.0 - level) / 2.0)
        low, high = mean - t * se, mean + t * se
        if self.skew:
            assert self.contributions is not None
            low, high = _hall_limits(mean, se, t, self.contributions)
        return ClusteredMeanResult(
            estimate=mean, low=low, high=high,
            method=f"cluster_robust_t_{self.correction.lower()}" + ("_skew" if self.skew else ""),
            confidence_level=level, n=self.n, se=se, df=self.df, n_clusters=self.n_clusters,
            correction=self.correction, note=self.note, max_cluster_share=self.max_cluster_share,
            effective_clusters=self.effective_clusters,
        )


def clustered_mean_parts(values: ArrayLike, clusters: ArrayLike, correction: str = "CR2",
                         skew_corrected: bool = False) -> ClusteredMeanParts:
    """:func:`clustered_mean_interval` up to its level (validated alike; the level is checked by ``interval``)."""
    arr, mean, totals, sizes, correction = _prepare(values, clusters, correction)
    n_clusters = int(sizes.size)
    se = math.sqrt(cluster_robust_variance(totals, sizes, correction))
    df: float = _bm_df(sizes) if correction in ("CR2", "CR3") else n_clusters - 1
    skew = bool(skew_corrected and correction in ("CR2", "CR3"))
    contributions = None
    if skew:
        scale = (1.0 - sizes / sizes.sum()) ** (-1.0 if correction == "CR3" else -0.5)
        terms = (totals * scale) ** 2
        denom = float(np.sum(terms * terms))
        if denom > 0.0:
            df = min(df, max(1.0, float(np.sum(terms)) ** 2 / denom))
        contributions = totals * scale * n_clusters / arr.size
    return ClusteredMeanParts(
        mean=mean, n=int(arr.size), se=se, df=df, n_clusters=n_clusters, correction=correction,
        skew=skew, contributions=contributions,
        note=(
            "every cluster's residual total is zero (no between-cluster variation in the data), so the interval "
            "has zero width; it is uninformative, not evidence of certainty"
            if bool(np.all(np.abs(totals) <= 1e-12 * sizes * max(1.0, abs(float(arr.max())), abs(float(arr.min())))))
            else ""
        ),
        max_cluster_share=float(sizes.max() / sizes.sum()),
        effective_clusters=float(sizes.sum() ** 2 / np.dot(sizes, sizes)),
    )
