"""The entry points: :func:`beta_binomial_profile` (several conditions and their contrasts) and :func:`beta_binomial_posterior`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from evalspec.stats._validation import InvalidArgument, _level
from evalspec.stats.beta_binomial.contrast import Contrast, beta_binomial_contrast
from evalspec.stats.beta_binomial.counts import _counts
from evalspec.stats.beta_binomial.grid import _grid_engine
from evalspec.stats.beta_binomial.model import BetaBinomialPrior, _expit
from evalspec.stats.beta_binomial.nuts import _nuts_engine
from evalspec.stats.beta_binomial.posterior import BetaBinomialPosterior, _derive

__all__ = ["ENGINES", "BetaBinomialProfile", "beta_binomial_posterior", "beta_binomial_profile"]


ENGINES = ("grid", "nuts")


@dataclass(frozen=True)
class BetaBinomialProfile:
    """Posteriors of several conditions and the contrasts between them."""

    conditions: dict[str, BetaBinomialPosterior]
    contrasts: tuple[Contrast, ...]
    engine: str
    hdi_prob: float
    seed: int | None


def _seed_int(seed: int | None) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidArgument("seed", seed, "must be a non-negative integer or None")
    return int(seed)


def beta_binomial_profile(data: Mapping[str, tuple[ArrayLike, ArrayLike]], *, engine: str = "grid",
                          contrasts: Sequence[tuple[str, str]] | None = None, hdi_prob: float = 0.95,
                          seed: int | None = None, prior: BetaBinomialPrior | None = None, draws: int = 20_000,
                          grid_points: int = 96, chains: int = 4, tune: int = 2_000, nuts_draws: int = 2_000,
                          target_accept: float = 0.9, cores: int | None = None, progressbar: bool = False,
                          ppc_draws: int = 500) -> BetaBinomialProfile:
    """Posterior profile of several conditions, and contrasts between pairs of them.

    Parameters
    ----------
    data : mapping
        Condition name -> ``(successes, trials)``: per-question counts of correct trials and
        of trials.
    engine : {'grid', 'nuts'}
        ``grid``: adaptive quadrature (default, deterministic given ``seed``). ``nuts``: the
        paper's PyMC model (one joint model over the conditions), needs the ``mcmc`` extra.
    contrasts : list of (first, second), optional
        Pairs to contrast (first minus second); default every pair in the given order.
    hdi_prob : float
        Mass of every highest-density interval (0.95).
    seed : int, optional
        Seed of every random draw (grid draws, theta and gamma-bar draws, PPC, NUTS).
    prior : BetaBinomialPrior, optional
        Hyperpriors; default the paper's mu ~ Beta(1, 1), log kappa ~ Normal(0, 1.5).
    draws : int
        Grid engine: posterior draws for intervals and derived quantities.
    grid_points : int
        Grid engine: points per axis of the final grid.
    chains, tune, nuts_draws, target_accept, cores, progressbar
        NUTS engine settings (the paper: 4 chains, 50,000 warm-up, 200,000 draws in all).
    ppc_draws : int
        Replicated data sets in the posterior predictive check.
    """
    engine = str(engine)
    if engine not in ENGINES:
        raise InvalidArgument("engine", engine, "must be 'grid' or 'nuts'")
    hdi_prob = _level("hdi_prob", hdi_prob)
    seed = _seed_int(seed)
    prior = prior or BetaBinomialPrior()
    for name, value, lo in (("draws", draws, 100), ("grid_points", grid_points, 16), ("chains", chains, 1),
                            ("tune", tune, 0), ("nuts_draws", nuts_draws, 10), ("ppc_draws", ppc_draws, 10)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
            raise InvalidArgument(name, value, f"must be an integer >= {lo}")
    if not isinstance(data, Mapping) or not data:
        raise InvalidArgument("data", data, "must map at least one condition name to (successes, trials)")
    clean = {str(k): _counts(v[0], v[1], str(k)) for k, v in data.items()}
    names = list(clean)
    if contrasts is None:
        contrasts = [(names[a], names[b]) for a in range(len(names)) for b in range(a + 1, len(names))]
    for pair in contrasts:
        for n in pair:
            if n not in clean:
                raise InvalidArgument("contrasts", list(pair), f"condition {n!r} has no data; known: {', '.join(names)}")
        if pair[0] == pair[1]:
            raise InvalidArgument("contrasts", list(pair), "contrasts a condition with itself")
    root = np.random.SeedSequence(seed)
    children = root.spawn(len(names) + 1)
    posts: dict[str, BetaBinomialPosterior] = {}
    if engine == "grid":
        for c, name in enumerate(names):
            rng = np.random.default_rng(children[c])
            y, j = clean[name]
            g = _grid_engine(y, j, prior, int(grid_points), int(draws), rng)
            posts[name] = _derive(y, j, _expit(g["eta"]), g["lam"], hdi_prob, rng, quad=g, ppc_draws=int(ppc_draws),
                                  engine="grid", diagnostics=g["diagnostics"], prior=prior, seed=seed)
    else:
        nuts_seed = int(np.random.default_rng(children[-1]).integers(2**31 - 1))
        res, idata = _nuts_engine(clean, prior, chains=int(chains), tune=int(tune), draws=int(nuts_draws),
                                  seed=nuts_seed, progressbar=progressbar, target_accept=target_accept, cores=cores)
        for c, name in enumerate(names):
            rng = np.random.default_rng(children[c])
            y, j = clean[name]
            mu_d, lam_d, diags = res[name]
            posts[name] = _derive(y, j, mu_d, lam_d, hdi_prob, rng, quad=None, ppc_draws=int(ppc_draws),
                                  engine="nuts", diagnostics=diags, prior=prior, seed=seed, trace=idata)
    cons = tuple(beta_binomial_contrast(posts[a], posts[b], first_name=a, second_name=b, hdi_prob=hdi_prob)
                 for a, b in contrasts)
    return BetaBinomialProfile(conditions=posts, contrasts=cons, engine=engine, hdi_prob=hdi_prob, seed=seed)


def beta_binomial_posterior(successes: ArrayLike, trials: ArrayLike, *, engine: str = "grid",
                            hdi_prob: float = 0.95, seed: int | None = None, **kwargs: Any) -> BetaBinomialPosterior:
    """Posterior profile (mu, kappa, gamma-bar, Beta variance, theta_i, PPC, diagnostics) of one condition.

    ``successes[i]`` correct answers out of ``trials[i]`` for question ``i``. Keyword
    arguments are those of :func:`beta_binomial_profile`. Returns a
    :class:`BetaBinomialPosterior`; e.g. ``post.mu.mean``, ``post.mu.low``, ``post.mu.high``.
    """
    prof = beta_binomial_profile({"condition": (successes, trials)}, engine=engine, hdi_prob=hdi_prob, seed=seed,
                                 contrasts=[], **kwargs)
    return prof.conditions["condition"]
