"""Hypothesis invariants of the statistics kernels.

* the estimate lies in its interval;
* intervals nest as the confidence level rises;
* bounded intervals stay in [0, 1] (differences in [-1, 1]);
* swapping the two candidates negates a paired difference and mirrors its interval;
* reordering rows never changes a result;
* test/interval duality (TOST and non-inferiority against the Tango interval).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evalspec.stats import (
    MCNEMAR_METHODS,
    PAIRED_METHODS,
    PROPORTION_METHODS,
    clustered_mean_interval,
    clustered_standard_error,
    ks_distance,
    mcnemar,
    paired_cluster_bootstrap,
    paired_difference_interval,
    paired_equivalence_test,
    paired_noninferiority_test,
    proportion_interval,
)
from tests.strategies import binomial_counts, clustered_outcomes, confidence_levels, level_pairs, paired_tables

EPS = 1e-9  # slack for root-finding methods (mid-p, Tango)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Methods whose interval is centred away from the observed estimate (shrunk towards 1/2 or 0)
# contain it only at practical confidence levels, and the invariant is checked at >= 90 %:
# Agresti-Min at 85 % excludes the estimate -1 of the one-pair table (0, 0, 1, 0), and an
# exhaustive scan (b, c < 120) found no exclusion at 90 % or 95 %.
_SHRUNK_PROPORTION = {"agresti_coull"}


@FAST
@given(counts=binomial_counts(), level=confidence_levels, method=st.sampled_from(PROPORTION_METHODS))
def test_proportion_interval_bounded_and_contains_estimate(counts: tuple[int, int], level: float, method: str) -> None:
    x, n = counts
    r = proportion_interval(x, n, method, level)
    assert 0.0 <= r.low <= r.high <= 1.0
    if method not in _SHRUNK_PROPORTION or level >= 0.9:
        assert r.low - EPS <= r.estimate <= r.high + EPS


@FAST
@given(counts=binomial_counts(), levels=level_pairs(), method=st.sampled_from(PROPORTION_METHODS))
def test_proportion_intervals_nest(counts: tuple[int, int], levels: tuple[float, float], method: str) -> None:
    x, n = counts
    narrow = proportion_interval(x, n, method, levels[0])
    wide = proportion_interval(x, n, method, levels[1])
    assert wide.low <= narrow.low + EPS and narrow.high <= wide.high + EPS


@FAST
@given(counts=binomial_counts(), level=confidence_levels, method=st.sampled_from(PROPORTION_METHODS))
def test_proportion_mirror_symmetry(counts: tuple[int, int], level: float, method: str) -> None:
    """Counting failures instead of successes mirrors the interval about 1/2."""
    x, n = counts
    r = proportion_interval(x, n, method, level)
    m = proportion_interval(n - x, n, method, level)
    assert r.low == pytest.approx(1 - m.high, abs=1e-9) and r.high == pytest.approx(1 - m.low, abs=1e-9)


@FAST
@given(counts=binomial_counts(max_n=400), level=confidence_levels)
def test_mid_p_within_clopper_pearson(counts: tuple[int, int], level: float) -> None:
    x, n = counts
    cp = proportion_interval(x, n, "clopper_pearson", level)
    mp = proportion_interval(x, n, "mid_p", level)
    assert cp.low <= mp.low + EPS and mp.high <= cp.high + EPS


@FAST
@given(table=paired_tables(), level=confidence_levels, method=st.sampled_from(PAIRED_METHODS))
def test_paired_interval_bounded_and_contains_estimate(
    table: tuple[int, int, int, int], level: float, method: str
) -> None:
    r = paired_difference_interval(*table, method=method, confidence_level=level)
    assert -1.0 <= r.low <= r.high <= 1.0
    assert r.low <= r.estimate <= r.high  # every method, every level (exactly, no tolerance)


@FAST
@given(table=paired_tables(), levels=level_pairs(), method=st.sampled_from(PAIRED_METHODS))
def test_paired_intervals_nest(table: tuple[int, int, int, int], levels: tuple[float, float], method: str) -> None:
    narrow = paired_difference_interval(*table, method=method, confidence_level=levels[0])
    wide = paired_difference_interval(*table, method=method, confidence_level=levels[1])
    assert wide.low <= narrow.low + EPS and narrow.high <= wide.high + EPS


def test_shrunk_centre_methods_contain_their_estimate() -> None:
    """Agresti-Min used to give (-0.99, 0.29) for the estimate -1 (table (0, 0, 1, 0) at 85 %)."""
    r = paired_difference_interval(0, 0, 1, 0, "agresti_min", 0.85)
    assert r.estimate == -1.0 and r.low == -1.0 and r.high == pytest.approx(0.2861423792540117, abs=1e-12)
    for method in ("agresti_min", "bonett_price"):
        r = paired_difference_interval(0, 20, 0, 0, method, 0.5)  # estimate 1, centre 20/22: high was < 1
        assert r.high == 1.0 and r.low < 1.0


@FAST
@given(table=paired_tables(), level=confidence_levels, method=st.sampled_from(PAIRED_METHODS))
def test_swapping_candidates_mirrors_paired_interval(
    table: tuple[int, int, int, int], level: float, method: str
) -> None:
    a, b, c, d = table
    r = paired_difference_interval(a, b, c, d, method=method, confidence_level=level)
    s = paired_difference_interval(a, c, b, d, method=method, confidence_level=level)
    assert s.estimate == -r.estimate
    assert s.low == pytest.approx(-r.high, abs=1e-9) and s.high == pytest.approx(-r.low, abs=1e-9)


@FAST
@given(table=paired_tables(), level=confidence_levels)
def test_newcombe_corrected_phi_is_never_narrower(table: tuple[int, int, int, int], level: float) -> None:
    m10 = paired_difference_interval(*table, method="newcombe", confidence_level=level)
    m8 = paired_difference_interval(*table, method="newcombe_nocc", confidence_level=level)
    assert m10.low <= m8.low + 1e-12 and m8.high <= m10.high + 1e-12


@FAST
@given(table=paired_tables(), level=confidence_levels)
def test_tango_depends_on_a_and_d_only_through_their_sum(table: tuple[int, int, int, int], level: float) -> None:
    a, b, c, d = table
    r = paired_difference_interval(a, b, c, d, "tango", level)
    s = paired_difference_interval(a + d, b, c, 0, "tango", level)
    assert r.interval == pytest.approx(s.interval, abs=1e-12)


@FAST
@given(
    table=paired_tables(),
    margin=st.floats(min_value=0.01, max_value=0.5),
    level=st.floats(min_value=0.8, max_value=0.99),
)
def test_tost_and_noninferiority_agree_with_tango_interval(
    table: tuple[int, int, int, int], margin: float, level: float
) -> None:
    eq = paired_equivalence_test(*table, margin=margin, confidence_level=level)
    ni = paired_noninferiority_test(*table, margin=margin, confidence_level=level)
    ci = paired_difference_interval(*table, method="tango", confidence_level=2 * level - 1)
    assert eq.interval == pytest.approx(ci.interval, abs=1e-12)
    assert ni.low == pytest.approx(ci.low, abs=1e-12)
    assert 0.0 <= eq.pvalue <= 1.0 and eq.pvalue == max(eq.pvalue_lower, eq.pvalue_upper)
    assert ni.pvalue == pytest.approx(eq.pvalue_lower, abs=1e-15)
    # duality, away from the knife edge where root-finding tolerance decides
    assume(min(abs(ci.low + margin), abs(ci.high - margin)) > 1e-7)
    assert eq.equivalent == (-margin < ci.low and ci.high < margin)
    assert ni.noninferior == (ci.low > -margin)


@FAST
@given(b=st.integers(0, 400), c=st.integers(0, 400), method=st.sampled_from(MCNEMAR_METHODS))
def test_mcnemar_symmetric_and_valid(b: int, c: int, method: str) -> None:
    r = mcnemar(b, c, method)
    s = mcnemar(c, b, method)
    assert 0.0 <= r.pvalue <= 1.0
    assert r.pvalue == pytest.approx(s.pvalue, abs=1e-12)
    if method in ("exact", "mid_p"):
        assert mcnemar(b, c, "mid_p").pvalue <= mcnemar(b, c, "exact").pvalue + 1e-15


@FAST
@given(data=clustered_outcomes(binary=False), level=confidence_levels, perm_seed=st.integers(0, 2**32 - 1))
def test_clustered_interval_row_order_and_nesting(data: dict, level: float, perm_seed: int) -> None:
    x, cl = data["x"], data["clusters"]
    r = clustered_mean_interval(x, cl, level)
    perm = np.random.default_rng(perm_seed).permutation(x.size)
    p = clustered_mean_interval(x[perm], cl[perm], level)
    assert p.estimate == pytest.approx(r.estimate, abs=1e-12)
    assert p.se == pytest.approx(r.se, abs=1e-12)
    assert r.low <= r.estimate <= r.high
    wider = clustered_mean_interval(x, cl, min(0.999, level + 0.01))
    assert wider.low <= r.low + 1e-12 and r.high <= wider.high + 1e-12


@FAST
@given(values=st.lists(st.floats(0, 1), min_size=2, max_size=60), scale=st.floats(0.01, 100), shift=st.floats(-5, 5))
def test_clustered_se_singletons_scale_and_shift(values: list[float], scale: float, shift: float) -> None:
    v = np.array(values)
    ids = np.arange(v.size)
    assert clustered_standard_error(v, ids, "CR0") == pytest.approx(v.std() / np.sqrt(v.size), abs=1e-12)
    assert clustered_standard_error(scale * v + shift, ids) == pytest.approx(
        scale * clustered_standard_error(v, ids), rel=1e-9, abs=1e-12
    )


@SLOW
@given(
    data=clustered_outcomes(),
    interval=st.sampled_from(["bca", "percentile"]),
    seed=st.integers(0, 1000),
    perm_seed=st.integers(0, 2**32 - 1),
)
def test_bootstrap_row_order_swap_and_bounds(data: dict, interval: str, seed: int, perm_seed: int) -> None:
    x, y, cl = data["x"], data["y"], data["clusters"]
    r = paired_cluster_bootstrap(x, y, cl, resamples=400, interval=interval, seed=seed)
    assert -1.0 <= r.low <= r.estimate <= r.high <= 1.0
    # reordering rows (and relabelling consistently) changes nothing
    perm = np.random.default_rng(perm_seed).permutation(x.size)
    p = paired_cluster_bootstrap(x[perm], y[perm], cl[perm], resamples=400, interval=interval, seed=seed)
    assert p.to_dict() == r.to_dict()
    # swapping the candidates negates the estimate and mirrors the interval
    s = paired_cluster_bootstrap(y, x, cl, resamples=400, interval=interval, seed=seed)
    assert s.estimate == pytest.approx(-r.estimate, abs=1e-12)
    assert s.low == pytest.approx(-r.high, abs=1e-9) and s.high == pytest.approx(-r.low, abs=1e-9)
    assert s.method == r.method
    # nesting with the level, for the same draws
    wide = paired_cluster_bootstrap(x, y, cl, resamples=400, interval=interval, seed=seed, confidence_level=0.99)
    narrow = paired_cluster_bootstrap(x, y, cl, resamples=400, interval=interval, seed=seed, confidence_level=0.8)
    if wide.method == narrow.method:
        assert wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12


@FAST
@given(
    x=st.lists(st.integers(-5, 5), min_size=1, max_size=30),
    y=st.lists(st.integers(-5, 5), min_size=1, max_size=30),
)
def test_ks_symmetric_bounded_and_order_free(x: list[int], y: list[int]) -> None:
    from scipy import stats

    d = ks_distance(x, y)
    assert 0.0 <= d.statistic <= 1.0
    assert ks_distance(y, x).statistic == d.statistic
    assert ks_distance(x[::-1], y[::-1]).statistic == d.statistic
    with np.errstate(divide="ignore"):  # scipy's asymptotic p-value divides by zero at n = 1
        assert d.statistic == pytest.approx(stats.ks_2samp(x, y, method="asymp").statistic, abs=1e-12)


def test_newcombe_zero_width_is_exact_not_rounding() -> None:
    """(1, 0, 0, 1): phi = 1 and equal margins give exactly [0, 0] at every level (was +-5e-9 at some)."""
    for level in (0.8984375, 0.9, 0.9375, 0.95):
        assert paired_difference_interval(1, 0, 0, 1, "newcombe_nocc", level).interval == (0.0, 0.0)
        # the continuity-corrected phi is 0 here, so method 10 keeps a symmetric, non-zero width
        r = paired_difference_interval(1, 0, 0, 1, "newcombe", level)
        assert r.low == -r.high and r.high > 0.1
