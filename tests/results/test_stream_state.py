"""The streaming reduction's bitmask arithmetic against the reference reduction from rows.

Random typed attempts (repeat numbers 0 to 63, passes, failures and missing outcomes, rows in any
order and split into batches anywhere) folded into :class:`~evalspec.results.stream_state.CellState`
give, cell by cell, the counts and rule columns :func:`evalspec.results.case_reduce.reduce_rows`
computes from the rows; a repeat seen twice is reported as a duplicate, in the batch or across.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.results.stream_state import CellState, lowest_bits, rule_counts

pytest.importorskip("pyarrow")

PLAN = """evalspec: 1
id: bits
title: Bits
question: q
decision_owner: o
population: p
data: {{results: r.jsonl, columns: {{candidate: candidate, repeat: repeat, outcome: passed}}}}
candidates: {{A: {{model: a}}, B: {{model: b}}, C: {{model: c}}}}
baseline: B
units: {{case: case_id}}
attempts: {{repeats: {repeats}, rule: {rule}{k}}}
missing: {{policy: {policy}, max_fraction: 1.0}}
analyses: [{{kind: proportion}}]
"""


def _plan(tmp: Path, repeats: int, rule: str, policy: str) -> Any:
    from evalspec.plan import load_plan

    k = f", k: {min(2, repeats)}" if rule == "best_of_k" else ""
    (tmp / "plan.yaml").write_text(PLAN.format(repeats=repeats, rule=rule, k=k, policy=policy), encoding="utf-8")
    return load_plan(tmp / "plan.yaml").plan


def _tidy(cand: np.ndarray, case: np.ndarray, repeat: np.ndarray, passed: np.ndarray, n_cases: int) -> Any:
    from evalspec.results.table import Tidy

    ids = np.empty(n_cases, dtype=object)
    ids[:] = [f"c{i:02d}" for i in range(n_cases)]
    n = cand.size
    return Tidy(files=[], displays=["r.jsonl"], units=["line"], candidates=["A", "B", "C"], cand=cand, case=case,
                case_ids=ids, repeat=repeat, passed=passed, score=passed, cluster=None, cluster_ids=None, version=None,
                timestamp=None, file_idx=np.zeros(n, dtype=np.int8), line=np.arange(1, n + 1), raw={})


_attempts = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 5), st.integers(0, 63),
                               st.sampled_from([0.0, 1.0, 1.0, np.nan])), max_size=120,
                     unique_by=lambda t: t[:3])


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(attempts=_attempts, repeats=st.integers(1, 6), rule=st.sampled_from(["first", "best_of_k"]),
       policy=st.sampled_from(["count_as_fail", "exclude"]), cuts=st.lists(st.integers(0, 120), max_size=3))
def test_masks_give_the_reference_reduction(tmp_path_factory: pytest.TempPathFactory, attempts: list[Any],
                                            repeats: int, rule: str, policy: str, cuts: list[int]) -> None:
    from evalspec.plan.case_table import case_table_columns
    from evalspec.results.case_reduce import reduce_rows

    plan = _plan(tmp_path_factory.mktemp("bits"), repeats, rule, policy)
    rows = np.array([a[:3] for a in attempts], dtype=np.int64).reshape(-1, 3)
    passed = np.array([a[3] for a in attempts], dtype=np.float64)
    n_cases = 6
    state = CellState(3, [])
    state.grow(n_cases)
    bounds = [0, *sorted(c % (len(attempts) + 1) for c in cuts), len(attempts)]
    for lo, hi in zip(bounds[:-1], bounds[1:]):  # batches split anywhere
        again = state.add(rows[lo:hi, 0], rows[lo:hi, 1], rows[lo:hi, 2], passed[lo:hi], {})
        assert again.size == 0
    names = [c.name for c in case_table_columns(plan)]
    k = int(plan.attempts.k or 1)
    counts = rule_counts(state, lowest_bits(state.present, repeats), names, k)
    ref = reduce_rows(_tidy(rows[:, 0], rows[:, 1], rows[:, 2], passed, n_cases), plan).to_pylist()
    assert int((counts["attempts"] + counts["extra_attempts"] > 0).sum()) == len(ref)
    for r in ref:
        j, i = "ABC".index(r["candidate"]), int(r["case_id"][1:])
        for name in names:
            if name in counts:
                got = counts[name][j, i]
                want = r[name]
                if isinstance(got, float) and np.isnan(got):
                    assert want is None, (name, r)
                else:
                    assert got == want, (name, r, got)


def test_a_repeat_seen_again_is_a_duplicate_in_the_batch_and_across() -> None:
    state = CellState(2, [])
    state.grow(3)
    ones = np.ones(3)
    again = state.add(np.array([0, 0, 1]), np.array([2, 2, 2]), np.array([5, 5, 5]), ones, {})
    assert again.tolist() == [1]  # the later of the two rows
    again = state.add(np.array([1, 0]), np.array([2, 1]), np.array([5, 5]), ones[:2], {})
    assert again.tolist() == [0]


def test_lowest_bits_keep_the_lowest_repeat_numbers() -> None:
    masks = np.array([0b1011_0110, 0, (1 << 63) | 1], dtype=np.uint64)
    assert lowest_bits(masks, 2).tolist() == [0b0000_0110, 0, 1 | (1 << 63)]
    assert lowest_bits(masks, 1).tolist() == [0b10, 0, 1]


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(attempts=_attempts)
def test_rows_in_cell_order_give_the_state_of_any_order(attempts: list[Any]) -> None:
    """Rows already in (candidate, case, repeat) order skip the sort: the same masks either way."""
    rows = np.array([a[:3] for a in attempts], dtype=np.int64).reshape(-1, 3)
    passed = np.array([a[3] for a in attempts], dtype=np.float64)
    states = []
    for order in (np.arange(len(attempts)), np.lexsort((rows[:, 2], rows[:, 1], rows[:, 0]))):
        state = CellState(3, ["x"])
        state.grow(6)
        codes = (rows[order, 2] % 3).astype(np.int64)
        state.add(rows[order, 0], rows[order, 1], rows[order, 2], passed[order], {"x": (codes, codes != 1)})
        states.append(state)
    a, b = states
    for name in ("present", "passed", "missing"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    for name in ("first_rep", "first_code", "lo", "hi"):
        assert np.array_equal(getattr(a.attrs["x"], name), getattr(b.attrs["x"], name))
