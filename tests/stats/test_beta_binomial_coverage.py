"""Recovery: the grid engine's 95 % HDIs cover the truth at 95 % within Monte Carlo error.

Two designs (a modest version of the table in docs/beta_binomial.md, made by
benchmarks/bench_beta_binomial.py --coverage):

* truths drawn from the prior: a correct posterior is calibrated exactly, so coverage of
  every parameter is 95 % in expectation whatever the data size;
* a fixed truth (mu 0.7, kappa 3; 40 questions x 20 trials): frequentist coverage of the
  credible interval, close to 95 % when the data dominate the prior.

Tolerance: three binomial standard errors of the coverage (100 replications: 6.5 points).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalspec.stats.beta_binomial import beta_binomial_posterior

REPS = 100
PARAMS = ("mu", "kappa", "variance")


def _covered(truth: dict[str, float], post) -> dict[str, bool]:
    return {p: getattr(post, p).low <= truth[p] <= getattr(post, p).high for p in PARAMS}


def _run(draw_truth, n_q: int, trials: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    hits = {p: 0 for p in PARAMS}
    for rep in range(REPS):
        mu, kappa = draw_truth(rng)
        theta = rng.beta(mu * kappa, (1 - mu) * kappa, size=n_q)
        y = rng.binomial(trials, theta)
        post = beta_binomial_posterior(y, np.full(n_q, trials), seed=rep, draws=1000, grid_points=64, ppc_draws=50)
        truth = {"mu": mu, "kappa": kappa, "variance": mu * (1 - mu) / (kappa + 1)}
        for p, ok in _covered(truth, post).items():
            hits[p] += ok
    return {p: hits[p] / REPS for p in PARAMS}


def _check(cov: dict[str, float]) -> None:
    tol = 3 * math.sqrt(0.95 * 0.05 / REPS)
    for p, c in cov.items():
        assert abs(c - 0.95) <= tol, (p, c, tol)


@pytest.mark.slow
def test_coverage_with_truths_from_the_prior():
    def from_prior(rng):
        return float(rng.beta(1, 1)), float(math.exp(rng.normal(0, 1.5)))

    _check(_run(from_prior, n_q=30, trials=10, seed=11))


@pytest.mark.slow
def test_coverage_at_a_fixed_truth():
    _check(_run(lambda rng: (0.7, 3.0), n_q=40, trials=20, seed=12))
