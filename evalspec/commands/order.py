"""``evalspec order PLAN --cases FILE``: draw the random case order a sequential design preregisters.

Reads the list of case ids (one per line, ``case_id`` or ``case_id,cluster``; a first line
naming the plan's ``units.case`` / ``units.cluster`` columns is a header; ``#`` lines are
comments), draws a seeded random order (clusters kept together), writes it beside the plan
(``order.txt`` unless ``--out`` names another file inside the plan's folder) and prints the
``stopping.order`` entry to add to the plan: the file's SHA-256 goes into the plan, so the
plan's hash and its lock cover the order. Have the harness run the cases in that order; at
each look, ``evalspec run`` checks that the analysed units are the first ones of it.

Exit status: 0 written; 1 the plan is invalid; 2 the case list cannot be read, or an order
file with other content is already there (an order is drawn once; ``--force`` replaces it
before any result exists).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import click

__all__ = ["order"]


def _read_cases(path: Path, case_col: str, cluster_col: str | None) -> tuple[list[str], list[str | None]]:
    from evalspec._files import read_text
    from evalspec.errors import Diagnostic, InputError

    text = read_text(path, what="case list") or ""
    cases: list[str] = []
    clusters: list[str | None] = []
    seen: set[str] = set()
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(",")]
        if not cases and parts[0] == case_col:  # a header line
            continue
        if len(parts) > 2 or not parts[0]:
            raise InputError(f"{path}: line {n} is not a case", [Diagnostic(
                file=str(path), line=n, message=f"expected 'case_id' or 'case_id,cluster' (got {line[:60]!r})",
                hint="one case per line; a second column names its cluster")])
        if parts[0] in seen:
            raise InputError(f"{path}: case {parts[0]!r} is listed twice", [Diagnostic(
                file=str(path), line=n, message=f"case {parts[0]!r} is listed twice", hint="list each case once")])
        seen.add(parts[0])
        cases.append(parts[0])
        clusters.append(parts[1] if len(parts) == 2 and parts[1] else None)
    if not cases:
        raise InputError(f"{path}: no case listed", [Diagnostic(file=str(path), message="the case list is empty")])
    if cluster_col is not None and any(c is None for c in clusters):
        missing = next(c for c, g in zip(cases, clusters, strict=True) if g is None)
        raise InputError(f"{path}: case {missing!r} has no cluster", [Diagnostic(
            file=str(path), message=f"the plan declares clusters ({cluster_col}) but case {missing!r} names none",
            hint="give every case its cluster: case_id,cluster")])
    return cases, clusters


@click.command("order")
@click.argument("plan", type=click.Path(dir_okay=False, path_type=str))
@click.option("--cases", "cases_file", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The case ids, one per line (case_id or case_id,cluster).")
@click.option("--seed", type=int, default=None,
              help="Seed of the draw (default: one derived from the plan's id, printed with the entry).")
@click.option("--out", "out_name", default="order.txt", show_default=True,
              help="File name of the order, beside the plan.")
@click.option("--force", is_flag=True, help="Replace an existing order file with other content.")
def order(plan: str, cases_file: Path, seed: int | None, out_name: str, force: bool) -> None:
    """Draw the random case order for PLAN's sequential design and print its stopping.order entry."""
    from evalspec.commands.beside_plan import write_beside_plan
    from evalspec.plan.load import load_plan
    from evalspec.unit_order import draw_order

    loaded = load_plan(plan)
    units = loaded.plan.units
    cases, clusters = _read_cases(cases_file, units.case, units.cluster)
    if units.cluster is None:
        clusters = [None] * len(cases)
    if seed is None:
        seed = int(hashlib.sha256(str(loaded.plan.id).encode("utf-8")).hexdigest()[:8], 16)
    drawn = draw_order(cases, clusters, seed)
    text = drawn.text()
    target = write_beside_plan(plan, out_name, text, force=force, what="an order", made="order is drawn once",
                               hint="keep it, or pass --force before any result was collected")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    what = f"{len(set(clusters))} clusters of {len(cases)} cases" if units.cluster else f"{len(cases)} cases"
    click.echo(f"{plan}: wrote the order of {what} to {target} (seed {seed}); add to the plan, then lock it:")
    click.echo("stopping:")
    click.echo(f"  order: {{file: {target.name}, sha256: {digest}, seed: {seed}}}")
