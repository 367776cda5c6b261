"""The grid engine and PyMC's NUTS agree on every reported summary (simulated data).

Needs PyMC (the ``mcmc`` extra, installed by the README's test command). Skipped when it is
absent, except under EVALSPEC_REQUIRE_TOOLS=1 (CI), where its absence fails.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from scipy.stats import ks_2samp

from evalspec.stats.beta_binomial import beta_binomial_profile, to_inference_data

if os.environ.get("EVALSPEC_REQUIRE_TOOLS") == "1":
    import pymc  # noqa: F401  (CI: required)
else:
    pytest.importorskip("pymc")
os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), ".cache", "pytensor"))


def _sim(n, trials, mu, kappa, seed):
    rng = np.random.default_rng(seed)
    theta = rng.beta(mu * kappa, (1 - mu) * kappa, size=n)
    return rng.binomial(trials, theta), np.full(n, trials)


@pytest.fixture(scope="module")
def both():
    data = {"exact": _sim(40, 20, 0.8, 2.0, 1), "rephrased": _sim(40, 20, 0.6, 4.0, 2)}
    grid = beta_binomial_profile(data, seed=1, draws=100_000)
    nuts = beta_binomial_profile(data, engine="nuts", seed=1, chains=4, tune=1000, nuts_draws=10_000)
    return grid, nuts


@pytest.mark.slow
def test_engines_agree_within_005_posterior_sd(both):
    """Means and sds of mu, kappa, gamma-bar, Beta variance and theta_i within 0.05 posterior sd,
    the posteriors' distribution functions within 0.02 (Kolmogorov-Smirnov), HDI ends within
    0.1 sd (theta_i: 0.2 sd, its draws being one per hyperparameter draw in both engines).

    The HDI ends are held to 0.1 sd, not 0.05: an HDI end read off draws (the shortest window
    of the sorted draws) has a Monte Carlo error of its own, measured at 0.02-0.04 sd for
    kappa's lower end with 100,000 independent draws (seeds 1-3 of this data: 1.032, 1.054,
    1.061 against the grid's quadrature 1.039, sd 0.73), and more at NUTS's 40,000
    autocorrelated draws. The grid's HDIs of mu, kappa and the variance are quadrature. The
    benchmark measures the gap at the paper's setting.
    """
    grid, nuts = both
    gaps = {}
    for name in ("exact", "rephrased"):
        g, n = grid.conditions[name], nuts.conditions[name]
        for p in ("mu", "kappa", "gamma_bar", "variance"):
            gs, ns = g.summary(p), n.summary(p)
            sd = gs.sd
            gaps[name, p, "mean"] = abs(gs.mean - ns.mean) / sd
            gaps[name, p, "sd"] = abs(gs.sd - ns.sd) / sd
            for end in ("low", "high"):
                gap = abs(getattr(gs, end) - getattr(ns, end)) / sd
                assert gap < 0.10, (name, p, end, gap)
            ks = ks_2samp(g.draws[p], n.draws[p]).statistic
            assert ks < 0.02, (name, p, ks)
        # theta_i: means within 0.05 of each question's posterior sd; HDI ends (draws in both
        # engines, one theta per hyperparameter draw) within 0.2 sd
        th_sd = g.theta.sd
        assert np.max(np.abs(g.theta.mean - n.theta.mean) / th_sd) < 0.05
        assert np.max(np.abs(g.theta.low - n.theta.low) / th_sd) < 0.2
        assert np.max(np.abs(g.theta.high - n.theta.high) / th_sd) < 0.2
        assert n.ok, [d.finding for d in n.diagnostics if not d.ok]
    assert max(gaps.values()) < 0.05, max(gaps.items(), key=lambda kv: kv[1])
    for c_g, c_n in zip(grid.contrasts, nuts.contrasts, strict=True):
        for p in ("mu", "kappa", "gamma_bar", "variance"):
            dg, dn = c_g.differences[p], c_n.differences[p]
            assert abs(dg.mean - dn.mean) < 0.05 * dg.sd
            assert dg.excludes_zero == dn.excludes_zero
            assert abs(dg.p_greater - dn.p_greater) < 0.02


@pytest.mark.slow
def test_nuts_diagnostics_and_inference_data(both, tmp_path):
    _, nuts = both
    post = nuts.conditions["exact"]
    checks = {d.check: d for d in post.diagnostics}
    assert set(checks) == {"r_hat", "ess", "divergences"}
    for d in checks.values():
        assert d.finding and d.meaning and d.remedy
    idata = to_inference_data(nuts)
    assert idata.posterior["mu"].shape == (4, 10_000, 2)
    assert "sample_stats" in idata.groups()
    pytest.importorskip("h5netcdf")
    path = tmp_path / "posterior.nc"
    idata.to_netcdf(str(path))
    assert path.stat().st_size > 0
