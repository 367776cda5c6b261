"""``evalspec run PLAN [--out DIR]``: run the plan on its results and write ``claim.json``.

The claim goes to ``<plan dir>/out/claim.json`` unless ``--out`` names another folder. It
is written atomically and only after every check and analysis succeeded, so a refused
run (exit 2: bad results, an unpooled model-version change, missing outcomes beyond the
plan's policy) leaves no output behind. An invalid plan exits 1, like ``validate``.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["run"]


@click.command("run")
@click.argument("plan", type=click.Path(dir_okay=False, path_type=str))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Folder for claim.json (default: <plan dir>/out).")
@click.option("--no-report", is_flag=True, envvar="EVALSPEC_NO_REPORT",
              help="Write only claim.json; skip the HTML/PDF report (env EVALSPEC_NO_REPORT=1).")
@click.option("--format", "report_format", type=click.Choice(["both", "html", "pdf"]), default="both",
              show_default=True, help="Report rendered next to the claim (see `evalspec report`).")
@click.option("--locked", is_flag=True,
              help="Refuse (exit 1, nothing written) unless the plan has a lock it still matches.")
def run(plan: str, out_dir: str | None, no_report: bool, report_format: str, locked: bool = False) -> None:
    """Run PLAN on its results and write the claim record (claim.json).

    Reads the results the plan names, checks them, applies the attempt rule, runs every
    analysis, applies the preregistered decision rule and writes the claim record.
    SOURCE_DATE_EPOCH fixes the claim's creation time, so the same inputs give the
    same bytes. The HTML and PDF report are rendered next to the claim unless
    --no-report is given.
    """
    from evalspec.run import default_out_dir, run_plan, write_claim

    if locked:  # audit engineer: refuse before anything is read or written
        from evalspec.audit.gate import require_locked

        require_locked(plan)
    command = ["evalspec", "run", plan] + (["--out", out_dir] if out_dir is not None else [])
    claim = run_plan(plan, command=command)
    from evalspec.ledger import append_entry, seal_run

    claim, ledger_entry = seal_run(claim, plan)  # the claim records its own SHA-256 and its ledger entry
    if ledger_entry is not None:
        append_entry(plan, ledger_entry)  # the ledger of looks, beside the plan (before the claim: no unrecorded look)
    target = Path(out_dir) if out_dir is not None else default_out_dir(plan)
    path = write_claim(claim, target)
    decision = claim["decision"]
    click.echo(f"verdict: {decision['verdict']} - {decision['headline']}")
    for dev in claim["deviations"]:
        click.echo(f"deviation: {dev['code']}: {dev['message']}")
    click.echo(f"claim written to {path}")
    if not no_report:
        from evalspec.commands.report import formats_for
        from evalspec.report import load_claim, render

        for report_path in render(load_claim(path), path.parent, formats_for(report_format)):
            click.echo(f"report written to {report_path}")
