"""The lock file: a record that *this* plan was fixed before the results were seen.

``evalspec lock plan.yaml`` writes ``plan.yaml.lock.json`` beside the plan (the plan's
file name plus ``.lock.json``) holding

* ``hash``: the canonical SHA-256 of the plan (see :mod:`evalspec.plan.canonical`);
* ``locked_at``: UTC time of locking (``SOURCE_DATE_EPOCH`` honoured, for reproducible builds);
* ``evalspec_version``;
* ``git``: ``{"commit", "dirty", "plan_uncommitted"}`` when the plan is inside a git
  work tree (``null`` otherwise, or when git is not installed);
* ``plan``: the canonical plan itself, so a later change can be listed key by key;
* ``history``: earlier locks replaced with ``--force`` (hash, time, version), so a
  deliberate re-lock stays visible to an auditor;
* ``existing_data`` (written by ``evalspec lock``): whether the results the plan names
  existed when it was locked (OSF's "existing data" question), with their SHA-256.

Locking an unchanged plan again is a no-op. Locking a *changed* plan is refused
(:class:`~evalspec.errors.CheckFailed`, exit 1) with the list of changed keys unless
``force=True``. The file is written atomically (temporary file + ``os.replace``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalspec._atomic import write_text_atomic
from evalspec._version import __version__
from evalspec.errors import CheckFailed, Diagnostic, InputError
from evalspec.plan.canonical import Change, canonical_data, diff_keys, hash_canonical

__all__ = [
    "LOCK_FORMAT",
    "LOCK_SUFFIX",
    "LockRecord",
    "LockStatus",
    "LockResult",
    "lock_path",
    "read_lock",
    "check_lock",
    "write_lock",
    "atomic_write_text",
]

LOCK_FORMAT = "evalspec-lock/1"
LOCK_SUFFIX = ".lock.json"


@dataclass(frozen=True)
class LockRecord:
    """A parsed lock file."""

    path: Path
    hash: str
    locked_at: str
    evalspec_version: str
    plan: dict[str, Any]
    git: dict[str, Any] | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class LockStatus:
    """How a plan relates to its lock: ``state`` is ``"missing"``, ``"matches"`` or ``"differs"``."""

    state: str
    lock: LockRecord | None
    hash: str
    changes: list[Change] = field(default_factory=list)

    @property
    def exists(self) -> bool:
        return self.lock is not None

    @property
    def matches(self) -> bool:
        return self.state == "matches"


@dataclass(frozen=True)
class LockResult:
    """What :func:`write_lock` did: ``action`` is ``"created"``, ``"unchanged"`` or ``"relocked"``."""

    action: str
    path: Path
    record: LockRecord
    changes: list[Change] = field(default_factory=list)


def lock_path(plan_path: str | os.PathLike[str]) -> Path:
    """``plan.yaml`` -> ``plan.yaml.lock.json`` (beside the plan)."""
    p = Path(plan_path)
    return p.with_name(p.name + LOCK_SUFFIX)


def read_lock(plan_path: str | os.PathLike[str]) -> LockRecord | None:
    """The lock of the plan at ``plan_path``, or ``None`` when there is none.

    Raises :class:`InputError` (exit 2) when the lock file exists but is unreadable,
    not JSON, or lacks a required field.
    """
    from evalspec._files import loads_json, read_text

    path = lock_path(plan_path)
    name = str(path)
    hint = "restore it from version control, or re-lock with --force"
    text = read_text(path, what="the lock file", display=name, hint=hint, limit=MAX_LOCK_BYTES, missing_ok=True)
    if text is None:
        return None
    data = loads_json(text, display=name, what="the lock file", hint=hint)
    problems = _lock_problems(data)
    if problems:
        raise InputError(f"{name}: not an evalspec lock file", [
            Diagnostic(file=name, message=f"not an evalspec lock file: {p}", hint=hint) for p in problems])
    return LockRecord(
        path=path, hash=data["hash"], locked_at=data["locked_at"], evalspec_version=data["evalspec_version"],
        plan=data["plan"], git=data.get("git"), history=list(data.get("history") or []), raw=data,
    )


#: Largest lock file read (bytes): a lock holds one plan, and plans are at most a few MB.
MAX_LOCK_BYTES = 64 * 1024**2

_GIT_KEYS = {"commit": (str, type(None)), "dirty": (bool,), "plan_uncommitted": (bool,)}


def _lock_problems(data: Any) -> list[str]:
    """What makes ``data`` not a lock record evalspec wrote (each field's type, the times' form)."""
    if not isinstance(data, dict):
        return ["must be a JSON object"]
    problems = []
    if data.get("format") != LOCK_FORMAT:
        problems.append(f"format must be {LOCK_FORMAT!r} (got {data.get('format')!r})")
    for key, typ in (("hash", str), ("locked_at", str), ("evalspec_version", str), ("plan", dict)):
        if not isinstance(data.get(key), typ):
            problems.append(f"{key} is missing or not a {typ.__name__}")
    if isinstance(data.get("locked_at"), str) and _parse_utc(data["locked_at"]) is None:
        problems.append(f"locked_at is not a UTC time YYYY-MM-DDTHH:MM:SSZ (got {data['locked_at'][:40]!r})")
    if isinstance(data.get("plan"), dict) and not _valid_plan(data["plan"]):
        problems.append("plan is not a valid plan (the lock's copy of the plan was edited)")
    problems += _git_problems(data.get("git"), "git")
    history = data.get("history", [])
    if history is not None and not isinstance(history, list):
        problems.append(f"history must be a list of earlier locks (got {type(history).__name__})")
    elif history:
        for i, h in enumerate(history):
            if not isinstance(h, dict):
                problems.append(f"history[{i}] must be an object (got {type(h).__name__})")
                continue
            for key in ("hash", "locked_at"):
                if not isinstance(h.get(key), str):
                    problems.append(f"history[{i}].{key} is missing or not a str")
            problems += _git_problems(h.get("git"), f"history[{i}].git")
    return problems


def _valid_plan(plan: dict[str, Any]) -> bool:
    """Whether the lock's stored plan still validates as a plan (every later check reads its fields)."""
    from pydantic import ValidationError

    from evalspec.plan.model import Plan

    try:
        Plan.model_validate(plan)
    except (ValidationError, ValueError, TypeError, RecursionError):
        return False
    return True


def _git_problems(git: Any, where: str) -> list[str]:
    if git is None:
        return []
    if not isinstance(git, dict):
        return [f"{where} must be an object or null (got {type(git).__name__})"]
    return [f"{where}.{k} must be {' or '.join('null' if t is type(None) else t.__name__ for t in types)}"
            for k, types in _GIT_KEYS.items() if k in git and not isinstance(git[k], types)]


def _parse_utc(text: str) -> _dt.datetime | None:
    try:
        t = _dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return t.replace(tzinfo=_dt.UTC)


def check_lock(loaded: Any) -> LockStatus:
    """Compare a loaded plan (:class:`~evalspec.plan.load.LoadedPlan`) with its lock, if any."""
    data = canonical_data(loaded)
    digest = hash_canonical(data)
    lock = read_lock(loaded.path)
    if lock is None:
        return LockStatus("missing", None, digest)
    if lock.hash == digest:
        return LockStatus("matches", lock, digest)
    return LockStatus("differs", lock, digest, diff_keys(lock.plan, data))


def write_lock(loaded: Any, *, force: bool = False, now: _dt.datetime | None = None,
               existing_data: dict[str, Any] | None = None) -> LockResult:
    """Write (or refuse to rewrite) the lock of a loaded plan. See the module docstring.

    The read-compare-write happens holding a lock on the plan's folder
    (:func:`evalspec._atomic.folder_lock`), so of two ``evalspec lock`` runs at once the
    second sees what the first wrote: a plan edited in between is refused as changed (or,
    with ``--force``, re-locked with the first lock in its history), never silently lost.
    """
    from evalspec._atomic import folder_lock

    with folder_lock(lock_path(loaded.path).parent or Path(".")):
        return _write_lock(loaded, force=force, now=now, existing_data=existing_data)


def _write_lock(loaded: Any, *, force: bool, now: _dt.datetime | None,
                existing_data: dict[str, Any] | None = None) -> LockResult:
    path = lock_path(loaded.path)
    data = canonical_data(loaded)
    digest = hash_canonical(data)
    try:
        previous = read_lock(loaded.path)
    except InputError:
        if not force:
            raise
        previous = None
    changes: list[Change] = []
    history: list[dict[str, Any]] = []
    if previous is not None:
        if previous.hash == digest:
            return LockResult("unchanged", path, previous)
        changes = diff_keys(previous.plan, data)
        if not force:
            raise CheckFailed(_refusal(loaded.display, previous, changes), [])
        history = previous.history + [{
            "hash": previous.hash, "locked_at": previous.locked_at, "evalspec_version": previous.evalspec_version,
            "git": previous.git,
        } | ({"existing_data": previous.raw["existing_data"]} if "existing_data" in previous.raw else {})]
    record = {
        "format": LOCK_FORMAT,
        "plan_file": Path(loaded.path).name,
        "plan_id": loaded.plan.id,
        "hash": digest,
        "hash_of": "SHA-256 of the canonical JSON of the validated plan (defaults filled in, keys sorted)",
        "locked_at": _timestamp(now),
        "evalspec_version": __version__,
        "git": git_state(Path(loaded.path)),
        "history": history,
        "plan": data,
    }
    if existing_data is not None:  # OSF's "existing data" declaration (evalspec.commands.validate_data)
        record["existing_data"] = existing_data
    atomic_write_text(path, json.dumps(record, indent=2, ensure_ascii=False, sort_keys=False) + "\n")
    written = LockRecord(path=path, hash=digest, locked_at=record["locked_at"], evalspec_version=__version__,
                         plan=data, git=record["git"], history=history, raw=record)
    return LockResult("relocked" if previous is not None else "created", path, written, changes)


def _refusal(display: str, previous: LockRecord, changes: list[Change]) -> str:
    lines = [f"{display}: changed since it was locked at {previous.locked_at} ({previous.hash}); refusing to re-lock"]
    lines += [f"  {c.describe()}" for c in changes] or ["  (no key differs; the evalspec version changed the canonical form)"]
    lines.append("Re-lock only for a deliberate, recorded change: evalspec lock --force " + display)
    return "\n".join(lines)


def _timestamp(now: _dt.datetime | None) -> str:
    if now is None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        if epoch:
            try:
                now = _dt.datetime.fromtimestamp(int(epoch), tz=_dt.UTC)
            except (ValueError, OverflowError, OSError):
                raise InputError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970 (got {epoch!r})", []) from None
        else:
            now = _dt.datetime.now(tz=_dt.UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=_dt.UTC)
    return now.astimezone(_dt.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_state(plan_path: Path) -> dict[str, Any] | None:
    """``{"commit", "dirty", "plan_uncommitted"}`` of the git work tree holding the plan, or ``None``.

    ``commit`` is ``None`` in a repository without commits. ``dirty``: tracked files
    differ from HEAD. ``plan_uncommitted``: the plan file itself is modified or untracked.
    None when git is missing or the plan is not in a work tree.
    """
    folder = plan_path.resolve().parent
    inside = _git(folder, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != "true":
        return None
    head = _git(folder, "rev-parse", "--verify", "-q", "HEAD")
    status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    plan_status = _git(folder, "status", "--porcelain", "--untracked-files=all", "--", plan_path.resolve().name)
    return {
        "commit": head.strip() if head and head.strip() else None,
        "dirty": bool(status and status.strip()),
        "plan_uncommitted": bool(plan_status and plan_status.strip()),
    }


def _git(cwd: Path, *args: str) -> str | None:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20, env=env,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :mod:`evalspec._atomic`)."""
    write_text_atomic(path, text)

