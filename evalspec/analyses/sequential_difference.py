"""``sequential_difference``: an anytime-valid confidence sequence for the primary paired difference.

For plans with ``stopping.rule: sequential``. The independent units (clusters when the plan
declares them, else cases) are taken in the order they were run (earliest timestamp of their
cases, when the results carry timestamps), each contributing its paired difference in
``[-1, 1]`` (a cluster: the mean over its cases of candidate minus baseline). The betting
confidence sequence of Waudby-Smith & Ramdas ("Estimating means of bounded random variables
by betting", JRSS-B 2024; see :mod:`evalspec.stats.sequential`) holds at every look at once,
so the interim looks the plan declares — or more — keep the stated level, unlike a fixed
interval recomputed at each look.

The analysis offers the decision

* ``offers.primary``: the sequence at the current look, as the primary interval (method
  "anytime-valid confidence sequence ..."); set ``primary: false`` to only report it;
* ``offers.sequential``: ``continue``, ``stop_decided`` (the goal is established: superiority's
  lower bound at or above the minimum improvement, non-inferiority's above minus the margin,
  equivalence's interval inside the margins) or ``stop_futility`` (the goal is ruled out, or
  the last planned look / ``max_units`` is reached without establishing it).

Looks are scheduled at ``ceil(j * max_units / looks)`` units, ``j = 1..looks`` (without
``max_units`` only the current look is known). The report draws the sequence across looks.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import (
    AnalysisKind,
    Caveat,
    ColumnNeed,
    Offers,
    Outcome,
    PrimaryInterval,
    ResultModel,
    SequentialStatus,
)

__all__ = ["KIND", "SequentialDifferenceParams", "SequentialDifferenceResult", "compute"]

Action = Literal["continue", "stop_decided", "stop_futility"]


class SequentialDifferenceParams(AnalysisParams):
    """Anytime-valid confidence sequence of the paired difference (for ``stopping.rule: sequential``)."""

    kind: Literal["sequential_difference"]
    compare: tuple[str, str] | None = Field(
        None, description="[candidate, baseline]; default: the first non-baseline candidate against the baseline."
    )
    confidence_level: ConfidenceLevel | None = Field(None, description="Defaults to decision.confidence_level.")
    primary: bool = Field(
        True, description="Offer the sequence as the primary interval the decision reads (set false to only report it)."
    )
    grid: int = Field(2000, ge=100, le=100_000, description="Grid points on [-1, 1] (resolution of the bounds).")


class SequencePoint(ResultModel):
    """The confidence sequence after ``units`` units."""

    units: int
    estimate: float
    low: float
    high: float


class SequenceLook(SequencePoint):
    """A planned look that the data has reached (or the current one)."""

    look: int
    action: Action
    planned: bool = Field(description="A look of the plan's schedule (False: the current look between two planned).")


class SequentialDifferenceResult(ResultModel):
    """The confidence sequence of the paired difference, at each look and along the way."""

    candidate: str
    baseline: str
    unit: str = Field(description="'cases' or 'clusters (<column>)'.")
    units: int = Field(description="Independent units with both candidates so far.")
    order: str = Field(description="How units were ordered: 'timestamp' or 'results order'.")
    goal: str
    target: float | None = Field(description="Minimum improvement (superiority) or margin the actions test against.")
    confidence_level: float
    method: str
    estimate: float
    low: float
    high: float
    look: int = Field(description="The current look (1-based).")
    planned_looks: int
    max_units: int | None
    action: Action
    message: str
    looks: list[SequenceLook]
    path: list[SequencePoint] = Field(description="The sequence at up to 200 points, for the plot.")


def columns(params: Any, plan: Any) -> list[ColumnNeed]:
    """The timestamp role, to order units by when they were run."""
    ts = getattr(getattr(getattr(plan, "data", None), "columns", None), "timestamp", None)
    return [ColumnNeed(column=ts, key="data.columns.timestamp", level="row")] if ts else []


# -- helpers that read the context defensively ---------------------------------------------


def _stopping(ctx: Any) -> tuple[str, int, int | None]:
    stop = getattr(ctx, "stopping", None)
    if stop is None:
        plan = getattr(ctx, "plan", None)
        stop = getattr(plan, "stopping", None)
    if stop is None:
        return "sequential", 1, None
    return str(getattr(stop, "rule", "sequential")), int(getattr(stop, "looks", 1) or 1), getattr(stop, "max_units", None)


def _target(ctx: Any, goal: str) -> float | None:
    if goal == "superiority":
        v = getattr(ctx, "minimum_improvement", None)
        if v is None:
            dec = getattr(ctx, "decision", None) or getattr(getattr(ctx, "plan", None), "decision", None)
            v = getattr(dec, "minimum_improvement", 0.0) if dec is not None else 0.0
        return float(v or 0.0)
    m = getattr(ctx, "margin", None)
    return None if m is None else float(m)


def _timestamp_column(ctx: Any) -> Any:
    """Per case, the earliest timestamp of its rows (any candidate), or None without timestamps."""
    plan = getattr(ctx, "plan", None)
    name = getattr(getattr(getattr(plan, "data", None), "columns", None), "timestamp", None)
    if not name:
        return None
    reps = getattr(ctx, "repeats", None)
    rows = (getattr(reps, "columns", None) or {}).get(name) if reps is not None else None
    if rows is not None:
        first: dict[int, tuple[int, str]] = {}
        for case, value in zip(reps.case.tolist(), list(rows), strict=True):
            key = _sort_key(value)
            if key[0] == 0 and (case not in first or key < first[case]):
                first[case] = key
        n = len(getattr(ctx, "case_ids", [])) or (max(first) + 1 if first else 0)
        return [first[c][1] if c in first else None for c in range(n)]
    cols = getattr(ctx, "case_columns", {}) or {}
    return cols.get(name)


def _sort_key(value: Any) -> tuple[int, str]:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return (1, "")
    return (0, value.isoformat() if hasattr(value, "isoformat") else str(value))


def decide_action(goal: str, target: float | None, low: float, high: float, final: bool) -> tuple[Action, str]:
    """The monitoring action for an anytime-valid interval ``[low, high]`` (pure; documented above)."""
    pts = lambda x: f"{x * 100:+.1f} points"  # noqa: E731
    if goal == "superiority":
        d = target or 0.0
        if low >= d and (d > 0 or low > 0):
            return "stop_decided", (f"The whole sequence lies at or above the minimum improvement ({pts(d)}): the "
                                    "gain is established; stop.")
        if high <= 0 or (d > 0 and high < d):
            return "stop_futility", (f"The sequence rules out a gain of {pts(d) if d > 0 else 'more than 0'}: the "
                                     "improvement the plan looks for cannot be shown; stop.")
    elif goal == "non_inferiority" and target is not None:
        if low > -target:
            return "stop_decided", f"The sequence's lower bound is above minus the margin ({pts(-target)}): non-inferior; stop."
        if high <= -target:
            return "stop_futility", f"The sequence lies below minus the margin ({pts(-target)}): non-inferiority is ruled out; stop."
    elif goal == "equivalence" and target is not None:
        if -target < low and high < target:
            return "stop_decided", f"The sequence lies inside the equivalence margins (±{target * 100:.1f} points); stop."
        if low >= target or high <= -target:
            return "stop_futility", "The sequence lies outside the equivalence margin: equivalence is ruled out; stop."
    if final:
        return "stop_futility", ("The last planned look is reached without establishing the goal: collection stops "
                                 "and the verdict is read from the interval as it stands.")
    return "continue", "The sequence does not yet settle the question: continue to the next planned look."


def compute(ctx: Any, params: SequentialDifferenceParams) -> Outcome:
    import numpy as np

    from evalspec.analyses.context import AnalysisRefused
    from evalspec.stats.sequential import METHOD, betting_confidence_sequence

    first, second = ctx.compared(params)
    pair = ctx.pair(first, second)
    level = ctx.level(params)
    goal = str(getattr(ctx, "goal", "superiority"))
    target = _target(ctx, goal)
    rule, planned_looks, max_units = _stopping(ctx)
    if pair.x.size == 0:
        raise AnalysisRefused(f"no case has outcomes of both {first} and {second}")
    diff = pair.x - pair.y
    stamps = _timestamp_column(ctx)
    caveats: list[Caveat] = []
    case_key = [(_sort_key(None) if stamps is None else _sort_key(stamps[c]), int(c)) for c in pair.cases]
    order_name = "timestamp" if stamps is not None else "results order"
    if stamps is None:
        caveats.append(Caveat(code="no_timestamps", severity="note", message=(
            "The results carry no timestamps, so units were taken in the order of the results; the sequence is "
            "valid for that order.")))
    if pair.clusters is not None:
        labels = np.unique(pair.clusters)
        first_key: dict[int, Any] = {}
        sums: dict[int, float] = {}
        counts: dict[int, int] = {}
        for key, g, dv in zip(case_key, pair.clusters.tolist(), diff.tolist(), strict=True):
            first_key[g] = min(first_key.get(g, key), key)
            sums[g] = sums.get(g, 0.0) + dv
            counts[g] = counts.get(g, 0) + 1
        ordered = sorted(labels.tolist(), key=lambda g: first_key[g])
        values = np.array([sums[g] / counts[g] for g in ordered])
        column = None
        plan = getattr(ctx, "plan", None)
        column = getattr(getattr(plan, "units", None), "cluster", None)
        unit = f"clusters ({column})" if column else "clusters"
        method = f"{METHOD}, on per-cluster mean differences"
        estimand = "cluster_weighted_difference" if len(set(counts.values())) > 1 else "case_weighted_difference"
        if len(set(counts.values())) > 1:
            caveats.append(Caveat(code="cluster_weighted_estimand", severity="note", message=(
                "Each cluster counts equally: the sequence bounds the average over clusters of their mean "
                "difference, which differs from the case-weighted difference when clusters differ in size.")))
    else:
        idx = sorted(range(diff.size), key=lambda i: case_key[i])
        values = diff[idx].astype(float)
        unit = "cases"
        method = METHOD
        estimand = "case_weighted_difference"
    n = int(values.size)
    if rule != "sequential":
        caveats.append(Caveat(code="fixed_design", severity="note", message=(
            "The plan is a fixed design with one look; the confidence sequence is valid at any look all the same, "
            "and wider than the fixed interval.")))

    schedule: list[int] = []
    if not max_units and planned_looks > 1:
        caveats.append(Caveat(code="no_look_schedule", severity="note", message=(
            "The plan sets no max_units, so its looks cannot be placed; the sequence is reported at the units seen "
            "(it is valid at any look all the same).")))
    if max_units:
        schedule = sorted({min(max_units, math.ceil(j * max_units / planned_looks)) for j in range(1, planned_looks + 1)})
    reached = [t for t in schedule if t <= n]
    times = sorted(set(reached) | {n} | set(np.unique(np.linspace(1, n, num=min(n, 200)).round().astype(int)).tolist()))
    cs = betting_confidence_sequence(values, lower=-1.0, upper=1.0, confidence_level=level, times=times,
                                     grid=params.grid)
    at = {int(t): (float(e), float(lo), float(hi)) for t, e, lo, hi in zip(cs.times, cs.estimate, cs.low, cs.high,
                                                                           strict=True)}
    current_look = len(reached) if reached and reached[-1] == n else len(reached) + 1
    final = (max_units is not None and n >= max_units) or current_look >= planned_looks
    looks = []
    for j, t in enumerate(reached, start=1):
        e, lo, hi = at[t]
        is_final = (max_units is not None and t >= max_units) or j >= planned_looks
        act, _ = decide_action(goal, target, lo, hi, is_final)
        looks.append(SequenceLook(look=j, units=t, estimate=e, low=lo, high=hi, action=act, planned=True))
    e, lo, hi = at[n]
    action, message = decide_action(goal, target, lo, hi, final)
    if not reached or reached[-1] != n:
        looks.append(SequenceLook(look=current_look, units=n, estimate=e, low=lo, high=hi, action=action,
                                  planned=False))
    if max_units is not None and n > max_units:
        caveats.append(Caveat(code="over_max_units", severity="verdict", message=(
            f"{n} {unit} were analysed, more than the plan's max_units of {max_units}.")))
    path = [SequencePoint(units=int(t), estimate=at[int(t)][0], low=at[int(t)][1], high=at[int(t)][2])
            for t in times]
    result = SequentialDifferenceResult(
        candidate=first, baseline=second, unit=unit, units=n, order=order_name, goal=goal, target=target,
        confidence_level=level, method=method, estimate=e, low=lo, high=hi, look=current_look,
        planned_looks=planned_looks, max_units=max_units, action=action, message=message, looks=looks, path=path)
    primary = None
    if params.primary:
        informative = n >= 2 and hi - lo < 2.0
        primary = PrimaryInterval(
            candidate=first, baseline=second, estimate=e, low=lo, high=hi, method=method, confidence_level=level,
            one_sided_alpha=(1 - level) / 2, informative=informative,
            why_uninformative=None if informative else "too few units for the confidence sequence to exclude anything",
            units=n, unit_name=unit, estimand=estimand)
    offers = Offers(primary=primary, sequential=SequentialStatus(
        action=action, look=current_look, planned_looks=planned_looks, message=message))
    return Outcome(result=result, caveats=caveats, seeds=[], offers=offers)


KIND = AnalysisKind(
    name="sequential_difference",
    params=SequentialDifferenceParams,
    result=SequentialDifferenceResult,
    compute=compute,
    title="Sequential monitoring of the paired difference",
    columns=columns,
    order=25,
)
