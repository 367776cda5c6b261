"""``evalspec lock PLAN``: record the plan's canonical hash in ``PLAN.lock.json``.

Exit status: 0 locked (or already locked with the same hash); 1 the plan is invalid,
or it changed since it was locked and ``--force`` was not given (the changed keys are
listed); 2 the plan cannot be read.
"""

from __future__ import annotations

import click

__all__ = ["lock"]


@click.command("lock")
@click.argument("plan", type=click.Path(dir_okay=True, path_type=str))
@click.option("--force", is_flag=True,
              help="Re-lock a plan that changed since it was locked (the old hash is kept in the lock's history).")
def lock(plan: str, force: bool) -> None:
    """Validate PLAN and write PLAN.lock.json beside it (hash, UTC time, version, git commit)."""
    from evalspec.plan.load import load_plan
    from evalspec.plan.lock import write_lock

    from evalspec.commands.validate_data import existing_data

    loaded = load_plan(plan)
    _print_warnings(loaded)  # what validate would warn about: locking is the moment it still costs nothing
    existing = existing_data(plan)  # OSF's "existing data": did results exist when the plan was locked?
    result = write_lock(loaded, force=force, existing_data=existing)
    rec = result.record
    where = ""
    if rec.git:
        commit = (rec.git.get("commit") or "no commit")[:12]
        flags = []
        if rec.git.get("dirty"):
            flags.append("work tree dirty")
        if rec.git.get("plan_uncommitted"):
            flags.append("plan not committed")
        where = f", git {commit}" + (f" ({', '.join(flags)})" if flags else "")
    if result.action == "unchanged":
        click.echo(f"{plan}: already locked with this hash at {rec.locked_at} ({rec.hash}); nothing to do")
        return
    if result.action == "relocked":
        click.echo(f"{plan}: re-locked with --force; changes since the previous lock:", err=True)
        for change in result.changes:
            click.echo(f"  {change.describe()}", err=True)
    click.echo(f"{plan}: locked {rec.hash} at {rec.locked_at}{where} -> {result.path}")
    if existing["state"] == "prior_to_analysis":
        n = len(existing["files"])
        click.echo(f"{plan}: note: {n} results file(s) the plan names already exist; the lock records them as "
                   "existing data, and the audit flags a claim that analyses those very files (check a pilot "
                   "with `evalspec validate --data` instead, then collect fresh results)", err=True)


def _print_warnings(loaded) -> None:  # type: ignore[no-untyped-def]
    """The plan's validate warnings, on stderr (the plan is still locked: a warning leaves it valid)."""
    from evalspec.plan.positions import format_path
    from evalspec.plan.rules import warnings as plan_warnings

    for w in plan_warnings(loaded.plan):
        d = loaded.diagnostic(format_path(w.path), "warning: " + w.message, hint=w.hint,
                              **({"got": w.got} if w.has_got else {}))
        click.echo(d.render(), err=True)
