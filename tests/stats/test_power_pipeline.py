"""Issue 18, finding 8: the power evalspec reports is the power of the decision it applies.

Small clustered designs are simulated through the real pipeline (the paired_difference analysis,
method auto = CR2 t, and the decision): the share of studies whose interval excludes 0, and the
share whose verdict is ``worth_acting_on``, against :func:`clustered_paired_power`. The normal
formula (Miller eq. 9 x Kish) is shown to overstate it.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decision"))

from studies import Dec, paired_ctx, verdict_of  # noqa: E402

from evalspec.stats.power import clustered_paired_power, minimum_detectable_effect  # noqa: E402

G, M = 8, 40


def _cluster_rates(rng: np.random.Generator, g: int) -> tuple[np.ndarray, np.ndarray]:
    pb = rng.beta(0.6 * 4, 0.4 * 4, g)
    pa = np.clip(pb + 0.18 + rng.normal(0, 0.12, g), 0, 1)
    return pa, pb


def _components() -> tuple[float, float, float]:
    """True mean difference, per-case variance V and the ICC of the per-case difference (large sample)."""
    rng = np.random.default_rng(99)
    pa, pb = _cluster_rates(rng, 400_000)
    mu_g = pa - pb
    delta = float(mu_g.mean())
    within = float(np.mean(pa * (1 - pa) + pb * (1 - pb)))  # independent outcomes given the cluster
    between = float(mu_g.var())
    v = within + between
    return delta, v, between / v


def test_power_matches_the_pipeline_and_eq9_overstates_it():
    delta, v, icc = _components()
    rng = np.random.default_rng(7)
    reps, excl, worth = 300, 0, 0
    mi = delta  # the true gain equals the minimum improvement
    for _ in range(reps):
        pa, pb = _cluster_rates(rng, G)
        labels = np.repeat(np.arange(G), M)
        a = (rng.random(G * M) < pa[labels]).astype(int)
        b = (rng.random(G * M) < pb[labels]).astype(int)
        ctx = paired_ctx(list(zip(a.tolist(), b.tolist(), strict=True)), clusters=[f"g{c}" for c in labels])
        out = verdict_of(ctx, Dec(minimum_improvement=round(mi, 6)))
        excl += out.primary.low > 0
        worth += out.verdict == "worth_acting_on"
    predicted = clustered_paired_power(delta, v, clusters=G, cluster_size=M, icc=icc)
    simulated = excl / reps
    assert simulated == pytest.approx(predicted, abs=0.08), (simulated, predicted)
    # eq. 9 x Kish at these units claims more power than the rule has
    deff = 1 + (M - 1) * icc
    z_power = 0.5 * math.erfc(-(delta / math.sqrt(v * deff / (G * M)) - 1.959963984540054) / math.sqrt(2))
    assert z_power > predicted + 0.05
    assert minimum_detectable_effect(G * M, v, deff=deff) < delta  # eq. 10: 'detectable' below the true gain
    # P(worth acting on) at a true gain equal to the minimum improvement: one-sided alpha, not the power above
    p_worth = clustered_paired_power(delta, v, clusters=G, cluster_size=M, icc=icc, threshold=mi)
    assert p_worth == pytest.approx(0.025, abs=1e-9)
    assert worth / reps <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / reps)
