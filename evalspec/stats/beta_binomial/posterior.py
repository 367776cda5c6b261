"""One condition's posterior: the derived quantities computed the same way from either engine's draws.

Beta variance, theta_i and gamma-bar per draw, the grid's exact quadrature means where there
is a grid, the posterior predictive check and the notes on what the data cannot inform.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalspec.stats.beta_binomial.counts import _pairs
from evalspec.stats.beta_binomial.gamma_bar import _theta_moments, gamma_bar_draws
from evalspec.stats.beta_binomial.grid import _grid_hdis
from evalspec.stats.beta_binomial.model import BetaBinomialPrior, _expit
from evalspec.stats.beta_binomial.ppc import PPCSummary, _ppc
from evalspec.stats.beta_binomial.summaries import Diagnostic, Summary, ThetaSummary, _summary
from evalspec.stats.highest_density import hdi_rows

__all__ = ["BetaBinomialPosterior"]


_PARAMS = ("mu", "kappa", "gamma_bar", "variance")


@dataclass(frozen=True)
class BetaBinomialPosterior:
    """Posterior profile of one condition.

    ``mu``, ``kappa``, ``gamma_bar``, ``variance`` (the Beta variance mu(1-mu)/(kappa+1)) are
    :class:`Summary` objects; ``theta`` holds theta_i per question; ``draws`` maps each of
    ``mu``, ``kappa``, ``gamma_bar``, ``variance`` (and ``log_kappa``) to its posterior draws.
    """

    engine: str
    hdi_prob: float
    n_questions: int
    n_trials: int
    n_successes: int
    mu: Summary
    kappa: Summary
    gamma_bar: Summary
    variance: Summary
    theta: ThetaSummary
    ppc: PPCSummary
    diagnostics: tuple[Diagnostic, ...]
    draws: dict[str, np.ndarray]
    prior: BetaBinomialPrior
    seed: int | None
    notes: tuple[str, ...] = ()
    #: The sampler's InferenceData (NUTS engine only) for :func:`to_inference_data`.
    trace: Any = None

    @property
    def ok(self) -> bool:
        """True when every diagnostic passed."""
        return all(d.ok for d in self.diagnostics)

    def summary(self, name: str) -> Summary:
        return getattr(self, name)


def _theta_summary(theta_pairs: np.ndarray, inverse: np.ndarray, y: np.ndarray, j: np.ndarray, prob: float,
                   exact_mean: np.ndarray | None) -> ThetaSummary:
    lo, hi = hdi_rows(theta_pairs.T, prob)
    mean = theta_pairs.mean(axis=0) if exact_mean is None else exact_mean
    sd = theta_pairs.std(axis=0, ddof=1)
    return ThetaSummary(successes=y, trials=j, mean=np.asarray(mean)[inverse], low=lo[inverse], high=hi[inverse],
                        hdi_prob=prob, sd=sd[inverse])


def _derive(y: np.ndarray, j: np.ndarray, mu: np.ndarray, lam: np.ndarray, prob: float, rng: np.random.Generator,
            *, quad: dict[str, Any] | None, ppc_draws: int, engine: str, diagnostics: list[Diagnostic],
            prior: BetaBinomialPrior, seed: int | None, trace: Any = None) -> BetaBinomialPosterior:
    kappa = np.exp(lam)
    alpha = mu * kappa
    beta = (1.0 - mu) * kappa
    variance = mu * (1.0 - mu) / (kappa + 1.0)
    gb, theta_pairs, inverse = gamma_bar_draws(alpha, beta, y, j, rng)
    uy, uj, cnt, _ = _pairs(y, j)
    means: dict[str, float | None] = dict.fromkeys(_PARAMS)
    theta_mean = None
    if quad is not None:  # exact quadrature means of the grid posterior
        w = quad["weights"]
        keep = w > 0
        w = w[keep]
        qm = _expit(quad["eta_cells"][keep])
        qk = np.exp(quad["lam_cells"][keep])
        qa, qb = qm * qk, (1.0 - qm) * qk
        means["mu"] = float(w @ qm)
        means["kappa"] = float(w @ qk)
        means["variance"] = float(w @ (qm * (1.0 - qm) / (qk + 1.0)))
        a = qa[:, None] + uy[None, :]
        b = qb[:, None] + (uj - uy)[None, :]
        m1, _ = _theta_moments(a, b)
        means["gamma_bar"] = float(w @ ((m1 * uj[None, :]) @ cnt) / y.size)
        theta_mean = w @ (a / (a + b))
    draws = {"mu": mu, "kappa": kappa, "log_kappa": lam, "gamma_bar": gb, "variance": variance}
    sums = {name: _summary(draws[name], prob, means[name]) for name in _PARAMS}
    if quad is not None:  # deterministic HDIs of the hyperparameter functions
        for name, (lo, hi) in _grid_hdis(quad, prob).items():
            sums[name] = dataclasses.replace(sums[name], low=lo, high=hi)
    n_ppc = min(ppc_draws, mu.size)
    pick = rng.choice(mu.size, size=n_ppc, replace=False) if n_ppc < mu.size else np.arange(mu.size)
    ppc = _ppc(y, j, alpha[pick], beta[pick], rng)
    notes = []
    if y.size == 1:
        notes.append("only one question: the spread between questions (kappa) is barely informed by the data, "
                     "so its wide posterior rests mostly on its prior")
    if np.all(y == j):
        notes.append("every trial of every question was correct: mu's posterior is bounded below by the data but "
                     "its upper end rests on the prior")
    elif np.all(y == 0):
        notes.append("every trial of every question was wrong: mu's posterior is bounded above by the data but "
                     "its lower end rests on the prior")
    if np.all(j == 1):
        notes.append("one trial per question: kappa (spread between questions) is not identified from single trials "
                     "and gamma-bar only restates mu")
    return BetaBinomialPosterior(
        engine=engine, hdi_prob=prob, n_questions=int(y.size), n_trials=int(j.sum()), n_successes=int(y.sum()),
        mu=sums["mu"], kappa=sums["kappa"], gamma_bar=sums["gamma_bar"], variance=sums["variance"],
        theta=_theta_summary(theta_pairs, inverse, y, j, prob, theta_mean), ppc=ppc,
        diagnostics=tuple(diagnostics), draws=draws, prior=prior, seed=seed, notes=tuple(notes), trace=trace)
