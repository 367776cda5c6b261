"""``evalspec validate PLAN --data PATH``: check a pilot or sample of results against the plan.

Before a plan is locked, a team wants to know that the plan reads its tool's output as
meant: the columns it names exist, the candidate names map, the versions and repeats are
what the plan expects. ``--data`` reads PATH exactly as ``evalspec run`` reads the plan's
results (:func:`evalspec.run.check_data`, the same code and the same located messages)
and stops there: no attempt rule, no statistic, no claim, no ledger entry. A pilot checked
this way is not a look at the study's data; locking records which results already existed
(:func:`existing_data`), so the audit can tell the pilot from the data analysed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from evalspec.errors import Diagnostic, EvalspecError, InputError

__all__ = ["check_pilot", "existing_data"]


def check_pilot(plan: str, paths: tuple[str, ...], *, text: bool, quiet: bool = False) -> dict[str, Any]:
    """Read ``paths`` as the plan's results and check them; print (``text``) and return what was found."""
    from evalspec.results import OUTSIDE_ALLOWED, OUTSIDE_READ
    from evalspec.run import check_data, load_plan_for_run, with_results

    shown = ", ".join(paths)
    out: dict[str, Any] = {"files": list(paths), "exit_code": 0, "diagnostics": [], "warnings": []}
    token, read_token = OUTSIDE_ALLOWED.set(True), OUTSIDE_READ.set([])  # the user named these files
    absent = [p for p in paths if not any(ch in p for ch in "*?[") and not os.path.lexists(p)]
    try:
        if absent:
            raise InputError(f"--data {absent[0]}: no such file or folder", [Diagnostic(
                file=p, message="no such file or folder (given with --data)",
                hint="give the pilot's results file, a glob, or a folder of tool logs") for p in absent])
        handle = load_plan_for_run(plan)
        checked, _needs, _kinds = check_data(with_results(handle, list(paths)))
    except EvalspecError as exc:

        diags = exc.diagnostics or [Diagnostic(file=shown, message=exc.message)]
        out.update(status="refused", exit_code=int(exc.exit_code), diagnostics=[d.as_json() for d in diags])
        if text:
            for d in diags:
                click.echo(d.render(), err=True)
            n = len(diags)
            what = "not read" if absent else "`evalspec run` would refuse these results"
            click.echo(f"{plan}: --data {shown}: {n} problem{'s' if n != 1 else ''}; {what}", err=True)
        return out
    finally:
        OUTSIDE_ALLOWED.reset(token)
        OUTSIDE_READ.reset(read_token)
    tidy = checked.tidy
    found = [f"{d['code']}: {d['message']}" for d in checked.deviations + checked.detected]
    lo, hi = checked.repeats_observed
    out.update(status="ok", rows=int(tidy.n), candidates=list(tidy.candidates), cases=len(tidy.case_ids),
               repeats={"planned": int(handle.plan.attempts.repeats), "observed_min": lo, "observed_max": hi},
               versions_seen=checked.versions_seen, warnings=found)
    if text:
        for w in found:
            click.echo(f"{plan}: --data {shown}: warning: {w}", err=True)
        if not quiet:
            reps = f"{lo}" if lo == hi else f"{lo}-{hi}"
            click.echo(f"{plan}: --data {shown}: read as the plan says ({tidy.n} rows, candidates "
                       f"{', '.join(tidy.candidates)}, {len(tidy.case_ids)} cases, {reps} repeat(s) per case); "
                       "nothing computed, no look recorded")
    return out


def existing_data(plan_path: str | Path) -> dict[str, Any]:
    """The lock's "existing data" declaration: did the plan's results exist when it was locked?

    OSF's preregistration form asks the same question ("Existing data"). ``state`` is
    ``prior_to_creation`` when no file the plan's ``data.results`` names exists yet, and
    ``prior_to_analysis`` when some do (a pilot left in place, or data collected first); the
    files present are listed with their SHA-256, so the audit can tell a pilot (files the
    claim does not analyse) from a look (a claim that analyses those very files).
    """
    import hashlib

    from evalspec.plan import load_plan
    from evalspec.results import OUTSIDE_ALLOWED, OUTSIDE_READ, resolve_paths

    loaded = load_plan(Path(plan_path))
    base = Path(plan_path).parent
    results = loaded.plan.data.results
    paths: list[Path] = []
    token, read_token = OUTSIDE_ALLOWED.set(True), OUTSIDE_READ.set([])  # a file outside still exists
    try:
        for pattern in [results] if isinstance(results, str) else list(results):  # each on its own: one
            one = loaded.plan.model_copy(update={"data": loaded.plan.data.model_copy(update={"results": pattern})})
            try:
                paths += resolve_paths(one, Path(plan_path))
            except EvalspecError:
                pass  # nothing there yet: prior to creation (for this pattern)
    finally:
        OUTSIDE_ALLOWED.reset(token)
        OUTSIDE_READ.reset(read_token)
    files: list[dict[str, Any]] = []
    for p in dict.fromkeys(paths):
        try:
            found = sorted(p.rglob("*")) if p.is_dir() else [p]
        except OSError:
            found = [p]
        for f in found:
            if len(files) >= 1000:
                break
            if not f.is_file():  # folders, and never a device or a pipe (reading one could block)
                continue
            entry: dict[str, Any] = {"path": os.path.relpath(f, base)}
            try:
                digest = hashlib.sha256()
                with open(f, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):  # noqa: B023 - fh is this loop's file
                        digest.update(block)
                entry["sha256"] = digest.hexdigest()
            except OSError as exc:  # present but unreadable: still existing data
                entry["sha256"] = None
                entry["unreadable"] = exc.strerror or str(exc)
            files.append(entry)
    state = "prior_to_analysis" if files else "prior_to_creation"
    return {"state": state, "files": files,
            "of": "OSF 'existing data': were the results the plan names present when it was locked?"}

