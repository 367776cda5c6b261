"""``evalspec validate PLAN...``: check plans and print every problem at its line.

Exit status: 0 every plan is valid; 1 some plan breaks the schema or a cross-field
rule (or, with ``--locked``, has no matching lock); 2 some file cannot be read as a
plan (missing, directory, not UTF-8, YAML syntax, tabs, duplicate keys, ...). With
several plans the highest status wins. Diagnostics go to stderr, one block each;
the one-line verdict per plan goes to stdout. ``--format json`` prints one JSON
document on stdout instead, for editors and CI annotations.

``--data PATH`` (one plan) also reads PATH — a pilot or a sample log — as ``run`` would and
checks it against the plan (:mod:`evalspec.commands.validate_data`): the exit status is then
also 2 when ``run`` would refuse those results. Nothing is computed, written or recorded.
"""

from __future__ import annotations

import json
from typing import Any

import click

from evalspec.errors import Diagnostic, EvalspecError
from evalspec.exit_codes import ExitCode

__all__ = ["validate"]


@click.command("validate")
@click.argument("plans", nargs=-1, required=True, type=click.Path(dir_okay=True, path_type=str))
@click.option("--locked", is_flag=True, help="Also require a lock file (PLAN.lock.json) that matches the plan.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
@click.option("-q", "--quiet", is_flag=True, help="Print problems only; nothing for valid plans.")
@click.option("--data", "data", multiple=True, type=click.Path(path_type=str),
              help="Also check these results (a pilot or sample log; repeat the option) against the plan, as "
                   "`run` would: columns, candidate names, versions, repeats, format. Computes no statistic, "
                   "writes no claim, records no look.")
@click.pass_context
def validate(ctx: click.Context, plans: tuple[str, ...], locked: bool, fmt: str, quiet: bool,
             data: tuple[str, ...] = ()) -> None:
    """Check each PLAN file; print every problem as FILE:LINE:COL: key: message.

    With --data PATH, also read PATH (a pilot or sample of results, in the plan's format) and
    check it against the plan with the same messages `evalspec run` gives, before locking.
    """
    if data and len(plans) != 1:
        raise click.UsageError("--data checks results against one plan; give exactly one PLAN")
    from evalspec.plan.canonical import canonical_hash
    from evalspec.plan.load import load_plan
    from evalspec.plan.lock import check_lock

    worst = ExitCode.OK
    reports: list[dict[str, Any]] = []
    for name in plans:
        entry: dict[str, Any] = {"file": name}
        try:
            loaded = load_plan(name)
        except EvalspecError as exc:
            code = ExitCode(int(exc.exit_code))
            diags = exc.diagnostics or [Diagnostic(file=name, message=exc.message)]
            entry.update(status="invalid" if code == ExitCode.CHECK_FAILED else "unreadable", exit_code=int(code),
                         diagnostics=[d.as_json() for d in diags])
            worst = max(worst, code)
            if fmt == "text":
                for d in diags:
                    click.echo(d.render(), err=True)
                n = len(diags)
                what = "plan invalid" if code == ExitCode.CHECK_FAILED else "not read as a plan"
                click.echo(f"{name}: {n} problem{'s' if n != 1 else ''}; {what}", err=True)
            reports.append(entry)
            continue
        digest = canonical_hash(loaded)
        entry.update(status="valid", exit_code=0, id=loaded.plan.id, hash=digest, diagnostics=[])
        from evalspec.plan.positions import format_path
        from evalspec.plan.rules import warnings as plan_warnings

        warned = [loaded.diagnostic(format_path(w.path), "warning: " + w.message, hint=w.hint,
                                    **({"got": w.got} if w.has_got else {}))
                  for w in plan_warnings(loaded.plan)]
        entry["warnings"] = [d.as_json() for d in warned]
        if fmt == "text":
            for d in warned:
                click.echo(d.render(), err=True)
        notes: list[str] = []
        try:
            status = check_lock(loaded)
        except EvalspecError as exc:
            notes.append(exc.render())
            status = None
            if locked:
                worst = max(worst, ExitCode.BAD_INPUT)
                entry.update(status="lock unreadable", exit_code=int(ExitCode.BAD_INPUT))
        if status is not None:
            entry["lock"] = status.state
            if status.state == "differs" and status.lock is not None:
                changed = ", ".join(c.key for c in status.changes) or "canonical form"
                notes.append(f"{name}: changed since locked at {status.lock.locked_at} ({changed})")
            elif status.state == "missing" and locked:
                notes.append(f"{name}: not locked; run: evalspec lock {name}")
            if locked and status.state != "matches":
                worst = max(worst, ExitCode.CHECK_FAILED)
                entry.update(status="lock " + status.state, exit_code=int(ExitCode.CHECK_FAILED))
        entry["notes"] = notes
        if fmt == "text":
            for note in notes:
                click.echo(note, err=True)
            if not quiet:
                lock_word = f", lock {status.state}" if status is not None and status.state != "missing" else ""
                click.echo(f"{name}: valid ({loaded.plan.id}, {digest}{lock_word})")
        if data:
            from evalspec.commands.validate_data import check_pilot

            entry["data"] = check_pilot(name, data, text=fmt == "text", quiet=quiet)
            worst = max(worst, ExitCode(entry["data"]["exit_code"]))
            if entry["data"]["exit_code"]:
                entry.update(status="data refused", exit_code=max(entry["exit_code"], entry["data"]["exit_code"]))
        reports.append(entry)
    if fmt == "json":
        click.echo(json.dumps({"exit_code": int(worst), "plans": reports}, indent=2, ensure_ascii=False))
    ctx.exit(int(worst))
