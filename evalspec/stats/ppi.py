"""Prediction-powered inference (PPI++) for a mean, with clusters and strata.

A judge (a model grader) labels every case; people label a random subset. The human-label
mean ``theta`` is estimated by PPI++ (Angelopoulos, Duchi and Zrnic 2023, "PPI++:
Efficient prediction-powered inference"; PPI with ``lambda = 1``: Angelopoulos, Bates,
Fannjiang, Jordan and Zrnic 2023, "Prediction-powered inference", *Science* 382):

    theta_hat(lambda) = lambda * mean_U(f) + mean_L(y - lambda * f)

with ``L`` the labelled cases (human label ``y``, judge label ``f``) and ``U`` the rest
(judge label only). Any fixed ``lambda`` gives an unbiased estimate when ``L`` is a random
subset; ``lambda = 0`` is the classical human-only mean, ``lambda = 1`` the original PPI.
Power tuning picks the ``lambda`` that minimises the estimated variance, clipped to [0, 1]
as the authors' ``ppi_py`` package does.

**Strata** (a stratified labelled subset): ``theta_hat = sum_h w_h theta_hat_h`` with
``w_h = N_h / N`` the stratum's share of all cases and one common ``lambda``.

**Clusters** (cases sharing a source are sampled together): the estimator is a sum of
per-case contributions, linear in ``lambda``:
``psi_i = a_i + lambda * b_i`` with, for a labelled case of stratum ``h``,
``a_i = w_h (y_i - ybar_Lh) / n_h`` and ``b_i = -w_h (f_i - fbar_Lh) / n_h``, and for an
unlabelled case ``a_i = 0``, ``b_i = w_h (f_i - fbar_Uh) / N_Uh``. Summed within cluster
``g`` (``A_g``, ``B_g``), the cluster-robust variance is
``V(lambda) = c * sum_g (A_g + lambda B_g)^2`` (``c = G_L / (G_L - 1)`` for CR1, with ``G_L`` the clusters
holding a labelled case; 1 for CR0), so
the tuned ``lambda = -sum A_g B_g / sum B_g^2``. Every case its own cluster and CR0 gives
exactly ``ppi_py``'s variance ``lambda^2 var(f_U) / N + var(y - lambda f)_L / n``.

The interval is ``theta_hat +- t * sqrt(V)`` with ``t`` on (labelled units - 1) degrees of
freedom (the labelled term dominates the variance; ``distribution="normal"`` gives the
papers' normal interval). Clipped to the parameter's range when given.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from evalspec.stats._numeric import normal_upper_quantile, t_upper_quantile
from evalspec.stats._validation import InvalidArgument, _choice, _level

__all__ = ["BalanceResult", "PPIResult", "labelled_balance", "ppi_mean_interval"]


@dataclass(frozen=True)
class PPIResult:
    """A PPI++ estimate and interval, with the classical (human-labels-only) one beside it."""

    estimate: float
    se: float
    low: float
    high: float
    lam: float
    df: float | None
    confidence_level: float
    method: str
    n_labelled: int
    n_unlabelled: int
    labelled_units: int
    units: int
    classical_estimate: float
    classical_se: float
    classical_low: float
    classical_high: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BalanceResult:
    """Judge-label mean on the labelled cases minus on the others: about 0 when labelling was random."""

    difference: float
    se: float
    pvalue: float | None


def _prepare(y: Any, f: Any, labelled: Any, clusters: Any, strata: Any) -> tuple[np.ndarray, ...]:
    f_a = np.asarray(f, dtype=np.float64)
    if f_a.ndim != 1 or f_a.size == 0 or not np.all(np.isfinite(f_a)):
        raise InvalidArgument("f", f, "must be a non-empty 1-d array of finite judge labels")
    n = f_a.size
    lab = np.asarray(labelled, dtype=bool)
    y_a = np.asarray(y, dtype=np.float64)
    if lab.shape != (n,) or y_a.shape != (n,):
        raise InvalidArgument("labelled", labelled, f"y, f and labelled must have the same length ({n})")
    if not np.all(np.isfinite(y_a[lab])):
        raise InvalidArgument("y", y, "every labelled case needs a finite human label")
    cl = np.arange(n) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1].reshape(-1)
    st = np.zeros(n, dtype=np.int64) if strata is None else np.unique(np.asarray(strata), return_inverse=True)[1]
    if cl.shape != (n,) or st.shape != (n,):
        raise InvalidArgument("clusters", clusters, f"clusters and strata must have one value per case ({n})")
    return y_a, f_a, lab, cl.astype(np.int64), st.astype(np.int64)


def _parts(y: np.ndarray, f: np.ndarray, lab: np.ndarray, st: np.ndarray) -> tuple[np.ndarray, np.ndarray, float,
                                                                                     float, bool]:
    """Per-case a_i, b_i; the estimate's two terms (human mean part, judge part); whether any stratum has U."""
    n_all = f.size
    a = np.zeros(n_all)
    b = np.zeros(n_all)
    base = 0.0  # sum_h w_h mean_Lh(y)
    slope = 0.0  # sum_h w_h (mean_Uh(f) - mean_Lh(f)): theta_hat = base + lambda * slope
    any_u = False
    for h in np.unique(st):
        in_h = st == h
        L = in_h & lab
        U = in_h & ~lab
        n_h, nu_h = int(L.sum()), int(U.sum())
        if n_h == 0:
            raise InvalidArgument("labelled", int(h), "a stratum has no labelled case, so its human-label mean "
                                  "cannot be estimated")
        w = float(in_h.sum()) / n_all
        ybar, fbar_l = float(y[L].mean()), float(f[L].mean())
        a[L] = w * (y[L] - ybar) / n_h
        base += w * ybar
        if nu_h:
            any_u = True
            fbar_u = float(f[U].mean())
            b[L] = -w * (f[L] - fbar_l) / n_h
            b[U] = w * (f[U] - fbar_u) / nu_h
            slope += w * (fbar_u - fbar_l)
    return a, b, base, slope, any_u


def ppi_mean_interval(y: Any, f: Any, labelled: Any, *, clusters: Any = None, strata: Any = None,
                      lam: float | None = None, confidence_level: float = 0.95, correction: str = "CR1",
                      distribution: str = "t", bounds: tuple[float, float] | None = None) -> PPIResult:
    """PPI++ interval for the mean of ``y`` (human labels, read where ``labelled``) using ``f`` (judge, all cases).

    ``lam=None`` tunes lambda (minimum estimated variance, clipped to [0, 1]); a number fixes it
    (1: the original PPI, 0: the classical human-only mean). ``bounds`` clips the interval.
    """
    level = _level("confidence_level", confidence_level)
    _choice("correction", correction, ("CR1", "CR0"))
    _choice("distribution", distribution, ("t", "normal"))
    y_a, f_a, lab, cl, st = _prepare(y, f, labelled, clusters, strata)
    a, b, base, slope, any_u = _parts(y_a, f_a, lab, st)
    n_cl = int(cl.max()) + 1
    A = np.bincount(cl, weights=a, minlength=n_cl)
    B = np.bincount(cl, weights=b, minlength=n_cl)
    present = np.bincount(cl, minlength=n_cl) > 0
    A, B = A[present], B[present]
    g = int(A.size)
    g_lab = int(np.unique(cl[lab]).size)
    # CR1's G / (G - 1) counted on the labelled clusters: the human-label term, which dominates, is estimated
    # from them alone (every case its own cluster: n / (n - 1), the unbiased variance of the labelled term)
    factor = g_lab / (g_lab - 1) if correction == "CR1" and g_lab > 1 else 1.0
    if lam is None:
        sbb = float(B @ B)
        lam_v = 0.0 if not any_u or sbb <= 0 else min(1.0, max(0.0, -float(A @ B) / sbb))
    else:
        lam_v = float(lam)
        if not math.isfinite(lam_v):
            raise InvalidArgument("lam", lam, "must be finite")

    def interval(lv: float) -> tuple[float, float, float, float, float | None]:
        est = base + lv * slope
        se = math.sqrt(factor * float(np.sum((A + lv * B) ** 2)))
        df = float(g_lab - 1) if distribution == "t" else None
        if df is not None and df < 1:
            q = math.inf
        else:
            tail = (1 - level) / 2
            q = normal_upper_quantile(tail) if df is None else t_upper_quantile(df, tail)
        low, high = est - q * se, est + q * se
        if bounds is not None:
            low, high = max(bounds[0], low), min(bounds[1], high)
        return est, se, low, high, df

    est, se, low, high, df = interval(lam_v)
    c_est, c_se, c_low, c_high, _ = interval(0.0)
    method = (f"prediction-powered inference (PPI++, lambda = {lam_v:.3f}"
              + (", tuned" if lam is None else "") + f"; {correction} cluster-robust variance, "
              + (f"t on {df:.0f} df)" if df is not None else "normal)"))
    return PPIResult(estimate=est, se=se, low=low, high=high, lam=lam_v, df=df, confidence_level=level, method=method,
                     n_labelled=int(lab.sum()), n_unlabelled=int((~lab).sum()), labelled_units=g_lab, units=g,
                     classical_estimate=c_est, classical_se=c_se, classical_low=c_low, classical_high=c_high)


def labelled_balance(f: Any, labelled: Any, *, clusters: Any = None) -> BalanceResult:
    """Judge-label mean on labelled minus unlabelled cases, cluster-robust (CR1) SE and two-sided normal p-value.

    A random labelled subset makes the difference zero in expectation; a small p-value says the
    labelled cases differ from the rest, i.e. they may not be a random subset.
    """
    from scipy import special

    f_a = np.asarray(f, dtype=np.float64)
    lab = np.asarray(labelled, dtype=bool)
    if f_a.shape != lab.shape or f_a.ndim != 1:
        raise InvalidArgument("labelled", labelled, "f and labelled must have the same length")
    n_l, n_u = int(lab.sum()), int((~lab).sum())
    if n_l == 0 or n_u == 0:
        return BalanceResult(difference=0.0, se=0.0, pvalue=None)
    cl = np.arange(f_a.size) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1]
    contrib = np.where(lab, (f_a - f_a[lab].mean()) / n_l, -(f_a - f_a[~lab].mean()) / n_u)
    totals = np.bincount(cl.reshape(-1), weights=contrib)
    totals = totals[np.bincount(cl.reshape(-1)) > 0]
    g = totals.size
    se = math.sqrt((g / (g - 1) if g > 1 else 1.0) * float(totals @ totals))
    diff = float(f_a[lab].mean() - f_a[~lab].mean())
    if se <= 0:
        return BalanceResult(difference=diff, se=0.0, pvalue=None if diff == 0 else 0.0)
    return BalanceResult(difference=diff, se=se, pvalue=float(special.erfc(abs(diff / se) / math.sqrt(2))))
