"""Issue 18, finding 10: a background temperature below the grid's resolution.

A true T = 0.003 on the grid 0, 0.01, ... is closest to T = 0: the estimate can only say it is
below 0.01. The interval's upper end is then the lowest non-zero grid value, marked open, and the
words say "below the lowest non-zero grid value (< 0.01)" -- never "at most 0" or [0, 0], which
excludes the truth.
"""

from __future__ import annotations

import re

import numpy as np
from tbg_synthetic import SyntheticModel

from evalspec.tbg.estimate import estimate_from_answers

GRID = [0.0, 0.01, 0.02, 0.05, 0.1]


def _check(est, truth: float) -> bool:
    lo, hi = est.t_bg_interval
    assert lo <= truth < hi, est.summary  # the interval holds the truth (the upper end excluded when open)
    assert not re.search(r"at most 0(?![.\d])", est.summary)
    if est.t_bg_high_open:
        assert hi == 0.01 and "below the lowest non-zero grid value (< 0.01)" in est.summary
        assert est.references[0].high_open and est.references[0].interval[1] == 0.01
    return est.t_bg_high_open


def test_true_temperature_below_the_grid_is_never_at_most_zero():
    for scale in (1.0, 3.0):
        model = SyntheticModel(prompts=30, seed=0, scale=scale)
        table = model.table(GRID, 16, seed=1)
        for study in range(3):
            target = model.answers(0.003, 16, seed=100 + study)
            _check(estimate_from_answers([("synthetic", table)], target, resamples=200, seed=study), 0.003)


def test_a_target_closest_to_zero_everywhere_is_below_the_resolution():
    """Every bootstrap replicate picks T = 0 (the [0, 0] of the issue): the target answers as the
    reference at T = 0 except one prompt that varies a little -- a temperature in (0, 0.01)."""
    model = SyntheticModel(prompts=30, seed=0, scale=1.0)
    table = model.table(GRID, 16, seed=1)
    target = dict(model.answers(0.0, 16, seed=5))
    first = sorted(target)[0]
    target[first] = list(target[first][:-1]) + [model.answers(0.05, 16, seed=6)[first][0]]
    est = estimate_from_answers([("synthetic", table)], target, resamples=200, seed=0)
    assert _check(est, 0.003)
    assert est.t_bg_interval == (0.0, 0.01)


def test_upper_end_closed_when_the_temperature_is_resolved():
    model = SyntheticModel(prompts=30, seed=0)
    table = model.table(GRID, 16, seed=1)
    est = estimate_from_answers([("synthetic", table)], model.answers(0.05, 16, seed=7), resamples=200, seed=0)
    assert not est.t_bg_high_open and est.t_bg_interval[1] >= 0.05
    assert "below the lowest" not in est.summary
    assert np.isfinite(est.t_bg)
