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


def assess(plan: Any, assumptions: Assumptions | None = None) -> PowerReport:
    """Units needed and minimum detectable effect for ``plan`` (a validated Plan)."""
    from evalspec.stats.power import (
        clustered_minimum_detectable_effect,
        clustered_paired_power,
        clusters_needed,
        design_effect,
        minimum_detectable_effect,
        paired_sample_size,
        zero_failure_cases,
    )

    if assumptions is None and plan.power is not None and plan.power.omega2 is not None:
        p = plan.power
        assumptions = Assumptions(omega2=p.omega2, sigma2_candidate=p.sigma2_candidate,
                                  sigma2_baseline=p.sigma2_baseline, icc=p.icc, cluster_size=p.cluster_size)
    from evalspec.analyses.contract import default_comparison

    comparison = plan.primary_comparison() or default_comparison(plan.candidates, plan.baseline)
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
    m = 1.0
    if clustered:
        if assumptions.cluster_size is None:
            report.notes.append("The plan resamples clusters but gives no power.cluster_size; the design effect "
                                "is taken as 1 and clusters as single cases, which understates the units needed.")
        else:
            m = float(assumptions.cluster_size)
    deff = design_effect(m, assumptions.icc) if m >= 1 else 1.0
    report.design_effect = deff
    kw = dict(sigma_a2=assumptions.sigma2_candidate, k_a=k, sigma_b2=assumptions.sigma2_baseline, k_b=k, alpha=alpha)
    if plan.decision.goal == "equivalence":
        # TOST with the true difference at 0: both one-sided tests at alpha/2 must reject, power split over two sides
        kw_power = [(pw, 1 - (1 - pw) / 2) for pw in POWERS]
        report.notes.append("Equivalence: computed for a true difference of 0 (two one-sided tests), an approximation.")
    else:
        kw_power = [(pw, pw) for pw in POWERS]
    by_t = clustered and m > 1
    if by_t:
        report.method = "CR2 t interval on G - 1 df, equal clusters (noncentral t)"
        report.notes.append("Clusters: computed for the interval evalspec applies (CR2 t on G - 1 degrees of freedom, "
                            "uninformative below 5 clusters) with equal cluster sizes; unequal sizes need more clusters.")
    for pw, used in kw_power:
        if by_t:
            g = clusters_needed(delta, assumptions.omega2, cluster_size=m, icc=assumptions.icc, power=used, **kw)
            report.needed[f"{pw:.0%}"] = {"cases": math.ceil(g * m - 1e-9), "clusters": g}
            continue
        n_cases = paired_sample_size(delta, assumptions.omega2, power=used, deff=deff, **kw)  # type: ignore[arg-type]
        cases = math.ceil(n_cases - 1e-9)
        entry = {"cases": cases}
        if clustered and m > 1:
            entry["clusters"] = math.ceil(cases / m - 1e-9)
        report.needed[f"{pw:.0%}"] = entry
    if report.planned_units is not None:
        planned_cases = report.planned_units * (m if clustered else 1.0)
        for pw, used in kw_power:
            if by_t:
                mde = clustered_minimum_detectable_effect(report.planned_units, assumptions.omega2, cluster_size=m,
                                                          icc=assumptions.icc, power=used, **kw)
                report.mde[f"{pw:.0%}"] = math.inf if mde is None else mde
                continue
            report.mde[f"{pw:.0%}"] = minimum_detectable_effect(planned_cases, assumptions.omega2, power=used,
                                                                deff=deff, **kw)  # type: ignore[arg-type]
        need = report.needed["80%"]
        need_units = need.get("clusters", need["cases"]) if clustered else need["cases"]
        report.reachable = report.planned_units >= need_units
        if plan.decision.goal == "superiority":
            if by_t:
                at_min = clustered_paired_power(delta, assumptions.omega2, clusters=report.planned_units,
                                                cluster_size=m, icc=assumptions.icc, threshold=delta, **kw)
            else:
                at_min = alpha / 2 if report.planned_units >= 1 else 0.0
            report.worth_acting_on = {"if_true_gain_is_minimum": at_min,
                                      "true_gain_for_80%": delta + report.mde["80%"]}
    if plan.attempts.rule not in ("first", "mean"):
        report.notes.append(f"The attempt rule {plan.attempts.rule!r} does not average attempts; the per-case variance "
                            "is approximated by that of a single attempt (omega^2 + sigma^2).")
    if plan.decision.goal == "superiority":
        report.notes.append(
            "These units make the interval exclude 0 when the true gain equals the minimum improvement; for its lower "
            "bound to clear the minimum improvement (worth acting on) the true gain must be larger.")
    return report


def shortfall(power: Any, decision: Any, attempts: Any, units: Any, stopping: Any) -> tuple[str, str] | None:
    """(message, hint) when ``stopping.max_units`` cannot reach 80 % power under the plan's ``power`` block.

    A pure function of the plan's sections (for the ``evalspec validate`` warning); None when the
    plan gives no assumptions, no ``max_units`` or no target difference, or the units suffice.
    """
    if power is None or power.omega2 is None or stopping.max_units is None:
        return None
    from evalspec.stats.power import design_effect, paired_sample_size

    if decision.goal == "superiority":
        delta, name = float(decision.minimum_improvement), "minimum improvement"
    else:
        delta, name = float(decision.margin or 0.0), "margin"
    if delta <= 0:
        return None
    k = int(attempts.repeats) if attempts.rule == "mean" else 1
    clustered = units.cluster is not None
    m = float(power.cluster_size) if clustered and power.cluster_size else 1.0
    deff = design_effect(m, power.icc) if m > 1 else 1.0
    used = 0.9 if decision.goal == "equivalence" else 0.8  # TOST at a true difference of 0: power split over two sides
    alpha = 1 - float(decision.confidence_level)
    kw = dict(sigma_a2=power.sigma2_candidate, k_a=k, sigma_b2=power.sigma2_baseline, k_b=k, alpha=alpha)
    if clustered and m > 1:
        from evalspec.stats.power import clusters_needed

        need = clusters_needed(delta, power.omega2, cluster_size=m, icc=power.icc, power=used, **kw)
        how = "the CR2 t interval evalspec applies, on G - 1 degrees of freedom"
    else:
        need = math.ceil(paired_sample_size(delta, power.omega2, power=used, deff=deff, **kw) - 1e-9)  # type: ignore[arg-type]
        how = "Miller 2024, eq. 9"
    unit = f"clusters ({units.cluster})" if clustered else "cases"
    if stopping.max_units >= need:
        return None
    return (f"{stopping.max_units} {unit} are planned, but about {need} are needed for 80% power to detect a "
            f"difference of {delta:g} (the {name}) under the plan's power assumptions ({how}). This is the power "
            "of the interval to exclude 0, not the chance of a 'worth acting on' verdict, which needs a true gain "
            "above the minimum improvement (`evalspec power` shows both)",
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
    need = rep.needed["80%"]
    n = need.get("clusters", need["cases"]) if plan.units.cluster is not None else need["cases"]
    return (f"stopping.max_units = {plan.stopping.max_units} {rep.unit} cannot detect a difference of {rep.delta:g} "
            f"(the {rep.delta_name}) with 80% power under the plan's power assumptions: about {n} are needed "
            f"(minimum detectable effect {rep.mde['80%']:.3f}); this is the interval's power to exclude 0, not the "
            "chance of a 'worth acting on' verdict")
