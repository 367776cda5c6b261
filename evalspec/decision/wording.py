"""The verdict in words: numbers as a decision owner reads them, each table cell's reasons and advice.

:mod:`evalspec.decision.table` says which cell an interval falls in; this module says what
that means for this study (headline, reasons, what would change the verdict) and, for a
close result, the guide's escalation path ("Plan an escalation path for a close result").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalspec.analyses.contract import Caveat, PrimaryInterval

__all__ = ["CLOSE", "ESTIMAND_WORDS", "Words", "cell_words", "escalation", "estimand_words", "lvl", "pct", "pp",
           "signed"]

from evalspec.decision.verdicts import CLOSE
from evalspec.numbers import claim_level as lvl
from evalspec.numbers import claim_pct as pct
from evalspec.numbers import claim_points as pp
from evalspec.numbers import claim_signed as signed


#: What a primary interval bounds, in words (``PrimaryInterval.estimand``); an unknown code reads as itself.
ESTIMAND_WORDS: dict[str, str] = {
    "case_weighted_difference": "the difference in pass rate, each case counting once",
    "cluster_weighted_difference": "the average over clusters of each cluster's mean difference, each cluster "
                                   "counting once whatever its size",
    "human_label_difference": "the difference in pass rate by people's labels (the judge's labels corrected with "
                              "the labelled subset), each case counting once",
}


def estimand_words(code: str) -> str:
    return ESTIMAND_WORDS.get(code, code.replace("_", " "))


@dataclass
class Words:
    """What one cell of the table says for this study."""

    headline: str
    reasons: list[str] = field(default_factory=list)
    change: list[str] = field(default_factory=list)
    #: a verdict in CLOSE that is in fact a clear result: no escalation path
    not_close: bool = False
    #: a label that says more than the verdict code's (None: the table's label)
    label: str | None = None


_NI_CELLS = frozenset({"non_inferior", "ni_regression", "not_non_inferior"})
_EQ_CELLS = frozenset({"equivalent", "beyond_margin", "not_equivalent"})


def cell_words(cell: str, p: PrimaryInterval, d: float, m: float | None) -> Words:
    """Headline, reasons and what would change the verdict, for the cell ``p`` falls in."""
    if cell in _NI_CELLS:
        assert m is not None
        return _non_inferiority_words(cell, p, m)
    if cell in _EQ_CELLS:
        assert m is not None
        return _equivalence_words(cell, p, m)
    return _superiority_words(cell, p, d)


def _superiority_words(cell: str, p: PrimaryInterval, d: float) -> Words:
    c, b, low, high, est = p.candidate, p.baseline, p.low, p.high, p.estimate
    if cell == "above_minimum":
        head = (f"{c} is better than {b} (estimate {signed(est)} points; no minimum improvement was set)." if d <= 0
                else f"{c} improves on {b} by more than the {pp(d)} worth acting on (estimate {signed(est)} points).")
        return Words(head, [f"The whole interval lies above the minimum improvement of {pp(d)}."],
                     [f"A lower bound at or below {pp(d)} on new independent cases would reopen the decision."])
    if cell == "may_be_too_small":
        return Words(f"{c} is better than {b}, but the gain may be no larger than the {pp(d)} worth acting on.",
                     [f"The interval excludes zero but does not exclude gains at or below the minimum improvement of "
                      f"{pp(d)}."],
                     [f"A lower bound above {pp(d)} — more independent cases narrow the interval — would make the gain "
                      "worth acting on."])
    if cell == "below_minimum":
        return Words(f"{c} is better than {b}, but by less than the {pp(d)} worth acting on: the whole interval "
                     f"({signed(low)} to {signed(high)} points) lies below the minimum.",
                     [f"The interval excludes zero and lies wholly below the minimum improvement of {pp(d)}: the gain "
                      "is shown to be too small to act on, not merely uncertain."],
                     [f"More cases of the same kind would only narrow the interval around a gain below {pp(d)}; only "
                      f"a changed {c}, evaluated on fresh cases, could reach the minimum."],
                     not_close=True, label="Gain shown to be below the minimum worth acting on")
    if cell == "regression":
        return Words(f"Regression: {c} is worse than {b} by about {pp(-est)} (between {pp(-high)} and {pp(-low)}).",
                     [f"The whole interval lies below zero: {c} is worse than {b} by {pp(-high)} to {pp(-low)}."],
                     ["Only a changed configuration, re-evaluated on fresh cases, could reverse this."])
    if cell == "gain_or_loss":
        return Words(f"Inconclusive: the difference could be a material gain or a material loss (estimate "
                     f"{signed(est)} points).",
                     [f"The interval spans both a material gain (above +{pp(d)}) and a material loss (below -{pp(d)}); "
                      "the evidence does not decide."],
                     ["More independent cases (or clusters) would narrow the interval; the half-width must fall well "
                      f"below {max(d, 0.0) * 100:.1f} points to separate a gain from a loss."])
    if cell == "no_material_gain":
        return Words(f"No material gain: {c} does not show an improvement of {pp(d)} worth acting on; this is not "
                     "evidence of equivalence.",
                     [f"The interval includes zero and rules out a gain of {pp(d)} or more. This is no material gain; "
                      "it is NOT evidence of equivalence (no equivalence margin was tested)."],
                     ["A lower bound above zero would show an improvement; to claim equivalence, preregister goal: "
                      "equivalence with a margin."])
    if cell == "unsure_no_minimum":
        return Words(f"Inconclusive: {c} may or may not be better than {b} (estimate {signed(est)} points).",
                     ["The interval includes zero: the data do not show which candidate is better."],
                     ["More independent cases would narrow the interval and could move it off zero."])
    if cell == "unsure":
        return Words(f"Inconclusive: {c} may or may not improve on {b} by the {pp(d)} worth acting on (estimate "
                     f"{signed(est)} points).",
                     [f"The interval includes zero and also gains of at least the minimum improvement of {pp(d)}; "
                      "superiority is not shown."],
                     ["More independent cases would narrow the interval and could move its lower bound above "
                      f"{pp(d)}, or its upper bound below it."])
    raise ValueError(f"not a superiority cell: {cell!r}")


def _non_inferiority_words(cell: str, p: PrimaryInterval, m: float) -> Words:
    c, b, low, high, est = p.candidate, p.baseline, p.low, p.high, p.estimate
    if cell == "non_inferior":
        reasons = [f"The lower bound {signed(low)} points lies above the non-inferiority margin of -{pp(m)}."]
        if high < 0:
            reasons.append(f"{c} is nevertheless worse than {b}: the whole interval lies below zero, by less than the "
                           "margin.")
        return Words(f"{c} is non-inferior to {b} within the {pp(m)} margin.", reasons,
                     [f"A lower bound at or below -{pp(m)} on new cases would overturn non-inferiority."])
    if cell == "ni_regression":
        return Words(f"Regression: {c} is worse than {b} by about {pp(-est)}; non-inferiority is not shown.",
                     [f"The whole interval lies below zero: {c} is worse than {b} by {pp(-high)} to {pp(-low)}, and "
                      f"the lower bound does not clear the margin of -{pp(m)}."],
                     ["Only a changed configuration, re-evaluated on fresh cases, could reverse this."])
    return Words(f"Non-inferiority of {c} to {b} within {pp(m)} is not shown.",
                 [f"The lower bound {signed(low)} points does not clear the non-inferiority margin of -{pp(m)}."],
                 [f"More independent cases could raise the lower bound above -{pp(m)}."])


def _equivalence_words(cell: str, p: PrimaryInterval, m: float) -> Words:
    c, b, high, est = p.candidate, p.baseline, p.high, p.estimate
    tost = (f"Equivalence is two one-sided tests, each at one-sided level {lvl(1 - p.one_sided_alpha)}: the same two "
            "bounds as every other verdict.")
    if cell == "equivalent":
        return Words(f"{c} and {b} are equivalent within ±{pp(m)}.",
                     [tost, f"Both bounds lie strictly inside the equivalence margin of ±{pp(m)}."],
                     [f"An interval reaching ±{pp(m)} on new cases would overturn equivalence."])
    if cell == "beyond_margin":
        side = "worse" if high < -m else "better"
        return Words(f"Not equivalent: {c} is {side} than {b} by more than the margin of ±{pp(m)} (estimate "
                     f"{signed(est)} points).",
                     [tost, f"The whole interval lies beyond the equivalence margin of ±{pp(m)}: {c} and {b} differ by "
                      f"more than the margin ({side})."],
                     [f"Only a change to {c}, re-evaluated on fresh cases, could show equivalence: more cases of the "
                      f"same kind would only narrow an interval that already excludes ±{pp(m)}."],
                     not_close=True)
    return Words(f"Equivalence of {c} and {b} within ±{pp(m)} is not shown.",
                 [tost, f"The interval reaches the equivalence margin of ±{pp(m)} or beyond; no difference found is not "
                  "equivalence."],
                 [f"More independent cases could narrow the interval to within ±{pp(m)}."])


def escalation(verdict: str, primary: PrimaryInterval | None, caveats: Sequence[Caveat],
               missing: dict[str, Any] | None, stopping: Any = None) -> list[str]:
    """The guide's escalation path for a close result, with this study's numbers; empty otherwise."""
    if verdict not in CLOSE:
        return []
    steps = ["Check the data and labels first; do not rerun until a preferred answer appears."]
    if primary is not None:
        b, c = primary.candidate_only, primary.baseline_only
        if b is not None and c is not None:
            steps.append(f"Review the {b + c} paired disagreements ({b} where {primary.candidate} alone passed, {c} "
                         f"where {primary.baseline} alone passed).")
        else:
            steps.append(f"Review the cases where the outcomes of {primary.candidate} and {primary.baseline} differ: "
                         "they carry the whole paired difference.")
    top = next((c for c in caveats if c.code == "top_clusters"), None)
    if top is not None:
        steps.append(f"Check whether a few source groups dominate: {top.message[0].lower()}{top.message[1:]}")
    elif {c.code for c in caveats} & {"few_clusters", "dominant_cluster"}:
        steps.append("Check whether a few source groups dominate the difference (see the clusters listed with the "
                     "paired comparison).")
    if missing:
        counts = ", ".join(f"{k} {v['missing']}" for k, v in missing.items() if isinstance(v, dict) and "missing" in v)
        if counts:
            never = " Cases a candidate was never run on count too (see the caveat beside the verdict)." if any(
                c.code == "missing_sensitivity" and "never run" in c.message for c in caveats) else ""
            steps.append(f"Verify that missing outcomes were treated the same way for every candidate ({counts} "
                         f"missing).{never}")
    steps.append("Label any subgroup chosen after seeing the results as exploratory.")
    steps.append("New independent cases from the target population reduce sampling uncertainty; repeats of existing "
                 "cases measure run variability instead. They answer different questions.")
    has_rule = stopping is not None and (getattr(stopping, "max_units", None) is not None
                                         or getattr(stopping, "decision_date", None) is not None)
    if has_rule:
        steps.append("Collecting more data is a new look at the results: keep to the plan's stopping rule"
                     + (f" ({stopping.max_units} independent units at most)" if stopping.max_units is not None else "")
                     + (f" and decision date {stopping.decision_date}" if stopping.decision_date is not None else "")
                     + ", or preregister a sequential design before looking again.")
    else:
        steps.append("Record a stopping rule or decision date before collecting more data, so repeated looks stay "
                     "visible.")
    steps += [
        "If the evidence cannot be collected, narrow the claim and keep a human control (such as human review) for "
        "the uncertain slice, and report the unresolved uncertainty to the decision owner.",
    ]
    return steps
