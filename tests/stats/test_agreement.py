"""Cohen's kappa and Krippendorff's alpha (evalspec.stats.agreement) against hand and published values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.stats.agreement import binary_agreement, cohen_kappa, krippendorff_alpha_nominal

nan = np.nan

# Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011): binary data, two observers, ten units.
A = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
B = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]


def test_two_observer_binary_example() -> None:
    # by hand: 6 of 10 agree; A says 1 twice, B four times: p_e = .2*.4 + .8*.6 = .56, kappa = .04/.44
    assert cohen_kappa([5, 3, 1, 1]) == pytest.approx(0.04 / 0.44)
    # coincidences o_01 = o_10 = 4, n_0 = 14, n_1 = 6, n = 20: alpha = 1 - 19 * 4 / (14 * 6) = 0.095
    assert krippendorff_alpha_nominal(np.array([A, B]).T) == pytest.approx(1 - 19 * 4 / 84)
    assert round(krippendorff_alpha_nominal(np.array([A, B]).T), 3) == 0.095  # the paper's value
    r = binary_agreement(A, B)
    assert r.kappa == pytest.approx(0.04 / 0.44) and r.alpha == pytest.approx(1 - 76 / 84)
    assert r.counts == (5, 3, 1, 1) and r.agree == 6


def test_published_nominal_examples_with_missing_values() -> None:
    # the same paper, four observers, twelve units, values 1-5 with missing data: nominal alpha = 0.743
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    assert round(krippendorff_alpha_nominal(np.array(data).T), 3) == 0.743
    # the computational example of the encyclopaedia article on Krippendorff's alpha: 0.691
    wiki = [[nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
            [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
            [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4]]
    assert round(krippendorff_alpha_nominal(np.array(wiki).T), 3) == 0.691


def test_undefined_when_all_labels_equal() -> None:
    r = binary_agreement([1, 1, 1, 1], [1, 1, 1, 1])
    assert r.kappa is None and r.alpha is None and r.kappa_low is None


def test_perfect_agreement() -> None:
    r = binary_agreement([0, 1, 1, 0, 1], [0, 1, 1, 0, 1])
    assert r.kappa == pytest.approx(1.0) and r.alpha == pytest.approx(1.0)


@settings(derandomize=True, database=None, max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=2, max_size=40))
def test_binary_path_equals_general_alpha_and_kappa_definition(pairs: list[tuple[int, int]]) -> None:
    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    r = binary_agreement(a, b, resamples=200)
    general = krippendorff_alpha_nominal(np.stack([a, b], axis=1))
    if general is None:
        assert r.alpha is None
    else:
        assert r.alpha == pytest.approx(general, abs=1e-12)
    po = float(np.mean(a == b))
    pe = a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean())
    if 1 - pe > 1e-12:
        assert r.kappa == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
        if r.kappa_low is not None:
            assert r.kappa_low <= r.kappa_high


def test_cluster_bootstrap_is_wider_for_correlated_clusters() -> None:
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(30), 10)
    truth = np.repeat(rng.integers(0, 2, 30), 10).astype(float)  # whole clusters share a label
    judge = np.where(np.repeat(rng.random(30) < 0.8, 10), truth, 1 - truth)
    naive = binary_agreement(truth, judge, resamples=1000)
    clustered = binary_agreement(truth, judge, clusters=g, resamples=1000)
    assert naive.kappa == clustered.kappa
    assert (clustered.kappa_high - clustered.kappa_low) > 1.5 * (naive.kappa_high - naive.kappa_low)
