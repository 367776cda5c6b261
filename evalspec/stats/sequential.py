"""Anytime-valid confidence sequences for the mean of bounded observations.

A *confidence sequence* (CS) is a sequence of intervals ``C_1, C_2, ...`` that hold the true
mean **simultaneously at every time** with probability at least ``1 - alpha``:
``P(for all t: mu in C_t) >= 1 - alpha``. One may therefore look after every new unit, stop
whenever the interval says enough, and still report ``C_t`` at its stated level. A fixed-
sample interval checked at every look does not have this property: its chance of missing
the truth at *some* look grows with the number of looks (tested in
``tests/stats/test_sequential_coverage.py``).

Method: betting confidence sequences with predictable plug-in bets, after Ian Waudby-Smith
and Aaditya Ramdas, "Estimating means of bounded random variables by betting", *Journal of
the Royal Statistical Society Series B* 86(1), 2024 (arXiv 2010.09686, 2020); sections 4
(capital processes, the "predictable plug-in" bets ``lambda_t^PrPl`` of eq. 26) and 5.
For observations ``Y_i`` in ``[0, 1]`` with conditional mean ``m``:

* ``K_t^+(m) = prod_{i<=t} (1 + lambda_i^+(m) (Y_i - m))`` is a nonnegative martingale (a
  "capital") when ``m`` is the true mean, so by Ville's inequality
  ``P(sup_t K_t^+(m) >= 2/alpha) <= alpha/2``. Values of ``m`` whose capital ever reached
  ``2/alpha`` are rejected as too low; ``K_t^-`` with ``1 - lambda (Y_i - m)`` rejects
  values too high.
* Bets: ``lambda_t = sqrt(2 log(2/alpha) / (sigma_{t-1}^2 t log(1 + t)))`` with the
  regularised running variance ``sigma_t^2 = (1/4 + sum (Y_i - mu_i)^2) / (t + 1)`` and mean
  ``mu_t = (1/2 + sum Y_i) / (t + 1)``, truncated at ``c/m`` (``c/(1-m)`` for ``K^-``),
  ``c = 1/2``, so every factor stays positive.

Each side is run at ``alpha/2``, so each bound is an anytime-valid *one-sided* bound at
``1 - alpha/2`` and the pair is a two-sided CS at ``1 - alpha`` (a union bound). This is
slightly wider than the paper's hedged process (which mixes the two sides with weight 1/2 at
threshold ``1/alpha``) but keeps the per-bound error the decision relies on. The sequence is
the running intersection ``C_1 ∩ ... ∩ C_t`` (still valid, and never wider than before).

The set of not-rejected ``m`` is computed on a grid of midpoints (default 2000 points on
``[0, 1]``); a bound is moved out by one grid step so the grid can only widen the interval.

An alternative of the same family is the empirical-Bernstein CS of Steven R. Howard, Aaditya
Ramdas, Jon McAuliffe and Jasjeet Sekhon, "Time-uniform, nonparametric, nonasymptotic
confidence sequences", *Annals of Statistics* 49(2), 2021; Waudby-Smith and Ramdas show the
betting CS is tighter for bounded data, so it is the one implemented here. The maintained
Python package ``confseq`` (Howard and Waudby-Smith) was not usable here (it needs a C++
build), so this module implements the method from the paper; its coverage is checked by
simulation in the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalspec.stats._validation import InvalidArgument, _level

__all__ = ["ConfidenceSequence", "betting_confidence_sequence", "METHOD"]

METHOD = "anytime-valid confidence sequence (betting, Waudby-Smith & Ramdas 2024)"


@dataclass(frozen=True)
class ConfidenceSequence:
    """Bounds of a confidence sequence at the requested times (on the original scale).

    ``times[j]`` is the number of observations behind ``low[j]``/``high[j]``; ``estimate[j]`` the
    running sample mean. ``confidence_level`` is two-sided (``1 - alpha``); each bound is a
    one-sided anytime-valid bound at ``1 - alpha/2``.
    """

    times: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    confidence_level: float
    lower: float
    upper: float
    method: str = METHOD

    def to_dict(self) -> dict[str, Any]:
        return {
            "times": [int(t) for t in self.times], "estimate": [float(v) for v in self.estimate],
            "low": [float(v) for v in self.low], "high": [float(v) for v in self.high],
            "confidence_level": self.confidence_level, "range": [self.lower, self.upper], "method": self.method,
        }


def _bets(y: np.ndarray, alpha: float, w: np.ndarray | None = None) -> np.ndarray:
    """Predictable plug-in bets lambda_1..lambda_n (each uses only Y_1..Y_{t-1}).

    With weights, the centre is the running weighted mean and the variance that of the
    weighted increments ``w_i (Y_i - mu_{i-1})`` (the bets only need to be predictable for the
    sequence to hold; these keep them efficient). Without weights this is eq. 26 exactly.
    """
    n = y.size
    t = np.arange(1, n + 1, dtype=np.float64)
    wt = np.ones(n) if w is None else w
    mu = (0.5 + np.cumsum(wt * y)) / (1.0 + np.cumsum(wt))  # mu_t after t observations
    mu_prev = np.r_[0.5, mu[:-1]]  # mu_{i-1}: predictable centre for the i-th squared deviation
    sig2 = (0.25 + np.cumsum((wt * (y - mu_prev)) ** 2)) / (t + 1)
    sig2_prev = np.r_[0.25, sig2[:-1]]
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (sig2_prev * t * np.log1p(t)))


def betting_confidence_sequence(x: Any, *, lower: float = 0.0, upper: float = 1.0, confidence_level: float = 0.95,
                                times: Any = None, grid: int = 2000, truncation: float = 0.5,
                                intersect: bool = True, weights: Any = None) -> ConfidenceSequence:
    """Anytime-valid confidence sequence for the mean of observations bounded in ``[lower, upper]``.

    Parameters
    ----------
    x : array_like
        Observations in the order they arrived (independent, or at least with a constant
        conditional mean given the past; all in ``[lower, upper]``).
    lower, upper : float
        Known bounds of every observation; for a paired difference of pass/fail outcomes or
        of per-cluster pass rates use ``-1, 1``.
    confidence_level : float
        Two-sided level ``1 - alpha``; each bound holds at ``1 - alpha/2`` at all times.
    times : array_like of int, optional
        Numbers of observations at which to report bounds (1-based, increasing, at most
        ``len(x)``); default every time ``1..n``.
    grid : int
        Number of grid midpoints on the unit interval (resolution of the bounds).
    truncation : float
        ``c`` in the truncation of the bets (``0 < c < 1``; the paper uses 1/2 or 3/4).
    intersect : bool
        Report the running intersection (default) or the raw per-time sets.
    weights : array_like, optional
        ``w_i`` in ``(0, 1]``, one per observation, known before the run (not chosen from the
        outcomes): the sequence then bounds the **weighted** mean ``E[w X] / E[w]``. For
        clusters, ``X_i`` is cluster ``i``'s mean difference and ``w_i = n_i / c`` its size over
        a bound ``c`` on every cluster's size fixed in advance: the sequence bounds the
        case-weighted difference ``E[S] / E[n]`` (each case counting once), not the average
        over clusters. The capital is ``prod (1 + lambda_i w_i (Y_i - m))``: at the true
        weighted mean each factor has conditional expectation 1 (clusters exchangeable), and
        ``w_i <= 1`` keeps the truncation's positivity.
    """
    level = _level("confidence_level", confidence_level)
    alpha = 1.0 - level
    lo_b, hi_b = float(lower), float(upper)
    if not (math.isfinite(lo_b) and math.isfinite(hi_b) and hi_b > lo_b):
        raise InvalidArgument("upper", upper, "must be a finite number above `lower`")
    arr = np.asarray(x, dtype=np.float64).ravel()
    if arr.size == 0:
        raise InvalidArgument("x", x, "needs at least one observation")
    if not np.all(np.isfinite(arr)) or arr.min() < lo_b - 1e-12 or arr.max() > hi_b + 1e-12:
        raise InvalidArgument("x", x, f"every observation must be a finite number in [{lo_b:g}, {hi_b:g}]")
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 10:
        raise InvalidArgument("grid", grid, "must be an integer >= 10")
    c = float(truncation)
    if not 0 < c < 1:
        raise InvalidArgument("truncation", truncation, "must be strictly between 0 and 1")
    n = arr.size
    if times is None:
        want = np.arange(1, n + 1)
    else:
        want = np.asarray(times, dtype=np.int64).ravel()
        if want.size == 0 or want.min() < 1 or want.max() > n or np.any(np.diff(want) <= 0):
            raise InvalidArgument("times", times, f"must be increasing counts between 1 and {n}")

    w: np.ndarray | None = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64).ravel()
        if w.size != arr.size or not np.all(np.isfinite(w)) or w.min() <= 0 or w.max() > 1 + 1e-12:
            raise InvalidArgument("weights", weights, "needs one weight in (0, 1] per observation")
        w = np.minimum(w, 1.0)
    y = np.clip((arr - lo_b) / (hi_b - lo_b), 0.0, 1.0)
    lam = _bets(y, alpha, w)
    step = 1.0 / grid
    m = (np.arange(grid) + 0.5) * step
    cap_plus = c / m  # truncation keeps 1 + lambda (y - m) >= 1 - c > 0
    cap_minus = c / (1.0 - m)
    thresh = math.log(2.0 / alpha)

    log_kp = np.zeros(grid)
    log_km = np.zeros(grid)
    rejected = np.zeros(grid, dtype=bool)
    est = np.cumsum(arr) / np.arange(1, n + 1) if w is None else np.cumsum(w * arr) / np.cumsum(w)
    wcol = np.ones((n, 1)) if w is None else w[:, None]
    out_low = np.empty(want.size)
    out_high = np.empty(want.size)
    j = 0
    block = max(1, min(512, 2_000_000 // grid))
    for start in range(0, n, block):
        stop = min(n, start + block)
        yb = y[start:stop, None]
        lb = lam[start:stop, None]
        dev = wcol[start:stop] * (yb - m[None, :])
        kp = np.cumsum(np.log1p(np.minimum(lb, cap_plus[None, :]) * dev), axis=0) + log_kp
        km = np.cumsum(np.log1p(-np.minimum(lb, cap_minus[None, :]) * dev), axis=0) + log_km
        rej_t = (kp >= thresh) | (km >= thresh)
        if intersect:
            rej_cum = np.logical_or.accumulate(rej_t, axis=0) | rejected
        else:
            rej_cum = rej_t
        while j < want.size and want[j] <= stop:
            row = want[j] - 1 - start
            ok = ~rej_cum[row]
            if not ok.any():  # the intersection emptied (probability <= alpha): use the set at this time
                ok = ~rej_t[row]
            if not ok.any():  # every grid point rejected: report the point estimate's neighbourhood
                k = int(np.clip(np.floor((est[want[j] - 1] - lo_b) / (hi_b - lo_b) / step), 0, grid - 1))
                ok = np.zeros(grid, dtype=bool)
                ok[k] = True
            idx = np.flatnonzero(ok)
            out_low[j] = max(0.0, m[idx[0]] - step)
            out_high[j] = min(1.0, m[idx[-1]] + step)
            j += 1
        log_kp, log_km = kp[-1], km[-1]
        rejected = rej_cum[-1] if intersect else rejected
    scale = hi_b - lo_b
    return ConfidenceSequence(
        times=want, estimate=est[want - 1], low=lo_b + out_low * scale, high=lo_b + out_high * scale,
        confidence_level=level, lower=lo_b, upper=hi_b,
    )
