"""Issue 18, finding 8: power for unequal cluster sizes, computed for the rule evalspec applies.

The simulated interval (:func:`evalspec.stats.power_simulation.interval_bounds`) is checked against
the analysis kernel it stands for, the equal-size simulation against the noncentral-t formula, and
the unequal-size prediction against studies run through the real ``paired_difference`` analysis and
the decision. The plan input ``power.cluster_size_cv`` is validated at its line and leaves the hash of
plans that do not use it unchanged.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from evalspec.cli import cli
from evalspec.stats import clustered_mean_interval
from evalspec.stats.power import clustered_paired_power
from evalspec.stats.power_simulation import (
    detectable_from_bounds,
    interval_bounds,
    power_from_bounds,
    simulate_bounds,
    simulated_clusters_needed,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decision"))

from studies import Dec, paired_ctx, verdict_of  # noqa: E402
from test_power_plan import NO_CLUSTER, NO_CLUSTER_METHOD, _load, _plan  # noqa: E402


def test_simulated_interval_is_the_analysis_kernel():
    """Rows with sizes of CV above 1 use CR3 with Hall's transformation, others CR2-BM: as method auto."""
    rng = np.random.default_rng(3)
    n = np.maximum(1, np.rint(np.exp(1.5 + rng.choice([0.3, 1.3], size=(12, 1)) * rng.standard_normal((12, 15)))))
    means = rng.standard_normal(n.shape) * 0.3
    low, high, heavy = interval_bounds(n, means, 0.025)
    assert 0 < heavy.sum() < heavy.size
    for i in range(n.shape[0]):
        values = np.repeat(means[i], n[i].astype(int))
        labels = np.repeat(np.arange(n.shape[1]), n[i].astype(int))
        assert heavy[i] == (n[i].std() / n[i].mean() > 1.0)
        r = clustered_mean_interval(values, labels, correction="CR3" if heavy[i] else "CR2",
                                    skew_corrected=bool(heavy[i]))
        assert (low[i], high[i]) == pytest.approx((r.low, r.high), abs=1e-12)


def test_equal_sizes_reproduce_the_noncentral_t_formula():
    b = simulate_bounds(clusters=8, cluster_size=40, icc=0.2, variance=0.3, studies=20_000, seed=1)
    for delta in (0.1, 0.18, 0.3):
        exact = clustered_paired_power(delta, 0.3, clusters=8, cluster_size=40, icc=0.2)
        assert power_from_bounds(b, delta) == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 20_000))
    # shift equivariance: the detectable difference is where the simulated power is the target
    d80 = detectable_from_bounds(b, 0.8)
    assert power_from_bounds(b, d80 + 1e-9) >= 0.8 > power_from_bounds(b, d80 - 1e-3)


def test_fewer_than_five_clusters_decide_nothing():
    b = simulate_bounds(clusters=4, cluster_size=10, icc=0.1, variance=0.3, studies=50)
    assert power_from_bounds(b, 10.0) == 0.0 and detectable_from_bounds(b, 0.8) == math.inf


def test_unequal_sizes_need_more_clusters_and_are_reproducible():
    kw = dict(cluster_size=10, icc=0.1, variance=0.3)
    equal = simulated_clusters_needed(0.1, 0.8, **kw)
    spread = simulated_clusters_needed(0.1, 0.8, size_cv=1.0, **kw)
    assert spread == simulated_clusters_needed(0.1, 0.8, size_cv=1.0, **kw)
    assert equal is not None and spread is not None and spread > equal * 1.3
    pilot = simulated_clusters_needed(0.1, 0.8, sizes=[1, 2, 3, 5, 8, 13, 40], **kw)
    assert pilot is not None and pilot > equal


def _study_rates(rng: np.random.Generator, g: int) -> tuple[np.ndarray, np.ndarray]:
    pb = rng.beta(0.6 * 6, 0.4 * 6, g)
    pa = np.clip(pb + 0.12 + rng.normal(0, 0.1, g), 0, 1)
    return pa, pb


def _components() -> tuple[float, float, float]:
    rng = np.random.default_rng(99)
    pa, pb = _study_rates(rng, 400_000)
    mu = pa - pb
    within = float(np.mean(pa * (1 - pa) + pb * (1 - pb) - 0.0))
    v = within + float(mu.var())
    return float(mu.mean()), v, float(mu.var()) / v


def test_unequal_size_power_matches_the_pipeline_and_the_equal_size_formula_overstates_it():
    """150 studies of 30 clusters with lognormal sizes (mean 10, CV 1) through paired_difference (auto)
    and the decision: the share showing a gain against the simulated prediction (Monte Carlo sd of the
    share about 4 points), and P(worth acting on) at a true gain equal to the minimum improvement."""
    delta, v, icc = _components()
    g, m, cv = 30, 10.0, 1.0
    s2 = math.log1p(cv * cv)
    rng = np.random.default_rng(17)
    reps, shown, worth = 150, 0, 0
    for _ in range(reps):
        sizes = np.maximum(1, np.rint(np.exp(math.log(m) - s2 / 2 + math.sqrt(s2) * rng.standard_normal(g))))
        labels = np.repeat(np.arange(g), sizes.astype(int))
        pa, pb = _study_rates(rng, g)
        a = (rng.random(labels.size) < pa[labels]).astype(int)
        b = (rng.random(labels.size) < pb[labels]).astype(int)
        ctx = paired_ctx(list(zip(a.tolist(), b.tolist(), strict=True)), clusters=[f"g{c}" for c in labels])
        out = verdict_of(ctx, Dec(minimum_improvement=round(delta, 6)))
        shown += out.primary.low > 0
        worth += out.verdict == "worth_acting_on"
    bounds = simulate_bounds(clusters=g, cluster_size=m, icc=icc, variance=v, size_cv=cv, studies=4000, seed=2)
    predicted = power_from_bounds(bounds, delta)
    assert shown / reps == pytest.approx(predicted, abs=0.1), (shown / reps, predicted)
    assert clustered_paired_power(delta, v, clusters=g, cluster_size=m, icc=icc) > predicted + 0.05
    assert power_from_bounds(bounds, delta, threshold=delta) <= 0.025 + 0.01
    assert worth / reps <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / reps)


def test_plan_input_is_used_recorded_and_worded(tmp_path: Path) -> None:
    from evalspec.power import SIMULATION_SEED, assess

    power = "  omega2: 0.1111111111111111\n  icc: 0.2\n  cluster_size: 5\n"
    equal = assess(_load(_plan(tmp_path, power=power)))
    spread = assess(_load(_plan(tmp_path, power=power + "  cluster_size_cv: 1.2\n")))
    assert spread.needed["80%"]["clusters"] > equal.needed["80%"]["clusters"]
    assert "simulation" in spread.method and f"seed {SIMULATION_SEED}" in spread.method
    assert spread.simulation == {"studies": 2000, "seed": SIMULATION_SEED} and equal.simulation is None
    assert spread.to_dict() == assess(_load(_plan(tmp_path, power=power + "  cluster_size_cv: 1.2\n"))).to_dict()
    w = spread.worth_acting_on
    assert w is not None and w["if_true_gain_is_minimum"] <= 0.035 < w["gain_shown_if_true_gain_is_minimum"]
    res = CliRunner().invoke(cli, ["power", str(tmp_path / "plan.yaml")])
    assert "'worth acting on'" in res.output and "a gain shown" in res.output, res.output
    assert "units for the interval to exclude 0" in res.output


def test_cluster_size_cv_is_validated_at_its_line(tmp_path: Path) -> None:
    bad = _plan(tmp_path, power="  omega2: 0.11\n  cluster_size_cv: 0.8\n")
    res = CliRunner().invoke(cli, ["validate", str(bad)])
    assert res.exit_code == 1 and "power.cluster_size_cv" in res.output and "needs cluster_size" in res.output
    neg = _plan(tmp_path, power="  omega2: 0.11\n  cluster_size: 4\n  cluster_size_cv: -1\n")
    res = CliRunner().invoke(cli, ["validate", str(neg)])
    assert res.exit_code == 1 and "power.cluster_size_cv" in res.output


def test_plans_without_it_keep_their_hash(tmp_path: Path) -> None:
    from evalspec.plan.canonical import canonical_json

    plan = _load(_plan(tmp_path, power="  omega2: 0.11\n  cluster_size: 4\n"))
    assert "cluster_size_cv" not in plan.model_dump()["power"]
    assert "cluster_size_cv" not in canonical_json(plan)
    with_cv = _load(_plan(tmp_path, power="  omega2: 0.11\n  cluster_size: 4\n  cluster_size_cv: 0.5\n"))
    assert '"cluster_size_cv":0.5' in canonical_json(with_cv)


def test_validate_does_not_call_it_the_verdicts_power(tmp_path: Path) -> None:
    path = _plan(tmp_path, NO_CLUSTER, NO_CLUSTER_METHOD, power="  omega2: 0.1111111111111111\n")
    res = CliRunner().invoke(cli, ["validate", str(path)])
    assert "are needed for the interval to exclude 0" in res.output
    assert "not the chance of the verdict 'worth acting on'" in res.output
