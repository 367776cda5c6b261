"""``evalspec init [DIR | FILE.yaml]``: write a commented starter ``plan.yaml`` that validates as written.

Refuses to overwrite an existing plan (exit 2). DIR is created when missing; a name ending in
``.yaml``/``.yml`` is the plan file itself.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["init"]


@click.command("init")
@click.argument("directory", required=False, default=".", type=click.Path(path_type=Path))
def init(directory: Path) -> None:
    """Write DIRECTORY/plan.yaml (default: ./plan.yaml), a commented plan to edit.

    A name ending in .yaml or .yml is taken as the plan file itself (evalspec init study/my-plan.yaml).
    """
    from evalspec.errors import InputError
    from evalspec.plan.lock import atomic_write_text

    if directory.suffix.lower() in (".yaml", ".yml") and not directory.is_dir():
        target, directory = directory, directory.parent
    elif directory.exists() and not directory.is_dir():
        raise InputError(f"{directory}: is a file, not a folder; give a folder (plan.yaml is written inside it) or "
                         "a new file name ending in .yaml")
    else:
        target = directory / "plan.yaml"
    if target.exists() or target.is_symlink():
        raise InputError(f"{target}: already exists; refusing to overwrite it (edit it, or choose another DIR)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{directory}: cannot create the folder: {exc.strerror or exc}") from None
    from evalspec.plan.starter import starter_text

    atomic_write_text(target, starter_text())
    click.echo(f"wrote {target}; edit it, check it on a pilot or sample of results (reads them, counts no look): "
               f"evalspec validate {target} --data PILOT; then, before the study's results exist: "
               f"evalspec lock {target}")
