"""PPI++ (evalspec.stats.ppi) against the papers' formulas, the authors' ppi_py and simulated coverage.

Reference formulas (written here independently of the kernel):
Angelopoulos, Bates, Fannjiang, Jordan, Zrnic (2023), "Prediction-powered inference", Science:
``theta_PP = mean_U(f) - mean_L(f - y)``, variance ``var_U(f)/N + var_L(f - y)/n``;
Angelopoulos, Duchi, Zrnic (2023), "PPI++": ``theta_lambda = lambda mean_U(f) + mean_L(y - lambda f)``,
``lambda_hat = cov_L(y, f) / ((1 + n/N) var(f))`` clipped to [0, 1].
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.stats.ppi import labelled_balance, ppi_mean_interval

REF = json.loads((Path(__file__).parent / "data" / "ppi_py_reference.json").read_text())


def reference(y: np.ndarray, f: np.ndarray, f_u: np.ndarray, lam: float, z: float = 1.959963984540054):
    n, N = y.size, f_u.size
    est = lam * f_u.mean() + (y - lam * f).mean()
    var = lam**2 * f_u.var() / N + (y - lam * f).var() / n
    return est, est - z * math.sqrt(var), est + z * math.sqrt(var)


def data(seed: int, n: int, N: int, acc: float):
    rng = np.random.default_rng(seed)
    y = rng.binomial(1, 0.55, n + N).astype(float)
    f = np.where(rng.random(n + N) < acc, y, 1 - y)
    lab = np.zeros(n + N, dtype=bool)
    lab[:n] = True
    return y, f, lab


@pytest.mark.parametrize("key", sorted(REF))
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_fixed_lambda_matches_paper_formula_and_ppi_py(key: str, lam: float) -> None:
    seed, n, N, acc = key.split("-")
    y, f, lab = data(int(seed), int(n), int(N), float(acc))
    r = ppi_mean_interval(np.where(lab, y, np.nan), f, lab, lam=lam, correction="CR0", distribution="normal")
    est, lo, hi = reference(y[lab], f[lab], f[~lab], lam)
    assert (r.estimate, r.low, r.high) == pytest.approx((est, lo, hi), abs=1e-12)
    # numbers printed by ppi_py 0.2.3 (ppi_mean_ci, ppi_mean_pointestimate) on the same data
    assert (r.estimate, r.low, r.high) == pytest.approx(REF[key][str(lam)], abs=1e-9)


@pytest.mark.parametrize("key", sorted(REF))
def test_tuned_lambda_close_to_ppi_plus_plus(key: str) -> None:
    seed, n, N, acc = key.split("-")
    y, f, lab = data(int(seed), int(n), int(N), float(acc))
    r = ppi_mean_interval(np.where(lab, y, np.nan), f, lab, correction="CR0", distribution="normal")
    yl, fl = y[lab], f[lab]
    paper = np.cov(yl, fl, bias=True)[0, 1] / ((1 + lab.sum() / (~lab).sum()) * f.var(ddof=1))
    assert r.lam == pytest.approx(min(1.0, max(0.0, paper)), abs=0.02)
    est, lo, hi = REF[key]["None"]
    assert r.estimate == pytest.approx(est, abs=2e-3)
    assert (r.high - r.low) == pytest.approx(hi - lo, rel=0.02)
    assert r.high - r.low <= (r.classical_high - r.classical_low) + 1e-12  # tuning never costs width


def test_live_ppi_py_when_installed() -> None:
    ppi = pytest.importorskip("ppi_py")
    y, f, lab = data(5, 120, 1000, 0.85)
    lo, hi = ppi.ppi_mean_ci(y[lab], f[lab], f[~lab], alpha=0.1, lam=0.7)
    r = ppi_mean_interval(np.where(lab, y, np.nan), f, lab, lam=0.7, correction="CR0", distribution="normal",
                          confidence_level=0.9)
    assert (r.low, r.high) == pytest.approx((float(np.ravel(lo)[0]), float(np.ravel(hi)[0])), abs=1e-9)


def test_clusters_one_case_each_equals_no_clusters() -> None:
    y, f, lab = data(2, 80, 400, 0.8)
    a = ppi_mean_interval(np.where(lab, y, np.nan), f, lab)
    b = ppi_mean_interval(np.where(lab, y, np.nan), f, lab, clusters=np.arange(y.size))
    assert a == b


def test_stratified_is_weighted_sum_of_strata() -> None:
    y, f, lab = data(4, 100, 500, 0.8)
    strata = np.arange(y.size) % 3
    r = ppi_mean_interval(np.where(lab, y, np.nan), f, lab, strata=strata, lam=0.6, correction="CR0",
                          distribution="normal")
    parts = []
    for h in range(3):
        m = strata == h
        e, lo, hi = reference(y[m & lab], f[m & lab], f[m & ~lab], 0.6)
        parts.append((m.mean(), e, ((hi - lo) / (2 * 1.959963984540054)) ** 2))
    assert r.estimate == pytest.approx(sum(w * e for w, e, _ in parts), abs=1e-12)
    assert r.se == pytest.approx(math.sqrt(sum(w * w * v for w, _, v in parts)), abs=1e-12)


def test_stratum_without_labels_is_refused() -> None:
    y, f, lab = data(4, 10, 50, 0.8)
    strata = np.where(lab, 0, 1)
    with pytest.raises(ValueError, match="stratum has no labelled case"):
        ppi_mean_interval(np.where(lab, y, np.nan), f, lab, strata=strata)


@settings(derandomize=True, database=None, max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_invariants(seed: int, lam: float) -> None:
    rng = np.random.default_rng(seed)
    n_all = int(rng.integers(6, 60))
    y = rng.binomial(1, 0.5, n_all).astype(float)
    f = rng.binomial(1, 0.5, n_all).astype(float)
    lab = np.zeros(n_all, dtype=bool)
    lab[rng.choice(n_all, size=max(2, n_all // 3), replace=False)] = True
    cl = rng.integers(0, max(2, n_all // 3), n_all)
    r = ppi_mean_interval(np.where(lab, y, np.nan), f, lab, clusters=cl, lam=lam, bounds=(0.0, 1.0))
    assert 0 <= r.low <= r.high <= 1 or math.isinf(r.se)
    # the same data with the judge labels shifted by a constant on every case: same estimate
    r2 = ppi_mean_interval(np.where(lab, y, np.nan), f + 0.3, lab, clusters=cl, lam=lam)
    assert r2.estimate == pytest.approx(r.estimate, abs=1e-12)
    tuned = ppi_mean_interval(np.where(lab, y, np.nan), f, lab, clusters=cl)
    assert 0.0 <= tuned.lam <= 1.0
    if 0.0 < tuned.lam < 1.0:  # an interior tuned lambda minimises the estimated variance
        assert tuned.se <= r.se + 1e-12


def test_balance_detects_a_chosen_subset() -> None:
    rng = np.random.default_rng(0)
    f = rng.binomial(1, 0.5, 1000).astype(float)
    random_lab = rng.random(1000) < 0.2
    assert labelled_balance(f, random_lab).pvalue > 0.01
    chosen = (f == 1) & (rng.random(1000) < 0.4)  # someone labelled the judge's passes
    assert labelled_balance(f, chosen).pvalue < 1e-6


def _simulate_biased_judge(reps: int, seed: int) -> tuple[float, float]:
    """Coverage of the A - B human-label difference: judge lenient on A's failures only."""
    rng = np.random.default_rng(seed)
    n_cases, n_lab, g_size = 600, 120, 4
    hits_naive = hits_ppi = 0
    for _ in range(reps):
        clusters = np.repeat(np.arange(n_cases // g_size), g_size)
        shift = rng.normal(0, 0.6, n_cases // g_size)[clusters]
        p = 1 / (1 + np.exp(-(0.4 + shift)))
        ya = (rng.random(n_cases) < p).astype(float)
        yb = (rng.random(n_cases) < p).astype(float)  # same true pass rate: true difference 0
        fa = np.where(ya == 1, (rng.random(n_cases) < 0.95), rng.random(n_cases) < 0.35).astype(float)
        fb = np.where(yb == 1, (rng.random(n_cases) < 0.95), rng.random(n_cases) < 0.05).astype(float)
        lab = np.zeros(n_cases, dtype=bool)
        lab[rng.choice(n_cases, n_lab, replace=False)] = True
        d_f = fa - fb
        r = ppi_mean_interval(np.where(lab, ya - yb, np.nan), d_f, lab, clusters=clusters)
        hits_ppi += r.low <= 0.0 <= r.high
        se = math.sqrt(np.sum((np.bincount(clusters, d_f) - g_size * d_f.mean()) ** 2)) / n_cases
        hits_naive += abs(d_f.mean()) <= 1.96 * se
    return hits_naive / reps, hits_ppi / reps


def test_biased_judge_coverage() -> None:
    naive, ppi = _simulate_biased_judge(reps=400, seed=11)
    assert naive < 0.2  # the judge-only interval is centred on the judge's bias
    assert ppi >= 0.93  # 400 replications: 0.95 - 2 * 0.011
