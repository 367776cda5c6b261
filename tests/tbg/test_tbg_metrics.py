"""Variability metrics on hand-made answer sets (exact values worked by hand) and invariants.

Hand values (K = 4):
* all identical "abc": exact 1, entropy 0, first divergence 3 (every pair agrees to its end),
  edit distance 0, token entropy 0;
* all different "a" "b" "c" "d": exact 1/4, entropy log2 4 = 2 bits, first divergence 0,
  edit distance 1 (each pair: 1 substitution / length 1), token entropy 2 bits (one position);
* two clusters "ab" "ab" "cd" "cd": exact 1/2, entropy 1 bit; of the 6 pairs 2 are identical
  (prefix 2, distance 0) and 4 differ at position 0 (distance 2/2 = 1): first divergence
  4/6 = 2/3, edit distance 4/6 = 2/3; token entropy: 1 bit at each of 2 positions = 1;
* mixed "abc" "abd" "x" "": pairs abc-abd share 2 (distance 1/3), the other 5 share 0
  (distance 1 each): first divergence 2/6, edit distance (1/3 + 5)/6 = 8/9; token entropy:
  position 0 {a: 2, x: 1, end: 1} 1.5 bits, position 1 {b: 2, end: 2} 1 bit, position 2
  {c, d, end, end} 1.5 bits, mean 4/3.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.tbg.metrics import METRICS, AnswerSet, metric_value

HAND = {
    "identical": (["abc"] * 4, {"exact_match": 1.0, "entropy": 0.0, "first_divergence": 3.0, "edit_distance": 0.0,
                                "token_entropy": 0.0}),
    "all_different": (["a", "b", "c", "d"], {"exact_match": 0.25, "entropy": 2.0, "first_divergence": 0.0,
                                             "edit_distance": 1.0, "token_entropy": 2.0}),
    "two_clusters": (["ab", "ab", "cd", "cd"], {"exact_match": 0.5, "entropy": 1.0, "first_divergence": 2 / 3,
                                                "edit_distance": 2 / 3, "token_entropy": 1.0}),
    "mixed": (["abc", "abd", "x", ""], {"exact_match": 0.25, "entropy": 2.0, "first_divergence": 1 / 3,
                                        "edit_distance": 8 / 9, "token_entropy": 4 / 3}),
}


@pytest.mark.parametrize("case", sorted(HAND))
@pytest.mark.parametrize("metric", sorted(METRICS))
def test_hand_values(case, metric):
    answers, expected = HAND[case]
    assert metric_value(metric, answers) == pytest.approx(expected[metric], abs=1e-12)
    # token ids give the same values as the characters they stand for
    as_ids = [tuple(ord(c) for c in a) for a in answers]
    assert metric_value(metric, as_ids) == pytest.approx(expected[metric], abs=1e-12)


def _lev(a, b):
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[:], i
        for j, y in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (x != y))
    return row[-1]


def _naive(metric, answers):
    pairs = list(itertools.combinations(answers, 2))
    if metric == "first_divergence":
        return np.mean([next((i for i, (p, q) in enumerate(zip(a, b)) if p != q), min(len(a), len(b))) for a, b in pairs])
    if metric == "edit_distance":
        return np.mean([_lev(a, b) / max(len(a), len(b)) if max(len(a), len(b)) else 0.0 for a, b in pairs])
    counts = {a: answers.count(a) for a in set(answers)}
    if metric == "exact_match":
        return max(counts.values()) / len(answers)
    if metric == "entropy":
        return -sum(c / len(answers) * math.log2(c / len(answers)) for c in counts.values())
    width = max(len(a) for a in answers)
    if width == 0:
        return 0.0
    total = 0.0
    for pos in range(width):
        syms = [a[pos] if pos < len(a) else None for a in answers]
        for s in set(syms):
            p = syms.count(s) / len(syms)
            total -= p * math.log2(p)
    return total / width


answer_sets = st.lists(st.text(alphabet="ab", max_size=5), min_size=2, max_size=8)


@settings(max_examples=60, deadline=None)
@given(answer_sets)
def test_matches_naive_pairwise_definitions(answers):
    for metric in METRICS:
        assert metric_value(metric, answers) == pytest.approx(_naive(metric, answers), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(answer_sets, st.randoms(use_true_random=False))
def test_subset_value_equals_value_of_the_subset(answers, rnd):
    full = AnswerSet(answers)
    idx = sorted(rnd.sample(range(len(answers)), k=rnd.randint(2, len(answers))))
    sub = [answers[i] for i in idx]
    for metric in METRICS:
        assert full.value(metric, np.array(idx)) == pytest.approx(metric_value(metric, sub), abs=1e-12)
        # order of answers does not matter
        assert metric_value(metric, list(reversed(sub))) == pytest.approx(metric_value(metric, sub), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(answer_sets)
def test_ranges(answers):
    k = len(answers)
    assert 1 / k - 1e-12 <= metric_value("exact_match", answers) <= 1
    assert 0 <= metric_value("entropy", answers) <= math.log2(k) + 1e-12
    assert 0 <= metric_value("edit_distance", answers) <= 1
    assert 0 <= metric_value("first_divergence", answers) <= max(len(a) for a in answers)


def test_unknown_metric_and_empty_set():
    with pytest.raises(ValueError, match="unknown metric"):
        metric_value("nope", ["a", "b"])
    with pytest.raises(ValueError, match="at least one"):
        AnswerSet([])
