"""``evalspec schema``: print (or write, or check) the plan's or, with ``--claim``, the claim's JSON Schema.

Exit status: 0 printed/written/in sync; 1 ``--check FILE`` found FILE out of date.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["schema"]


@click.command("schema")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the schema to this file (atomically) instead of printing it.")
@click.option("--check", "check", type=click.Path(dir_okay=False, path_type=Path),
              help="Exit 1 if this file differs from the generated schema.")
@click.option("--claim", "claim", is_flag=True, help="The claim record's schema (claim.json) instead of the plan's.")
def schema(output: Path | None, check: Path | None, claim: bool = False) -> None:
    """Print the JSON Schema of plan.yaml, or of claim.json with --claim (generated from evalspec's models)."""
    from evalspec.errors import CheckFailed, InputError
    from evalspec.plan.lock import atomic_write_text

    if claim:
        from evalspec.claim_model import claim_schema_text

        text = claim_schema_text()
    else:
        from evalspec.plan.schema import schema_text

        text = schema_text()
    if check is not None:
        try:
            current = check.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{check}: cannot be read: {exc.strerror or exc}") from None
        if current != text:
            which = "claim" if claim else "plan"
            flag = " --claim" if claim else ""
            raise CheckFailed(f"{check}: out of date with the {which} models; regenerate: evalspec schema{flag} --output {check}")
        click.echo(f"{check}: in sync")
        return
    if output is not None:
        atomic_write_text(output, text)
        click.echo(f"wrote {output}", err=True)
        return
    click.echo(text, nl=False)
