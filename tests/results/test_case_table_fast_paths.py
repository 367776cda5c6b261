"""The case table's shortcuts give what the general computations give (issue 24: the 10M-row case table).

* matrix order told by two comparisons a row (``case_checks._is_grid``), against its definition (the
  rows' cells strictly increasing, one row per cell);
* a slice group's pass rates read with the pair's cases and clusters (``proportion._entry(among=)``),
  against the same without them, whichever cases each candidate lacks;
* the candidates typed as their own codes when the table names them in the plan's order;
* case outcomes from counts when every cell has attempts (the mean divided into the matrix, the count
  matrix as the attempts analysed), against a table with a cell lacking them;
* values checked finite through their sum, each one read where the sum is not finite.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=60, derandomize=True, database=None, deadline=None)


def _in_order_by_definition(cand: np.ndarray, case: np.ndarray, n_cand: int, n_cases: int) -> bool:
    cell = cand.astype(np.int64) * n_cases + case
    size = n_cand * n_cases
    return bool(cell.size == size and (size < 1 or cell[0] >= 0) and (size < 2 or np.all(cell[1:] > cell[:-1])))


@SETTINGS
@given(n_cand=st.integers(1, 3), n_cases=st.integers(1, 5), change=st.sampled_from(
    ["none", "swap", "value", "drop", "repeat", "candidate"]), at=st.integers(0, 100), dtype=st.sampled_from(
    [np.int8, np.int32, np.int64]))
def test_matrix_order_is_told_as_its_definition_tells_it(n_cand: int, n_cases: int, change: str, at: int,
                                                          dtype: type) -> None:
    from evalspec.results.case_checks import _Cells

    cand = np.repeat(np.arange(n_cand), n_cases).astype(dtype)
    case = np.tile(np.arange(n_cases), n_cand).astype(dtype)
    n = cand.size
    i, j = at % n, (at // 7) % n
    if change == "swap":
        case[[i, j]] = case[[j, i]]
        cand[[i, j]] = cand[[j, i]]
    elif change == "value":
        case[i] = (case[i] + 1) % n_cases
    elif change == "candidate":
        cand[i] = (cand[i] + 1) % n_cand
    elif change == "drop":
        cand, case = np.delete(cand, i), np.delete(case, i)
    elif change == "repeat":
        cand, case = np.insert(cand, i, cand[i]), np.insert(case, i, case[i])
    cells = _Cells(cand, case, n_cand, n_cases)
    assert cells.in_order == _in_order_by_definition(cand, case, n_cand, n_cases)
    assert cells.rows == cand.size
    assert cells.cell.tolist() == (cand.astype(np.int64) * n_cases + case).tolist()


@SETTINGS
@given(seed=st.integers(0, 10_000), binary=st.booleans(), holes=st.sampled_from([0.0, 0.05, 0.5]),
       masked=st.booleans(), clusters=st.integers(1, 12))
def test_a_groups_pass_rates_with_the_pairs_cases_are_those_without(seed: int, binary: bool, holes: float,
                                                                    masked: bool, clusters: int) -> None:
    from evalspec.analyses.proportion import _entry
    from evalspec.stats import cluster_labels

    rng = np.random.default_rng(seed)
    n = 60
    values = (rng.random((2, n)) < 0.6).astype(float) if binary else rng.random((2, n))
    values[rng.random((2, n)) < holes] = np.nan  # (cases one candidate or both lack)
    labels = cluster_labels(rng.integers(0, clusters, n))
    ctx = SimpleNamespace(outcomes=SimpleNamespace(values=values, binary=binary, rule="mean"),
                          index=["A", "B"].index, case_cluster=labels)
    mask = rng.random(n) < 0.7 if masked else None
    keep = ~np.isnan(values[0]) & ~np.isnan(values[1])
    if mask is not None:
        keep &= mask
    idx = np.flatnonzero(keep)
    among = (idx, cluster_labels(labels[idx]))
    for name in ("A", "B"):
        for method in ("wilson", "clopper_pearson"):
            plain, plain_notes = _entry(ctx, name, method, 0.95, mask)
            shared, shared_notes = _entry(ctx, name, method, 0.95, mask, among)
            assert (plain is None) == (shared is None)
            if plain is not None:
                assert shared is not None and shared.model_dump() == plain.model_dump()
            assert [c.model_dump() for c in shared_notes] == [c.model_dump() for c in plain_notes]


def test_candidates_in_the_plans_order_are_their_own_codes_and_others_are_mapped() -> None:
    from evalspec.results.case_table import _Typed
    from evalspec.results.values import LazyCoded

    plan = SimpleNamespace(data=SimpleNamespace(columns=SimpleNamespace(candidate="model")),
                           candidates={"m/a": None, "m/b": None})
    for uniques, codes, want in ((["m/a", "m/b"], [0, 0, 1, 1], [0, 0, 1, 1]),
                                 (["m/b", "m/a"], [0, 0, 1, 1], [1, 1, 0, 0]),
                                 (["m/a", "m/b"], [0, -1, 1, 1], [0, -2, 1, 1])):
        objects = np.empty(len(uniques), dtype=object)
        objects[:] = uniques
        typed = _Typed.__new__(_Typed)
        typed.plan, typed.n, typed.problems = plan, len(codes), []
        typed.cols = {"model": LazyCoded(np.array(codes, dtype=np.int8), objects)}
        typed.flag = lambda bad, *a, **k: None  # (the problems are another test's)
        got = typed.candidates()
        assert got.tolist() == want
        assert not got.flags.writeable or want != codes  # (its own codes are only read)


@SETTINGS
@given(seed=st.integers(0, 10_000), rule=st.sampled_from(["mean", "majority", "pass_at_k", "first", "best_of_k"]),
       policy=st.sampled_from(["count_as_fail", "exclude"]), empty=st.booleans())
def test_case_outcomes_from_counts_with_and_without_a_cell_lacking_attempts(seed: int, rule: str, policy: str,
                                                                          empty: bool) -> None:
    from evalspec.results.case_model import outcomes_from_counts

    rng = np.random.default_rng(seed)
    attempts = rng.integers(1, 6, (2, 7))
    missing = rng.integers(0, 2, (2, 7)) * (attempts > 1)
    if empty:  # (a cell without attempts: the masked path)
        attempts[1, 3], missing[1, 3] = (1, 1) if policy == "exclude" else (0, 0)
    passes = rng.integers(0, 6, (2, 7)) % (attempts - missing + 1)
    rules = {"first_outcome": rng.integers(0, 2, (2, 7)).astype(float),
             "first_answered_outcome": rng.integers(0, 2, (2, 7)).astype(float),
             "passes_in_first_2": np.minimum(passes, 2).astype(float),
             "answered_passes_in_first_2": np.minimum(passes, 2).astype(float)}
    out = outcomes_from_counts(attempts, missing, passes, rules, rule, 2, policy)
    used = attempts - missing if policy == "exclude" else attempts
    has = used > 0
    want_taken = {"first": np.ones_like(used), "best_of_k": np.minimum(used, 2)}.get(rule, used)
    assert np.where(has, want_taken, 0).tolist() == out.attempts.tolist()
    if rule == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            want = np.where(has, passes / np.where(has, used, 1), np.nan)
        assert np.array_equal(out.values, want, equal_nan=True)
    assert np.isnan(out.values[~has]).all()  # (a cell without attempts has no outcome)


@SETTINGS
@given(seed=st.integers(0, 10_000), rule=st.sampled_from(["mean", "majority", "pass_at_k", "first", "best_of_k"]),
       policy=st.sampled_from(["count_as_fail", "exclude"]), attempts=st.integers(0, 4))
def test_case_outcomes_from_a_count_broadcast_are_those_of_the_count_in_every_cell(seed: int, rule: str,
                                                                                  policy: str, attempts: int) -> None:
    from evalspec.results.case_model import outcomes_from_counts

    rng = np.random.default_rng(seed)
    one = np.broadcast_to(np.array([attempts]), (2, 9)).reshape(2, 9)  # (a count column of one value, as read)
    assert not any(one.strides)
    missing = rng.integers(0, attempts + 1, (2, 9)) if policy == "exclude" else np.zeros((2, 9), dtype=np.int64)
    passes = rng.integers(0, attempts + 1, (2, 9)) % (one - missing + 1)
    rules = {"first_outcome": rng.integers(0, 2, (2, 9)).astype(float),
             "first_answered_outcome": rng.integers(0, 2, (2, 9)).astype(float),
             "passes_in_first_2": np.minimum(passes, 2).astype(float),
             "answered_passes_in_first_2": np.minimum(passes, 2).astype(float)}
    got = outcomes_from_counts(one, missing, passes, rules, rule, 2, policy)
    want = outcomes_from_counts(one.copy(), missing, passes, rules, rule, 2, policy)
    assert np.array_equal(got.values, want.values, equal_nan=True)
    assert got.attempts.tolist() == want.attempts.tolist()


def test_values_are_checked_finite_through_their_sum_and_each_where_it_is_not() -> None:
    import warnings

    import pytest

    from evalspec.stats._validation import InvalidArgument, _finite_array

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (an overflowing sum warns nothing)
        assert _finite_array("v", [1e308, 1e308, -5.0]).tolist() == [1e308, 1e308, -5.0]  # (each value read)
    for bad in (np.nan, np.inf, -np.inf):
        for at in (0, 3):
            values = [0.5, 1.0, 2.0, 3.0]
            values[at] = bad
            with pytest.raises(InvalidArgument, match=f"element {at} is"):
                _finite_array("v", values)
    with pytest.raises(InvalidArgument, match="element 1 is"):
        _finite_array("v", [1.0, np.inf, -np.inf])  # (their sum is NaN)


@SETTINGS
@given(seed=st.integers(0, 10_000), holes=st.sampled_from([0.0, 0.1]), third=st.booleans())
def test_slices_with_every_outcome_known_read_as_with_some_missing(seed: int, holes: float, third: bool) -> None:
    from evalspec.analyses import slices
    from evalspec.analyses.proportion import _entry

    rng = np.random.default_rng(seed)
    names = ["A", "B", "C"] if third else ["A", "B"]
    values = rng.random((len(names), 40))
    values[rng.random(values.shape) < holes] = np.nan
    if third:
        values[2, rng.random(40) < 0.3] = np.nan  # (a candidate outside the comparison lacks cases)
    from evalspec.stats import cluster_labels

    labels = cluster_labels(rng.integers(0, 6, 40))
    ctx = SimpleNamespace(outcomes=SimpleNamespace(values=values, binary=False, rule="mean"), index=names.index,
                          case_cluster=labels,
                          has_every_outcome=lambda name: not np.isnan(values[names.index(name)]).any())
    runner = slices._Runner.__new__(slices._Runner)
    runner.ctx, runner.comparison = ctx, ("A", "B")
    assert runner.keeps_pair("A") == runner.keeps_pair("B") == (not np.isnan(values[:2]).any())
    assert not runner.keeps_pair("C")
    mask = rng.random(40) < 0.6
    idx = np.flatnonzero(mask & ~np.isnan(values[0]) & ~np.isnan(values[1]))
    among = (idx, cluster_labels(labels[idx]))
    for name in names:
        got, _ = _entry(ctx, name, "wilson", 0.9, mask, among, runner.keeps_pair(name))
        want, _ = _entry(ctx, name, "wilson", 0.9, mask)
        assert (got is None and want is None) or got.model_dump() == want.model_dump()
        # the pair's own outcomes of the candidate, taken where it keeps the pair's cases (else ignored)
        held, _ = _entry(ctx, name, "wilson", 0.9, mask, among, runner.keeps_pair(name), values[names.index(name)][idx])
        assert (held is None and want is None) or held.model_dump() == want.model_dump()
        if not runner.keeps_pair(name):  # (not the pair's cases: values of the wrong cases must not be read)
            wrong, _ = _entry(ctx, name, "wilson", 0.9, mask, among, False, np.zeros(idx.size))
            assert (wrong is None and want is None) or wrong.model_dump() == want.model_dump()
    every, _ = _entry(ctx, "A", "wilson", 0.9)  # (every case, no mask: no positions made)
    assert every is None or every.n == int(np.count_nonzero(~np.isnan(values[0])))


@SETTINGS
@given(seed=st.integers(0, 10_000), holes=st.sampled_from([0.0, 0.05, 0.5]))
def test_a_pair_with_every_outcome_is_the_pair_gathered_from_every_case(seed: int, holes: float) -> None:
    import dataclasses

    from evalspec.testing import context_from_arrays

    rng = np.random.default_rng(seed)
    values = rng.random((2, 30))
    values[rng.random(values.shape) < holes] = np.nan
    n = values.shape[1]
    ctx = context_from_arrays(["A", "B"], [f"c{i}" for i in range(n)], [0] * n + [1] * n, [*range(n)] * 2,
                              [1.0] * (2 * n), clusters=[f"g{i % 5}" for i in range(n)])
    ctx = dataclasses.replace(ctx, outcomes=dataclasses.replace(ctx.outcomes, values=values))
    assert [ctx.has_every_outcome(c) for c in "AB"] == [not np.isnan(v).any() for v in values]
    for mask in (None, rng.random(30) < 0.5):
        pair = ctx.pair("A", "B", mask)
        keep = ~np.isnan(values).any(axis=0) & (True if mask is None else mask)
        idx = np.flatnonzero(keep)
        assert pair.cases.tolist() == idx.tolist()
        assert np.array_equal(pair.x, values[0][idx]) and np.array_equal(pair.y, values[1][idx])
        assert np.asarray(pair.clusters).tolist() == ctx.case_cluster[idx].tolist()
        if mask is None and not np.isnan(values).any():  # (every case: the outcomes themselves, read only)
            assert not pair.x.flags.writeable and np.shares_memory(pair.x, ctx.outcomes.values)
