"""``evalspec audit CLAIM``: is the claim what the plan promised, and does it reproduce?

Exit 0 when every check passes (warnings allowed), 1 when any check fails, 2 on bad input
(no such claim, a plan that cannot be found, a data file that does not exist).
``--all DIR`` audits every ``claim.json`` under DIR and prints the history (:mod:`evalspec.history`):
one row per claim with its date, period, estimate, interval, verdict and audit status, grouped by
study and in time order, flagging a model-version change, a plan change or intervals that do not
overlap between consecutive claims; ``--report`` also writes ``history.html`` (into ``--out`` or DIR).
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["audit"]


@click.command("audit")
@click.argument("claim", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--plan", "plan", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The plan the claim was made from (default: the plan the claim names, beside its out/ folder).")
@click.option("--data", "data", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Results file(s) the claim was made from (repeat the option); default: the files the plan names.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.option("--all", "all_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Audit every claim.json under this folder: one row per claim (date, period, estimate, interval, "
                   "verdict, audit status, changes since the previous claim); with --report also history.html.")
@click.option("--report", "report", is_flag=True, help="Also write audit.html / audit.pdf next to the claim.")
@click.option("--format", "report_format", type=click.Choice(["both", "html", "pdf"]), default="both",
              show_default=True, help="With --report: which files to write.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="With --report: folder for the audit report (default: the claim's folder).")
@click.option("--no-reproduce", is_flag=True, help="Skip re-running the analyses on the data.")
@click.option("--verify", "verify", type=click.Path(path_type=Path, dir_okay=False), default=None,
              metavar="ALLOWED_SIGNERS",
              help="Check the SSH signature of the claim's statement (claim.intoto.json.sig, from `evalspec attest` "
                   "and `ssh-keygen -Y sign -n evalspec`) against this OpenSSH allowed-signers file.")
@click.option("--verbose", "-v", is_flag=True, help="Show the evidence of passing checks too.")
def audit(claim: Path | None, plan: Path | None, data: tuple[Path, ...], as_json: bool, all_dir: Path | None,
          report: bool, report_format: str, out_dir: Path | None, no_reproduce: bool, verbose: bool,
          verify: Path | None = None) -> None:
    """Audit CLAIM (a claim.json) against its plan, lock and ledger; given the data, reproduce it.

    Each check prints PASS, WARN or FAIL with one sentence and its evidence: the plan and
    lock hashes, the plan locked before the first result, the declared analyses, one
    attempt rule, no pooling across model versions, missing outcomes within policy, units
    within max_units, the decision date, looks within the planned number, an untampered
    claim and ledger, the data fingerprints and a re-run with the same seeds.
    """
    from evalspec.audit import render as show
    from evalspec.audit.core import audit_claim
    from evalspec.errors import CheckFailed, EvalspecError, InputError

    if all_dir is not None:
        if claim is not None:
            raise InputError("give either CLAIM or --all DIR, not both")
        if not all_dir.is_dir():
            raise InputError(f"--all {all_dir}: no such folder")
        paths = sorted(all_dir.rglob("claim.json"))
        if not paths:
            raise InputError(f"--all {all_dir}: no claim.json under this folder")
        rows: list = []
        for p in paths:
            try:
                rows.append((p, audit_claim(p, reproduce=not no_reproduce, verify=verify)))
            except EvalspecError as exc:
                rows.append((p, str(exc).splitlines()[0]))
        from evalspec.history import history_html, history_rows, history_table

        history = {str(h.claim): h for h in history_rows(rows)}
        if as_json:
            import json

            items = json.loads(show.to_json([(p, r) if isinstance(r, str) else r for p, r in rows], as_list=True))
            for item, (p, _) in zip(items, rows, strict=True):
                item["history"] = history[str(p)].to_dict()
            click.echo(json.dumps(items, indent=2, ensure_ascii=False))
        else:
            click.echo(history_table(list(history.values())))
        if report:
            from evalspec._atomic import write_text_atomic

            target = out_dir if out_dir is not None else all_dir
            target.mkdir(parents=True, exist_ok=True)
            write_text_atomic(target / "history.html", history_html(list(history.values())))
            click.echo(f"history report written to {target / 'history.html'}", err=as_json)
        if any(isinstance(r, str) for _, r in rows):
            raise InputError(f"{sum(isinstance(r, str) for _, r in rows)} claim(s) could not be audited")
        failed = [p for p, r in rows if not r.ok]
        if failed:
            raise CheckFailed(f"{len(failed)} of {len(rows)} claims fail the audit")
        return
    if claim is None:
        raise InputError("give a claim.json to audit, or --all DIR")
    rep = audit_claim(claim, plan=plan, data=[str(d) for d in data] or None, reproduce=not no_reproduce,
                      verify=verify)
    if as_json:
        click.echo(show.to_json([rep]), nl=False)
    else:
        click.echo(show.text(rep, verbose=verbose))
    if report:
        formats = {"both": ("html", "pdf"), "html": ("html",), "pdf": ("pdf",)}[report_format]
        for path in show.render_audit(rep, out_dir if out_dir is not None else claim.parent, formats):
            click.echo(f"audit report written to {path}", err=as_json)
    if not rep.ok:
        raise CheckFailed(f"{len(rep.failed)} audit check(s) failed: {', '.join(c.id for c in rep.failed)}")
