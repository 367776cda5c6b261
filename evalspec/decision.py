"""The decision: preregistered thresholds applied to the primary paired interval.

Seed 000 ("Make the decision threshold explicit"): an interval spanning a material gain
and a material loss is inconclusive; an interval that excludes zero can still include an
improvement too small to act on; failing to establish a difference does not prove
equivalence; a critical-failure limit blocks whatever the average says; few independent
units cannot carry a verdict.

:func:`decide` is a pure function of the plan's decision block and analysis results. The
order of the checks is fixed:

1. ``too_few_units`` — independent units (clusters if declared, else cases) below
   ``decision.minimum_units``;
2. ``blocked`` — for the adopting candidate (the primary comparison's candidate; every
   candidate when there is no comparison) the critical-failure bound is not below
   ``max_rate``, or no critical case was run;
3. ``no_comparison`` — the plan has no paired comparison;
4. by goal (``d`` = minimum improvement, ``m`` = margin, ``[L, H]`` the interval):

   superiority
       ``L ≥ d`` worth_acting_on; ``0 < L < d`` too_small; ``H ≤ 0`` regression;
       ``L < −d`` and ``H > d`` inconclusive; otherwise (the interval holds 0)
       ``H < d`` no_material_gain (not equivalence!) else inconclusive.
   non_inferiority
       ``L > −m`` non_inferior; else ``H < 0`` regression; else not_non_inferior.
   equivalence
       the interval at level ``1 − 2α`` (TOST) inside ``(−m, m)`` equivalent; else
       not_equivalent.
"""

from __future__ import annotations

from typing import Any

__all__ = ["decide", "VERDICTS", "independent_units"]

VERDICTS = (
    "worth_acting_on", "too_small", "no_material_gain", "inconclusive", "regression", "non_inferior",
    "not_non_inferior", "equivalent", "not_equivalent", "blocked", "too_few_units", "no_comparison",
)


def _pp(x: float) -> str:
    """A difference in pass rate as percentage points: 0.04 -> '4.0 points'."""
    return f"{abs(x) * 100:.1f} points" if abs(x) * 100 >= 0.05 else "0.0 points"


def _signed(x: float) -> str:
    v = x * 100
    if abs(v) < 0.05:
        return "0.0"
    return f"{v:+.1f}"


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def independent_units(n_cases: int, n_clusters: int | None) -> tuple[int, str]:
    """(count, name) of the independent units: clusters when declared, else cases."""
    return (n_clusters, "clusters") if n_clusters is not None else (n_cases, "cases")


def _escalation(verdict: str, primary: dict[str, Any] | None, missing: dict[str, Any] | None) -> list[str]:
    """Seed 000's escalation path, with the numbers of this result where they exist."""
    steps = ["Check the data and labels first; do not rerun until a preferred answer appears."]
    if primary is not None:
        table = primary.get("table")
        dis = primary.get("disagreements") or {}
        if table is not None:
            steps.append(f"Review the {table['b'] + table['c']} paired disagreements ({table['b']} where "
                         f"{primary['candidate']} alone passed, {table['c']} where {primary['baseline']} alone passed).")
        elif dis:
            steps.append(f"Review the {len(dis.get('candidate_only', [])) + len(dis.get('baseline_only', []))} cases "
                         "where the candidates' outcomes differ.")
        cl = primary.get("clusters")
        if cl and cl.get("top_share") is not None:
            steps.append(f"Check whether a few source groups dominate: the top {cl['top_clusters']} of {cl['n']} "
                         f"clusters give {cl['top_share']:.0%} of the net difference.")
    if missing:
        counts = ", ".join(f"{k} {v['missing']}" for k, v in missing.items())
        steps.append(f"Verify that missing outcomes were treated the same way for every candidate ({counts} missing).")
    steps.append("Label any subgroup chosen after seeing the results as exploratory.")
    if verdict in ("worth_acting_on", "regression", "non_inferior", "equivalent"):
        return steps
    steps += [
        "New independent cases from the target population reduce sampling uncertainty; repeats of existing cases "
        "measure run variability instead. They answer different questions.",
        "Record a stopping rule or decision date before collecting more data, so repeated looks stay visible.",
        "If the evidence cannot be collected, narrow the claim and keep a human control (such as human review) for "
        "the uncertain slice, and report the unresolved uncertainty to the decision owner.",
    ]
    return steps


def decide(decision: Any, *, primary: dict[str, Any] | None, critical: dict[str, Any] | None,
           units: int, unit_name: str = "cases", missing: dict[str, Any] | None = None) -> dict[str, Any]:
    """The verdict and its reasons.

    Parameters
    ----------
    decision : evalspec.plan.model.Decision
        The plan's decision block (goal, minimum_improvement, margin, confidence_level,
        critical_failures, minimum_units).
    primary : dict or None
        The primary ``paired_difference`` result (``candidate``, ``baseline``,
        ``estimate``, ``low``, ``high``, ``method``, ``confidence_level`` and, for
        equivalence, ``equivalence`` with the ``1 − 2α`` interval); None without one.
    critical : dict or None
        The ``critical_failures`` result, if the plan has one.
    units : int
        Number of independent units; ``unit_name`` says what they are.
    missing : dict, optional
        Missing outcomes per candidate (for the escalation steps).

    Returns
    -------
    dict
        The claim's ``decision`` entry.
    """
    goal = decision.goal
    d = float(decision.minimum_improvement)
    m = None if decision.margin is None else float(decision.margin)
    cf = decision.critical_failures
    thresholds = {
        "minimum_improvement": d, "margin": m, "confidence_level": float(decision.confidence_level),
        "critical_failures": None if cf is None else {"max_rate": float(cf.max_rate),
                                                      "confidence_level": float(cf.confidence_level)},
        "minimum_units": int(decision.minimum_units),
    }
    prim = None
    if primary is not None:
        prim = {"analysis": primary.get("analysis"), "candidate": primary["candidate"],
                "baseline": primary["baseline"], "estimate": primary["estimate"], "low": primary["low"],
                "high": primary["high"], "method": primary["method"],
                "confidence_level": primary["confidence_level"]}
    out: dict[str, Any] = {"goal": goal, "thresholds": thresholds, "primary": prim}
    reasons: list[str] = []
    change: list[str] = []

    def finish(verdict: str, headline: str) -> dict[str, Any]:
        out.update(verdict=verdict, headline=headline, reasons=reasons, what_would_change=change,
                   escalation=_escalation(verdict, primary, missing))
        return out

    if prim is not None:
        level = prim["confidence_level"]
        reasons.append(f"{prim['candidate']} minus {prim['baseline']}: {_signed(prim['estimate'])} points, "
                       f"{level:.0%} interval {_signed(prim['low'])} to {_signed(prim['high'])} points "
                       f"({prim['method']}).")

    # 1. too few independent units
    if units < decision.minimum_units:
        reasons.insert(0, f"Only {units} independent {unit_name}; the plan requires at least "
                       f"{decision.minimum_units} before any verdict.")
        change.append(f"Collect at least {decision.minimum_units - units} more independent {unit_name} "
                      "(more repeats of the same units do not count).")
        return finish("too_few_units", f"Too few independent {unit_name} ({units} < {decision.minimum_units}) "
                      "to reach a verdict.")

    # 2. critical-failure limit
    if cf is not None and critical is not None:
        who = [prim["candidate"]] if prim is not None else list(critical.get("candidates", {}))
        blocked = []
        for name in who:
            entry = critical.get("candidates", {}).get(name)
            if entry is None:
                blocked.append(name)
                reasons.insert(0, f"{name}: the critical_failures analysis did not check this candidate, so a "
                               f"critical-failure rate above the limit of {_pct(cf.max_rate)} cannot be ruled out.")
                change.append(f"Include {name} in the critical_failures analysis.")
                continue
            ub = entry.get("upper_bound")
            if entry.get("critical_cases", 0) == 0:
                blocked.append(name)
                reasons.insert(0, f"{name}: no critical case was run, so a critical-failure rate above the limit "
                               f"of {_pct(cf.max_rate)} cannot be ruled out.")
                change.append(f"Run {name} on critical cases: with no failures, about "
                              f"{_zero_failure_n(cf.max_rate, cf.confidence_level)} critical cases are needed for "
                              f"the {cf.confidence_level:.0%} upper bound to fall below {_pct(cf.max_rate)}.")
            elif ub is None or ub >= cf.max_rate:
                blocked.append(name)
                exceeded = entry["failures"] / entry["critical_cases"] >= cf.max_rate
                reasons.insert(0, f"{name}: {entry['failures']} of {entry['critical_cases']} critical cases failed; "
                               f"the {entry['confidence_level']:.0%} one-sided upper bound {_pct(ub)} is not below "
                               f"the limit of {_pct(cf.max_rate)}"
                               + (" — the observed rate already exceeds it." if exceeded else
                                  ", so exceeding the limit cannot be ruled out."))
                if entry["failures"] == 0:
                    change.append(f"With no failures, about {_zero_failure_n(cf.max_rate, cf.confidence_level)} "
                                  f"critical cases are needed to bring the bound below {_pct(cf.max_rate)}.")
                else:
                    change.append(f"Fix the critical failures of {name}, then show on fresh critical cases that the "
                                  f"upper bound falls below {_pct(cf.max_rate)}.")
        if blocked:
            return finish("blocked", f"Blocked: the critical-failure limit of {_pct(cf.max_rate)} is exceeded or "
                          f"cannot be ruled out for {', '.join(blocked)}, whatever the average says.")

    # 3. no comparison
    if prim is None:
        reasons.append("The plan has no paired comparison, so there is no difference to decide on; the results "
                       "describe each candidate separately.")
        return finish("no_comparison", "No comparison was planned; the report describes each candidate's results.")

    c, b = prim["candidate"], prim["baseline"]
    low, high, est = prim["low"], prim["high"], prim["estimate"]
    if goal == "superiority":
        if low >= d:
            reasons.append(f"The whole interval lies at or above the minimum improvement of {_pp(d)}.")
            change.append(f"A lower bound below {_pp(d)} on new independent cases would reopen the decision.")
            return finish("worth_acting_on", f"{c} improves on {b} by at least the {_pp(d)} worth acting on "
                          f"(estimate {_signed(est)} points).")
        if 0 < low < d:
            reasons.append(f"The interval excludes zero but includes gains below the minimum improvement of {_pp(d)}.")
            change.append(f"A lower bound at or above {_pp(d)} — more independent cases narrow the interval — "
                          "would make the gain worth acting on.")
            return finish("too_small", f"{c} is better than {b}, but the gain may be smaller than the {_pp(d)} "
                          "worth a migration.")
        if high <= 0:
            reasons.append(f"The whole interval lies at or below zero: {c} is worse than {b} by "
                           f"{_pp(-high)} to {_pp(-low)}.")
            change.append("Only a changed configuration, re-evaluated on fresh cases, could reverse this.")
            return finish("regression", f"Regression: {c} is worse than {b} by about {_pp(-est)} "
                          f"(between {_pp(-high)} and {_pp(-low)}).")
        if low < -d and high > d:
            reasons.append(f"The interval spans both a material gain (above +{_pp(d)}) and a material loss "
                           f"(below -{_pp(d)}); the evidence does not decide.")
            change.append("More independent cases (or clusters) would narrow the interval; the half-width must fall "
                          f"well below {_pp(d)} to separate a gain from a loss.")
            return finish("inconclusive", f"Inconclusive: the difference could be a material gain or a material loss "
                          f"(estimate {_signed(est)} points).")
        if high < d:
            reasons.append(f"The interval includes zero and rules out a gain of {_pp(d)} or more. This is no material "
                           "gain; it is NOT evidence of equivalence (no equivalence margin was tested).")
            change.append("A lower bound above zero would show an improvement; to claim equivalence, preregister "
                          "goal: equivalence with a margin.")
            return finish("no_material_gain", f"No material gain: {c} does not show an improvement of {_pp(d)} "
                          "worth acting on; this is not evidence of equivalence.")
        reasons.append(f"The interval includes zero and also gains above the minimum improvement of {_pp(d)}; "
                       "superiority is not shown.")
        change.append("More independent cases would narrow the interval and could move its lower bound above "
                      f"{_pp(d)}, or its upper bound below it.")
        return finish("inconclusive", f"Inconclusive: {c} may or may not improve on {b} by the {_pp(d)} worth "
                      f"acting on (estimate {_signed(est)} points).")

    if goal == "non_inferiority":
        assert m is not None
        if low > -m:
            reasons.append(f"The lower bound {_signed(low)} points lies above the non-inferiority margin of "
                           f"-{_pp(m)}.")
            change.append(f"A lower bound at or below -{_pp(m)} on new cases would overturn non-inferiority.")
            return finish("non_inferior", f"{c} is non-inferior to {b} within the {_pp(m)} margin.")
        if high < 0:
            reasons.append(f"The whole interval lies below zero: {c} is worse than {b} by {_pp(-high)} to "
                           f"{_pp(-low)}, and the lower bound passes the margin of -{_pp(m)}.")
            change.append("Only a changed configuration, re-evaluated on fresh cases, could reverse this.")
            return finish("regression", f"Regression: {c} is worse than {b} by about {_pp(-est)}; non-inferiority "
                          "is not shown.")
        reasons.append(f"The lower bound {_signed(low)} points does not clear the non-inferiority margin of -{_pp(m)}.")
        change.append(f"More independent cases could raise the lower bound above -{_pp(m)}.")
        return finish("not_non_inferior", f"Non-inferiority of {c} to {b} within {_pp(m)} is not shown.")

    # equivalence
    assert m is not None
    eq = primary.get("equivalence") if primary is not None else None
    if eq is not None:
        elow, ehigh, elevel = eq["low"], eq["high"], eq["confidence_level"]
        reasons.append(f"Equivalence reads the {elevel:.0%} interval (level 1 - 2 alpha, two one-sided tests): "
                       f"{_signed(elow)} to {_signed(ehigh)} points ({eq['method']}).")
    else:
        elow, ehigh = low, high
        reasons.append("No 1 - 2 alpha (TOST) interval was available; the primary interval was used, which is "
                       "conservative.")
    if -m < elow and ehigh < m:
        reasons.append(f"The interval lies inside the equivalence margin of ±{_pp(m)}.")
        change.append(f"An interval reaching beyond ±{_pp(m)} on new cases would overturn equivalence.")
        return finish("equivalent", f"{c} and {b} are equivalent within ±{_pp(m)}.")
    reasons.append(f"The interval reaches beyond the equivalence margin of ±{_pp(m)}; no difference found is not "
                   "equivalence.")
    change.append(f"More independent cases could narrow the interval to within ±{_pp(m)}.")
    return finish("not_equivalent", f"Equivalence of {c} and {b} within ±{_pp(m)} is not shown.")


def _zero_failure_n(max_rate: float, level: float) -> int:
    """Cases with zero failures needed for the exact one-sided bound to fall below ``max_rate``.

    With 0 failures in n the Clopper–Pearson upper bound is ``1 − (1 − level)^(1/n)``;
    it is below ``r`` when ``n > log(1 − level) / log(1 − r)``.
    """
    import math

    if max_rate <= 0:
        return 0
    if max_rate >= 1:
        return 1
    return int(math.floor(math.log(1 - level) / math.log(1 - max_rate))) + 1
