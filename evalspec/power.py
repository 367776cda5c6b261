"""``evalspec power``: how many independent units the plan needs, before any data.

Reads the plan's decision (goal, minimum improvement or margin, confidence level), its
units (cases, or clusters of cases), its attempts and stopping rule, and the variance
assumptions from the plan's ``power`` block or from a pilot results file, then applies
Evan Miller, "Adding Error Bars to Evals" (2024), eq. 9 (units needed at 80 % and 90 %
power) and eq. 10 (minimum detectable effect of the planned units), with the design effect
``1 + (m - 1) ICC`` of clusters of ``m`` cases; and, for a critical-failure limit, the
number of critical cases that zero failures must cover (``n > ln(alpha) / ln(1 - limit)``).

What the numbers mean: the units needed for the primary paired interval to exclude zero
with the given power when the true difference equals the target (the minimum improvement;
the margin for non-inferiority and equivalence, where the true difference is taken as 0).
Showing a *lower bound* above the minimum improvement, as "worth acting on" requires, needs
a true difference larger than the minimum improvement: a separate line gives the chance of
"worth acting on" at the planned units (one-sided alpha, 2.5 %, when the true gain equals the
minimum improvement) and the true gain at which that chance is 80 %.

With clusters of more than one case the units are computed for the rule evalspec applies --
the CR2 t interval on ``G - 1`` degrees of freedom, uninformative below 5 clusters
(:func:`evalspec.stats.power.clustered_paired_power`) -- not eq. 9 times the design effect,
which uses the normal quantile and overstates power with few clusters. Both assume equal
cluster sizes; unequal sizes lower the power further (said in the output).

:func:`assess` is a pure function of the plan (and an optional pilot estimate);
:func:`evalspec.pilot.pilot_assumptions` reads a pilot file through the plan's own reader.
This module sits in the plan layer (``evalspec validate`` warns with :func:`shortfall`), so it
imports no results reader.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Assumptions", "PowerReport", "assess", "shortfall", "unreachable_goal"]

POWERS = (0.8, 0.9)


@dataclass(frozen=True)
class Assumptions:
    """Variance components and clustering (from the plan or a pilot)."""

    omega2: float
    sigma2_candidate: float = 0.0
    sigma2_baseline: float = 0.0
    icc: float = 0.0
    cluster_size: float | None = None
    cluster_size_cv: float | None = None
    cluster_sizes: tuple[int, ...] | None = None  # a pilot's cluster sizes (resampled by the simulation)
    source: str = "plan"
    pilot_cases: int | None = None


@dataclass
class PowerReport:
    """What ``evalspec power`` prints (``to_dict`` for ``--json``)."""

    plan_id: str
    goal: str
    delta: float | None
    delta_name: str
    confidence_level: float
    candidate: str | None
    baseline: str | None
    assumptions: Assumptions | None
    attempts_averaged: int
    design_effect: float
    unit: str
    needed: dict[str, dict[str, int]] = field(default_factory=dict)
    planned_units: int | None = None
    mde: dict[str, float] = field(default_factory=dict)
    reachable: bool | None = None
    worth_acting_on: dict[str, float] | None = None
    method: str = "Miller (2024) eq. 9"
    critical: dict[str, Any] | None = None
    simulation: dict[str, int] | None = None  # {"studies", "seed"} when the power was simulated (unequal sizes)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        return out


def _attempts_averaged(plan: Any) -> int:
    """``K`` in eq. 9: attempts averaged into a case outcome (only the 'mean' rule averages)."""
    return int(plan.attempts.repeats) if plan.attempts.rule == "mean" else 1


def _target(plan: Any) -> tuple[float | None, str]:
    d = plan.decision
    if d.goal == "superiority":
        return (float(d.minimum_improvement) if d.minimum_improvement > 0 else None), "minimum improvement"
    return (float(d.margin) if d.margin else None), "margin"


@dataclass
class _Rule:
    """How one plan's units, detectable effects and chances are computed (formula or simulation).

    ``chance(units, delta, threshold)`` is P(the interval's lower bound exceeds ``threshold``) at a
    true difference ``delta``; ``needed(power)`` the fewest units with ``chance(., target, 0) >= power``;
    ``detectable(units, power)`` the true difference above 0 that ``units`` detect with ``power``.
    """

    method: str
    short: str
    needed: Callable[[float], int | None]
    detectable: Callable[[int, float], float]
    chance: Callable[[int, float, float], float]
    simulated: bool = False


def _normal_rule(delta: float, a: Assumptions, deff: float, kw: dict[str, Any]) -> _Rule:
    from statistics import NormalDist

    from evalspec.stats.power import minimum_detectable_effect, paired_sample_size, per_case_variance

    z = NormalDist().inv_cdf(1 - kw["alpha"] / 2)
    sd = math.sqrt(per_case_variance(a.omega2, kw["sigma_a2"], kw["k_a"], kw["sigma_b2"], kw["k_b"]) * deff)
    return _Rule(
        method="Miller (2024) eq. 9",
        short="Miller 2024, eq. 9",
        needed=lambda pw: math.ceil(paired_sample_size(delta, a.omega2, power=pw, deff=deff, **kw) - 1e-9),
        detectable=lambda n, pw: minimum_detectable_effect(n, a.omega2, power=pw, deff=deff, **kw),
        chance=lambda n, d, thr: 1 - NormalDist().cdf(z - (d - thr) * math.sqrt(n) / sd))


def _equal_clusters_rule(delta: float, a: Assumptions, m: float, kw: dict[str, Any]) -> _Rule:
    from evalspec.stats.power import clustered_minimum_detectable_effect, clustered_paired_power, clusters_needed

    def detectable(g: int, pw: float) -> float:
        mde = clustered_minimum_detectable_effect(g, a.omega2, cluster_size=m, icc=a.icc, power=pw, **kw)
        return math.inf if mde is None else mde

    return _Rule(
        method="CR2 t interval on G - 1 df, equal clusters (noncentral t)",
        short="the CR2 t interval evalspec applies, on G - 1 degrees of freedom",
        needed=lambda pw: clusters_needed(delta, a.omega2, cluster_size=m, icc=a.icc, power=pw, **kw),
        detectable=detectable,
        chance=lambda g, d, thr: clustered_paired_power(d, a.omega2, clusters=g, cluster_size=m, icc=a.icc,
                                                        threshold=thr, **kw))


def _simulated_rule(delta: float, a: Assumptions, m: float, kw: dict[str, Any]) -> _Rule:
    from functools import lru_cache

    from evalspec.stats.power import clusters_needed, per_case_variance
    from evalspec.stats.power_simulation import (
        DEFAULT_STUDIES,
        detectable_from_bounds,
        power_from_bounds,
        simulate_bounds,
        simulated_clusters_needed,
    )

    sim = dict(cluster_size=m, icc=a.icc, alpha=kw["alpha"], size_cv=a.cluster_size_cv or 0.0,
               sizes=a.cluster_sizes, seed=SIMULATION_SEED,
               variance=per_case_variance(a.omega2, kw["sigma_a2"], kw["k_a"], kw["sigma_b2"], kw["k_b"]))
    bounds = lru_cache(maxsize=8)(lambda g: simulate_bounds(clusters=g, **sim))  # type: ignore[arg-type]
    spread = (f"cluster sizes drawn from the pilot's {len(a.cluster_sizes)} clusters" if a.cluster_sizes
              else f"lognormal cluster sizes, mean {m:g}, coefficient of variation {a.cluster_size_cv:g}")
    return _Rule(
        method=f"simulation of the interval evalspec applies (CR2 t on Bell-McCaffrey df; the skewness-corrected "
               f"CR3 interval when a sample's sizes have CV above 1), {spread}, {DEFAULT_STUDIES} studies per number "
               f"of clusters, seed {SIMULATION_SEED}",
        short=f"the interval evalspec applies, simulated with unequal cluster sizes, seed {SIMULATION_SEED}",
        needed=lambda pw: simulated_clusters_needed(delta, pw, start=clusters_needed(  # type: ignore[arg-type]
            delta, a.omega2, cluster_size=m, icc=a.icc, power=pw, **kw), **sim),
        detectable=lambda g, pw: detectable_from_bounds(bounds(g), pw),
        chance=lambda g, d, thr: power_from_bounds(bounds(g), d, thr), simulated=True)


#: Seed of the power simulation for unequal cluster sizes (recorded in the report's method).
SIMULATION_SEED = 18


def _plan_assumptions(plan: Any) -> Assumptions | None:
    p = plan.power
    if p is None or p.omega2 is None:
        return None
    return Assumptions(omega2=p.omega2, sigma2_candidate=p.sigma2_candidate, sigma2_baseline=p.sigma2_baseline,
                       icc=p.icc, cluster_size=p.cluster_size, cluster_size_cv=p.cluster_size_cv)


def _comparison(plan: Any) -> tuple[str, str] | None:
    from evalspec.analyses.contract import default_comparison

    return plan.primary_comparison() or default_comparison(plan.candidates, plan.baseline)  # type: ignore[no-any-return]


def _choose_rule(notes: list[str], cluster: str | None, a: Assumptions, delta: float,
                 kw: dict[str, Any]) -> tuple[_Rule, float, float]:
    """The computation for this plan, the cluster size it uses (1 without clusters) and the design effect."""
    from evalspec.stats.power import design_effect

    m = 1.0
    if cluster is not None:
        if a.cluster_size is None:
            notes.append("The plan resamples clusters but gives no power.cluster_size; the design effect "
                         "is taken as 1 and clusters as single cases, which understates the units needed.")
        else:
            m = float(a.cluster_size)
    elif a.cluster_size_cv:
        notes.append("power.cluster_size_cv is ignored: the plan declares no clusters (units.cluster).")
    deff = design_effect(m, a.icc) if m >= 1 else 1.0
    if cluster is None or m <= 1:
        return _normal_rule(delta, a, deff, kw), m, deff
    unequal = bool(a.cluster_size_cv) or (a.cluster_sizes is not None and len(set(a.cluster_sizes)) > 1)
    if unequal:
        notes.append("Clusters of unequal size: computed by simulating the interval evalspec applies (seeded, so "
                     "the same plan gives the same numbers; its Monte Carlo error is about one point of power and 2 % "
                     "of the units needed). It assumes the sizes are unrelated to the per-case difference.")
        if (a.cluster_size_cv or 0.0) > 1.0:
            notes.append("Sizes this spread are heavy-tailed: if the difference grows or shrinks with cluster size, "
                         "the verdict's interval can miss on one side more often than its level says (it then carries "
                         "a caveat); a sample stratified by cluster size avoids that.")
        return _simulated_rule(delta, a, m, kw), m, deff
    notes.append("Clusters: computed for the interval evalspec applies (CR2 t on G - 1 degrees of freedom, "
                 "uninformative below 5 clusters) with equal cluster sizes; if the sizes vary, set "
                 "power.cluster_size_cv (unequal sizes need more clusters).")
    return _equal_clusters_rule(delta, a, m, kw), m, deff


def assess(plan: Any, assumptions: Assumptions | None = None) -> PowerReport:
    """Units needed and minimum detectable effect for ``plan`` (a validated Plan)."""
    from evalspec.stats.power import zero_failure_cases

    assumptions = assumptions if assumptions is not None else _plan_assumptions(plan)
    comparison = _comparison(plan)
    delta, delta_name = _target(plan)
    level = float(plan.decision.confidence_level)
    alpha = 1.0 - level
    k = _attempts_averaged(plan)
    clustered = plan.units.cluster is not None
    report = PowerReport(plan_id=plan.id, goal=plan.decision.goal, delta=delta, delta_name=delta_name,
                         confidence_level=level, candidate=None if comparison is None else comparison[0],
                         baseline=None if comparison is None else comparison[1], assumptions=assumptions,
                         attempts_averaged=k, design_effect=1.0,
                         unit=f"clusters ({plan.units.cluster})" if clustered else "cases",
                         planned_units=plan.stopping.max_units)
    crit = plan.decision.critical_failures
    if crit is not None:
        n0 = zero_failure_cases(crit.max_rate, crit.confidence_level)
        report.critical = {"max_rate": crit.max_rate, "confidence_level": crit.confidence_level,
                           "cases_with_zero_failures": n0}
    if comparison is None:
        report.notes.append("The plan compares no two candidates, so there is no paired difference to power.")
        return report
    if delta is None:
        key = "decision.minimum_improvement" if plan.decision.goal == "superiority" else "decision.margin"
        report.notes.append(f"The plan sets no {delta_name} ({key}), so there is no difference to power against.")
        return report
    if assumptions is None:
        report.notes.append("No variance assumptions: add a `power` block with omega2 to the plan, or pass --pilot.")
        return report
    kw = dict(sigma_a2=assumptions.sigma2_candidate, k_a=k, sigma_b2=assumptions.sigma2_baseline, k_b=k, alpha=alpha)
    if plan.decision.goal == "equivalence":
        # TOST with the true difference at 0: both one-sided tests at alpha/2 must reject, power split over two sides
        kw_power = [(pw, 1 - (1 - pw) / 2) for pw in POWERS]
        report.notes.append("Equivalence: computed for a true difference of 0 (two one-sided tests), an approximation.")
    else:
        kw_power = [(pw, pw) for pw in POWERS]
    rule, m, report.design_effect = _choose_rule(report.notes, plan.units.cluster, assumptions, delta, kw)
    report.method = rule.method
    if rule.simulated:
        from evalspec.stats.power_simulation import DEFAULT_STUDIES

        report.simulation = {"studies": DEFAULT_STUDIES, "seed": SIMULATION_SEED}
    _fill_units(report, rule, m, clustered, kw_power, delta)
    if plan.attempts.rule not in ("first", "mean"):
        report.notes.append(f"The attempt rule {plan.attempts.rule!r} does not average attempts; the per-case variance "
                            "is approximated by that of a single attempt (omega^2 + sigma^2).")
    if plan.decision.goal == "superiority":
        report.notes.append(
            "The units above make the interval's lower bound clear 0 when the true gain equals the minimum "
            "improvement: that shows a gain, not one worth acting on. For 'worth acting on' the lower bound must "
            "clear the minimum improvement itself, so the true gain must be larger (the 'worth acting on' line).")
    return report


def _fill_units(report: PowerReport, rule: _Rule, m: float, clustered: bool, kw_power: list[tuple[float, float]],
                delta: float) -> None:
    by_clusters = clustered and m > 1
    for pw, used in kw_power:
        units = rule.needed(used)
        if units is None:
            report.notes.append(f"{pw:.0%} power is out of reach with up to 100000 clusters under these assumptions.")
            continue
        report.needed[f"{pw:.0%}"] = ({"cases": math.ceil(units * m - 1e-9), "clusters": units} if by_clusters
                                      else {"cases": units})
    planned = report.planned_units
    if planned is None:
        return
    n = planned if by_clusters or not clustered else planned * m
    for pw, used in kw_power:
        report.mde[f"{pw:.0%}"] = rule.detectable(int(round(n)) if by_clusters else n, used)  # type: ignore[arg-type]
    need = report.needed.get("80%")
    need_units = None if need is None else (need.get("clusters", need["cases"]) if clustered else need["cases"])
    report.reachable = need_units is not None and planned >= need_units
    if report.goal == "superiority":
        units = int(round(n)) if by_clusters else n
        report.worth_acting_on = {
            "if_true_gain_is_minimum": rule.chance(units, delta, delta),  # type: ignore[arg-type]
            "true_gain_for_80%": delta + report.mde["80%"],
            "gain_shown_if_true_gain_is_minimum": rule.chance(units, delta, 0.0),  # type: ignore[arg-type]
        }


def shortfall(power: Any, decision: Any, attempts: Any, units: Any, stopping: Any) -> tuple[str, str] | None:
    """(message, hint) when ``stopping.max_units`` cannot reach 80 % power under the plan's ``power`` block.

    A pure function of the plan's sections (for the ``evalspec validate`` warning), computed as
    ``evalspec power`` computes it (unequal cluster sizes simulated); None when the plan gives no
    assumptions, no ``max_units`` or no target difference, or the units suffice.
    """
    if power is None or power.omega2 is None or stopping.max_units is None:
        return None
    if decision.goal == "superiority":
        delta, name = float(decision.minimum_improvement), "minimum improvement"
    else:
        delta, name = float(decision.margin or 0.0), "margin"
    if delta <= 0:
        return None
    k = int(attempts.repeats) if attempts.rule == "mean" else 1
    a = Assumptions(omega2=power.omega2, sigma2_candidate=power.sigma2_candidate,
                    sigma2_baseline=power.sigma2_baseline, icc=power.icc, cluster_size=power.cluster_size,
                    cluster_size_cv=power.cluster_size_cv)
    used = 0.9 if decision.goal == "equivalence" else 0.8  # TOST at a true difference of 0: power split over two sides
    kw = dict(sigma_a2=power.sigma2_candidate, k_a=k, sigma_b2=power.sigma2_baseline, k_b=k,
              alpha=1 - float(decision.confidence_level))
    rule, _, _ = _choose_rule([], units.cluster, a, delta, kw)
    need = rule.needed(used)
    unit = f"clusters ({units.cluster})" if units.cluster is not None else "cases"
    if need is not None and stopping.max_units >= need:
        return None
    about = f"about {need}" if need is not None else "more than 100000"
    if decision.goal == "superiority":
        what = (f"for the interval to exclude 0 with 80% power when the true gain equals the {name} ({delta:g}) "
                f"({rule.short}). That is not the chance of the verdict 'worth acting on', which needs the lower "
                f"bound above the {name} itself: at a true gain equal to it that chance is about 2.5% with any "
                "number of units (`evalspec power` shows both)")
    else:
        what = (f"for 80% power to settle the {name} of {delta:g} at a true difference of 0 ({rule.short}) "
                "(`evalspec power` shows the numbers)")
    return (f"{stopping.max_units} {unit} are planned, but {about} are needed {what}",
            "plan more units, a larger minimum difference, or check the assumptions with `evalspec power`")


def unreachable_goal(plan: Any) -> str | None:
    """A one-sentence warning when the plan's own assumptions say max_units cannot reach 80 % power, else None."""
    if plan.power is None or plan.power.omega2 is None or plan.stopping.max_units is None:
        return None
    try:
        rep = assess(plan)
    except Exception:  # noqa: BLE001 - a warning must never break validation
        return None
    if rep.reachable is not False:
        return None
    need = rep.needed.get("80%")
    n = ("more than 100000" if need is None else
         f"about {need.get('clusters', need['cases']) if plan.units.cluster is not None else need['cases']}")
    tail = ("; this is the interval's power to exclude 0, not the chance of a 'worth acting on' verdict (about 2.5% "
            "at a true gain equal to the minimum improvement)" if rep.goal == "superiority" else "")
    return (f"stopping.max_units = {plan.stopping.max_units} {rep.unit} cannot detect a difference of {rep.delta:g} "
            f"(the {rep.delta_name}) with 80% power under the plan's power assumptions: {n} are needed "
            f"(minimum detectable effect {rep.mde['80%']:.3f}){tail}")
