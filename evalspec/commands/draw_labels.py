"""``evalspec draw-labels PLAN --cases FILE``: draw the random subset of cases people label (judge_corrected).

Reads the list of all cases (a CSV file whose header names the plan's ``units.case`` column,
its ``units.cluster`` column when the plan has one, and the strata column of a stratified
draw), draws the plan's ``labelled_subset`` (``selection``, ``fraction``, ``unit``, ``strata``;
``seed``, or one derived from the plan's id) with :func:`evalspec.label_draw.draw_labelled`,
writes the drawn cases beside the plan (``labelled.txt`` unless ``--out`` names another file
inside the plan's folder) and prints the ``labelled_subset`` entry to put in the plan: with the
file's SHA-256 in the plan, the plan's hash and its lock cover the draw, and ``evalspec run``
compares the cases that carry a human label with it.

Exit status: 0 written; 1 the plan is invalid; 2 the case list cannot be read, the plan has no
analysis with a labelled subset (or no ``fraction``), or a draw file with other content is
already there (a draw is made once; ``--force`` replaces it before anyone labelled).
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path
from typing import Any

import click

__all__ = ["draw_labels"]


def _read_cases(path: Path, case_col: str, cluster_col: str | None,
                strata_col: str | None) -> tuple[list[str], list[str | None], list[str] | None]:
    from evalspec._files import read_text
    from evalspec.errors import Diagnostic, InputError

    text = read_text(path, what="case list") or ""
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise InputError(f"{path}: not a readable CSV file", [Diagnostic(
            file=str(path), message=f"not a readable CSV file ({exc})",
            hint="one line of column names, then one case per line, separated by commas")]) from None
    reader = iter(rows)
    header = next(reader, None)
    need = [c for c in (case_col, cluster_col, strata_col) if c is not None]
    if header is None or any(c not in [h.strip() for h in header] for c in need):
        raise InputError(f"{path}: the header must name the columns {', '.join(need)}", [Diagnostic(
            file=str(path), line=1, message=f"expected a header line naming {', '.join(need)} (got "
            f"{','.join(header or [])[:80]!r})", hint="one line of column names, then one case per line")])
    pos = {h.strip(): i for i, h in enumerate(header)}
    cases: list[str] = []
    clusters: list[str | None] = []
    strata: list[str] = []
    seen: set[str] = set()
    for n, row in enumerate(reader, start=2):
        if not row or not any(v.strip() for v in row):
            continue
        values = {c: (row[pos[c]].strip() if pos[c] < len(row) else "") for c in need}
        case = values[case_col]
        if not case or case in seen or (cluster_col and not values[cluster_col]):
            what = ("names no case" if not case else f"lists case {case!r} twice" if case in seen
                    else f"gives case {case!r} no cluster")
            raise InputError(f"{path}: line {n} {what}", [Diagnostic(file=str(path), line=n, message=f"line {n} {what}",
                                                                     hint="list each case once, with its cluster")])
        seen.add(case)
        cases.append(case)
        clusters.append(values[cluster_col] if cluster_col else None)
        strata.append(values[strata_col] if strata_col else "")
    if not cases:
        raise InputError(f"{path}: no case listed", [Diagnostic(file=str(path), message="the case list is empty")])
    return cases, clusters, (strata if strata_col else None)


def _subset(loaded: Any, index: int | None) -> tuple[int, Any]:
    from evalspec.errors import Diagnostic, InputError

    found = [(i, a) for i, a in enumerate(loaded.plan.analyses) if getattr(a, "labelled_subset", None) is not None]
    if index is not None:
        found = [(i, a) for i, a in found if i == index]
    if not found:
        raise InputError(f"{loaded.path}: no analysis with a labelled_subset" + (f" at index {index}" if index else ""),
                         [Diagnostic(file=str(loaded.path), message="no judge_corrected analysis says how the labelled "
                                     "subset is drawn", hint="add a judge_corrected analysis with labelled_subset "
                                     "{selection, fraction}, then run draw-labels")])
    i, a = found[0]
    if a.labelled_subset.fraction is None:
        raise InputError(f"{loaded.path}: analyses[{i}].labelled_subset has no fraction", [Diagnostic(
            file=str(loaded.path), message="the share of cases to draw is not set",
            hint="set labelled_subset.fraction (e.g. 0.2), then run draw-labels")])
    return i, a.labelled_subset


@click.command("draw-labels")
@click.argument("plan", type=click.Path(dir_okay=False, path_type=str))
@click.option("--cases", "cases_file", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="All cases, as CSV with a header naming units.case (and units.cluster, and the strata column).")
@click.option("--analysis", "index", type=int, default=None,
              help="Index of the analysis whose labelled_subset to draw (default: the first that has one).")
@click.option("--out", "out_name", default="labelled.txt", show_default=True, help="File name of the draw, beside the plan.")
@click.option("--force", is_flag=True, help="Replace an existing draw file with other content.")
def draw_labels(plan: str, cases_file: Path, index: int | None, out_name: str, force: bool) -> None:
    """Draw the random subset of PLAN's cases that people label, and print its labelled_subset entry."""
    from evalspec.commands.beside_plan import write_beside_plan
    from evalspec.errors import Diagnostic, InputError
    from evalspec.label_draw import draw_labelled
    from evalspec.plan.load import load_plan

    loaded = load_plan(plan)
    i, ls = _subset(loaded, index)
    units = loaded.plan.units
    if ls.unit == "cluster" and units.cluster is None:
        raise click.UsageError("labelled_subset.unit is 'cluster' but the plan declares no units.cluster")
    cases, clusters, strata = _read_cases(cases_file, units.case, units.cluster, ls.strata)
    seed = ls.seed if ls.seed is not None else int(hashlib.sha256(str(loaded.plan.id).encode()).hexdigest()[:8], 16)
    try:
        drawn = draw_labelled(cases, clusters, strata, fraction=ls.fraction, seed=seed, unit=ls.unit,
                              selection=ls.selection)
    except ValueError as exc:
        raise InputError(f"{cases_file}: {exc}", [Diagnostic(file=str(cases_file), message=str(exc))]) from None
    text = drawn.text()
    target = write_beside_plan(plan, out_name, text, force=force, what="a draw", made="draw is made once",
                               hint="keep it, or pass --force before anyone labelled")
    click.echo(f"{plan}: drew {len(drawn.cases)} of {len(cases)} cases for people to label ({drawn.population} "
               f"{'clusters' if ls.unit == 'cluster' else 'cases'} drawn from, seed {seed}) into {target}; set "
               f"analyses[{i}].labelled_subset to this, then lock the plan:")
    fields = [f"selection: {ls.selection}", f"fraction: {ls.fraction}", f"seed: {seed}", f"unit: {ls.unit}"]
    if ls.strata is not None:
        fields.append(f"strata: {ls.strata}")
    fields += [f"file: {target.name}", f"sha256: {drawn.sha256()}"]
    click.echo("labelled_subset: {" + ", ".join(fields) + "}")
