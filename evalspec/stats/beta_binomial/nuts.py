"""The NUTS engine: the paper's PyMC model (the optional ``mcmc`` extra), with R-hat, ESS and divergences as findings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evalspec.stats._validation import InvalidArgument
from evalspec.stats.beta_binomial.model import BetaBinomialPrior
from evalspec.stats.beta_binomial.summaries import Diagnostic

__all__: list[str] = []


def _nuts_diagnostics(idata: Any, names: Sequence[str], chains: int) -> dict[str, list[Diagnostic]]:
    import arviz as az

    rhat = az.rhat(idata, var_names=["mu", "log_kappa"])
    ess_b = az.ess(idata, var_names=["mu", "log_kappa"], method="bulk")
    ess_t = az.ess(idata, var_names=["mu", "log_kappa"], method="tail")
    div = idata.sample_stats["diverging"].values  # (chain, draw)
    n_div = int(div.sum())
    min_ess = 100 * chains
    out: dict[str, list[Diagnostic]] = {}
    for c, name in enumerate(names):
        r = max(float(rhat[v].values[c]) for v in ("mu", "log_kappa"))
        eb = min(float(ess_b[v].values[c]) for v in ("mu", "log_kappa"))
        et = min(float(ess_t[v].values[c]) for v in ("mu", "log_kappa"))
        ds = [
            Diagnostic(
                check="r_hat", ok=bool(r <= 1.01), value=round(r, 4), threshold=1.01,
                finding=f"largest R-hat of mu and log kappa is {r:.3f}" + ("" if r <= 1.01 else " (above 1.01)"),
                meaning="the chains agree on the posterior" if r <= 1.01 else
                        "the chains have not mixed: they disagree about the posterior, so its summaries may be wrong",
                remedy="none needed" if r <= 1.01 else "run longer (more tune and draws) or use the grid engine"),
            Diagnostic(
                check="ess", ok=bool(min(eb, et) >= min_ess), value=round(min(eb, et), 1), threshold=float(min_ess),
                finding=f"smallest effective sample size (bulk {eb:.0f}, tail {et:.0f})"
                        + ("" if min(eb, et) >= min_ess else f" is below {min_ess} (100 per chain)"),
                meaning="enough independent information for stable means and interval ends" if min(eb, et) >= min_ess
                        else "few effectively independent draws: means and especially HDI ends are noisy",
                remedy="none needed" if min(eb, et) >= min_ess else "draw more samples"),
            Diagnostic(
                check="divergences", ok=bool(n_div == 0), value=float(n_div), threshold=0.0,
                finding=f"{n_div} divergent transitions after warm-up",
                meaning="the sampler explored the posterior without trouble" if n_div == 0 else
                        "the sampler met curvature it could not follow: the posterior may be explored incompletely "
                        "and its summaries biased",
                remedy="none needed" if n_div == 0 else "raise target_accept (e.g. 0.95) or use the grid engine"),
        ]
        out[name] = ds
    return out


def _nuts_engine(data: dict[str, tuple[np.ndarray, np.ndarray]], prior: BetaBinomialPrior, *, chains: int, tune: int,
                 draws: int, seed: int | None, progressbar: bool, target_accept: float, cores: int | None):
    try:
        import pymc as pm
    except ImportError:
        raise InvalidArgument("engine", "nuts", "needs PyMC: pip install 'evalspec[mcmc]' (or use engine 'grid')") \
            from None
    names = list(data)
    ys = np.concatenate([data[n][0] for n in names])
    js = np.concatenate([data[n][1] for n in names])
    idx = np.concatenate([np.full(data[n][0].size, c) for c, n in enumerate(names)])
    with pm.Model(coords={"condition": names}):
        mu = pm.Beta("mu", alpha=prior.mu_a, beta=prior.mu_b, dims="condition")
        log_kappa = pm.Normal("log_kappa", mu=prior.log_kappa_mean, sigma=prior.log_kappa_sd, dims="condition")
        kappa = pm.Deterministic("kappa", pm.math.exp(log_kappa), dims="condition")
        pm.BetaBinomial("y", n=js, alpha=(mu * kappa)[idx], beta=((1.0 - mu) * kappa)[idx], observed=ys)
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores or 1, random_seed=seed,
                          progressbar=progressbar, target_accept=target_accept, compute_convergence_checks=False)
    diags = _nuts_diagnostics(idata, names, chains)
    post = idata.posterior
    out = {}
    for c, name in enumerate(names):
        mu_d = post["mu"].values[:, :, c].ravel()
        lam_d = post["log_kappa"].values[:, :, c].ravel()
        out[name] = (mu_d, lam_d, diags[name])
    return out, idata
