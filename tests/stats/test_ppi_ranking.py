"""PPI++ with several judge columns, the cluster bootstrap of PPI++, and ranks of judge-corrected pass rates.

References written here, independently of the kernels: resampled estimates by building the
resampled data set (each drawn copy of a cluster its own cluster) and calling the plain
estimator; the bootstrap-t critical value of the corrected ranking over *every* resample of 4
clusters (all 4^4 ordered draws, by loops); the numbers of the authors' ``ppi_py`` 0.2.3 for a
two-dimensional mean (per-coordinate lambda, ``lam_optim_mode="element"``), made by
``data/ppi_py_element_reference.py``.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.stats.ppi import cluster_totals, ppi_bootstrap_interval, ppi_mean_interval, resampled
from evalspec.stats.ranking import ppi_max_t_critical, ppi_rank_intervals, rank_intervals

ELEMENT = json.loads((Path(__file__).parent / "data" / "ppi_py_element_reference.json").read_text())


def two_candidates(seed: int = 42, n: int = 150, N: int = 1200):
    rng = np.random.default_rng(seed)
    y = rng.binomial(1, [0.55, 0.7], (n + N, 2)).astype(float)
    f = np.where(rng.random((n + N, 2)) < [0.85, 0.75], y, 1 - y)
    lab = np.zeros(n + N, dtype=bool)
    lab[:n] = True
    return y, f, lab


@pytest.mark.parametrize("j", [0, 1])
def test_each_candidates_lambda_matches_ppi_py_element_mode(j: int) -> None:
    y, f, lab = two_candidates()
    fixed = ppi_mean_interval(np.where(lab, y[:, j], np.nan), f[:, j], lab, lam=[0.3, 0.8][j], correction="CR0",
                              distribution="normal")
    ref = ELEMENT["[0.3, 0.8]"]
    assert (fixed.estimate, fixed.low, fixed.high) == pytest.approx(
        (ref["est"][j], ref["low"][j], ref["high"][j]), abs=1e-12)
    tuned = ppi_mean_interval(np.where(lab, y[:, j], np.nan), f[:, j], lab, correction="CR0", distribution="normal")
    ref = ELEMENT["None"]
    assert (tuned.estimate, tuned.low, tuned.high) == pytest.approx(
        (ref["est"][j], ref["low"][j], ref["high"][j]), abs=1e-3)


def test_two_lambdas_for_a_difference() -> None:
    y, f, lab = two_candidates()
    d = np.where(lab, y[:, 0] - y[:, 1], np.nan)
    # fixed 2-vector: exactly the difference of the two candidates' own estimates
    a = ppi_mean_interval(np.where(lab, y[:, 0], np.nan), f[:, 0], lab, lam=0.3)
    b = ppi_mean_interval(np.where(lab, y[:, 1], np.nan), f[:, 1], lab, lam=0.8)
    v = ppi_mean_interval(d, np.stack([f[:, 0], -f[:, 1]], axis=1), lab, lam=[0.3, 0.8])
    assert v.estimate == pytest.approx(a.estimate - b.estimate, abs=1e-12)
    assert v.lams == (0.3, 0.8)
    # one lambda for the difference: ppi_py's scalar PPI++ on y_A - y_B, f_A - f_B
    one = ppi_mean_interval(d, f[:, 0] - f[:, 1], lab, correction="CR0", distribution="normal")
    assert (one.low, one.high) == pytest.approx((ELEMENT["diff_tuned"]["low"], ELEMENT["diff_tuned"]["high"]),
                                                abs=3e-3)
    # tuned jointly, the 2-vector can only narrow the interval (one lambda is a point of its box)
    joint = ppi_mean_interval(d, np.stack([f[:, 0], -f[:, 1]], axis=1), lab)
    assert joint.se <= ppi_mean_interval(d, f[:, 0] - f[:, 1], lab).se + 1e-12
    assert all(0.0 <= x <= 1.0 for x in joint.lams)


def clustered(seed: int, clusters: int = 30, size: int = 4, share: float = 0.3, k: int = 1):
    rng = np.random.default_rng(seed)
    cl = np.repeat(np.arange(clusters), size)
    n = cl.size
    p = np.clip(0.6 + rng.normal(0, 0.15, clusters)[cl][:, None] + np.linspace(-0.1, 0.1, k)[None, :], 0.02, 0.98)
    y = (rng.random((n, k)) < p).astype(float)
    f = np.where(y == 1, 1.0, (rng.random((n, k)) < np.linspace(0.4, 0.05, k)).astype(float))
    lab = rng.random(n) < share
    lab[::size] = True  # every cluster holds a labelled case ...
    lab[1::size] = False  # ... and an unlabelled one
    return cl, y, f, lab


def duplicated(cl: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the resampled data set and their cluster ids (each drawn copy a cluster of its own)."""
    rows, ids = [], []
    for g, c in enumerate(counts.astype(int)):
        for copy in range(c):
            members = np.flatnonzero(cl == g)
            rows.append(members)
            ids.append(np.full(members.size, g * 1000 + copy))
    return np.concatenate(rows), np.concatenate(ids)


def test_resampled_estimates_equal_the_estimator_on_the_resampled_data() -> None:
    cl, y, f, lab = clustered(3)
    strata = (np.arange(cl.size) % 2).astype(int)
    y1, f1 = np.where(lab, y[:, 0], np.nan), f[:, 0]
    T = cluster_totals(np.nan_to_num(y1), f1, lab, cl, strata, 30)
    W = np.random.default_rng(0).multinomial(30, np.full(30, 1 / 30), size=6).astype(float)
    est, lam, psi = resampled(T, W, None)
    for b in range(W.shape[0]):
        rows, ids = duplicated(cl, W[b])
        r = ppi_mean_interval(y1[rows], f1[rows], lab[rows], clusters=ids, strata=strata[rows], correction="CR0")
        assert (est[b], lam[b]) == pytest.approx((r.estimate, r.lam), abs=1e-12)
        assert math.sqrt(float(W[b] @ psi[b] ** 2)) == pytest.approx(r.se, abs=1e-12)


def test_bootstrap_interval_is_near_the_cluster_robust_one() -> None:
    cl, y, f, lab = clustered(4, clusters=80)
    y1 = np.where(lab, y[:, 0], np.nan)
    robust = ppi_mean_interval(y1, f[:, 0], lab, clusters=cl)
    boot = ppi_bootstrap_interval(y1, f[:, 0], lab, clusters=cl, resamples=2000, seed=1)
    assert boot.estimate == robust.estimate and boot.used == 2000
    assert boot.low < robust.estimate < boot.high
    assert (boot.high - boot.low) == pytest.approx(robust.high - robust.low, rel=0.2)
    again = ppi_bootstrap_interval(y1, f[:, 0], lab, clusters=cl, resamples=2000, seed=1)
    assert (again.low, again.high) == (boot.low, boot.high)


def test_corrected_rank_pairs_use_each_candidates_lambda() -> None:
    cl, y, f, lab = clustered(5, clusters=40, k=3)
    h = np.where(lab[:, None], y, np.nan)
    r = ppi_rank_intervals(h, f, lab, cl, resamples=500, seed=2)
    lams = r.extra["lams"]
    for j in range(3):
        own = ppi_mean_interval(h[:, j], f[:, j], lab, clusters=cl)
        assert r.estimates[j] == pytest.approx(own.estimate, abs=1e-12) and lams[j] == pytest.approx(own.lam)
    for j, k in itertools.combinations(range(3), 2):
        pair = ppi_mean_interval(h[:, j] - h[:, k], np.stack([f[:, j], -f[:, k]], axis=1), lab, clusters=cl,
                                 lam=[lams[j], lams[k]])
        assert r.diff[j, k] == pytest.approx(pair.estimate, abs=1e-12)
        assert r.se[j, k] == pytest.approx(pair.se, abs=1e-12)
        assert r.low[j, k] == pytest.approx(pair.estimate - r.critical * pair.se / math.sqrt(
            r.extra["labelled_units"] / (r.extra["labelled_units"] - 1)), abs=1e-12)


def test_corrected_rank_critical_value_equals_an_exhaustive_bootstrap() -> None:
    cl, y, f, lab = clustered(6, clusters=4, size=5, k=3)
    h = np.where(lab[:, None], y, np.nan)
    lams = np.array([ppi_mean_interval(h[:, j], f[:, j], lab, clusters=cl).lam for j in range(3)])
    base = [ppi_mean_interval(h[:, j], f[:, j], lab, clusters=cl, lam=lams[j]).estimate for j in range(3)]
    draws = list(itertools.product(range(4), repeat=4))  # every ordered draw of 4 clusters
    tmax = []
    for draw in draws:
        counts = np.bincount(draw, minlength=4)
        rows, ids = duplicated(cl, counts)
        est = [ppi_mean_interval(h[rows, j], f[rows, j], lab[rows], clusters=ids, lam=lams[j]).estimate
               for j in range(3)]
        worst = 0.0
        for j, k in itertools.combinations(range(3), 2):
            pr = ppi_mean_interval(h[rows, j] - h[rows, k], np.stack([f[rows, j], -f[rows, k]], axis=1), lab[rows],
                                   clusters=ids, lam=[lams[j], lams[k]], correction="CR0")
            dev = abs((est[j] - est[k]) - (base[j] - base[k]))
            worst = max(worst, dev / pr.se if pr.se > 1e-15 else (math.inf if dev > 1e-15 else 0.0))
        tmax.append(worst)
    expected = float(np.quantile(tmax, 0.9, method="higher"))
    totals = [cluster_totals(np.nan_to_num(h[:, j]), f[:, j], lab, cl, np.zeros(cl.size, dtype=int), 4)
              for j in range(3)]
    weights = np.array([np.bincount(d, minlength=4) for d in draws], dtype=float)
    assert ppi_max_t_critical(totals, lams, weights, 0.9) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), k=st.integers(3, 5))
def test_corrected_rank_invariants(seed: int, k: int) -> None:
    cl, y, f, lab = clustered(seed, clusters=20, k=k)
    h = np.where(lab[:, None], y, np.nan)
    r = ppi_rank_intervals(h, f, lab, cl, resamples=200, seed=seed)
    point = 1 + (r.estimates[None, :] > r.estimates[:, None]).sum(axis=1)
    assert np.all((r.rank_low <= point) & (point <= r.rank_high))
    assert np.allclose(r.diff, -r.diff.T) and np.allclose(r.low, -r.high.T)
    perm = np.random.default_rng(seed).permutation(k)
    q = ppi_rank_intervals(h[:, perm], f[:, perm], lab, cl, resamples=200, seed=seed)
    assert np.allclose(q.estimates, r.estimates[perm]) and q.critical == pytest.approx(r.critical)
    assert np.array_equal(q.rank_low, r.rank_low[perm]) and np.array_equal(q.rank_high, r.rank_high[perm])


SPREAD = ((0.55, 0.62, 0.69, 0.76), (0.70, 0.45, 0.20, 0.0))
TIED = ((0.65, 0.65, 0.65, 0.65), (0.5, 0.33, 0.17, 0.0))


def simulate_biased_judge_ranks(reps: int, seed: int, design: tuple = SPREAD, clusters: int = 60, size: int = 5,
                                labelled: int = 90) -> tuple[float, float]:
    """(corrected, judge-only) shares of studies whose rank intervals hold every true (human-label) rank.

    ``design``: the true pass rates and the share of each candidate's failures the judge passes. SPREAD:
    0.55, 0.62, 0.69, 0.76 with the judge passing 70 %, 45 %, 20 % and 0 % of the failures, which reverses
    the order the judge sees; TIED: all four at 0.65 (every true rank 1: the hardest case for simultaneous
    coverage), the judge separating them. People label a simple random subset of the cases.
    """
    rng = np.random.default_rng(seed)
    truth, lenient = np.array(design[0]), np.array(design[1])
    true_rank = 1 + (truth[None, :] > truth[:, None]).sum(axis=1)
    hits = naive = 0
    cl = np.repeat(np.arange(clusters), size)
    for rep in range(reps):
        logit = np.log(truth / (1 - truth))[None, :] + rng.normal(0, 0.5, clusters)[cl][:, None]
        y = (rng.random((cl.size, 4)) < 1 / (1 + np.exp(-logit))).astype(float)
        f = np.where(y == 1, 1.0, (rng.random(y.shape) < lenient).astype(float))
        lab = np.zeros(cl.size, dtype=bool)
        lab[rng.choice(cl.size, labelled, replace=False)] = True
        r = ppi_rank_intervals(np.where(lab[:, None], y, np.nan), f, lab, cl, resamples=400, seed=rep)
        hits += bool(np.all((r.rank_low <= true_rank) & (true_rank <= r.rank_high)))
        j = rank_intervals(f, cl, resamples=400, seed=rep)
        naive += bool(np.all((j.rank_low <= true_rank) & (true_rank <= j.rank_high)))
    return hits / reps, naive / reps


@pytest.mark.parametrize(("design", "clusters", "labelled"), [(SPREAD, 60, 90), (TIED, 40, 80)], ids=["spread", "tied"])
def test_corrected_ranks_cover_the_true_ranking_when_the_judge_favours_some(design: tuple, clusters: int,
                                                                            labelled: int) -> None:
    corrected, judge_only = simulate_biased_judge_ranks(reps=150, seed=11, design=design, clusters=clusters,
                                                        labelled=labelled)
    assert corrected >= 0.90  # nominal 95 %; 150 studies: 0.95 - 2.8 standard errors
    assert judge_only <= 0.2  # the judge's own ranking is confidently wrong


def test_bootstrap_t_studentises_each_resample() -> None:
    cl, y, f, lab = clustered(8, clusters=60)
    y1 = np.where(lab, y[:, 0], np.nan)
    t = ppi_bootstrap_interval(y1, f[:, 0], lab, clusters=cl, resamples=1000, seed=4, interval="t")
    pct = ppi_bootstrap_interval(y1, f[:, 0], lab, clusters=cl, resamples=1000, seed=4)
    robust = ppi_mean_interval(y1, f[:, 0], lab, clusters=cl)
    assert t.low < robust.estimate < t.high and "bootstrap-t" in t.method and "percentile" in pct.method
    assert (t.high - t.low) == pytest.approx(robust.high - robust.low, rel=0.25)
    # by hand: the same resamples, each estimate studentised by its own cluster-robust SE
    ids = np.unique(cl, return_inverse=True)[1]
    T = cluster_totals(np.nan_to_num(y1), f[:, 0], lab, ids, np.zeros(cl.size, dtype=int), 60)
    rng = np.random.default_rng(4)
    W = rng.multinomial(60, np.full(60, 1 / 60), size=1000).astype(float)
    est, _, psi = resampled(T, W, None)
    z = (est - robust.estimate) / np.sqrt(np.sum(W * psi**2, axis=1))
    se0 = math.sqrt(float(np.sum(resampled(T, np.ones((1, 60)), robust.lam)[2] ** 2)))
    assert t.low == pytest.approx(robust.estimate - np.quantile(z, 0.975) * se0, abs=1e-12)
    assert t.high == pytest.approx(robust.estimate - np.quantile(z, 0.025) * se0, abs=1e-12)
