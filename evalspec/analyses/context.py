"""What an analysis receives: the case-level table after the attempt rule, and the repeats.

``evalspec run`` builds one :class:`AnalysisContext` per run and passes it, with the
analysis's validated parameters, to each kind's ``compute``. The context holds arrays and
the validated plan (no files, no I/O), so analyses are testable on small hand-made tables
built with :func:`evalspec.testing.context_from_arrays`. Kinds see it through the protocol
:class:`evalspec.analyses.contract.Context` and never import this module (it sits above the
data layer; see docs/ARCHITECTURE.md, "Layers").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalspec.analyses.contract import CaseCounts, Pair, Repeats, default_comparison
from evalspec.attempts import CaseOutcomes

if TYPE_CHECKING:  # pragma: no cover
    from evalspec.analyses.contract import Context

__all__ = ["AnalysisContext", "NoAttemptRows"]


class NoAttemptRows:
    """``ctx.repeats`` of a context built from a pre-aggregated case table: there are no attempt rows.

    The plan rule refuses, at ``evalspec validate``, every kind that reads them
    (``AnalysisKind.attempt_rows``); should one reach them anyway, reading any field is an
    :class:`~evalspec.analyses.contract.AnalysisRefused` with words, never a crash.
    """

    def __getattr__(self, name: str) -> Any:
        from evalspec.analyses.contract import AnalysisRefused

        raise AnalysisRefused("this analysis reads each attempt's row, and a case table (data.format: case_table) "
                              "holds counts per candidate and case only; read the attempt rows instead")


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
    plan : Plan (or evalspec.testing.ArrayPlan)
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
    #: Attempt counts given directly (a pre-aggregated case table); None: counted from ``repeats``.
    counts: CaseCounts | None = None

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
        pair = default_comparison(self.candidates, self.baseline)
        if pair is None:
            raise ValueError("a paired comparison needs `compare` or a baseline and another candidate")
        return pair

    def pair(self, first: str, second: str, mask: np.ndarray | None = None) -> Pair:
        """Outcomes of ``first`` and ``second`` on the cases both have (within ``mask``)."""
        i, j = self.index(first), self.index(second)
        x, y = self.outcomes.values[i], self.outcomes.values[j]
        if self._complete[i] and self._complete[j]:  # (neither lacks an outcome: only the mask leaves cases out)
            keep = mask
        else:
            keep = ~np.isnan(x) & ~np.isnan(y)
            if mask is not None:
                keep &= mask
        if keep is None:  # every case: the outcomes themselves, read only (no copy of every case)
            idx = np.arange(x.shape[0])
            x, y = _read_only(x), _read_only(y)
            clusters = None if self.case_cluster is None else _read_only(self.case_cluster)
        else:
            idx = np.flatnonzero(keep)
            x, y = x[idx], y[idx]
            clusters = None if self.case_cluster is None else self.case_cluster[idx]
        if clusters is not None:  # (counted once for all the kernels that read the pair's clusters)
            from evalspec.stats import cluster_labels

            clusters = cluster_labels(clusters)
        return Pair(x=x, y=y, cases=idx, clusters=clusters)

    def has_every_outcome(self, name: str) -> bool:
        """Whether candidate ``name`` has an outcome on every case (told once for every candidate)."""
        return bool(self._complete[self.index(name)])

    @cached_property
    def _complete(self) -> np.ndarray:
        values = self.outcomes.values
        return ~np.isnan(values).any(axis=1) if values.ndim == 2 else np.zeros(len(self.candidates), dtype=bool)

    def cluster_label(self, code: int) -> str:
        """Label of cluster ``code``."""
        assert self.cluster_ids is not None
        return str(self.cluster_ids[code])

    def attempts(self) -> Repeats:
        """The attempt rows with the plan's missing-outcome policy applied
        (:func:`evalspec.attempts.apply_missing_policy`): under ``exclude`` the rows without an
        outcome are left out, under ``count_as_fail`` they are there as failures (0.0). A kind
        that reads attempts uses this, never ``repeats.passed`` with its own policy."""
        from evalspec.attempts import apply_missing_policy

        r = self.repeats
        keep, passed = apply_missing_policy(r.passed, self.missing_policy)
        if keep.all():
            return Repeats(cand=r.cand, case=r.case, repeat=r.repeat, passed=passed, score=r.score, columns=r.columns)
        return Repeats(cand=r.cand[keep], case=r.case[keep], repeat=r.repeat[keep], passed=passed[keep],
                       score=r.score[keep], columns={k: v[keep] for k, v in r.columns.items()})

    def case_counts(self) -> CaseCounts:
        """Per candidate × case: attempts that count under the plan's missing-outcome policy, passes
        among them and missing outcomes (:class:`~evalspec.analyses.contract.CaseCounts`), from
        the case table when the run read one, else counted from :meth:`attempts`."""
        if self.counts is not None:
            return self.counts
        from evalspec.attempts import apply_missing_policy

        shape = (len(self.candidates), len(self.case_ids))
        size = shape[0] * shape[1]
        r = self.repeats
        keep, passed = apply_missing_policy(r.passed, self.missing_policy)  # (as :meth:`attempts`, without its copies)
        flat = r.cand.astype(np.int64)  # each row's cell, built in place: one int64 array a row
        flat *= shape[1]
        np.add(flat, r.case, out=flat, casting="unsafe")  # (as ``r.case.astype(np.int64)``, without the copy)
        nan = np.isnan(r.passed)
        missing = np.bincount(flat[nan], minlength=size).reshape(shape)
        binary = bool(np.all((r.passed == 0.0) | (r.passed == 1.0) | nan))
        del nan
        every = bool(keep.all())
        trials = np.bincount(flat if every else flat[keep], minlength=size).reshape(shape)
        passes = np.bincount(flat[(passed >= 1.0) if every else keep & (passed >= 1.0)], minlength=size).reshape(shape)
        return CaseCounts(trials=trials, passes=passes, missing=missing, binary=binary)

    def codes(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, uniques)`` of a column in first-seen order, code -1 where missing
        (:func:`evalspec.results.table.factorize`: each distinct value is then read once)."""
        from evalspec.results.table import factorize

        return factorize(column)


if TYPE_CHECKING:  # pragma: no cover - mypy checks that the context implements the protocol
    def _implements(ctx: AnalysisContext) -> Context:
        return ctx


def _read_only(values: np.ndarray) -> np.ndarray:
    """A read-only view of ``values`` (what a kernel is given is never written into)."""
    out = values.view()
    out.flags.writeable = False
    return out
