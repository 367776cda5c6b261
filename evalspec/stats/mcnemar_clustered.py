"""McNemar-type test for paired binary outcomes when the cases come in clusters.

Durkalski, Palesch, Lipsitz and Rust (2003) replace McNemar's ``(b - c)^2 / (b + c)`` by a
statistic whose variance is estimated from between-cluster variation. With ``b_k`` and
``c_k`` the discordant counts of cluster k (first candidate only, second only):

    X^2 = (sum_k (b_k - c_k))^2 / sum_k (b_k - c_k)^2,

referred to chi-square on 1 degree of freedom. Under the null of marginal homogeneity each
``b_k - c_k`` has mean zero, so the denominator estimates the variance of the numerator's
square root without centring; with every case its own cluster it reduces to McNemar's
statistic (``(b_k - c_k)^2 = b_k + c_k`` for a single pair).

Of the published cluster-adjusted McNemar tests this one is chosen because its variance is
estimated under the null (a score-type test, like McNemar's own) and it reduces exactly to
McNemar's statistic when every case is its own cluster. Obuchowski (1998) gives an
alternative built from the cluster-level variances and covariance of the two marginal
proportions.

References
----------
Durkalski VL, Palesch YY, Lipsitz SR, Rust PF (2003). Analysis of clustered matched-pair
data. Statistics in Medicine 22:2417-2428.
Obuchowski NA (1998). On the comparison of correlated proportions for clustered data.
Statistics in Medicine 17:1495-1507.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from evalspec.stats._results import ClusteredMcNemarResult
from evalspec.stats._validation import InvalidArgument, _cluster_codes, _finite_array

__all__ = ["clustered_mcnemar"]


def _binary(name: str, values: ArrayLike) -> np.ndarray:
    arr = _finite_array(name, values)
    bad = (arr != 0.0) & (arr != 1.0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidArgument(name, values, f"must hold 0/1 outcomes (element {i} is {arr[i]!r})")
    return arr


def clustered_mcnemar(x: ArrayLike, y: ArrayLike, clusters: ArrayLike) -> ClusteredMcNemarResult:
    """Durkalski et al. (2003) clustered McNemar test that two paired proportions are equal.

    Parameters
    ----------
    x, y : array_like of 0/1, shape (n,)
        Per-case binary outcomes of the first and second candidate on the same cases.
    clusters : array_like, shape (n,)
        The cluster of each case (any hashable labels). Cases that are their own cluster give
        the ordinary (uncorrected, asymptotic) McNemar test.

    Returns
    -------
    ClusteredMcNemarResult
        ``statistic`` = ``(sum_k d_k)^2 / sum_k d_k^2`` with ``d_k = b_k - c_k``, the
        two-sided ``pvalue`` from chi-square on 1 df, the total discordant counts ``b`` and
        ``c``, ``n`` (cases), ``n_clusters`` and ``clusters_discordant`` (clusters with a
        nonzero ``d_k``). When every ``d_k`` is zero (no disagreement, or disagreements that
        cancel inside every cluster) the statistic is 0 and the p-value 1.

    Notes
    -----
    The chi-square reference is asymptotic in the number of clusters with disagreements;
    with few of them (say under 20) the test can be liberal -- the project's simulation
    reports its false-positive rate by number of clusters.
    """
    xa = _binary("x", x)
    ya = _binary("y", y)
    if xa.size != ya.size:
        raise InvalidArgument("y", y, f"must have the same length as x ({xa.size}), got {ya.size}")
    codes, n_clusters = _cluster_codes(clusters, xa.size)
    first_only = xa * (1.0 - ya)
    second_only = (1.0 - xa) * ya
    d = np.bincount(codes, weights=first_only - second_only, minlength=n_clusters)
    num = float(d.sum()) ** 2
    den = float(np.dot(d, d))
    if den == 0.0:
        statistic, pvalue = 0.0, 1.0
    else:
        statistic = num / den
        pvalue = float(special.chdtrc(1.0, statistic))
    return ClusteredMcNemarResult(
        statistic=float(statistic),
        pvalue=float(min(max(pvalue, 0.0), 1.0)),
        method="durkalski",
        b=int(round(float(first_only.sum()))),
        c=int(round(float(second_only.sum()))),
        n=int(xa.size),
        n_clusters=int(n_clusters),
        clusters_discordant=int(np.count_nonzero(d)),
    )
