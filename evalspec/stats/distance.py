"""Distances between two samples (two-sample Kolmogorov-Smirnov statistic)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from evalspec.stats._results import KSResult
from evalspec.stats._validation import _finite_array

__all__ = ["ks_distance"]


def ks_distance(x: ArrayLike, y: ArrayLike) -> KSResult:
    """Two-sample Kolmogorov-Smirnov distance ``D = sup_t |F_x(t) - F_y(t)|``.

    Parameters
    ----------
    x, y : array_like of float
        The two samples (non-empty, finite). Ties within and between samples are allowed.

    Returns
    -------
    KSResult
        ``statistic`` (= ``estimate``) D in [0, 1], the ``location`` t where it is first
        attained, ``sign`` (+1 when ``F_x(t) > F_y(t)``, i.e. x is stochastically smaller
        there), and the sample sizes. No p-value: with ties the published p-values disagree
        between implementations (scipy exact vs asymptotic vs R), and this distance is used
        descriptively (the same as ``scipy.stats.ks_2samp(x, y).statistic``).
    """
    xs = np.sort(_finite_array("x", x))
    ys = np.sort(_finite_array("y", y))
    grid = np.concatenate([xs, ys])
    fx = np.searchsorted(xs, grid, side="right") / xs.size
    fy = np.searchsorted(ys, grid, side="right") / ys.size
    diff = fx - fy
    absdiff = np.abs(diff)
    dmax = float(absdiff.max())
    candidates = grid[absdiff >= dmax - 1e-15]
    location = float(candidates.min())
    at = np.flatnonzero((grid == location) & (absdiff >= dmax - 1e-15))[0]
    sign = 1 if diff[at] > 0 else (-1 if diff[at] < 0 else 0)
    return KSResult(
        statistic=dmax,
        estimate=dmax,
        location=location,
        sign=sign,
        n_x=int(xs.size),
        n_y=int(ys.size),
    )
