"""Confidence intervals for a single binomial proportion.

Conventions (documented in :func:`proportion_interval` and tested against
``statistics-cases.json``):

* Jeffreys is the equal-tailed Beta(x + 1/2, n - x + 1/2) interval with the limit reset to
  0 at x = 0 and to 1 at x = n (Brown, Cai & DasGupta 2001).
* Agresti-Coull and Wald are clipped to [0, 1] (as statsmodels and PropCIs do; R ``binom``
  does not clip). Every reported interval therefore lies in [0, 1].
* mid-p limits are found by exact root finding on the binomial distribution.
"""

from __future__ import annotations

import math

from scipy import special

from evalspec.stats._numeric import find_root, normal_upper_quantile
from evalspec.stats._results import ProportionResult
from evalspec.stats._validation import InvalidArgument, _choice, _count, _level

__all__ = ["ALTERNATIVES", "PROPORTION_METHODS", "clopper_pearson_limits", "proportion_interval", "wilson_limits"]

#: Methods accepted by :func:`proportion_interval`.
PROPORTION_METHODS = ("wilson", "wilson_cc", "clopper_pearson", "jeffreys", "agresti_coull", "mid_p", "wald")
#: Values accepted for ``alternative``.
ALTERNATIVES = ("two-sided", "less", "greater")


def proportion_interval(
    successes: int,
    n: int,
    method: str = "wilson",
    confidence_level: float = 0.95,
    alternative: str = "two-sided",
) -> ProportionResult:
    """Confidence interval for a binomial proportion.

    Parameters
    ----------
    successes : int
        Number of successes, ``0 <= successes <= n``.
    n : int
        Number of independent trials, ``n >= 1``.
    method : str
        ``"wilson"`` (score; Newcombe 1998 method 3), ``"wilson_cc"`` (score with continuity
        correction; method 4), ``"clopper_pearson"`` (exact; method 5), ``"jeffreys"``
        (equal-tailed Bayesian with the Jeffreys prior), ``"agresti_coull"`` (adjusted Wald),
        ``"mid_p"`` (exact mid-p; method 6) or ``"wald"`` (normal approximation; it
        under-covers badly at small n or extreme p and is offered for comparison only).
    confidence_level : float
        Nominal coverage, strictly between 0 and 1.
    alternative : str
        ``"two-sided"``; ``"less"`` for a one-sided upper bound (``low`` is 0) -- the bound on
        a failure rate when no or few failures were seen; ``"greater"`` for a one-sided lower
        bound (``high`` is 1). A one-sided bound puts all of ``1 - confidence_level`` in one
        tail, so it equals the corresponding limit of the two-sided interval at level
        ``2 * confidence_level - 1``.

    Returns
    -------
    ProportionResult
        ``estimate = successes / n`` and the interval ``(low, high)``, always within [0, 1].

    Notes
    -----
    Conventions where published implementations differ:

    * Jeffreys: equal-tailed Beta(x + 1/2, n - x + 1/2) quantiles, with ``low = 0`` at x = 0
      and ``high = 1`` at x = n (Brown, Cai & DasGupta 2001; ratesci). R ``binom.bayes``
      instead moves the whole alpha into one tail at the boundary.
    * Agresti-Coull (centre ``(x + z^2/2)/(n + z^2)``) and Wald are clipped to [0, 1]
      (statsmodels, PropCIs); R ``binom`` reports the unclipped limits.
    * Wilson with continuity correction follows Newcombe (1998) method 4, with ``low = 0``
      at x = 0 and ``high = 1`` at x = n.
    * Clopper-Pearson at x = 0 (one-sided ``"less"``) gives ``1 - alpha**(1/n)``; the "rule
      of three" 3/n approximates it at 95 %.

    References
    ----------
    Newcombe RG (1998). Two-sided confidence intervals for the single proportion: comparison
    of seven methods. Stat Med 17:857-872.
    Brown LD, Cai TT, DasGupta A (2001). Interval estimation for a binomial proportion.
    Stat Sci 16:101-133.

    Examples
    --------
    >>> r = proportion_interval(82, 100)
    >>> round(r.low, 3), round(r.high, 3)
    (0.733, 0.883)
    """
    n = _count("n", n)
    if n == 0:
        raise InvalidArgument("n", n, "must be at least 1 (no trials, no proportion)")
    x = _count("successes", successes)
    if x > n:
        raise InvalidArgument("successes", successes, f"must not exceed n={n}")
    method = _choice("method", method, PROPORTION_METHODS)
    level = _level("confidence_level", confidence_level)
    alternative = _choice("alternative", alternative, ALTERNATIVES)

    # probability in each tail that is actually bounded
    tail = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    low, high = _LIMITS[method](x, n, tail)
    low = min(max(low, 0.0), 1.0)
    high = min(max(high, 0.0), 1.0)
    if alternative == "less":
        low = 0.0
    elif alternative == "greater":
        high = 1.0
    return ProportionResult(
        estimate=x / n,
        low=float(low),
        high=float(high),
        method=method,
        confidence_level=level,
        n=n,
        successes=x,
        alternative=alternative,
    )


_z = normal_upper_quantile


def wilson_limits(x: float, n: float, tail: float) -> tuple[float, float]:
    """Wilson score limits for ``x`` successes in ``n`` trials, ``tail`` probability per side.

    The building block of :func:`proportion_interval` (``"wilson"``), of Newcombe's paired
    interval and of the cluster-aware interval, which calls it with a non-integer effective
    ``x`` and ``n``. ``low`` is exactly 0 at ``x = 0`` and ``high`` exactly 1 at ``x = n``.
    Arguments are not validated (``0 <= x <= n``, ``n > 0``, ``0 < tail < 1/2``).
    """
    z = _z(tail)
    z2 = z * z
    centre = (x + z2 / 2.0) / (n + z2)
    half = z * math.sqrt(x * (n - x) / n + z2 / 4.0) / (n + z2)
    low = 0.0 if x == 0 else centre - half
    high = 1.0 if x == n else centre + half
    return low, high


def _wilson_cc(x: int, n: int, tail: float) -> tuple[float, float]:
    z = _z(tail)
    z2 = z * z
    p = x / n
    q = 1.0 - p
    denom = 2.0 * (n + z2)
    if x == 0:
        low = 0.0
    else:
        low = (2 * n * p + z2 - 1 - z * math.sqrt(max(z2 - 2 - 1 / n + 4 * p * (n * q + 1), 0.0))) / denom
    if x == n:
        high = 1.0
    else:
        high = (2 * n * p + z2 + 1 + z * math.sqrt(max(z2 + 2 - 1 / n + 4 * p * (n * q - 1), 0.0))) / denom
    return low, high


def clopper_pearson_limits(x: float, n: float, tail: float) -> tuple[float, float]:
    """Clopper-Pearson (exact, beta-quantile) limits with ``tail`` probability per side.

    Also defined for a non-integer ``x`` and ``n`` (the beta quantiles are continuous in
    them), which the cluster-aware bound uses. Arguments are not validated.
    """
    low = 0.0 if x == 0 else float(special.betaincinv(x, n - x + 1, tail))
    high = 1.0 if x == n else float(special.betaincinv(x + 1, n - x, 1.0 - tail))
    return low, high


def _jeffreys(x: int, n: int, tail: float) -> tuple[float, float]:
    low = 0.0 if x == 0 else float(special.betaincinv(x + 0.5, n - x + 0.5, tail))
    high = 1.0 if x == n else float(special.betaincinv(x + 0.5, n - x + 0.5, 1.0 - tail))
    return low, high


def _agresti_coull_unclipped(x: int, n: int, tail: float) -> tuple[float, float]:
    """Agresti-Coull limits before clipping (the R ``binom`` convention)."""
    z = _z(tail)
    n_tilde = n + z * z
    p_tilde = (x + z * z / 2.0) / n_tilde
    half = z * math.sqrt(p_tilde * (1.0 - p_tilde) / n_tilde)
    return p_tilde - half, p_tilde + half


def _mid_p(x: int, n: int, tail: float) -> tuple[float, float]:
    """Exact mid-p limits by root finding on binomial tails (``bdtr``/``bdtrc`` ufuncs)."""

    def upper_tail(p: float) -> float:  # P(X > x) + P(X = x)/2 = (P(X > x) + P(X >= x))/2, increasing
        return 0.5 * (float(special.bdtrc(x, n, p)) + float(special.bdtrc(x - 1, n, p))) - tail

    def lower_tail(p: float) -> float:  # P(X < x) + P(X = x)/2 = (P(X <= x-1) + P(X <= x))/2, decreasing
        below = float(special.bdtr(x - 1, n, p)) if x > 0 else 0.0
        return 0.5 * (below + float(special.bdtr(x, n, p))) - tail

    low = 0.0 if x == 0 else find_root(upper_tail, 0.0, 1.0)
    high = 1.0 if x == n else find_root(lower_tail, 0.0, 1.0)
    return low, high


def _wald(x: int, n: int, tail: float) -> tuple[float, float]:
    z = _z(tail)
    p = x / n
    half = z * math.sqrt(p * (1.0 - p) / n)
    return p - half, p + half


_LIMITS = {
    "wilson": wilson_limits,
    "wilson_cc": _wilson_cc,
    "clopper_pearson": clopper_pearson_limits,
    "jeffreys": _jeffreys,
    "agresti_coull": _agresti_coull_unclipped,
    "mid_p": _mid_p,
    "wald": _wald,
}
