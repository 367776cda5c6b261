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
* with the ``exclude`` policy, the primary analysis is run again with the candidate's missing
  outcomes counted as failures (a candidate must not gain by not answering); when that gives a
  different verdict, a verdict that would adopt the candidate becomes ``inconclusive`` and any
  other verdict carries a caveat with both intervals;
* an interval of another estimand of the outcome column that passes both checks carries a caveat
  naming its estimand; an estimand of another quantity (people's labels behind a judge's
  outcomes, :data:`OUTCOME_ESTIMANDS`) is not compared with the outcome column, only checked
  for the missing-outcome sensitivity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalspec.analyses.contract import Caveat, PrimaryInterval
from evalspec.decision.record import EstimandCheck, MissingSensitivity
from evalspec.decision.table import verdict_of
from evalspec.decision.wording import estimand_words, lvl, signed

if TYPE_CHECKING:  # pragma: no cover - numpy is imported where the arrays are read (the report imports this package)
    import numpy as np

__all__ = ["CASE_WEIGHTED", "LEDGER_CAVEATS", "OUTCOME_ESTIMANDS", "SIGN_TOLERANCE", "CaseEvidence", "GuardOutcome", "check_estimand", "looks_caveat"]

CASE_WEIGHTED = "case_weighted_difference"

#: Estimands that are functions of the outcome column the decision is handed: it can recompute their
#: case-weighted counterpart. Another estimand (people's labels behind a judge's outcomes) is about a
#: quantity the outcome matrix does not hold; only the missing-outcome sensitivity applies to it.
OUTCOME_ESTIMANDS = frozenset({CASE_WEIGHTED, "cluster_weighted_difference"})

#: Estimates closer to zero than this (0.05 points, shown as 0.0) have no direction to disagree on.
SIGN_TOLERANCE = 0.0005


@dataclass(frozen=True)
class CaseEvidence:
    """The case outcomes the decision needs, handed over by the runtime (no statistic in it).

    ``values[j, i]``: outcome of candidate ``candidates[j]`` on case ``i`` under the plan's
    missing-outcome policy (NaN: no usable outcome). ``values_missing_as_fail``: the same with
    missing outcomes counted as failures, given when the policy is not already that (else None).
    ``sensitivity``: per analysis index, the primary interval that analysis offers on the
    outcomes with the candidate's missing outcomes counted as failures (the runtime re-runs it).
    """

    candidates: list[str]
    values: np.ndarray
    policy: str = "count_as_fail"
    values_missing_as_fail: np.ndarray | None = None
    sensitivity: dict[int, PrimaryInterval | None] | None = None

    @classmethod
    def from_context(cls, ctx: Any, values_missing_as_fail: np.ndarray | None = None,
                     sensitivity: dict[int, PrimaryInterval | None] | None = None) -> CaseEvidence:
        """From an :class:`~evalspec.analyses.context.AnalysisContext` (the arrays the analyses saw)."""
        import numpy as np

        return cls(candidates=list(ctx.candidates), values=np.asarray(ctx.outcomes.values, dtype=np.float64),
                   policy=str(ctx.missing_policy), values_missing_as_fail=values_missing_as_fail,
                   sensitivity=sensitivity)

    def difference(self, candidate: str, baseline: str, *, missing_as_fail: bool = False) -> tuple[float, int, int]:
        """(case-weighted difference, paired cases, cases whose candidate outcome changes).

        With ``missing_as_fail`` the candidate's outcomes are those with its missing outcomes
        counted as failures (a case it never answered fails; a case whose first attempt timed
        out fails under ``first``), the baseline's stay under the plan's policy.
        """
        import numpy as np

        y = self.values[self.candidates.index(baseline)]
        x = self.values[self.candidates.index(candidate)]
        imputed = 0
        if missing_as_fail and self.values_missing_as_fail is not None:
            xf = self.values_missing_as_fail[self.candidates.index(candidate)]
            changed = ~np.isnan(xf) & ~np.isnan(y) & (np.isnan(x) | (x != xf))
            imputed = int(np.count_nonzero(changed))
            x = np.where(np.isnan(xf), x, xf)
        keep = ~np.isnan(x) & ~np.isnan(y)
        n = int(np.count_nonzero(keep))
        return (float(np.mean(x[keep] - y[keep])) if n else float("nan")), n, imputed


@dataclass
class GuardOutcome:
    """What the guard decided: the check for the claim, and whether the verdict must change."""

    check: EstimandCheck | None
    #: reasons to make the verdict inconclusive (empty: the verdict stands)
    overrule: list[str]
    caveats: list[Caveat]


def check_estimand(p: PrimaryInterval, index: int | None, evidence: CaseEvidence | None, verdict: str,
                   goal: str, d: float, m: float | None) -> GuardOutcome:
    """Apply the guard to the primary interval ``p`` (from analysis ``index``) and its table verdict."""
    if evidence is None or p.candidate not in evidence.candidates or p.baseline not in evidence.candidates:
        return GuardOutcome(None, [], [])
    import math
    est, n, _ = evidence.difference(p.candidate, p.baseline)
    if n == 0:
        return GuardOutcome(None, [], [])
    comparable = p.estimand in OUTCOME_ESTIMANDS
    contains = not comparable or (p.low <= est + 1e-12 and est - 1e-12 <= p.high)
    sign_ok = not comparable or not (abs(est) >= SIGN_TOLERANCE and abs(p.estimate) >= SIGN_TOLERANCE
                                     and math.copysign(1, est) != math.copysign(1, p.estimate))
    what = estimand_words(p.estimand)
    overrule: list[str] = []
    caveats: list[Caveat] = []
    if not contains or not sign_ok:
        problem = [] if contains else [f"lies outside the interval ({signed(p.low)} to {signed(p.high)} points)"]
        if not sign_ok:
            problem.append(f"points the other way from the interval's own estimate ({signed(p.estimate)} points)")
        text = (f"The primary interval bounds {what}; the difference the thresholds are about — the pass-rate "
                f"difference with each of the {n} paired cases counting once — is {signed(est)} points, which "
                f"{' and '.join(problem)}. The interval does not bound the quantity the verdict is about, so it "
                "cannot carry a verdict.")
        overrule.append(text)
        caveats.append(Caveat(code="estimand_mismatch", severity="verdict", message=text))
    elif p.estimand != CASE_WEIGHTED and comparable:
        caveats.append(Caveat(code="other_estimand", severity="verdict", message=(
            f"The primary interval bounds {what}, not the pass-rate difference with each case counting once "
            f"({signed(est)} points here, inside the interval); the thresholds are about the latter.")))
    sens = _missing_sensitivity(p, index, evidence, goal, d, m)
    if sens is not None and sens.verdict is not None and sens.verdict != verdict and not overrule:
        rng = "" if sens.low is None or sens.high is None else f" (interval {signed(sens.low)} to {signed(sens.high)})"
        text = (f"{sens.cases} case(s) where {p.candidate} has missing outcomes were read under the plan's "
                f"'{sens.policy}' policy (missing attempts left out). Counted as failures of {p.candidate}, the difference is {signed(sens.estimate)}"
                f" points{rng} and the verdict would be '{sens.verdict}', not '{verdict}': the verdict holds only if "
                f"{p.candidate}'s missing outcomes are unrelated to how it would have done.")
        from evalspec.decision.verdicts import FAVOURABLE

        if verdict in FAVOURABLE:
            overrule.append(text)
        caveats.append(Caveat(code="missing_sensitivity", severity="verdict", message=text))
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
                          interval_contains=contains,
                          sign_agrees=sign_ok, missing_as_failures=sens, stands=stands, message=words)
    return GuardOutcome(check, overrule, caveats)


def _missing_sensitivity(p: PrimaryInterval, index: int | None, evidence: CaseEvidence, goal: str, d: float,
                         m: float | None) -> MissingSensitivity | None:
    """The comparison with the candidate's missing outcomes counted as failures (None when none are missing)."""
    if evidence.values_missing_as_fail is None:
        return None
    est, _, imputed = evidence.difference(p.candidate, p.baseline, missing_as_fail=True)
    if imputed == 0:
        return None
    other = (evidence.sensitivity or {}).get(index) if index is not None else None
    if other is None:
        return MissingSensitivity(policy=evidence.policy, cases=imputed, estimate=est)
    verdict = verdict_of(goal, other.low, other.high, d, m) if other.informative else "inconclusive"
    return MissingSensitivity(policy=evidence.policy, cases=imputed, estimate=est, low=other.low, high=other.high,
                              informative=other.informative, verdict=verdict)  # type: ignore[arg-type]


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
