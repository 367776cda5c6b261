"""Simultaneous rank intervals (evalspec.stats.ranking): brute force on small cases, Holm, coverage."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.stats.ranking import holm, max_t_critical, rank_intervals, ranks_from_intervals, tiers


def _brute_critical(values: np.ndarray, clusters: np.ndarray, level: float) -> float:
    """Every ordered bootstrap resample of G clusters (G^G of them, equally likely), by loops."""
    labels = sorted(set(clusters.tolist()))
    k = values.shape[1]
    rows = {g: values[clusters == g] for g in labels}
    theta = values.mean(axis=0)
    n_g = np.array([len(rows[g]) for g in labels], dtype=float)
    stats = []
    se = {}
    g_count = len(labels)
    for j, m in itertools.combinations(range(k), 2):
        d = theta[j] - theta[m]
        resid = [float((rows[g][:, j] - rows[g][:, m]).sum() - len(rows[g]) * d) for g in labels]
        se[(j, m)] = np.sqrt(g_count / (g_count - 1) * sum(r * r for r in resid)) / n_g.sum()
    for draw in itertools.product(labels, repeat=g_count):
        sample = np.concatenate([rows[g] for g in draw])
        tb = sample.mean(axis=0)
        worst = 0.0
        for (j, m), s0 in se.items():
            if s0 <= 1e-15:
                continue
            d_star = tb[j] - tb[m]
            tot = [float((rows[g][:, j] - rows[g][:, m]).sum() - len(rows[g]) * d_star) for g in draw]
            s_star = np.sqrt(g_count / (g_count - 1) * sum(r * r for r in tot)) / len(sample)
            dev = abs(d_star - (theta[j] - theta[m]))
            worst = max(worst, dev / s_star if s_star > 1e-15 else (np.inf if dev > 1e-15 else 0.0))
        stats.append(worst)
    return float(np.quantile(np.array(stats), level, method="higher"))


def test_critical_value_equals_exhaustive_bootstrap() -> None:
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(5), [3, 4, 2, 5, 3])
    values = (rng.random((clusters.size, 3)) < [0.3, 0.5, 0.8]).astype(float)
    exact = _brute_critical(values, clusters, 0.9)
    # the same statistic with the exhaustive resamples as explicit weights (each resample's cluster counts)
    labels = np.arange(5)
    weights = np.array([np.bincount(np.array(d), minlength=5) for d in itertools.product(labels, repeat=5)], float)
    sums = np.stack([values[clusters == g].sum(axis=0) for g in labels])
    sizes = np.bincount(clusters).astype(float)
    assert max_t_critical(sums, sizes, weights, 0.9) == pytest.approx(exact, abs=1e-12)
    # the kernel's Monte Carlo draw gets close to it
    r = rank_intervals(values, clusters, confidence_level=0.9, resamples=20_000, seed=1)
    assert r.critical == pytest.approx(exact, rel=0.1)


def test_rank_intervals_by_counting() -> None:
    low = np.array([[0, 0.1, 0.2], [-0.3, 0, -0.05], [-0.4, -0.1, 0]])
    lo, hi = ranks_from_intervals(low)
    # 0 is surely better than 1 and 2; 1 and 2 cannot be told apart
    assert lo.tolist() == [1, 2, 2] and hi.tolist() == [1, 3, 3]


def test_tiers_and_separation() -> None:
    est = np.array([0.9, 0.5, 0.52, 0.1])
    low = np.full((4, 4), -1.0)
    for j, m in [(0, 1), (0, 2), (0, 3), (1, 3), (2, 3)]:
        low[j, m] = 0.05
    assert tiers(est, low) == [[0], [2, 1], [3]]
    low[0, 2] = -0.1  # 0 and 2 no longer told apart
    assert tiers(est, low) == [[0, 2], [2, 1], [3]]


def test_holm_matches_hand_computation() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, 2*0.03, 1*0.04, made monotone
    assert holm(p).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])


@settings(derandomize=True, database=None, max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 6))
def test_invariants(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 60))
    values = (rng.random((n, k)) < rng.random(k)).astype(float)
    clusters = rng.integers(0, max(3, n // 4), n)
    r = rank_intervals(values, clusters, resamples=200, seed=seed)
    assert np.all(r.rank_low >= 1) and np.all(r.rank_high <= k) and np.all(r.rank_low <= r.rank_high)
    best = int(np.argmax(r.estimates))
    assert r.rank_low[best] == 1
    assert np.allclose(r.diff, -r.diff.T) and np.all(r.holm >= r.pvalues - 1e-15)
    members = sorted(i for group in tiers(r.estimates, r.low) for i in group)
    assert sorted(set(members)) == list(range(k))


def simulate_rank_coverage(reps: int, seed: int, k: int = 4, clusters: int = 40, size: int = 5,
                           resamples: int = 400, spread: float = 0.3) -> float:
    """Share of studies where every candidate's rank interval holds its true rank (all at once).

    True rank (ties allowed, as in Mogstad et al.): 1 + the number of candidates with a higher
    true pass rate; with ``spread = 0`` every candidate's true rank is 1 and covering them all
    needs every pairwise interval to hold 0 at once, the hardest case.
    """
    rng = np.random.default_rng(seed)
    truth = np.linspace(0.6 - spread / 2, 0.6 + spread / 2, k)
    true_rank = 1 + (truth[None, :] > truth[:, None]).sum(axis=1)
    hits = 0
    for rep in range(reps):
        cl = np.repeat(np.arange(clusters), size)
        shift = rng.normal(0, 0.5, clusters)[cl]
        logit = np.log(truth / (1 - truth))[None, :] + shift[:, None]
        values = (rng.random((cl.size, k)) < 1 / (1 + np.exp(-logit))).astype(float)
        r = rank_intervals(values, cl, resamples=resamples, seed=rep)
        hits += bool(np.all((r.rank_low <= true_rank) & (true_rank <= r.rank_high)))
    return hits / reps


@pytest.mark.parametrize("spread", [0.0, 0.06, 0.3])
def test_simultaneous_coverage_of_the_true_ranking(spread: float) -> None:
    # nominal 95 %; 200 studies of 40 clusters: at least 0.95 - 2.5 * 0.015
    assert simulate_rank_coverage(reps=200, seed=7, spread=spread) >= 0.91
