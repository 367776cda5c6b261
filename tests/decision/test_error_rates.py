"""Simulated error rates of the verdict and of the critical-failure bound (small Monte Carlo in CI).

The verdict's stated error rate: with no true difference, each of ``worth_acting_on`` and
``regression`` should be reached at most α = 2.5 % of the time (one-sided at 97.5 %), so a
decisive verdict at most 5 %. The designs have clustered cases whose *difference* varies by
cluster (disagreements in both directions, ICC > 0) and unequal cluster sizes. Tolerance:
the nominal rate plus 3 Monte Carlo standard errors.

The critical-failure bound must cover the true case-weighted failure rate at least at its
level, whatever the intra-cluster correlation of failures.
"""

from __future__ import annotations

import math
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from studies import Dec, paired_ctx, record, repeated_ctx, verdict_of  # noqa: E402

from evalspec.decision import DECISIVE  # noqa: E402


def null_study(rng: np.random.Generator, sizes: np.ndarray, tau: float) -> tuple[list[tuple[int, int]], list[str]]:
    """No true difference: cluster pass rate p_g, cluster difference δ_g ~ N(0, τ) split between A and B."""
    rows, cl = [], []
    for g, m in enumerate(sizes):
        p = 1 / (1 + math.exp(-rng.normal(0.8, 0.8)))
        delta = float(np.clip(rng.normal(0.0, tau), -0.4, 0.4))
        pa, pb = np.clip(p + delta / 2, 0, 1), np.clip(p - delta / 2, 0, 1)
        for _ in range(int(m)):
            rows.append((int(rng.random() < pa), int(rng.random() < pb)))
            cl.append(f"g{g}")
    return rows, cl


@pytest.mark.parametrize(("name", "sizes", "tau"), [
    ("20 equal clusters, ICC in the difference", np.full(20, 6), 0.25),
    ("12 unequal clusters", np.array([2, 3, 3, 4, 5, 6, 6, 8, 10, 12, 15, 20]), 0.2),
    ("40 clusters, no ICC", np.full(40, 4), 0.0),
])
def test_null_decisive_rate_is_at_most_the_stated_rate(name: str, sizes: np.ndarray, tau: float) -> None:
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    reps, decisive, informative = 300, 0, 0
    for _ in range(reps):
        rows, cl = null_study(rng, sizes, tau)
        out = verdict_of(paired_ctx(rows, clusters=cl), Dec(minimum_improvement=0.0, minimum_units=2))
        decisive += out.verdict in DECISIVE
        informative += out.primary.informative
    rate = decisive / reps
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps), (name, rate)
    assert informative > reps * 0.9  # the rule does not hide behind 'uninformative' in ordinary designs


def critical_bound_coverage(rng: np.random.Generator, sizes: np.ndarray, rate: float, icc_sd: float,
                            reps: int) -> float:
    covered = 0
    for _ in range(reps):
        fails, cl = [], []
        truth_num = truth_den = 0.0
        for g, m in enumerate(sizes):
            logit = math.log(rate / (1 - rate)) + rng.normal(0.0, icc_sd)
            pg = 1 / (1 + math.exp(-logit))
            truth_num += pg * m
            truth_den += m
            for _ in range(int(m)):
                fails.append(int(rng.random() < pg))
                cl.append(f"g{g}")
        truth = truth_num / truth_den
        attempts = [[0 if f else 1] for f in fails]
        ctx = repeated_ctx({"A": attempts, "B": attempts}, clusters=cl, columns={"critical": [True] * len(fails)},
                           critical_max_rate=0.05, critical_level=0.95)
        s = next(s for s in record("critical_failures", ctx).offers.critical if s.candidate == "A")
        covered += s.upper_bound is not None and s.upper_bound >= truth
    return covered / reps


@pytest.mark.parametrize(("sizes", "icc_sd"), [(np.full(30, 4), 1.5), (np.array([1] * 20 + [10, 20]), 1.0),
                                              (np.full(60, 2), 0.0)])
def test_cluster_aware_critical_bound_covers(sizes: np.ndarray, icc_sd: float) -> None:
    rng = np.random.default_rng(int(sizes.sum() * 7 + icc_sd * 10))
    reps = 300
    cov = critical_bound_coverage(rng, sizes, rate=0.04, icc_sd=icc_sd, reps=reps)
    assert cov >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), cov


methods = st.sampled_from(["newcombe", "tango", "wald", "wald_cc", "agresti_min", "bonett_price"])


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 60), st.integers(0, 15), st.integers(0, 15), st.integers(0, 60), methods)
def test_every_paired_interval_contains_its_estimate(a: int, b: int, c: int, d: int, method: str) -> None:
    # agresti_min used to exclude its own estimate; a verdict read off such an interval contradicts its headline
    if a + b + c + d == 0:
        return
    rows = [(1, 1)] * a + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * d
    out = verdict_of(paired_ctx(rows), Dec(), method=method)
    p = out.primary
    if p.informative:
        assert p.low <= p.estimate + 1e-12 and p.estimate <= p.high + 1e-12, (method, p)
