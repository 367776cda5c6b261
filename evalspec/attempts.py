"""Attempt rules: reduce the repeats of each (candidate, case) to one case outcome.

The guide "Repeat AI evaluations and report uncertainty honestly" ("Separate sources of variation"): state how many attempts were made and
whether the result is first attempt, best of several, majority vote or another rule;
best-of-many answers a different question from first-attempt performance; apply the
same rule to every candidate. :func:`reduce_attempts` applies the plan's one rule to
every candidate, vectorised over sorted groups.

Rules (after the missing-outcome policy: ``count_as_fail`` turns a missing outcome into a
failure; ``exclude`` drops the attempt, so the rule sees only the remaining attempts):

``first``
    the outcome of the lowest-numbered attempt.
``best_of_k``
    passes if any of the first ``k`` attempts passes; **attempts beyond the first k are
    discarded** (``pass_at_k`` uses them all).
``majority``
    passes if strictly more than half of the attempts pass; **a tie fails** (2 of 4 is
    not a majority), so the rule never rewards an undecided case.
``majority_answer``
    the most common *answer* across the attempts is graded against the case's target
    (lm-evaluation-harness ``maj@k``, self-consistency), which differs from a majority of
    pass/fail outcomes. Answers are compared as numbers when both sides read as numbers,
    else as text with surrounding space and letter case ignored; a target written as a
    JSON list accepts any of its items. **A tie goes to the tied answer given first**
    (lowest repeat number), as lm-evaluation-harness's ``majority_vote`` filter does.
    Under ``count_as_fail`` an attempt with no answer (or a missing outcome) is a vote for
    "no answer", which never passes; under ``exclude`` it is dropped.
``mean``
    the fraction of attempts passing (a case outcome in [0, 1], not pass/fail).
``pass_at_k``
    the chance that at least one of ``k`` attempts drawn from the case's ``n`` attempts
    passes, from all ``n`` (Chen et al. 2021, "Evaluating Large Language Models Trained on
    Code": the unbiased estimator ``1 - C(n-c, k) / C(n, k)`` with ``c`` passing): a case
    outcome in [0, 1]. Computed as inspect_ai's ``pass_at(k)`` reducer computes it.
``pass_hat_k``
    the chance that all ``k`` attempts drawn from the ``n`` pass (pass^k, reliability:
    Yao et al. 2024, "tau-bench"): ``C(c, k) / C(n, k)``, a case outcome in [0, 1]; as
    inspect_ai's ``pass_k(k)`` reducer.

For both, an attempt passes when its outcome is 1 (as inspect counts ``value >= 1``); a
case with fewer than ``k`` attempts left (under ``exclude``) has no outcome, as inspect
gives it NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CaseOutcomes", "apply_missing_policy", "attempt_order", "attempt_ranks", "reduce_attempts", "rule_question", "RULES", "FRACTIONAL_RULES", "pass_at", "pass_hat"]

RULES = ("first", "best_of_k", "majority", "majority_answer", "mean", "pass_at_k", "pass_hat_k")
#: Rules whose case outcome is a number in [0, 1] rather than pass/fail.
FRACTIONAL_RULES = frozenset({"mean", "pass_at_k", "pass_hat_k"})


def rule_question(rule: str, k: int | None, repeats: int) -> str:
    """The plain question a rule answers (for the claim's 'what the number covers')."""
    if rule == "first":
        return "How often does a single first attempt succeed?"
    if rule == "best_of_k":
        extra = (f" Only the first {k} of the {repeats} attempts per case count; the other {repeats - k} are "
                 "discarded (pass_at_k would use them all)." if repeats > (k or 1) else "")
        return (f"How often does at least one of {k} attempts succeed (a user who may retry up to {k} times "
                "and can tell a good answer)? This uses more resources than a first attempt and answers a "
                f"different question.{extra}")
    if rule == "majority":
        return (f"How often does a majority of the {repeats} attempts succeed (a tie counts as a failure)?")
    if rule == "majority_answer":
        return (f"How often is the most common answer of {repeats} attempts correct (maj@{repeats}, "
                "self-consistency; a tie goes to the answer given first)?")
    if rule == "mean":
        return (f"What fraction of attempts succeeds on an average case, averaged over the {repeats} attempts "
                "per case?")
    if rule == "pass_at_k":
        return (f"How likely is at least one of {k} attempts to succeed on an average case (pass@{k}, estimated from "
                f"all {repeats} attempts per case with the unbiased estimator of Chen et al. 2021)? A user who may "
                "retry and can tell a good answer; a different question from first-attempt performance.")
    if rule == "pass_hat_k":
        return (f"How likely are all of {k} attempts to succeed on an average case (pass^{k}, reliability, estimated "
                f"from all {repeats} attempts per case)? Stricter than a single attempt: every try must pass.")
    raise ValueError(f"unknown attempt rule {rule!r}")


def pass_at(n: int, c: int, k: int) -> float:
    """pass@k of a case with ``c`` of ``n`` attempts passing: ``1 - C(n-c, k) / C(n, k)`` (NaN if n < k).

    The same arithmetic as inspect_ai's ``pass_at`` reducer (a product, exact for large n).
    """
    if n < k:
        return float("nan")
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)).item())


def pass_hat(n: int, c: int, k: int) -> float:
    """pass^k of a case with ``c`` of ``n`` attempts passing: ``C(c, k) / C(n, k)`` (NaN if n < k)."""
    import math

    if n < k:
        return float("nan")
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True)
class CaseOutcomes:
    """Case-level outcomes: ``values[j, i]`` for candidate ``j`` and case ``i``.

    ``values`` is NaN where candidate ``j`` has no usable attempt of case ``i`` (the case
    was not run, or every attempt was missing under ``exclude``). ``attempts[j, i]`` is the
    number of attempts the rule used.
    """

    values: np.ndarray
    attempts: np.ndarray
    rule: str
    k: int | None

    @property
    def binary(self) -> bool:
        """Whether case outcomes are pass/fail (every rule but ``mean``, ``pass_at_k``, ``pass_hat_k``)."""
        return self.rule not in FRACTIONAL_RULES


def apply_missing_policy(passed: np.ndarray, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """``(keep, outcomes)`` of attempt rows under the plan's missing-outcome policy: the one place it is applied.

    ``exclude``: a row without an outcome (NaN) is dropped (``keep`` False there);
    ``count_as_fail``: it counts, as a failure (0.0); ``error``: the run refused any missing
    outcome before this point, so nothing is missing. ``outcomes`` has the rows' values with
    that policy applied (NaN only where ``keep`` is False). When nothing is missing, ``outcomes`` is
    ``passed`` itself, not a copy (10M rows: 80 MB): read it, never write to it.
    """
    passed = np.asarray(passed, dtype=np.float64)
    missing = np.isnan(passed)
    if policy == "exclude":
        return ~missing, passed
    return np.ones(passed.shape, dtype=bool), np.where(missing, 0.0, passed) if missing.any() else passed


def attempt_order(cand: np.ndarray, case: np.ndarray, repeat: np.ndarray) -> np.ndarray:
    """Rows by (candidate, case, repeat), ties in row order: ``np.lexsort((repeat, case, cand))``.

    The one home of the attempts' order (the checks and :func:`reduce_attempts` use it). One
    int64 key sorts faster than three; it is used only where its spans provably fit (computed
    with Python integers), so nothing can overflow; otherwise lexsort.
    """
    keys = (cand, case, repeat)
    if cand.size:
        lows = [int(k.min()) for k in keys]
        spans = [int(k.max()) - lo + 1 for k, lo in zip(keys, lows)]
        if spans[0] * spans[1] * spans[2] < 2**62:
            key = cand.astype(np.int64)  # built in place: one int64 array a row, not five (10M rows: 80 MB each)
            key -= lows[0]
            key *= spans[1]
            key += case
            key -= lows[1]
            key *= spans[2]
            key += repeat
            key -= lows[2]
            return np.argsort(key, kind="stable")
    return np.lexsort((repeat, case, cand))


def attempt_ranks(cand: np.ndarray, case: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's 0-based rank by repeat number within its (candidate, case), and that group's size.

    ``order`` is :func:`attempt_order` of the rows, computed once.
    """
    n = len(order)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    cand, case = cand[order], case[order]
    starts = np.r_[True, (cand[1:] != cand[:-1]) | (case[1:] != case[:-1])]
    first = np.flatnonzero(starts)
    group = np.cumsum(starts) - 1
    sizes = np.diff(np.r_[first, n])
    rank = np.empty(n, dtype=np.int64)
    size = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - first[group]
    size[order] = sizes[group]
    return rank, size


def reduce_attempts(cand: np.ndarray, case: np.ndarray, repeat: np.ndarray, passed: np.ndarray, *,
                    n_candidates: int, n_cases: int, rule: str, k: int | None = None,
                    missing_policy: str = "count_as_fail", answer: np.ndarray | None = None,
                    target: np.ndarray | None = None, order: np.ndarray | None = None) -> CaseOutcomes:
    """Reduce attempts to case outcomes by ``rule``.

    Parameters
    ----------
    cand, case, repeat : ndarray of int
        Candidate code, case code and repeat number of each attempt row.
    passed : ndarray of float
        1.0 pass, 0.0 fail, NaN missing.
    n_candidates, n_cases : int
        Shape of the output.
    rule : {"first", "best_of_k", "majority", "majority_answer", "mean", "pass_at_k", "pass_hat_k"}
    k : int, optional
        Attempts that count for ``best_of_k``; the k of ``pass_at_k`` / ``pass_hat_k``.
    missing_policy : {"count_as_fail", "exclude", "error"}
        ``error`` behaves like ``count_as_fail`` here (the checks refused any missing).
    answer, target : ndarray of object, optional
        For ``majority_answer``: each attempt's answer and its case's correct answer.
    order : ndarray of int, optional
        :func:`attempt_order` of these rows when the caller has it already (the checks sort them):
        not sorted again.

    Returns
    -------
    CaseOutcomes
    """
    if rule not in RULES:
        raise ValueError(f"unknown attempt rule {rule!r}")
    if rule == "majority_answer":
        if answer is None or target is None:
            raise ValueError("rule majority_answer needs the answer and target of every attempt")
        return _majority_answer(cand, case, repeat, np.asarray(passed, dtype=np.float64), answer, target,
                                n_candidates=n_candidates, n_cases=n_cases, missing_policy=missing_policy, order=order)
    keep, passed = apply_missing_policy(passed, missing_policy)
    if not keep.all():
        if order is not None:  # the same order over the rows kept, renumbered
            order = (np.cumsum(keep) - 1)[order[keep[order]]]
        cand, case, repeat, passed = cand[keep], case[keep], repeat[keep], passed[keep]
    values = np.full((n_candidates, n_cases), np.nan)
    attempts = np.zeros((n_candidates, n_cases), dtype=np.int64)
    if cand.size == 0:
        return CaseOutcomes(values=values, attempts=attempts, rule=rule, k=k)
    if order is None:
        order = attempt_order(cand, case, repeat)
    c, i, p = cand[order], case[order], passed[order]
    del order
    start = np.empty(len(c), dtype=bool)  # where each (candidate, case) group starts, in attempt order
    start[0] = True
    np.not_equal(c[1:], c[:-1], out=start[1:])
    start[1:] |= i[1:] != i[:-1]
    if rule == "first":  # the lowest-numbered attempt: where each group starts
        cu, iu, pu, su = c[start], i[start], p[start], start[start]
    elif rule == "best_of_k" and _longest_group(start) > int(k or 1):  # each attempt's rank in its group
        first = np.flatnonzero(start)
        rank = np.arange(len(c)) - np.repeat(first, np.diff(np.r_[first, len(c)]))
        use = rank < int(k or 1)
        del rank
        cu, iu, pu, su = c[use], i[use], p[use], start[use]
    else:  # every attempt counts: no copies (10M rows: 80 MB each)
        cu, iu, pu, su = c, i, p, start
    bounds = np.flatnonzero(su)
    sums = np.add.reduceat(pu, bounds)
    counts = np.diff(np.r_[bounds, len(pu)])
    if rule == "first":
        out = sums
    elif rule == "best_of_k":
        out = (sums > 0).astype(np.float64)
    elif rule == "majority":
        out = (2 * sums > counts).astype(np.float64)  # strictly more than half; a tie fails
    elif rule in ("pass_at_k", "pass_hat_k"):
        correct = np.add.reduceat((pu >= 1.0).astype(np.int64), bounds)
        out = _pass_values(counts, correct, int(k or 1), pass_at if rule == "pass_at_k" else pass_hat)
    else:
        out = sums / counts
    values[cu[bounds], iu[bounds]] = out
    attempts[cu[bounds], iu[bounds]] = counts
    return CaseOutcomes(values=values, attempts=attempts, rule=rule, k=k)


def _longest_group(start: np.ndarray) -> int:
    """The most rows of one group, given where each group starts (``start[0]`` is True)."""
    first = np.flatnonzero(start)
    return int(np.diff(np.r_[first, start.shape[0]]).max())


def _pass_values(n: np.ndarray, c: np.ndarray, k: int, estimator: object) -> np.ndarray:
    """The estimator at each (n, c), computed once per distinct pair (there are few)."""
    pairs, inverse = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    table = np.array([estimator(int(a), int(b), k) for a, b in pairs], dtype=np.float64)  # type: ignore[operator]
    return table[np.asarray(inverse).reshape(-1)]


def _no_answer(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and np.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _number(text: str) -> float | None:
    try:
        v = float(text.replace(",", ""))
    except ValueError:
        return None
    return v if np.isfinite(v) else None


def answer_key(value: object) -> tuple[str, object]:
    """The form in which two answers are the same vote: a number, else folded text."""
    if isinstance(value, bool):
        return ("text", str(value).lower())
    if isinstance(value, (int, float)) and np.isfinite(float(value)):
        return ("number", float(value))
    text = str(value).strip()
    num = _number(text)
    if num is not None:
        return ("number", num)
    return ("text", " ".join(text.casefold().split()))


def answer_matches(answer: object, target: object) -> bool:
    """Whether ``answer`` is correct for ``target`` (a JSON list target accepts any item)."""
    if _no_answer(answer) or _no_answer(target):
        return False
    targets: list[object] = [target]
    if isinstance(target, str) and target.strip().startswith("["):
        import json

        try:
            parsed = json.loads(target)
        except ValueError:
            parsed = None
        if isinstance(parsed, list) and parsed:
            targets = parsed
    key = answer_key(answer)
    return any(key == answer_key(t) for t in targets if not _no_answer(t))


def _majority_answer(cand: np.ndarray, case: np.ndarray, repeat: np.ndarray, passed: np.ndarray, answer: np.ndarray,
                     target: np.ndarray, *, n_candidates: int, n_cases: int, missing_policy: str,
                     order: np.ndarray | None = None) -> CaseOutcomes:
    values = np.full((n_candidates, n_cases), np.nan)
    attempts = np.zeros((n_candidates, n_cases), dtype=np.int64)
    answer = np.asarray(answer, dtype=object)
    target = np.asarray(target, dtype=object)
    if cand.size == 0:
        return CaseOutcomes(values=values, attempts=attempts, rule="majority_answer", k=None)
    if order is None:
        order = attempt_order(cand, case, repeat)
    g = cand[order].astype(np.int64) * (n_cases + 1) + case[order]  # (int64: narrow codes would overflow)
    bounds = np.r_[np.flatnonzero(np.r_[True, g[1:] != g[:-1]]), len(g)]
    none = ("none", None)
    for b0, b1 in zip(bounds[:-1], bounds[1:]):
        rows = order[b0:b1]
        votes: dict[tuple[str, object], int] = {}
        first_answer: dict[tuple[str, object], object] = {}
        used = 0
        for r in rows:
            missing = _no_answer(answer[r]) or np.isnan(passed[r])
            if missing and missing_policy == "exclude":
                continue
            key = none if missing else answer_key(answer[r])
            votes[key] = votes.get(key, 0) + 1  # dicts keep first-seen order: ties go to the first answer
            first_answer.setdefault(key, None if missing else answer[r])
            used += 1
        j, i = int(cand[rows[0]]), int(case[rows[0]])
        attempts[j, i] = used
        if not used:
            continue
        best = max(votes.values())
        winner = next(k for k, v in votes.items() if v == best)
        tgt = next((target[r] for r in rows if not _no_answer(target[r])), None)
        values[j, i] = 0.0 if winner == none else float(answer_matches(first_answer[winner], tgt))
    return CaseOutcomes(values=values, attempts=attempts, rule="majority_answer", k=None)


def attempt_columns(plan: object, raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The extra inputs the plan's attempt rule reads from the results (``answer``/``target``).

    Empty for every rule but ``majority_answer``; a column the plan names but the results
    lack is an :class:`~evalspec.errors.InputError` (exit 2) naming the plan key.
    """
    attempts = getattr(plan, "attempts", None)
    if getattr(attempts, "rule", None) != "majority_answer":
        return {}
    from evalspec.errors import Diagnostic, InputError

    out: dict[str, np.ndarray] = {}
    problems = []
    for role in ("answer", "target"):
        name = getattr(attempts, role)
        if name not in raw:
            problems.append(Diagnostic(file="results", key=f"attempts.{role}",
                                       message=f"the plan names column {name!r} for the {role} of majority_answer, "
                                       "but the results have no such column",
                                       hint=f"columns found: {', '.join(sorted(raw)) or 'none'}"))
        else:
            out[role] = raw[name]
    if problems:
        raise InputError("the results lack the columns majority_answer reads", problems)
    return out
