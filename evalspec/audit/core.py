"""Find and read what an audit needs: the claim, its plan and lock, the ledger, the data, git history.

:func:`audit_claim` gathers the inputs once and runs every check of
:mod:`evalspec.audit.checks` in order. Bad input (no such claim, a plan that cannot be
found) raises :class:`~evalspec.errors.InputError` (exit 2); problems the audit *finds*
(a changed plan, an edited lock or ledger) are check results, never exceptions.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from evalspec.audit.model import AuditInputs, AuditReport

__all__ = ["audit_claim", "gather", "find_plan"]


def find_plan(claim: dict[str, Any], claim_path: Path) -> Path | None:
    """The plan the claim names: as recorded (relative to the working folder), or beside/above the claim."""
    recorded = str((claim.get("plan") or {}).get("path") or "")
    if not recorded:
        return None
    name = Path(recorded).name
    for cand in (Path(recorded), claim_path.parent.parent / name, claim_path.parent / name):
        if cand.is_file():
            return cand
    return None


def _load_current_plan(inputs: AuditInputs) -> None:
    from evalspec.errors import EvalspecError
    from evalspec.plan import canonical_data, load_plan, read_lock

    assert inputs.plan_path is not None
    try:
        loaded = load_plan(inputs.plan_path, display=str(inputs.plan_path))
        inputs.loaded = loaded
        inputs.plan_now = canonical_data(loaded)
    except EvalspecError as exc:
        inputs.plan_problem = str(exc).splitlines()[0]
    try:
        inputs.lock = read_lock(inputs.plan_path)
    except EvalspecError as exc:
        inputs.lock_problem = str(exc).splitlines()[0]


def _git_first_commit(plan_path: Path) -> tuple[str | None, bool | None]:
    """(ISO time of the plan file's first commit, whether git tracks it); (None, None) outside git."""
    folder = plan_path.resolve().parent
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, timeout=20, env=env,
                                  check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout if proc.returncode == 0 else None

    inside = git("rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != "true":
        return None, None
    name = plan_path.resolve().name
    log = git("log", "--follow", "--diff-filter=A", "--format=%cI", "--", name)
    times = [t for t in (log or "").split() if t]
    if not times:
        return None, False
    return times[-1], True


def _data_inputs(inputs: AuditInputs, data: list[str] | None) -> None:
    files = (inputs.claim.get("data") or {}).get("files") or []
    recorded = [str(f.get("path")) for f in files if isinstance(f, dict) and f.get("path")]
    if data:
        inputs.data_given = True
        given = [Path(d) for d in data]
        from evalspec._files import special_kind

        missing = [str(g) for g in given if not g.is_file()]
        special = [f"{g} ({special_kind(g.stat().st_mode)})" for g in given if g.exists() and not g.is_file()]
        if special:
            from evalspec.errors import InputError

            raise InputError(f"--data: not a regular file: {', '.join(special)}")
        if missing:
            from evalspec.errors import InputError

            raise InputError(f"--data: no such file: {', '.join(missing)}")
        pairs: list[tuple[str, Path]] = []
        if len(given) == 1 and len(recorded) == 1:
            pairs = [(recorded[0], given[0])]
        else:
            by_name = {Path(r).name: r for r in recorded}
            for g in given:
                r = by_name.get(g.name)
                if r is None:
                    inputs.data_problem = (f"{g} matches none of the claim's results files "
                                           f"({', '.join(recorded) or 'none recorded'}); give files with those names")
                    return
                pairs.append((r, g))
            absent = sorted(set(recorded) - {r for r, _ in pairs})
            if absent:
                inputs.data_problem = f"the claim was made from {', '.join(absent)} too, and it was not given"
                return
        inputs.data = pairs + _companions(files, pairs)
        return
    from evalspec.results.lake import is_uri

    inputs.remote = [r for r in recorded if is_uri(r)]  # object-store objects: re-read where they are
    recorded = [r for r in recorded if not is_uri(r)]
    if inputs.remote and not recorded:
        inputs.data = []
        return
    if inputs.plan_path is None or not recorded:
        return
    base = inputs.plan_path.parent
    found = [(r, base / r) for r in recorded]
    if all(p.is_file() for _, p in found):
        inputs.data = found + _companions(files, found)


def _companions(files: list[Any], pairs: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """The other files a tool log was read with (an lm-eval results file beside its samples file).

    They are listed in the log's provenance (``data.files[].provenance.files``, paths relative to
    the plan's folder) and looked for at the same place relative to the data file found on disk,
    so a re-run has everything the run read and the fingerprint check covers them too.
    """
    on_disk = dict(pairs)
    have = set(on_disk)
    out: list[tuple[str, Path]] = []
    for f in files:
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) or f["path"] not in on_disk:
            continue
        main = f["path"]
        for extra in (f.get("provenance") or {}).get("files") or []:
            rel = extra.get("path") if isinstance(extra, dict) else None
            if not isinstance(rel, str) or rel in have:
                continue
            beside = on_disk[main].parent / os.path.relpath(rel, os.path.dirname(main) or ".")
            if beside.is_file():
                out.append((rel, beside))
                have.add(rel)
    return out


def gather(claim_path: str | Path, *, plan: str | Path | None = None, data: list[str] | None = None,
           reproduce: bool = True, verify: str | Path | None = None) -> AuditInputs:
    """Read the claim and locate its plan, lock, ledger and data."""
    from evalspec.errors import Diagnostic, InputError
    from evalspec.ledger import ledger_path, read_ledger
    from evalspec.report.load import read_claim

    cpath = Path(claim_path)
    claim, raw, text = read_claim(cpath)
    inputs = AuditInputs(claim=claim, claim_path=cpath, reproduce=reproduce, claim_raw=raw, claim_text=text)
    from evalspec.process import claimed_plan

    inputs.plan_claimed = claimed_plan(claim)
    if plan is not None:
        ppath = Path(plan)
        if not ppath.is_file():
            raise InputError(f"--plan {plan}: no such file", [Diagnostic(file=str(plan), message="no such file",
                                                                         hint="give the plan the claim was made from")])
    else:
        found = find_plan(claim, cpath)
        if found is None:
            recorded = (claim.get("plan") or {}).get("path")
            raise InputError(f"{cpath}: cannot find the plan it was made from ({recorded!r})", [Diagnostic(
                file=str(cpath), key="plan.path", message="the plan named by the claim is not there",
                got=recorded, has_got=True, hint="pass it with --plan PLAN")])
        ppath = found
    inputs.plan_path = ppath
    _load_current_plan(inputs)
    inputs.ledger_path = ledger_path(ppath)
    try:
        inputs.ledger = read_ledger(inputs.ledger_path) if inputs.ledger_path.exists() else None
    except InputError as exc:
        inputs.ledger_problem = str(exc).splitlines()[0]
    inputs.git_first_commit, inputs.git_tracked = _git_first_commit(ppath)
    from evalspec.audit.evidence import git_view

    inputs.git = git_view(ppath)
    if verify is not None:
        vpath = Path(verify)
        if not vpath.is_file():
            raise InputError(f"--verify {verify}: no such file", [Diagnostic(
                file=str(verify), message="no such allowed-signers file",
                hint="give an OpenSSH allowed-signers file: one line 'PRINCIPAL KEYTYPE KEY' per trusted key")])
        inputs.verify = vpath
    _data_inputs(inputs, data)
    return inputs


def _safely(check: Any, inputs: AuditInputs) -> Any:
    """Run one check; a claim too damaged for it is a failed check, not an internal error."""
    from evalspec.audit.model import CheckResult

    try:
        return check(inputs)
    except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
        name = getattr(check, "__name__", "check")
        return CheckResult(name, name.replace("_", " ").capitalize(), "fail",
                           "This check could not be made: the claim (or its ledger or lock) is damaged or "
                           "was written by an incompatible evalspec.", [f"{type(exc).__name__}: {exc}"])


def audit_claim(claim_path: str | Path, *, plan: str | Path | None = None, data: list[str] | None = None,
                reproduce: bool = True, verify: str | Path | None = None) -> AuditReport:
    """Audit one claim against its plan (and, given the data, reproduce it; given ``verify``, its signature)."""
    from evalspec.audit.checks import CHECKS

    inputs = gather(claim_path, plan=plan, data=data, reproduce=reproduce, verify=verify)
    checks = list(CHECKS)
    if inputs.verify is not None:
        from evalspec.audit.attest import verify_signature

        checks.append(verify_signature)
    results = [_safely(check, inputs) for check in checks]
    claim = inputs.claim
    return AuditReport(claim_path=inputs.claim_path, plan_path=inputs.plan_path,
                       plan_id=(claim.get("plan") or {}).get("id"),
                       verdict=(claim.get("decision") or {}).get("verdict"), checks=results,
                       claim_bytes=None if inputs.claim_text is None else inputs.claim_text.encode("utf-8"))
