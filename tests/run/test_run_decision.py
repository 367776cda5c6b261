"""Every branch of the decision (issue 4, point 5), each reached by a crafted interval.

Thresholds: minimum improvement d = 0.03, margin m = 0.02, at least 10 units. Each case
gives the primary interval and says which branch it must reach and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from evalspec.decision import VERDICTS, _zero_failure_n, decide


@dataclass(frozen=True)
class Limit:
    max_rate: float = 0.05
    confidence_level: float = 0.95


@dataclass(frozen=True)
class Dec:
    goal: str = "superiority"
    minimum_improvement: float = 0.03
    margin: float | None = None
    confidence_level: float = 0.95
    critical_failures: Limit | None = None
    minimum_units: int = 10


def primary(low: float, high: float, est: float | None = None, **extra: Any) -> dict[str, Any]:
    return {"analysis": 1, "candidate": "A", "baseline": "B", "estimate": (low + high) / 2 if est is None else est,
            "low": low, "high": high, "method": "newcombe", "confidence_level": 0.95, "table": None, **extra}


def critical(cases: int, failures: int, upper: float) -> dict[str, Any]:
    return {"flag": "critical", "candidates": {"A": {"critical_cases": cases, "failures": failures,
                                                      "upper_bound": upper, "confidence_level": 0.95}}}


SUPERIORITY = [
    # (low, high, verdict): why
    (0.03, 0.10, "worth_acting_on"),    # low == d: the whole interval at or above d
    (0.05, 0.12, "worth_acting_on"),
    (0.01, 0.09, "too_small"),          # 0 < low < d
    (-0.08, -0.01, "regression"),       # high <= 0
    (-0.08, 0.0, "regression"),         # high exactly 0: entire interval at or below zero
    (-0.06, 0.07, "inconclusive"),      # low < -d and high > d
    (-0.02, 0.02, "no_material_gain"),  # holds 0, high < d
    (-0.05, 0.025, "no_material_gain"),  # holds 0 and a material loss, but rules out a material gain
    (-0.01, 0.08, "inconclusive"),      # holds 0 and a material gain, not a material loss
    (0.0, 0.02, "no_material_gain"),    # low == 0 is not > 0: holds zero
]


@pytest.mark.parametrize(("low", "high", "verdict"), SUPERIORITY)
def test_superiority_branches(low: float, high: float, verdict: str) -> None:
    out = decide(Dec(), primary=primary(low, high), critical=None, units=20)
    assert out["verdict"] == verdict
    assert out["headline"] and out["reasons"] and out["escalation"]
    assert out["reasons"][0].startswith("A minus B:")


def test_no_material_gain_is_not_equivalence() -> None:
    out = decide(Dec(), primary=primary(-0.02, 0.02), critical=None, units=20)
    assert "not evidence of equivalence" in out["headline"]
    assert any("NOT evidence of equivalence" in r for r in out["reasons"])


def test_regression_says_by_how_much() -> None:
    out = decide(Dec(), primary=primary(-0.09, -0.01, est=-0.05), critical=None, units=20)
    assert out["verdict"] == "regression"
    assert "5.0 points" in out["headline"] and "1.0 points and 9.0 points" in out["headline"]


@pytest.mark.parametrize(("low", "high", "verdict"), [
    (-0.015, 0.04, "non_inferior"),      # low > -m
    (-0.02, 0.04, "not_non_inferior"),   # low == -m is not above it
    (-0.05, 0.01, "not_non_inferior"),
    (-0.09, -0.01, "regression"),        # high < 0
])
def test_non_inferiority_branches(low: float, high: float, verdict: str) -> None:
    out = decide(Dec(goal="non_inferiority", margin=0.02), primary=primary(low, high), critical=None, units=20)
    assert out["verdict"] == verdict


def test_equivalence_reads_the_tost_interval() -> None:
    # the 95 % interval crosses the margin but the 90 % TOST interval lies inside it
    eq = {"low": -0.015, "high": 0.018, "method": "newcombe", "confidence_level": 0.90, "margin": 0.02}
    out = decide(Dec(goal="equivalence", margin=0.02), primary=primary(-0.021, 0.024, equivalence=eq),
                 critical=None, units=20)
    assert out["verdict"] == "equivalent"
    assert any("90% interval" in r and "1 - 2 alpha" in r for r in out["reasons"])
    eq_wide = {**eq, "high": 0.021}
    out = decide(Dec(goal="equivalence", margin=0.02), primary=primary(-0.021, 0.024, equivalence=eq_wide),
                 critical=None, units=20)
    assert out["verdict"] == "not_equivalent"


def test_too_few_units_comes_first() -> None:
    out = decide(Dec(critical_failures=Limit()), primary=primary(0.05, 0.12), critical=critical(5, 3, 0.9), units=9,
                 unit_name="clusters")
    assert out["verdict"] == "too_few_units"
    assert "Only 9 independent clusters" in out["reasons"][0]


@pytest.mark.parametrize(("cases", "failures", "upper", "verdict"), [
    (100, 0, 0.0295, "worth_acting_on"),   # 0/100: exact bound 2.95 % < 5 %
    (12, 0, 0.221, "blocked"),             # none observed, but the bound 22.1 % is not below 5 %
    (100, 9, 0.151, "blocked"),            # the observed rate itself exceeds the limit
    (0, 0, 1.0, "blocked"),                # no critical case run: cannot be ruled out
])
def test_critical_limit_blocks_whatever_the_average(cases: int, failures: int, upper: float, verdict: str) -> None:
    out = decide(Dec(critical_failures=Limit()), primary=primary(0.05, 0.12), critical=critical(cases, failures, upper),
                 units=20)
    assert out["verdict"] == verdict
    if verdict == "blocked":
        assert out["what_would_change"]


def test_no_comparison() -> None:
    out = decide(Dec(), primary=None, critical=None, units=40)
    assert out["verdict"] == "no_comparison" and out["primary"] is None


def test_every_verdict_is_reachable() -> None:
    seen = set()
    for low, high, v in SUPERIORITY:
        seen.add(decide(Dec(), primary=primary(low, high), critical=None, units=20)["verdict"])
    for low, high in ((-0.015, 0.04), (-0.05, 0.01)):
        seen.add(decide(Dec(goal="non_inferiority", margin=0.02), primary=primary(low, high), critical=None,
                        units=20)["verdict"])
    for high in (0.018, 0.03):
        eq = {"low": -0.01, "high": high, "method": "m", "confidence_level": 0.9, "margin": 0.02}
        seen.add(decide(Dec(goal="equivalence", margin=0.02), primary=primary(-0.02, 0.04, equivalence=eq),
                        critical=None, units=20)["verdict"])
    seen.add(decide(Dec(critical_failures=Limit()), primary=primary(0.05, 0.1), critical=critical(3, 0, 0.63),
                    units=20)["verdict"])
    seen.add(decide(Dec(), primary=primary(0.05, 0.1), critical=None, units=2)["verdict"])
    seen.add(decide(Dec(), primary=None, critical=None, units=20)["verdict"])
    assert seen == set(VERDICTS)


@pytest.mark.parametrize(("rate", "level", "n"), [(0.05, 0.95, 59), (0.01, 0.95, 299), (0.1, 0.9, 22)])
def test_zero_failure_sample_size(rate: float, level: float, n: int) -> None:
    # closed form: 0 failures in n gives the exact bound 1 - (1 - level)^(1/n); the smallest n below `rate`
    assert _zero_failure_n(rate, level) == n
    assert 1 - (1 - level) ** (1 / n) < rate <= 1 - (1 - level) ** (1 / (n - 1))


def test_adopting_candidate_not_checked_blocks() -> None:
    crit = {"flag": "critical", "candidates": {"B": {"critical_cases": 100, "failures": 0, "upper_bound": 0.03,
                                                      "confidence_level": 0.95}}}
    out = decide(Dec(critical_failures=Limit()), primary=primary(0.05, 0.12), critical=crit, units=20)
    assert out["verdict"] == "blocked"
    assert "did not check this candidate" in out["reasons"][0]
