"""The decision: preregistered thresholds applied to what the analyses offer.

"Repeat AI evaluations and report uncertainty honestly" ("Make the decision threshold
explicit"): an interval spanning a material gain and a material loss is inconclusive; an
interval that excludes zero can still include an improvement too small to act on; failing
to establish a difference does not prove equivalence; a critical-failure limit blocks
whatever the average says; few independent units cannot carry a verdict.

:func:`decide` is a pure function of the plan and the analysis records. It reads only each
record's ``offers`` (:class:`~evalspec.analyses.contract.Offers`: a primary interval,
critical-failure statuses, confirmatory findings, a sequential status) and ``caveats``;
never the inside of a result. The rules, in the order they apply (``docs/decision.md``
states them in words):

1. ``too_few_units`` — independent units (clusters if declared, else cases) below
   ``decision.minimum_units``.
2. ``blocked`` — with a ``decision.critical_failures`` limit, the candidate to adopt (the
   primary comparison's candidate; every candidate when there is none) has no critical
   status, no critical case, or an upper bound that is not strictly below ``max_rate``.
   Only the adopting candidate blocks; another candidate's exceedance (the baseline's) is
   a caveat beside the verdict.
3. ``no_comparison`` — no analysis offers a primary interval.
4. ``inconclusive`` — the primary interval is marked uninformative (zero width, every
   cluster's net contribution zero, too few discordant pairs or clusters with
   disagreements...): it cannot decide anything, whatever its bounds.
5. by goal, with ``[L, H]`` the primary interval at ``decision.confidence_level`` (each
   bound a one-sided bound at ``1 − α``, ``α = (1 − level)/2``), ``d`` the minimum
   improvement and ``m`` the margin. Every comparison is **strict**: a bound touching a
   threshold does not clear it.

   superiority
       ``L > d`` worth_acting_on; ``0 < L ≤ d`` too_small; ``H < 0`` regression;
       ``L < −d`` and ``H > d`` inconclusive (material gain and material loss both
       possible); ``H < d`` no_material_gain (not equivalence!); otherwise inconclusive.
   non_inferiority
       ``L > −m`` non_inferior; else ``H < 0`` regression; else not_non_inferior.
   equivalence
       ``−m < L`` and ``H < m`` equivalent; else not_equivalent. This is the two
       one-sided tests at the same α as the other goals, decided by the same bounds, so
       ``equivalent`` implies ``non_inferior`` at the same margin and the test and the
       interval cannot disagree.

Confirmatory findings with a material loss (a declared slice whose multiplicity-adjusted
interval lies wholly below −margin) are named in the reasons and beside the verdict; they
do not change the code of the verdict, which answers the plan's question about the whole
population. Every caveat of severity ``verdict`` from any analysis is carried into
:attr:`DecisionRecord.caveats` (page 1 of the report), with the decision's own: more than
one planned look without a sequential method, a non-adopting candidate over the critical
limit, a primary interval at another level than the decision's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalspec.analyses.contract import Caveat, CriticalStatus, Finding, PrimaryInterval, SequentialStatus
from evalspec.method_words import method_words

__all__ = [
    "VERDICTS",
    "DecisionRecord",
    "Thresholds",
    "CriticalThreshold",
    "decide",
    "independent_units",
    "verdict_label",
    "zero_failure_n",
]

Tone = Literal["good", "caution", "bad", "neutral"]

#: verdict code -> (short label, tone): the one table of verdicts. Tone drives the verdict
#: band's style; the label carries the meaning in words so the page reads the same in greyscale.
VERDICTS: dict[str, tuple[str, Tone]] = {
    "worth_acting_on": ("Worth acting on", "good"),
    "too_small": ("Gain may be too small to act on", "caution"),
    "no_material_gain": ("No material gain", "neutral"),
    "inconclusive": ("Inconclusive", "caution"),
    "regression": ("Regression", "bad"),
    "non_inferior": ("Non-inferior within the margin", "good"),
    "not_non_inferior": ("Non-inferiority not shown", "bad"),
    "equivalent": ("Equivalent within the margin", "good"),
    "not_equivalent": ("Equivalence not shown", "caution"),
    "blocked": ("Blocked by the critical-failure limit", "bad"),
    "too_few_units": ("Too few independent units for a verdict", "caution"),
    "no_comparison": ("No comparison planned", "neutral"),
}

VerdictCode = Literal[
    "worth_acting_on", "too_small", "no_material_gain", "inconclusive", "regression", "non_inferior",
    "not_non_inferior", "equivalent", "not_equivalent", "blocked", "too_few_units", "no_comparison",
]

#: verdicts that act on the evidence (a change is adopted, or rejected as a regression).
DECISIVE = frozenset({"worth_acting_on", "regression", "non_inferior", "equivalent"})


def verdict_label(code: str) -> tuple[str, str]:
    """(label, tone) of a verdict code."""
    return VERDICTS[code]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CriticalThreshold(_Model):
    max_rate: float
    confidence_level: float = Field(description="Level of the one-sided upper bound.")


class Thresholds(_Model):
    """The preregistered thresholds the verdict applied."""

    minimum_improvement: float
    margin: float | None
    confidence_level: float = Field(description="Two-sided level of the primary interval.")
    one_sided_level: float = Field(
        description="1 - alpha: the level of each bound. Superiority, non-inferiority and equivalence all "
        "use this one error rate."
    )
    critical_failures: CriticalThreshold | None
    minimum_units: int


class DecisionRecord(_Model):
    """The claim's ``decision`` entry: the verdict, why, and what would change it."""

    verdict: VerdictCode
    label: str = Field(description="The verdict in words (VERDICTS).")
    headline: str
    reasons: list[str] = Field(min_length=1)
    what_would_change: list[str]
    escalation: list[str]
    goal: Literal["superiority", "non_inferiority", "equivalence"]
    thresholds: Thresholds
    primary: PrimaryInterval | None = None
    primary_analysis: int | None = Field(None, description="Index of the analysis that offered the primary interval.")
    caveats: list[Caveat] = Field(
        default_factory=list, description="Caveats that bear on the verdict, printed beside it (page 1)."
    )
    critical: list[CriticalStatus] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    sequential: SequentialStatus | None = None
    units: int
    unit_name: str


def _pp(x: float) -> str:
    """A difference in pass rate as percentage points: 0.04 -> '4.0 points'."""
    return f"{abs(x) * 100:.1f} points" if abs(x) * 100 >= 0.05 else "0.0 points"


def _signed(x: float) -> str:
    v = x * 100
    if abs(v) < 0.05:
        return "0.0"
    return f"{v:+.1f}"


def _pct(x: float | None) -> str:
    return "undefined" if x is None else f"{x * 100:.1f}%"


def _lvl(x: float) -> str:
    """A level as a percentage without spurious decimals: 0.95 -> '95%', 0.975 -> '97.5%'."""
    s = f"{x * 100:.2f}".rstrip("0").rstrip(".")
    return f"{s}%"


def independent_units(n_cases: int, n_clusters: int | None) -> tuple[int, str]:
    """(count, name) of the independent units: clusters when declared, else cases."""
    return (n_clusters, "clusters") if n_clusters is not None else (n_cases, "cases")


def zero_failure_n(max_rate: float, level: float) -> int:
    """Failure-free cases needed for the exact one-sided bound to fall strictly below ``max_rate``.

    With 0 failures in n the Clopper–Pearson upper bound is ``1 − (1 − level)^(1/n)``; it is
    below ``r`` when ``n > log(1 − level) / log(1 − r)``.
    """
    if max_rate <= 0:
        return 0
    if max_rate >= 1:
        return 1
    return int(math.floor(math.log(1 - level) / math.log(1 - max_rate))) + 1


_zero_failure_n = zero_failure_n  # the name tests of the first version import


#: Verdicts where the evidence is close to a threshold: the only ones that get an escalation path.
#: (too_few_units, blocked and no_comparison say what would change instead; decisive verdicts are not close.)
CLOSE = frozenset({"inconclusive", "too_small", "no_material_gain", "not_non_inferior", "not_equivalent"})


def _escalation(verdict: str, primary: PrimaryInterval | None, caveats: Sequence[Caveat],
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
            steps.append(f"Verify that missing outcomes were treated the same way for every candidate ({counts} "
                         "missing).")
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


def _dedupe(caveats: Iterable[Caveat]) -> list[Caveat]:
    seen: set[tuple[str, str]] = set()
    out = []
    for c in caveats:
        key = (c.code, c.message)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def decide(plan: Any, records: Sequence[Any], *, units: int, unit_name: str = "cases",
           missing: dict[str, Any] | None = None) -> DecisionRecord:
    """The verdict, its reasons, and the caveats that bear on it.

    Parameters
    ----------
    plan : evalspec.plan.model.Plan
        Reads ``plan.decision`` (goal, thresholds, level, critical limit, minimum units) and
        ``plan.stopping`` (planned looks).
    records : sequence
        The analysis records, each with ``index``, ``kind``, ``label``, ``offers``
        (:class:`~evalspec.analyses.contract.Offers`) and ``caveats``
        (:class:`~evalspec.analyses.contract.Caveat` list). Only those two are read.
    units, unit_name : int, str
        Independent units of the primary comparison (clusters if declared, else cases).
    missing : dict, optional
        Missing outcomes per candidate, for the escalation steps.
    """
    return _Decider(plan, list(records or []), units, unit_name, missing).run()


class _Decider:
    """One application of the rules (a class only to share the accumulating reasons)."""

    def __init__(self, plan: Any, records: list[Any], units: int, unit_name: str,
                 missing: dict[str, Any] | None) -> None:
        self.plan = plan
        dec = plan.decision
        self.dec = dec
        self.records = records
        self.units = units
        self.unit_name = unit_name
        self.missing = missing
        #: set when a verdict in CLOSE is in fact a clear result (e.g. the whole interval beyond the margin)
        self.not_close = False
        self.level = float(dec.confidence_level)
        self.alpha = (1 - self.level) / 2
        cf = dec.critical_failures
        self.cf = cf
        self.thresholds = Thresholds(
            minimum_improvement=float(dec.minimum_improvement),
            margin=None if dec.margin is None else float(dec.margin),
            confidence_level=self.level, one_sided_level=1 - self.alpha,
            critical_failures=None if cf is None else CriticalThreshold(max_rate=float(cf.max_rate),
                                                                        confidence_level=float(cf.confidence_level)),
            minimum_units=int(dec.minimum_units),
        )
        self.reasons: list[str] = []
        self.change: list[str] = []
        self.caveats: list[Caveat] = [c for r in records for c in (r.caveats or ()) if c.severity == "verdict"]
        self.critical: list[CriticalStatus] = [s for r in records for s in r.offers.critical]
        self.findings: list[Finding] = [f for r in records for f in r.offers.findings]
        self.primary, self.primary_analysis, self.sequential = self._primary()
        self.headline_suffix = ""

    # -- gathering -------------------------------------------------------------------------
    def _primary(self) -> tuple[PrimaryInterval | None, int | None, SequentialStatus | None]:
        offered = [(r, r.offers.primary) for r in self.records if r.offers.primary is not None]
        if not offered:
            seq = next((r.offers.sequential for r in self.records if r.offers.sequential is not None), None)
            return None, None, seq
        # a sequential analysis's anytime-valid interval replaces the fixed-sample one
        seq_offered = [(r, p) for r, p in offered if r.offers.sequential is not None]
        rec, prim = (seq_offered or offered)[0]
        if len(offered) > 1 and not seq_offered:
            others = ", ".join(f"analyses[{r.index}]" for r, _ in offered[1:])
            self.caveats.append(Caveat(code="several_primaries", severity="verdict",
                                       message=f"More than one analysis offered a primary interval; the verdict "
                                       f"reads analyses[{rec.index}] and ignores {others}."))
        return prim, int(rec.index), rec.offers.sequential

    def _decision_caveats(self) -> None:
        stop = getattr(self.plan, "stopping", None)
        if stop is not None and int(getattr(stop, "looks", 1)) > 1 and self.sequential is None:
            self.caveats.append(Caveat(
                code="unadjusted_looks", severity="verdict",
                message=f"The plan allows {stop.looks} looks at the data but no sequential method adjusts the "
                "interval for them: the stated error rate holds for one look only, and stopping at a look that "
                "happens to look good makes a false verdict more likely."))
        p = self.primary
        if p is not None and abs(p.confidence_level - self.level) > 1e-9:
            self.caveats.append(Caveat(
                code="primary_level_differs", severity="verdict",
                message=f"The primary interval is at {_lvl(p.confidence_level)} but the decision was preregistered "
                f"at {_lvl(self.level)}; the verdict's error rate is not the one stated in the plan."))
        for f in self.findings:
            if f.material_loss:
                self.caveats.append(Caveat(code="confirmatory_loss", severity="verdict", message=f.message))
        if self.cf is not None:
            for s in self.critical:
                if not s.adopting and s.within_limit is False:
                    self.caveats.append(Caveat(
                        code="critical_other_candidate", severity="verdict",
                        message=f"{s.candidate} (not the candidate to adopt): {s.failures} of {s.critical_cases} "
                        f"critical cases failed; its {_lvl(s.confidence_level)} upper bound {_pct(s.upper_bound)} is "
                        f"not below the limit of {_pct(self.cf.max_rate)}. The current system may already break "
                        "the limit."))

    # -- output ----------------------------------------------------------------------------
    def finish(self, verdict: str, headline: str) -> DecisionRecord:
        caveats = _dedupe(self.caveats)
        notes = [c for r in self.records for c in (r.caveats or ()) if c.severity == "note"]
        return DecisionRecord(
            verdict=verdict, label=VERDICTS[verdict][0], headline=headline + self.headline_suffix,
            reasons=self.reasons or [headline], what_would_change=self.change,
            escalation=[] if self.not_close else
            _escalation(verdict, self.primary, [*caveats, *notes], self.missing, getattr(self.plan, "stopping", None)),
            goal=self.dec.goal,
            thresholds=self.thresholds, primary=self.primary, primary_analysis=self.primary_analysis,
            caveats=caveats, critical=self.critical, findings=self.findings, sequential=self.sequential,
            units=self.units, unit_name=self.unit_name)

    # -- the rules -------------------------------------------------------------------------
    def run(self) -> DecisionRecord:
        self._decision_caveats()
        p = self.primary
        if p is not None and not p.informative:
            self.reasons.append(f"{p.candidate} minus {p.baseline}: {_signed(p.estimate)} points, with no usable "
                                "interval.")
        elif p is not None:
            self.reasons.append(
                f"{p.candidate} minus {p.baseline}: {_signed(p.estimate)} points, {_lvl(p.confidence_level)} "
                f"interval {_signed(p.low)} to {_signed(p.high)} points ({method_words(p.method)}); each bound is a one-sided "
                f"{_lvl(1 - p.one_sided_alpha)} bound.")
        losses = [f for f in self.findings if f.material_loss]
        for f in losses:
            self.reasons.append(f"Confirmatory finding: {f.message}")
        if losses:
            self.headline_suffix = (" But " + ", ".join(f.name for f in losses)
                                    + (" shows" if len(losses) == 1 else " show") + " a material loss.")
        if self.sequential is not None:
            s = self.sequential
            self.reasons.append(f"Sequential design, look {s.look} of {s.planned_looks}: {s.message}")

        # 1. too few independent units
        need = int(self.dec.minimum_units)
        if self.units < need:
            self.reasons.insert(0, f"Only {self.units} independent {self.unit_name}; the plan requires at least "
                                f"{need} before any verdict.")
            self.change.append(f"Collect at least {need - self.units} more independent {self.unit_name} "
                               "(more repeats of the same units do not count).")
            return self.finish("too_few_units", f"Too few independent {self.unit_name} ({self.units} < {need}) "
                               "to reach a verdict.")

        # 2. critical-failure limit, on the candidate to adopt
        blocked = self._critical()
        if blocked:
            return self.finish("blocked", f"Blocked: the critical-failure limit of {_pct(self.cf.max_rate)} is "
                               f"exceeded or cannot be ruled out for {', '.join(blocked)}, whatever the average says.")

        # 3. no comparison
        if p is None:
            self.reasons.append("The plan has no paired comparison, so there is no difference to decide on; the "
                                "results describe each candidate separately.")
            return self.finish("no_comparison", "No comparison was planned; the report describes each candidate's "
                               "results.")

        # 4. an interval that cannot mean anything decides nothing
        if not p.informative:
            why = p.why_uninformative or "the interval carries no information about the difference"
            self.reasons.append(f"The interval cannot decide: {why}")
            self.change.append("More independent units with disagreeing outcomes (new cases, and new clusters where "
                               "cases share one) would give an interval that can decide.")
            if not any(c.code == "uninformative_interval" for c in self.caveats):
                self.caveats.append(Caveat(code="uninformative_interval", severity="verdict",
                                           message=f"The primary interval is uninformative: {why}"))
            return self.finish("inconclusive", f"Inconclusive: the evidence cannot separate {p.candidate} from "
                               f"{p.baseline} ({why.rstrip('.')}).")

        # 5. by goal
        goal = self.dec.goal
        if goal == "superiority":
            return self._superiority(p)
        if goal == "non_inferiority":
            return self._non_inferiority(p)
        return self._equivalence(p)

    def _critical(self) -> list[str]:
        cf = self.cf
        if cf is None:
            return []
        p = self.primary
        by_name = {}
        for s in self.critical:
            by_name.setdefault(s.candidate, s)
        if p is not None:
            who = [p.candidate]
        else:
            who = [s.candidate for s in self.critical if s.adopting] or list(by_name)
        if not who and p is None:
            who = []
        blocked: list[str] = []
        if p is None and not by_name:
            self.reasons.insert(0, "The plan sets a critical-failure limit but no analysis checked critical cases, so "
                                f"a critical-failure rate above {_pct(cf.max_rate)} cannot be ruled out.")
            self.change.append("Add a critical_failures analysis.")
            return ["every candidate"]
        for name in who:
            s = by_name.get(name)
            if s is None:
                blocked.append(name)
                self.reasons.insert(0, f"{name}: no analysis checked its critical cases, so a critical-failure rate "
                                    f"above the limit of {_pct(cf.max_rate)} cannot be ruled out.")
                self.change.append(f"Include {name} in the critical_failures analysis.")
                continue
            need = zero_failure_n(cf.max_rate, s.confidence_level)
            if s.critical_cases == 0:
                blocked.append(name)
                self.reasons.insert(0, f"{name}: no critical case was run, so a critical-failure rate above the limit "
                                    f"of {_pct(cf.max_rate)} cannot be ruled out.")
                self.change.append(f"Run {name} on critical cases: with no failures, {need} critical cases are "
                                   f"needed for the {_lvl(s.confidence_level)} upper bound to fall below "
                                   f"{_pct(cf.max_rate)}.")
            elif s.upper_bound is None or not s.upper_bound < cf.max_rate:
                blocked.append(name)
                rate = s.failures / s.critical_cases
                self.reasons.insert(0, f"{name}: {s.failures} of {s.critical_cases} critical cases failed at least "
                                    f"one attempt; the {_lvl(s.confidence_level)} one-sided upper bound "
                                    f"{_pct(s.upper_bound)} ({s.method}) is not below the limit of "
                                    f"{_pct(cf.max_rate)}"
                                    + (" — the observed rate already exceeds it." if rate >= cf.max_rate else
                                       ", so exceeding the limit cannot be ruled out."))
                if s.reachable is False:
                    self.reasons.insert(1, f"These {s.critical_cases} critical cases can never bring the bound below "
                                        f"{_pct(cf.max_rate)}, even with no failure: {need} independent failure-free "
                                        "cases are needed.")
                if s.failures == 0:
                    self.change.append(f"With no failures, {need} critical cases are needed to bring the bound "
                                       f"below {_pct(cf.max_rate)}.")
                else:
                    self.change.append(f"Fix the critical failures of {name}, then show on fresh critical cases that "
                                       f"the upper bound falls below {_pct(cf.max_rate)}.")
            else:
                self.reasons.append(f"{name}: {s.failures} of {s.critical_cases} critical cases failed; the "
                                    f"{_lvl(s.confidence_level)} upper bound {_pct(s.upper_bound)} is below the limit "
                                    f"of {_pct(cf.max_rate)}.")
        return blocked

    def _superiority(self, p: PrimaryInterval) -> DecisionRecord:
        d = self.thresholds.minimum_improvement
        c, b, low, high, est = p.candidate, p.baseline, p.low, p.high, p.estimate
        if low > d:
            self.reasons.append(f"The whole interval lies above the minimum improvement of {_pp(d)}.")
            self.change.append(f"A lower bound at or below {_pp(d)} on new independent cases would reopen the "
                               "decision.")
            if d <= 0:
                return self.finish("worth_acting_on", f"{c} is better than {b} (estimate {_signed(est)} points; no "
                                   "minimum improvement was set).")
            return self.finish("worth_acting_on", f"{c} improves on {b} by more than the {_pp(d)} worth acting on "
                               f"(estimate {_signed(est)} points).")
        if low > 0:
            self.reasons.append(f"The interval excludes zero but does not exclude gains at or below the minimum "
                                f"improvement of {_pp(d)}.")
            self.change.append(f"A lower bound above {_pp(d)} — more independent cases narrow the interval — would "
                               "make the gain worth acting on.")
            return self.finish("too_small", f"{c} is better than {b}, but the gain may be no larger than the "
                               f"{_pp(d)} worth acting on.")
        if high < 0:
            self.reasons.append(f"The whole interval lies below zero: {c} is worse than {b} by {_pp(-high)} to "
                                f"{_pp(-low)}.")
            self.change.append("Only a changed configuration, re-evaluated on fresh cases, could reverse this.")
            return self.finish("regression", f"Regression: {c} is worse than {b} by about {_pp(-est)} "
                               f"(between {_pp(-high)} and {_pp(-low)}).")
        if d > 0 and low < -d and high > d:
            self.reasons.append(f"The interval spans both a material gain (above +{_pp(d)}) and a material loss "
                                f"(below -{_pp(d)}); the evidence does not decide.")
            self.change.append("More independent cases (or clusters) would narrow the interval; the half-width must "
                               f"fall well below {max(d, 0.0) * 100:.1f} points to separate a gain from a loss.")
            return self.finish("inconclusive", f"Inconclusive: the difference could be a material gain or a material "
                               f"loss (estimate {_signed(est)} points).")
        if high < d:
            self.reasons.append(f"The interval includes zero and rules out a gain of {_pp(d)} or more. This is no "
                                "material gain; it is NOT evidence of equivalence (no equivalence margin was tested).")
            self.change.append("A lower bound above zero would show an improvement; to claim equivalence, "
                               "preregister goal: equivalence with a margin.")
            return self.finish("no_material_gain", f"No material gain: {c} does not show an improvement of {_pp(d)} "
                               "worth acting on; this is not evidence of equivalence.")
        if d <= 0:
            self.reasons.append("The interval includes zero: the data do not show which candidate is better.")
            self.change.append("More independent cases would narrow the interval and could move it off zero.")
            return self.finish("inconclusive", f"Inconclusive: {c} may or may not be better than {b} (estimate "
                               f"{_signed(est)} points).")
        self.reasons.append(f"The interval includes zero and also gains of at least the minimum improvement of "
                            f"{_pp(d)}; superiority is not shown.")
        self.change.append("More independent cases would narrow the interval and could move its lower bound above "
                           f"{_pp(d)}, or its upper bound below it.")
        return self.finish("inconclusive", f"Inconclusive: {c} may or may not improve on {b} by the {_pp(d)} worth "
                           f"acting on (estimate {_signed(est)} points).")

    def _non_inferiority(self, p: PrimaryInterval) -> DecisionRecord:
        m = self.thresholds.margin
        assert m is not None
        c, b, low, high, est = p.candidate, p.baseline, p.low, p.high, p.estimate
        if low > -m:
            self.reasons.append(f"The lower bound {_signed(low)} points lies above the non-inferiority margin of "
                                f"-{_pp(m)}.")
            if high < 0:
                self.reasons.append(f"{c} is nevertheless worse than {b}: the whole interval lies below zero, by less "
                                    "than the margin.")
            self.change.append(f"A lower bound at or below -{_pp(m)} on new cases would overturn non-inferiority.")
            return self.finish("non_inferior", f"{c} is non-inferior to {b} within the {_pp(m)} margin.")
        if high < 0:
            self.reasons.append(f"The whole interval lies below zero: {c} is worse than {b} by {_pp(-high)} to "
                                f"{_pp(-low)}, and the lower bound does not clear the margin of -{_pp(m)}.")
            self.change.append("Only a changed configuration, re-evaluated on fresh cases, could reverse this.")
            return self.finish("regression", f"Regression: {c} is worse than {b} by about {_pp(-est)}; "
                               "non-inferiority is not shown.")
        self.reasons.append(f"The lower bound {_signed(low)} points does not clear the non-inferiority margin of "
                            f"-{_pp(m)}.")
        self.change.append(f"More independent cases could raise the lower bound above -{_pp(m)}.")
        return self.finish("not_non_inferior", f"Non-inferiority of {c} to {b} within {_pp(m)} is not shown.")

    def _equivalence(self, p: PrimaryInterval) -> DecisionRecord:
        m = self.thresholds.margin
        assert m is not None
        c, b, low, high = p.candidate, p.baseline, p.low, p.high
        self.reasons.append(f"Equivalence is two one-sided tests, each at one-sided level "
                            f"{_lvl(1 - p.one_sided_alpha)}: the same two bounds as every other verdict.")
        if -m < low and high < m:
            self.reasons.append(f"Both bounds lie strictly inside the equivalence margin of ±{_pp(m)}.")
            self.change.append(f"An interval reaching ±{_pp(m)} on new cases would overturn equivalence.")
            return self.finish("equivalent", f"{c} and {b} are equivalent within ±{_pp(m)}.")
        if high < -m or low > m:
            side = "worse" if high < -m else "better"
            self.reasons.append(f"The whole interval lies beyond the equivalence margin of ±{_pp(m)}: {c} and {b} "
                                f"differ by more than the margin ({side}).")
            self.change.append(f"Only a change to {c}, re-evaluated on fresh cases, could show equivalence: more "
                               f"cases of the same kind would only narrow an interval that already excludes ±{_pp(m)}.")
            self.not_close = True  # a clear difference: no escalation path for a close result
            return self.finish("not_equivalent", f"Not equivalent: {c} is {side} than {b} by more than the "
                               f"margin of ±{_pp(m)} (estimate {_signed(p.estimate)} points).")
        self.reasons.append(f"The interval reaches the equivalence margin of ±{_pp(m)} or beyond; no difference "
                            "found is not equivalence.")
        self.change.append(f"More independent cases could narrow the interval to within ±{_pp(m)}.")
        return self.finish("not_equivalent", f"Equivalence of {c} and {b} within ±{_pp(m)} is not shown.")
