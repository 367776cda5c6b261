"""The grid engine and PyMC's NUTS agree on every reported summary (simulated data).

Needs PyMC (the ``mcmc`` extra, installed by the README's test command). Skipped when it is
absent, except under EVALSPEC_REQUIRE_TOOLS=1 (CI), where its absence fails.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

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
    """Means and sds of mu, kappa, gamma-bar, Beta variance, theta_i within 0.05 posterior sd;
    HDI ends within 0.05 sd or, where larger, three Monte Carlo standard errors of the gap.

    An HDI end estimated from draws has a Monte Carlo error of its own: about
    sqrt(q (1 - q) / ESS) / density at the end, i.e. 0.02-0.04 sd at NUTS's 40,000 draws
    (ESS about 25,000) plus the grid's 100,000 independent draws. The benchmark measures the
    gap at the paper's 200,000 draws.
    """
    grid, nuts = both
    gaps = {}
    for name in ("exact", "rephrased"):
        g, n = grid.conditions[name], nuts.conditions[name]
        ess = min(d.value for d in n.diagnostics if d.check == "ess")
        for p in ("mu", "kappa", "gamma_bar", "variance"):
            gs, ns = g.summary(p), n.summary(p)
            sd = gs.sd
            gaps[name, p, "mean"] = abs(gs.mean - ns.mean) / sd
            gaps[name, p, "sd"] = abs(gs.sd - ns.sd) / sd
            draws = g.draws[p]
            for end in ("low", "high"):
                x = getattr(gs, end)
                q = float(np.mean(draws <= x))
                dens = np.mean(np.abs(draws - x) < 0.1 * sd) / (0.2 * sd)
                mcse = np.sqrt(q * (1 - q) * (1 / ess + 1 / draws.size)) / max(dens, 1e-12)
                gap = abs(x - getattr(ns, end))
                assert gap < max(0.05 * sd, 3 * mcse), (name, p, end, gap / sd, mcse / sd)
        # theta_i: sd of each question's theta from the grid's own draws
        th_sd = np.sqrt(g.theta.mean * (1 - g.theta.mean) / 20)  # scale: a binomial sd at J = 20
        assert np.max(np.abs(g.theta.mean - n.theta.mean) / th_sd) < 0.05
        assert np.max(np.abs(g.theta.low - n.theta.low) / th_sd) < 0.10
        assert np.max(np.abs(g.theta.high - n.theta.high) / th_sd) < 0.10
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
