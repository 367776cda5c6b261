"""Hierarchical Beta-Binomial profile: reference values, invariants, gamma-bar, edge cases.

References: the rat-tumour data (Gelman et al., Bayesian Data Analysis, 3rd ed., Sec. 5.1)
from the project's reference cases; the grid engine is checked against an independent
brute-force quadrature written here with scipy.stats.betabinom, per question.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special
from scipy import stats as sps

from evalspec.stats import InvalidArgument, hdi
from evalspec.stats.beta_binomial import (
    EXACT_GROUP_MAX,
    beta_binomial_contrast,
    beta_binomial_loglik,
    beta_binomial_posterior,
    beta_binomial_profile,
    beta_binomial_theta,
    bhattacharyya,
    gamma_bar_draws,
    hdi_rows,
)

_REF = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "statistics-cases.json"


def _cases() -> dict[str, dict]:
    # the repository's copy first (tests/stats/data), so the reference test never depends on a folder outside it
    for path in (Path(__file__).resolve().parent / "data" / "statistics-cases.json", _REF):
        if path.exists():
            return {c["id"]: c for c in json.loads(path.read_text())}
    pytest.skip("reference cases (shared/reference/statistics-cases.json) not available")
    return {}


@pytest.fixture(scope="module")
def rat() -> tuple[np.ndarray, np.ndarray, dict]:
    cases = _cases()
    case = cases["betabinom-rat-maxloglik"]
    return np.array(case["inputs"]["y"]), np.array(case["inputs"]["n"]), cases


def _sim(n: int, trials: int, mu: float, kappa: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.beta(mu * kappa, (1 - mu) * kappa, size=n)
    return rng.binomial(trials, theta), np.full(n, trials)


# --------------------------------------------------------------------------- reference
def test_rat_loglik_and_mle(rat):
    """Marginal ML (alpha, beta) of the 70 historical rat experiments (BDA3 Sec. 5.1)."""
    y, n, cases = rat
    mle = cases["betabinom-rat-mle"]
    best = cases["betabinom-rat-maxloglik"]

    def nll(x):
        return -float(beta_binomial_loglik(y, n, math.exp(x[0]), math.exp(x[1])))

    res = optimize.minimize(nll, np.log([1.0, 5.0]), method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 5000})
    alpha, beta = np.exp(res.x)
    assert abs(-res.fun - best["expected"]) < best["tolerance"]  # -154.140249665, tol 1e-6
    assert abs(alpha - mle["expected"][0]) < mle["tolerance"]  # 2.304768, tol 1e-3
    assert abs(beta - mle["expected"][1]) < mle["tolerance"] * 2  # flat along alpha+beta (see the case's notes)
    # the kernel itself equals the per-question scipy log-pmf at the published point
    direct = sps.betabinom.logpmf(y, n, *mle["expected"]).sum()
    assert float(beta_binomial_loglik(y, n, *mle["expected"])) == pytest.approx(direct, abs=1e-9)


def test_rat_theta71_method_of_moments(rat):
    """BDA3 Sec. 5.1: with the method-of-moments prior, theta_71 | y=4, n=14 has mean 0.223, sd 0.083."""
    y, n, cases = rat
    mom = cases["betabinom-rat-mom"]
    post = cases["betabinom-rat-post71"]
    p = y / n
    m, s = p.mean(), p.std(ddof=1)
    assert m == pytest.approx(mom["expected"]["mean"], abs=5e-4)
    assert s == pytest.approx(mom["expected"]["sd"], abs=5e-4)
    common = m * (1 - m) / s**2 - 1
    alpha, beta = m * common, (1 - m) * common
    res = beta_binomial_theta([4], [14], alpha, beta)
    assert res["mean"][0] == pytest.approx(post["expected"][0], abs=post["tolerance"])
    assert res["sd"][0] == pytest.approx(post["expected"][1], abs=post["tolerance"])
    ref = hdi(sps.beta(alpha + 4, beta + 10).rvs(400_000, random_state=1))
    assert res["low"][0] == pytest.approx(ref.low, abs=2e-3)
    assert res["high"][0] == pytest.approx(ref.high, abs=2e-3)


def _brute_force(y, n, size=700):
    """Independent quadrature: uniform grid in (mu, log kappa), likelihood per question via scipy."""
    mu = (np.arange(size) + 0.5) / size
    lk = np.linspace(-6.0, 9.0, size)
    M, L = np.meshgrid(mu, lk, indexing="ij")
    K = np.exp(L)
    A, B = M * K, (1 - M) * K
    ll = np.zeros_like(M)
    for yi, ni in zip(y, n, strict=True):
        ll += sps.betabinom.logpmf(yi, ni, A, B)
    lp = ll + sps.norm.logpdf(L, 0, 1.5)  # mu ~ Beta(1, 1) has density 1; dmu dlogk measure
    w = np.exp(lp - lp.max())
    w /= w.sum()
    mean_mu = float((w * M).sum())
    mean_k = float((w * K).sum())
    sd_mu = math.sqrt(float((w * (M - mean_mu) ** 2).sum()))
    sd_k = math.sqrt(float((w * (K - mean_k) ** 2).sum()))
    var = M * (1 - M) / (K + 1)
    mean_var = float((w * var).sum())
    return mean_mu, sd_mu, mean_k, sd_k, mean_var


def test_grid_matches_independent_quadrature_on_rat_data(rat):
    y, n, _ = rat
    post = beta_binomial_posterior(y, n, seed=1)
    mean_mu, sd_mu, mean_k, sd_k, mean_var = _brute_force(y, n)
    # quadrature means: both are deterministic, so agreement is to quadrature accuracy
    assert post.mu.mean == pytest.approx(mean_mu, abs=0.01 * sd_mu)
    assert post.kappa.mean == pytest.approx(mean_k, abs=0.01 * sd_k)
    assert post.variance.mean == pytest.approx(mean_var, rel=2e-3)
    # sds from draws: Monte Carlo error about 1 % at 20,000 draws
    assert post.mu.sd == pytest.approx(sd_mu, rel=0.03)
    assert post.kappa.sd == pytest.approx(sd_k, rel=0.03)
    # the weakly informative prior leaves the posterior near the marginal MLE (mu 0.1407)
    assert post.mu.low < 0.1407 < post.mu.high
    assert all(d.ok for d in post.diagnostics)


# --------------------------------------------------------------------------- gamma-bar
def test_grouped_gamma_bar_matches_plain_per_question_draws():
    """Grouping questions by (y, J) (exact draws up to EXACT_GROUP_MAX, a moment-matched Beta on
    the group sum's range beyond) gives the same distribution of gamma-bar as drawing every question."""
    rng = np.random.default_rng(5)
    # groups of sizes 1..40 so both branches are used; varying J
    y = np.concatenate([np.full(40, 18), np.full(12, 3), np.full(3, 9), [0, 1, 20, 10], np.full(25, 20)])
    j = np.concatenate([np.full(40, 20), np.full(12, 20), np.full(3, 12), [5, 8, 20, 30], np.full(25, 20)])
    assert max(np.unique(np.stack([y, j], 1), axis=0, return_counts=True)[1]) > EXACT_GROUP_MAX
    S = 40_000
    alpha = np.exp(rng.normal(0.5, 0.2, S))
    beta = np.exp(rng.normal(-0.5, 0.2, S))
    g1, th1, inv1 = gamma_bar_draws(alpha, beta, y, j, np.random.default_rng(1), exact_max=EXACT_GROUP_MAX)
    g2, th2, inv2 = gamma_bar_draws(alpha, beta, y, j, np.random.default_rng(2), grouped=False)
    se = g2.std() / math.sqrt(S)
    assert abs(g1.mean() - g2.mean()) < 5 * se * math.sqrt(2)
    assert g1.std() == pytest.approx(g2.std(), rel=0.03)
    for q in (0.025, 0.5, 0.975):
        assert np.quantile(g1, q) == pytest.approx(np.quantile(g2, q), abs=0.05 * g2.std())
    assert sps.ks_2samp(g1, g2).pvalue > 1e-3
    # theta draws per distinct pair: same distribution either way
    np.testing.assert_array_equal(inv1, inv2)
    assert np.abs(th1.mean(0) - th2.mean(0)).max() < 0.01
    # exact conditional mean: E[J theta (1 - theta)] for Beta(a, b) is J a b / ((a+b)(a+b+1))
    a = alpha[:, None] + y[None, :]
    b = beta[:, None] + (j - y)[None, :]
    exact = (j[None, :] * a * b / ((a + b) * (a + b + 1))).mean(1).mean()
    assert g1.mean() == pytest.approx(exact, abs=5 * se)


def test_gamma_bar_stays_in_range_near_zero_spread():
    """Issue 18, finding 11: mu 0.93, kappa 0.05, 100 questions x 100 trials (nearly every question
    always right or always wrong) gave a gamma-bar HDI of -0.0066 to 0.0145. gamma-bar is a mean of
    J theta (1 - theta) >= 0: the summed group draws were normal. Exact draws and the Beta on the
    group sum's range both stay in [0, max J / 4], and the range-respecting approximation matches
    the per-question draws on this skewed case."""
    y = np.array([100] * 93 + [0] * 7)
    j = np.full(100, 100)
    post = beta_binomial_posterior(y, j, seed=0)
    assert 0.0 <= post.gamma_bar.low <= post.gamma_bar.mean <= post.gamma_bar.high <= 25.0
    assert post.draws["gamma_bar"].min() >= 0.0
    rng = np.random.default_rng(3)
    S = 20_000
    alpha = np.exp(rng.normal(math.log(0.93 * 0.05), 0.3, S))
    beta = np.exp(rng.normal(math.log(0.07 * 0.05), 0.3, S))
    g1, _, _ = gamma_bar_draws(alpha, beta, y, j, np.random.default_rng(1), exact_max=EXACT_GROUP_MAX)
    g2, _, _ = gamma_bar_draws(alpha, beta, y, j, np.random.default_rng(2), grouped=False)
    assert g1.min() >= 0.0 and g2.min() >= 0.0 and g1.max() <= 25.0
    # the normal it replaces: mean - 1.96 sd is below zero here
    assert g2.mean() - 1.96 * g2.std() < 0.0
    assert g1.mean() == pytest.approx(g2.mean(), rel=0.05)
    assert g1.std() == pytest.approx(g2.std(), rel=0.08)
    assert np.quantile(g1, 0.975) == pytest.approx(np.quantile(g2, 0.975), rel=0.15)


@settings(max_examples=14, deadline=None, derandomize=True, database=None)
@given(st.floats(0.02, 0.98), st.floats(0.03, 50.0), st.integers(3, 60), st.integers(1, 100), st.integers(0, 99))
def test_every_interval_lies_in_its_parameters_range(mu, kappa, n_q, trials, seed):
    """mu, theta in [0, 1]; kappa > 0; the Beta variance in [0, 1/4]; gamma-bar in [0, max J / 4]:
    every mean and HDI of the profile lies in its parameter's range, over mu and kappa
    (including the near-zero spread of finding 11)."""
    y, j = _sim(n_q, trials, mu, kappa, seed)
    post = beta_binomial_posterior(y, j, seed=seed, draws=3000)
    top = float(j.max()) / 4.0
    for s, lo, hi in ((post.mu, 0.0, 1.0), (post.variance, 0.0, 0.25), (post.gamma_bar, 0.0, top)):
        assert lo <= s.low <= s.high <= hi and lo <= s.mean <= hi
    assert 0.0 < post.kappa.low <= post.kappa.high
    assert np.all((post.theta.low >= 0.0) & (post.theta.high <= 1.0) & (post.theta.low <= post.theta.high))
    assert post.draws["gamma_bar"].min() >= 0.0 and post.draws["gamma_bar"].max() <= top


def test_gamma_bar_draw_level_interval_is_wider_than_closed_form():
    """The paper's draw-level gamma-bar: averaging E[theta(1-theta)] instead gives the same mean
    and a much narrower interval (the issue: about ten times narrower than the published ones)."""
    y, j = _sim(100, 100, 0.8, 0.5, seed=3)
    post = beta_binomial_posterior(y, j, seed=2)
    mu, kappa = post.draws["mu"], post.draws["kappa"]
    a = mu[:, None] * kappa[:, None] + y[None, :]
    b = (1 - mu)[:, None] * kappa[:, None] + (j - y)[None, :]
    closed = (j[None, :] * a * b / ((a + b) * (a + b + 1))).mean(1)
    assert post.gamma_bar.mean == pytest.approx(closed.mean(), rel=0.01)
    lo, hi = hdi_rows(closed[None, :], 0.95)
    assert (post.gamma_bar.high - post.gamma_bar.low) > 4 * (hi[0] - lo[0])


# --------------------------------------------------------------------------- invariants
def test_hdi_rows_matches_sample_hdi():
    rng = np.random.default_rng(0)
    x = rng.gamma(2.0, size=(5, 3001))
    lo, hi = hdi_rows(x, 0.9)
    for r in range(5):
        ref = hdi(x[r], 0.9)
        assert (lo[r], hi[r]) == (ref.low, ref.high)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(1, 12)), min_size=2, max_size=15), st.randoms())
def test_permutation_and_label_symmetry(pairs, rnd):
    y = np.array([min(a, b) for a, b in pairs])
    j = np.array([b for _, b in pairs])
    order = np.array(rnd.sample(range(len(pairs)), len(pairs)))
    p1 = beta_binomial_posterior(y, j, seed=4, draws=2000)
    p2 = beta_binomial_posterior(y[order], j[order], seed=4, draws=2000)
    # questions enter through the distinct (y, J) pairs only: same summaries, theta follows its question
    assert p1.mu == p2.mu and p1.kappa == p2.kappa and p1.gamma_bar == p2.gamma_bar
    np.testing.assert_array_equal(p1.theta.mean[order], p2.theta.mean)
    # swapping right and wrong mirrors mu and theta, leaves kappa and gamma-bar
    p3 = beta_binomial_posterior(j - y, j, seed=4, draws=2000)
    assert p3.mu.mean == pytest.approx(1 - p1.mu.mean, abs=2e-3 * max(p1.mu.sd, 1e-3) + 1e-4)
    assert p3.kappa.mean == pytest.approx(p1.kappa.mean, rel=2e-3)
    assert p3.gamma_bar.mean == pytest.approx(p1.gamma_bar.mean, rel=2e-3)
    np.testing.assert_allclose(p3.theta.mean, 1 - p1.theta.mean, atol=2e-3)
    for s in (p1.mu, p1.kappa, p1.gamma_bar, p1.variance):
        assert s.low <= s.mean <= s.high or s.high - s.low < 1e-9
    assert np.all((p1.theta.low <= p1.theta.mean + 1e-12) & (p1.theta.mean <= p1.theta.high + 1e-12))


def test_seeded_runs_repeat_exactly():
    y, j = _sim(40, 10, 0.7, 3.0, seed=1)
    a = beta_binomial_posterior(y, j, seed=9)
    b = beta_binomial_posterior(y, j, seed=9)
    assert a.mu == b.mu and a.gamma_bar == b.gamma_bar
    np.testing.assert_array_equal(a.theta.low, b.theta.low)


def test_varying_trials_use_the_right_likelihood():
    rng = np.random.default_rng(3)
    j = rng.integers(1, 60, size=80)
    y = rng.binomial(j, rng.beta(2, 3, size=80))
    a = np.array([0.5, 2.0, 40.0])
    b = np.array([0.8, 3.0, 10.0])
    ref = [sps.betabinom.logpmf(y, j, aa, bb).sum() for aa, bb in zip(a, b, strict=True)]
    np.testing.assert_allclose(beta_binomial_loglik(y, j, a, b), ref, rtol=1e-12, atol=1e-9)
    post = beta_binomial_posterior(y, j, seed=1)
    assert post.mu.low < 0.4 < post.mu.high and post.ok
    assert post.n_trials == int(j.sum())


def test_ppc_flags_underdispersed_data_and_passes_model_data():
    y, j = _sim(100, 30, 0.6, 3.0, seed=11)
    good = beta_binomial_posterior(y, j, seed=1)
    assert good.ppc.p_min > 0.01
    # every question exactly half right: far less spread than any Beta-Binomial predicts
    bad = beta_binomial_posterior(np.full(100, 15), np.full(100, 30), seed=1)
    sd_stat = {s.name: s for s in bad.ppc.statistics}["sd of proportions"]
    assert sd_stat.observed == 0.0 and sd_stat.p_value < 0.05


def test_contrast_identical_and_separated_conditions():
    y, j = _sim(60, 20, 0.7, 4.0, seed=2)
    prof = beta_binomial_profile({"a": (y, j), "b": (y, j)}, seed=3)
    c = prof.contrasts[0]
    for p in ("mu", "kappa", "gamma_bar", "variance"):
        assert not c.differences[p].excludes_zero
        assert 0.3 < c.differences[p].p_greater < 0.7
        assert c.bhattacharyya_coefficient[p] > 0.97
        assert c.bhattacharyya_distance[p] == pytest.approx(math.sqrt(1 - c.bhattacharyya_coefficient[p]))
    y2, j2 = _sim(60, 20, 0.3, 4.0, seed=4)
    prof2 = beta_binomial_profile({"a": (y, j), "b": (y2, j2)}, seed=3)
    d = prof2.contrasts[0].differences["mu"]
    assert d.excludes_zero and d.low > 0 and d.p_greater > 0.999
    assert prof2.contrasts[0].bhattacharyya_distance["mu"] > 0.95
    again = beta_binomial_contrast(prof2.conditions["a"], prof2.conditions["b"], first_name="a", second_name="b")
    assert again.differences["mu"] == d


def test_bhattacharyya_of_two_normals():
    """BC of N(0,1) and N(d,1) is exp(-d^2/8)."""
    rng = np.random.default_rng(0)
    for d in (0.5, 1.0, 2.0):
        bc = bhattacharyya(rng.normal(0, 1, 200_000), rng.normal(d, 1, 200_000))
        assert bc == pytest.approx(math.exp(-d * d / 8), abs=0.01)


# --------------------------------------------------------------------------- edge cases
def test_all_right_all_wrong_one_question():
    right = beta_binomial_posterior([10] * 20, [10] * 20, seed=1)
    assert right.mu.low > 0.8 and right.mu.high > 0.99 and any("every trial" in n for n in right.notes)
    assert right.ok
    wrong = beta_binomial_posterior([0] * 20, [10] * 20, seed=1)
    assert wrong.mu.high < 0.2 and wrong.mu.mean == pytest.approx(1 - right.mu.mean, abs=1e-3)
    one = beta_binomial_posterior([3], [10], seed=1)
    assert any("only one question" in n for n in one.notes)
    # kappa is barely learned from one question: its HDI spans most of the prior's central
    # 95 % (exp(+-1.96 * 1.5), a ratio of about 360)
    assert one.kappa.high / one.kappa.low > 50
    many = beta_binomial_posterior([3] * 50, [10] * 50, seed=1)
    assert many.kappa.high / many.kappa.low < one.kappa.high / one.kappa.low / 5


@pytest.mark.parametrize(
    ("successes", "trials", "message"),
    [
        ([1, 2], [3, float("nan")], "missing (NaN)"),
        ([], [], "no questions"),
        ([4], [3], "4 successes out of 3"),
        ([1, 0], [2, 0], "has no trials"),
        ([1.5], [3], "whole numbers"),
        ([1, 2], [3], "one entry per question"),
    ],
)
def test_bad_counts_have_clear_messages(successes, trials, message):
    with pytest.raises(InvalidArgument, match=message.replace("(", r"\(").replace(")", r"\)")):
        beta_binomial_posterior(successes, trials)


def test_bad_options():
    with pytest.raises(InvalidArgument, match="engine"):
        beta_binomial_posterior([1], [2], engine="hmc")
    with pytest.raises(InvalidArgument, match="no data"):
        beta_binomial_profile({"a": ([1], [2])}, contrasts=[("a", "b")])
    with pytest.raises(InvalidArgument, match="no questions"):
        beta_binomial_profile({"a": ([1], [2]), "b": ([], [])})


def test_large_question_counts_cost_the_same_shape():
    """One million questions enter through about a hundred distinct (y, J) pairs."""
    y, j = _sim(1_000_000, 100, 0.85, 0.6, seed=0)
    post = beta_binomial_posterior(y, j, seed=1, draws=4000)
    assert post.n_questions == 1_000_000 and post.theta.mean.shape == (1_000_000,)
    assert post.mu.low < 0.85 < post.mu.high
    assert post.kappa.low < 0.6 < post.kappa.high
    assert post.ok


def test_special_functions_sanity():
    # the identity behind the grouped likelihood: lnGamma(x+u) - lnGamma(x) = sum ln(x+t)
    x = np.array([0.01, 1.3, 250.0])
    for u in (1, 7, 100):
        direct = special.gammaln(x + u) - special.gammaln(x)
        summed = np.log(x[:, None] + np.arange(u)[None, :]).sum(1)
        np.testing.assert_allclose(direct, summed, rtol=1e-10)
