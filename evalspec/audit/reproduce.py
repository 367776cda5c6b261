"""Reproduction: re-run the claim's own plan on its data with the same seeds and compare every number.

The plan re-run is the copy the claim holds (``plan.source``), not the plan on disk today, so
the question answered is "does this claim follow from its inputs?". The plan and the
results files are placed in a temporary folder at the relative paths the claim recorded;
the pipeline runs in memory with the claim's own creation time (``SOURCE_DATE_EPOCH``), and
the *whole* claim is compared after its own rounding (12 significant digits): numbers,
verdict and wording, the plan's copy (hash, registered plan, question, title), the stated
and detected limits, the deviations, coverage, seeds and data fingerprints. "Reproduces"
means the same digits and the same words. Only what a re-run elsewhere cannot give again is
left out (:data:`NOT_COMPARED`): the seal and ledger reference, where the plan file was and
the lock beside it (checked against the lock itself), the command line, and the software
versions (a difference there is named, and cannot tell a forged version from another
machine). Differences are named by their key (``analyses[1].result.low``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from evalspec.audit.model import AuditInputs, CheckResult

__all__ = ["reproduce", "compare", "COMPARED", "NOT_COMPARED"]

#: Parts of the claim a re-run must reproduce exactly (everything but :data:`NOT_COMPARED`).
COMPARED = ("analyses", "decision", "coverage", "seeds", "data", "plan", "deviations", "systematic_limits",
            "claim_format", "created")
#: What a re-run in a temporary folder cannot give again, and where each is checked instead.
NOT_COMPARED = {
    "integrity": "the claim's seal and its ledger entry (the claim and ledger checks)",
    "command": "the command line as typed",
    "plan.path": "where the plan file was (the plan check compares that file)",
    "plan.lock": "the lock beside the plan (the lock checks compare the lock itself)",
    "process": "the process record, made from the lock and ledger beside the plan (the process checks make it again)",
    "software": "library versions (named below when they differ)",
    "evalspec_version": "the evalspec version (named below when it differs)",
}
#: Deviations the command line or the plan's folder adds, which a re-run elsewhere cannot see.
_PLACE_DEVIATIONS = frozenset({"plan_not_locked", "lock_mismatch", "data_outside_plan_folder"})


def compare(a: Any, b: Any, path: str = "", out: list[str] | None = None, limit: int = 20) -> list[str]:
    """Keys whose values differ between two JSON values, as ``key: claim X, re-run Y``."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in a:
                out.append(f"{sub}: not in the claim, re-run gives {_short(b[k])}")
            elif k not in b:
                out.append(f"{sub}: claim has {_short(a[k])}, the re-run has none")
            else:
                compare(a[k], b[k], sub, out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            compare(x, y, f"{path}[{i}]", out, limit)
    elif a != b:
        out.append(f"{path}: claim {_short(a)}, re-run {_short(b)}")
    return out


def _short(v: Any, limit: int = 60) -> str:
    text = json.dumps(v, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _layout(root: Path, plan_name: str, rels: list[str]) -> Path:
    """A plan folder inside ``root`` deep enough that every ``../`` path stays inside ``root``."""
    depth = 0
    for rel in rels:
        up = 0
        for part in PurePosixPath(rel.replace("\\", "/")).parts:
            up = up + 1 if part == ".." else max(0, up - 1) if part != "." else up
            depth = max(depth, up)
    folder = root.joinpath(*[f"d{i}" for i in range(depth)]) if depth else root
    folder.mkdir(parents=True, exist_ok=True)
    return folder / plan_name


def _without_look_caveats(claim: dict[str, Any]) -> dict[str, Any]:
    """The claim without the caveats ``run`` adds from the ledger of looks (a re-run in memory has no ledger)."""
    from evalspec.decision import LEDGER_CAVEATS

    decision = claim.get("decision")
    if isinstance(decision, dict) and isinstance(decision.get("caveats"), list):
        kept = [c for c in decision["caveats"] if not (isinstance(c, dict) and c.get("code") in LEDGER_CAVEATS)]
        claim = {**claim, "decision": {**decision, "caveats": kept}}
    return claim


def _copy_side_files(registered: Any, plan_path: Path | None, folder: Path) -> None:
    """Copy the files the plan names beside it (a sequential design's case order, a labelled subset's draw) into
    the re-run's folder; their SHA-256 in the plan is checked by the re-run itself."""
    if not isinstance(registered, dict) or plan_path is None:
        return
    names = [((registered.get("stopping") or {}).get("order") or {}).get("file")]
    names += [((a or {}).get("labelled_subset") or {}).get("file") for a in registered.get("analyses") or []
              if isinstance(a, dict)]
    for name in names:
        if not isinstance(name, str) or not name or Path(name).is_absolute() or ".." in Path(name).parts:
            continue
        source = plan_path.parent / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, folder / name)


def reproduce(inputs: AuditInputs) -> CheckResult:
    from evalspec.claim import dumps
    from evalspec.errors import EvalspecError
    from evalspec.run import run_plan

    title = "Numbers reproduce"
    claim = inputs.claim
    plan = claim.get("plan") or {}
    source = plan.get("source")
    if not isinstance(source, str) or inputs.data is None:
        return CheckResult("reproduction", title, "warning",
                           "The claim holds no copy of its plan, so it cannot be re-run.")
    name = Path(str(plan.get("path") or "plan.yaml")).name
    tmp = Path(tempfile.mkdtemp(prefix="evalspec-audit-"))
    try:
        plan_file = _layout(tmp, name, [r for r, _ in inputs.data])
        plan_file.write_text(source, encoding="utf-8")
        for rel, path in inputs.data:
            target = (plan_file.parent / rel).resolve()
            if tmp.resolve() not in target.parents:
                return CheckResult("reproduction", title, "warning",
                                   f"The results path {rel!r} recorded in the claim leaves the plan's folder tree; "
                                   "the run was not reproduced.")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        _copy_side_files(plan.get("registered"), inputs.plan_path, plan_file.parent)
        from evalspec.results import OUTSIDE_ALLOWED

        token = OUTSIDE_ALLOWED.set(True)  # the files sit where the claim recorded them, even outside the plan folder
        try:
            with _created_at(claim.get("created")):
                again = run_plan(plan_file, command=list(claim.get("command") or []))
        except EvalspecError as exc:
            return CheckResult("reproduction", title, "fail",
                               "Re-running the claim's plan on its data fails, so its numbers cannot be reproduced.",
                               [str(exc).splitlines()[0]], basis="recomputed")
        finally:
            OUTSIDE_ALLOWED.reset(token)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rerun = _comparable(json.loads(dumps(again)))
    stored = _comparable(_without_look_caveats(json.loads(dumps(claim))))
    diffs: list[str] = []
    for key in sorted(set(stored) | set(rerun)):
        compare(stored.get(key), rerun.get(key), key, diffs)
    versions = []
    sw_claim, sw_now = dict(claim.get("software") or {}), dict(again.get("software") or {})
    sw_claim.setdefault("evalspec", claim.get("evalspec_version"))
    for lib in sorted(set(sw_claim) | set(sw_now)):
        if sw_claim.get(lib) != sw_now.get(lib):
            versions.append(f"{lib}: claim {sw_claim.get(lib)}, now {sw_now.get(lib)}")
    if diffs:
        numbers = any(d.split(".", 1)[0].split("[", 1)[0] in ("analyses", "decision", "coverage", "seeds", "data")
                      for d in diffs)
        what = "different numbers" if numbers else "a different claim (its words or its plan's copy differ)"
        return CheckResult("reproduction", title, "fail",
                           f"Re-running the claim's plan on its data with the same seeds gives {what}: the claim "
                           "does not follow from its plan and data.", diffs + versions, basis="recomputed")
    used = stored.get("seeds") or []
    if isinstance(used, dict):  # claim format 2: {"used": [...], "declared_unused": [...]}
        used = used.get("used") or []
    seeds = ", ".join(str(s.get("seed")) for s in used if isinstance(s, dict)) or "none"
    return CheckResult("reproduction", title, "pass" if not versions else "warning",
                       "Re-running the claim's plan on its data with the same seeds gives the same claim, digit for "
                       "digit and word for word." + ("" if not versions else
                                                     " The software versions differ from the claim's (whether "
                                                     "recorded honestly cannot be told from the files)."),
                       [f"seeds: {seeds}", "compared: the whole claim except " + ", ".join(NOT_COMPARED)]
                       + versions, basis="recomputed")


def _comparable(claim: dict[str, Any]) -> dict[str, Any]:
    """The claim without what a re-run elsewhere cannot give again (:data:`NOT_COMPARED`)."""
    out = {k: v for k, v in claim.items() if k not in NOT_COMPARED}
    plan = out.get("plan")
    if isinstance(plan, dict):
        out["plan"] = {k: v for k, v in plan.items() if f"plan.{k}" not in NOT_COMPARED}
    devs = out.get("deviations")
    if isinstance(devs, list):
        out["deviations"] = [d for d in devs if not (isinstance(d, dict) and d.get("code") in _PLACE_DEVIATIONS)]
    return out


@contextlib.contextmanager
def _created_at(created: Any) -> Iterator[None]:
    """Run with ``SOURCE_DATE_EPOCH`` at the claim's creation time (so its date checks see the same day)."""
    import datetime as dt

    old = os.environ.get("SOURCE_DATE_EPOCH")
    try:
        t = dt.datetime.strptime(str(created), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
        os.environ["SOURCE_DATE_EPOCH"] = str(int(t.timestamp()))
    except ValueError:
        pass  # an unreadable time: the re-run's own time, and the comparison names the difference
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old
