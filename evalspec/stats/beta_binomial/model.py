"""The model: the hyperpriors on (mu, kappa) and the Beta-Binomial likelihood of the counts.

``y_i | theta_i ~ Binomial(J_i, theta_i)``, ``theta_i ~ Beta(mu kappa, (1 - mu) kappa)``,
``mu ~ Beta(mu_a, mu_b)``, ``log kappa ~ Normal(log_kappa_mean, log_kappa_sd)``. scipy is
imported inside the functions that need it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from evalspec.stats._validation import InvalidArgument, _level
from evalspec.stats.beta_binomial.counts import _counts, _unique

__all__ = ["BetaBinomialPrior", "beta_binomial_loglik", "beta_binomial_theta"]


@dataclass(frozen=True)
class BetaBinomialPrior:
    """Hyperpriors: mu ~ Beta(mu_a, mu_b), log kappa ~ Normal(log_kappa_mean, log_kappa_sd)."""

    mu_a: float = 1.0
    mu_b: float = 1.0
    log_kappa_mean: float = 0.0
    log_kappa_sd: float = 1.5

    def __post_init__(self) -> None:
        for name in ("mu_a", "mu_b", "log_kappa_sd"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise InvalidArgument(name, value, "must be a positive finite number")
        if not math.isfinite(self.log_kappa_mean):
            raise InvalidArgument("log_kappa_mean", self.log_kappa_mean, "must be finite")


def _gammaln():
    from scipy.special import gammaln

    return gammaln


class _Likelihood:
    """Beta-Binomial log-likelihood of one condition, through its distinct values.

    ``sum_i [lnB(a + y_i, b + J_i - y_i) - lnB(a, b)]`` is written as sums over the distinct
    success counts, failure counts and trial counts (each weighted by how many questions have
    it) of ``lnGamma(a + u) - lnGamma(a)`` and the like, so a grid of G points costs
    G x (distinct values) gamma-function evaluations whatever the number of questions.
    """

    def __init__(self, y: np.ndarray, j: np.ndarray) -> None:
        from scipy.special import gammaln

        self.n = float(y.size)
        self.su, self.sw, _ = _unique(y)
        self.fu, self.fw, _ = _unique(j - y)
        self.tu, self.tw, _ = _unique(j)
        self.sw = self.sw.astype(np.float64)
        self.fw = self.fw.astype(np.float64)
        self.tw = self.tw.astype(np.float64)
        # log binomial coefficients (constant in the parameters), over the distinct values too
        self.const = float(self.tw @ gammaln(self.tu + 1.0) - self.sw @ gammaln(self.su + 1.0)
                           - self.fw @ gammaln(self.fu + 1.0))

    @staticmethod
    def _rising(x: np.ndarray, u: np.ndarray, w: np.ndarray, chunk: int = 1 << 22) -> np.ndarray:
        """sum_k w_k [lnGamma(x + u_k) - lnGamma(x)] for every x (vectorised, chunked)."""
        gammaln = _gammaln()
        keep = u > 0
        u, w = u[keep].astype(np.float64), w[keep]
        out = np.zeros(x.shape, dtype=np.float64)
        if u.size == 0:
            return out
        flat = x.ravel()
        res = out.ravel()
        top = int(u.max())
        if top <= 512:
            # lnGamma(x + u) - lnGamma(x) = sum_{t < u} ln(x + t): weight each t by how many
            # questions have u > t, so one matrix-vector product of logs does every pair.
            tail = np.zeros(top)
            np.add.at(tail, u.astype(np.int64) - 1, w)
            tail = np.cumsum(tail[::-1])[::-1]
            t = np.arange(top, dtype=np.float64)
            step = max(1, chunk // top)
            for s in range(0, flat.size, step):
                res[s:s + step] = np.log(flat[s:s + step, None] + t[None, :]) @ tail
            return out
        base = gammaln(flat)
        step = max(1, chunk // u.size)
        for s in range(0, flat.size, step):
            xs = flat[s:s + step, None]
            res[s:s + step] = (gammaln(xs + u[None, :]) - base[s:s + step, None]) @ w
        return res.reshape(x.shape)

    def __call__(self, alpha: np.ndarray, beta: np.ndarray, *, with_constant: bool = False) -> np.ndarray:
        alpha = np.asarray(alpha, dtype=np.float64)
        beta = np.asarray(beta, dtype=np.float64)
        ll = (self._rising(alpha, self.su, self.sw) + self._rising(beta, self.fu, self.fw)
              - self._rising(alpha + beta, self.tu, self.tw))
        return ll + self.const if with_constant else ll


def beta_binomial_loglik(successes: ArrayLike, trials: ArrayLike, alpha: ArrayLike, beta: ArrayLike) -> np.ndarray:
    """Beta-Binomial log-likelihood ``sum_i log BetaBin(y_i | J_i, alpha, beta)``.

    Includes the binomial coefficients. ``alpha`` and ``beta`` broadcast together (e.g. a
    grid); the data enter through their distinct values only.
    """
    y, j = _counts(successes, trials)
    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    if np.any(~(a > 0)) or np.any(~(b > 0)):
        raise InvalidArgument("alpha", alpha, "alpha and beta must be positive")
    a, b = np.broadcast_arrays(a, b)
    return _Likelihood(y, j)(a, b, with_constant=True)


def beta_binomial_theta(successes: ArrayLike, trials: ArrayLike, alpha: float, beta: float,
                        hdi_prob: float = 0.95) -> dict[str, np.ndarray]:
    """Posterior of each theta_i for *known* (alpha, beta): Beta(alpha + y_i, beta + J_i - y_i).

    The empirical-Bayes step (e.g. with a method-of-moments prior): returns ``mean``, ``sd``,
    ``low`` and ``high`` (HDI) arrays. The full-Bayes engines average this over the
    posterior of (alpha, beta).
    """
    from evalspec.stats.highest_density import beta_hdi

    y, j = _counts(successes, trials)
    hdi_prob = _level("hdi_prob", hdi_prob)
    if not (alpha > 0 and beta > 0):
        raise InvalidArgument("alpha", alpha, "alpha and beta must be positive")
    a = alpha + y
    b = beta + j - y
    n = a + b
    mean = a / n
    sd = np.sqrt(a * b / (n * n * (n + 1.0)))
    lo = np.empty(y.size)
    hi = np.empty(y.size)
    for i in range(y.size):
        r = beta_hdi(float(a[i]), float(b[i]), hdi_prob)
        lo[i], hi[i] = r.low, r.high
    return {"mean": mean, "sd": sd, "low": lo, "high": hi}


def _log_prior_eta_lambda(eta: np.ndarray, lam: np.ndarray, prior: BetaBinomialPrior) -> np.ndarray:
    """Log prior density on (eta = logit mu, lambda = log kappa), Jacobian included."""
    from scipy.special import betaln

    # log mu = -log(1 + e^-eta), log(1 - mu) = -log(1 + e^eta)
    log_mu = -np.logaddexp(0.0, -eta)
    log_1mu = -np.logaddexp(0.0, eta)
    lp_mu = prior.mu_a * log_mu + prior.mu_b * log_1mu - betaln(prior.mu_a, prior.mu_b)  # Beta pdf * mu(1-mu)
    z = (lam - prior.log_kappa_mean) / prior.log_kappa_sd
    lp_k = -0.5 * z * z - math.log(prior.log_kappa_sd * math.sqrt(2.0 * math.pi))
    return lp_mu + lp_k


def _expit(x: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return expit(x)
