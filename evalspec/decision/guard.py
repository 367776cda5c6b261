"""The estimand guard: the verdict stands only on an interval that bounds what its thresholds are about.

The plan's thresholds (minimum improvement, margin) are about one quantity: the difference in
pass rate between the candidate and the baseline over the population of cases, **each case
counting once**, with missing outcomes handled as the plan says. An analysis can offer an
interval of another quantity (the average over clusters of each cluster's difference, which
differs when clusters differ in size and the effect does too), or an interval that is no
longer about the sample at hand (a confidence sequence whose running intersection kept an
early exclusion after the cases changed kind). The decision, which otherwise reads only the
bounds, cannot tell. So, beside the interval, it computes the fixed-sample, case-weighted
estimate of the thresholds' quantity from the case outcomes (:class:`CaseEvidence`) and
applies one rule to every kind's offer:

* the interval must contain that estimate, and the interval's own estimate must not point the
  other way (both at least :data:`SIGN_TOLERANCE` from zero); otherwise the verdict is
  ``inconclusive``, with the two numbers in the reasons;
* the whole decision is reached again on the other readings of the same results the runtime
  builds (:class:`Alternative`, :mod:`evalspec.sensitivity_views`): the candidate's missing and
  never-run attempts counted as failures (a candidate must not gain by not answering or by not
  being run) — when that gives a different verdict, a verdict that would adopt the candidate
  becomes ``inconclusive`` and any other carries a caveat with both; and, under a rule whose
  outcome depends on the number of attempts, both sides cut to the same attempts — when that
  gives a different verdict, no decisive verdict stands;
* an interval of another estimand of the outcome column that passes both checks carries a caveat
  naming its estimand; an estimand of another quantity (people's labels behind a judge's
  outcomes, :data:`OUTCOME_ESTIMANDS`) is not compared with the outcome column, only checked
  for the missing-outcome sensitivity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalspec.analyses.contract import Caveat, PrimaryInterval
from evalspec.decision.record import EstimandCheck, MissingSensitivity, Sensitivity
from evalspec.decision.wording import estimand_words, lvl, signed

if TYPE_CHECKING:  # pragma: no cover - numpy is imported where the arrays are read (the report imports this package)
    import numpy as np

__all__ = ["CASE_WEIGHTED", "LEDGER_CAVEATS", "OUTCOME_ESTIMANDS", "SIGN_TOLERANCE", "Alternative", "CaseEvidence", "GuardOutcome",
           "check_estimand", "looks_caveat"]

CASE_WEIGHTED = "case_weighted_difference"

#: Estimands that are functions of the outcome column the decision is handed: it can recompute their
#: case-weighted counterpart. Another estimand (people's labels behind a judge's outcomes) is about a
#: quantity the outcome matrix does not hold; only the missing-outcome sensitivity applies to it.
OUTCOME_ESTIMANDS = frozenset({CASE_WEIGHTED, "cluster_weighted_difference"})

#: Estimates closer to zero than this (0.05 points, shown as 0.0) have no direction to disagree on.
SIGN_TOLERANCE = 0.0005


@dataclass(frozen=True)
class Alternative:
    """The same results read another way, with the analyses that offer the decision something run on it.

    ``code``: ``missing_as_failures`` (every missing or never-run attempt of the primary candidate a
    failure; the baseline keeps the plan's policy) or ``equal_attempts`` (candidate and baseline cut to
    the same number of attempts per case, under a rule whose outcome depends on it). ``values``: the
    case outcomes on that view; ``records``: the re-run analyses (only ``offers`` and ``caveats`` are
    read); ``cases``: the cases the view changed; ``more``: for ``equal_attempts``, the cases where
    the candidate had more attempts and those where the baseline had.
    """

    code: str
    values: np.ndarray
    records: list[Any]
    cases: int
    more: tuple[int, int] = (0, 0)
    #: why the analyses could not run on this reading (then ``records`` is empty and no verdict is known)
    refused: str | None = None


@dataclass(frozen=True)
class CaseEvidence:
    """The case outcomes the decision needs, handed over by the runtime (no statistic in it).

    ``values[j, i]``: outcome of candidate ``candidates[j]`` on case ``i`` under the plan's
    missing-outcome policy (NaN: no usable outcome). ``alternatives``: the other readings of the
    same results the verdict must survive (:class:`Alternative`), each with its analyses re-run.
    """

    candidates: list[str]
    values: np.ndarray
    policy: str = "count_as_fail"
    rule: str = "first"
    alternatives: tuple[Alternative, ...] = ()

    @classmethod
    def from_context(cls, ctx: Any, alternatives: tuple[Alternative, ...] = ()) -> CaseEvidence:
        """From an :class:`~evalspec.analyses.context.AnalysisContext` (the arrays the analyses saw)."""
        import numpy as np

        return cls(candidates=list(ctx.candidates), values=np.asarray(ctx.outcomes.values, dtype=np.float64),
                   policy=str(ctx.missing_policy), rule=str(ctx.outcomes.rule), alternatives=tuple(alternatives))

    def alternative(self, code: str) -> Alternative | None:
        return next((a for a in self.alternatives if a.code == code), None)

    def difference(self, candidate: str, baseline: str, values: np.ndarray | None = None) -> tuple[float, int]:
        """(case-weighted difference, paired cases) on ``values`` (default: the plan's reading)."""
        import numpy as np

        v = self.values if values is None else values
        y = v[self.candidates.index(baseline)]
        x = v[self.candidates.index(candidate)]
        keep = ~np.isnan(x) & ~np.isnan(y)
        n = int(np.count_nonzero(keep))
        return (float(np.mean(x[keep] - y[keep])) if n else float("nan")), n


@dataclass
class GuardOutcome:
    """What the guard decided: the check for the claim, and whether the verdict must change."""

    check: EstimandCheck | None
    #: reasons to make the verdict inconclusive (empty: the verdict stands)
    overrule: list[str]
    caveats: list[Caveat]
    #: the caveat code of the first rule that overruled the verdict (None: it stands)
    overruled_by: str | None = None


def check_estimand(p: PrimaryInterval, index: int | None, evidence: CaseEvidence | None, verdict: str,
                   goal: str, d: float, m: float | None,
                   views: dict[str, tuple[str, str, PrimaryInterval | None]] | None = None) -> GuardOutcome:
    """Apply the guard to the primary interval ``p`` (from analysis ``index``) and its table verdict.

    ``views``: per alternative's code, the verdict the whole decision reaches on it, its headline
    and its primary interval (the decider computes them from ``evidence.alternatives``).
    """
    if evidence is None or p.candidate not in evidence.candidates or p.baseline not in evidence.candidates:
        return GuardOutcome(None, [], [])
    import math
    est, n = evidence.difference(p.candidate, p.baseline)
    if n == 0:
        return GuardOutcome(None, [], [])
    comparable = p.estimand in OUTCOME_ESTIMANDS
    contains = not comparable or (p.low <= est + 1e-12 and est - 1e-12 <= p.high)
    sign_ok = not comparable or not (abs(est) >= SIGN_TOLERANCE and abs(p.estimate) >= SIGN_TOLERANCE
                                     and math.copysign(1, est) != math.copysign(1, p.estimate))
    what = estimand_words(p.estimand)
    overrule: list[str] = []
    caveats: list[Caveat] = []
    by: str | None = None
    if not contains or not sign_ok:
        problem = [] if contains else [f"lies outside the interval ({signed(p.low)} to {signed(p.high)} points)"]
        if not sign_ok:
            problem.append(f"points the other way from the interval's own estimate ({signed(p.estimate)} points)")
        text = (f"The primary interval bounds {what}; the difference the thresholds are about — the pass-rate "
                f"difference with each of the {n} paired cases counting once — is {signed(est)} points, which "
                f"{' and '.join(problem)}. The interval does not bound the quantity the verdict is about, so it "
                "cannot carry a verdict.")
        overrule.append(text)
        by = "estimand_mismatch"
        caveats.append(Caveat(code="estimand_mismatch", severity="verdict", message=text))
    elif p.estimand != CASE_WEIGHTED and comparable:
        caveats.append(Caveat(code="other_estimand", severity="verdict", message=(
            f"The primary interval bounds {what}, not the pass-rate difference with each case counting once "
            f"({signed(est)} points here, inside the interval); the thresholds are about the latter.")))
    from evalspec.decision.verdicts import FAVOURABLE

    sens = _sensitivity(p, evidence, "missing_as_failures", views)
    att = _sensitivity(p, evidence, "equal_attempts", views)
    both = _sensitivity(p, evidence, "missing_against_candidate", views)
    if (both is not None and both.verdict is not None and both.verdict != verdict and by != "estimand_mismatch"
            and (sens is None or sens.verdict == verdict)):
        caveats.append(Caveat(code="missing_both_sides", severity="verdict", message=_both_words(p, both, sens, verdict)))
    for code, s in (("missing_sensitivity", sens), ("unequal_attempts", att)):
        alt = evidence.alternative("missing_as_failures" if code == "missing_sensitivity" else "equal_attempts")
        if alt is not None and alt.refused:
            caveats.append(Caveat(code=code, severity="verdict", message=(
                f"The verdict could not be checked with {_reading_words(code, p)}: {alt.refused}. It holds only if "
                + ("the missing outcomes are unrelated to how the candidate would have done." if
                   code == "missing_sensitivity" else "the different numbers of attempts do not matter."))))
            continue
        if s is None or s.verdict is None or s.verdict == verdict or by == "estimand_mismatch":
            continue
        text = (_missing_words if code == "missing_sensitivity" else _attempts_words)(p, s, verdict)
        # counting the candidate's missing outcomes as failures can only lower it: a verdict against it stands
        # with the caveat. Unequal attempts can move the difference either way: no decisive verdict stands.
        if verdict in FAVOURABLE if code == "missing_sensitivity" else verdict != "inconclusive":
            overrule.append(text)
            by = by or code
        caveats.append(Caveat(code=code, severity="verdict", message=text))
    stands = not overrule
    if not comparable:
        words = (f"The primary interval ({signed(p.low)} to {signed(p.high)} points) bounds {what}; the outcome "
                 f"column's case-weighted difference ({signed(est)} points over {n} paired cases) measures another "
                 "quantity, so it is recorded, not compared.")
    elif contains and sign_ok:
        words = (f"The primary interval ({signed(p.low)} to {signed(p.high)} points) bounds {what} and contains the "
                 f"case-weighted difference of the {n} paired cases ({signed(est)} points).")
    else:
        words = overrule[0]
    check = EstimandCheck(estimand=p.estimand, case_weighted_estimate=est, cases=n, compared=comparable,
                          interval_contains=contains, sign_agrees=sign_ok,
                          missing_as_failures=None if sens is None else MissingSensitivity(
                              policy=evidence.policy, **sens.model_dump()),
                          missing_against_candidate=both, equal_attempts=att, stands=stands, message=words)
    return GuardOutcome(check, overrule, caveats, by)


def _sensitivity(p: PrimaryInterval, evidence: CaseEvidence, code: str,
                 views: dict[str, tuple[str, str, PrimaryInterval | None]] | None) -> Sensitivity | None:
    """The comparison on the alternative reading ``code`` (None when the runtime built none)."""
    alt = evidence.alternative(code)
    if alt is None:
        return None
    verdict, headline, other = (views or {}).get(code, (None, None, None))
    est, _ = evidence.difference(p.candidate, p.baseline, alt.values)
    if p.estimand not in OUTCOME_ESTIMANDS and other is not None:
        est = other.estimate  # the interval's own quantity (people's labels), not the outcome column's
    return Sensitivity(cases=alt.cases, candidate_more=alt.more[0], baseline_more=alt.more[1], estimate=est,
                       low=None if other is None else other.low, high=None if other is None else other.high,
                       informative=None if other is None else other.informative,
                       verdict=verdict, headline=headline)  # type: ignore[arg-type]


def _reading_words(code: str, p: PrimaryInterval) -> str:
    if code == "missing_sensitivity":
        return f"{p.candidate}'s missing and never-run attempts counted as failures"
    return f"{p.candidate} and {p.baseline} cut to the same number of attempts"


def _then(s: Sensitivity, verdict: str) -> str:
    rng = "" if s.low is None or s.high is None else f" (interval {signed(s.low)} to {signed(s.high)})"
    why = f" — {s.headline.rstrip('.')}" if s.verdict in ("blocked", "too_few_units") and s.headline else ""
    return (f"the difference is {signed(s.estimate)} points{rng} and the verdict would be '{s.verdict}'{why}, "
            f"not '{verdict}'")


def _missing_words(p: PrimaryInterval, s: Sensitivity, verdict: str) -> str:
    return (f"{s.cases} case(s) where {p.candidate} has missing outcomes or was never run were left out of the "
            f"comparison. Counted as failures of {p.candidate}, {_then(s, verdict)}: the verdict holds only if "
            f"{p.candidate}'s missing outcomes are unrelated to how it would have done.")


def _both_words(p: PrimaryInterval, s: Sensitivity, first: Sensitivity | None, verdict: str) -> str:
    mine = f"{first.cases} of {p.candidate}'s as failures and " if first is not None else ""
    return (f"{p.baseline}'s missing outcomes were left out of the comparison. Counted against {p.candidate} — "
            f"{mine}those of {p.baseline} as passes ({s.cases} case(s) in all) — {_then(s, verdict)}: the verdict "
            f"holds only if {p.baseline}'s missing outcomes are unrelated to how it would have done.")


def _attempts_words(p: PrimaryInterval, s: Sensitivity, verdict: str) -> str:
    who = []
    if s.candidate_more:
        who.append(f"{p.candidate} had more attempts than {p.baseline} on {s.candidate_more} case(s)")
    if s.baseline_more:
        who.append(f"{p.baseline} had more attempts than {p.candidate} on {s.baseline_more} case(s)")
    return (f"The attempt rule's outcome depends on how many attempts a case had, and {' and '.join(who)}: the two "
            f"sides answer different questions there. With both cut to the same attempts on every case, "
            f"{_then(s, verdict)}.")


#: Caveat codes ``run`` adds from the ledger of looks, after the pipeline (a re-run in memory cannot have them).
LEDGER_CAVEATS = frozenset({"looks_beyond_plan"})


def looks_caveat(look: int, planned: int, rule: str, level: float, sequential: bool) -> Caveat | None:
    """A verdict caveat for the ``look``-th look at a design planned for ``planned`` (None within the plan).

    A fixed-sample interval holds at its level for one look; looking again (new data or not)
    and stopping when the verdict looks good makes a false verdict more likely. An
    anytime-valid sequence holds at any number of looks, so only looks beyond the plan count.
    """
    if look <= planned:
        return None
    if sequential:
        return Caveat(code="looks_beyond_plan", severity="verdict", message=(
            f"Look {look} of a design planned for {planned}: the sequence's level still holds at every look, but "
            "the plan's schedule was not kept."))
    return Caveat(code="looks_beyond_plan", severity="verdict", message=(
        f"Look {look} of a design planned for {planned}: the {lvl(level)} holds for {planned} look"
        f"{'s' if planned != 1 else ''} only. Each earlier look at these results (recorded in the ledger of looks) "
        "was another chance to stop when the verdict looked good, so a false verdict is more likely than the "
        "interval says."))
