"""``evalspec init [DIR]``: write a commented starter ``plan.yaml`` that validates as written.

Refuses to overwrite an existing plan (exit 2). DIR is created when missing.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["init"]


@click.command("init")
@click.argument("directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Write DIRECTORY/plan.yaml (default: ./plan.yaml), a commented plan to edit."""
    from evalspec.errors import InputError
    from evalspec.plan.lock import atomic_write_text

    target = directory / "plan.yaml"
    if target.exists() or target.is_symlink():
        raise InputError(f"{target}: already exists; refusing to overwrite it (edit it, or choose another DIR)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{directory}: cannot create the folder: {exc.strerror or exc}") from None
    from evalspec.plan.starter import starter_text

    atomic_write_text(target, starter_text())
    click.echo(f"wrote {target}; edit it, then: evalspec validate {target} && evalspec lock {target}")
