"""``evalspec diff CLAIM_A CLAIM_B``: plan keys, data and every number of two claims side by side.

Exit status: 0 the two claims were read and compared (whether or not they differ); 2 bad input
(a missing, corrupt or foreign file). Text shows the verdicts, the changed plan keys and data
files and the numbers that differ (``--all``: every number); ``--json`` and ``--format markdown``
show every number.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["diff"]


@click.command("diff")
@click.argument("claim_a", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("claim_b", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True,
              help="Output format (markdown: for a pull-request comment).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--all", "all_numbers", is_flag=True, help="Text: list every number, not only those that differ.")
def diff(claim_a: Path, claim_b: Path, fmt: str, as_json: bool, all_numbers: bool) -> None:
    """Compare CLAIM_A with CLAIM_B: plan keys changed, data changed, every number and the verdict."""
    import json

    from evalspec.diff import diff_claims, to_markdown, to_text
    from evalspec.report.load import load_claim

    a, b = load_claim(claim_a), load_claim(claim_b)
    result = diff_claims(a, b, (str(claim_a), str(claim_b)))
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str))
    elif fmt == "markdown":
        click.echo(to_markdown(result), nl=False)
    else:
        click.echo(to_text(result, all_numbers=all_numbers), nl=False)
