"""``evalspec run PLAN [--out DIR]``: run the plan on its results and write ``claim.json``.

The claim goes to ``<plan dir>/out/claim.json`` unless ``--out`` names another folder. It
is written atomically and only after every check and analysis succeeded, so a refused
run (exit 2: bad results, an unpooled model-version change, missing outcomes beyond the
plan's policy) leaves no output behind. An invalid plan exits 1, like ``validate``.

The claim and its reports are written as one set (:class:`evalspec._atomic.OutputSet`):
first into a hidden staging folder, then moved into place after every output of the
previous run is removed, holding a lock on the folder. So ``--no-report`` never leaves an
old report beside a new claim, a report that fails leaves no stale report, ``kill -9``
leaves part of one run's set (never a mix), and two runs into one folder take turns.
Nothing is printed before the outputs are in place, so ``evalspec run plan.yaml | head -1``
loses nothing.

Results files outside the plan's folder (``../data.jsonl``, an absolute path, a symbolic
link leading out) are refused unless ``--allow-outside-data`` is given; the claim then
records each such file as a deviation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
@click.option("--allow-outside-data", "allow_outside", is_flag=True, envvar="EVALSPEC_ALLOW_OUTSIDE_DATA",
              help="Read results files outside the plan's folder (refused by default; recorded in the claim).")
@click.option("--save-posterior", is_flag=True,
              help="Also write each beta_binomial analysis's posterior as ArviZ InferenceData "
                   "(posterior-<label>.nc next to the claim; needs the mcmc extra).")
def run(plan: str, out_dir: str | None, no_report: bool, report_format: str, locked: bool = False,
        allow_outside: bool = False, save_posterior: bool = False) -> None:
    """Run PLAN on its results and write the claim record (claim.json).

    Reads the results the plan names, checks them, applies the attempt rule, runs every
    analysis, applies the preregistered decision rule and writes the claim record.
    SOURCE_DATE_EPOCH fixes the claim's creation time, so the same inputs give the
    same bytes. The HTML and PDF report are rendered next to the claim unless
    --no-report is given.
    """
    if locked:  # audit engineer: refuse before anything is read or written
        from evalspec.audit.gate import require_locked

        require_locked(plan)
    from evalspec.results.ahead import read_ahead

    with read_ahead(plan):  # the results file's scan and Arrow's parse begin now, while the run's modules are imported
        _run(plan, out_dir, no_report, report_format, allow_outside, save_posterior)


def _run(plan: str, out_dir: str | None, no_report: bool, report_format: str, allow_outside: bool,
         save_posterior: bool) -> None:
    from evalspec.run import default_out_dir, run_plan, write_claim
    from evalspec._atomic import OutputSet
    from evalspec.results import OUTSIDE_ALLOWED, OUTSIDE_READ

    import os

    command = ["evalspec", "run", os.path.normpath(plan)] + (["--out", os.path.normpath(out_dir)]
                                                          if out_dir is not None else [])
    command += ["--allow-outside-data"] if allow_outside else []
    token, outside = OUTSIDE_ALLOWED.set(allow_outside), []
    read_token = OUTSIDE_READ.set(outside)
    import contextlib

    from evalspec.analyses import beta_binomial as _bb  # --save-posterior (BAYES engineer's minimal edit)

    if save_posterior and (why := _bb.posterior_writer_missing()):
        raise click.UsageError(why)
    posteriors: list = []
    try:
        with _bb.collect_posteriors() if save_posterior else contextlib.nullcontext(posteriors) as posteriors:
            claim = run_plan(plan, command=command)
    finally:
        OUTSIDE_ALLOWED.reset(token)
        OUTSIDE_READ.reset(read_token)
    if outside:  # recorded in the claim (before the ledger seals it)
        claim["deviations"].append({
            "code": "data_outside_plan_folder",
            "message": "Results were read from outside the plan's folder, as allowed by --allow-outside-data: "
            + ", ".join(dict.fromkeys(outside)) + " (relative to the plan's folder)."})
    from evalspec.looks import look_recorded

    # the ledger of looks beside the plan gets this run's entry (before the claim: no unrecorded look);
    # the claim records its own SHA-256 and its ledger entry (normalised once for the hash and the text)
    claim, normal = look_recorded(claim, plan)
    target = Path(out_dir) if out_dir is not None else default_out_dir(plan)
    replaced = _previous_claim(target)
    old_reports = [n for n in ("report.html", "report.pdf") if (target / n).is_file()] if no_report else []
    report_error: BaseException | None = None
    with OutputSet(target) as outputs:
        assert outputs.staging is not None
        staged = write_claim(claim, outputs.staging, normal=normal)
        if not no_report:
            from evalspec.commands.report import formats_for
            from evalspec.report import load_claim, render

            try:
                render(load_claim(staged), outputs.staging, formats_for(report_format))
            except Exception as exc:  # noqa: BLE001 - the claim stands alone; no stale report stays beside it
                report_error = exc
        if posteriors:  # staged with the claim: part of the same set
            _bb.save_posteriors(posteriors, outputs.staging)
        written = outputs.commit()
    _say(claim, written, target, replaced, old_reports)
    _step_summary(next((p for p in written if p.name == "claim.json"), None))
    if report_error is not None:
        click.echo("the report could not be written; the claim stands alone (no earlier report was kept)", err=True)
        raise report_error


def _say(claim: dict[str, Any], written: list[Path], target: Path, replaced: str | None, old_reports: list[str]) -> None:
    """What the run did, on the terminal: verdict, deviations, a sequential design's action, files, notes."""
    decision = claim["decision"]
    click.echo(f"verdict: {decision['verdict']} - {decision['headline']}")
    for dev in claim["deviations"]:
        click.echo(f"deviation: {dev['code']}: {dev['message']}")
    for a in claim["analyses"]:  # a sequential design says whether to go on collecting (its offers.sequential)
        res = (a.get("offers") or {}).get("sequential") or {}
        if res.get("action"):
            words = {"continue": "continue", "stop_decided": "stop - decided", "stop_futility": "stop - futility"}
            click.echo(f"sequential: look {res.get('look')} of {res.get('planned_looks')}: "
                       f"{words.get(res['action'], res['action'])} - {res.get('message')}")
    for path in written:
        kind = "claim" if path.name == "claim.json" else "posterior" if path.suffix == ".nc" else "report"
        click.echo(f"{kind} written to {path}")
    if replaced:
        click.echo(f"note: replaced the earlier claim in {target} ({replaced}); its look stays in the ledger "
                   "(.evalspec/ledger.jsonl). To keep every claim, give each run its own folder: --out "
                   f"{target}/<run id>", err=True)
    if old_reports:  # one run's outputs are one set: an old report never stays beside a new claim
        click.echo(f"note: --no-report removed the earlier {' and '.join(old_reports)} with the earlier claim (the "
                   f"outputs of one run are one set); render this claim's: evalspec report {target / 'claim.json'}",
                   err=True)


def _previous_claim(target: Path) -> str | None:
    """A few words about the claim a run into ``target`` replaces (None when there is none), so it is never silent."""
    path = target / "claim.json"
    if not path.is_file() or path.is_symlink():
        return None
    try:
        with open(path, "rb") as fh:
            data = _claim_parts(fh)
    except (OSError, ValueError, RecursionError):
        return "not a readable claim"
    if not isinstance(data, dict):
        return "not a readable claim"
    decision = data.get("decision") if isinstance(data.get("decision"), dict) else {}
    integrity = data.get("integrity") if isinstance(data.get("integrity"), dict) else {}
    ledger = integrity.get("ledger") if isinstance(integrity.get("ledger"), dict) else {}
    words = [f"made {data.get('created')}" if isinstance(data.get("created"), str) else "",
             f"verdict {decision.get('verdict')}" if isinstance(decision.get("verdict"), str) else "",
             f"ledger entry {ledger.get('seq')}" if isinstance(ledger.get("seq"), int) else ""]
    from evalspec.errors import one_line

    return one_line(", ".join(w for w in words if w)[:300]) or "not a readable claim"


#: The most of a claim read whole, and the tail read of a larger one (for the parts after its analyses).
_WHOLE_BYTES, _TAIL_BYTES = 64 << 20, 16 << 20
#: A claim larger than this is described from its tail first, read whole (up to 64 MiB) only where its tail is
#: not as evalspec writes it: a 58 MB claim took 0.5 s to parse whole on every re-run, its tail 0.015 s.
_TAIL_FIRST_BYTES = 4 << 20
_HEAD = b'{\n  "analyses": '


def _claim_parts(fh: Any) -> Any:
    """A claim file's parts; of a claim of more than 4 MiB, those after its analyses where its tail allows.

    evalspec writes a claim's parts in name order, indented by two spaces, ``analyses`` first: it is
    most of a long claim's bytes (every disagreeing case of a paired comparison: 522 MB at 5M cases).
    Such a claim is described from its last 16 MiB, parsed from ``claim_format`` (the part after
    ``analyses``) on, when the parts there come in name order. A newline, two spaces and a quote
    start a top-level part only (JSON writes a newline in a text as two characters). A claim whose
    tail is not so is read whole, up to 64 MiB; a larger one is "not a readable claim".
    """
    import json

    head = fh.read(len(_HEAD))
    size = fh.seek(0, 2)  # (the size)
    if (size > _TAIL_FIRST_BYTES or size > _WHOLE_BYTES) and head == _HEAD:
        parts = _tail_parts(fh, size)
        if parts is not None:
            return parts
    if size > _WHOLE_BYTES:
        raise ValueError("a claim of more than 64 MiB not as evalspec writes it")
    fh.seek(0)
    return json.loads(fh.read(_WHOLE_BYTES + 1))


def _tail_parts(fh: Any, size: int) -> dict[str, Any] | None:
    """The top-level parts from ``claim_format`` on, parsed from the file's last 16 MiB; None where they are not
    there in name order, or not JSON."""
    import json

    fh.seek(max(0, size - _TAIL_BYTES))
    tail = fh.read(_TAIL_BYTES)
    at = tail.find(b'\n  "claim_format": ')
    if at < 0:
        return None
    try:
        parts = json.loads(b"{" + tail[at:])
    except (ValueError, RecursionError):
        return None
    if isinstance(parts, dict) and list(parts) == sorted(parts) and next(iter(parts), None) == "claim_format":
        return parts
    return None


def _step_summary(claim_path: Path | None) -> None:
    """In GitHub Actions (``$GITHUB_STEP_SUMMARY`` set): append the claim's Markdown summary to the job's page.

    The file is the runner's, appended to as GitHub documents; a summary that cannot be written is
    said on stderr and changes nothing else (the claim is already in place).
    """
    import os

    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target or claim_path is None:
        return
    from evalspec.commands.report import audit_status
    from evalspec.report import load_claim
    from evalspec.report.markdown import markdown_summary

    text = markdown_summary(load_claim(claim_path), audit=audit_status(claim_path))
    try:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
    except OSError as exc:
        click.echo(f"evalspec: could not append the summary to $GITHUB_STEP_SUMMARY ({target}): "
                   f"{exc.strerror or exc}", err=True)
