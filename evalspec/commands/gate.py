"""``evalspec gate CLAIM``: exit 0 when the verdict is acceptable and the process checks pass.

Exit status (:class:`~evalspec.exit_codes.ExitCode`): 0 passed; 1 the verdict is not one the
plan's ``decision.acceptable`` (or ``--accept``) lists, or a process check failed; 2 bad input
(no such claim, a corrupt claim, an unknown verdict, no acceptable list). One line says why —
on stdout when the gate passes (nothing with ``-q``), on stderr when it fails; ``--json``
prints the decision as JSON on stdout instead. ``--junit FILE`` also writes a JUnit XML report.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["gate"]


@click.command("gate")
@click.argument("claim", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--accept", "accept", default=None, metavar="VERDICT,...",
              help="Acceptable verdicts, comma-separated (default: the plan's decision.acceptable).")
@click.option("--plan", "plan", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The plan the claim was made from (default: the plan the claim names).")
@click.option("--json", "as_json", is_flag=True, help="Print the gate's decision as JSON.")
@click.option("--junit", "junit", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Also write a JUnit XML report to this file (one test per process check and the verdict).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing when the gate passes.")
def gate(claim: Path, accept: str | None, plan: Path | None, as_json: bool, junit: Path | None, quiet: bool) -> None:
    """Pass (exit 0) when CLAIM's verdict is acceptable and its process checks pass; else exit 1."""
    import json

    from evalspec.errors import CheckFailed
    from evalspec.gate import gate_claim, junit_xml

    names = None if accept is None else [v.strip() for v in accept.split(",") if v.strip()]
    result = gate_claim(claim, accept=names, plan=plan)
    if junit is not None:
        from evalspec._atomic import write_text_atomic

        write_text_atomic(junit, junit_xml([result]))
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    elif result.passed and not quiet:
        click.echo(result.line)
    if not result.passed:
        if as_json:
            raise click.exceptions.Exit(int(CheckFailed.exit_code))
        raise CheckFailed(result.line)
