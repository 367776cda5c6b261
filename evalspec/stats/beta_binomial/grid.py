"""The grid engine: deterministic quadrature of the posterior of (logit mu, log kappa).

A coarse grid over the prior's range locates the posterior, a local optimiser finds its mode
and curvature, and the final grid covers every point within :data:`_GRID_DROP` nats of the
maximum. Its draws are cells drawn by their mass, uniformly jittered within the cell; the HDIs
of mu, kappa and the Beta variance come from the grid itself (:func:`_grid_hdis`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from evalspec.stats.beta_binomial.model import BetaBinomialPrior, _expit, _Likelihood, _log_prior_eta_lambda
from evalspec.stats.beta_binomial.summaries import Diagnostic
from evalspec.stats.highest_density import weighted_hdi

__all__: list[str] = []


#: Log-density drop (nats) below the maximum beyond which grid cells are left out.
_GRID_DROP = 20.0


class _GridPosterior:
    """Log posterior on (eta, lambda) and the adaptive grid built from it."""

    def __init__(self, y: np.ndarray, j: np.ndarray, prior: BetaBinomialPrior, points: int) -> None:
        self.lik = _Likelihood(y, j)
        self.prior = prior
        self.points = points
        a_min = min(prior.mu_a, prior.mu_b)
        half = min(60.0, 25.0 / a_min)
        self.eta_range = (-half, half)
        width = math.sqrt(2.0 * 25.0) * prior.log_kappa_sd
        self.lam_range = (prior.log_kappa_mean - width, prior.log_kappa_mean + width)
        self.notes: list[str] = []

    def logp(self, eta: np.ndarray, lam: np.ndarray) -> np.ndarray:
        mu = _expit(eta)
        kappa = np.exp(lam)
        alpha = np.maximum(mu * kappa, 1e-300)
        beta = np.maximum((1.0 - mu) * kappa, 1e-300)
        return self.lik(alpha, beta) + _log_prior_eta_lambda(eta, lam, self.prior)

    def _grid(self, e_lo: float, e_hi: float, l_lo: float, l_hi: float, n: int):
        he = (e_hi - e_lo) / n
        hl = (l_hi - l_lo) / n
        ev = e_lo + he * (np.arange(n) + 0.5)
        lv = l_lo + hl * (np.arange(n) + 0.5)
        eg, lg = np.meshgrid(ev, lv, indexing="ij")
        return ev, lv, eg, lg, self.logp(eg, lg), he, hl

    def _mode(self, e0: float, l0: float) -> tuple[float, float, np.ndarray]:
        from scipy import optimize

        def f(x: np.ndarray) -> float:
            v = float(self.logp(np.array([x[0]]), np.array([x[1]]))[0])
            return -v if math.isfinite(v) else 1e300

        res = optimize.minimize(f, np.array([e0, l0]), method="Nelder-Mead",
                                options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 2000})
        x = res.x
        # Hessian by central differences with a step scaled to the curvature
        cov: np.ndarray = np.eye(2)
        for step in (1e-2, 1e-3):
            h = np.array([step, step])
            hess = np.empty((2, 2))
            f0 = f(x)
            for a in range(2):
                for b in range(2):
                    ea = np.eye(2)[a] * h[a]
                    eb = np.eye(2)[b] * h[b]
                    hess[a, b] = (f(x + ea + eb) - f(x + ea - eb) - f(x - ea + eb) + f(x - ea - eb)) / (4 * h[a] * h[b])
            del f0
            try:
                c = np.linalg.inv(hess)
                if np.all(np.diag(c) > 0) and np.all(np.isfinite(c)):
                    cov = c
                    if math.sqrt(min(np.diag(c))) > 10 * step:
                        break
            except np.linalg.LinAlgError:
                continue
        return float(x[0]), float(x[1]), cov

    def build(self):
        """Coarse pass over the prior's range, mode and curvature, then zoom to the mass."""
        e_lo, e_hi = self.eta_range
        l_lo, l_hi = self.lam_range
        ev, lv, eg, lg, lp, he, hl = self._grid(e_lo, e_hi, l_lo, l_hi, 64)
        k = int(np.nanargmax(lp))
        e0, l0 = float(eg.ravel()[k]), float(lg.ravel()[k])
        em, lm, cov = self._mode(e0, l0)
        se, sl = math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1])
        # box: the Laplace approximation's +-9 sd, united with the coarse cells near the maximum
        near = lp >= np.nanmax(lp) - _GRID_DROP
        box = [min(em - 9 * se, eg[near].min() - he), max(em + 9 * se, eg[near].max() + he),
               min(lm - 9 * sl, lg[near].min() - hl), max(lm + 9 * sl, lg[near].max() + hl)]
        if not (se < 0.5 * (e_hi - e_lo) and sl < 0.5 * (l_hi - l_lo)):
            box = [eg[near].min() - he, eg[near].max() + he, lg[near].min() - hl, lg[near].max() + hl]
        box = self._clip(box)
        for _ in range(8):  # grow any side that still carries mass, then shrink to the mass
            ev, lv, eg, lg, lp, he, hl = self._grid(*box, 96)
            top = np.nanmax(lp)
            grew = False
            edges = {0: lp[0, :], 1: lp[-1, :], 2: lp[:, 0], 3: lp[:, -1]}
            for side, vals in edges.items():
                if np.nanmax(vals) > top - _GRID_DROP and not self._at_limit(box, side):
                    width = (box[1] - box[0]) if side < 2 else (box[3] - box[2])
                    box[side] += (-1 if side in (0, 2) else 1) * 0.5 * width
                    grew = True
            box = self._clip(box)
            if not grew:
                break
        near = lp >= top - _GRID_DROP
        box = self._clip([eg[near].min() - he, eg[near].max() + he, lg[near].min() - hl, lg[near].max() + hl])
        for _ in range(6):  # final grid; widen any side whose edge still lies within the drop
            ev, lv, eg, lg, lp, he, hl = self._grid(*box, self.points)
            top = np.nanmax(lp)
            grew = False
            edges = {0: lp[0, :], 1: lp[-1, :], 2: lp[:, 0], 3: lp[:, -1]}
            for side, vals in edges.items():
                if np.nanmax(vals) > top - _GRID_DROP + 1.0 and not self._at_limit(box, side):
                    width = (box[1] - box[0]) if side < 2 else (box[3] - box[2])
                    box[side] += (-1 if side in (0, 2) else 1) * 0.25 * width
                    grew = True
            box = self._clip(box)
            if not grew:
                break
        return ev, lv, eg, lg, lp, he, hl, box

    def _clip(self, box: list[float]) -> list[float]:
        e_lo, e_hi = self.eta_range
        l_lo, l_hi = self.lam_range
        return [max(box[0], e_lo), min(box[1], e_hi), max(box[2], l_lo), min(box[3], l_hi)]

    def _at_limit(self, box: list[float], side: int) -> bool:
        limits = [self.eta_range[0], self.eta_range[1], self.lam_range[0], self.lam_range[1]]
        return abs(box[side] - limits[side]) < 1e-12


def _grid_engine(y: np.ndarray, j: np.ndarray, prior: BetaBinomialPrior, points: int, n_draws: int,
                 rng: np.random.Generator):
    post = _GridPosterior(y, j, prior, points)
    ev, lv, eg, lg, lp, he, hl, box = post.build()
    flat = lp.ravel()
    finite = np.isfinite(flat)
    top = flat[finite].max()
    w = np.where(finite, np.exp(flat - top), 0.0)
    w /= w.sum()
    # draws: cells by mass, uniform within the cell
    idx = rng.choice(w.size, size=n_draws, p=w)
    eta = eg.ravel()[idx] + (rng.random(n_draws) - 0.5) * he
    lam = lg.ravel()[idx] + (rng.random(n_draws) - 0.5) * hl
    # diagnostics: resolution and mass at the box edge
    m_eta = float(w @ eg.ravel())
    m_lam = float(w @ lg.ravel())
    sd_eta = math.sqrt(max(float(w @ (eg.ravel() - m_eta) ** 2), 0.0))
    sd_lam = math.sqrt(max(float(w @ (lg.ravel() - m_lam) ** 2), 0.0))
    per_sd = min(sd_eta / he if he > 0 else math.inf, sd_lam / hl if hl > 0 else math.inf)
    edge = max(lp[0, :].max(), lp[-1, :].max(), lp[:, 0].max(), lp[:, -1].max()) - top
    diags = [
        Diagnostic(
            check="grid_resolution", ok=bool(per_sd >= 4.0), value=round(float(per_sd), 2), threshold=4.0,
            finding=f"the final grid has {per_sd:.1f} points per posterior standard deviation "
                    f"({points} x {points} points)",
            meaning="quadrature sums and drawn intervals are accurate when the grid resolves the posterior"
                    if per_sd >= 4.0 else "the posterior is narrower than the grid spacing: summaries are coarse",
            remedy="none needed" if per_sd >= 4.0 else "raise grid_points or use the nuts engine"),
        Diagnostic(
            check="grid_boundary", ok=bool(edge <= -_GRID_DROP + 1e-9 or edge <= -15.0), value=round(float(edge), 2),
            threshold=-15.0,
            finding=f"the log posterior at the grid's edge is {edge:.1f} nats below its maximum",
            meaning="no posterior mass is cut off" if edge <= -15.0 else
                    "the posterior reaches the edge of the priors' range: some mass may be cut off",
            remedy="none needed" if edge <= -15.0 else "check the data (all right or all wrong?) and the priors"),
    ]
    return {
        "eta_cells": eg.ravel(), "lam_cells": lg.ravel(), "weights": w, "he": he, "hl": hl,
        "eta_axis": ev, "lam_axis": lv, "shape": lp.shape,
        "eta": eta, "lam": lam, "diagnostics": diags, "box": box,
    }


def _grid_hdis(quad: dict[str, Any], prob: float, sub_1d: int = 64, sub_2d: int = 3) -> dict[str, tuple[float, float]]:
    """HDIs of mu, kappa and the Beta variance straight from the grid (no Monte Carlo error).

    The grid density is piecewise constant over cells (the same density the draws are
    jittered from) for the variance, which depends on both axes: each cell's mass is spread
    over ``sub_2d x sub_2d`` points. mu and kappa depend on one axis each: their HDIs come from
    the 1-D marginal, its log density interpolated linearly between cell centres at
    ``sub_1d`` points per cell (so the ends are tied neither to the cell spacing nor to a
    piecewise-constant density).
    """
    W = quad["weights"].reshape(quad["shape"])
    out: dict[str, tuple[float, float]] = {}
    offs1 = (np.arange(sub_1d) + 0.5) / sub_1d - 0.5
    for name, axis, marg, step, fn in (("mu", quad["eta_axis"], W.sum(axis=1), quad["he"], _expit),
                                       ("kappa", quad["lam_axis"], W.sum(axis=0), quad["hl"], np.exp)):
        pts = (axis[:, None] + offs1[None, :] * step).ravel()
        with np.errstate(divide="ignore"):
            logm = np.log(marg)
        # log-linear interpolation of the marginal between cell centres (second-order accurate)
        logd = np.interp(pts, axis, np.maximum(logm, logm.max() - 745.0))
        wts = np.exp(logd - logd.max())
        out[name] = weighted_hdi(fn(pts), wts / wts.sum(), prob)
    keep = quad["weights"] > 0
    w = quad["weights"][keep]
    offs = (np.arange(sub_2d) + 0.5) / sub_2d - 0.5
    de, dl = np.meshgrid(offs * quad["he"], offs * quad["hl"], indexing="ij")
    eta = (quad["eta_cells"][keep][:, None] + de.ravel()[None, :]).ravel()
    lam = (quad["lam_cells"][keep][:, None] + dl.ravel()[None, :]).ravel()
    mu = _expit(eta)
    out["variance"] = weighted_hdi(mu * (1.0 - mu) / (np.exp(lam) + 1.0), np.repeat(w / sub_2d**2, sub_2d**2), prob)
    return out
