"""Applying the rules: the decider that walks the verdict table in order and gathers the reasons.

The order (``docs/decision.md`` states it in words): too few units, the critical-failure
limit, no comparison, an uninformative interval, the verdict table by goal
(:mod:`evalspec.decision.table`), and the estimand guard (:mod:`evalspec.decision.guard`),
which can make a table verdict ``inconclusive`` when the interval does not bound what the
thresholds are about.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalspec.analyses.contract import Caveat, CriticalStatus, Finding, PrimaryInterval, SequentialStatus
from evalspec.decision.guard import CaseEvidence, check_estimand
from evalspec.decision.record import CriticalThreshold, DecisionRecord, EstimandCheck, Thresholds
from evalspec.decision.table import CELL_VERDICT, cell_of
from evalspec.decision.verdicts import VERDICTS
from evalspec.decision.wording import cell_words, escalation, lvl, pct, signed
from evalspec.method_words import method_words

__all__ = ["Decider"]

#: Verdicts that agree with a sequence's 'stop: decided' (the goal was shown).
VERDICT_OF_ACTION = frozenset({"worth_acting_on", "non_inferior", "equivalent", "blocked"})


def _dedupe(caveats: Iterable[Caveat]) -> list[Caveat]:
    seen: set[tuple[str, str]] = set()
    out = []
    for c in caveats:
        key = (c.code, c.message)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


class Decider:
    """One application of the rules (a class only to share the accumulating reasons)."""

    def __init__(self, plan: Any, records: list[Any], units: int, unit_name: str,
                 missing: dict[str, Any] | None, evidence: CaseEvidence | None = None,
                 extra_caveats: Sequence[Caveat] = ()) -> None:
        self.plan = plan
        self.evidence = evidence
        self.estimand: EstimandCheck | None = None
        self.label: str | None = None
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
        self.caveats += list(extra_caveats)
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
        from evalspec.decision.guard import OUTCOME_ESTIMANDS

        # another primary about another pair, or about another quantity (people's labels, not the outcome column):
        # the plan names two questions and the verdict can answer only one of them
        self.conflicting = [(r, p) for r, p in offered if r is not rec and (
            (p.candidate, p.baseline) != (prim.candidate, prim.baseline)
            or (p.estimand in OUTCOME_ESTIMANDS) != (prim.estimand in OUTCOME_ESTIMANDS))]
        if len(offered) > 1 and not seq_offered and not self.conflicting:
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
                message=f"The primary interval is at {lvl(p.confidence_level)} but the decision was preregistered "
                f"at {lvl(self.level)}; the verdict's error rate is not the one stated in the plan."))
        for f in self.findings:
            if f.material_loss:
                self.caveats.append(Caveat(code="confirmatory_loss", severity="verdict", message=f.message))
        if self.cf is not None:
            for s in self.critical:
                if not s.adopting and s.within_limit is False:
                    self.caveats.append(Caveat(
                        code="critical_other_candidate", severity="verdict",
                        message=f"{s.candidate} (not the candidate to adopt): {s.failures} of {s.critical_cases} "
                        f"critical cases failed; its {lvl(s.confidence_level)} upper bound {pct(s.upper_bound)} is "
                        f"not below the limit of {pct(self.cf.max_rate)}. The current system may already break "
                        "the limit."))

    # -- output ----------------------------------------------------------------------------
    def finish(self, verdict: str, headline: str) -> DecisionRecord:
        s = self.sequential
        if s is not None and s.action == "stop_decided" and verdict not in VERDICT_OF_ACTION:
            # the sequence's own action read only its bounds; the verdict did not stand on them
            self.reasons.append(f"The sequence's action ('stop: decided') does not stand: the verdict is '{verdict}', "
                                "for the reasons above, so nothing is established by stopping here.")
        caveats = _dedupe(self.caveats)
        notes = [c for r in self.records for c in (r.caveats or ()) if c.severity == "note"]
        return DecisionRecord(
            verdict=verdict, label=self.label or VERDICTS[verdict][0], headline=headline + self.headline_suffix,
            reasons=self.reasons or [headline], what_would_change=self.change,
            escalation=[] if self.not_close else
            escalation(verdict, self.primary, [*caveats, *notes], self.missing, getattr(self.plan, "stopping", None)),
            goal=self.dec.goal,
            thresholds=self.thresholds, primary=self.primary, primary_analysis=self.primary_analysis,
            caveats=caveats, critical=self.critical, findings=self.findings, sequential=self.sequential,
            estimand=self.estimand, units=self.units, unit_name=self.unit_name)

    # -- the rules -------------------------------------------------------------------------
    def _state_reasons(self, p: PrimaryInterval | None) -> None:
        """The first reasons: the interval, the confirmatory losses, the sequential status."""
        if p is not None and not p.informative:
            self.reasons.append(f"{p.candidate} minus {p.baseline}: {signed(p.estimate)} points, with no usable "
                                "interval.")
        elif p is not None:
            self.reasons.append(
                f"{p.candidate} minus {p.baseline}: {signed(p.estimate)} points, {lvl(p.confidence_level)} "
                f"interval {signed(p.low)} to {signed(p.high)} points ({method_words(p.method)}); each bound is a one-sided "
                f"{lvl(1 - p.one_sided_alpha)} bound.")
        losses = [f for f in self.findings if f.material_loss]
        for f in losses:
            self.reasons.append(f"Confirmatory finding: {f.message}")
        if losses:
            self.headline_suffix = (" But " + ", ".join(f.name for f in losses)
                                    + (" shows" if len(losses) == 1 else " show") + " a material loss.")
        if self.sequential is not None:
            s = self.sequential
            self.reasons.append(f"Sequential design, look {s.look} of {s.planned_looks}: {s.message}")

    def run(self) -> DecisionRecord:
        self._decision_caveats()
        p = self.primary
        self._state_reasons(p)

        # 1. too few independent units (the primary interval's own count when it rests on fewer, e.g. the
        #    labelled clusters of a judge-corrected interval)
        need = int(self.dec.minimum_units)
        units, unit_name = self.units, self.unit_name
        if p is not None and p.units is not None and p.units < units:
            units, unit_name = p.units, p.unit_name or unit_name
        if units < need:
            self.reasons.insert(0, f"Only {units} independent {unit_name}; the plan requires at least "
                                f"{need} before any verdict.")
            self.change.append(f"Collect at least {need - units} more independent {unit_name} "
                               "(more repeats of the same units do not count).")
            return self.finish("too_few_units", f"Too few independent {unit_name} ({units} < {need}) "
                               "to reach a verdict.")

        # 2. critical-failure limit, on the candidate to adopt
        blocked = self._critical()
        if blocked:
            return self.finish("blocked", self._blocked_headline(blocked))

        # 3. no comparison
        if p is None:
            self.reasons.append("The plan has no paired comparison, so there is no difference to decide on; the "
                                "results describe each candidate separately.")
            self._reading_without_comparison()
            return self.finish("no_comparison", "No comparison was planned; the report describes each candidate's "
                               "results.")

        # 4. an interval that cannot mean anything decides nothing
        if not p.informative:
            return self._uninformative(p)

        # 5. by goal, read from the verdict table; 6. the estimand guard may overrule it
        d, m = self.thresholds.minimum_improvement, self.thresholds.margin
        cell = cell_of(self.dec.goal, p.low, p.high, d, m)
        verdict = CELL_VERDICT[cell]
        words = cell_words(cell, p, d, m)
        if self.conflicting:
            return self._conflicting(p, verdict)
        guard = check_estimand(p, self.primary_analysis, self.evidence, verdict, self.dec.goal, d, m, self._views())
        self.estimand = guard.check
        self.caveats += guard.caveats
        self.reasons += words.reasons
        if guard.overrule:  # the table's "what would change it" is about a verdict that does not stand
            return self._overruled(p, verdict, guard.overrule, guard.overruled_by)
        if p.confidence_level < self.level - 1e-9:
            return self._below_level(p, verdict)
        self.change += words.change
        self.not_close = words.not_close
        self.label = words.label
        return self.finish(verdict, words.headline)

    def _uninformative(self, p: PrimaryInterval) -> DecisionRecord:
        """An interval that cannot mean anything decides nothing (the guard's readings are recorded, and said)."""
        why = p.why_uninformative or "the interval carries no information about the difference"
        self.reasons.append(f"The interval cannot decide: {why}")
        self.change.append("More independent units with disagreeing outcomes (new cases, and new clusters where "
                           "cases share one) would give an interval that can decide.")
        guard = check_estimand(p, self.primary_analysis, self.evidence, "inconclusive", self.dec.goal,
                               self.thresholds.minimum_improvement, self.thresholds.margin, self._views())
        self.estimand = guard.check  # recorded; the verdict is inconclusive already
        self.caveats += [c for c in guard.caveats if c.code in ("missing_sensitivity", "missing_both_sides", "unequal_attempts")]
        if not any(c.code == "uninformative_interval" for c in self.caveats):
            self.caveats.append(Caveat(code="uninformative_interval", severity="verdict",
                                       message=f"The primary interval is uninformative: {why}"))
        return self.finish("inconclusive", f"Inconclusive: the evidence cannot separate {p.candidate} from "
                           f"{p.baseline} ({why.rstrip('.')}).")

    def _reading_without_comparison(self) -> None:
        """With no comparison the critical-failure limit is what the plan checks: say when another reading breaks it."""
        for code, (verdict, headline, _) in self._views().items():
            if verdict == "blocked" and code.startswith("missing_as_failures"):
                who = code.partition(":")[2] or "the candidate"
                self.caveats.append(Caveat(code="missing_sensitivity", severity="verdict", message=(
                    f"With {who}'s missing attempts counted as failures the critical-failure limit is not met — "
                    f"{headline.rstrip('.')}: the limit holds only if those outcomes are unrelated to how {who} "
                    "would have done.")))

    def _views(self) -> dict[str, tuple[str, str, PrimaryInterval | None]]:
        """The verdict the whole decision reaches on each alternative reading of the results (no further readings)."""
        from dataclasses import replace

        out: dict[str, tuple[str, str, PrimaryInterval | None]] = {}
        if self.evidence is None:
            return out
        for alt in self.evidence.alternatives:
            if alt.refused:
                continue
            # every rule on that reading, the estimand guard included (a sequence on it can exclude its own data)
            evidence = replace(self.evidence, values=alt.values, alternatives=())
            rec = Decider(self.plan, list(alt.records), self.units, self.unit_name, self.missing, evidence).run()
            out[alt.code] = (rec.verdict, rec.headline, rec.primary)
        return out

    def _overruled(self, p: PrimaryInterval, verdict: str, why: list[str], by: str | None) -> DecisionRecord:
        """The table's verdict does not stand on this interval: inconclusive, saying what the table would say."""
        self.reasons += why
        check = self.estimand
        if by == "estimand_mismatch" and check is not None:
            self.change.append("An interval that bounds the pass-rate difference with each case counting once (a "
                               "fixed-sample paired comparison, or a sequence on a preregistered random order) could "
                               "decide.")
            return self.finish("inconclusive", f"Inconclusive: the table would say '{verdict}', but the interval "
                               f"does not bound the quantity the verdict is about (interval estimate "
                               f"{signed(p.estimate)} points, pass-rate difference {signed(check.case_weighted_estimate)}"
                               " points).")
        if by == "unequal_attempts":
            self.change.append(f"The same number of attempts for {p.candidate} and {p.baseline} on every case (run the "
                               "missing attempts) would decide.")
            return self.finish("inconclusive", f"Inconclusive: the table would say '{verdict}', but {p.candidate} and "
                               f"{p.baseline} were given different numbers of attempts, and with the same number the "
                               "verdict changes.")
        self.change.append(f"Outcomes for the cases where {p.candidate} gave none (rerun them, or show why they are "
                           "missing) would decide between the two verdicts.")
        return self.finish("inconclusive", f"Inconclusive: the table would say '{verdict}' with {p.candidate}'s "
                           "missing outcomes left out, but not with them counted as failures.")

    def _conflicting(self, p: PrimaryInterval, verdict: str) -> DecisionRecord:
        """Two primary intervals about different pairs or quantities: the plan asks two questions; neither decides."""
        from evalspec.decision.wording import estimand_words

        read = f"analyses[{self.primary_analysis}] ({p.candidate} minus {p.baseline}, {estimand_words(p.estimand)})"
        others = "; ".join(f"analyses[{r.index}] ({r.kind}: {q.candidate} minus {q.baseline}, "
                           f"{estimand_words(q.estimand)})" for r, q in self.conflicting)
        text = (f"Two analyses offer the primary interval, about different comparisons or quantities: {read} and "
                f"{others}. The verdict would answer only one of the plan's questions, so neither decides.")
        self.reasons.append(text)
        self.caveats.append(Caveat(code="conflicting_primaries", severity="verdict", message=text))
        self.change.append("One primary comparison in the plan (set `primary: false` on the others), locked before "
                           "the results are seen, could decide.")
        said = "" if verdict == "inconclusive" else f" (on {p.candidate} minus {p.baseline} the table would say '{verdict}')"
        return self.finish("inconclusive", "Inconclusive: the plan names more than one primary comparison, about "
                           f"different pairs or quantities, so none decides{said}.")

    def _below_level(self, p: PrimaryInterval, verdict: str) -> DecisionRecord:
        """An interval at a lower level than the plan's errs more often than the verdict states: it cannot decide."""
        text = (f"The primary interval is at {lvl(p.confidence_level)}, below the {lvl(self.level)} the plan's "
                f"verdict is preregistered at: each of its bounds is wrong {pct(p.one_sided_alpha)} of the time, not "
                f"{pct(self.alpha)}, so it cannot carry the verdict.")
        self.reasons.append(text)
        self.caveats = [c for c in self.caveats if c.code != "primary_level_differs"]
        self.caveats.append(Caveat(code="primary_level_differs", severity="verdict", message=text))
        self.change.append(f"The primary analysis at the decision's level ({lvl(self.level)}) could decide.")
        return self.finish("inconclusive", f"Inconclusive: the table would say '{verdict}' at "
                           f"{lvl(p.confidence_level)}, but the plan's verdict is at {lvl(self.level)}.")

    def _blocked_headline(self, blocked: list[str]) -> str:
        """The one of "above the limit" / "cannot be ruled out" that holds for each blocked candidate."""
        assert self.cf is not None
        limit = pct(self.cf.max_rate)
        by_name = {s.candidate: s for s in self.critical}
        over = [n for n in blocked if (s := by_name.get(n)) is not None and s.critical_cases
                and s.failures / s.critical_cases >= self.cf.max_rate]
        open_ = [n for n in blocked if n not in over]
        parts = []
        if over:
            parts.append(f"the observed critical-failure rate of {', '.join(over)} is above the limit of {limit}")
        if open_:
            parts.append(f"a critical-failure rate above the limit of {limit} cannot be ruled out for "
                         f"{', '.join(open_)}")
        return f"Blocked: {' and '.join(parts)}, whatever the average says."

    def _critical(self) -> list[str]:
        cf = self.cf
        if cf is None:
            return []
        p = self.primary
        by_name: dict[str, CriticalStatus] = {}
        for status in self.critical:
            by_name.setdefault(status.candidate, status)
        if p is not None:
            who = [p.candidate]
        else:
            who = [s.candidate for s in self.critical if s.adopting] or list(by_name)
        if not who and p is None:
            who = []
        blocked: list[str] = []
        if p is None and not by_name:
            self.reasons.insert(0, "The plan sets a critical-failure limit but no analysis checked critical cases, so "
                                f"a critical-failure rate above {pct(cf.max_rate)} cannot be ruled out.")
            self.change.append("Add a critical_failures analysis.")
            return ["every candidate"]
        for name in who:
            s = by_name.get(name)
            if s is None:
                blocked.append(name)
                self.reasons.insert(0, f"{name}: no analysis checked its critical cases, so a critical-failure rate "
                                    f"above the limit of {pct(cf.max_rate)} cannot be ruled out.")
                self.change.append(f"Include {name} in the critical_failures analysis.")
                continue
            from evalspec.stats.power import zero_failure_cases  # numpy: the report imports the decision

            need = zero_failure_cases(cf.max_rate, s.confidence_level)
            if s.critical_cases == 0:
                blocked.append(name)
                self.reasons.insert(0, f"{name}: no critical case was run, so a critical-failure rate above the limit "
                                    f"of {pct(cf.max_rate)} cannot be ruled out.")
                self.change.append(f"Run {name} on critical cases: with no failures, {need} critical cases are "
                                   f"needed for the {lvl(s.confidence_level)} upper bound to fall below "
                                   f"{pct(cf.max_rate)}.")
            elif s.upper_bound is None or not s.upper_bound < cf.max_rate:
                blocked.append(name)
                rate = s.failures / s.critical_cases
                self.reasons.insert(0, f"{name}: {s.failures} of {s.critical_cases} critical cases failed at least "
                                    f"one attempt; the {lvl(s.confidence_level)} one-sided upper bound "
                                    f"{pct(s.upper_bound)} ({s.method}) is not below the limit of "
                                    f"{pct(cf.max_rate)}"
                                    + (" — the observed rate already exceeds it." if rate >= cf.max_rate else
                                       ", so exceeding the limit cannot be ruled out."))
                if s.reachable is False:
                    self.reasons.insert(1, f"These {s.critical_cases} critical cases can never bring the bound below "
                                        f"{pct(cf.max_rate)}, even with no failure: {need} independent failure-free "
                                        "cases are needed.")
                if s.failures == 0:
                    self.change.append(f"With no failures, {need} critical cases are needed to bring the bound "
                                       f"below {pct(cf.max_rate)}.")
                else:
                    self.change.append(f"Fix the critical failures of {name}, then show on fresh critical cases that "
                                       f"the upper bound falls below {pct(cf.max_rate)}.")
            else:
                self.reasons.append(f"{name}: {s.failures} of {s.critical_cases} critical cases failed; the "
                                    f"{lvl(s.confidence_level)} upper bound {pct(s.upper_bound)} is below the limit "
                                    f"of {pct(cf.max_rate)}.")
        return blocked
