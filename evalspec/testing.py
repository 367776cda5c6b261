"""Test support: analysis contexts from plain lists, for testing a kind's ``compute``.

``context_from_arrays(candidates, case_ids, cand, case, passed, ...)`` builds the
:class:`~evalspec.analyses.context.AnalysisContext` that ``evalspec run`` would build from a
results table, with keyword settings for the plan parts an analysis reads (the decision's
level, goal, margin and critical limit, declared slices, the primary comparison, the
attempt rule and the missing-outcome policy). Nothing in the package imports this module; it
exists for the tests and for anyone writing a new kind (docs/ARCHITECTURE.md, "Adding an
analysis").
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from evalspec.analyses.context import AnalysisContext
from evalspec.analyses.contract import Repeats
from evalspec.attempts import reduce_attempts

__all__ = ["ArrayPlan", "context_from_arrays"]


@dataclass(frozen=True)
class ArrayPlan:
    """The plan sections an analysis may read, for contexts built from arrays.

    Shaped like :class:`evalspec.plan.model.Plan` where analyses read it (``decision``,
    ``stopping``, ``slices``, ``attempts``, ``missing``, ``data.columns.critical``,
    :meth:`primary_comparison`).
    """

    decision: Any
    stopping: Any
    slices: list[Any]
    attempts: Any
    missing: Any
    data: Any
    primary: tuple[str, str] | None = None

    def primary_comparison(self) -> tuple[str, str] | None:
        return self.primary


def context_from_arrays(candidates: list[str], case_ids: list[str], cand: list[int] | np.ndarray,
                        case: list[int] | np.ndarray, passed: list[float] | np.ndarray, *,
                        repeat: list[int] | np.ndarray | None = None, clusters: list[str] | None = None,
                        case_columns: dict[str, list[Any]] | None = None, rule: str = "first", k: int | None = None,
                        baseline: str | None = None, score: list[float] | np.ndarray | None = None,
                        missing_policy: str = "count_as_fail", plan: Any = None, confidence_level: float = 0.95,
                        goal: str = "superiority", margin: float | None = None, minimum_improvement: float = 0.0,
                        minimum_units: int = 1, slices: list[Any] | None = None, critical_role: str | None = None,
                        critical_max_rate: float | None = None, critical_level: float | None = None,
                        primary: tuple[str, str] | None = None, planned_repeats: int = 1,
                        looks: int = 1, stopping_rule: str = "fixed") -> AnalysisContext:
    """A context from plain lists: one entry of ``cand``/``case``/``passed`` per attempt row.

    ``cand[r]`` and ``case[r]`` are codes into ``candidates`` and ``case_ids``; ``clusters``
    gives the cluster label of each *case* (parallel to ``case_ids``). The plan is ``plan``
    when given, else one built from the keyword settings.
    """
    cand_a = np.asarray(cand, dtype=np.int64)
    case_a = np.asarray(case, dtype=np.int64)
    passed_a = np.asarray(passed, dtype=np.float64)
    rep_a = np.ones_like(cand_a) if repeat is None else np.asarray(repeat, dtype=np.int64)
    out = reduce_attempts(cand_a, case_a, rep_a, passed_a, n_candidates=len(candidates), n_cases=len(case_ids),
                          rule=rule, k=k, missing_policy=missing_policy)
    case_cluster = cluster_ids = None
    if clusters is not None:
        cluster_ids = np.array(sorted(set(clusters)), dtype=object)
        lookup = {c: j for j, c in enumerate(cluster_ids.tolist())}
        case_cluster = np.array([lookup[c] for c in clusters], dtype=np.int64)
    cols = {k2: np.asarray(v, dtype=object) for k2, v in (case_columns or {}).items()}
    reps = Repeats(cand=cand_a, case=case_a, repeat=rep_a, passed=passed_a,
                   score=passed_a if score is None else np.asarray(score, dtype=np.float64))
    if plan is None:
        plan = _array_plan(rule=rule, k=k, missing_policy=missing_policy, confidence_level=confidence_level,
                           goal=goal, margin=margin, minimum_improvement=minimum_improvement,
                           minimum_units=minimum_units, slices=slices, critical_role=critical_role,
                           critical_max_rate=critical_max_rate, critical_level=critical_level, primary=primary,
                           planned_repeats=planned_repeats, looks=looks, stopping_rule=stopping_rule)
    return AnalysisContext(candidates=list(candidates), baseline=baseline, case_ids=np.asarray(case_ids, dtype=object),
                           case_cluster=case_cluster, cluster_ids=cluster_ids, case_columns=cols, outcomes=out,
                           repeats=reps, plan=plan)


def _array_plan(*, rule: str, k: int | None, missing_policy: str, confidence_level: float, goal: str,
                margin: float | None, minimum_improvement: float, minimum_units: int, slices: list[Any] | None,
                critical_role: str | None, critical_max_rate: float | None, critical_level: float | None,
                primary: tuple[str, str] | None, planned_repeats: int, looks: int, stopping_rule: str) -> ArrayPlan:
    from evalspec.plan.model import Attempts, Columns, CriticalFailureLimit, Decision, Missing, Stopping

    crit = None
    if critical_max_rate is not None:
        crit = CriticalFailureLimit.model_construct(
            max_rate=critical_max_rate, confidence_level=critical_level if critical_level is not None else 0.95)
    lax: Any = {"goal": goal, "stopping": stopping_rule, "rule": rule, "policy": missing_policy}
    decision = Decision.model_construct(goal=lax["goal"], minimum_improvement=minimum_improvement, margin=margin,
                                        confidence_level=confidence_level, critical_failures=crit,
                                        minimum_units=minimum_units)
    return ArrayPlan(
        decision=decision, stopping=Stopping.model_construct(rule=lax["stopping"], looks=looks),
        slices=list(slices or []), attempts=Attempts.model_construct(repeats=planned_repeats, rule=lax["rule"], k=k),
        missing=Missing.model_construct(policy=lax["policy"]),
        data=SimpleNamespace(columns=Columns.model_construct(critical=critical_role)), primary=primary)
