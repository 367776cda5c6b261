"""The paired cluster bootstrap: exactness of the cluster-total algebra, agreement with
``scipy.stats.bootstrap`` on cluster-level data, determinism and bounded memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from scipy import stats

import evalspec.stats.bootstrap as boot
from evalspec.stats import cluster_totals, paired_cluster_bootstrap


def _clustered_data(seed: int, g: int, binary: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, size=g)
    cl = np.repeat(np.arange(g), sizes)
    difficulty = rng.normal(size=g)[cl]
    if binary:
        x = (rng.random(cl.size) < 1 / (1 + np.exp(-(0.8 + difficulty)))).astype(float)
        y = (rng.random(cl.size) < 1 / (1 + np.exp(-(0.5 + difficulty)))).astype(float)
    else:
        x = rng.beta(2 + np.exp(difficulty), 2)
        y = rng.beta(2, 2 + np.exp(difficulty))
    return x, y, cl


def test_cluster_totals_equal_row_level_resampling() -> None:
    """Each bootstrap difference equals the row-level mean difference of the drawn clusters."""
    x, y, cl = _clustered_data(0, g=15)
    sx, sy, m = cluster_totals(x, y, cl)
    d = sx - sy
    theta = boot._bootstrap_distribution(d, m, 300, seed=11, workers=1)
    # replay the same draws (same chunking and child seeds) and resample rows explicitly
    rows = max(1, boot._CHUNK_ELEMENTS // d.size)
    children = np.random.SeedSequence(11).spawn(len(range(0, 300, rows)))
    replay = []
    for start, child in zip(range(0, 300, rows), children):
        rng = np.random.default_rng(child)
        idx = rng.integers(0, d.size, size=(min(rows, 300 - start), d.size), dtype=np.uint16)
        for draw in idx:
            members = np.concatenate([np.flatnonzero(cl == g) for g in draw])
            replay.append(x[members].mean() - y[members].mean())
    np.testing.assert_allclose(theta, replay, rtol=0, atol=1e-12)


@pytest.mark.parametrize("interval", ["percentile", "bca"])
def test_agrees_with_scipy_bootstrap_on_cluster_totals(interval: str) -> None:
    """scipy.stats.bootstrap resampling clusters (paired totals) gives the same interval up to MC error.

    Fractional outcomes, so there are no ties at the estimate and both BCa bias corrections
    (scipy counts theta* < theta; evalspec counts ties half) coincide. Tolerance: 0.06 of the
    bootstrap standard error with B = 20,000 on each side (Monte Carlo sd of a 2.5 % quantile is
    about 0.025 se here).
    """
    x, y, cl = _clustered_data(1, g=40, binary=False)
    sx, sy, m = cluster_totals(x, y, cl)
    ours = paired_cluster_bootstrap(x, y, cl, resamples=20_000, interval=interval, seed=3)

    def ratio(dd: np.ndarray, mm: np.ndarray, axis: int = -1) -> np.ndarray:
        return dd.sum(axis=axis) / mm.sum(axis=axis)

    ref = stats.bootstrap(
        (sx - sy, m), ratio, paired=True, vectorized=True, n_resamples=20_000,
        method="BCa" if interval == "bca" else "percentile", random_state=np.random.default_rng(4),
    )
    assert ours.method == interval
    tol = 0.06 * ours.standard_error
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=tol)
    assert ours.standard_error == pytest.approx(ref.standard_error, rel=0.03)


def test_jackknife_acceleration_matches_definition() -> None:
    x, y, cl = _clustered_data(2, g=12, binary=False)
    sx, sy, m = cluster_totals(x, y, cl)
    d = sx - sy
    loo = np.array([np.delete(d, g).sum() / np.delete(m, g).sum() for g in range(d.size)])
    dev = loo.mean() - loo
    expected = (dev**3).sum() / (6 * ((dev**2).sum()) ** 1.5)
    assert boot._jackknife_acceleration(d, m) == pytest.approx(expected, rel=1e-12)


def test_seeded_deterministic_and_independent_of_workers() -> None:
    rng = np.random.default_rng(7)
    g = 30_000  # 66 resamples per chunk -> several chunks
    cl = rng.integers(0, g, size=60_000)
    x = (rng.random(cl.size) < 0.7).astype(float)
    y = (rng.random(cl.size) < 0.65).astype(float)
    one = paired_cluster_bootstrap(x, y, cl, resamples=300, seed=5, workers=1)
    three = paired_cluster_bootstrap(x, y, cl, resamples=300, seed=5, workers=3)
    assert one.to_dict() == three.to_dict()
    other = paired_cluster_bootstrap(x, y, cl, resamples=300, seed=6, workers=1)
    assert other.interval != one.interval
    assert one.seed == 5 and one.resamples == 300 and one.n == 60_000 and one.n_clusters == np.unique(cl).size


def test_more_than_65535_clusters_use_wide_indices() -> None:
    g = 70_000
    x = np.zeros(g)
    x[:100] = 1.0
    r = paired_cluster_bootstrap(x, np.zeros(g), np.arange(g), resamples=100, interval="percentile")
    assert r.n_clusters == g
    assert 0 < r.low < 100 / g < r.high < 1


def test_memory_does_not_grow_with_resamples() -> None:
    """Peak traced memory is bounded by the chunk size, not by B (only B doubles are kept)."""
    rng = np.random.default_rng(8)
    cl = np.repeat(np.arange(5000), 4)
    x = (rng.random(cl.size) < 0.6).astype(float)
    y = (rng.random(cl.size) < 0.6).astype(float)

    def peak(resamples: int) -> int:
        tracemalloc.start()
        paired_cluster_bootstrap(x, y, cl, resamples=resamples, workers=1)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(1_000), peak(8_000)
    # a chunk is 2e6 draws: ~4 MB of uint16 indices + 32 MB of gathered complex totals
    assert large < 60e6
    assert large < small * 1.3


def test_clusters_matter() -> None:
    """Under strong clustering the cluster bootstrap is much wider than a row bootstrap."""
    rng = np.random.default_rng(9)
    g, size = 20, 25
    cl = np.repeat(np.arange(g), size)
    effect = rng.normal(scale=0.4, size=g)[cl]
    x = (rng.random(cl.size) < np.clip(0.6 + effect, 0, 1)).astype(float)
    y = (rng.random(cl.size) < 0.6).astype(float)
    by_cluster = paired_cluster_bootstrap(x, y, cl, resamples=2000)
    by_row = paired_cluster_bootstrap(x, y, np.arange(cl.size), resamples=2000)
    assert by_cluster.standard_error > 1.5 * by_row.standard_error


def test_packed_integer_path_equals_complex_path() -> None:
    x, y, cl = _clustered_data(12, g=50)
    sx, sy, m = cluster_totals(x, y, cl)
    d = sx - sy
    packed, offset = boot._pack(d, m)
    assert offset > 0  # negative differences present
    seq = np.random.SeedSequence(1)
    a = boot._resample_chunk(packed, offset, d.size, 64, seq)
    b = boot._resample_chunk(d + 1j * m, 0, d.size, 64, seq)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)
    assert boot._pack(d + 0.5, m) is None  # fractional totals take the complex path


def test_integer_label_fast_path_matches_unique() -> None:
    from evalspec.stats._validation import _cluster_codes

    rng = np.random.default_rng(3)
    for labels in (rng.integers(-50, 50, 500), rng.integers(0, 10**9, 500), np.array([True, False, True])):
        codes, g = _cluster_codes(labels, labels.size)
        uniq, expected = np.unique(labels, return_inverse=True)
        assert g == uniq.size
        np.testing.assert_array_equal(codes, expected)


def test_clusters_none_means_each_row_is_a_cluster() -> None:
    x, y, _ = _clustered_data(13, g=20)
    a = paired_cluster_bootstrap(x, y, None, resamples=300, seed=4)
    b = paired_cluster_bootstrap(x, y, np.arange(x.size), resamples=300, seed=4)
    assert a.to_dict() == b.to_dict()
