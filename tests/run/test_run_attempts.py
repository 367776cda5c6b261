"""Attempt rules on hand-made repeats, and invariants that hold for any repeats (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.attempts import reduce_attempts, rule_question

NAN = float("nan")


def one_case(outcomes: list[float], rule: str, k: int | None = None, policy: str = "count_as_fail",
             repeats: list[int] | None = None) -> float:
    n = len(outcomes)
    reps = repeats if repeats is not None else list(range(1, n + 1))
    out = reduce_attempts(np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.array(reps),
                          np.array(outcomes, dtype=float), n_candidates=1, n_cases=1, rule=rule, k=k,
                          missing_policy=policy)
    return float(out.values[0, 0])


@pytest.mark.parametrize(("outcomes", "rule", "k", "expected"), [
    ([1, 0, 1, 1], "first", None, 1.0),
    ([0, 1, 1, 1], "first", None, 0.0),
    ([0, 0, 1, 1], "best_of_k", 2, 0.0),     # the pass is the third attempt: not among the first 2
    ([0, 1, 1, 1], "best_of_k", 2, 1.0),
    ([1, 0, 1, 1], "majority", None, 1.0),   # 3 of 4
    ([1, 0, 1, 0], "majority", None, 0.0),   # 2 of 4 is a tie: a tie FAILS
    ([1, 0, 1], "majority", None, 1.0),      # 2 of 3
    ([1, 0, 1, 1], "mean", None, 0.75),
    ([1, 0, 1, 0, 0], "mean", None, 0.4),
])
def test_rules_on_one_case(outcomes: list[int], rule: str, k: int | None, expected: float) -> None:
    assert one_case([float(o) for o in outcomes], rule, k) == expected


def test_first_is_the_lowest_repeat_number_not_the_row_order() -> None:
    assert one_case([0.0, 1.0], "first", repeats=[2, 1]) == 1.0


def test_missing_outcome_policies() -> None:
    # count_as_fail: a missing first attempt is a failure
    assert one_case([NAN, 1.0], "first") == 0.0
    # exclude: the attempt is dropped, the rule sees the remaining attempts
    assert one_case([NAN, 1.0], "first", policy="exclude") == 1.0
    assert one_case([NAN, 1.0, 0.0], "mean", policy="exclude") == 0.5
    assert np.isnan(one_case([NAN, NAN], "first", policy="exclude"))


def test_same_rule_for_every_candidate() -> None:
    # two candidates, two cases, identical attempts: identical case outcomes
    cand = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    case = np.array([0, 0, 1, 1, 0, 0, 1, 1])
    rep = np.array([1, 2, 1, 2, 1, 2, 1, 2])
    passed = np.array([0, 1, 1, 1, 0, 1, 1, 1], dtype=float)
    for rule, k in (("first", None), ("best_of_k", 2), ("majority", None), ("mean", None)):
        out = reduce_attempts(cand, case, rep, passed, n_candidates=2, n_cases=2, rule=rule, k=k)
        np.testing.assert_array_equal(out.values[0], out.values[1])


def test_rule_questions_differ() -> None:
    qs = {rule_question(r, 3 if r == "best_of_k" else None, 5) for r in ("first", "best_of_k", "majority", "mean")}
    assert len(qs) == 4
    assert "tie counts as a failure" in rule_question("majority", None, 4)
    assert "different question" in rule_question("best_of_k", 3, 5)


attempt_lists = st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=7), min_size=1, max_size=12)


def _reduce(cases: list[list[float]], rule: str, k: int | None = None) -> np.ndarray:
    cand, case, rep, passed = [], [], [], []
    for i, attempts in enumerate(cases):
        for r, p in enumerate(attempts, start=1):
            cand.append(0)
            case.append(i)
            rep.append(r)
            passed.append(p)
    out = reduce_attempts(np.array(cand), np.array(case), np.array(rep), np.array(passed), n_candidates=1,
                          n_cases=len(cases), rule=rule, k=k)
    return out.values[0]


@settings(max_examples=60, deadline=None)
@given(attempt_lists, st.integers(1, 7))
def test_rule_invariants(cases: list[list[float]], k: int) -> None:
    first = _reduce(cases, "first")
    best = _reduce(cases, "best_of_k", k)
    best1 = _reduce(cases, "best_of_k", 1)
    best_all = _reduce(cases, "best_of_k", 7)
    maj = _reduce(cases, "majority")
    mean = _reduce(cases, "mean")
    np.testing.assert_array_equal(best1, first)
    assert np.all(first <= best) and np.all(best <= best_all)
    assert np.all(maj <= best_all)                      # a majority pass has at least one pass
    assert np.all((mean >= 0) & (mean <= 1))
    np.testing.assert_array_equal(maj, (mean > 0.5).astype(float))  # strict majority; ties fail
    np.testing.assert_allclose(mean, [sum(c) / len(c) for c in cases])
