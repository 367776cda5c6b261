"""Anytime-valid confidence sequence (betting; Waudby-Smith & Ramdas 2024): properties and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.stats import InvalidArgument
from evalspec.stats.sequential import betting_confidence_sequence


def test_nested_and_shrinking() -> None:
    rng = np.random.default_rng(1)
    x = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.7, 0.2], size=600)
    cs = betting_confidence_sequence(x, lower=-1, upper=1)
    assert np.all(np.diff(cs.low) >= 0) and np.all(np.diff(cs.high) <= 0)  # running intersection
    assert np.all(cs.low <= cs.high)
    assert cs.low[0] >= -1 and cs.high[0] <= 1
    assert cs.high[-1] - cs.low[-1] < 0.25
    # wider than the fixed-sample Wald interval at the same n (the price of looking at any time)
    wald = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
    assert cs.high[-1] - cs.low[-1] > 2 * wald


def test_times_subset_equals_full_path() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, 300)
    full = betting_confidence_sequence(x)
    some = betting_confidence_sequence(x, times=[5, 100, 300])
    for k, t in enumerate([5, 100, 300]):
        assert some.low[k] == full.low[t - 1] and some.high[k] == full.high[t - 1]
        assert some.estimate[k] == pytest.approx(x[:t].mean())


def test_scale_equivariance() -> None:
    rng = np.random.default_rng(3)
    u = rng.uniform(0, 1, 200)
    a = betting_confidence_sequence(u, times=[200])
    b = betting_confidence_sequence(2 * u - 1, lower=-1, upper=1, times=[200])
    assert b.low[0] == pytest.approx(2 * a.low[0] - 1) and b.high[0] == pytest.approx(2 * a.high[0] - 1)


def test_constant_data_concentrates_on_the_value() -> None:
    cs = betting_confidence_sequence(np.full(2000, 0.3), times=[2000])
    assert cs.low[0] <= 0.3 <= cs.high[0]
    assert cs.high[0] - cs.low[0] < 0.05


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([-1.0, 0.0, 1.0]), min_size=1, max_size=80),
       st.floats(0.5, 0.99))
def test_bounds_in_range_and_ordered(xs: list[float], level: float) -> None:
    cs = betting_confidence_sequence(xs, lower=-1, upper=1, confidence_level=level, grid=200)
    assert np.all(cs.low >= -1) and np.all(cs.high <= 1) and np.all(cs.low <= cs.high)


def test_higher_level_is_wider() -> None:
    rng = np.random.default_rng(4)
    x = rng.uniform(0, 1, 400)
    w90 = betting_confidence_sequence(x, confidence_level=0.90, times=[400])
    w99 = betting_confidence_sequence(x, confidence_level=0.99, times=[400])
    assert w99.low[0] <= w90.low[0] and w99.high[0] >= w90.high[0]
    assert (w99.high[0] - w99.low[0]) > (w90.high[0] - w90.low[0])


@pytest.mark.parametrize("kw, arg", [
    ({"x": []}, "x"), ({"x": [0.5, 2.0]}, "x"), ({"x": [0.1], "confidence_level": 1.0}, "confidence_level"),
    ({"x": [0.1], "lower": 1, "upper": 0}, "upper"), ({"x": [0.1, 0.2], "times": [3]}, "times"),
    ({"x": [0.1], "grid": 3}, "grid"), ({"x": [float("nan")]}, "x"),
])
def test_bad_arguments(kw: dict, arg: str) -> None:
    x = kw.pop("x")
    with pytest.raises(InvalidArgument, match=arg):
        betting_confidence_sequence(x, **kw)
