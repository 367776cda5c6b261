"""The decision's other readings of the same results (:mod:`evalspec.sensitivity_views`), made from a case table.

A case table has no attempt rows to rebuild, but its counts carry the readings where they can;
:class:`CaseTableReadings` offers the functions of :mod:`evalspec.sensitivity_views` under
the same names, for ``evalspec.run.case_evidence``:

* ``missing_as_failures`` — the candidate's missing attempts counted as failures, and one
  failed attempt on every case the baseline has and the candidate lacks: the candidate's row
  of counts is changed so and the attempt rule applied again, as the attempt-row view does;
* ``missing_against_candidate`` — that, and the baseline's missing attempts (under ``exclude``)
  counted as passes, with one passing attempt on every case the candidate has and the baseline
  lacks (under ``best_of_k``, ``missing_in_first_K`` says whether a missing attempt is among the
  first ``k``);
* ``equal_attempts`` — the candidate and the baseline cut to the same number of attempts under
  a rule whose outcome depends on it (``best_of_k``, ``majority``). Counts do not say which of a
  case's attempts passed, so the cut cannot be made: when the two have different numbers of
  usable attempts on a shared case it is unavailable; when they have the same, nothing changes.

An unavailable reading raises :class:`ReadingUnavailable`, and the run refuses with its words:
the verdict must never silently skip a reading it has to survive. So does a reading this module
does not know (one added to :mod:`evalspec.sensitivity_views` later).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evalspec.analyses.contract import CaseCounts
from evalspec.results.case_model import outcomes_from_counts
from evalspec.sensitivity_views import ATTEMPT_COUNT_RULES, View

__all__ = ["CaseTableReadings", "ReadingUnavailable"]


class ReadingUnavailable(Exception):
    """A reading the verdict must survive that a case table cannot give (the message says why)."""


@dataclass
class _Counts:
    """Candidate × case count matrices of a case table, to change and reduce again."""

    attempts: np.ndarray
    missing: np.ndarray
    passes: np.ndarray
    rules: dict[str, np.ndarray]

    @classmethod
    def of(cls, table: Any) -> _Counts:
        return cls(table.attempts.copy(), table.missing_counts.copy(), table.passes.copy(),
                   {k: v.copy() for k, v in table.rule_counts.items()})

    def add_attempt(self, row: int, cases: np.ndarray, passed: bool) -> None:
        """One attempt (a pass or a failure) on ``cases`` of ``row``, which have none."""
        self.attempts[row, cases], self.missing[row, cases], self.passes[row, cases] = 1, 0, int(passed)
        for v in self.rules.values():
            v[row, cases] = float(passed)

    def outcomes(self, rule: str, k: int | None, policy: str) -> Any:
        return outcomes_from_counts(self.attempts, self.missing, self.passes, self.rules, rule, k, policy)


class CaseTableReadings:
    """The readings of :mod:`evalspec.sensitivity_views`, from the counts of ``table``."""

    def __init__(self, table: Any) -> None:
        self.table = table

    def __getattr__(self, name: str) -> Any:
        raise ReadingUnavailable(f"the verdict must also hold on another reading of the results ({name}), which "
                                 "evalspec does not make from a case table yet")

    def _unrun(self, ctx: Any, candidate: str, baseline: str | None) -> tuple[np.ndarray, np.ndarray]:
        """The candidate's never-run cases (that the baseline ran) and the cases its failures would change, read
        from the table's counts (nothing copied: a reading that changes no case is none)."""
        t, j = self.table, ctx.index(candidate)
        has = t.attempts[j] > 0
        other = t.attempts[ctx.index(baseline)] > 0 if baseline is not None and baseline != candidate else \
            np.zeros(has.shape, dtype=bool)
        unrun = np.flatnonzero(other & ~has)
        changed = np.zeros(has.shape, dtype=bool)
        if ctx.missing_policy == "exclude":
            changed |= t.missing_counts[j] > 0
        changed[unrun] = True
        return unrun, changed

    def _as_failures(self, ctx: Any, candidate: str, baseline: str | None) -> tuple[_Counts, np.ndarray]:
        """The counts with the candidate's missing and never-run attempts failures, and the cases changed."""
        unrun, changed = self._unrun(ctx, candidate, baseline)
        c = _Counts.of(self.table)
        c.add_attempt(ctx.index(candidate), unrun, passed=False)
        return c, changed

    def _view(self, ctx: Any, code: str, c: _Counts, j: int, changed: np.ndarray,
              passes_for_missing: int | None = None) -> View:
        """A view: the plan's rule on the changed counts, the candidate's row as ``count_as_fail`` reads it."""
        rule, k, policy = ctx.outcomes.rule, ctx.outcomes.k, ctx.missing_policy
        out = c.outcomes(rule, k, policy)
        if policy == "exclude":
            failed = c.outcomes(rule, k, "count_as_fail")
            values, taken = np.array(out.values, copy=True), np.array(out.attempts, copy=True)
            values[j], taken[j] = failed.values[j], failed.attempts[j]
            out = replace(out, values=values, attempts=taken)
        trials = c.attempts - c.missing if policy == "exclude" else np.array(c.attempts, copy=True)
        trials[j] = c.attempts[j]  # the candidate's missing attempts are failed ones now
        missing = np.array(c.missing, copy=True)
        missing[j] = 0
        counts = CaseCounts(trials=trials, passes=c.passes, missing=missing)
        return View(code=code, ctx=replace(ctx, outcomes=out, counts=counts), cases=int(changed.sum()))

    def missing_as_failures(self, ctx: Any, candidate: str, baseline: str | None, **_: Any) -> View | None:
        if not self._unrun(ctx, candidate, baseline)[1].any():  # (no case changes: no copy of the counts)
            return None
        c, changed = self._as_failures(ctx, candidate, baseline)
        return self._view(ctx, "missing_as_failures", c, ctx.index(candidate), changed)

    def missing_against_candidate(self, ctx: Any, candidate: str, baseline: str, **_: Any) -> View | None:
        j, b, t = ctx.index(candidate), ctx.index(baseline), self.table
        if (ctx.missing_policy != "exclude" or not (t.missing_counts[b] > 0).any()) and not (
                (t.attempts[j] > 0) & ~(t.attempts[b] > 0)).any():  # (what is asked below, before the counts
            return None  # are copied: the candidate's failures add attempts only where the baseline has some)
        c, _changed = self._as_failures(ctx, candidate, baseline)
        nan = c.missing[b] > 0 if ctx.missing_policy == "exclude" else np.zeros(c.attempts.shape[1], dtype=bool)
        unrun = np.flatnonzero((c.attempts[j] > 0) & ~(c.attempts[b] > 0))
        if not nan.any() and unrun.size == 0:
            return None
        k = int(ctx.outcomes.k or 1)
        hit, gap = f"passes_in_first_{k}", f"missing_in_first_{k}"
        # the baseline's missing attempts pass: under exclude the rule reads every attempt of it again
        c.passes[b] = np.where(nan, c.passes[b] + c.missing[b], c.passes[b])
        first = c.rules.get("first_outcome")
        if first is not None:
            first[b] = np.where(nan & np.isnan(first[b]), 1.0, first[b])
            if "first_answered_outcome" in c.rules:
                c.rules["first_answered_outcome"][b] = np.where(nan, first[b], c.rules["first_answered_outcome"][b])
        if hit in c.rules:
            if gap not in c.rules and (nan & (c.rules[hit][b] == 0)).any():
                raise ReadingUnavailable(f"the verdict must also hold with {baseline}'s missing outcomes counted as "
                                         f"passes, and the case table has no {gap} column to tell whether a missing "
                                         f"attempt is among the first {k}")
            if gap in c.rules:
                c.rules[hit][b] = np.where(nan, c.rules[hit][b] + c.rules[gap][b], c.rules[hit][b])
                c.rules[gap][b] = np.where(nan, 0.0, c.rules[gap][b])
            if f"answered_{hit}" in c.rules:
                c.rules[f"answered_{hit}"][b] = np.where(nan, c.rules[hit][b], c.rules[f"answered_{hit}"][b])
        c.missing[b] = np.where(nan, 0, c.missing[b])
        c.add_attempt(b, unrun, passed=True)
        changed = nan.copy()
        changed[unrun] = True
        return self._view(ctx, "missing_against_candidate", c, j, changed)

    def equal_attempts(self, ctx: Any, candidate: str, baseline: str, **_: Any) -> View | None:
        rule, k = ctx.outcomes.rule, ctx.outcomes.k
        if rule not in ATTEMPT_COUNT_RULES:
            return None
        usable = self.table.case_counts(ctx.missing_policy).trials
        counts = usable[[ctx.index(candidate), ctx.index(baseline)]]
        if rule == "best_of_k" and k:
            counts = np.minimum(counts, int(k))
        unequal = (counts[0] > 0) & (counts[1] > 0) & (counts[0] != counts[1])
        if not unequal.any():
            return None
        raise ReadingUnavailable(
            f"{candidate} and {baseline} have different numbers of usable attempts on {int(unequal.sum())} shared "
            f"case(s), and under rule {rule} the verdict must also hold with equal numbers (best of 3 against best of "
            "1 is another comparison); a case table counts attempts but does not say which passed, so it cannot cut "
            "them")
