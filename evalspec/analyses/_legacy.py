"""Transition adapter: runs a kind whose module still returns a plain dict.

Until a kind module defines ``KIND`` (see :mod:`evalspec.analyses.contract`), its
dict-returning implementation is wrapped here so that the pipeline runs every kind the
same way. What the decision needs (the primary interval, the critical-failure statuses)
is read from the dict into :class:`~evalspec.analyses.contract.Offers`. This module
disappears when the last kind is ported.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from evalspec.analyses.contract import (
    AnalysisKind,
    ColumnNeed,
    CriticalStatus,
    Offers,
    Outcome,
    PrimaryInterval,
    ResultModel,
    SeedUse,
)

__all__ = ["LegacyResult", "legacy_kind"]

_TITLES = {"paired_difference": "Paired comparison", "critical_failures": "Critical failures", "slices": "Slices"}


class LegacyResult(ResultModel):
    """A result not yet typed (a kind not ported to the contract): any JSON object."""

    model_config = ConfigDict(extra="allow")


def _offers(kind: str, params: Any, result: dict[str, Any]) -> tuple[Offers, list[SeedUse]]:
    seeds: list[SeedUse] = []
    if kind == "paired_difference":
        if result.get("bootstrap") is not None:
            seeds.append(SeedUse(purpose="cluster bootstrap resamples", seed=int(params.seed)))
        if getattr(params, "primary", False):
            level = float(result["confidence_level"])
            return Offers(primary=PrimaryInterval(
                candidate=result["candidate"], baseline=result["baseline"], estimate=float(result["estimate"]),
                low=float(result["low"]), high=float(result["high"]), method=str(result["method"]),
                confidence_level=level, one_sided_alpha=(1 - level) / 2)), seeds
    if kind == "critical_failures":
        statuses = [CriticalStatus(candidate=name, critical_cases=int(e["critical_cases"]), failures=int(e["failures"]),
                                   upper_bound=e.get("upper_bound"), confidence_level=float(e["confidence_level"]),
                                   method=str(e.get("method")), max_rate=e.get("max_rate"),
                                   within_limit=e.get("within_limit"))
                    for name, e in (result.get("candidates") or {}).items()]
        return Offers(critical=statuses), seeds
    return Offers(), seeds


def _columns(kind: str, params: Any, plan: Any) -> list[ColumnNeed]:
    if kind == "critical_failures":
        role = plan.data.columns.critical
        return [ColumnNeed(column=role if (params.flag == "critical" and role is not None) else params.flag,
                           key="flag")]
    if kind == "slices":
        declared = {s.name: (j, s) for j, s in enumerate(plan.slices)}
        out = [ColumnNeed(column=declared[n][1].column, key=f"slices[{declared[n][0]}].column")
               for n in (params.names if params.names is not None else list(declared)) if n in declared]
        return out + [ColumnNeed(column=c, key=f"exploratory[{j}]") for j, c in enumerate(params.exploratory)]
    return []


def legacy_kind(name: str, params: type[Any], fn: Any) -> AnalysisKind:
    """An :class:`AnalysisKind` around a dict-returning implementation."""

    def compute(ctx: Any, p: Any) -> Outcome:
        result = fn(ctx, p)
        offers, seeds = _offers(name, p, result)
        return Outcome(result=LegacyResult(**result), seeds=seeds, offers=offers)

    def columns(p: Any, plan: Any) -> list[ColumnNeed]:
        return _columns(name, p, plan)

    return AnalysisKind(name=name, params=params, result=LegacyResult, compute=compute,
                        title=_TITLES.get(name, name.replace("_", " ").capitalize()), columns=columns)
