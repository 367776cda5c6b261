"""``evalspec power PLAN [--pilot FILE]... [--json]``: independent units needed before any data.

Exit 0 with the numbers; 1 when the plan's planned units (stopping.max_units) cannot reach
80 % power under its assumptions; 2 on bad input (a plan without assumptions and no pilot,
an unreadable pilot).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

__all__ = ["power"]


@click.command("power")
@click.argument("plan", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--pilot", type=click.Path(path_type=Path), multiple=True,
              help="Pilot results (same format and columns as the plan's results) to estimate the variances from; "
                   "repeat for several files (tool logs: one per candidate), or give the folder of tool logs.")
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def power(plan: Path, pilot: tuple[Path, ...], as_json: bool) -> None:
    """Units needed to detect the plan's minimum improvement at 80% and 90% power (Miller 2024, eq. 9),
    the minimum detectable effect of the planned units (eq. 10), and the critical cases needed so that
    zero failures bound the rate below the plan's limit."""
    from evalspec.errors import CheckFailed, Diagnostic, InputError
    from evalspec.plan import load_plan
    from evalspec.pilot import pilot_assumptions
    from evalspec.power import assess

    loaded = load_plan(plan, display=str(plan))
    p = loaded.plan
    assumptions = None
    if pilot:
        absent = [str(f) for f in pilot if not f.exists()]
        if absent:
            raise InputError(f"--pilot {', '.join(absent)}: no such file or folder")
        assumptions = pilot_assumptions(p, plan, list(pilot))
    rep = assess(p, assumptions)
    if rep.assumptions is None and rep.candidate is not None and rep.delta is not None:
        raise InputError(f"{plan}: no variance assumptions for the power calculation", [Diagnostic(
            file=str(plan), key="power", message="the plan has no power.omega2 and no --pilot was given",
            hint="add `power: {omega2: 0.1}` (the variance across cases of the per-case difference) or pass "
                 "--pilot FILE with pilot results")])
    if as_json:
        click.echo(json.dumps(rep.to_dict(), indent=2, sort_keys=True))
    else:
        click.echo(_text(rep))
    if rep.reachable is False:
        raise CheckFailed(f"the planned {rep.planned_units} {rep.unit} cannot reach 80% power for the "
                          f"{rep.delta_name} of {rep.delta:g}")


def _spread(a) -> str:  # type: ignore[no-untyped-def]
    if a.cluster_sizes and len(set(a.cluster_sizes)) > 1:
        return f", unequal sizes ({len(a.cluster_sizes)} pilot clusters of {min(a.cluster_sizes)}-{max(a.cluster_sizes)})"
    if a.cluster_size_cv:
        return f", unequal sizes (coefficient of variation {a.cluster_size_cv:g})"
    return ""


def _text(rep) -> str:  # type: ignore[no-untyped-def]
    lines = [f"power for {rep.plan_id}: {rep.goal.replace('_', '-')}"
             + (f", {rep.delta_name} {rep.delta * 100:.1f} points" if rep.delta else "")
             + f", {rep.confidence_level:.0%} two-sided interval"]
    if rep.candidate:
        lines.append(f"comparison: {rep.candidate} vs {rep.baseline} (paired)")
    a = rep.assumptions
    if a is not None:
        src = a.source + (f", {a.pilot_cases} cases" if a.pilot_cases else "")
        lines.append(f"assumptions ({src}): omega^2 = {a.omega2:.4g}, sigma^2 candidate = {a.sigma2_candidate:.4g}, "
                     f"baseline = {a.sigma2_baseline:.4g}, K = {rep.attempts_averaged}"
                     + (f"; clusters of {a.cluster_size:.3g} cases, ICC {a.icc:.3g} -> design effect "
                        f"{rep.design_effect:.3g}" if a.cluster_size else "")
                     + _spread(a))
    what = ("the interval to exclude 0 (a gain shown) when the true gain equals the " + rep.delta_name
            if rep.goal == "superiority" else f"the interval to settle the {rep.delta_name}")
    if rep.needed:
        lines.append(f"units for {what}:")
    for pw, need in rep.needed.items():
        extra = f" = {need['clusters']} clusters" if "clusters" in need else ""
        lines.append(f"  {pw} power: {need['cases']} cases{extra}")
    if rep.mde:
        lines.append(f"planned {rep.planned_units} {rep.unit}: minimum detectable effect "
                     + ", ".join(f"{v * 100:.1f} points at {k} power" for k, v in rep.mde.items()))
        lines.append("  reaches 80% power" if rep.reachable else "  does NOT reach 80% power: plan more units, "
                     "accept a larger minimum improvement, or reduce the variance (repeats, fewer clusters' share)")
    if rep.worth_acting_on:
        w = rep.worth_acting_on
        gain = w["true_gain_for_80%"]
        lines.append(f"the verdict's chances with the planned {rep.planned_units} {rep.unit}, if the true gain equals "
                     f"the minimum improvement: a gain shown {w['gain_shown_if_true_gain_is_minimum']:.1%}, "
                     f"'worth acting on' {w['if_true_gain_is_minimum']:.1%}; 'worth acting on' 80% of the time needs "
                     + (f"a true gain of about {gain * 100:.1f} points" if gain != float("inf") else "more units"))
    if rep.method != "Miller (2024) eq. 9":
        lines.append(f"method: {rep.method}")
    if rep.critical:
        c = rep.critical
        lines.append(f"critical failures: {c['cases_with_zero_failures']} critical cases, all passing, bound the rate "
                     f"below {c['max_rate']:.1%} at {c['confidence_level']:.0%} (n >= ln(alpha)/ln(1 - limit))")
    lines += [f"note: {n}" for n in rep.notes]
    return "\n".join(lines)
