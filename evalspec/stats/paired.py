"""Paired 2x2 tables: difference of proportions, McNemar, non-inferiority and equivalence.

A paired table is ``(a, b, c, d)``: a = both candidates pass, b = first only, c = second
only, d = neither; ``n = a + b + c + d`` and the difference is ``p1 - p2 = (b - c) / n``.
Swapping the candidates swaps b and c, negates the difference and mirrors every interval.
"""

from __future__ import annotations

import math

from scipy import special

from evalspec.stats._numeric import find_root, normal_upper_quantile
from evalspec.stats._results import (
    EquivalenceResult,
    McNemarResult,
    NonInferiorityResult,
    PairedDifferenceResult,
)
from evalspec.stats._validation import InvalidArgument, _choice, _count, _level
from evalspec.stats.proportion import wilson_limits

__all__ = [
    "MCNEMAR_METHODS",
    "PAIRED_METHODS",
    "mcnemar",
    "paired_difference_interval",
    "paired_equivalence_test",
    "paired_noninferiority_test",
    "tango_score_statistic",
]

#: Methods accepted by :func:`paired_difference_interval`.
PAIRED_METHODS = ("newcombe", "newcombe_nocc", "tango", "wald", "wald_cc", "agresti_min", "bonett_price")
#: Methods accepted by :func:`mcnemar`.
MCNEMAR_METHODS = ("exact", "mid_p", "asymptotic", "asymptotic_cc")


def _table(a: int, b: int, c: int, d: int) -> tuple[int, int, int, int]:
    table = (_count("a", a), _count("b", b), _count("c", c), _count("d", d))
    if sum(table) == 0:
        raise InvalidArgument("a + b + c + d", 0, "the table is empty; need at least one paired case")
    return table


def paired_difference_interval(
    a: int,
    b: int,
    c: int,
    d: int,
    method: str = "newcombe",
    confidence_level: float = 0.95,
) -> PairedDifferenceResult:
    """Confidence interval for the difference of paired proportions ``(b - c) / n``.

    Parameters
    ----------
    a, b, c, d : int
        The paired 2x2 table: a both pass, b first only, c second only, d neither.
    method : str
        * ``"newcombe"`` -- Newcombe (1998b) method 10: square-and-add of the two Wilson
          intervals with the continuity-corrected correlation
          ``phi = max(ad - bc - n/2, 0) / sqrt((a+b)(c+d)(a+c)(b+d))`` when ``ad > bc``
          (uncorrected phi otherwise; phi = 0 when a margin is empty).
        * ``"newcombe_nocc"`` -- Newcombe method 8 (uncorrected phi).
        * ``"tango"`` -- Tango (1998) asymptotic score interval, by root finding.
        * ``"wald"`` -- ``d +/- z sqrt(b + c - (b - c)^2/n) / n``.
        * ``"wald_cc"`` -- Fagerland et al. (2014) form: ``d +/- z sqrt(b + c - (|b - c| -
          1)^2/n) / n``. (The other published continuity correction adds ``1/n`` to the
          half-width; it is not offered.)
        * ``"agresti_min"`` -- Agresti & Min (2005): Wald on the table with 0.5 added to each
          cell.
        * ``"bonett_price"`` -- Bonett & Price (2012) Laplace-adjusted Wald:
          ``p12 = (b+1)/(n+2)``, ``p21 = (c+1)/(n+2)``, ``SE = sqrt((p12 + p21 - (p12 -
          p21)^2)/(n+2))``.
    confidence_level : float
        Two-sided nominal coverage in (0, 1).

    Returns
    -------
    PairedDifferenceResult
        ``estimate = (b - c)/n`` (for every method, including the adjusted ones whose
        interval is centred elsewhere) and an interval clipped to [-1, 1] that always
        contains the estimate: the adjusted Wald intervals (``agresti_min``,
        ``bonett_price``) are centred at a shrunken difference and can otherwise exclude the
        observed one (for example ``agresti_min`` on (0, 20, 0, 0): centre 20/22), so their
        limit on that side is moved out to the estimate.

    Notes
    -----
    Wald under-covers when b + c is small and degenerates to a zero-width interval when
    b = c = 0; prefer ``newcombe`` or ``tango`` (Fagerland, Lydersen & Laake 2014).

    References
    ----------
    Newcombe RG (1998). Improved confidence intervals for the difference between binomial
    proportions based on paired data. Stat Med 17:2635-2650.
    Tango T (1998). Equivalence test and confidence interval for the difference in
    proportions for the paired-sample design. Stat Med 17:891-908.
    Fagerland MW, Lydersen S, Laake P (2014). Recommended tests and confidence intervals
    for paired binomial proportions. Stat Med 33:2850-2875.

    Examples
    --------
    >>> r = paired_difference_interval(74, 8, 4, 14)
    >>> r.estimate
    0.04
    """
    a, b, c, d = _table(a, b, c, d)
    method = _choice("method", method, PAIRED_METHODS)
    level = _level("confidence_level", confidence_level)
    n = a + b + c + d
    tail = (1.0 - level) / 2.0
    low, high = _PAIRED[method](a, b, c, d, tail)
    estimate = (b - c) / n
    # an interval must contain its own estimate (the shrunken-centre methods can miss it)
    low, high = min(low, estimate), max(high, estimate)
    return PairedDifferenceResult(
        estimate=estimate,
        low=float(min(max(low, -1.0), 1.0)),
        high=float(min(max(high, -1.0), 1.0)),
        method=method,
        confidence_level=level,
        n=n,
        table=(a, b, c, d),
    )


_z = normal_upper_quantile


def _newcombe(a: int, b: int, c: int, d: int, tail: float, corrected: bool = True) -> tuple[float, float]:
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_limits(a + b, n, tail)
    l2, u2 = wilson_limits(a + c, n, tail)
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    if denom == 0:
        phi = 0.0
    else:
        num = a * d - b * c
        if corrected and num > 0:
            num = max(num - n / 2.0, 0.0)
        phi = num / math.sqrt(denom)
    theta = p1 - p2
    sl = (p1 - l1) ** 2 + (u2 - p2) ** 2
    su = (u1 - p1) ** 2 + (p2 - l2) ** 2
    dl = sl - 2.0 * phi * (p1 - l1) * (u2 - p2)
    du = su - 2.0 * phi * (u1 - p1) * (p2 - l2)
    # with phi = 1 and symmetric margins dl is 0 in exact arithmetic; rounding must not leave a
    # spurious +-1e-9 half-width (which also broke nesting across levels)
    dl = 0.0 if dl <= 1e-12 * sl else dl
    du = 0.0 if du <= 1e-12 * su else du
    return theta - math.sqrt(dl), theta + math.sqrt(du)


def _newcombe_nocc(a: int, b: int, c: int, d: int, tail: float) -> tuple[float, float]:
    return _newcombe(a, b, c, d, tail, corrected=False)


def tango_score_statistic(b: int, c: int, n: int, delta: float) -> float:
    """Tango's (1998) score statistic for ``H0: p1 - p2 = delta``.

    Parameters
    ----------
    b, c : int
        Discordant counts (first only, second only).
    n : int
        Total number of pairs.
    delta : float
        Hypothesised difference, ``-1 < delta < 1``.

    Returns
    -------
    float
        ``Z = (b - c - n delta) / sqrt(n (2 q21 + delta (1 - delta)))`` where ``q21`` is the
        restricted maximum-likelihood estimate of the probability of cell c under ``H0``.
        Z decreases in ``delta``; large Z is evidence that ``p1 - p2 > delta``.
    """
    aa = 2.0 * n
    bb = -b - c + (2.0 * n - b + c) * delta
    cc = -c * delta * (1.0 - delta)
    disc = max(bb * bb - 4.0 * aa * cc, 0.0)
    q21 = max((-bb + math.sqrt(disc)) / (2.0 * aa), 0.0)
    var = n * (2.0 * q21 + delta * (1.0 - delta))
    num = b - c - n * delta
    if var <= 0.0:
        if num == 0:
            return 0.0
        return math.copysign(math.inf, num)
    return num / math.sqrt(var)


def _tango_limits(b: int, c: int, n: int, tail: float) -> tuple[float, float]:
    z = _z(tail)
    theta = (b - c) / n
    edge = 1.0 - 1e-12

    def f(delta: float, target: float) -> float:
        return tango_score_statistic(b, c, n, delta) - target

    # Z(delta) decreases from +inf-ish to -inf-ish; the limits solve Z = +z and Z = -z.
    if f(-edge, z) <= 0.0:
        low = -1.0
    else:
        low = find_root(lambda delta: f(delta, z), -edge, theta, xtol=1e-14) if theta > -edge else -1.0
    if f(edge, -z) >= 0.0:
        high = 1.0
    else:
        high = find_root(lambda delta: f(delta, -z), theta, edge, xtol=1e-14) if theta < edge else 1.0
    return low, high


def _tango(a: int, b: int, c: int, d: int, tail: float) -> tuple[float, float]:
    return _tango_limits(b, c, a + b + c + d, tail)


def _wald(a: int, b: int, c: int, d: int, tail: float) -> tuple[float, float]:
    n = a + b + c + d
    theta = (b - c) / n
    half = _z(tail) * math.sqrt(max(b + c - (b - c) ** 2 / n, 0.0)) / n
    return theta - half, theta + half


def _wald_cc(a: int, b: int, c: int, d: int, tail: float) -> tuple[float, float]:
    n = a + b + c + d
    theta = (b - c) / n
    half = _z(tail) * math.sqrt(max(b + c - (abs(b - c) - 1) ** 2 / n, 0.0)) / n
    return theta - half, theta + half


def _agresti_min(a: int, b: int, c: int, d: int, tail: float) -> tuple[float, float]:
    bb, cc, nn = b + 0.5, c + 0.5, a + b + c + d + 2.0
    theta = (bb - cc) / nn
    half = _z(tail) * math.sqrt(max(bb + cc - (bb - cc) ** 2 / nn, 0.0)) / nn
    return theta - half, theta + half


def _bonett_price(a: int, b: int, c: int, d: int, tail: float) -> tuple[float, float]:
    n = a + b + c + d
    p12, p21 = (b + 1.0) / (n + 2.0), (c + 1.0) / (n + 2.0)
    theta = p12 - p21
    half = _z(tail) * math.sqrt(max(p12 + p21 - theta**2, 0.0) / (n + 2.0))
    return theta - half, theta + half


_PAIRED = {
    "newcombe": _newcombe,
    "newcombe_nocc": _newcombe_nocc,
    "tango": _tango,
    "wald": _wald,
    "wald_cc": _wald_cc,
    "agresti_min": _agresti_min,
    "bonett_price": _bonett_price,
}


def mcnemar(b: int, c: int, method: str = "exact") -> McNemarResult:
    """McNemar's test that the two paired proportions are equal (two-sided).

    Parameters
    ----------
    b, c : int
        Discordant counts: first only, second only.
    method : str
        ``"exact"`` -- conditional binomial test: ``min(1, 2 P(X <= min(b, c)))`` with
        ``X ~ Bin(b + c, 1/2)``; ``"mid_p"`` -- the exact p-value minus ``P(X = min(b, c))``
        (Fagerland et al. 2013, recommended); ``"asymptotic"`` -- ``z = (b - c)/sqrt(b + c)``
        on the normal (the chi-square test without correction); ``"asymptotic_cc"`` -- ``z =
        sign(b - c) max(|b - c| - 1, 0)/sqrt(b + c)`` (Edwards' continuity correction; the
        correction is floored at 0 so b = c gives p = 1).

    Returns
    -------
    McNemarResult
        ``statistic`` (z for the asymptotic methods, the count b for the exact ones),
        ``pvalue`` and the counts. With no discordant pairs (b = c = 0) every method returns
        ``pvalue = 1`` (no evidence) and ``statistic = 0``.
    """
    b = _count("b", b)
    c = _count("c", c)
    method = _choice("method", method, MCNEMAR_METHODS)
    m = b + c
    if m == 0:
        return McNemarResult(statistic=0.0, pvalue=1.0, method=method, b=b, c=c, n=0)
    k = min(b, c)
    if method in ("exact", "mid_p"):
        # P(X <= k) for X ~ Bin(m, 1/2); mid-p = P(X <= k) + P(X <= k - 1) = 2 P(X <= k) - P(X = k)
        p = 2.0 * float(special.bdtr(k, m, 0.5))
        if method == "mid_p":
            p = float(special.bdtr(k, m, 0.5)) + (float(special.bdtr(k - 1, m, 0.5)) if k > 0 else 0.0)
        statistic = float(b)
    else:
        diff = abs(b - c) - (1 if method == "asymptotic_cc" else 0)
        statistic = math.copysign(max(diff, 0), b - c) / math.sqrt(m)
        p = 2.0 * float(special.ndtr(-abs(statistic)))
    return McNemarResult(statistic=float(statistic), pvalue=float(min(p, 1.0)), method=method, b=b, c=c, n=m)


def _margin(margin: float) -> float:
    try:
        value = float(margin)
    except (TypeError, ValueError):
        raise InvalidArgument("margin", margin, "must be a number strictly between 0 and 1") from None
    if isinstance(margin, bool) or not (0.0 < value < 1.0):
        raise InvalidArgument("margin", margin, "must be a number strictly between 0 and 1")
    return value


def paired_noninferiority_test(
    a: int, b: int, c: int, d: int, margin: float, confidence_level: float = 0.95
) -> NonInferiorityResult:
    """Non-inferiority of the first candidate by Tango's score test.

    Tests ``H0: p1 - p2 <= -margin`` against ``H1: p1 - p2 > -margin`` with
    ``Z = tango_score_statistic(b, c, n, -margin)`` and ``p = 1 - Phi(Z)``.

    Parameters
    ----------
    a, b, c, d : int
        The paired table (first candidate = the one claimed non-inferior).
    margin : float
        Non-inferiority margin, ``0 < margin < 1`` (on the difference scale).
    confidence_level : float
        ``1 - alpha``; non-inferiority is declared when ``pvalue < alpha``.

    Returns
    -------
    NonInferiorityResult
        ``statistic`` (Z), ``pvalue``, ``noninferior`` and the one-sided Tango lower bound
        ``low`` (``high = 1``): ``noninferior`` iff ``low > -margin``.
    """
    a, b, c, d = _table(a, b, c, d)
    m = _margin(margin)
    level = _level("confidence_level", confidence_level)
    n = a + b + c + d
    z = tango_score_statistic(b, c, n, -m)
    p = float(special.ndtr(-z))
    low, _ = _tango_limits(b, c, n, 1.0 - level)
    return NonInferiorityResult(
        estimate=(b - c) / n,
        low=float(low),
        high=1.0,
        method="tango",
        confidence_level=level,
        n=n,
        table=(a, b, c, d),
        margin=m,
        statistic=float(z),
        pvalue=p,
        noninferior=bool(p < 1.0 - level),
    )


def paired_equivalence_test(
    a: int, b: int, c: int, d: int, margin: float, confidence_level: float = 0.95
) -> EquivalenceResult:
    """Equivalence of two paired proportions by two one-sided Tango score tests (TOST).

    ``H0: |p1 - p2| >= margin``. The lower test uses ``Z- = Z(-margin)``, ``p- = 1 -
    Phi(Z-)``; the upper ``Z+ = Z(+margin)``, ``p+ = Phi(Z+)``; ``pvalue = max(p-, p+)``.

    Parameters
    ----------
    a, b, c, d : int
        The paired table.
    margin : float
        Equivalence margin, ``0 < margin < 1``.
    confidence_level : float
        ``1 - alpha``; equivalence is declared when ``pvalue < alpha``.

    Returns
    -------
    EquivalenceResult
        Both one-sided statistics and p-values, the TOST p-value, ``equivalent``, and the
        two-sided Tango interval at level ``1 - 2 alpha``, which lies inside ``(-margin,
        margin)`` exactly when ``equivalent``.
    """
    a, b, c, d = _table(a, b, c, d)
    m = _margin(margin)
    level = _level("confidence_level", confidence_level)
    n = a + b + c + d
    z_lo = tango_score_statistic(b, c, n, -m)
    z_hi = tango_score_statistic(b, c, n, m)
    p_lo = float(special.ndtr(-z_lo))
    p_hi = float(special.ndtr(z_hi))
    low, high = _tango_limits(b, c, n, 1.0 - level)
    worst_is_lower = p_lo >= p_hi
    p = max(p_lo, p_hi)
    return EquivalenceResult(
        estimate=(b - c) / n,
        low=float(low),
        high=float(high),
        method="tango",
        confidence_level=level,
        n=n,
        table=(a, b, c, d),
        margin=m,
        statistic=float(z_lo if worst_is_lower else z_hi),
        pvalue=p,
        statistic_lower=float(z_lo),
        pvalue_lower=p_lo,
        statistic_upper=float(z_hi),
        pvalue_upper=p_hi,
        equivalent=bool(p < 1.0 - level),
    )
