"""Highest-density intervals: of a Beta distribution, any unimodal scipy distribution, draws, or weighted atoms.

The highest-density interval (HDI) with mass ``prob`` is the shortest interval holding that
probability; for a unimodal density its ends have equal density. It is the credible interval
reported for Bayesian pass rates (a Beta posterior) alongside the equal-tailed one. This is
the one home of the HDI: the Beta-Binomial engine's draws (:func:`hdi_rows`) and grid
(:func:`weighted_hdi`) use the rules here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from evalspec.stats._numeric import find_root
from evalspec.stats._results import HDIResult
from evalspec.stats._validation import InvalidArgument, _finite_array, _level

__all__ = ["beta_hdi", "distribution_hdi", "hdi", "hdi_rows", "weighted_hdi"]


def _positive(name: str, value: Any) -> float:
    try:
        fvalue = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(name, value, "must be a positive number") from None
    if isinstance(value, bool) or not (fvalue > 0.0 and math.isfinite(fvalue)):
        raise InvalidArgument(name, value, "must be a positive finite number")
    return fvalue


def _unimodal_hdi(dist: Any, prob: float) -> tuple[float, float]:
    """Shortest interval of mass ``prob`` for a frozen continuous unimodal distribution.

    Solves ``pdf(ppf(t)) = pdf(ppf(t + prob))`` for the lower tail mass ``t`` in
    ``[0, 1 - prob]``; when the density is monotone the interval is pinned at the end of the
    support where the density is highest.
    """

    def density_at(q: float) -> float:
        x = float(dist.ppf(min(q, 1.0)))
        return float(dist.pdf(x)) if math.isfinite(x) else 0.0  # no density at an infinite end

    def gap(t: float) -> float:
        return density_at(t) - density_at(t + prob)

    hi_t = 1.0 - prob
    g0, g1 = gap(0.0), gap(hi_t)
    if g0 >= 0.0:  # density highest at the lower end: decreasing
        t = 0.0
    elif g1 <= 0.0:  # highest at the upper end: increasing
        t = hi_t
    else:
        t = find_root(gap, 0.0, hi_t, xtol=1e-15)
    return float(dist.ppf(t)), float(dist.ppf(min(t + prob, 1.0)))


class _Beta:
    """The two methods of a frozen Beta(a, b) that the HDI needs, from scipy.special (cheap)."""

    def __init__(self, a: float, b: float) -> None:
        self.a, self.b = a, b
        self._log_norm = float(special.betaln(a, b))

    def ppf(self, q: float) -> float:
        return float(special.betaincinv(self.a, self.b, q))

    def pdf(self, x: float) -> float:
        if x <= 0.0 or x >= 1.0:
            if (x <= 0.0 and self.a == 1.0) or (x >= 1.0 and self.b == 1.0):
                return math.exp(-self._log_norm)
            if (x <= 0.0 and self.a < 1.0) or (x >= 1.0 and self.b < 1.0):
                return math.inf
            return 0.0
        return math.exp((self.a - 1.0) * math.log(x) + (self.b - 1.0) * math.log1p(-x) - self._log_norm)


def distribution_hdi(dist: Any, prob: float = 0.95) -> HDIResult:
    """HDI of a frozen, continuous, unimodal ``scipy.stats`` distribution.

    Parameters
    ----------
    dist : scipy.stats frozen distribution
        For example ``scipy.stats.gamma(2.5, scale=0.5)``. Unimodality is assumed, not
        checked; for a multimodal density the highest-density region is not an interval.
    prob : float
        Probability mass in (0, 1).

    Returns
    -------
    HDIResult
        ``low``, ``high``, ``estimate`` (the mean), ``confidence_level = prob``, ``n = 0``.
    """
    prob = _level("prob", prob)
    low, high = _unimodal_hdi(dist, prob)
    return HDIResult(
        estimate=float(dist.mean()), low=low, high=high, method="hdi", confidence_level=prob, n=0
    )


def beta_hdi(a: float, b: float, prob: float = 0.95) -> HDIResult:
    """Highest-density interval of Beta(a, b).

    Parameters
    ----------
    a, b : float
        Shape parameters, both positive.
    prob : float
        Probability mass in (0, 1).

    Returns
    -------
    HDIResult
        ``estimate`` is the mean ``a / (a + b)``; ``n = 0``.

    Raises
    ------
    InvalidArgument
        Non-positive shapes, or ``a < 1`` and ``b < 1`` together: that density is U-shaped
        and its highest-density region is two intervals, not one.

    Notes
    -----
    Monotone densities are pinned at the boundary in closed form: Beta(a <= 1, b > 1) gives
    ``[0, ppf(prob)]`` (for Beta(1, b): ``1 - (1 - prob)^(1/b)``), Beta(a > 1, b <= 1) gives
    ``[ppf(1 - prob), 1]``. Beta(1, 1) (uniform) has no unique HDI; the central interval is
    returned.
    """
    a = _positive("a", a)
    b = _positive("b", b)
    prob = _level("prob", prob)
    dist = _Beta(a, b)
    if a < 1.0 and b < 1.0:
        raise InvalidArgument(
            "a", a, f"Beta({a:g}, {b:g}) is U-shaped: its highest-density region is two intervals, not one"
        )
    if a == 1.0 and b == 1.0:
        low, high = (1.0 - prob) / 2.0, (1.0 + prob) / 2.0
    elif a <= 1.0 < b or (a < 1.0 and b == 1.0):
        low, high = 0.0, float(dist.ppf(prob))
    elif b <= 1.0 < a or (b < 1.0 and a == 1.0):
        low, high = float(dist.ppf(1.0 - prob)), 1.0
    else:
        low, high = _unimodal_hdi(dist, prob)
    return HDIResult(estimate=a / (a + b), low=low, high=high, method="beta_hdi", confidence_level=prob, n=0)


def hdi(samples: ArrayLike, prob: float = 0.95) -> HDIResult:
    """Highest-density interval from draws (for example MCMC output).

    Parameters
    ----------
    samples : array_like of float, shape (n,)
        Draws from a unimodal distribution.
    prob : float
        Probability mass in (0, 1).

    Returns
    -------
    HDIResult
        The narrowest interval ``[s_(i), s_(i+k-1)]`` of the sorted draws that contains
        ``k = ceil(prob * n)`` of them (so at least ``prob`` of the draws); ties in width go
        to the lowest ``i``. ``estimate`` is the sample mean and ``n`` the number of draws.
    """
    arr = np.sort(_finite_array("samples", samples))
    prob = _level("prob", prob)
    low, high = hdi_rows(arr, prob)
    return HDIResult(
        estimate=float(arr.mean()),
        low=float(low[0]),
        high=float(high[0]),
        method="sample_hdi",
        confidence_level=prob,
        n=int(arr.size),
    )


def hdi_rows(draws: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """Highest-density interval of each row of ``draws``: the rule of :func:`hdi`, vectorised over rows.

    The narrowest window of ``k = ceil(prob * n)`` sorted draws; ties go to the lowest.
    """
    arr = np.sort(np.atleast_2d(draws), axis=1)
    n = arr.shape[1]
    k = max(1, min(n, math.ceil(prob * n - 1e-9)))
    widths = arr[:, k - 1:] - arr[:, : n - k + 1]
    i = np.argmin(widths, axis=1)
    rows = np.arange(arr.shape[0])
    return arr[rows, i], arr[rows, i + k - 1]


def weighted_hdi(values: np.ndarray, weights: np.ndarray, prob: float) -> tuple[float, float]:
    """Shortest interval holding ``prob`` of the weight of weighted atoms (deterministic HDI)."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    cum = np.concatenate([[0.0], np.cumsum(weights[order])])
    cum /= cum[-1]
    # for each start i, the first end k with cum[k + 1] - cum[i] >= prob
    ends = np.searchsorted(cum, cum[:-1] + prob - 1e-12, side="left") - 1
    ok = ends < v.size
    starts = np.flatnonzero(ok)
    widths = v[ends[ok]] - v[starts]
    best = int(np.argmin(widths))
    return float(v[starts[best]]), float(v[ends[ok][best]])
