"""``evalspec report CLAIM.json``: render a claim record to HTML and/or PDF.

The report is written next to the claim unless ``--out`` names a folder. Files are written
atomically, so an interrupted run never leaves half a report. A missing, unreadable or
corrupt claim (or a JSON file that is not a claim) is an input error (exit code 2) with the
file and place named; WeasyPrint and matplotlib load only after the claim has been read.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["FORMAT_CHOICES", "formats_for", "report"]

#: ``--format`` value -> formats passed to :func:`evalspec.report.render`.
FORMAT_CHOICES: dict[str, tuple[str, ...]] = {"html": ("html",), "pdf": ("pdf",), "both": ("html", "pdf")}


def formats_for(choice: str) -> tuple[str, ...]:
    """The render formats of a ``--format`` choice (``html``, ``pdf`` or ``both``)."""
    return FORMAT_CHOICES[choice]


@click.command("report")
@click.argument("claim", type=click.Path(path_type=Path, dir_okay=True, exists=False))
@click.option("--format", "fmt", type=click.Choice(sorted(FORMAT_CHOICES) + ["markdown"]), default="both",
              show_default=True, help="Which report to write; markdown prints a short summary (for a pull-request "
              "comment or a CI step summary) on stdout, or writes summary.md into --out.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder for report.html / report.pdf (default: the claim's folder).")
def report(claim: Path, fmt: str, out_dir: Path | None) -> None:
    """Render CLAIM (a claim.json written by `evalspec run`) to HTML and/or PDF."""
    import hashlib

    from evalspec._atomic import OutputSet
    from evalspec.errors import InputError
    from evalspec.report import render
    from evalspec.report.load import read_claim

    record, _, text = read_claim(claim)
    if fmt == "markdown":
        return _markdown(claim, record, out_dir)
    target = out_dir if out_dir is not None else claim.parent
    if target.exists() and not target.is_dir():
        raise InputError(f"{target}: --out must be a folder, and this is a file")
    # the same set discipline as `run`: staged, then moved in under the folder's lock, and only
    # while the claim beside it is still the one the report was made from
    beside = claim if target.resolve() == claim.parent.resolve() else None
    with OutputSet(target, names=("report.html", "report.pdf")) as outputs:
        assert outputs.staging is not None
        render(record, outputs.staging, formats_for(fmt))
        written = outputs.commit_beside(beside, hashlib.sha256(text.encode("utf-8")).hexdigest() if beside else None)
    for path in written:
        click.echo(f"wrote {path}")


def _markdown(claim: Path, record: dict, out_dir: Path | None) -> None:  # type: ignore[type-arg]
    """Print (or write ``summary.md``) the Markdown summary, with the audit's status (numbers not re-run)."""
    from evalspec.report.markdown import markdown_summary

    text = markdown_summary(record, audit=audit_status(claim))
    if out_dir is None:
        click.echo(text, nl=False)
        return
    from evalspec._atomic import write_text_atomic
    from evalspec.errors import InputError

    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"{out_dir}: --out must be a folder, and this is a file")
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out_dir / "summary.md", text)
    click.echo(f"wrote {out_dir / 'summary.md'}")


def audit_status(claim: Path) -> dict:  # type: ignore[type-arg]
    """The audit of ``claim`` without the re-run, as a dict for the summary; ``{"problem": ...}`` if it cannot run."""
    from evalspec.audit.core import audit_claim
    from evalspec.errors import EvalspecError

    try:
        report = audit_claim(claim, reproduce=False)
    except EvalspecError as exc:
        return {"problem": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    data = report.to_dict()
    checks = [c for c in data["checks"] if c.get("id") != "reproduction"]  # not re-run here: said once, in words
    counts = {s: sum(c.get("status") == s for c in checks) for s in ("pass", "warning", "fail")}
    return {**data, "checks": checks, "counts": counts, "reproduced": False}
