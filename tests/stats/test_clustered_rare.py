"""Issue 18, finding 9: cluster-aware pass-rate intervals near 0 or 1.

With p = 0.02 or 0.98 and ICC 0.3, many samples of 20 clusters have no failure (or no pass): the
interval used to treat the cases as independent there (78-83 % coverage). It now counts clusters
when every outcome is equal, and its degrees of freedom follow the clusters that carry the
variance. Coverage is simulated here (Beta-Binomial clusters, fixed seed); the zero-width CR2
interval of a study whose fractional outcomes are all 0 (issue 19, finding 3) is replaced by an
honest one.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from evalspec.stats import clustered_proportion_interval

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decision"))

from studies import repeated_ctx  # noqa: E402


def _coverage(p: float, icc: float, g: int, reps: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    k = (1 - icc) / icc
    hit = allequal = 0
    for _ in range(reps):
        sizes = rng.integers(5, 16, size=g)
        labels = np.repeat(np.arange(g), sizes)
        y = (rng.random(labels.size) < rng.beta(p * k, (1 - p) * k, size=g)[labels]).astype(float)
        r = clustered_proportion_interval(y, labels)
        hit += r.low <= p <= r.high
        allequal += y.min() == y.max()
    return hit / reps, allequal / reps


@pytest.mark.parametrize("p", [0.02, 0.98])
@pytest.mark.parametrize("g", [20, 50])
def test_coverage_near_zero_and_one_with_clusters(p, g):
    cover, allequal = _coverage(p, 0.3, g, 300, seed=int(p * 100) + g)
    # 300 reps: Monte Carlo sd about 1.3 points at 95 %; the old interval gave 78-87 %
    assert cover >= 0.93, (cover, allequal)
    if g == 20:
        assert allequal > 0.1  # the design does reach the no-failure samples


def test_all_failed_under_the_mean_rule_is_not_a_zero_width_certainty():
    """HELM-style: 10 cases x 3 trials, every trial failed, rule mean: was '0.0 % (0.0 % to 0.0 %)'."""
    from evalspec.analyses.registry import get_kind

    ctx = repeated_ctx({"A": [[0, 0, 0]] * 10, "B": [[1, 0, 1]] * 10}, rule="mean")
    k = get_kind("proportion")
    out = k.compute(ctx, k.params(kind="proportion"))
    a = out.result.candidates["A"]
    assert a.estimate == 0.0 and a.low == 0.0
    # the 10 cases are the units: Wilson for 0 of 10 at 95 %
    z = 1.959963984540054
    assert a.high == pytest.approx(z * z / (10 + z * z), rel=1e-6)
    assert "zero width" in (a.note or "")
    assert not math.isclose(a.low, a.high)
