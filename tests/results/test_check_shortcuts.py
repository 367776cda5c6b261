"""The checks' shortcuts against the general functions they replace (same answers, less memory)."""

from __future__ import annotations

import types

import numpy as np

from evalspec.attempts import attempt_order, attempt_ranks
from evalspec.results.checks import _extra_attempts


def test_extra_attempts_match_attempt_ranks() -> None:
    """Rows beyond the planned repeats and the group sizes, as ``attempt_ranks`` gives them per row."""
    rng = np.random.default_rng(1)
    for _ in range(2000):
        n = int(rng.integers(0, 50))
        cand, case, rep = rng.integers(0, 3, n), rng.integers(0, 6, n), rng.integers(0, 5, n)
        order = attempt_order(cand, case, rep)
        planned = int(rng.integers(1, 5))
        rank, size = attempt_ranks(cand, case, order)
        extra, sizes = _extra_attempts(types.SimpleNamespace(cand=cand, case=case), order, planned)
        assert extra.tolist() == (rank >= planned).tolist()
        if n:
            kept_rows = np.minimum(size[~extra], planned)
            kept = np.minimum(sizes, planned)
            assert int(size.max()) == int(sizes.max())
            assert (int(kept_rows.min()), int(kept_rows.max())) == (int(kept.min()), int(kept.max()))
            assert np.count_nonzero(kept_rows < planned) == int(kept[kept < planned].sum())
