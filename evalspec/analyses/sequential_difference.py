"""``sequential_difference``: an anytime-valid confidence sequence for the primary paired difference.

For plans with ``stopping.rule: sequential``. The independent units (clusters when the plan
declares them, else cases) are taken in the plan's **preregistered random order**
(``stopping.order``, written by ``evalspec order``; its SHA-256 is checked), and at each look
they must be the first units of that order (a gap is a verdict caveat naming it). Without a
preregistered order they are taken by timestamp (or results order), with a verdict caveat: a
harness that runs cases by category breaks the sequence's assumption that each new unit is a
random draw. Each unit contributes its paired difference in ``[-1, 1]``; a cluster, the mean
over its cases, **weighted by its size** over a bound on every cluster's size (the largest
cluster of the preregistered order), so the sequence bounds the case-weighted difference the
plan's thresholds are about, not the average over clusters. The betting
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
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import (
    AnalysisKind,
    Caveat,
    ColumnNeed,
    Issue,
    Offers,
    Outcome,
    PrimaryInterval,
    ResultModel,
    SequentialStatus,
    entries,
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
    order: str = Field(description="How units were ordered: 'preregistered order', 'timestamp' or 'results order'.")
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
    reps = getattr(ctx, "repeats", None)  # a context without attempt rows (a test's) has case columns only
    rows = (reps.columns or {}).get(name) if reps is not None else None
    if reps is not None and rows is not None:
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


@dataclass
class _Units:
    """The units in the order the sequence takes them: values, weights, how they were ordered."""

    values: Any
    weights: Any
    unit: str
    order_name: str
    bound: int
    caveats: list[Caveat]


def _load_order(ctx: Any) -> Any:
    """The plan's preregistered case order (None when the plan has none)."""
    import hashlib

    from evalspec.analyses.contract import AnalysisRefused
    from evalspec.unit_order import parse_order

    ref = getattr(getattr(getattr(ctx, "plan", None), "stopping", None), "order", None)
    base = getattr(ctx, "plan_dir", None)
    if ref is None or base is None:
        return None
    from evalspec._files import read_text
    from evalspec.errors import InputError

    path = Path(base) / ref.file
    try:
        text = read_text(path, what="case order", limit=64 * 1024**2) or ""
    except InputError as exc:
        raise AnalysisRefused(f"the preregistered case order {ref.file} cannot be read: "
                              f"{str(exc).splitlines()[0]}") from None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != ref.sha256:
        raise AnalysisRefused(f"the case order {ref.file} is not the one the plan recorded (SHA-256 {digest[:12]}..., "
                              f"the plan says {ref.sha256[:12]}...): the order was changed after it was preregistered")
    order, problem = parse_order(text)
    if order is None:
        raise AnalysisRefused(f"the case order {ref.file}: {problem}")
    return order


def _ordered_units(ctx: Any, pair: Any, diff: Any, params: Any) -> _Units:
    """Units (clusters when declared, else cases) in the preregistered order, else timestamp / results order.

    With clusters each unit is its cluster's mean difference, weighted by its size over a bound
    on every cluster's size (the largest cluster of the preregistered order, else of the data):
    the sequence then bounds the case-weighted difference the thresholds are about.
    """
    import numpy as np

    caveats: list[Caveat] = []
    order = _load_order(ctx)
    stamps = _timestamp_column(ctx)
    case_ids = getattr(ctx, "case_ids", None)
    case_ids = np.arange(int(pair.cases.max()) + 1).astype(str).astype(object) if case_ids is None or not len(
        case_ids) else np.asarray(case_ids, dtype=object)
    case_key = [(_sort_key(None) if stamps is None else _sort_key(stamps[c]), int(c)) for c in pair.cases]
    clustered = pair.clusters is not None
    if clustered:
        label = getattr(ctx, "cluster_label", None)
        labels = [label(int(g)) if callable(label) and getattr(ctx, "cluster_ids", None) is not None else str(g)
                  for g in pair.clusters.tolist()]
        first_key: dict[str, Any] = {}
        sums: dict[str, float] = {}
        counts: dict[str, int] = {}
        for key, g, dv in zip(case_key, labels, diff.tolist(), strict=True):
            first_key[g] = min(first_key.get(g, key), key)
            sums[g] = sums.get(g, 0.0) + dv
            counts[g] = counts.get(g, 0) + 1
        keys = list(first_key)
        fallback = first_key
    else:
        keys = [str(case_ids[c]) for c in pair.cases.tolist()]
        fallback = dict(zip(keys, case_key, strict=True))
    if order is not None:
        pos = order.unit_positions() if clustered == order.clustered else {}
        if clustered != order.clustered:
            caveats.append(Caveat(code="order_units_differ", severity="verdict", message=(
                "The preregistered order lists " + ("clusters" if order.clustered else "cases") + " but the plan's "
                "units are " + ("clusters" if clustered else "cases") + ": the order cannot be checked.")))
        far = len(pos) + 1
        ordered = sorted(keys, key=lambda k: (pos.get(k, far), fallback[k]))
        order_name = "preregistered order"
        caveats += _prefix_caveats(ordered, pos, clustered)
    else:
        ordered = sorted(keys, key=lambda k: fallback[k])
        order_name = "timestamp" if stamps is not None else "results order"
        caveats.append(Caveat(code="order_not_preregistered", severity="verdict" if params.primary else "note",
                              message=(
            f"The units were taken in {order_name}, not in a preregistered random order: the confidence sequence "
            "assumes each new unit is a random draw, and a harness that runs the cases by category or difficulty "
            "can make it exclude the truth at every look. `evalspec order` draws the order to run them in.")))
    column = getattr(getattr(getattr(ctx, "plan", None), "units", None), "cluster", None)
    if not clustered:
        idx = {k: i for i, k in enumerate(keys)}
        return _Units(np.array([float(diff[idx[k]]) for k in ordered]), None, "cases", order_name, 1, caveats)
    sizes = np.array([counts[g] for g in ordered], dtype=np.float64)
    values = np.array([sums[g] / counts[g] for g in ordered])
    bound = int(max(order.largest_cluster() if order is not None and order.clustered else 0, sizes.max()))
    weights = None if sizes.min() == sizes.max() == bound else sizes / bound
    if weights is not None:
        caveats.append(Caveat(code="size_weighted", severity="note", message=(
            f"Clusters differ in size ({int(sizes.min())} to {int(sizes.max())} cases, {sizes.mean():.1f} on average; "
            f"bound {bound}): each cluster's difference counts by its size, so the sequence bounds the pass-rate "
            "difference with each case counting once, but it is wide when a few clusters are much larger than the "
            f"rest (on average a cluster carries {sizes.mean() / bound:.0%} of the largest's weight).")))
    unit = f"clusters ({column})" if column else "clusters"
    return _Units(values, weights, unit, order_name, bound, caveats)


def _prefix_caveats(ordered: list[str], pos: dict[str, int], clustered: bool) -> list[Caveat]:
    """A verdict caveat when the analysed units are not the first units of the preregistered order."""
    what = "clusters" if clustered else "cases"
    out: list[Caveat] = []
    outside = [k for k in ordered if k not in pos]
    inside = sorted(pos[k] for k in ordered if k in pos)
    skipped = sorted(set(range(inside[-1] + 1)) - set(inside)) if inside else []
    if skipped:
        names = {v: k for k, v in pos.items()}
        shown = ", ".join(f"{names[i]} (position {i + 1})" for i in skipped[:5])
        out.append(Caveat(code="order_gap", severity="verdict", message=(
            f"The analysed {what} are not the first {len(inside)} of the preregistered order: {len(skipped)} earlier "
            f"{what} have no outcomes yet ({shown}{', ...' if len(skipped) > 5 else ''}). The sequence's guarantee "
            "holds for a prefix of the order; run the skipped ones before reading it.")))
    if outside:
        shown = ", ".join(outside[:5])
        out.append(Caveat(code="order_unlisted", severity="verdict", message=(
            f"{len(outside)} analysed {what} are not in the preregistered order ({shown}"
            f"{', ...' if len(outside) > 5 else ''}); they were taken after the listed ones.")))
    return out


def decide_action(goal: str, target: float | None, low: float, high: float, final: bool) -> tuple[Action, str]:
    """The monitoring action for an anytime-valid interval ``[low, high]`` (pure; documented above)."""
    pts = lambda x: f"{x * 100:+.1f} points"  # noqa: E731
    if goal == "superiority":
        d = target or 0.0
        if low > d:  # strict, as the verdict table: a bound touching the minimum does not clear it
            return "stop_decided", (f"The whole sequence lies above the minimum improvement ({pts(d)}): the "
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

    from evalspec.analyses.contract import AnalysisRefused
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
    units_in = _ordered_units(ctx, pair, diff, params)
    values, weights, caveats, order_name = units_in.values, units_in.weights, units_in.caveats, units_in.order_name
    unit, method, estimand = units_in.unit, METHOD, "case_weighted_difference"
    if pair.clusters is not None:
        method = (f"{METHOD}, on per-cluster mean differences weighted by cluster size (each case counting once; "
                  f"sizes bounded by {units_in.bound})" if weights is not None else
                  f"{METHOD}, on per-cluster mean differences (clusters of equal size)")
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
                                     grid=params.grid, weights=weights)
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


def _order_preregistered(view: Any) -> Iterable[Issue]:
    """A confidence sequence assumes random arrival; harnesses run cases in dataset order (issue 18, #2)."""
    stop = view.stopping
    if any(entries(view, "sequential_difference")) and getattr(stop, "order", None) is None:
        yield Issue(("stopping",),
                    "a sequential analysis is planned but no case order is preregistered: the confidence sequence "
                    "assumes each new unit is a random draw, and cases run in dataset or timestamp order (by "
                    "category, by difficulty) can make it claim a difference that is not there (the verdict then "
                    "carries a caveat)",
                    "run `evalspec order PLAN --cases CASES` and add the stopping.order it prints; have the harness "
                    "run the cases in that order")


KIND = AnalysisKind(
    name="sequential_difference",
    params=SequentialDifferenceParams,
    result=SequentialDifferenceResult,
    compute=compute,
    title="Sequential monitoring of the paired difference",
    columns=columns,
    order=25,
    warnings=((("stopping", "analyses"), _order_preregistered),),
    sequential=True,
    attempt_rows="it orders the cases for its looks by each attempt's timestamp",
)
