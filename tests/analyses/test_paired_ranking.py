"""The clusters of a paired comparison ranked by contribution: one NumPy sort gives the order the Python sort by
(contribution, label) gives, ties (equal contributions, +0.0 and -0.0) broken by the label."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.analyses.paired import _ranked

_KEYS = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, 1e-13]), st.floats(-1e6, 1e6, allow_nan=False))


@settings(max_examples=300, derandomize=True)
@given(st.lists(st.tuples(_KEYS, st.text(max_size=4)), max_size=40, unique_by=lambda kt: kt[1]))
def test_ranked_is_the_python_sort_by_key_then_label(rows: list[tuple[float, str]]) -> None:
    keys, labels = [k for k, _ in rows], [t for _, t in rows]
    assert _ranked(keys, labels) == sorted(range(len(rows)), key=lambda t: (keys[t], labels[t]))


def test_equal_contributions_are_ordered_by_label() -> None:
    assert _ranked([1.0, -2.0, 1.0, -0.0, 0.0], ["b", "z", "a", "d", "c"]) == [1, 4, 3, 2, 0]
