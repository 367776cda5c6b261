"""``held_values``: a case attribute narrowed to the values some case holds (values and order kept)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from evalspec.results.values import held_values


@given(st.integers(1, 6).flatmap(lambda k: st.tuples(st.just(k), st.lists(st.integers(-1, k - 1), max_size=30))))
def test_each_case_keeps_its_value_and_only_held_values_remain(drawn: tuple[int, list[int]]) -> None:
    k, codes_list = drawn
    uniques = np.array([f"v{i}" for i in range(k)], dtype=object)
    codes = np.array(codes_list, dtype=np.int64)
    new_codes, new_uniques = held_values(codes, uniques)
    assert new_codes.shape == codes.shape and ((new_codes < 0) == (codes < 0)).all()
    assert [new_uniques[c] for c in new_codes[new_codes >= 0]] == [uniques[c] for c in codes[codes >= 0]]
    assert sorted(set(new_codes[new_codes >= 0].tolist())) == list(range(len(new_uniques)))  # every value held
    assert list(new_uniques) == [u for u in uniques if u in set(new_uniques)]  # in their order


def test_nothing_held_leaves_no_values() -> None:
    codes, uniques = held_values(np.array([-1, -1]), np.array(["a", "b"], dtype=object))
    assert codes.tolist() == [-1, -1] and len(uniques) == 0
