"""Sample size and minimum detectable effect for a paired comparison of two models.

Formulas from Evan Miller, "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations" (2024), section on power analysis:

* eq. 9, the number of independent questions needed to detect a difference ``delta`` with
  a two-sided test at level ``alpha`` and power ``1 - beta``::

      n = (z_{alpha/2} + z_beta)^2 * (omega^2 + sigma_A^2 / K_A + sigma_B^2 / K_B) / delta^2

  where ``omega^2`` is the variance across questions of the true per-question difference in
  score, ``sigma_X^2`` the average within-question (run-to-run) variance of model ``X`` and
  ``K_X`` the number of attempts per question that are averaged;
* eq. 10, the minimum detectable effect of ``n`` questions (eq. 9 solved for ``delta``).

Questions that share a source (a document, a customer) are not independent. With clusters
of ``m`` questions and intra-cluster correlation ``ICC`` the variance of a mean is inflated
by the design effect ``1 + (m - 1) * ICC`` (Kish, *Survey Sampling*, 1965), so the number of
*questions* is ``n * deff`` and the number of clusters ``n * deff / m``.

With clusters, the interval evalspec reads is the CR2 cluster-robust t interval, on the
Bell-McCaffrey degrees of freedom (``G - 1`` for ``G`` equal clusters), and it is
uninformative below 5 clusters. :func:`clustered_paired_power` gives the power of that rule
exactly for normal cluster means of equal-size clusters: the t statistic of ``G`` cluster means
with variance ``tau^2 = V (ICC + (1 - ICC) / m)`` is noncentral t on ``G - 1`` df. The normal
formula (eq. 9 times Kish's design effect) ignores the t quantile and overstates power with
few clusters (8 clusters of 40 at ICC 0.2 planned for 80 % have about 68 %). With ``threshold``
set to the minimum improvement it is the probability that the lower bound clears it, the
chance of a "worth acting on" verdict: at a true gain equal to the minimum improvement that
is one-sided alpha (2.5 %), whatever the number of units.

For critical failures: if ``n`` cases are run and none fails, the exact one-sided upper
confidence bound of the failure rate at level ``1 - alpha`` is ``1 - alpha^(1/n)``
(Clopper-Pearson with zero events; the "rule of three" is its approximation at 95 %), so it
lies strictly below ``limit`` (what the decision requires) exactly when
``n > ln(alpha) / ln(1 - limit)``.

Pure numbers in, numbers out: no plan objects, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from evalspec.stats._validation import InvalidArgument, _level

__all__ = [
    "MIN_POWER_CLUSTERS",
    "PowerInputs",
    "clustered_minimum_detectable_effect",
    "clustered_paired_power",
    "clusters_needed",
    "design_effect",
    "minimum_detectable_effect",
    "paired_sample_size",
    "per_case_variance",
    "variance_components",
    "zero_failure_bound",
    "zero_failure_cases",
]


def _nonneg(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(name, value, "must be a non-negative number") from None
    if isinstance(value, bool) or not math.isfinite(v) or v < 0:
        raise InvalidArgument(name, value, "must be a non-negative number")
    return v


def _positive(name: str, value: Any) -> float:
    v = _nonneg(name, value)
    if v <= 0:
        raise InvalidArgument(name, value, "must be a positive number")
    return v


def _z_sum(alpha: float, power: float) -> float:
    alpha = _level("alpha", alpha)
    power = _level("power", power)
    nd = NormalDist()
    return nd.inv_cdf(1 - alpha / 2) + nd.inv_cdf(power)


def design_effect(cluster_size: float, icc: float) -> float:
    """Kish's design effect ``1 + (m - 1) * ICC`` for clusters of (average) size ``m``."""
    m = _positive("cluster_size", cluster_size)
    if m < 1:
        raise InvalidArgument("cluster_size", cluster_size, "must be at least 1 (questions per cluster)")
    rho = _nonneg("icc", icc)
    if rho > 1:
        raise InvalidArgument("icc", icc, "must be between 0 and 1")
    return 1.0 + (m - 1.0) * rho


def _per_unit_variance(omega2: float, sigma_a2: float, k_a: int, sigma_b2: float, k_b: int) -> float:
    omega2 = _nonneg("omega2", omega2)
    sigma_a2 = _nonneg("sigma_a2", sigma_a2)
    sigma_b2 = _nonneg("sigma_b2", sigma_b2)
    for name, k in (("k_a", k_a), ("k_b", k_b)):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidArgument(name, k, "must be an integer >= 1 (attempts per question)")
    total = omega2 + sigma_a2 / k_a + sigma_b2 / k_b
    if total <= 0:
        raise InvalidArgument("omega2", omega2, "the variance of a per-question difference is zero; nothing to power")
    return total


def per_case_variance(omega2: float, sigma_a2: float = 0.0, k_a: int = 1, sigma_b2: float = 0.0,
                      k_b: int = 1) -> float:
    """Miller (2024) eq. 8: the variance of one case's difference, ``omega^2 + sigma_A^2/K_A + sigma_B^2/K_B``."""
    return _per_unit_variance(omega2, sigma_a2, k_a, sigma_b2, k_b)


def paired_sample_size(delta: float, omega2: float, *, sigma_a2: float = 0.0, k_a: int = 1, sigma_b2: float = 0.0,
                       k_b: int = 1, alpha: float = 0.05, power: float = 0.8, deff: float = 1.0) -> float:
    """Miller (2024) eq. 9 times the design effect: independent questions needed (not rounded).

    Round up with :func:`math.ceil` for a count. ``deff`` multiplies the result (questions in
    clusters); divide by the cluster size for the number of clusters.
    """
    d = _positive("delta", delta)
    var = _per_unit_variance(omega2, sigma_a2, k_a, sigma_b2, k_b)
    f = _positive("deff", deff)
    return (_z_sum(alpha, power) ** 2) * var / d**2 * f


def minimum_detectable_effect(n: float, omega2: float, *, sigma_a2: float = 0.0, k_a: int = 1,
                              sigma_b2: float = 0.0, k_b: int = 1, alpha: float = 0.05, power: float = 0.8,
                              deff: float = 1.0) -> float:
    """Miller (2024) eq. 10: the smallest difference ``n`` questions detect with the given power."""
    n = _positive("n", n)
    var = _per_unit_variance(omega2, sigma_a2, k_a, sigma_b2, k_b)
    f = _positive("deff", deff)
    return _z_sum(alpha, power) * math.sqrt(var * f / n)


#: Below this many clusters evalspec's cluster interval is uninformative (power 0).
MIN_POWER_CLUSTERS = 5


def clustered_paired_power(delta: float, omega2: float, *, clusters: int, cluster_size: float, icc: float,
                           sigma_a2: float = 0.0, k_a: int = 1, sigma_b2: float = 0.0, k_b: int = 1,
                           alpha: float = 0.05, threshold: float = 0.0) -> float:
    """P(the CR2 t interval's lower bound exceeds ``threshold``) at a true difference ``delta``.

    ``G = clusters`` equal clusters of ``cluster_size`` cases; the two-sided level is ``1 - alpha``
    so the lower bound is one-sided ``1 - alpha / 2``; t on ``G - 1`` df (CR2's Bell-McCaffrey df
    for equal sizes); cluster means normal with variance ``V (ICC + (1 - ICC) / m)``. 0 below
    :data:`MIN_POWER_CLUSTERS` clusters (the interval is uninformative there).
    """
    from scipy import stats as sps

    var = _per_unit_variance(omega2, sigma_a2, k_a, sigma_b2, k_b)
    m = _positive("cluster_size", cluster_size)
    rho = _nonneg("icc", icc)
    if rho > 1:
        raise InvalidArgument("icc", icc, "must be between 0 and 1")
    a = _level("alpha", alpha)
    g = int(clusters)
    if g < MIN_POWER_CLUSTERS:
        return 0.0
    tau = math.sqrt(var * (rho + (1.0 - rho) / m))
    ncp = (float(delta) - float(threshold)) * math.sqrt(g) / tau
    crit = float(sps.t.ppf(1.0 - a / 2.0, g - 1))
    return float(sps.nct.sf(crit, g - 1, ncp))


def clusters_needed(delta: float, omega2: float, *, cluster_size: float, icc: float, power: float = 0.8,
                    **kw: Any) -> int:
    """Fewest equal clusters with :func:`clustered_paired_power` at least ``power`` (``kw``: its other arguments)."""
    target = _level("power", power)
    _positive("delta", float(delta) - float(kw.get("threshold", 0.0)))

    def ok(g: int) -> bool:
        return clustered_paired_power(delta, omega2, clusters=g, cluster_size=cluster_size, icc=icc, **kw) >= target

    hi = MIN_POWER_CLUSTERS
    while not ok(hi):
        hi *= 2
        if hi > 1 << 30:  # pragma: no cover - a positive difference is always reachable
            raise InvalidArgument("delta", delta, "too small to detect with any number of clusters")
    lo = max(MIN_POWER_CLUSTERS - 1, hi // 2)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def clustered_minimum_detectable_effect(clusters: int, omega2: float, *, cluster_size: float, icc: float,
                                        power: float = 0.8, **kw: Any) -> float | None:
    """The true difference (above ``threshold``) that ``clusters`` equal clusters detect with ``power``;
    None below :data:`MIN_POWER_CLUSTERS` clusters."""
    from evalspec.stats._numeric import find_root

    if int(clusters) < MIN_POWER_CLUSTERS:
        return None
    target = _level("power", power)
    base = float(kw.pop("threshold", 0.0))

    def f(d: float) -> float:
        return clustered_paired_power(base + d, omega2, clusters=clusters, cluster_size=cluster_size, icc=icc,
                                      threshold=base, **kw) - target

    hi = 1.0
    while f(hi) < 0:
        hi *= 2.0
    return find_root(f, 0.0, hi, xtol=1e-10)


def zero_failure_cases(limit: float, confidence_level: float = 0.95) -> int:
    """Fewest failure-free cases whose exact one-sided upper bound lies strictly below ``limit``.

    The decision's critical-failure rule passes only when the bound is *below* the limit
    (``upper_bound < max_rate``), so a bound equal to the limit is not enough: at a limit of
    50 % and level 75 %, two clean cases give a bound of exactly 50 % (``1 - 0.25^(1/2)``) and
    three are needed. In closed form ``n = floor(ln(alpha) / ln(1 - limit)) + 1`` with
    ``alpha = 1 - confidence_level``; e.g. a 1 % limit at 95 % needs 299 cases. The count is
    settled on :func:`zero_failure_bound` itself, so rounding in the logarithms cannot move it
    across the boundary. ``limit = 1``: one case (any bound below certainty).
    """
    if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit == 1:
        return 1
    p = _level("limit", limit)
    level = _level("confidence_level", confidence_level)
    n = max(1, math.floor(math.log1p(-level) / math.log1p(-p)))
    while n > 1 and zero_failure_bound(n - 1, level) < p:
        n -= 1
    while not zero_failure_bound(n, level) < p:
        n += 1
    return n


def zero_failure_bound(n: int, confidence_level: float = 0.95) -> float:
    """Exact one-sided upper bound of a failure rate after ``n`` cases without a failure: ``1 - alpha^(1/n)``."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidArgument("n", n, "must be an integer >= 1")
    alpha = 1 - _level("confidence_level", confidence_level)
    return -math.expm1(math.log(alpha) / n)


@dataclass(frozen=True)
class PowerInputs:
    """Variance components estimated from a pilot (see :func:`variance_components`)."""

    omega2: float
    sigma_a2: float
    sigma_b2: float
    k_a: float
    k_b: float
    questions: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def variance_components(scores_a: Any, scores_b: Any) -> PowerInputs:
    """Estimate ``omega^2``, ``sigma_A^2`` and ``sigma_B^2`` from a pilot.

    ``scores_a`` and ``scores_b`` are 2-D arrays (questions x attempts; NaN where an attempt
    is absent) of the two models on the same questions. Per question, ``sigma_X^2`` is the
    within-question sample variance of the attempts (averaged over questions with at least
    two attempts; 0 when there are none); the variance of the per-question mean differences
    estimates ``omega^2 + sigma_A^2/K_A + sigma_B^2/K_B`` (Miller 2024, eq. 8), so ``omega^2``
    is that variance minus the within-question parts (floored at 0).
    """
    a = np.asarray(scores_a, dtype=np.float64)
    b = np.asarray(scores_b, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if b.ndim == 1:
        b = b[:, None]
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        raise InvalidArgument("scores_a", a.shape, "both score arrays must be questions x attempts on the same questions")
    keep = (np.isfinite(a).any(axis=1)) & (np.isfinite(b).any(axis=1))
    a, b = a[keep], b[keep]
    n = int(a.shape[0])
    if n < 2:
        raise InvalidArgument("scores_a", n, "a pilot needs at least 2 questions answered by both models")

    def within(x: np.ndarray) -> tuple[float, float]:
        k = np.isfinite(x).sum(axis=1)
        mean_k = float(k.mean())
        multi = k >= 2
        if not multi.any():
            return 0.0, mean_k
        v = np.nanvar(x[multi], axis=1, ddof=1)
        return float(v.mean()), mean_k

    sa, ka = within(a)
    sb, kb = within(b)
    d = np.nanmean(a, axis=1) - np.nanmean(b, axis=1)
    total = float(np.var(d, ddof=1))
    omega2 = max(0.0, total - sa / ka - sb / kb)
    return PowerInputs(omega2=omega2, sigma_a2=sa, sigma_b2=sb, k_a=ka, k_b=kb, questions=n)
