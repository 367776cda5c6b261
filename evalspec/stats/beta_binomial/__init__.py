"""The hierarchical Beta-Binomial profile of repeated trials: mu, kappa, gamma-bar, theta_i.

The model is the one of "Characterizing LLM performance via a Bayesian lens" (section 2).
Question ``i`` of a condition is answered ``J_i`` times and ``y_i`` answers are correct::

    y_i | theta_i ~ Binomial(J_i, theta_i)
    theta_i       ~ Beta(mu * kappa, (1 - mu) * kappa)
    mu            ~ Beta(1, 1)
    log kappa     ~ Normal(0, 1.5)

Conditions (e.g. exact and rephrased questions) have their own (mu, kappa) with independent
priors, so their posteriors are independent and each is computed on its own.

Two engines compute the posterior of (mu, kappa):

* ``grid`` (default): deterministic quadrature over (logit mu, log kappa). A coarse grid over
  the prior's range locates the posterior, a local optimiser finds its mode and curvature,
  and the final grid covers every point within 20 nats of the maximum. The log-likelihood
  depends on the data only through the distinct (y, J) pairs and their counts and is computed
  that way (vectorised over grid points and pairs), so its cost does not grow with the number
  of questions. Posterior means of mu, kappa, gamma-bar, the Beta variance and theta_i are
  exact quadrature sums, and so are the HDIs of mu, kappa and the Beta variance (the
  shortest interval holding 95 % of the grid's mass); the HDIs of gamma-bar, theta_i and of
  differences come from draws of the grid posterior (cells drawn by their mass, uniformly
  jittered within the cell).
* ``nuts``: the paper's PyMC model, sampled by NUTS (optional ``mcmc`` extra), with R-hat,
  effective sample size and divergences reported as findings with their meaning and remedy.

Derived quantities are computed from hyperparameter draws the same way for both engines:

* Beta variance ``mu (1 - mu) / (kappa + 1)`` per draw.
* theta_i per draw from ``Beta(alpha + y_i, beta + J_i - y_i)``.
* gamma-bar per draw exactly as the paper defines it: the mean over questions of
  ``J_i theta_i (1 - theta_i)`` with theta_i drawn per draw. Questions sharing (y, J) share
  that Beta, so the sum over a group of ``c`` such questions is drawn question by question
  while the study is small enough (:data:`EXACT_DRAW_BUDGET` question-draws) and otherwise
  from the Beta on the sum's range [0, c J / 4] with the sum's exact conditional mean
  ``c J E[theta(1-theta)]`` and variance ``c J^2 Var[theta(1-theta)]`` (a sum of ``c``
  independent bounded terms; a normal there left the range near theta = 0 or 1). Averaging
  the closed-form ``E[theta(1-theta)]`` instead gives the same mean but intervals about ten times narrower than the published ones.
* Posterior predictive check: replicated data sets from the Beta-Binomial likelihood at
  posterior draws (counts per distinct J drawn as a multinomial over y, so the cost does not
  grow with the number of questions), compared with the observed data on four statistics.

Contrasts between two conditions give the posterior of each difference (HDI, P(diff > 0),
whether the HDI excludes zero) and the Bhattacharyya coefficient between the two
conditions' posteriors of each parameter; see :func:`bhattacharyya` for the normalisation.

The engine is one module per topic (as scipy.stats keeps its house), each result object
beside the function that returns it:

* :mod:`~.counts` checks the per-question counts and reduces them to distinct (y, J) pairs;
* :mod:`~.model` the hyperpriors (:class:`BetaBinomialPrior`) and the likelihood;
* :mod:`~.grid` and :mod:`~.nuts` the two engines;
* :mod:`~.gamma_bar` gamma-bar's draws, :mod:`~.ppc` the posterior predictive check;
* :mod:`~.summaries` the summaries every engine reports, :mod:`~.posterior` one condition's
  posterior derived from either engine's draws, :mod:`~.contrast` the contrasts;
* :mod:`~.profile` the entry points, :mod:`~.inference_data` the ArviZ export.

The HDIs use :mod:`evalspec.stats.highest_density` (one home of the HDI). numpy is the only
import at load time; scipy, PyMC and ArviZ load inside the functions that need them.
"""

from __future__ import annotations

from evalspec.stats.beta_binomial.contrast import Contrast, DifferenceSummary, beta_binomial_contrast, bhattacharyya
from evalspec.stats.beta_binomial.gamma_bar import EXACT_DRAW_BUDGET, EXACT_GROUP_MAX, gamma_bar_draws
from evalspec.stats.beta_binomial.inference_data import to_inference_data
from evalspec.stats.beta_binomial.model import BetaBinomialPrior, beta_binomial_loglik, beta_binomial_theta
from evalspec.stats.beta_binomial.posterior import BetaBinomialPosterior
from evalspec.stats.beta_binomial.ppc import PPCStatistic, PPCSummary
from evalspec.stats.beta_binomial.profile import (
    ENGINES,
    BetaBinomialProfile,
    beta_binomial_posterior,
    beta_binomial_profile,
)
from evalspec.stats.beta_binomial.summaries import Diagnostic, Summary, ThetaSummary
from evalspec.stats.highest_density import hdi_rows, weighted_hdi

__all__ = [
    "BetaBinomialPosterior",
    "BetaBinomialPrior",
    "BetaBinomialProfile",
    "Contrast",
    "Diagnostic",
    "DifferenceSummary",
    "ENGINES",
    "EXACT_DRAW_BUDGET",
    "EXACT_GROUP_MAX",
    "PPCStatistic",
    "PPCSummary",
    "Summary",
    "ThetaSummary",
    "beta_binomial_contrast",
    "beta_binomial_loglik",
    "beta_binomial_posterior",
    "beta_binomial_profile",
    "beta_binomial_theta",
    "bhattacharyya",
    "gamma_bar_draws",
    "hdi_rows",
    "to_inference_data",
    "weighted_hdi",
]
