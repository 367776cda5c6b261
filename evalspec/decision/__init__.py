"""The decision: preregistered thresholds applied to what the analyses offer.

"Repeat AI evaluations and report uncertainty honestly" ("Make the decision threshold
explicit"): an interval spanning a material gain and a material loss is inconclusive; an
interval that excludes zero can still include an improvement too small to act on; failing
to establish a difference does not prove equivalence; a critical-failure limit blocks
whatever the average says; few independent units cannot carry a verdict.

:func:`decide` is a pure function of the plan, the analysis records and the case outcomes
the runtime hands over (:class:`~evalspec.decision.guard.CaseEvidence`). It reads only each
record's ``offers`` (:class:`~evalspec.analyses.contract.Offers`: a primary interval,
critical-failure statuses, confirmatory findings, a sequential status) and ``caveats``;
never the inside of a result. The rules, in the order they apply (``docs/decision.md``
states them in words):

1. ``too_few_units`` — independent units (clusters if declared, else cases) below
   ``decision.minimum_units``.
2. ``blocked`` — with a ``decision.critical_failures`` limit, the candidate to adopt (the
   primary comparison's candidate; every candidate when there is none) has no critical
   status, no critical case, or an upper bound that is not strictly below ``max_rate``.
   Only the adopting candidate blocks; another candidate's exceedance (the baseline's) is
   a caveat beside the verdict.
3. ``no_comparison`` — no analysis offers a primary interval.
4. ``inconclusive`` — the primary interval is marked uninformative (zero width, every
   cluster's net contribution zero, too few discordant pairs or clusters with
   disagreements...): it cannot decide anything, whatever its bounds.
5. by goal (the verdict table, :mod:`evalspec.decision.table`), with ``[L, H]`` the primary interval at ``decision.confidence_level`` (each
   bound a one-sided bound at ``1 − α``, ``α = (1 − level)/2``), ``d`` the minimum
   improvement and ``m`` the margin. Every comparison is **strict**: a bound touching a
   threshold does not clear it.

   superiority
       ``L > d`` worth_acting_on; ``0 < L ≤ d`` too_small (worded "shown to be below the minimum", with no call for
       more data, when also ``H < d``); ``H < 0`` regression;
       ``L < −d`` and ``H > d`` inconclusive (material gain and material loss both
       possible); ``H < d`` no_material_gain (not equivalence!); otherwise inconclusive.
   non_inferiority
       ``L > −m`` non_inferior; else ``H < 0`` regression; else not_non_inferior.
   equivalence
       ``−m < L`` and ``H < m`` equivalent; else not_equivalent. This is the two
       one-sided tests at the same α as the other goals, decided by the same bounds, so
       ``equivalent`` implies ``non_inferior`` at the same margin and the test and the
       interval cannot disagree.

6. the estimand guard (:mod:`evalspec.decision.guard`): given the case outcomes
   (``evidence``), the decision computes the case-weighted difference the thresholds are
   about; an interval that does not contain it, or whose estimate points the other way, or a
   favourable verdict that changes with the candidate's missing outcomes counted as
   failures, gives ``inconclusive`` with the reason.

Confirmatory findings with a material loss (a declared slice whose multiplicity-adjusted
interval lies wholly below −margin) are named in the reasons and beside the verdict; they
do not change the code of the verdict, which answers the plan's question about the whole
population. Every caveat of severity ``verdict`` from any analysis is carried into
:attr:`DecisionRecord.caveats` (page 1 of the report), with the decision's own: more than
one planned look without a sequential method, a non-adopting candidate over the critical
limit, a primary interval at another level than the decision's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalspec.analyses.contract import Caveat
from evalspec.decision.guard import LEDGER_CAVEATS, Alternative, CaseEvidence, looks_caveat
from evalspec.decision.record import CriticalThreshold, DecisionRecord, EstimandCheck, MissingSensitivity, Sensitivity, Thresholds
from evalspec.decision.rules import Decider
from evalspec.decision.verdicts import CLOSE, DECISIVE, FAVOURABLE, VERDICTS, VerdictCode, verdict_label

__all__ = [
    "CLOSE",
    "DECISIVE",
    "FAVOURABLE",
    "LEDGER_CAVEATS",
    "VERDICTS",
    "Alternative",
    "CaseEvidence",
    "CriticalThreshold",
    "DecisionRecord",
    "EstimandCheck",
    "MissingSensitivity",
    "Sensitivity",
    "Thresholds",
    "VerdictCode",
    "decide",
    "independent_units",
    "looks_caveat",
    "verdict_label",
]

def independent_units(n_cases: int, n_clusters: int | None) -> tuple[int, str]:
    """(count, name) of the independent units: clusters when declared, else cases."""
    return (n_clusters, "clusters") if n_clusters is not None else (n_cases, "cases")


def decide(plan: Any, records: Sequence[Any], *, units: int, unit_name: str = "cases",
           missing: dict[str, Any] | None = None, evidence: CaseEvidence | None = None,
           caveats: Sequence[Caveat] = ()) -> DecisionRecord:
    """The verdict, its reasons, and the caveats that bear on it.

    Parameters
    ----------
    plan : evalspec.plan.model.Plan
        Reads ``plan.decision`` (goal, thresholds, level, critical limit, minimum units) and
        ``plan.stopping`` (planned looks).
    records : sequence
        The analysis records, each with ``index``, ``kind``, ``label``, ``offers``
        (:class:`~evalspec.analyses.contract.Offers`) and ``caveats``
        (:class:`~evalspec.analyses.contract.Caveat` list). Only those two are read.
    units, unit_name : int, str
        Independent units of the primary comparison (clusters if declared, else cases).
    missing : dict, optional
        Missing outcomes per candidate, for the escalation steps.
    evidence : CaseEvidence, optional
        The case outcomes, for the estimand guard (``evalspec run`` always gives them; without
        them the guard is skipped and ``DecisionRecord.estimand`` is None).
    caveats : sequence of Caveat, optional
        Verdict caveats the runtime found (e.g. a look beyond the plan's number of looks).
    """
    return Decider(plan, list(records or []), units, unit_name, missing, evidence, caveats).run()
