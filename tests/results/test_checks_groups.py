"""The repeat rank and group size of every row, from the one sort the checks and the attempt rules share (hypothesis)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.attempts import attempt_order, attempt_ranks

rows = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 6), st.integers(-3, 40)), max_size=80)


@settings(max_examples=200, deadline=None)
@given(rows)
def test_rank_and_size_match_a_per_group_count(data: list[tuple[int, int, int]]) -> None:
    t = SimpleNamespace(cand=np.array([r[0] for r in data], dtype=np.int64),
                        case=np.array([r[1] for r in data], dtype=np.int64),
                        repeat=np.array([r[2] for r in data], dtype=np.int64), case_ids=list(range(7)))
    rank, size = attempt_ranks(t.cand, t.case, attempt_order(t.cand, t.case, t.repeat))
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (c, k, _) in enumerate(data):
        groups.setdefault((c, k), []).append(i)
    for members in groups.values():
        # rank by repeat number, ties in row order; the size is the group's row count
        by_repeat = sorted(members, key=lambda i: (data[i][2], i))
        assert [int(rank[i]) for i in by_repeat] == list(range(len(members)))
        assert {int(size[i]) for i in members} == {len(members)}
