"""What an analysis receives: the case-level table after the attempt rule, and the repeats.

``evalspec run`` builds one :class:`AnalysisContext` per run and passes it, with the
analysis's validated parameters, to each kind's ``compute``. The context holds arrays and
the validated plan (no files, no I/O), so analyses are testable on small hand-made tables
built with :meth:`AnalysisContext.from_arrays`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from evalspec.attempts import CaseOutcomes, reduce_attempts

__all__ = ["AnalysisContext", "AnalysisRefused", "ArrayPlan", "Pair", "Repeats"]


class AnalysisRefused(Exception):
    """The data cannot support an analysis the plan asks for (e.g. no case run by both candidates).

    ``evalspec run`` reports it at the analysis's plan line and refuses the run (exit 2).
    """


@dataclass(frozen=True)
class Repeats:
    """Attempt-level rows (after the checks): codes and outcomes, for analyses of repeats."""

    cand: np.ndarray
    case: np.ndarray
    repeat: np.ndarray
    passed: np.ndarray
    score: np.ndarray
    columns: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class Pair:
    """Case outcomes of two candidates on the cases both have (the paired intersection)."""

    x: np.ndarray
    y: np.ndarray
    cases: np.ndarray
    clusters: np.ndarray | None


@dataclass(frozen=True)
class ArrayPlan:
    """The plan sections an analysis may read, for contexts built from arrays (tests, examples).

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


@dataclass(frozen=True)
class AnalysisContext:
    """Everything an analysis may use: the data after the attempt rule, and the validated plan.

    Attributes
    ----------
    candidates : list of str
        Candidate names in the data's order; row ``j`` of ``outcomes.values``.
    baseline : str or None
    case_ids : ndarray of str
        Case labels; column ``i`` of ``outcomes.values``.
    case_cluster : ndarray of int or None
        Cluster code of each case (``cluster_ids[code]`` its label); None without clusters.
    case_columns : dict
        Case-level attribute columns (slice columns, flags): first non-missing value per case.
    outcomes : CaseOutcomes
        Case outcomes after the attempt rule.
    repeats : Repeats
        Attempt-level rows.
    plan : Plan or ArrayPlan
        The validated plan; analyses read its ``decision``, ``stopping``, ``slices`` ... through
        it (the properties below are shorthands), never a copy.
    """

    candidates: list[str]
    baseline: str | None
    case_ids: np.ndarray
    case_cluster: np.ndarray | None
    cluster_ids: np.ndarray | None
    case_columns: dict[str, np.ndarray]
    outcomes: CaseOutcomes
    repeats: Repeats
    plan: Any
    #: The plan's folder: relative paths an analysis reads (reference outputs, prompt files)
    #: resolve against it, never against the working directory. None for contexts built in memory.
    plan_dir: Path | None = None

    # -- the plan, read through -------------------------------------------------------
    @property
    def decision(self) -> Any:
        """The plan's decision block."""
        return self.plan.decision

    @property
    def stopping(self) -> Any:
        """The plan's stopping block."""
        return self.plan.stopping

    @property
    def confidence_level(self) -> float:
        """The decision's level, the default of every analysis."""
        return float(self.decision.confidence_level)

    @property
    def goal(self) -> str:
        return str(self.decision.goal)

    @property
    def margin(self) -> float | None:
        return None if self.decision.margin is None else float(self.decision.margin)

    @property
    def minimum_improvement(self) -> float:
        return float(self.decision.minimum_improvement)

    @property
    def slices(self) -> list[Any]:
        """Declared (confirmatory) slices."""
        return list(self.plan.slices)

    @property
    def critical_role(self) -> str | None:
        """The results column of the ``critical`` role, if the plan names one."""
        return self.plan.data.columns.critical

    @property
    def critical_max_rate(self) -> float | None:
        cf = self.decision.critical_failures
        return None if cf is None else float(cf.max_rate)

    @property
    def critical_level(self) -> float | None:
        cf = self.decision.critical_failures
        return None if cf is None else float(cf.confidence_level)

    @property
    def missing_policy(self) -> str:
        return str(self.plan.missing.policy)

    @property
    def planned_repeats(self) -> int:
        return int(self.plan.attempts.repeats)

    @property
    def primary(self) -> tuple[str, str] | None:
        """(candidate, baseline) of the plan's primary comparison, if any."""
        value = self.plan.primary_comparison()
        return None if value is None else (str(value[0]), str(value[1]))

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, candidates: list[str], case_ids: list[str], cand: list[int] | np.ndarray,
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
        """A context from plain lists (tests and small examples).

        ``clusters`` gives the cluster label of each *case* (parallel to ``case_ids``). The plan
        is ``plan`` when given, else one built from the keyword settings (the decision's
        level, goal, margin and critical limit, declared slices, the primary comparison...).
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
            from evalspec.plan.model import (
                Attempts,
                Columns,
                CriticalFailureLimit,
                Decision,
                Missing,
                Stopping,
            )

            crit = None
            if critical_max_rate is not None:
                crit = CriticalFailureLimit.model_construct(
                    max_rate=critical_max_rate,
                    confidence_level=critical_level if critical_level is not None else 0.95)
            lax: Any = {"goal": goal, "stopping": stopping_rule, "rule": rule, "policy": missing_policy}
            decision = Decision.model_construct(goal=lax["goal"], minimum_improvement=minimum_improvement, margin=margin,
                                                confidence_level=confidence_level, critical_failures=crit,
                                                minimum_units=minimum_units)
            plan = ArrayPlan(
                decision=decision, stopping=Stopping.model_construct(rule=lax["stopping"], looks=looks),
                slices=list(slices or []), attempts=Attempts.model_construct(repeats=planned_repeats, rule=lax["rule"], k=k),
                missing=Missing.model_construct(policy=lax["policy"]),
                data=SimpleNamespace(columns=Columns.model_construct(critical=critical_role)), primary=primary)
        return cls(candidates=list(candidates), baseline=baseline, case_ids=np.asarray(case_ids, dtype=object),
                   case_cluster=case_cluster, cluster_ids=cluster_ids, case_columns=cols, outcomes=out,
                   repeats=reps, plan=plan)

    # -- access -------------------------------------------------------------------------
    def index(self, name: str) -> int:
        """Row of candidate ``name``."""
        return self.candidates.index(name)

    def level(self, params: Any) -> float:
        """The analysis's confidence level, defaulting to the decision's."""
        value = getattr(params, "confidence_level", None)
        return float(self.confidence_level if value is None else value)

    def chosen(self, params: Any) -> list[str]:
        """The candidates an analysis reports (its ``candidates`` parameter or all)."""
        return list(getattr(params, "candidates", None) or self.candidates)

    def values(self, name: str, mask: np.ndarray | None = None) -> np.ndarray:
        """Case outcomes of ``name`` on the cases it has (optionally within ``mask``)."""
        v = self.outcomes.values[self.index(name)]
        keep = ~np.isnan(v)
        if mask is not None:
            keep &= mask
        return v[keep]

    def compared(self, params: Any) -> tuple[str, str]:
        """(candidate, baseline) of a paired comparison's parameters."""
        if getattr(params, "compare", None) is not None:
            return tuple(params.compare)  # type: ignore[return-value]
        others = [c for c in self.candidates if c != self.baseline]
        if self.baseline is None or not others:
            raise ValueError("a paired comparison needs `compare` or a baseline and another candidate")
        return others[0], self.baseline

    def pair(self, first: str, second: str, mask: np.ndarray | None = None) -> Pair:
        """Outcomes of ``first`` and ``second`` on the cases both have (within ``mask``)."""
        x = self.outcomes.values[self.index(first)]
        y = self.outcomes.values[self.index(second)]
        keep = ~np.isnan(x) & ~np.isnan(y)
        if mask is not None:
            keep &= mask
        idx = np.flatnonzero(keep)
        clusters = None if self.case_cluster is None else self.case_cluster[idx]
        return Pair(x=x[idx], y=y[idx], cases=idx, clusters=clusters)

    def cluster_label(self, code: int) -> str:
        """Label of cluster ``code``."""
        assert self.cluster_ids is not None
        return str(self.cluster_ids[code])
