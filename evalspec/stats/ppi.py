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

__all__ = ["BalanceResult", "BootstrapResult", "PPIResult", "labelled_balance", "ppi_bootstrap_interval", "ppi_mean_interval"]


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
    lams: tuple[float, ...] = ()

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
    if f_a.ndim not in (1, 2) or f_a.shape[0] == 0 or f_a.size == 0 or not np.all(np.isfinite(f_a)):
        raise InvalidArgument("f", f, "must be a non-empty 1-d array (or cases x columns) of finite judge labels")
    n = f_a.shape[0]
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
                                                                                     np.ndarray, bool]:
    """Per-case a_i (n,) and b_i (n x m, one column per judge column); the estimate's two terms (human mean part,
    judge part per column: ``theta_hat = base + slope @ lambda``); whether any stratum has unlabelled cases."""
    f2 = f.reshape(f.shape[0], -1)
    n_all, m = f2.shape
    a = np.zeros(n_all)
    b = np.zeros((n_all, m))
    base = 0.0  # sum_h w_h mean_Lh(y)
    slope = np.zeros(m)  # sum_h w_h (mean_Uh(f) - mean_Lh(f))
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
        ybar, fbar_l = float(y[L].mean()), f2[L].mean(axis=0)
        a[L] = w * (y[L] - ybar) / n_h
        base += w * ybar
        if nu_h:
            any_u = True
            fbar_u = f2[U].mean(axis=0)
            b[L] = -w * (f2[L] - fbar_l) / n_h
            b[U] = w * (f2[U] - fbar_u) / nu_h
            slope += w * (fbar_u - fbar_l)
    return a, b, base, slope, any_u


def _tune(A: np.ndarray, B: np.ndarray, any_u: bool) -> np.ndarray:
    """The lambda (one per judge column) that minimises ``sum_g (A_g + B_g @ lambda)^2``, each in [0, 1].

    One column: the closed form, clipped (as ``ppi_py`` clips). Several: box-constrained least squares.
    """
    m = B.shape[1]
    if not any_u or float(np.sum(B * B)) <= 0:
        return np.zeros(m)
    if m == 1:
        return np.array([min(1.0, max(0.0, -float(A @ B[:, 0]) / float(B[:, 0] @ B[:, 0])))])
    from scipy.optimize import lsq_linear

    return np.clip(lsq_linear(B, -A, bounds=(0.0, 1.0)).x, 0.0, 1.0)


def _lambda_given(lam: Any, m: int) -> np.ndarray:
    lam_v = np.atleast_1d(np.asarray(lam, dtype=np.float64)).reshape(-1)
    if lam_v.size == 1 and m > 1:
        lam_v = np.full(m, float(lam_v[0]))
    if lam_v.size != m or not np.all(np.isfinite(lam_v)):
        raise InvalidArgument("lam", lam, f"must be a finite number or {m} finite numbers (one per judge column)")
    return lam_v


def _critical(level: float, df: float | None) -> float:
    if df is not None and df < 1:
        return math.inf
    tail = (1 - level) / 2
    return normal_upper_quantile(tail) if df is None else t_upper_quantile(df, tail)


def ppi_mean_interval(y: Any, f: Any, labelled: Any, *, clusters: Any = None, strata: Any = None,
                      lam: Any = None, confidence_level: float = 0.95, correction: str = "CR1",
                      distribution: str = "t", bounds: tuple[float, float] | None = None) -> PPIResult:
    """PPI++ interval for the mean of ``y`` (human labels, read where ``labelled``) using ``f`` (judge, all cases).

    ``lam=None`` tunes lambda (minimum estimated variance, clipped to [0, 1]); a number fixes it
    (1: the original PPI, 0: the classical human-only mean). ``bounds`` clips the interval.
    ``f`` may have several columns (cases x m): one lambda per column, ``theta_hat = mean_L(y) +
    sum_m lambda_m (mean_U(f_m) - mean_L(f_m))``; e.g. a difference of two candidates with
    ``y = y_A - y_B`` and ``f = [f_A, -f_B]`` gets a 2-vector lambda (tuned jointly for the difference's
    variance, or fixed: each candidate's own lambda). ``PPIResult.lam`` is then the first, ``lams`` all.
    """
    level = _level("confidence_level", confidence_level)
    _choice("correction", correction, ("CR1", "CR0"))
    _choice("distribution", distribution, ("t", "normal"))
    y_a, f_a, lab, cl, st = _prepare(y, f, labelled, clusters, strata)
    a, b, base, slope, any_u = _parts(y_a, f_a, lab, st)
    n_cl = int(cl.max()) + 1
    present = np.bincount(cl, minlength=n_cl) > 0
    A = np.bincount(cl, weights=a, minlength=n_cl)[present]
    B = np.stack([np.bincount(cl, weights=b[:, c], minlength=n_cl)[present] for c in range(b.shape[1])], axis=1)
    g = int(A.size)
    g_lab = int(np.unique(cl[lab]).size)
    # CR1's G / (G - 1) counted on the labelled clusters: the human-label term, which dominates, is estimated
    # from them alone (every case its own cluster: n / (n - 1), the unbiased variance of the labelled term)
    factor = g_lab / (g_lab - 1) if correction == "CR1" and g_lab > 1 else 1.0
    lam_v = _tune(A, B, any_u) if lam is None else _lambda_given(lam, B.shape[1])
    df = float(g_lab - 1) if distribution == "t" else None
    q = _critical(level, df)

    def interval(lv: np.ndarray) -> tuple[float, float, float, float]:
        est = base + float(slope @ lv)
        se = math.sqrt(factor * float(np.sum((A + B @ lv) ** 2)))
        low, high = est - q * se, est + q * se
        if bounds is not None:
            low, high = max(bounds[0], low), min(bounds[1], high)
        return est, se, low, high

    est, se, low, high = interval(lam_v)
    c_est, c_se, c_low, c_high = interval(np.zeros_like(lam_v))
    shown = ", ".join(f"{v:.3f}" for v in lam_v)
    method = (f"prediction-powered inference (PPI++, lambda = {shown}"
              + (", tuned" if lam is None else "") + f"; {correction} cluster-robust variance, "
              + (f"t on {df:.0f} df)" if df is not None else "normal)"))
    return PPIResult(estimate=est, se=se, low=low, high=high, lam=float(lam_v[0]), df=df, confidence_level=level,
                     method=method, n_labelled=int(lab.sum()), n_unlabelled=int((~lab).sum()), labelled_units=g_lab,
                     units=g, classical_estimate=c_est, classical_se=c_se, classical_low=c_low, classical_high=c_high,
                     lams=tuple(float(v) for v in lam_v))


@dataclass(frozen=True)
class BootstrapResult:
    """A cluster-bootstrap percentile interval of the PPI++ estimate (lambda re-tuned in every resample)."""

    estimate: float
    low: float
    high: float
    lam: float
    resamples: int
    used: int
    seed: int
    confidence_level: float
    method: str


def cluster_totals(y: np.ndarray, f: np.ndarray, lab: np.ndarray, cl: np.ndarray, st: np.ndarray,
                    n_cl: int) -> np.ndarray:
    """Per cluster and stratum: labelled count, unlabelled count, sum y_L, sum f_L, sum f_U (G x H x 5)."""
    h_n = int(st.max()) + 1
    out = np.zeros((n_cl, h_n, 5))
    yl = np.where(lab, y, 0.0)
    for k, (wts, mask) in enumerate(((np.ones_like(f), lab), (np.ones_like(f), ~lab), (yl, lab), (f, lab),
                                     (f, ~lab))):
        np.add.at(out[:, :, k], (cl[mask], st[mask]), wts[mask])
    return out


def resampled(T: np.ndarray, W: np.ndarray, lam: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PPI++ estimates, lambdas and per-cluster contributions for resample weights W (b x G: how often each
    cluster is drawn) over cluster totals T (G x H x 5, :func:`cluster_totals`).

    The contributions ``psi`` (b x G) are the estimate's linearisation under the resample's own means, so
    ``c * sum_g W_g psi_g^2`` is the resample's cluster-robust variance (exactly what
    :func:`ppi_mean_interval` gives on the resampled data, each drawn copy of a cluster its own cluster).
    NaN where a stratum of the resample has no labelled case.
    """
    tot = np.einsum("bg,ghk->bhk", W, T)  # b x H x 5
    nl, nu, syl, sfl, sfu = (tot[:, :, k] for k in range(5))
    with np.errstate(divide="ignore", invalid="ignore"):
        share = (nl + nu) / (nl + nu).sum(axis=1, keepdims=True)
        ybar, fl, fu = syl / nl, sfl / nl, np.where(nu > 0, sfu / nu, 0.0)
        has_u = nu > 0
        # per-cluster linearisation under the resample's means: A_g, B_g (b x G)
        Ag = np.einsum("bh,ghb->bg", share / nl, T[:, :, 2, None] - T[:, :, 0, None] * ybar.T[None])
        Bu = np.einsum("bh,ghb->bg", np.where(has_u, share / nu, 0.0), T[:, :, 4, None] - T[:, :, 1, None] * fu.T[None])
        Bl = np.einsum("bh,ghb->bg", np.where(has_u, share / nl, 0.0), T[:, :, 3, None] - T[:, :, 0, None] * fl.T[None])
    Bg = Bu - Bl
    if lam is None:
        sbb = np.sum(W * Bg * Bg, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lv = np.where(sbb > 0, np.clip(-np.sum(W * Ag * Bg, axis=1) / sbb, 0.0, 1.0), 0.0)
    else:
        lv = np.full(W.shape[0], float(lam))
    est = np.sum(share * (ybar + lv[:, None] * np.where(has_u, fu - fl, 0.0)), axis=1)
    return est, lv, Ag + lv[:, None] * Bg


def ppi_bootstrap_interval(y: Any, f: Any, labelled: Any, *, clusters: Any = None, strata: Any = None,
                           lam: float | None = None, confidence_level: float = 0.95, resamples: int = 2000,
                           seed: int = 0, bounds: tuple[float, float] | None = None,
                           interval: str = "percentile") -> BootstrapResult:
    """Cluster-bootstrap interval of the PPI++ mean: whole clusters resampled (labelled and unlabelled
    cases of a cluster together), the estimate and, with ``lam=None``, its tuned lambda recomputed in every
    resample (so the interval carries the lambda's own sampling error). ``interval="percentile"``: the
    resampled estimates' quantiles; ``"t"``: bootstrap-t, each resample studentised by its own cluster-robust
    standard error (second-order accurate where the estimate is skewed). A resample in which a stratum has no
    labelled case cannot be estimated and is left out (``used`` counts the rest). One judge column only.
    """
    level = _level("confidence_level", confidence_level)
    _choice("interval", interval, ("percentile", "t"))
    if int(resamples) < 200:
        raise InvalidArgument("resamples", resamples, "must be at least 200")
    y_a, f_a, lab, cl, st = _prepare(y, f, labelled, clusters, strata)
    if f_a.ndim != 1:
        raise InvalidArgument("f", f, "the bootstrap takes one judge column")
    point = ppi_mean_interval(y_a, f_a, lab, clusters=cl, strata=st, lam=lam, confidence_level=level)
    cl = np.unique(cl, return_inverse=True)[1].reshape(-1)
    n_cl = int(cl.max()) + 1
    T = cluster_totals(np.nan_to_num(y_a), f_a, lab, cl, st, n_cl)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(500, 4_000_000 // max(1, n_cl * T.shape[1])))
    ests: list[np.ndarray] = []
    _, _, psi0 = resampled(T, np.ones((1, n_cl)), point.lam if lam is None else lam)
    se0 = math.sqrt(float(np.sum(psi0[0] ** 2)))  # the studentising scale at the data (no CR1 factor, as below)
    for s in range(0, int(resamples), chunk):
        W = rng.multinomial(n_cl, np.full(n_cl, 1.0 / n_cl), size=min(chunk, int(resamples) - s)).astype(np.float64)
        e, _, psi = resampled(T, W, lam)
        if interval == "t":
            with np.errstate(invalid="ignore", divide="ignore"):
                e = (e - point.estimate) / np.sqrt(np.sum(W * psi * psi, axis=1))
        ests.append(e[np.isfinite(e)])
    draws = np.concatenate(ests)
    tail = (1 - level) / 2
    if not draws.size:
        low, high = -math.inf, math.inf
    elif interval == "t":
        low = point.estimate - float(np.quantile(draws, 1 - tail)) * se0
        high = point.estimate - float(np.quantile(draws, tail)) * se0
    else:
        low, high = float(np.quantile(draws, tail)), float(np.quantile(draws, 1 - tail))
    if bounds is not None:
        low, high = max(bounds[0], low), min(bounds[1], high)
    kind = "bootstrap-t" if interval == "t" else "percentile"
    method = (f"prediction-powered inference (PPI++, lambda {'re-tuned in each resample' if lam is None else lam}; "
              f"{kind} cluster bootstrap, {draws.size} resamples of {n_cl} clusters)")
    return BootstrapResult(estimate=point.estimate, low=low, high=high, lam=point.lam, resamples=int(resamples),
                           used=int(draws.size), seed=int(seed), confidence_level=level, method=method)


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
