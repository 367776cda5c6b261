"""Small numeric helpers shared by the kernels: normal and t quantiles, a bracketed root finder.

Only :mod:`scipy.special` is imported (cheap); ``scipy.optimize`` and ``scipy.stats`` are not
needed by any kernel, which keeps ``import evalspec.stats`` fast.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import special

__all__ = ["find_root", "normal_upper_quantile", "t_upper_quantile"]


def normal_upper_quantile(tail: float) -> float:
    """The standard normal quantile with ``tail`` probability above it (1.96 for 0.025)."""
    return float(-special.ndtri(tail))


def t_upper_quantile(df: float, tail: float) -> float:
    """Student t quantile on ``df`` (any positive real) degrees of freedom with ``tail`` above it."""
    return float(-special.stdtrit(df, tail))


def find_root(f: Callable[[float], float], lo: float, hi: float, xtol: float = 1e-15, maxiter: int = 400) -> float:
    """A root of a continuous ``f`` with ``f(lo)`` and ``f(hi)`` of opposite signs (or zero).

    Illinois (modified regula falsi) steps safeguarded by bisection: every step keeps a
    bracket, so the result is within ``xtol`` (absolute, plus 4 ulps relative) of a sign change.
    """
    flo, fhi = f(lo), f(hi)
    if flo == 0.0:
        return lo
    if fhi == 0.0:
        return hi
    if (flo > 0.0) == (fhi > 0.0):
        raise ValueError(f"find_root: f({lo!r}) = {flo!r} and f({hi!r}) = {fhi!r} do not bracket a root")
    side = 0
    for _ in range(maxiter):
        width = hi - lo
        if width <= xtol + 8.9e-16 * max(abs(lo), abs(hi)):
            break
        x = hi - fhi * width / (fhi - flo) if fhi != flo else lo + 0.5 * width
        # fall back to bisection when the secant point is not safely inside the bracket
        if not (lo + 0.01 * width < x < hi - 0.01 * width) or not math.isfinite(x):
            x = lo + 0.5 * width
        fx = f(x)
        if fx == 0.0:
            return x
        if (fx > 0.0) == (fhi > 0.0):
            hi, fhi = x, fx
            if side == -1:
                flo *= 0.5
            side = -1
        else:
            lo, flo = x, fx
            if side == 1:
                fhi *= 0.5
            side = 1
    return lo + 0.5 * (hi - lo)
