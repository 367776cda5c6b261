"""The T_bg estimator (numpy only): KS reference cases, recovery, ties, K matching, coverage.

Recovery and coverage use :class:`tbg_synthetic.SyntheticModel`, a numpy stand-in for a
language model (per-prompt random logits per position and previous token, sampled at T),
so the system under test is "the reference model at a hidden temperature", as in the paper's
validation idea, without torch.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tbg_synthetic import SyntheticModel

from evalspec.stats.distance import ks_distance
from evalspec.tbg.estimate import estimate_from_answers, fast_ks_curves
from evalspec.tbg.metrics import METRICS

CASES = json.loads((Path(__file__).resolve().parents[1] / "stats" / "data" / "statistics-cases.json").read_text())
KS_CASES = [c for c in CASES if c["statistic"] == "two-sample Kolmogorov-Smirnov D"]
GRID = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5]


@pytest.mark.parametrize("case", KS_CASES, ids=[c["id"] for c in KS_CASES])
def test_ks_reference_cases(case):
    """Published D (scipy.stats.ks_2samp, R ks.test, hand ECDF) at the case's tolerance, on both KS paths."""
    x = np.asarray(case["inputs"]["x1"], dtype=float)
    y = np.asarray(case["inputs"]["x2"], dtype=float)
    assert ks_distance(x, y).statistic == pytest.approx(case["expected"], abs=case["tolerance"])
    # the bootstrap path: one "prompt" holding the whole sample, weight 1
    assert fast_ks_curves(x[None, :], [y[None, :]], np.ones((1, 1)))[0, 0] == pytest.approx(
        case["expected"], abs=case["tolerance"])


def test_fast_ks_equals_ks_distance_on_pooled_values():
    rng = np.random.default_rng(3)
    g = rng.integers(0, 5, size=(30, 4)) / 4
    refs = [rng.integers(0, 5, size=(30, 1)) / 4 for _ in range(6)]
    fast = fast_ks_curves(g, refs, np.ones((1, 30)))[0]
    for t, f in enumerate(refs):
        assert fast[t] == pytest.approx(ks_distance(g.ravel(), f.ravel()).statistic, abs=1e-12)
    # a resample: weights = counts; equals KS of the explicitly repeated rows
    w = rng.multinomial(30, np.full(30, 1 / 30))
    rows = np.repeat(np.arange(30), w)
    fast_b = fast_ks_curves(g, refs, w[None, :].astype(float))[0]
    for t, f in enumerate(refs):
        assert fast_b[t] == pytest.approx(ks_distance(g[rows].ravel(), f[rows].ravel()).statistic, abs=1e-12)


@pytest.fixture(scope="module")
def synthetic():
    model = SyntheticModel(prompts=40, seed=0)
    return model, model.table(GRID, 32, seed=1)


@pytest.mark.parametrize("hidden", [0.03, 0.07, 0.15, 0.3])
@pytest.mark.parametrize("metric", sorted(METRICS))
def test_recovers_hidden_temperature_within_one_grid_step(synthetic, hidden, metric):
    model, ref = synthetic
    sut = model.answers(hidden, 32, seed=99)
    est = estimate_from_answers([("synthetic", ref)], sut, metric=metric, resamples=300)
    r = est.references[0]
    i = GRID.index(hidden)
    assert GRID[i - 1] <= r.t_hat <= GRID[min(i + 1, len(GRID) - 1)], (r.t_hat, r.tied)
    assert r.interval[0] <= r.t_hat <= r.interval[1]
    assert not est.indistinguishable
    assert est.t_bg == r.t_hat  # one reference: the mean is its T_hat


def test_deterministic_target_is_indistinguishable_not_zero(synthetic):
    model, ref = synthetic
    sut = model.answers(0.0, 32, seed=5)
    est = estimate_from_answers([("synthetic", ref)], sut, resamples=300)
    r = est.references[0]
    assert r.indistinguishable and est.indistinguishable
    assert 0.0 in r.tied and r.ks_vs_zero == 0.0
    assert "Indistinguishable from deterministic at this resolution" in est.summary
    assert "T_bg = 0" not in est.summary


def test_variation_below_the_grid_is_distinguishable_but_not_resolved():
    """Like fp32 on a GPU with TF32 allowed (benchmarks/gpu_tbg.py): a few prompts vary, less than at T = 0.01.

    6 of 48 prompts show two answers at nominal T = 0 against a reference that is deterministic at
    T = 0 and already varied at 0.01 on many prompts. T = 0 stays the closest grid point, but the
    target is not deterministic: the prompt-swap test rejects (exactly: KS 6/48 is reached by a flip
    only when all six varying prompts land on one side, probability 2 * 2^-6 = 1/32 < 0.05).
    """
    det = {f"p{i}": [(1, 2, 3)] * 8 for i in range(48)}
    varied = {f"p{i}": [(1, 2, 3)] * 4 + [(1, 2, 4)] * 2 + [(5,)] * 2 for i in range(48)}
    ref = {0.0: det, 0.01: varied, 0.1: {p: [(j,) for j in range(8)] for p in det}}
    target = {p: (a if i >= 6 else [(1, 2, 3)] * 7 + [(9,)]) for i, (p, a) in enumerate(det.items())}
    r = estimate_from_answers([("r", ref)], target, resamples=300).references[0]
    assert r.t_hat == 0.0 and r.ks_vs_zero == pytest.approx(6 / 48)
    assert r.p_vs_deterministic == pytest.approx(1 / 32, abs=0.012)
    assert not r.indistinguishable
    one = {p: (a if i >= 1 else [(1, 2, 3)] * 7 + [(9,)]) for i, (p, a) in enumerate(det.items())}
    r1 = estimate_from_answers([("r", ref)], one, resamples=300)
    assert r1.references[0].p_vs_deterministic == 1.0 and r1.indistinguishable  # one prompt: cannot tell at this resolution


def test_ties_are_reported_as_a_set():
    """A target whose spread equals the reference at several temperatures: the whole tied set is reported."""
    same = {f"p{i}": [(1, 2)] * 8 for i in range(10)}
    spread = {f"p{i}": [(1, 2)] * 4 + [(3,), (4,), (5,), (6,)] for i in range(10)}
    ref = {0.0: same, 0.01: same, 0.02: same, 0.5: spread}
    est = estimate_from_answers([("r", ref)], same, resamples=200)
    r = est.references[0]
    assert r.tied == [0.0, 0.01, 0.02]
    assert r.t_hat == 0.01  # lower median of the tied set
    assert r.ks_min == 0.0
    assert any("3 temperatures tie" in n for n in est.notes)
    est2 = estimate_from_answers([("r", ref)], spread, resamples=200)
    assert est2.references[0].tied == [0.5] and not est2.indistinguishable
    assert any("top of the grid" in n for n in est2.notes)


def test_k_matching_removes_the_bias_of_a_larger_target():
    """Target with 128 answers per prompt vs a 32-answer reference (longer answers, many distinct).

    Compared naively (entropy of all 128 answers against the reference's 32-answer entropy) a
    T = 0.15 target reads 0.25 here: 128 answers show more distinct answers than 32 can. After
    subsampling the target to K = 32 the estimate is back within one grid step.
    """
    from evalspec.tbg.metrics import metric_value

    model = SyntheticModel(prompts=40, seed=0, length=16, vocab=30, scale=2.0)
    ref = model.table(GRID, 32, seed=1)
    hidden = 0.15
    sut = model.answers(hidden, 128, seed=7)
    est = estimate_from_answers([("synthetic", ref)], sut, metric="entropy", resamples=200)
    assert est.k == 32
    assert 0.12 <= est.references[0].t_hat <= 0.2
    assert any("subsampled to K = 32" in n for n in est.notes)
    naive_g = np.array([metric_value("entropy", sut[p]) for p in model.prompts])
    naive = [ks_distance(naive_g, np.array([metric_value("entropy", ref[t][p]) for p in model.prompts])).statistic
             for t in GRID]
    naive_t = GRID[int(np.argmin(naive))]
    assert naive_t >= 0.25, naive_t  # the bias the K matching removes


def test_two_references_mean_and_heatmap(synthetic):
    model, ref = synthetic
    other = SyntheticModel(prompts=40, seed=11, scale=4.0)  # a "less temperature-sensitive" reference
    ref2 = other.table(GRID, 32, seed=2)
    sut = model.answers(0.1, 32, seed=3)
    est = estimate_from_answers([("a", ref), ("b", ref2)], sut, resamples=200)
    t_a, t_b = (r.t_hat for r in est.references)
    assert est.t_bg == pytest.approx((t_a + t_b) / 2)
    assert est.t_bg_interval[0] <= est.t_bg <= est.t_bg_interval[1]
    (hm,) = est.heatmaps
    assert len(hm["ks"]) == len(GRID) and len(hm["ks"][0]) == len(GRID)
    assert all(0 <= v <= 1 for row in hm["ks"] for v in row)
    assert json.loads(json.dumps(est.to_json()))["t_bg"] == est.t_bg


@pytest.mark.slow
def test_interval_coverage_simulated():
    """Coverage of the prompt-bootstrap interval for a hidden T on the grid, 40 independent studies.

    Each study draws a fresh reference run and a fresh target (30 prompts, K = 16). The interval
    is conservative by construction (tied-set ends); measured here 40/40 at T = 0.06 and 0.15 for
    exact match and entropy. Asserted: at least 36/40 (a 95 % interval covering at 95 % misses
    more than 4 of 40 with probability about 0.14, so a miss of 5 would already be suspicious).
    """
    grid = [0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3]
    model = SyntheticModel(prompts=30)
    hits = 0
    for rep in range(40):
        ref = model.table(grid, 16, seed=1000 + rep)
        sut = model.answers(0.06, 16, seed=5000 + rep)
        lo, hi = estimate_from_answers([("s", ref)], sut, resamples=200, seed=rep).references[0].interval
        hits += lo <= 0.06 <= hi
    assert hits >= 36, hits


def test_refuses_unusable_input(synthetic):
    model, ref = synthetic
    sut = model.answers(0.1, 32, seed=3)
    with pytest.raises(ValueError, match="unknown metric"):
        estimate_from_answers([("r", ref)], sut, metric="bleu")
    with pytest.raises(ValueError, match="at least 5"):
        estimate_from_answers([("r", ref)], {p: sut[p] for p in model.prompts[:3]})
    with pytest.raises(ValueError, match="more than the answers available"):
        estimate_from_answers([("r", ref)], sut, k=64)
    with pytest.raises(ValueError, match="no reference"):
        estimate_from_answers([], sut)
