"""Cluster-aware interval and one-sided bound for one proportion.

A pass rate (or a critical-failure rate) estimated from cases that come in clusters has a
larger variance than the binomial ``p(1 - p)/n``. The interval here keeps the shape of a
binomial interval (Wilson by default, or Clopper-Pearson) but computes it on an *effective*
number of cases, in the manner of Korn and Graubard (1998) -- the method the US National
Center for Health Statistics prescribes for proportions from clustered survey samples
(Parker et al. 2017):

1. ``p = mean(outcomes)``; ``V`` = the CR2 cluster-robust variance of that mean (Bell and
   McCaffrey 2002; see :mod:`evalspec.stats.clustered`) and ``df`` its Bell-McCaffrey
   degrees of freedom.
2. design effect ``deff = V / (p (1 - p) / n)``; effective number of cases
   ``n_eff = n / deff``, further multiplied by ``(z / t_df)^2`` so that a binomial interval
   on ``n_eff`` has the width of a t interval on ``df`` degrees of freedom (Korn and Graubard
   use ``t_{n-1}`` for ``z``; the two agree for any n at which this matters).
3. ``n_eff`` is capped at ``n`` (a design effect below 1 is not credited), and the limits are
   those of the binomial interval for ``p n_eff`` successes in ``n_eff`` trials, widened where
   needed so the interval is never narrower than the same method treating cases as
   independent.

The one-sided critical-failure bound uses the smaller of the Bell-McCaffrey degrees of
freedom and the plug-in Welch-Satterthwaite degrees of freedom of the CR2 terms (about the
number of clusters that carry the variance), because rare failures concentrated in a few
clusters make the variance estimate unstable.

The pass-rate interval's default degrees of freedom are that same conservative rule: with a
rate near 0 or 1 only the few clusters holding the rare outcome carry the variance, and the
Bell-McCaffrey df (which depend on the sizes only) left the interval at 79-91 % coverage for
p = 0.02-0.1 with ICC 0.3 and 20-50 clusters; the conservative rule holds 95 % or more there
(``benchmarks/coverage.py``, "rare outcomes in clusters").

When every outcome is equal (p = 0 or 1) the design effect cannot be estimated from the data:
zero failures in n cases carry no information about how failures would cluster. The interval
then counts clusters instead of cases -- the effective number ``n^2 / sum_g n_g^2`` (Kish) of
a design whose cases within a cluster behave alike (ICC 1), the most cautious assumption --
and ``note`` says so; treating the cases as independent there gave 78-83 % coverage at
p = 0.02 / 0.98 with ICC 0.3. When every cluster has the same mean (a rate strictly inside
(0, 1)) no design effect shows in the data and the cases are treated as independent (note).

References
----------
Korn EL, Graubard BI (1998). Confidence intervals for proportions with small expected number
of positive counts estimated from survey data. Survey Methodology 24:193-201.
Parker JD, Talih M, Malec DJ, et al. (2017). National Center for Health Statistics data
presentation standards for proportions. Vital Health Stat 2(175).
Bell RM, McCaffrey DF (2002). Bias reduction in standard errors for linear regression with
multi-stage samples. Survey Methodology 28:169-181.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from evalspec.stats._numeric import normal_upper_quantile, t_upper_quantile
from evalspec.stats._results import ClusteredProportionResult
from evalspec.stats._validation import InvalidArgument, _choice, _cluster_codes, _cluster_sizes_of, _finite_array, _level
from evalspec.stats.clustered import bell_mccaffrey_df, cluster_robust_variance
from evalspec.stats.proportion import ALTERNATIVES, clopper_pearson_limits, wilson_limits

__all__ = ["CLUSTERED_PROPORTION_METHODS", "DF_RULES", "clustered_failure_upper_bound", "clustered_proportion_interval"]

#: Binomial interval shapes accepted by :func:`clustered_proportion_interval`.
CLUSTERED_PROPORTION_METHODS = ("wilson", "clopper_pearson")

_LIMITS = {"wilson": wilson_limits, "clopper_pearson": clopper_pearson_limits}

#: Degrees-of-freedom rules accepted by :func:`clustered_proportion_interval`.
DF_RULES = ("bell_mccaffrey", "conservative")


def _welch_satterthwaite_df(weighted_squares: np.ndarray) -> float:
    """Plug-in Welch-Satterthwaite df of ``sum_g w_g``: each cluster's term counted as 1 df.

    ``(sum w_g)^2 / sum w_g^2`` -- between 1 and G; about the number of clusters that carry
    the variance (the clusters holding the failures, when failures are rare).
    """
    total = float(np.sum(weighted_squares))
    denom = float(np.sum(weighted_squares * weighted_squares))
    return max(1.0, total * total / denom) if denom > 0.0 else 1.0


def clustered_proportion_interval(
    outcomes: ArrayLike,
    clusters: ArrayLike,
    confidence_level: float = 0.95,
    method: str = "wilson",
    alternative: str = "two-sided",
    degrees_of_freedom: str = "conservative",
) -> ClusteredProportionResult:
    """Cluster-aware confidence interval for a proportion (a design-effect-adjusted interval).

    Parameters
    ----------
    outcomes : array_like of float in [0, 1], shape (n,)
        Per-case outcomes: 0/1 pass (or failure) indicators, or per-case fractions such as
        the share of a case's attempts that passed.
    clusters : array_like, shape (n,)
        The cluster of each case (any hashable labels); at least 2 clusters.
    confidence_level : float
        Nominal coverage in (0, 1).
    method : {"wilson", "clopper_pearson"}
        The binomial interval computed on the effective number of cases.
    alternative : {"two-sided", "less", "greater"}
        ``"less"``: one-sided upper bound (``low = 0``); ``"greater"``: one-sided lower bound
        (``high = 1``); all of ``1 - confidence_level`` then goes in the bounded tail.
    degrees_of_freedom : {"conservative", "bell_mccaffrey"}
        The df of the ``(z / t_df)^2`` factor. ``"bell_mccaffrey"``: the
        Bell-McCaffrey df of the CR2 variance, which depend on the cluster sizes only.
        ``"conservative"`` (default): the smaller of that and the plug-in Welch-Satterthwaite df
        ``(sum_g v_g)^2 / sum_g v_g^2`` of the CR2 terms ``v_g = E_g^2 / (1 - n_g/n)`` -- about
        the number of clusters that carry the variance. When outcomes are rare and clustered
        only a few clusters do, the variance estimate is correspondingly unstable, and the
        Bell-McCaffrey df overstate its precision (the project's simulations show the
        one-sided bound under-covering there); the conservative rule widens the interval
        exactly in that case.

    Returns
    -------
    ClusteredProportionResult
        ``estimate`` (the mean outcome), ``low``, ``high``, ``successes`` (the sum of the
        outcomes), ``n``, ``n_clusters``, ``design_effect`` (estimated; 1 when it cannot be
        estimated), ``effective_n`` (the number of cases the interval was computed on,
        ``<= n``), ``df`` (Bell-McCaffrey), ``se`` (CR2) and ``note``. The interval lies in
        [0, 1], contains the estimate, and is never narrower than the independent-cases
        interval of the same method.

    Raises
    ------
    InvalidArgument
        Outcomes empty, non-finite or outside [0, 1]; labels of the wrong length; fewer than
        2 clusters; an unknown method, alternative or level.

    Notes
    -----
    The method and its references are in the module documentation (Korn and Graubard 1998
    with a CR2 variance and Bell-McCaffrey degrees of freedom).
    """
    arr = _finite_array("outcomes", outcomes, unit_interval=True)
    codes, n_clusters = _cluster_codes(clusters, arr.size)
    if n_clusters < 2:
        raise InvalidArgument(
            "clusters", clusters, f"need at least 2 distinct clusters for a cluster-aware interval (got {n_clusters})"
        )
    level = _level("confidence_level", confidence_level)
    method = _choice("method", method, CLUSTERED_PROPORTION_METHODS)
    alternative = _choice("alternative", alternative, ALTERNATIVES)
    df_rule = _choice("degrees_of_freedom", degrees_of_freedom, DF_RULES)

    n = int(arr.size)
    total = float(arr.sum())
    p = total / n
    resid = arr - p
    totals = np.bincount(codes, weights=resid, minlength=n_clusters)
    sizes = _cluster_sizes_of(clusters, codes, n_clusters).astype(np.float64)
    variance = cluster_robust_variance(totals, sizes, "CR2")
    df = bell_mccaffrey_df(sizes)
    if df_rule == "conservative":
        df = min(df, _welch_satterthwaite_df(totals * totals / (1.0 - sizes / n)))
    tail = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    binomial_variance = p * (1.0 - p) / n

    note = ""
    if binomial_variance <= 0.0:
        n_eff = min(float(n), float(n) * n / float(np.sum(sizes * sizes)))
        deff = n / n_eff
        note = (
            f"every case has the same outcome, so how outcomes cluster cannot be estimated from the data; the "
            f"interval counts clusters, not cases ({n_eff:.1f} effective clusters, as if the cases of a cluster "
            "behaved alike), which is cautious"
        )
    elif variance <= 1e-15 * binomial_variance:
        deff = 1.0
        n_eff = float(n)
        note = (
            "every cluster has the same mean outcome, so the design effect cannot be estimated from the data; "
            "the interval treats the cases as independent"
        )
    else:
        deff = variance / binomial_variance
        t_q = t_upper_quantile(df, tail)
        ratio = normal_upper_quantile(tail) / t_q if t_q > 0.0 else 1.0  # a 50 % one-sided bound: z = t = 0
        n_eff = min(float(n), n / deff * ratio * ratio)

    limits = _LIMITS[method]
    low, high = limits(p * n_eff, n_eff, tail)
    ind_low, ind_high = limits(total, float(n), tail)  # the same method treating cases as independent
    low, high = min(low, ind_low, p), max(high, ind_high, p)
    low, high = min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0)
    if alternative == "less":
        low = 0.0
    elif alternative == "greater":
        high = 1.0
    return ClusteredProportionResult(
        estimate=p,
        low=float(low),
        high=float(high),
        method=f"{method}_cluster_deff" + ("_conservative_df" if df_rule == "conservative" else ""),
        confidence_level=level,
        n=n,
        successes=total,
        alternative=alternative,
        n_clusters=int(n_clusters),
        design_effect=float(deff),
        effective_n=float(n_eff),
        df=float(df),
        se=math.sqrt(variance),
        note=note,
    )


def clustered_failure_upper_bound(
    failures: ArrayLike, clusters: ArrayLike, confidence_level: float = 0.95
) -> ClusteredProportionResult:
    """One-sided cluster-aware upper confidence bound for a (critical) failure rate.

    Clopper-Pearson on the effective number of cases: with ``x`` failures among ``n`` cases,
    the bound is the exact binomial upper limit for ``x n_eff / n`` failures in ``n_eff``
    cases, ``n_eff = n / deff`` with the degrees-of-freedom factor of
    :func:`clustered_proportion_interval` under its ``"conservative"`` rule (the smaller of
    the Bell-McCaffrey and the plug-in Welch-Satterthwaite df: rare failures held by a few
    clusters make the variance estimate unstable, and a safety bound should not gloss over
    that), and never below the independent-cases Clopper-Pearson bound (``1 - alpha^(1/n)``
    at zero failures).

    Parameters
    ----------
    failures : array_like of 0/1 (or fractions in [0, 1]), shape (n,)
        Per-case failure indicators (1 = the case failed).
    clusters : array_like, shape (n,)
        The cluster of each case; at least 2 clusters.
    confidence_level : float
        One-sided level: the bound holds with probability ``confidence_level``.

    Returns
    -------
    ClusteredProportionResult
        ``alternative = "less"``, ``low = 0`` and the bound in ``high``; ``design_effect``,
        ``effective_n`` and ``note`` as for :func:`clustered_proportion_interval`.

    Notes
    -----
    With no failure observed the design effect cannot be estimated: the bound then counts
    clusters, not cases (the Kish effective number of clusters; ``1 - alpha^(1/G)`` with G
    equal clusters) and ``note`` says so -- the data cannot show how failures would cluster.
    """
    return clustered_proportion_interval(
        failures,
        clusters,
        confidence_level=confidence_level,
        method="clopper_pearson",
        alternative="less",
        degrees_of_freedom="conservative",
    )
