"""Issue 18, finding 5: confirmatory slice groups at small n.

The slice test of "no material loss" (H0: p_candidate - p_baseline >= -m) is the exact
unconditional test (Sidik 2003). Reference values are computed here by brute force from the
multinomial distribution of the paired table, independently of evalspec's code; its error
rate is checked by exact enumeration over the whole null region at n = 5, 10, 20.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decision"))

from studies import paired_ctx  # noqa: E402

from evalspec.analyses.slices import MIN_LOSS_CASES  # noqa: E402
from evalspec.stats import paired_difference_interval  # noqa: E402
from evalspec.stats.paired_exact import paired_loss_test, smallest_group_for_loss  # noqa: E402

ALPHA = 0.025


def _pmf_tables(n: int, p12: np.ndarray, p21: np.ndarray) -> np.ndarray:
    """P(B = b, C = c) for every (b, c), at each (p12, p21): shape (points, n + 1, n + 1)."""
    b = np.arange(n + 1)[:, None]
    c = np.arange(n + 1)[None, :]
    valid = b + c <= n
    logc = np.vectorize(lambda i, j: math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(j + 1)
                        - math.lgamma(n - i - j + 1) if i + j <= n else -np.inf)(b, c)
    p12, p21 = p12[:, None, None], p21[:, None, None]
    rest = np.clip(1.0 - p12 - p21, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = (logc + np.where(b > 0, b * np.log(p12), 0.0) + np.where(c > 0, c * np.log(p21), 0.0)
                + np.where(n - b - c > 0, (n - b - c) * np.log(rest), 0.0))
    return np.where(valid, np.nan_to_num(np.exp(logp)), 0.0)


def _null_points(margin: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """A grid over the whole null region p12 - p21 >= -margin (p12 + p21 <= 1)."""
    g = np.linspace(0.0, 1.0, steps)
    p12, p21 = np.meshgrid(g, g, indexing="ij")
    keep = (p12 + p21 <= 1.0 + 1e-12) & (p12 - p21 >= -margin - 1e-12)
    return p12[keep], p21[keep]


def _brute_pvalue(region: np.ndarray, n: int, margin: float) -> float:
    """sup over the boundary p12 = p21 - margin of P(table in region), on a fine grid."""
    p21 = np.linspace(margin, (1 + margin) / 2, 4001)
    probs = _pmf_tables(n, np.clip(p21 - margin, 0, 1), p21)
    return float((probs * region[None]).sum(axis=(1, 2)).max())


def test_issue_reference_five_cases_four_lost():
    """b = 0, c = 4, one both-fail, margin 5 points: p >= 0.0498 (Newcombe inverted gave 0.0064)."""
    n, m = 5, 0.05
    b = np.arange(n + 1)[:, None]
    c = np.arange(n + 1)[None, :]
    region = (b - c <= -4) & (b + c <= n)  # the tables at least as extreme: (0, 4), (0, 5), (1, 5) is impossible
    ref = _brute_pvalue(region, n, m)
    got = paired_loss_test(0, 4, 5, m)
    assert got.pvalue == pytest.approx(ref, abs=1e-6)
    assert round(got.pvalue, 4) >= 0.0498  # the review rounds to four places
    assert 3 * got.pvalue >= 0.149  # Holm x 3


@pytest.mark.parametrize("m", [0.0, 0.05, 0.2])
def test_every_case_lost_has_the_closed_form_pvalue(m):
    """(0, n): only the table itself is as extreme; sup at p21 = (1 + m) / 2: p = ((1 + m) / 2)^n."""
    for n in (1, 3, 5, 8):
        assert paired_loss_test(0, n, n, m).pvalue == pytest.approx(((1 + m) / 2) ** n, rel=1e-6)
    # the 3-case group (b = 0, c = 3) of the issue: 0.125 at margin 0, never the 1.0 of the old bisection
    assert paired_loss_test(0, 3, 3, 0.0).pvalue == pytest.approx(0.125)


@pytest.mark.parametrize("n", [5, 10, 20])
@pytest.mark.parametrize("m", [0.0, 0.05])
def test_type_one_error_by_exact_enumeration(n, m):
    """The test rejects at p <= 2.5 %: its largest rejection probability over the whole null region
    (interior included, not only the boundary the p-value maximises over) is at most 2.5 %."""
    p = np.ones((n + 1, n + 1))
    for b in range(n + 1):
        for c in range(n + 1 - b):
            p[b, c] = paired_loss_test(b, c, n, m).pvalue
    reject = p <= ALPHA
    p12, p21 = _null_points(m, 121)
    size = (_pmf_tables(n, p12, p21) * reject[None]).sum(axis=(1, 2)).max()
    assert size <= ALPHA + 1e-9
    if n == 5:
        assert not reject.any()  # five cases can never show a loss at 2.5 %


@pytest.mark.parametrize("n", [5, 10, 20])
def test_newcombe_inversion_was_anticonservative(n):
    """What the exact test replaces: rejecting when Newcombe's one-sided 97.5 % upper bound is below 0
    has size above 2.5 % at these n (the review: 5.0 % at n = 5, 3.1 % at 10, 3.5 % at 20)."""
    reject = np.zeros((n + 1, n + 1), dtype=bool)
    for b in range(n + 1):
        for c in range(n + 1 - b):
            a = n - b - c  # concordant cases all both-pass or all both-fail give the extremes
            hi = max(paired_difference_interval(a, b, c, 0).high, paired_difference_interval(0, b, c, a).high)
            reject[b, c] = hi < 0
    p12, p21 = _null_points(0.0, 121)
    size = (_pmf_tables(n, p12, p21) * reject[None]).sum(axis=(1, 2)).max()
    assert size > ALPHA


def test_smallest_group_that_can_show_a_loss():
    assert smallest_group_for_loss(ALPHA, 0.0) == MIN_LOSS_CASES == 6
    for m in (0.02, 0.05, 0.1, 0.3):
        assert smallest_group_for_loss(ALPHA, m) >= MIN_LOSS_CASES


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.integers(1, 60), st.data())
def test_pvalue_is_monotone_in_losses(n, data):
    b = data.draw(st.integers(0, n))
    c = data.draw(st.integers(0, n - b))
    m = data.draw(st.sampled_from([0.0, 0.02, 0.1]))
    p = paired_loss_test(b, c, n, m).pvalue
    assert 0.0 < p <= 1.0
    if b + c < n:  # one more lost case (from a concordant one) is at least as much evidence of a loss
        assert paired_loss_test(b, c + 1, n, m).pvalue <= p + 1e-9


@settings(max_examples=15, deadline=None, derandomize=True, database=None)
@given(st.integers(1, 9), st.data())
def test_pvalue_matches_brute_force_enumeration(n, data):
    """Against the definition: tables ordered by Tango's score (the scalar formula), the sup over the
    boundary found on a fine grid."""
    from evalspec.stats import tango_score_statistic

    b0 = data.draw(st.integers(0, n))
    c0 = data.draw(st.integers(0, n - b0))
    m = data.draw(st.sampled_from([0.0, 0.05, 0.1]))
    z0 = tango_score_statistic(b0, c0, n, -m)
    region = np.zeros((n + 1, n + 1), dtype=bool)
    for b in range(n + 1):
        for c in range(n + 1 - b):
            region[b, c] = tango_score_statistic(b, c, n, -m) <= z0 + 1e-9
    assert paired_loss_test(b0, c0, n, m).pvalue == pytest.approx(_brute_pvalue(region, n, m), abs=2e-5)


# -- through the slices analysis ---------------------------------------------------------------------


def _slices(rows, labels, *, values=None, margin=0.05, **params):
    from evalspec.analyses.registry import get_kind
    from evalspec.plan.model import Slice

    ctx = paired_ctx(rows, case_columns={"topic": labels},
                     slices=[Slice(name="topic", column="topic", values=values)], margin=margin)
    k = get_kind("slices")
    return k.compute(ctx, k.params(kind="slices", **params))


def _rows(a, b, c, d):
    return [(1, 1)] * a + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * d


def test_five_case_group_is_not_a_material_loss():
    """The issue's study: a 5-case slice with b = 0, c = 4 and one both-fail beside two balanced slices."""
    big = _rows(150, 10, 10, 30)
    rows = big + big + _rows(0, 0, 4, 1)
    labels = ["x"] * 200 + ["y"] * 200 + ["z"] * 5
    out = _slices(rows, labels)
    z = next(g for g in out.result.slices[0].groups if g.value == "z")
    assert round(z.paired.pvalue_loss, 4) >= 0.0498 and "exact" in z.paired.pvalue_method
    assert z.paired.pvalue_loss_holm >= 0.149
    assert not z.paired.material_loss and out.offers.findings == []


def test_a_clear_loss_in_a_larger_group_is_still_found():
    rows = _rows(150, 10, 10, 30) + _rows(10, 1, 14, 5)
    labels = ["x"] * 200 + ["y"] * 30
    out = _slices(rows, labels)
    assert [f.name for f in out.offers.findings] == ["topic = y"]


@pytest.mark.parametrize("values", [None, ["y"]])
def test_family_of_one_group(values):
    """A slice column with one level, or values naming one level: one hypothesis, no crash (was exit 70)."""
    rows = _rows(10, 1, 14, 5)
    labels = ["y"] * 30
    if values:
        rows = _rows(50, 5, 5, 10) + rows
        labels = ["x"] * 70 + labels
    out = _slices(rows, labels, values=values)
    assert out.result.family_size == 1
    (g,) = out.result.slices[0].groups
    assert g.value == "y" and g.paired.adjustment == "none needed (one confirmatory group)"
    assert g.paired.material_loss and [f.name for f in out.offers.findings] == ["topic = y"]


def test_three_case_group_pvalue():
    out = _slices(_rows(100, 5, 5, 20) + _rows(0, 0, 3, 0), ["x"] * 130 + ["y"] * 3, margin=0.0)
    y = next(g for g in out.result.slices[0].groups if g.value == "y")
    assert y.paired.pvalue_loss == pytest.approx(0.125)
