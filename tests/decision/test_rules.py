"""Every branch of the decision rules, each reached by a crafted interval, and their invariants.

Thresholds unless stated: minimum improvement d = 0.03, margin m = 0.02. Each case gives the
primary interval and the branch it must reach and why. Inequalities are strict: a bound that
touches a threshold does not clear it (issue 8, Build 4).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from studies import Dec, Limit, Record, Stop, decide_on, interval, paired_ctx, verdict_of  # noqa: E402

from evalspec.analyses.contract import Caveat, CriticalStatus, Finding, Offers, SequentialStatus  # noqa: E402
from evalspec.decision import CLOSE, DECISIVE, VERDICTS, DecisionRecord, decide  # noqa: E402

D = Dec(minimum_improvement=0.03, minimum_units=10)

SUPERIORITY = [
    # (low, high, verdict): why
    (0.031, 0.10, "worth_acting_on"),   # L > d
    (0.03, 0.10, "too_small"),          # L == d does not clear d (strict)
    (0.01, 0.09, "too_small"),          # 0 < L <= d
    (-0.08, -0.01, "regression"),       # H < 0
    (-0.08, 0.0, "no_material_gain"),   # H == 0 is not below zero; the interval rules out a gain of d
    (-0.06, 0.07, "inconclusive"),      # L < -d and H > d: material gain and material loss both possible
    (-0.02, 0.02, "no_material_gain"),  # holds 0, H < d
    (-0.05, 0.025, "no_material_gain"),  # holds 0 and a material loss, but rules out a material gain
    (-0.01, 0.08, "inconclusive"),      # holds 0 and a material gain
    (0.0, 0.02, "no_material_gain"),    # L == 0 is not > 0
    (-0.01, 0.03, "inconclusive"),      # H == d: a gain of d is not ruled out (strict)
]


@pytest.mark.parametrize(("low", "high", "verdict"), SUPERIORITY)
def test_superiority_branches(low: float, high: float, verdict: str) -> None:
    out = decide_on(interval(low, high), D)
    assert out.verdict == verdict
    assert out.label == VERDICTS[verdict][0]
    assert out.headline and out.reasons
    # the escalation path is for close results only (not for decisive verdicts)
    assert bool(out.escalation) == (verdict in CLOSE)
    assert out.reasons[0].startswith("A minus B:")
    assert "one-sided 97.5% bound" in out.reasons[0]


@pytest.mark.parametrize(("low", "high", "verdict"), [
    (0.001, 0.05, "worth_acting_on"),
    (0.0, 0.05, "inconclusive"),         # L == 0: not shown better
    (-0.05, 0.0, "inconclusive"),        # H == 0: not shown worse
    (-0.05, -0.001, "regression"),
])
def test_superiority_with_no_minimum_improvement(low: float, high: float, verdict: str) -> None:
    out = decide_on(interval(low, high), Dec(minimum_improvement=0.0, minimum_units=10))
    assert out.verdict == verdict


def test_no_material_gain_is_not_equivalence() -> None:
    out = decide_on(interval(-0.02, 0.02), D)
    assert "not evidence of equivalence" in out.headline
    assert any("NOT evidence of equivalence" in r for r in out.reasons)


def test_regression_says_by_how_much() -> None:
    out = decide_on(interval(-0.09, -0.01, est=-0.05), D)
    assert out.verdict == "regression"
    assert "5.0 points" in out.headline and "1.0 points and 9.0 points" in out.headline


@pytest.mark.parametrize(("low", "high", "verdict"), [
    (-0.015, 0.04, "non_inferior"),      # L > -m
    (-0.02, 0.04, "not_non_inferior"),   # L == -m is not above it
    (-0.05, 0.01, "not_non_inferior"),
    (-0.09, -0.01, "regression"),        # H < 0 and L <= -m
    (-0.019, -0.001, "non_inferior"),    # worse, but by less than the margin: said in the reasons
])
def test_non_inferiority_branches(low: float, high: float, verdict: str) -> None:
    out = decide_on(interval(low, high), Dec(goal="non_inferiority", margin=0.02, minimum_units=10))
    assert out.verdict == verdict
    if (low, high) == (-0.019, -0.001):
        assert any("nevertheless worse" in r for r in out.reasons)


@pytest.mark.parametrize(("low", "high", "verdict"), [
    (-0.019, 0.019, "equivalent"),
    (-0.02, 0.01, "not_equivalent"),     # L == -m (strict)
    (-0.01, 0.02, "not_equivalent"),     # H == m (strict)
    (-0.021, 0.024, "not_equivalent"),   # the first version read a 90 % interval here; one error rate now
])
def test_equivalence_reads_the_same_bounds(low: float, high: float, verdict: str) -> None:
    out = decide_on(interval(low, high), Dec(goal="equivalence", margin=0.02, minimum_units=10))
    assert out.verdict == verdict
    assert out.thresholds.one_sided_level == pytest.approx(0.975)
    assert any("one-sided level 97.5%" in r for r in out.reasons)


def test_too_few_units_comes_first() -> None:
    crit = Record(index=2, kind="critical_failures", label="c", caveats=[], offers=Offers(critical=[
        CriticalStatus(candidate="A", critical_cases=5, failures=3, upper_bound=0.9, confidence_level=0.95,
                       method="cp", max_rate=0.05, within_limit=False, adopting=True)]))
    out = decide_on(interval(0.05, 0.12), Dec(critical_failures=Limit(), minimum_units=10), extra=[crit], units=9)
    assert out.verdict == "too_few_units"
    assert "Only 9 independent cases" in out.reasons[0]


def status(name: str, cases: int, failures: int, upper: float | None, *, adopting: bool = True,
           reachable: bool | None = True) -> CriticalStatus:
    return CriticalStatus(candidate=name, critical_cases=cases, failures=failures, upper_bound=upper,
                          confidence_level=0.95, method="cp", max_rate=0.05,
                          within_limit=upper is not None and upper < 0.05, adopting=adopting, reachable=reachable)


def crit_record(*statuses: CriticalStatus) -> Record:
    return Record(index=2, kind="critical_failures", label="c", caveats=[], offers=Offers(critical=list(statuses)))


@pytest.mark.parametrize(("cases", "failures", "upper", "verdict"), [
    (100, 0, 0.0295, "worth_acting_on"),   # 0/100: exact bound 2.95 % < 5 %
    (12, 0, 0.221, "blocked"),             # none observed, but the bound 22.1 % is not below 5 %
    (100, 9, 0.151, "blocked"),            # the observed rate itself exceeds the limit
    (0, 0, None, "blocked"),               # no critical case run: cannot be ruled out
    (200, 4, 0.05, "blocked"),             # a bound equal to the limit is not below it (strict)
])
def test_critical_limit_blocks_whatever_the_average(cases: int, failures: int, upper: float | None,
                                                     verdict: str) -> None:
    out = decide_on(interval(0.05, 0.12), Dec(critical_failures=Limit(), minimum_units=10),
                    extra=[crit_record(status("A", cases, failures, upper))])
    assert out.verdict == verdict
    if verdict == "blocked":
        assert out.what_would_change


def test_adopting_candidate_not_checked_blocks() -> None:
    out = decide_on(interval(0.05, 0.12), Dec(critical_failures=Limit(), minimum_units=10),
                    extra=[crit_record(status("B", 100, 0, 0.03, adopting=False))])
    assert out.verdict == "blocked"
    assert "no analysis checked its critical cases" in out.reasons[0]


def test_only_the_adopting_candidate_blocks() -> None:
    out = decide_on(interval(0.05, 0.12), Dec(critical_failures=Limit(), minimum_units=10),
                    extra=[crit_record(status("A", 100, 0, 0.0295), status("B", 60, 8, 0.22, adopting=False))])
    assert out.verdict == "worth_acting_on"
    cav = [c for c in out.caveats if c.code == "critical_other_candidate"]
    assert len(cav) == 1 and cav[0].severity == "verdict" and "8 of 60" in cav[0].message


def test_no_comparison() -> None:
    out = decide(Dec_plan(), [], units=40, unit_name="cases")
    assert out.verdict == "no_comparison" and out.primary is None


def Dec_plan():  # noqa: N802
    from studies import Plan

    return Plan(decision=D, stopping=Stop())


def test_uninformative_interval_is_inconclusive_whatever_its_bounds() -> None:
    out = decide_on(interval(0.1, 0.2, informative=False, why="only 1 of 60 clusters holds any disagreement"), D)
    assert out.verdict == "inconclusive"
    assert "only 1 of 60 clusters" in out.headline
    assert [c.code for c in out.caveats] == ["uninformative_interval"]


def test_primary_at_another_level_is_a_caveat() -> None:
    out = decide_on(interval(0.05, 0.1, level=0.8), D)
    assert any(c.code == "primary_level_differs" and c.severity == "verdict" for c in out.caveats)


def test_findings_and_caveats_reach_the_record() -> None:
    f = Finding(name="channel = chat", estimate=-0.23, low=-0.345, high=-0.12, confidence_level=0.9875,
                adjustment="Holm over 4", material_loss=True, message="chat loses 23 points")
    other = Finding(name="channel = email", estimate=0.0, low=-0.05, high=0.05, confidence_level=0.9875,
                    adjustment="Holm over 4", material_loss=False, message="no loss")
    rec = Record(index=3, kind="slices", label="s", offers=Offers(findings=[f, other]),
                 caveats=[Caveat(code="x_note", severity="note", message="n"),
                          Caveat(code="few_clusters", severity="verdict", message="few")])
    out = decide_on(interval(0.05, 0.1), D, extra=[rec])
    codes = [c.code for c in out.caveats]
    assert "few_clusters" in codes and "confirmatory_loss" in codes and "x_note" not in codes
    assert out.findings == [f, other]
    assert "channel = chat" in out.headline and "email" not in out.headline


def test_sequential_action_is_in_the_reasons() -> None:
    seq = Record(index=4, kind="sequential", label="seq", caveats=[], offers=Offers(
        primary=interval(0.04, 0.09), sequential=SequentialStatus(action="stop_decided", look=3, planned_looks=10,
                                                                  message="the confidence sequence excludes 0")))
    out = decide_on(interval(-0.1, 0.2), D, extra=[seq], stop=Stop(rule="sequential", looks=10))
    assert out.verdict == "worth_acting_on" and out.primary_analysis == 4
    assert out.sequential is not None and any("look 3 of 10" in r for r in out.reasons)
    assert not any(c.code == "unadjusted_looks" for c in out.caveats)


def test_record_is_typed_and_serialisable() -> None:
    out = decide_on(interval(0.05, 0.1), D)
    again = DecisionRecord.model_validate_json(out.model_dump_json())
    assert again == out
    schema = DecisionRecord.model_json_schema()
    assert set(schema["properties"]["verdict"]["enum"]) == set(VERDICTS)


def test_every_verdict_is_reachable() -> None:
    seen = {decide_on(interval(lo, hi), D).verdict for lo, hi, _ in SUPERIORITY}
    for lo, hi in ((-0.015, 0.04), (-0.05, 0.01)):
        seen.add(decide_on(interval(lo, hi), Dec(goal="non_inferiority", margin=0.02)).verdict)
    for lo, hi in ((-0.01, 0.01), (-0.01, 0.03)):
        seen.add(decide_on(interval(lo, hi), Dec(goal="equivalence", margin=0.02)).verdict)
    seen.add(decide_on(interval(0.05, 0.1), Dec(critical_failures=Limit()),
                       extra=[crit_record(status("A", 3, 0, 0.63))]).verdict)
    seen.add(decide_on(interval(0.05, 0.1), Dec(minimum_units=10), units=2).verdict)
    seen.add(decide(Dec_plan(), [], units=20).verdict)
    assert seen == set(VERDICTS)


# -- invariants -------------------------------------------------------------------------------------

bounds = st.tuples(st.floats(-0.5, 0.5), st.floats(0.0, 0.5)).map(lambda t: (t[0], min(1.0, t[0] + t[1])))
margins = st.sampled_from([0.01, 0.02, 0.05])


@settings(max_examples=200, deadline=None)
@given(bounds, margins)
def test_equivalent_implies_non_inferior(b: tuple[float, float], m: float) -> None:
    eq = decide_on(interval(*b), Dec(goal="equivalence", margin=m))
    ni = decide_on(interval(*b), Dec(goal="non_inferiority", margin=m))
    if eq.verdict == "equivalent":
        assert ni.verdict == "non_inferior"


@settings(max_examples=200, deadline=None)
@given(bounds, st.sampled_from([0.0, 0.01, 0.03]))
def test_mirroring_the_interval_mirrors_the_verdict(b: tuple[float, float], d: float) -> None:
    lo, hi = b
    fwd = decide_on(interval(lo, hi), Dec(minimum_improvement=d)).verdict
    rev = decide_on(interval(-hi, -lo), Dec(minimum_improvement=d)).verdict
    assert (fwd == "regression") == (rev in ("worth_acting_on", "too_small"))
    if d == 0:
        assert (fwd == "worth_acting_on") == (rev == "regression")
        assert (fwd == "inconclusive") == (rev == "inconclusive")


@settings(max_examples=200, deadline=None)
@given(st.floats(-1, 1), st.sampled_from(["superiority", "non_inferiority", "equivalence"]), margins,
       st.sampled_from([0.0, 0.03]))
def test_no_decisive_verdict_from_a_zero_width_interval(x: float, goal: str, m: float, d: float) -> None:
    # a zero-width interval arriving from any analysis must be marked uninformative; the kinds do so
    # (tests/decision/test_findings.py), and decide() never acts on an uninformative one
    out = decide_on(interval(x, x, informative=False, why="zero width"),
                    Dec(goal=goal, margin=m, minimum_improvement=d))
    assert out.verdict not in DECISIVE


pairs = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 7)), min_size=12, max_size=80)


@settings(max_examples=40, deadline=None)
@given(pairs, st.sampled_from(["auto", "cluster_t"]))
def test_swapping_candidates_mirrors_the_verdict_on_data(rows: list[tuple[int, int, int]], method: str) -> None:
    cl = [f"g{r[2]}" for r in rows]
    fwd = verdict_of(paired_ctx([(a, b) for a, b, _ in rows], clusters=cl), Dec(), method=method)
    rev = verdict_of(paired_ctx([(b, a) for a, b, _ in rows], clusters=cl), Dec(), method=method)
    mirror = {"worth_acting_on": "regression", "regression": "worth_acting_on", "inconclusive": "inconclusive",
              "too_few_units": "too_few_units"}
    assert rev.verdict == mirror[fwd.verdict]
    if fwd.primary.informative:
        assert fwd.primary.high - fwd.primary.low > 0


@settings(max_examples=40, deadline=None)
@given(pairs)
def test_no_informative_zero_width_interval_from_the_kind(rows: list[tuple[int, int, int]]) -> None:
    cl = [f"g{r[2]}" for r in rows]
    for method in ("auto", "cluster_t", "newcombe", "wald"):
        out = verdict_of(paired_ctx([(a, b) for a, b, _ in rows], clusters=cl if method != "wald" else None),
                         Dec(goal="equivalence", margin=0.001), method=method)
        p = out.primary
        assert p.informative is False or p.high - p.low > 1e-12
        assert out.verdict != "equivalent" or p.high - p.low > 0
