"""``evalspec run --locked``: refuse a plan that has no lock or no longer matches it.

Checked before anything is read or written, so a refused run leaves nothing behind. A team
can make "locked before results" a hard rule in CI this way; without ``--locked`` the run
goes on and records the deviation in the claim.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["require_locked"]


def require_locked(plan_path: str | Path, display: str | None = None) -> None:
    """Raise :class:`~evalspec.errors.CheckFailed` (exit 1) unless the plan matches its lock."""
    from evalspec.errors import CheckFailed, Diagnostic
    from evalspec.plan import check_lock, load_plan, lock_path

    name = display or str(plan_path)
    loaded = load_plan(Path(plan_path), display=name)
    status = check_lock(loaded)
    lock_name = lock_path(name).name
    if status.lock is None:
        raise CheckFailed(f"{name}: refusing to run with --locked: the plan has no lock ({lock_name})", [
            Diagnostic(file=name, message="refusing to run with --locked: the plan has no lock, so nothing shows it "
                       "was fixed before the results",
                       hint=f"lock it before collecting results: evalspec lock {name}")])
    if not status.matches:
        changes = [c.describe() for c in status.changes] or ["(no key differs; the canonical form changed)"]
        raise CheckFailed(
            f"{name}: refusing to run with --locked: the plan changed after it was locked at "
            f"{status.lock.locked_at}", [
                Diagnostic(file=name, message=f"refusing to run with --locked: the plan changed after it was locked "
                           f"at {status.lock.locked_at}")] + [
                Diagnostic(file=name, message=f"differs from its lock: {c}",
                           hint="restore the locked plan, or re-lock deliberately with evalspec lock --force "
                           "(the change stays visible in the lock's history)") for c in changes[:20]])
