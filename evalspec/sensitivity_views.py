"""Other readings of the same results, for the decision's sensitivity rule.

The verdict must bound the quantity the thresholds are about. Two things in the data can make
the interval bound something else without any statistic being wrong, and no analysis kind can
see them on its own:

* **the candidate's missing outcomes** — attempts with no outcome that the plan's policy left
  out, and cases the baseline was run on but the candidate never was (rows that are simply not
  there). A candidate that times out, or is never run, on the cases it would fail looks better
  than it is, in its pass rate and in its critical-failure bound;
* **unequal numbers of attempts** under a rule whose case outcome depends on how many attempts
  there were (``best_of_k``, ``majority``, ``majority_answer``): best of 3 against best of 1 is
  not the comparison the plan states, even between two copies of the same model.

Each *view* rebuilds the analysis context from the attempt rows with one change —
:func:`missing_as_failures` counts every missing or never-run attempt of the candidate as a
failure (the baseline keeps the plan's policy); :func:`equal_attempts` cuts the candidate and
the baseline to the same number of attempts on every case — and the runtime runs again every
analysis that offers the decision something, so the decision can reach the verdict on that view
and compare (``docs/decision.md``, "The estimand guard").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evalspec.analyses.contract import Repeats
from evalspec.attempts import apply_missing_policy, attempt_order, attempt_ranks, reduce_attempts

__all__ = ["ATTEMPT_COUNT_RULES", "View", "equal_attempts", "missing_against_candidate", "missing_as_failures"]

#: Attempt rules whose case outcome depends on the number of attempts it is made from (the others —
#: first, mean, pass_at_k, pass_hat_k — estimate the same per-case quantity from any number).
ATTEMPT_COUNT_RULES = frozenset({"best_of_k", "majority", "majority_answer"})


@dataclass(frozen=True)
class View:
    """An alternative context and what changed to make it."""

    code: str
    ctx: Any
    #: cases whose candidate (or pair of) attempts changed
    cases: int
    #: for ``equal_attempts``: (cases where the candidate had more attempts, cases where the baseline had)
    more: tuple[int, int] = (0, 0)


def _rebuild(ctx: Any, reps: Repeats, answer: np.ndarray | None, target: np.ndarray | None,
             fail: int | None = None) -> Any:
    """The context with its attempt rows replaced and the case outcomes reduced again by the plan's rule
    (candidate row ``fail`` reduced as ``count_as_fail`` would: a missing attempt is a failed one)."""
    out = ctx.outcomes

    def reduce(policy: str) -> Any:
        return reduce_attempts(reps.cand, reps.case, reps.repeat, reps.passed, n_candidates=len(ctx.candidates),
                               n_cases=len(ctx.case_ids), rule=out.rule, k=out.k, missing_policy=policy,
                               answer=answer, target=target)

    values = reduce(ctx.missing_policy)
    if fail is not None and ctx.missing_policy == "exclude":
        failed = reduce("count_as_fail")
        v, a = np.array(values.values, copy=True), np.array(values.attempts, copy=True)
        v[fail], a[fail] = failed.values[fail], failed.attempts[fail]
        values = replace(values, values=v, attempts=a)
    return replace(ctx, outcomes=values, repeats=reps)


def _attempt_kw(answer: np.ndarray | None, target: np.ndarray | None) -> dict[str, np.ndarray]:
    return {} if answer is None or target is None else {"answer": answer, "target": target}


def missing_as_failures(ctx: Any, candidate: str, baseline: str | None, *, answer: np.ndarray | None = None,
                        target: np.ndarray | None = None) -> View | None:
    """``ctx`` with every missing attempt of ``candidate`` a failure, and a failed attempt added on every case
    the baseline has and the candidate lacks (None when nothing changes).

    ``answer`` / ``target``: the ``majority_answer`` columns, aligned with ``ctx.repeats``.
    """
    r = ctx.repeats
    j = ctx.index(candidate)
    mine = r.cand == j
    nan = mine & np.isnan(r.passed)
    n_cases = len(ctx.case_ids)
    has = np.zeros(n_cases, dtype=bool)
    has[r.case[mine]] = True
    other = np.zeros(n_cases, dtype=bool)
    if baseline is not None and baseline != candidate:
        other[r.case[r.cand == ctx.index(baseline)]] = True
    unrun = np.flatnonzero(other & ~has)
    changed = np.zeros(n_cases, dtype=bool)
    if ctx.missing_policy == "exclude":
        changed[r.case[nan]] = True
    changed[unrun] = True
    if not changed.any():
        return None
    k = unrun.size
    reps = Repeats(cand=np.r_[r.cand, np.full(k, j, dtype=r.cand.dtype)],
                   case=np.r_[r.case, unrun.astype(r.case.dtype)],
                   repeat=np.r_[r.repeat, np.ones(k, dtype=r.repeat.dtype)],
                   passed=np.r_[r.passed, np.zeros(k)], score=np.r_[r.score, np.zeros(k)],
                   columns={name: np.r_[col.astype(object), np.full(k, None, dtype=object)]
                            for name, col in r.columns.items()})
    if answer is not None and target is not None:  # a never-run attempt gives no answer: a vote that never passes
        first_target = {int(c): t for c, t in zip(r.case.tolist(), target.tolist(), strict=True)}
        answer = np.r_[np.asarray(answer, dtype=object), np.full(k, None, dtype=object)]
        target = np.r_[np.asarray(target, dtype=object), np.array([first_target.get(int(c)) for c in unrun],
                                                                    dtype=object)]
    alt = _rebuild(ctx, reps, answer, target, fail=j)
    # the attempt rows the critical-failure count reads: the candidate's missing ones are failed attempts
    alt = replace(alt, repeats=replace(reps, passed=np.where(np.r_[nan, np.zeros(k, dtype=bool)], 0.0, reps.passed)))
    return View(code="missing_as_failures", ctx=alt, cases=int(changed.sum()))


def missing_against_candidate(ctx: Any, candidate: str, baseline: str, *, answer: np.ndarray | None = None,
                              target: np.ndarray | None = None) -> View | None:
    """The least favourable reading for adopting ``candidate``: its missing and never-run attempts failures
    (:func:`missing_as_failures`) and the baseline's passes — its attempts without an outcome under
    ``exclude``, and a passing attempt on every case the candidate has and the baseline lacks. None when
    the baseline has nothing missing (the first reading then says all)."""
    first = missing_as_failures(ctx, candidate, baseline, answer=answer, target=target)
    base = first.ctx if first is not None else ctx
    r = base.repeats
    b, j = ctx.index(baseline), ctx.index(candidate)
    theirs = r.cand == b
    nan = theirs & np.isnan(r.passed) if ctx.missing_policy == "exclude" else np.zeros(r.cand.shape, dtype=bool)
    n_cases = len(ctx.case_ids)
    has = np.zeros(n_cases, dtype=bool)
    has[r.case[theirs]] = True
    other = np.zeros(n_cases, dtype=bool)
    other[r.case[r.cand == j]] = True
    unrun = np.flatnonzero(other & ~has)
    if not nan.any() and unrun.size == 0:
        return None
    k = unrun.size
    reps = Repeats(cand=np.r_[r.cand, np.full(k, b, dtype=r.cand.dtype)],
                   case=np.r_[r.case, unrun.astype(r.case.dtype)],
                   repeat=np.r_[r.repeat, np.ones(k, dtype=r.repeat.dtype)],
                   passed=np.r_[np.where(nan, 1.0, r.passed), np.ones(k)], score=np.r_[r.score, np.ones(k)],
                   columns={name: np.r_[col.astype(object), np.full(k, None, dtype=object)]
                            for name, col in r.columns.items()})
    if answer is not None and target is not None:  # a pass under majority_answer: the baseline gave the target
        n0 = ctx.repeats.cand.size  # the first reading appended the candidate's rows after the original ones
        if first is not None and len(answer) == n0 and r.cand.size > n0:
            case_target = {int(c): t for c, t in zip(ctx.repeats.case.tolist(), target.tolist(), strict=True)}
            extra = r.case[n0:]
            answer = np.r_[np.asarray(answer, dtype=object), np.full(extra.size, None, dtype=object)]
            target = np.r_[np.asarray(target, dtype=object), np.array([case_target.get(int(c)) for c in extra],
                                                                        dtype=object)]
        case_target = {int(c): t for c, t in zip(r.case.tolist(), target.tolist(), strict=True)}
        answer = np.where(nan, target, np.asarray(answer, dtype=object))
        answer = np.r_[answer, np.array([case_target.get(int(c)) for c in unrun], dtype=object)]
        target = np.r_[np.asarray(target, dtype=object), np.array([case_target.get(int(c)) for c in unrun],
                                                                    dtype=object)]
    changed = np.zeros(n_cases, dtype=bool)
    changed[r.case[nan]] = True
    changed[unrun] = True
    return View(code="missing_against_candidate", ctx=_rebuild(ctx, reps, answer, target, fail=j),
                cases=int(changed.sum()))


def _usable(ctx: Any) -> np.ndarray:
    """Attempt rows the attempt rule can read under the plan's missing-outcome policy (its one home)."""
    return apply_missing_policy(ctx.repeats.passed, ctx.missing_policy)[0]


def equal_attempts(ctx: Any, candidate: str, baseline: str, *, answer: np.ndarray | None = None,
                   target: np.ndarray | None = None) -> View | None:
    """``ctx`` with the candidate and the baseline cut to the same number of attempts on every case they share
    (the lowest-numbered usable ones), under a rule whose outcome depends on that number; None when they
    already have the same (or the rule does not depend on it)."""
    out = ctx.outcomes
    if out.rule not in ATTEMPT_COUNT_RULES:
        return None
    r = ctx.repeats
    usable = _usable(ctx)
    j, b = ctx.index(candidate), ctx.index(baseline)
    n_cases = len(ctx.case_ids)
    cap = int(out.k) if out.rule == "best_of_k" and out.k else None
    counts = np.zeros((2, n_cases), dtype=np.int64)
    for row, code in ((0, j), (1, b)):
        sel = usable & (r.cand == code)
        counts[row] = np.bincount(r.case[sel], minlength=n_cases)
    if cap is not None:
        counts = np.minimum(counts, cap)
    both = (counts[0] > 0) & (counts[1] > 0)
    unequal = both & (counts[0] != counts[1])
    if not unequal.any():
        return None
    limit = np.minimum(counts[0], counts[1])
    # keep the lowest-numbered usable attempts of each side, as many as the other side has
    pair = (r.cand == j) | (r.cand == b)
    sel = np.flatnonzero(usable & pair)
    rank, _ = attempt_ranks(r.cand[sel], r.case[sel], attempt_order(r.cand[sel], r.case[sel], r.repeat[sel]))
    keep = ~pair  # the other candidates' rows as they are; unusable rows of the pair say nothing either way
    keep[sel[rank < limit[r.case[sel]]]] = True
    reps = Repeats(cand=r.cand[keep], case=r.case[keep], repeat=r.repeat[keep], passed=r.passed[keep],
                   score=r.score[keep], columns={name: col[keep] for name, col in r.columns.items()})
    kw = _attempt_kw(answer, target)
    more = (int(np.count_nonzero(unequal & (counts[0] > counts[1]))),
            int(np.count_nonzero(unequal & (counts[0] < counts[1]))))
    return View(code="equal_attempts",
                ctx=_rebuild(ctx, reps, kw["answer"][keep] if kw else None, kw["target"][keep] if kw else None),
                cases=int(unequal.sum()), more=more)
