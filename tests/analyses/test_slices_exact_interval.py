"""Issue 18: the interval shown for a small slice group agrees with the exact test that flags a loss.

``paired_exact_interval`` inverts the exact unconditional test (Sidik 2003). Checked here: each
end's error rate by exact enumeration of every table at n = 8 over a grid of true (p12, p21)
(at most 2.5 %, where Newcombe's interval exceeds it), agreement of the upper end with the test
at every margin, its symmetry, and that a small group in the slices analysis shows it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decision"))

from test_slices_small_groups import _pmf_tables  # noqa: E402

from evalspec.analyses.slices import EXACT_INTERVAL_METHOD  # noqa: E402
from evalspec.stats import paired_difference_interval  # noqa: E402
from evalspec.stats.paired_exact import paired_exact_interval, paired_loss_test  # noqa: E402

N = 8


@pytest.fixture(scope="module")
def bounds() -> dict[tuple[int, int], tuple[float, float]]:
    return {(b, c): paired_exact_interval(b, c, N) for b in range(N + 1) for c in range(N + 1 - b)}


def _worst_miss(limits: dict[tuple[int, int], tuple[float, float]]) -> tuple[float, float]:
    """Largest P(lower end > truth) and P(upper end < truth) over a grid of (p12, p21)."""
    g = np.linspace(0.0, 1.0, 41)
    p12, p21 = (a.ravel() for a in np.meshgrid(g, g, indexing="ij"))
    keep = p12 + p21 <= 1.0 + 1e-12
    p12, p21 = p12[keep], p21[keep]
    probs = _pmf_tables(N, p12, p21)
    low = np.full((N + 1, N + 1), -np.inf)
    high = np.full((N + 1, N + 1), np.inf)
    for (b, c), (lo, hi) in limits.items():
        low[b, c], high[b, c] = lo, hi
    delta = (p12 - p21)[:, None, None]
    above = (probs * (low[None] > delta + 1e-12)).sum(axis=(1, 2))
    below = (probs * (high[None] < delta - 1e-12)).sum(axis=(1, 2))
    return float(above.max()), float(below.max())


def test_each_end_errs_at_most_its_level_at_n8_where_newcombe_does_not(bounds):
    above, below = _worst_miss(bounds)
    assert above <= 0.025 + 1e-9 and below <= 0.025 + 1e-9, (above, below)
    newcombe = {}
    for b, c in bounds:
        r = paired_difference_interval(N - b - c, b, c, 0)
        newcombe[(b, c)] = (r.low, r.high)
    assert max(_worst_miss(newcombe)) > 0.03


def test_upper_end_agrees_with_the_loss_test(bounds):
    for (b, c), (_, high) in bounds.items():
        assert bounds[(c, b)][0] == pytest.approx(-high, abs=1e-12)
        assert bounds[(b, c)][0] <= (b - c) / N <= high
        for m in (0.0, 0.05, 0.2):
            shows_loss = paired_loss_test(b, c, N, m).pvalue < 0.025
            assert shows_loss == (high < -m), (b, c, m, high)


def test_nested_across_levels():
    for b, c, n in ((0, 4, 5), (2, 8, 20), (10, 25, 60)):
        lo90, hi90 = paired_exact_interval(b, c, n, 0.9)
        lo95, hi95 = paired_exact_interval(b, c, n, 0.95)
        assert lo95 <= lo90 <= hi90 <= hi95


def test_a_five_case_group_shows_the_exact_interval():
    """The issue's study (b = 0, c = 4, one both-fail beside two balanced 200-case groups): the exact p at a
    5-point margin is 0.0498, no loss; Newcombe's upper end (-19 points) lay below the margin, the shown
    interval (the exact one at the group's Holm step) reaches above it, so page and finding agree."""
    from test_slices_small_groups import _rows, _slices

    big = _rows(150, 10, 10, 30)
    out = _slices(big + big + _rows(0, 0, 4, 1), ["x"] * 200 + ["y"] * 200 + ["z"] * 5)
    groups = {g.value: g for g in out.result.slices[0].groups}
    z = groups["z"]
    assert z.paired.method == EXACT_INTERVAL_METHOD
    assert z.paired.high > -0.05 and not z.paired.material_loss
    assert paired_difference_interval(0, 0, 4, 1).high < -0.05
    assert groups["x"].paired.method != EXACT_INTERVAL_METHOD  # 200 cases: Newcombe's interval
    # the group's shown interval is the exact one at its Holm step (rank 0 of 3: one-sided 2.5 % / 3)
    lo, hi = paired_exact_interval(0, 4, 5, 1 - 2 * 0.025 / 3)
    assert (z.paired.low, z.paired.high) == pytest.approx((lo, hi), abs=1e-12)
    assert not any("does not show a loss" in n for n in z.paired.notes)
