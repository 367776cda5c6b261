"""Hypothesis strategies for the statistics tests (shared by any test that needs them).

Import as ``from tests.strategies import ...`` (the repository root is on ``sys.path`` when
pytest runs as ``python -m pytest``; ``tests/stats/conftest.py`` also makes sure of it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

__all__ = [
    "binomial_counts",
    "clustered_outcomes",
    "confidence_levels",
    "level_pairs",
    "paired_tables",
]

#: Confidence levels from 50 % to 99.9 % (where every method is defined and used).
confidence_levels = st.floats(min_value=0.5, max_value=0.999, allow_nan=False)


@st.composite
def level_pairs(draw: Any) -> tuple[float, float]:
    """Two distinct confidence levels ``(lower, higher)``."""
    lo = draw(st.floats(min_value=0.5, max_value=0.99))
    hi = draw(st.floats(min_value=lo + 0.001, max_value=0.999))
    return lo, hi


@st.composite
def binomial_counts(draw: Any, max_n: int = 2000) -> tuple[int, int]:
    """``(successes, n)`` with ``1 <= n <= max_n``, biased towards the boundaries 0 and n."""
    n = draw(st.integers(min_value=1, max_value=max_n))
    x = draw(st.one_of(st.sampled_from([0, n, 1 if n > 1 else 0, n - 1]), st.integers(min_value=0, max_value=n)))
    return x, n


@st.composite
def paired_tables(draw: Any, max_cell: int = 300) -> tuple[int, int, int, int]:
    """A non-empty paired 2x2 table ``(a, b, c, d)``, often with empty cells."""
    cell = st.one_of(st.just(0), st.integers(min_value=0, max_value=5), st.integers(min_value=0, max_value=max_cell))
    table = draw(st.tuples(cell, cell, cell, cell))
    if sum(table) == 0:
        table = (table[0] + 1, *table[1:])
    return table


@st.composite
def clustered_outcomes(draw: Any, max_clusters: int = 25, max_size: int = 8, binary: bool = True) -> dict[str, Any]:
    """Paired per-case outcomes ``x``, ``y`` with cluster labels (at least 2 clusters)."""
    g = draw(st.integers(min_value=2, max_value=max_clusters))
    sizes = draw(st.lists(st.integers(min_value=1, max_value=max_size), min_size=g, max_size=g))
    n = sum(sizes)
    if binary:
        values = st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)
    else:
        values = st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=n, max_size=n)
    x = np.array(draw(values))
    y = np.array(draw(values))
    labels = np.repeat(np.arange(g), sizes)
    return {"x": x, "y": y, "clusters": labels}
