"""A case table's count checks told a chunk of rows at a time (``case_checks._rows_above``): the rows it flags are
those the comparison of every row flags, whichever of its columns are one value broadcast, with a row above or none."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.results import case_checks


def _flagged(bad: np.ndarray, n: int) -> list[int]:
    if bad.shape == (1,) and n != 1:
        return list(range(n)) if bad[0] else []
    return np.flatnonzero(bad).tolist()


@settings(max_examples=200)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**16), one=st.sets(st.sampled_from([0, 1, 2])),
       less=st.booleans(), above=st.integers(-1, 59))
def test_rows_above_are_the_rows_every_row_compared_gives(n: int, seed: int, one: set[int], less: bool,
                                                          above: int) -> None:
    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, 5, n), rng.integers(10, 20, n), rng.integers(0, 5, n)]
    if 0 <= above < n and 0 not in one:
        cols[0][above] = 100  # (one row above: located, with every other row above)
    cols = [c[:1] if k in one else c for k, c in enumerate(cols)]
    left, right, sub = cols[0], cols[1], cols[2] if less else None
    want = left > (right if sub is None else right - sub)
    got = case_checks._rows_above(left, right, sub, chunk=4)  # (chunks of 4 rows: a column of 60 is 15)
    size = max(c.shape[0] for c in (left, right, *(() if sub is None else (sub,))))
    assert _flagged(got, size) == _flagged(want, size)
