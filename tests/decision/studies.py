"""Crafted studies: contexts from plain lists, records from the analysis kinds, the verdict.

A *study* is the smallest data set that reproduces one finding of issue 8; each test states
the verdict a statistician would predict and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from evalspec.analyses.context import AnalysisContext
from evalspec.testing import context_from_arrays
from evalspec.analyses.contract import Caveat, Offers, PrimaryInterval
from evalspec.decision import DecisionRecord, decide


@dataclass(frozen=True)
class Limit:
    max_rate: float = 0.05
    confidence_level: float = 0.95


@dataclass(frozen=True)
class Dec:
    goal: str = "superiority"
    minimum_improvement: float = 0.0
    margin: float | None = None
    confidence_level: float = 0.95
    critical_failures: Limit | None = None
    minimum_units: int = 2


@dataclass(frozen=True)
class Stop:
    rule: str = "fixed"
    looks: int = 1
    max_units: int | None = None
    decision_date: Any = None


@dataclass(frozen=True)
class Plan:
    decision: Dec = field(default_factory=Dec)
    stopping: Stop = field(default_factory=Stop)


@dataclass(frozen=True)
class Record:
    index: int
    kind: str
    label: str
    offers: Offers
    caveats: list[Caveat]


def paired_ctx(rows: list[tuple[int, int]], *, clusters: list[str] | None = None, **kw: Any) -> AnalysisContext:
    """Two candidates A (first) and B (baseline), one attempt per case: rows of (A, B) outcomes."""
    n = len(rows)
    ids = [f"c{i}" for i in range(n)]
    passed = [float(a) for a, _ in rows] + [float(b) for _, b in rows]
    return context_from_arrays(["A", "B"], ids, [0] * n + [1] * n, list(range(n)) * 2, passed,
                                       clusters=clusters, baseline="B", primary=("A", "B"), **kw)


def repeated_ctx(outcomes: dict[str, list[list[int]]], *, clusters: list[str] | None = None, rule: str = "first",
                 k: int | None = None, columns: dict[str, list[Any]] | None = None, **kw: Any) -> AnalysisContext:
    """Candidates -> per case a list of attempt outcomes (repeats numbered 1, 2, ...)."""
    names = list(outcomes)
    n = len(next(iter(outcomes.values())))
    cand, case, rep, passed = [], [], [], []
    for j, name in enumerate(names):
        for i, attempts in enumerate(outcomes[name]):
            for r, v in enumerate(attempts, start=1):
                cand.append(j)
                case.append(i)
                rep.append(r)
                passed.append(float("nan") if v is None else float(v))
    return context_from_arrays(names, [f"c{i}" for i in range(n)], cand, case, passed, repeat=rep,
                                       clusters=clusters, rule=rule, k=k, case_columns=columns, baseline=names[-1],
                                       primary=(names[0], names[-1]), **kw)


def record(kind: str, ctx: AnalysisContext, index: int = 0, **params: Any) -> Record:
    from evalspec.analyses.registry import get_kind

    k = get_kind(kind)
    p = k.params(kind=kind, **params)
    out = k.compute(ctx, p)
    return Record(index=index, kind=kind, label=kind, offers=out.offers, caveats=list(out.caveats))


def verdict_of(ctx: AnalysisContext, dec: Dec | None = None, *, stop: Stop | None = None, extra: list[Record] = (),
               units: int | None = None, **params: Any) -> DecisionRecord:
    rec = record("paired_difference", ctx, **params)
    assert rec.offers.primary is not None
    plan = Plan(decision=dec or Dec(), stopping=stop or Stop())
    n_units = units if units is not None else (rec.offers.primary.units or 0)
    return decide(plan, [rec, *extra], units=n_units, unit_name=rec.offers.primary.unit_name or "cases")


def interval(low: float, high: float, *, est: float | None = None, informative: bool = True,
             level: float = 0.95, why: str | None = None) -> PrimaryInterval:
    return PrimaryInterval(candidate="A", baseline="B", estimate=(low + high) / 2 if est is None else est, low=low,
                           high=high, method="crafted", confidence_level=level, one_sided_alpha=(1 - level) / 2,
                           informative=informative, why_uninformative=why, units=100, unit_name="cases")


def decide_on(p: PrimaryInterval | None, dec: Dec | None = None, *, stop: Stop | None = None,
              extra: list[Record] = (), units: int = 100) -> DecisionRecord:
    recs = [Record(index=0, kind="paired_difference", label="p", offers=Offers(primary=p), caveats=[])]
    return decide(Plan(decision=dec or Dec(), stopping=stop or Stop()), [*recs, *extra], units=units,
                  unit_name="cases")


def ns(**kw: Any) -> SimpleNamespace:
    return SimpleNamespace(**kw)
