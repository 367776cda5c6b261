"""A preregistered file written once beside the plan (`evalspec order`, `evalspec draw-labels`).

The file is named by ``--out`` (a bare file name: no folder, no ``..``) and lives in the plan's
folder, so the plan can name it and its lock can cover it. Writing the same content again is a
no-op; other content already there is refused unless ``--force``: a preregistered order or draw
is made once, before anything it governs.
"""

from __future__ import annotations

from pathlib import Path

import click


def write_beside_plan(plan: str, out_name: str, text: str, *, force: bool, what: str, made: str,
                      hint: str) -> Path:
    """Write ``text`` to ``out_name`` beside ``plan`` and return its path.

    ``what`` names the file in the refusal ("an order", "a draw"); ``made`` ends the sentence
    "a preregistered ... is ..." ("order is drawn once"); ``hint`` says when ``--force`` is still fair.
    """
    from evalspec._atomic import write_text_atomic
    from evalspec.errors import Diagnostic, InputError

    name = Path(out_name)
    if name.is_absolute() or ".." in name.parts or len(name.parts) != 1:
        raise click.UsageError("--out names a file beside the plan (no folder, no '..')")
    target = Path(plan).parent / name
    if target.exists() and not force:
        try:
            same = target.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            raise InputError(f"{target}: {what} is already there", [Diagnostic(
                file=str(target), message=f"{what} file with other content already exists; a preregistered {made}",
                hint=hint)])
    write_text_atomic(target, text)
    return target
