"""Power and sample size (Miller 2024, eq. 9-10; zero-failure rule)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.stats import InvalidArgument
from evalspec.stats.power import (
    design_effect,
    minimum_detectable_effect,
    paired_sample_size,
    variance_components,
    zero_failure_bound,
    zero_failure_cases,
)


def test_miller_worked_example_969() -> None:
    # Evan Miller, "Adding Error Bars to Evals" (2024), power section: omega^2 = 1/9, delta = 0.03,
    # 80 % power, alpha = 0.05, no within-question variance -> about 969 questions.
    n = paired_sample_size(0.03, 1 / 9, alpha=0.05, power=0.8)
    assert n == pytest.approx(969.0, abs=0.5)
    assert math.ceil(n) == 969


def test_closed_form_by_hand() -> None:
    # (1.959964 + 0.841621)^2 = 7.848879; with sigma^2 = 0.2 at K = 4 on both sides
    z2 = (1.959963984540054 + 0.8416212335729143) ** 2
    var = 0.05 + 0.2 / 4 + 0.1 / 2
    assert paired_sample_size(0.05, 0.05, sigma_a2=0.2, k_a=4, sigma_b2=0.1, k_b=2) == pytest.approx(
        z2 * var / 0.0025, rel=1e-12)


def test_90_percent_power_needs_more() -> None:
    n80 = paired_sample_size(0.03, 1 / 9, power=0.8)
    n90 = paired_sample_size(0.03, 1 / 9, power=0.9)
    # (1.959964 + 1.281552)^2 / (1.959964 + 0.841621)^2 = 1.3384
    assert n90 / n80 == pytest.approx(((1.959963985 + 1.281551566) / (1.959963985 + 0.841621234)) ** 2, rel=1e-8)


def test_design_effect_multiplies() -> None:
    assert design_effect(10, 0.1) == pytest.approx(1.9)
    assert design_effect(1, 0.7) == 1.0
    base = paired_sample_size(0.03, 1 / 9)
    assert paired_sample_size(0.03, 1 / 9, deff=design_effect(5, 0.2)) == pytest.approx(base * 1.8)


@settings(max_examples=60, deadline=None)
@given(delta=st.floats(0.005, 0.5), omega2=st.floats(0.001, 1.0), s=st.floats(0, 0.25), k=st.integers(1, 20),
       power=st.floats(0.5, 0.99), deff=st.floats(1, 5))
def test_eq10_inverts_eq9(delta: float, omega2: float, s: float, k: int, power: float, deff: float) -> None:
    n = paired_sample_size(delta, omega2, sigma_a2=s, k_a=k, sigma_b2=s, k_b=k, power=power, deff=deff)
    back = minimum_detectable_effect(n, omega2, sigma_a2=s, k_a=k, sigma_b2=s, k_b=k, power=power, deff=deff)
    assert back == pytest.approx(delta, rel=1e-9)


def test_zero_failure_rule_299() -> None:
    # ln(0.05) / ln(0.99) = 298.07 -> 299 cases for a 1 % limit at 95 %
    assert zero_failure_cases(0.01, 0.95) == 299
    assert zero_failure_bound(299, 0.95) <= 0.01 < zero_failure_bound(298, 0.95)
    # rule of three: about 3 / n at 95 %
    assert zero_failure_cases(0.03, 0.95) == math.ceil(math.log(0.05) / math.log(0.97))


def test_zero_failure_cases_is_strictly_below_the_limit_by_hand() -> None:
    """The count the decision's rule needs (bound < limit), worked by hand.

    Limit 50 %, level 75 % (alpha 0.25): n = 2 gives 1 - 0.25^(1/2) = 0.5, equal to the limit,
    which the decision does not accept; n = 3 gives 1 - 0.25^(1/3) = 0.370 < 0.5. So 3, where
    the former "at or below" count said 2 (and the decision then blocked the plan it had sized).
    Limit 5 %, level 95 %: ln(0.05) / ln(0.95) = 58.40, so n = 59: 1 - 0.05^(1/58) = 0.05034 >
    0.05 > 0.0495 = 1 - 0.05^(1/59).
    """
    assert zero_failure_bound(2, 0.75) == 0.5
    assert zero_failure_cases(0.5, 0.75) == 3
    assert zero_failure_cases(0.05, 0.95) == 59
    assert zero_failure_bound(58, 0.95) == pytest.approx(0.05034, abs=1e-5)
    assert zero_failure_bound(59, 0.95) == pytest.approx(0.04951, abs=1e-5)
    assert zero_failure_cases(1.0, 0.95) == 1
    for limit in (0.5, 0.2, 0.05, 0.01, 0.003):
        for level in (0.75, 0.9, 0.95, 0.99):
            n = zero_failure_cases(limit, level)
            assert zero_failure_bound(n, level) < limit
            assert n == 1 or not zero_failure_bound(n - 1, level) < limit


def test_zero_failure_bound_is_clopper_pearson() -> None:
    from scipy.stats import beta

    for n in (1, 10, 299, 5000):
        assert zero_failure_bound(n, 0.95) == pytest.approx(beta.ppf(0.95, 1, n), rel=1e-10)


def test_bad_arguments_name_the_argument() -> None:
    with pytest.raises(InvalidArgument, match="delta"):
        paired_sample_size(0.0, 0.1)
    with pytest.raises(InvalidArgument, match="power"):
        paired_sample_size(0.03, 0.1, power=1.2)
    with pytest.raises(InvalidArgument, match="omega2"):
        paired_sample_size(0.03, 0.0)
    with pytest.raises(InvalidArgument, match="icc"):
        design_effect(4, 1.5)
    with pytest.raises(InvalidArgument, match="limit"):
        zero_failure_cases(0.0)


def test_variance_components_recover_simulated_truth() -> None:
    rng = np.random.default_rng(11)
    n, k = 4000, 5
    # per-question pass probabilities; difference variance omega^2 known by construction
    p_b = rng.uniform(0.2, 0.8, n)
    p_a = np.clip(p_b + rng.normal(0.03, 0.1, n), 0, 1)
    a = rng.binomial(1, p_a[:, None], (n, k)).astype(float)
    b = rng.binomial(1, p_b[:, None], (n, k)).astype(float)
    est = variance_components(a, b)
    assert est.omega2 == pytest.approx(np.var(p_a - p_b, ddof=1), abs=0.004)
    assert est.sigma_a2 == pytest.approx(np.mean(p_a * (1 - p_a)) * k / (k - 1) * (k - 1) / k, rel=0.05)
    assert est.k_a == k and est.questions == n


def test_variance_components_one_attempt() -> None:
    a = np.array([1, 0, 1, 1, 0, 1], float)
    b = np.array([1, 1, 0, 1, 0, 0], float)
    est = variance_components(a, b)
    assert est.sigma_a2 == 0 and est.sigma_b2 == 0
    assert est.omega2 == pytest.approx(np.var(a - b, ddof=1))
