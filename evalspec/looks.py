"""Record a look: seal a run's claim with its process record and append its ledger entry, under the ledger's lock.

:func:`record_look` is what ``evalspec run`` calls once a claim is made: it takes the plan's
ledger lock (:mod:`evalspec.ledger`, the ledger's format and reading), computes the claim's
process record on the ledger as read under that lock (:mod:`evalspec.process`), seals the
claim and appends its entry. :func:`seal_run` is the part inside the lock (nothing written).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalspec.ledger import (
    LEDGER_DIR,
    LEDGER_NAME,
    append_entry,
    entry_self_hash,
    ledger_path,
    new_entry,
    normal_body,
    read_ledger,
    sealed_normal,
    with_look_caveat,
)

__all__ = ["look_recorded", "record_look", "seal_run"]


def seal_run(claim: dict[str, Any], plan_path: str | Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The sealed claim and its ledger entry, ready to write (nothing is written here): :func:`_sealed_run`'s."""
    sealed, entry, _ = _sealed_run(claim, plan_path)
    return sealed, entry


def _sealed_run(claim: dict[str, Any], plan_path: str | Path
                ) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]:
    """The sealed claim, its ledger entry and the sealed claim normalised, ready to write (nothing is written here).

    The entry is ``None`` when the ledger already holds this very claim (a re-run with the
    same inputs, seeds and ``SOURCE_DATE_EPOCH``): nothing new was seen.

    The claim records where its entry will sit (``integrity.ledger``: file, ``seq``,
    ``prev_sha256``); the entry records the claim's self-hash. Raises ``InputError`` when
    the existing ledger cannot be read.
    """
    from evalspec.process import attach_process

    path = ledger_path(plan_path)
    previous = read_ledger(path)
    claim = with_look_caveat(claim, Path(plan_path).name, previous)
    if "process" in claim:  # a run's claim: its process checks on the ledger as read under the lock
        claim = attach_process(claim, plan_path, previous)
    entry = new_entry(claim, Path(plan_path).name, previous)
    try:
        from evalspec.plan import read_lock

        lock = read_lock(plan_path)
        entry["lock_hash"] = None if lock is None else lock.hash
    except Exception:  # noqa: BLE001 - an unreadable lock is already a deviation in the claim
        entry["lock_hash"] = None
    # the same run again (same plan, data, seeds and creation time: the same claim) is not a new
    # look: it gets the entry it had, so identical inputs still give identical bytes. Only an entry
    # with this claim's creation time can hold this claim, so re-runs of the same data at other
    # times (CI on every commit) are not each hashed again: the claim is hashed once per match
    body = normal_body(claim)  # (normalised once, however many times it is sealed)
    for old in previous:
        if old.get("time") == entry["time"] and old.get("plan_hash") == entry["plan_hash"] \
                and old.get("data") == entry["data"] and old.get("plan_file") == entry["plan_file"]:
            again, normal = sealed_normal(claim, ledger=_claim_ledger_ref(old.seq, old.get("prev_sha256")), body=body)
            if again["integrity"]["sha256"] == old.get("claim_sha256"):
                return again, None, normal
    sealed, normal = sealed_normal(claim, ledger=_claim_ledger_ref(entry["seq"], entry["prev_sha256"]), body=body)
    entry["claim_sha256"] = sealed["integrity"]["sha256"]
    entry["entry_sha256"] = entry_self_hash(entry)
    return sealed, entry, normal


def _claim_ledger_ref(seq: Any, prev: Any) -> dict[str, Any]:
    return {"file": f"{LEDGER_DIR}/{LEDGER_NAME}", "seq": seq, "prev_sha256": prev}


def record_look(claim: dict[str, Any], plan_path: str | Path) -> dict[str, Any]:
    """Seal ``claim`` and append its entry, holding a lock on the ledger so two runs cannot interleave.

    Returns the sealed claim (to be written next). Raises ``InputError`` (exit 2) when the
    ledger cannot be read or written.
    """
    return look_recorded(claim, plan_path)[0]


def look_recorded(claim: dict[str, Any], plan_path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`record_look`'s sealed claim, and that claim normalised (:func:`evalspec.claim.normalize`), from which
    its self-hash was taken and ``claim.json``'s text is written: a long claim is normalised once, not twice."""
    from contextlib import ExitStack

    from evalspec.errors import Diagnostic, InputError

    from evalspec._files import refuse_symlinked_folder

    path = ledger_path(plan_path)
    refuse_symlinked_folder(path.parent, what="the plan's ledger folder .evalspec")
    with ExitStack() as stack:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path.parent, os.O_RDONLY)  # lock the folder: the ledger file itself is replaced on append
            stack.callback(os.close, fd)
        except OSError as exc:
            raise InputError(f"{path}: cannot record this look in the ledger", [Diagnostic(
                file=str(path), message=f"cannot write the ledger of looks: {exc.strerror or type(exc).__name__}",
                hint="run from a folder where the plan's .evalspec/ folder is writable")]) from None
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
            stack.callback(fcntl.flock, fd, fcntl.LOCK_UN)
        except (ImportError, OSError):  # no POSIX locks here: the append stays atomic, the order unguarded
            pass
        sealed, entry, normal = _sealed_run(claim, plan_path)
        if entry is not None:
            append_entry(plan_path, entry)
    return sealed, normal
