"""A profile as ArviZ InferenceData (``--save-posterior``); needs the optional ``mcmc`` extra."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from evalspec.stats._validation import InvalidArgument

if TYPE_CHECKING:
    from evalspec.stats.beta_binomial.profile import BetaBinomialProfile

__all__ = ["to_inference_data"]


def to_inference_data(profile: BetaBinomialProfile) -> Any:
    """ArviZ InferenceData of a profile (posterior draws of every condition, the observed counts).

    The NUTS engine's own trace (chains kept) is returned with derived quantities added; the
    grid engine's draws form one chain. Needs ArviZ (the ``mcmc`` extra).
    """
    try:
        import arviz as az
    except ImportError:
        raise InvalidArgument("save_posterior", "netcdf", "needs ArviZ: pip install 'evalspec[mcmc]'") from None
    names = list(profile.conditions)
    first = profile.conditions[names[0]]
    n = min(p.draws["mu"].size for p in profile.conditions.values())
    post = {k: np.stack([profile.conditions[c].draws[k][:n] for c in names], axis=-1)[None, ...]
            for k in ("mu", "kappa", "log_kappa", "gamma_bar", "variance")}
    observed = {}
    for c in names:
        p = profile.conditions[c]
        observed[f"successes__{c}"] = p.theta.successes
        observed[f"trials__{c}"] = p.theta.trials
    if profile.engine == "nuts" and first.trace is not None:
        chains = first.trace.posterior.sizes["chain"]
        post = {k: v.reshape(chains, -1, len(names)) for k, v in post.items()}
    idata = az.from_dict(posterior=post, observed_data=observed, coords={"condition": names},
                         dims={k: ["condition"] for k in post},
                         attrs={"engine": profile.engine, "hdi_prob": profile.hdi_prob,
                                "seed": -1 if profile.seed is None else profile.seed,
                                "model": "y_i ~ BetaBinomial(J_i, mu kappa, (1 - mu) kappa); mu ~ Beta(1, 1); "
                                         "log kappa ~ Normal(0, 1.5) (Characterizing LLM performance via a "
                                         "Bayesian lens, section 2)"})
    if profile.engine == "nuts" and first.trace is not None and "sample_stats" in first.trace.groups():
        idata.add_groups(sample_stats=first.trace.sample_stats)
    return idata
