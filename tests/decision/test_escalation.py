"""The escalation path is fitted to the study: only for close results, and it never asks a plan for what it has."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from studies import Dec, Stop, decide_on, interval  # noqa: E402

from evalspec.decision import CLOSE  # noqa: E402

D = Dec(minimum_improvement=0.03, minimum_units=10)
RECORD_RULE = "Record a stopping rule or decision date"


def test_too_few_units_gets_no_escalation_path() -> None:
    out = decide_on(interval(-0.05, 0.10), D, units=4)
    assert out.verdict == "too_few_units"
    assert out.escalation == []
    assert out.what_would_change  # says what to collect instead


def test_a_decisive_verdict_is_not_close() -> None:
    out = decide_on(interval(0.05, 0.10), D)
    assert out.verdict == "worth_acting_on" and out.verdict not in CLOSE
    assert out.escalation == []


def test_close_result_without_a_stopping_rule_is_told_to_record_one() -> None:
    out = decide_on(interval(-0.01, 0.08), D, stop=Stop(max_units=None, decision_date=None))
    assert out.verdict == "inconclusive"
    assert any(RECORD_RULE in s for s in out.escalation)


def test_close_result_with_a_stopping_rule_is_reminded_of_it_not_asked_for_it() -> None:
    out = decide_on(interval(-0.01, 0.08), D, stop=Stop(max_units=200, decision_date=dt.date(2026, 12, 31)))
    assert out.verdict == "inconclusive"
    assert not any(RECORD_RULE in s for s in out.escalation)
    assert any("200 independent units at most" in s and "2026-12-31" in s for s in out.escalation)


def test_not_equivalent_beyond_the_margin_is_a_clear_result() -> None:
    """The whole interval outside ±m: a material difference, not a close call, and more cases cannot fix it."""
    dec = Dec(goal="equivalence", margin=0.05, minimum_units=10)
    out = decide_on(interval(-0.14, -0.079, est=-0.109), dec)
    assert out.verdict == "not_equivalent"
    assert out.headline.startswith("Not equivalent: A is worse than B by more than the margin of ±5.0")
    assert out.escalation == []
    assert not any("narrow the interval to within" in s for s in out.what_would_change)


def test_not_equivalent_straddling_the_margin_is_close() -> None:
    dec = Dec(goal="equivalence", margin=0.05, minimum_units=10)
    out = decide_on(interval(-0.07, 0.01), dec)
    assert out.verdict == "not_equivalent"
    assert out.escalation
    assert any("narrow the interval to within" in s for s in out.what_would_change)
