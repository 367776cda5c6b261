"""Issue 18, red team: the verdict must survive the other readings of the same results.

Crafted studies whose right verdict follows from formulas computed here, with no evalspec code
in the oracle (Wilson / Newcombe's paired interval, the Clopper-Pearson bound by bisection on
the binomial tail). Each was wrong before the rule it pins (docs/decision.md, "The estimand guard"):

* a candidate **never run** on the cases it would fail (its rows simply absent) was compared on
  the cases it has, under every missing-outcome policy: "worth acting on" at +8.3 points when,
  counted as failures, the difference is -2.5;
* a candidate that **times out on critical cases** under ``missing.policy: exclude`` passed the
  critical-failure limit (0 of 97 failures) that 3 of 100 would break;
* **best of 3 against best of 1** between two copies of the same model: "worth acting on" at +39
  points; with the candidate given fewer attempts, a "regression" of the same size;
* a sequential primary at **80 %** decided a plan preregistered at 95 %, with only a caveat.
"""

from __future__ import annotations

import json
import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline import page_one  # noqa: E402

PLAN = """\
evalspec: 1
id: redteam-{name}
title: Red-team study
question: Should we move from B to A?
decision_owner: test owner
population: invented cases
data:
  results: results.jsonl
  columns: {{candidate: candidate, repeat: repeat, outcome: passed{cols}}}
candidates:
  A: {{model: m-a}}
  B: {{model: m-b}}
baseline: B
units: {{case: case_id}}
attempts: {attempts}
missing: {{policy: {policy}, max_fraction: 0.05}}
analyses:
{analyses}
decision:
  minimum_improvement: 0.02
  minimum_units: 2
{decision}
stopping: {stopping}
"""


def study(folder: Path, rows: list[dict[str, Any]], *, name: str = "s", cols: str = "",
          attempts: str = "{repeats: 1, rule: first}", policy: str = "count_as_fail",
          analyses: str = "  - {kind: paired_difference}", decision: str = "", stopping: str = "{looks: 1}") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    plan = folder / "plan.yaml"
    plan.write_text(PLAN.format(name=name, cols=cols, attempts=attempts, policy=policy, analyses=analyses,
                                decision=decision, stopping=stopping), encoding="utf-8")
    return plan


def run(plan: Path) -> dict[str, Any]:
    from evalspec.run import run_plan

    return run_plan(plan)


# -- the oracle: formulas, no evalspec code ------------------------------------------------------

Z975 = 1.959963984540054


def wilson(x: int, n: int, z: float = Z975) -> tuple[float, float]:
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def newcombe(both: int, only_a: int, only_b: int, neither: int) -> tuple[float, float]:
    """Newcombe (1998, "Improved confidence intervals for the difference between binomial proportions based on
    paired data") method 10: square-and-add of Wilson intervals, phi with the n/2 correction when AD > BC."""
    n = both + only_a + only_b + neither
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson(both + only_a, n)
    l2, u2 = wilson(both + only_b, n)
    den = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    ad_bc = both * neither - only_a * only_b
    phi = ((max(ad_bc - n / 2, 0) if ad_bc > 0 else ad_bc) / math.sqrt(den)) if den else 0.0
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return low, high


def cp_upper(x: int, n: int, level: float = 0.95) -> float:
    """Clopper-Pearson one-sided upper bound: the p with P(X <= x | n, p) = 1 - level (bisection)."""
    def tail(p: float) -> float:
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(x + 1))

    lo, hi = x / n, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tail(mid) > 1 - level else (lo, mid)
    return hi


def rows_of(pattern: list[tuple[int | None, int | None]], prefix: str = "c") -> list[dict[str, Any]]:
    """One attempt per case; None: a missing outcome; the string 'absent': no row at all."""
    rows = []
    for i, pair in enumerate(pattern):
        for cand, v in zip("AB", pair, strict=True):
            if v == "absent":
                continue
            rows.append({"case_id": f"{prefix}{i}", "candidate": cand, "repeat": 1,
                         "passed": None if v is None else bool(v)})
    return rows


# -- 1. cases the candidate was never run on ------------------------------------------------------

@pytest.mark.parametrize("policy", ["count_as_fail", "exclude"])
def test_a_candidate_never_run_on_the_cases_it_would_fail_is_not_worth_acting_on(tmp_path: Path, policy: str) -> None:
    # 360 paired cases: 40 only A passes, 10 only B, 250 both, 60 neither -> +8.3 points, Newcombe +4.6 to +12.2.
    # 40 more cases B passes that A was never run on. Counted as A's failures: (40 - 10 - 40) / 400 = -2.5 points,
    # Newcombe on (250, 40, 50, 60) holds 0: no favourable verdict is right.
    pattern = [(1, 0)] * 40 + [(0, 1)] * 10 + [(1, 1)] * 250 + [(0, 0)] * 60 + [("absent", 1)] * 40
    low, high = newcombe(250, 40, 10, 60)
    assert low > 0.02  # the table alone (the paired cases) says worth acting on
    low_f, high_f = newcombe(250, 40, 50, 60)
    assert low_f < 0 < high_f
    claim = run(study(tmp_path, rows_of(pattern), policy=policy))
    d = claim["decision"]
    assert d["primary"]["low"] == pytest.approx(low, abs=1e-9)
    assert d["verdict"] == "inconclusive", d["headline"]
    sens = d["estimand"]["missing_as_failures"]
    assert sens["cases"] == 40 and sens["estimate"] == pytest.approx(-10 / 400)
    assert (sens["low"], sens["high"]) == pytest.approx((low_f, high_f), abs=1e-9)
    text = next(c["message"] for c in d["caveats"] if c["code"] == "missing_sensitivity")
    assert "never run" in text and "-2.5 points" in text
    assert 'data-code="missing_sensitivity"' in page_one(claim)


def test_cases_only_the_candidate_ran_change_nothing(tmp_path: Path) -> None:
    # the baseline's absent cases are not imputed (as with its missing outcomes): the comparison is on the pairs
    pattern = [(1, 0)] * 40 + [(0, 1)] * 10 + [(1, 1)] * 250 + [(0, 0)] * 60 + [(0, "absent")] * 40
    d = run(study(tmp_path, rows_of(pattern)))["decision"]
    assert d["verdict"] == "worth_acting_on" and d["estimand"]["missing_as_failures"] is None


# -- 2. critical cases the candidate times out on -------------------------------------------------

def _critical_rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(300):  # 100 critical cases (A times out on 3), 200 others where A is better
        crit = i < 100
        a = None if i < 3 else (True if crit else i % 3 != 0)
        b = True if crit else i % 2 == 0
        rows += [{"case_id": f"c{i}", "candidate": "A", "repeat": 1, "passed": a, "critical": crit},
                 {"case_id": f"c{i}", "candidate": "B", "repeat": 1, "passed": b, "critical": crit}]
    return rows


def test_critical_cases_the_candidate_times_out_on_are_not_passes(tmp_path: Path) -> None:
    # excluded: 0 of 97 critical failures, bound 1 - 0.05^(1/97) = 3.0 % < 5 %; as failures 3 of 100: 7.6 % > 5 %
    assert cp_upper(0, 97) == pytest.approx(1 - 0.05 ** (1 / 97), abs=1e-9) and cp_upper(0, 97) < 0.05
    assert cp_upper(3, 100) > 0.05
    plan = study(tmp_path, _critical_rows(), policy="exclude", cols=", critical: critical",
                 analyses="  - {kind: paired_difference}\n  - {kind: critical_failures}",
                 decision="  critical_failures: {max_rate: 0.05}")
    claim = run(plan)
    d = claim["decision"]
    crit = next(s for s in d["critical"] if s["candidate"] == "A")
    assert (crit["critical_cases"], crit["failures"]) == (97, 0) and crit["within_limit"]
    assert d["verdict"] == "inconclusive", d["headline"]
    sens = d["estimand"]["missing_as_failures"]
    assert sens["verdict"] == "blocked"
    text = next(c["message"] for c in d["caveats"] if c["code"] == "missing_sensitivity")
    assert "'blocked'" in text and "critical-failure" in text
    assert 'data-code="missing_sensitivity"' in page_one(claim)


# -- 3. unequal numbers of attempts under a rule that counts them --------------------------------

def _attempt_rows(n_a: int, n_b: int, seed: int, n: int = 300, p: float = 0.5) -> list[dict[str, Any]]:
    """Two copies of one model (each attempt passes with probability p); A ran n_a attempts per case, B n_b."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        for cand, k in (("A", n_a), ("B", n_b)):
            rows += [{"case_id": f"c{i}", "candidate": cand, "repeat": r, "passed": rng.random() < p}
                     for r in range(1, k + 1)]
    return rows


@pytest.mark.parametrize(("n_a", "n_b", "table"), [(3, 1, "worth_acting_on"), (1, 3, "regression")])
def test_best_of_three_against_best_of_one_decides_nothing(tmp_path: Path, n_a: int, n_b: int, table: str) -> None:
    # truth: best of 3 is 1 - 0.5^3 = 87.5 % for both; best of 3 against best of 1 is 87.5 - 50 = 37.5 points apart
    claim = run(study(tmp_path, _attempt_rows(n_a, n_b, seed=2), attempts="{repeats: 3, rule: best_of_k, k: 3}"))
    d = claim["decision"]
    assert abs(d["primary"]["estimate"]) > 0.3
    assert table in d["headline"], d["headline"]  # what the table alone would have said
    assert d["verdict"] == "inconclusive"
    att = d["estimand"]["equal_attempts"]
    assert att["cases"] == 300 and (att["candidate_more"], att["baseline_more"]) == ((300, 0) if n_a > n_b else (0, 300))
    assert att["low"] < 0 < att["high"]  # first attempt against first attempt: same model
    assert 'data-code="unequal_attempts"' in page_one(claim)


def test_equal_attempts_need_no_second_reading(tmp_path: Path) -> None:
    d = run(study(tmp_path, _attempt_rows(3, 3, seed=4), attempts="{repeats: 3, rule: majority}"))["decision"]
    assert d["estimand"]["equal_attempts"] is None


# -- 4. a primary interval below the decision's level ---------------------------------------------

def test_a_sequence_at_a_lower_level_than_the_plan_cannot_decide(tmp_path: Path) -> None:
    rng = random.Random(1)
    pattern = [(int(rng.random() < 0.75), int(rng.random() < 0.45)) for _ in range(300)]
    analyses = "  - {kind: paired_difference}\n  - {kind: sequential_difference, confidence_level: 0.8}"
    claim = run(study(tmp_path, rows_of(pattern), analyses=analyses,
                      stopping="{rule: sequential, looks: 5, max_units: 300}"))
    d = claim["decision"]
    assert d["primary"]["confidence_level"] == 0.8 and d["primary"]["low"] > 0.02
    assert d["verdict"] == "inconclusive"
    assert "80%" in d["headline"] and "95%" in d["headline"]
    assert [c["code"] for c in d["caveats"]].count("primary_level_differs") == 1


# -- simulated error rates of the rules (seeded, small) -------------------------------------------

@dataclass(frozen=True)
class _Rec:
    index: int
    kind: str
    label: str
    params: Any
    result: Any
    caveats: list[Any]
    seeds: list[Any]
    offers: Any


def _decide_sim(ctx: Any) -> tuple[str, str]:
    """(verdict with the other readings, verdict of the table alone) for one simulated study."""
    from evalspec.analyses.registry import get_kind
    from evalspec.decision import decide
    from evalspec.run import case_evidence

    kind = get_kind("paired_difference")
    out = kind.compute(ctx, kind.params(kind="paired_difference"))
    rec = _Rec(0, "paired_difference", "p", kind.params(kind="paired_difference"), out.result, list(out.caveats), [],
               out.offers)
    ev = case_evidence(ctx, {"paired_difference": kind}, [rec], {})
    with_rule = decide(ctx.plan, [rec], units=len(ctx.case_ids), evidence=ev).verdict
    alone = decide(ctx.plan, [rec], units=len(ctx.case_ids)).verdict
    return with_rule, alone


@pytest.mark.parametrize(("rule", "p", "n"), [("best_of_k", 0.6, 80), ("majority", 0.8, 200)])
def test_unequal_attempts_keep_the_false_verdict_rate(rule: str, p: float, n: int) -> None:
    # Same model on both sides (each attempt passes with probability p), A 3 attempts, B 1: any decisive
    # verdict is false. The table alone is mostly decisive (best of 3 at p = 0.6: 93.6 % against 60 %; majority of
    # 3 at 0.8: 89.6 % against 80 %); with the rule a decisive verdict needs the first-attempt comparison (at 95 %,
    # 2.5 % a side) to agree.
    from evalspec.testing import context_from_arrays

    rng = random.Random(11)
    reps = 80
    false_rule = false_alone = 0
    for _ in range(reps):
        cand, case, rep, passed = [], [], [], []
        for i in range(n):
            for j, k in ((0, 3), (1, 1)):
                for r in range(1, k + 1):
                    cand.append(j), case.append(i), rep.append(r), passed.append(float(rng.random() < p))
        ctx = context_from_arrays(["A", "B"], [f"c{i}" for i in range(n)], cand, case, passed, repeat=rep, rule=rule,
                                  k=3 if rule == "best_of_k" else None, baseline="B", primary=("A", "B"),
                                  planned_repeats=3, minimum_units=2)
        with_rule, alone = _decide_sim(ctx)
        false_rule += with_rule not in ("inconclusive", "no_material_gain")
        false_alone += alone not in ("inconclusive", "no_material_gain")
    assert false_alone / reps > 0.5  # the design the rule exists for
    assert false_rule / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)


def test_informative_timeouts_never_make_a_favourable_verdict_the_counted_reading_would_not() -> None:
    # A is 4 points better where it answers, but it times out on 60 % of the cases it would fail (policy exclude):
    # the verdict with the rule is favourable only when it is favourable with A's timeouts counted as failures.
    from evalspec.testing import context_from_arrays

    rng = random.Random(5)
    reps, n = 60, 150
    gains_rule = gains_alone = 0
    for _ in range(reps):
        cand, case, passed = [], [], []
        for i in range(n):
            a = rng.random() < 0.7
            b = rng.random() < 0.66
            cand += [0, 1]
            case += [i, i]
            passed += [float(a) if a or rng.random() > 0.6 else float("nan"), float(b)]
        ctx = context_from_arrays(["A", "B"], [f"c{i}" for i in range(n)], cand, case, passed, baseline="B",
                                  primary=("A", "B"), missing_policy="exclude", minimum_units=2)
        with_rule, alone = _decide_sim(ctx)
        counted = context_from_arrays(["A", "B"], [f"c{i}" for i in range(n)], cand, case, passed, baseline="B",
                                      primary=("A", "B"), missing_policy="count_as_fail", minimum_units=2)
        truth_reading, _ = _decide_sim(counted)
        if with_rule == "worth_acting_on":
            assert truth_reading == "worth_acting_on"
        gains_rule += with_rule == "worth_acting_on"
        gains_alone += alone == "worth_acting_on"
    assert gains_alone > gains_rule


# -- 5. two primary intervals about different questions --------------------------------------------

def _three_candidates(seed: int = 3) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for i in range(300):  # A far better than B; C worse than B; a quarter of the cases graded by people
        for cand, p in (("A", 0.8), ("C", 0.45), ("B", 0.55)):
            passed = rng.random() < p
            rows.append({"case_id": f"c{i}", "candidate": cand, "repeat": 1, "passed": passed,
                         "human": passed if i % 4 == 0 else None})
    return rows


def _three_plan(tmp_path: Path, analyses: str) -> Path:
    plan = study(tmp_path, _three_candidates(), analyses=analyses, stopping="{rule: sequential, looks: 3}")
    text = plan.read_text(encoding="utf-8").replace("  A: {model: m-a}\n", "  A: {model: m-a}\n  C: {model: m-c}\n")
    plan.write_text(text, encoding="utf-8")
    return plan


def test_a_sequence_about_another_pair_does_not_answer_the_plans_question(tmp_path: Path) -> None:
    # the fixed primary compares A with B (about +25 points); the sequence compares C with B: the verdict read
    # the sequence and answered a question about C
    plan = _three_plan(tmp_path, "  - {kind: paired_difference}\n  - {kind: sequential_difference, compare: [C, B]}")
    d = run(plan)["decision"]
    assert d["verdict"] == "inconclusive"
    assert "conflicting_primaries" in [c["code"] for c in d["caveats"]]
    assert "more than one primary comparison" in d["headline"]


def test_a_sequence_of_the_judges_labels_does_not_stand_in_for_peoples(tmp_path: Path) -> None:
    judge = ("{kind: judge_corrected, human_label: human, labelled_subset: {selection: simple_random, "
             "fraction: 0.25}, primary: true}")
    plan = _three_plan(tmp_path, "  - {kind: paired_difference, primary: false}\n"
                                 f"  - {{kind: sequential_difference}}\n  - {judge}")
    d = run(plan)["decision"]
    assert d["verdict"] == "inconclusive"
    text = next(c["message"] for c in d["caveats"] if c["code"] == "conflicting_primaries")
    assert "judge_corrected" in text and "people" in text


def test_a_sequence_that_replaces_the_fixed_interval_of_the_same_pair_is_no_conflict(tmp_path: Path) -> None:
    plan = _three_plan(tmp_path, "  - {kind: paired_difference}\n  - {kind: sequential_difference}")
    d = run(plan)["decision"]
    assert "conflicting_primaries" not in [c["code"] for c in d["caveats"]]
    assert d["primary"]["method"].startswith("anytime-valid") and d["verdict"] == "worth_acting_on"


# -- invariants of the two readings ----------------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_attempt = st.sampled_from([0.0, 1.0, float("nan")])


@given(st.lists(st.tuples(st.lists(_attempt, min_size=0, max_size=4), st.lists(_attempt, min_size=1, max_size=4)),
                min_size=1, max_size=12),
       st.sampled_from(["best_of_k", "majority", "first", "mean"]), st.sampled_from(["exclude", "count_as_fail"]))
def test_the_readings_change_only_what_they_say(cases: list[tuple[list[float], list[float]]], rule: str,
                                                 policy: str) -> None:
    import numpy as np

    from evalspec.sensitivity_views import equal_attempts, missing_against_candidate, missing_as_failures
    from evalspec.testing import context_from_arrays

    cand, case, rep, passed = [], [], [], []
    for i, (a, b) in enumerate(cases):
        for j, attempts in ((0, a), (1, b)):
            for r, v in enumerate(attempts, start=1):
                cand.append(j), case.append(i), rep.append(r), passed.append(v)
    ctx = context_from_arrays(["A", "B"], [f"c{i}" for i in range(len(cases))], cand, case, passed, repeat=rep,
                              rule=rule, k=2 if rule == "best_of_k" else None, baseline="B", primary=("A", "B"),
                              missing_policy=policy, planned_repeats=4)
    miss = missing_as_failures(ctx, "A", "B")
    if miss is not None:
        v, v0 = miss.ctx.outcomes.values, ctx.outcomes.values
        np.testing.assert_array_equal(v[1], v0[1])  # the baseline keeps the plan's policy
        assert not np.isnan(v[0][~np.isnan(v0[1])]).any()  # the candidate has an outcome wherever the baseline has
        ok = ~np.isnan(v0[0])
        assert (v[0][ok] <= v0[0][ok] + 1e-12).all()  # counting failures never raises an outcome
    against = missing_against_candidate(ctx, "A", "B")
    if against is not None:
        v, v0 = against.ctx.outcomes.values, ctx.outcomes.values
        for row, sign in ((0, 1), (1, -1)):  # the candidate's outcomes only fall, the baseline's only rise
            ok = ~np.isnan(v0[row]) & ~np.isnan(v[row])
            assert (sign * (v[row][ok] - v0[row][ok]) <= 1e-12).all()
    same = equal_attempts(ctx, "A", "B")
    if rule in ("first", "mean"):
        assert same is None
    elif same is not None:
        out = same.ctx.outcomes
        both = ~np.isnan(out.values[0]) & ~np.isnan(out.values[1])
        np.testing.assert_array_equal(out.attempts[0][both], out.attempts[1][both])


# -- 6. the baseline's missing outcomes ------------------------------------------------------------

def test_the_baselines_informative_timeouts_are_said_beside_the_verdict(tmp_path: Path) -> None:
    # 1000 cases; B times out on 49 cases A fails (policy exclude). Left out: 60 only-A, 60 only-B of 951 -> 0.0,
    # Newcombe holds 0 within +-2.3 points: non-inferior at a 3-point margin. Had B passed them:
    # (60 - 60 - 49) / 1000 = -4.9 points, Newcombe wholly below 0: a regression. The plan's policy keeps the
    # verdict (the candidate does not gain by the baseline's silence), but it says what it rests on.
    pattern = [(0, None)] * 49 + [(1, 0)] * 60 + [(0, 1)] * 60 + [(1, 1)] * 600 + [(0, 0)] * 231
    low, high = newcombe(600, 60, 60, 231)
    assert -0.03 < low < 0 < high < 0.03
    low_b, high_b = newcombe(600, 60, 109, 231)
    assert high_b < 0
    claim = run(study(tmp_path, rows_of(pattern), policy="exclude",
                      decision="  goal: non_inferiority\n  margin: 0.03"))
    d = claim["decision"]
    assert d["verdict"] == "non_inferior"
    both = d["estimand"]["missing_against_candidate"]
    assert both["estimate"] == pytest.approx(-49 / 1000) and both["verdict"] == "regression"
    assert (both["low"], both["high"]) == pytest.approx((low_b, high_b), abs=1e-9)
    assert d["estimand"]["missing_as_failures"] is None  # A has nothing missing
    text = next(c["message"] for c in d["caveats"] if c["code"] == "missing_both_sides")
    assert "B's missing outcomes" in text and "'regression'" in text
    assert 'data-code="missing_both_sides"' in page_one(claim)


def test_a_sequence_that_would_stop_says_so_only_when_the_verdict_stands(tmp_path: Path) -> None:
    # the sequence alone (A +19.4 points on the 360 cases it ran) would stop with the gain established; counted
    # as failures, the 80 cases A never ran give (80 - 10 - 80) / 440 = -2.3 points: the verdict does not stand,
    # and neither does the sequence's 'stop: decided'
    rng = random.Random(8)
    pattern = [(1, 0)] * 80 + [(0, 1)] * 10 + [(1, 1)] * 200 + [(0, 0)] * 70
    rng.shuffle(pattern)
    pattern += [("absent", 1)] * 80
    analyses = "  - {kind: paired_difference}\n  - {kind: sequential_difference}"
    d = run(study(tmp_path, rows_of(pattern), analyses=analyses,
                  stopping="{rule: sequential, looks: 5, max_units: 440}"))["decision"]
    assert d["sequential"]["action"] == "stop_decided"
    assert d["verdict"] == "inconclusive"
    assert any("'stop: decided') does not stand" in r for r in d["reasons"])


def test_an_overruled_verdict_keeps_no_advice_of_the_verdict_it_replaced(tmp_path: Path) -> None:
    pattern = [(1, 0)] * 40 + [(0, 1)] * 10 + [(1, 1)] * 250 + [(0, 0)] * 60 + [("absent", 1)] * 40
    d = run(study(tmp_path, rows_of(pattern)))["decision"]
    assert d["verdict"] == "inconclusive"
    assert not any("reopen the decision" in c for c in d["what_would_change"])
    assert any("rerun them" in c for c in d["what_would_change"])
    assert any("never run on count too" in e for e in d["escalation"])


def test_critical_timeouts_are_said_when_there_is_no_comparison(tmp_path: Path) -> None:
    plan = study(tmp_path, _critical_rows(), policy="exclude", cols=", critical: critical",
                 analyses="  - {kind: critical_failures}", decision="  critical_failures: {max_rate: 0.05}")
    d = run(plan)["decision"]
    assert d["verdict"] == "no_comparison"
    text = next(c["message"] for c in d["caveats"] if c["code"] == "missing_sensitivity")
    assert "critical-failure limit is not met" in text


def test_pass_at_k_with_fewer_attempts_than_k_is_refused_in_words_that_say_why(tmp_path: Path) -> None:
    from evalspec.errors import InputError

    plan = study(tmp_path, _attempt_rows(3, 1, seed=2), attempts="{repeats: 3, rule: pass_at_k, k: 2}")
    with pytest.raises(InputError) as err:
        run(plan)
    text = " ".join(d.message for d in err.value.diagnostics)
    assert "at least k = 2 attempts" in text
