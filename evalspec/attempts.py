"""Attempt rules: reduce the repeats of each (candidate, case) to one case outcome.

Seed 000 ("Separate sources of variation"): state how many attempts were made and
whether the result is first attempt, best of several, majority vote or another rule;
best-of-many answers a different question from first-attempt performance; apply the
same rule to every candidate. :func:`reduce_attempts` applies the plan's one rule to
every candidate, vectorised over sorted groups.

Rules (after the missing-outcome policy: ``count_as_fail`` turns a missing outcome into a
failure; ``exclude`` drops the attempt, so the rule sees only the remaining attempts):

``first``
    the outcome of the lowest-numbered attempt.
``best_of_k``
    passes if any of the first ``k`` attempts passes.
``majority``
    passes if strictly more than half of the attempts pass; **a tie fails** (2 of 4 is
    not a majority), so the rule never rewards an undecided case.
``mean``
    the fraction of attempts passing (a case outcome in [0, 1], not pass/fail).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CaseOutcomes", "reduce_attempts", "rule_question", "RULES"]

RULES = ("first", "best_of_k", "majority", "mean")


def rule_question(rule: str, k: int | None, repeats: int) -> str:
    """The plain question a rule answers (for the claim's 'what the number covers')."""
    if rule == "first":
        return "How often does a single first attempt succeed?"
    if rule == "best_of_k":
        return (f"How often does at least one of {k} attempts succeed (a user who may retry up to {k} times "
                "and can tell a good answer)? This uses more resources than a first attempt and answers a "
                "different question.")
    if rule == "majority":
        return (f"How often does a majority of the {repeats} attempts succeed (a tie counts as a failure)?")
    if rule == "mean":
        return (f"What fraction of attempts succeeds on an average case, averaged over the {repeats} attempts "
                "per case?")
    raise ValueError(f"unknown attempt rule {rule!r}")


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
        """Whether case outcomes are pass/fail (every rule but ``mean``)."""
        return self.rule != "mean"


def reduce_attempts(cand: np.ndarray, case: np.ndarray, repeat: np.ndarray, passed: np.ndarray, *,
                    n_candidates: int, n_cases: int, rule: str, k: int | None = None,
                    missing_policy: str = "count_as_fail") -> CaseOutcomes:
    """Reduce attempts to case outcomes by ``rule``.

    Parameters
    ----------
    cand, case, repeat : ndarray of int
        Candidate code, case code and repeat number of each attempt row.
    passed : ndarray of float
        1.0 pass, 0.0 fail, NaN missing.
    n_candidates, n_cases : int
        Shape of the output.
    rule : {"first", "best_of_k", "majority", "mean"}
    k : int, optional
        Attempts that count for ``best_of_k``.
    missing_policy : {"count_as_fail", "exclude", "error"}
        ``error`` behaves like ``count_as_fail`` here (the checks refused any missing).

    Returns
    -------
    CaseOutcomes
    """
    if rule not in RULES:
        raise ValueError(f"unknown attempt rule {rule!r}")
    passed = np.asarray(passed, dtype=np.float64)
    if missing_policy == "exclude":
        keep = ~np.isnan(passed)
        cand, case, repeat, passed = cand[keep], case[keep], repeat[keep], passed[keep]
    else:
        passed = np.where(np.isnan(passed), 0.0, passed)
    values = np.full((n_candidates, n_cases), np.nan)
    attempts = np.zeros((n_candidates, n_cases), dtype=np.int64)
    if cand.size == 0:
        return CaseOutcomes(values=values, attempts=attempts, rule=rule, k=k)
    order = np.lexsort((repeat, case, cand))
    c, i, p = cand[order], case[order], passed[order]
    g = c * (n_cases + 1) + i
    start = np.r_[True, g[1:] != g[:-1]]
    rank = np.arange(len(g)) - np.maximum.accumulate(np.where(start, np.arange(len(g)), 0))
    if rule == "first":
        use = rank == 0
    elif rule == "best_of_k":
        use = rank < int(k or 1)
    else:
        use = np.ones(len(g), dtype=bool)
    cu, iu, pu, su = c[use], i[use], p[use], start[use]
    bounds = np.flatnonzero(su)
    sums = np.add.reduceat(pu, bounds)
    counts = np.diff(np.r_[bounds, len(pu)])
    if rule == "first":
        out = sums
    elif rule == "best_of_k":
        out = (sums > 0).astype(np.float64)
    elif rule == "majority":
        out = (2 * sums > counts).astype(np.float64)  # strictly more than half; a tie fails
    else:
        out = sums / counts
    values[cu[bounds], iu[bounds]] = out
    attempts[cu[bounds], iu[bounds]] = counts
    return CaseOutcomes(values=values, attempts=attempts, rule=rule, k=k)
