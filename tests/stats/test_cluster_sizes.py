"""``cluster_sizes``: the rows in each cluster in ``np.unique``'s order, counted without a sort for integer labels."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from evalspec.stats import cluster_sizes


def _reference(labels: np.ndarray) -> list[int]:
    if labels.size == 0:
        return []
    return np.bincount(np.unique(labels, return_inverse=True)[1].reshape(-1)).tolist()


@given(labels=st.one_of(
    arrays(np.int64, st.integers(0, 60), elements=st.integers(-3, 40)),  # codes, with gaps and negatives
    arrays(np.int32, st.integers(0, 60), elements=st.integers(0, 5)),
    arrays(np.int64, st.integers(0, 30), elements=st.integers(-(2**62), 2**62)),  # too wide for counting
    arrays(np.dtype("U3"), st.integers(0, 30), elements=st.sampled_from(["a", "b", "c d", "é", ""])),
    arrays(np.uint16, st.integers(0, 40), elements=st.integers(0, 9)),
    st.integers(1, 12).flatmap(lambda g: st.permutations(list(range(g)) * 2).map(np.array)),  # dense codes 0..G-1
))
def test_cluster_sizes_are_np_unique_counts(labels: np.ndarray) -> None:
    got = cluster_sizes(labels)
    assert got.dtype == np.int64
    assert got.tolist() == _reference(labels)
    assert int(got.sum()) == labels.size


def test_cluster_sizes_of_a_list() -> None:
    assert cluster_sizes([3, 1, 3, 3, 7]).tolist() == [1, 3, 1]
    assert cluster_sizes(np.zeros(0, dtype=np.int64)).tolist() == []


@given(labels=st.one_of(
    arrays(np.int64, st.integers(1, 60), elements=st.integers(-3, 40)),
    arrays(np.uint8, st.integers(1, 40), elements=st.integers(0, 6)),
    arrays(np.bool_, st.integers(1, 20)),
    st.integers(1, 12).flatmap(lambda g: st.permutations(list(range(g)) * 3).map(np.array)),  # dense codes 0..G-1
))
def test_cluster_codes_are_np_unique_inverse(labels: np.ndarray) -> None:
    """Integer labels are coded in O(n): the codes and count ``np.unique`` gives (codes 0..G-1 are their own)."""
    from evalspec.stats._validation import _cluster_codes

    codes, n = _cluster_codes(labels, labels.size)
    uniq, inverse = np.unique(labels, return_inverse=True)
    assert n == uniq.size and codes.tolist() == inverse.reshape(-1).tolist()
