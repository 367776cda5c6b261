"""Exact unconditional one-sided test of a paired difference against a margin (small groups).

For ``n`` independent pairs with ``b`` pairs where only the first passes and ``c`` where only
the second passes, the difference is ``delta = p12 - p21`` (estimated by ``(b - c) / n``). The
test of ``H0: delta >= -m`` against ``H1: delta < -m`` ("no material loss beyond m")
orders the possible tables by Tango's score statistic ``Z(b, c; -m)`` (small ``Z`` is
evidence of a loss) and takes the p-value as the largest probability, over the nuisance
parameter, of a table at least as extreme as the one observed::

    p = sup_{pi in [m, 1]} P_{p12 = (pi - m)/2, p21 = (pi + m)/2}( Z(B, C) <= Z(b, c) )

where ``pi = p12 + p21`` is the discordance probability on the null boundary. This is the
exact unconditional test of Sidik (2003) for matched pairs: unlike a p-value found by
inverting an asymptotic interval (Newcombe's, for example, whose one-sided error reaches 5 %
at n = 5 against a nominal 2.5 %), its error rate never exceeds the nominal level at any
``n``. The supremum is taken on the boundary ``delta = -m``; the tests check by exact
enumeration over the whole null region (n = 5, 10, 20) that the size is not larger inside.

The rejection set of each discordant total ``k = B + C`` is a prefix ``B <= b*(k)`` (Tango's
``Z`` increases in ``B`` at fixed ``k``; checked exhaustively in the tests), so the
probability is a sum over ``k`` of a binomial probability times a binomial CDF and the cost
grows with ``n``, not ``n^2``.

References
----------
Sidik K (2003). Exact unconditional tests for testing non-inferiority in matched-pairs
design. Statistics in Medicine 22:265-278.
Tango T (1998). Equivalence test and confidence interval for the difference in proportions
for the paired-sample design. Statistics in Medicine 17:891-908.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from evalspec.stats._validation import InvalidArgument, _count

__all__ = ["PairedLossTest", "paired_exact_interval", "paired_loss_test", "smallest_group_for_loss"]

#: Nuisance grid points on the null boundary (refined around the largest); large groups,
#: whose size curve is smooth, use the shorter grid.
_GRID = 200
_GRID_LARGE = 48
#: Up to this many pairs the nuisance grid is evaluated as one array (faster); above, point by point.
_VECTOR_MAX_N = 200


@dataclass(frozen=True)
class PairedLossTest:
    """Exact unconditional one-sided test of ``H0: p1 - p2 >= -margin``."""

    pvalue: float
    statistic: float
    margin: float
    n: int
    b: int
    c: int
    nuisance: float  # discordance probability at which the supremum was reached
    method: str = "exact unconditional (Tango score order, Sidik 2003)"

    def to_dict(self) -> dict[str, float | int | str]:
        return {"pvalue": self.pvalue, "statistic": self.statistic, "margin": self.margin, "n": self.n,
                "b": self.b, "c": self.c, "nuisance": self.nuisance, "method": self.method}


def _tango(b: np.ndarray, c: np.ndarray, n: int, delta: float) -> np.ndarray:
    """Tango's score statistic, vectorised (same formula as :func:`evalspec.stats.tango_score_statistic`)."""
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    aa = 2.0 * n
    bb = -b - c + (2.0 * n - b + c) * delta
    cc = -c * delta * (1.0 - delta)
    disc = np.maximum(bb * bb - 4.0 * aa * cc, 0.0)
    q21 = np.maximum((-bb + np.sqrt(disc)) / (2.0 * aa), 0.0)
    var = n * (2.0 * q21 + delta * (1.0 - delta))
    num = b - c - n * delta
    with np.errstate(divide="ignore", invalid="ignore"):
        z = num / np.sqrt(var)
    return np.where(var > 0.0, z, np.where(num == 0, 0.0, np.copysign(np.inf, num)))


def _prefix(n: int, delta: float, z_obs: float) -> np.ndarray:
    """For each discordant total k = 0..n, the largest B with Z(B, k - B) <= z_obs (-1: none)."""
    k = np.arange(n + 1)
    tol = 1e-9 * max(1.0, abs(z_obs)) if math.isfinite(z_obs) else 0.0
    lo = np.full(n + 1, -1)  # invariant: Z(lo) <= z_obs (or lo = -1); Z(hi) > z_obs (or hi = k + 1)
    hi = k + 1
    while True:
        open_ = hi - lo > 1
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        z = _tango(np.where(open_, mid, 0), np.where(open_, k - mid, 0), n, delta)
        ok = z <= z_obs + tol
        lo = np.where(open_ & ok, mid, lo)
        hi = np.where(open_ & ~ok, mid, hi)


def _size(n: int, prefix: np.ndarray, margin: float, pi: float) -> float:
    """P(Z <= z_obs) at discordance ``pi`` on the boundary p12 - p21 = -margin."""
    if pi <= 0.0:
        return float(prefix[0] >= 0)
    if pi >= 1.0:
        k0, k1 = n, n
    else:  # the discordant totals holding all but ~1e-20 of Binomial(n, pi)
        sd = math.sqrt(n * pi * (1.0 - pi))
        k0 = max(0, int(math.floor(n * pi - 10.0 * sd - 10.0)))
        k1 = min(n, int(math.ceil(n * pi + 10.0 * sd + 10.0)))
    k = np.arange(k0, k1 + 1, dtype=np.float64)
    pre = prefix[k0:k1 + 1]
    if pi >= 1.0:
        pk = np.ones(1)
    else:
        pk = np.exp(special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)
                    + k * math.log(pi) + (n - k) * math.log1p(-pi))
    keep = pre >= 0
    if not keep.any():
        return 0.0
    kk, bb, pk = k[keep].astype(np.int64), pre[keep].astype(np.int64), pk[keep]
    r = min(max((pi - margin) / 2.0, 0.0) / pi, 1.0)
    cdf = np.ones(kk.size)
    part = bb < kk
    if part.any():
        cdf[part] = special.bdtr(bb[part], kk[part], r) if r < 1.0 else 0.0
    return float(np.sum(pk * cdf))


def _size_many(n: int, prefix: np.ndarray, margin: float, pis: np.ndarray) -> np.ndarray:
    """:func:`_size` at many discordance probabilities at once (0 < pi < 1; the same sums)."""
    k = np.arange(n + 1, dtype=np.float64)
    keep = prefix >= 0
    if not keep.any():
        return np.zeros(pis.size)
    kk, bb = k[keep], prefix[keep].astype(np.float64)
    logc = special.gammaln(n + 1.0) - special.gammaln(kk + 1.0) - special.gammaln(n - kk + 1.0)
    pi = pis[:, None]
    pk = np.exp(logc[None, :] + kk[None, :] * np.log(pi) + (n - kk[None, :]) * np.log1p(-pi))
    r = np.clip(np.maximum((pis - margin) / 2.0, 0.0) / pis, 0.0, 1.0)[:, None]
    part = (bb < kk)[None, :]
    # P(Bin(k, r) <= b) = I_{1-r}(k - b, b + 1) for b < k (scipy's bdtr, on arrays of floats)
    with np.errstate(invalid="ignore"):
        cdf = special.betainc(np.maximum(kk - bb, 1.0)[None, :], (bb + 1.0)[None, :], 1.0 - r)
    cdf = np.where(part, cdf, 1.0)
    return np.sum(pk * cdf, axis=1)


def _sup_size(n: int, b: int, c: int, delta: float) -> tuple[float, float, float]:
    """(p-value, Tango statistic, nuisance) of ``H0: p1 - p2 >= delta`` for ``-1 < delta < 1``: the
    largest probability, over the boundary ``p12 - p21 = delta``, of a table at most as large in
    Tango's order as the observed one."""
    m = -delta
    z_obs = float(_tango(np.array([b]), np.array([c]), n, delta)[0])
    prefix = _prefix(n, delta, z_obs)
    points = _GRID if n <= 2000 else _GRID_LARGE
    grid = np.linspace(abs(m), 1.0, points)
    sizes = np.empty(points)
    # small n: all grid points at once; large n: one point at a time over its binomial window
    inner = (grid > 0.0) & (grid < 1.0) if n <= _VECTOR_MAX_N else np.zeros(points, dtype=bool)
    if inner.any():
        sizes[inner] = _size_many(n, prefix, m, grid[inner])
    for j in np.flatnonzero(~inner):
        sizes[j] = _size(n, prefix, m, float(grid[j]))
    i = int(np.argmax(sizes))
    best_pi, best = float(grid[i]), float(sizes[i])
    # refine around the best grid point (golden-section on the bracketing cells)
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, points - 1)])
    g = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = _size(n, prefix, m, x1), _size(n, prefix, m, x2)
    for _ in range(30):
        if f1 >= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = _size(n, prefix, m, x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = _size(n, prefix, m, x2)
    for x, f in ((x1, f1), (x2, f2)):
        if f > best:
            best_pi, best = x, f
    return min(1.0, best), z_obs, best_pi


def paired_loss_test(b: int, c: int, n: int, margin: float = 0.0) -> PairedLossTest:
    """Exact unconditional one-sided p-value of ``H0: p1 - p2 >= -margin`` (see the module doc).

    Parameters
    ----------
    b, c : int
        Discordant counts: pairs where only the first (candidate) passes, only the second
        (baseline) passes.
    n : int
        Number of pairs, ``n >= b + c`` (concordant pairs enter only through ``n``).
    margin : float
        The loss margin ``m`` in [0, 1).

    Examples
    --------
    >>> round(paired_loss_test(0, 4, 5, margin=0.05).pvalue, 4)  # five cases, four lost
    0.0498
    """
    b, c, n = _count("b", b), _count("c", c), _count("n", n)
    if b + c > n:
        raise InvalidArgument("n", n, f"fewer pairs than discordant ones (b + c = {b + c})")
    if n == 0:
        raise InvalidArgument("n", n, "no pairs")
    if not (0.0 <= float(margin) < 1.0) or not math.isfinite(float(margin)):
        raise InvalidArgument("margin", margin, "a loss margin in [0, 1)")
    m = float(margin)
    p, z_obs, best_pi = _sup_size(n, b, c, -m)
    return PairedLossTest(pvalue=p, statistic=z_obs, margin=m, n=n, b=b, c=c, nuisance=best_pi)


def _upper_bound(b: int, c: int, n: int, tail: float) -> float:
    """Smallest ``d`` whose test of ``H0: p1 - p2 >= d`` rejects at ``tail`` (bisection to 1e-7)."""
    lo, hi = (b - c) / n, 1.0 - 1e-9
    if _sup_size(n, b, c, hi)[0] > tail:
        return 1.0
    if _sup_size(n, b, c, lo)[0] <= tail:  # pragma: no cover - the estimate itself is never rejected
        return lo
    while hi - lo > 1e-7:
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if _sup_size(n, b, c, mid)[0] > tail else (lo, mid)
    return hi


def paired_exact_interval(b: int, c: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """The interval for ``p1 - p2`` that inverts the exact unconditional test, each end one-sided.

    The upper end is the smallest ``d`` at which the test of ``H0: p1 - p2 >= d`` (the test of
    :func:`paired_loss_test`, extended to any ``d`` in (-1, 1)) rejects at one-sided ``(1 - level) / 2``;
    the lower end mirrors it (the candidates swapped). So the upper end lies below ``-m`` exactly when
    that test shows a loss beyond ``m`` (up to the bisection's 1e-7, and where the exact p-value is
    monotone in ``d``), and each end's error rate is at most ``(1 - level) / 2`` at every ``n``.
    """
    b, c, n = _count("b", b), _count("c", c), _count("n", n)
    if n == 0 or b + c > n:
        raise InvalidArgument("n", n, f"need n >= b + c = {b + c} and at least one pair")
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise InvalidArgument("confidence_level", confidence_level, "must be strictly between 0 and 1")
    tail = (1.0 - level) / 2.0
    return -_upper_bound(c, b, n, tail), _upper_bound(b, c, n, tail)


def smallest_group_for_loss(alpha: float, margin: float = 0.0, n_max: int = 200) -> int | None:
    """The fewest pairs with which the exact test can show a loss at ``alpha`` (every pair lost)."""
    for n in range(1, n_max + 1):
        if paired_loss_test(0, n, n, margin).pvalue < alpha:
            return n
    return None
