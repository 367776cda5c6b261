"""The ledger of looks: every ``evalspec run`` appends one hash-chained line beside the plan.

``.evalspec/ledger.jsonl`` sits in the plan's folder and is meant to be committed with the
plan. Each line is one JSON object (sorted keys, no spaces) recording a look at the data:

* ``seq`` (1, 2, ...), ``time`` (the claim's creation time), ``plan_id``, ``plan_file``,
  ``plan_hash`` and ``lock_hash`` (the hash recorded in the lock, or null);
* ``data``: path, SHA-256 and rows of every results file read (the data fingerprints);
* ``units_seen`` (independent units and their name), ``cases``, ``verdict`` and, for a
  sequential design, the monitoring ``action``; for a recurring evaluation the plan's
  ``period`` (each period has its own look budget; docs/recurring.md);
* ``claim_sha256``: the self-hash of the claim that run wrote (see :func:`claim_sha256`);
* ``prev_sha256``: SHA-256 of the previous line's text (64 zeros for the first line), so
  a removed, reordered or edited line breaks the chain at the line after it;
* ``entry_sha256``: SHA-256 of this entry without that field, so an edit of the last line
  (which no later line covers) is detectable too.

A hash chain is tamper-*evident*, not tamper-proof: someone who rewrites every line after
an edit can rebuild it. Committing the ledger (git keeps the history) and the claim (which
records its own entry's ``seq`` and ``prev_sha256``) anchors it. :func:`verify` names the
first broken entry and what is wrong with it. Recording a look (seal the claim with its
process record, append its entry, under the ledger's lock) is :mod:`evalspec.looks`.

The claim records its own SHA-256 under ``integrity.sha256``: the SHA-256 of the claim's
canonical text (:func:`evalspec.claim.dumps`) with that one field removed (:func:`seal_claim`,
:func:`claim_sha256`). Any later edit of the claim changes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "GENESIS",
    "LEDGER_FORMAT",
    "LedgerEntry",
    "LedgerProblem",
    "LedgerCheck",
    "append_entry",
    "claim_sha256",
    "entry_line",
    "entry_self_hash",
    "ledger_path",
    "new_entry",
    "read_ledger",
    "normal_body",
    "seal_claim",
    "sealed_normal",
    "verify",
    "verify_claim_hash",
    "look_number",
    "with_look_caveat",
]

LEDGER_FORMAT = "evalspec-ledger/1"
GENESIS = "0" * 64
LEDGER_DIR = ".evalspec"
LEDGER_NAME = "ledger.jsonl"


def ledger_path(plan_path: str | Path) -> Path:
    """``<plan dir>/.evalspec/ledger.jsonl``."""
    return Path(plan_path).parent / LEDGER_DIR / LEDGER_NAME


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- the claim's own hash -------------------------------------------------------------------


def _claim_text(claim: dict[str, Any]) -> str:
    """The text the claim's hash is taken over: normalised values, sorted keys, compact separators.

    Compact (not the indented file text) because the indented encoder is pure Python: at a
    million results the claim lists thousands of cases and the hash would cost a second.
    """
    from evalspec.claim import normalize

    return _compact(normalize(claim))


def _compact(normal: dict[str, Any]) -> str:
    """:func:`_claim_text` of a claim normalised already."""
    return json.dumps(normal, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def claim_sha256(claim: dict[str, Any]) -> str:
    """SHA-256 (hex) of the claim's canonical text without ``integrity.sha256``.

    Accepts the claim as written (a dict read back from ``claim.json``) or as built in
    memory; the canonical text rounds floats the same way either way.
    """
    body = dict(claim)  # shallow: only `integrity` is replaced, nothing is mutated
    integrity = body.get("integrity")
    if isinstance(integrity, dict):
        integrity = dict(integrity)
        integrity.pop("sha256", None)
        body["integrity"] = integrity
    return _sha(_claim_text(body))


def seal_claim(claim: dict[str, Any], *, ledger: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return a copy of ``claim`` with ``integrity`` = ``{sha256, of, ledger}`` filled in."""
    return sealed_normal(claim, ledger=ledger)[0]


def normal_body(claim: dict[str, Any]) -> dict[str, Any]:
    """:func:`~evalspec.claim.normalize` of ``claim`` without its ``integrity``: all of it that sealing leaves alone."""
    from evalspec.claim import normalize

    return normalize({k: v for k, v in claim.items() if k != "integrity"})


def sealed_normal(claim: dict[str, Any], *, ledger: dict[str, Any] | None = None,
                  body: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`seal_claim`'s copy of ``claim``, and that copy normalised (:func:`~evalspec.claim.normalize`).

    The claim is normalised once: its self-hash is taken over the normalised copy's compact text,
    and ``claim.json``'s text is written from the same copy (``dumps(normal, normalized=True)``).
    ``body``: :func:`normal_body` of ``claim``, when made already (a look sealed twice).
    """
    from evalspec.claim import normalize

    out = dict(claim)
    out["integrity"] = {
        "of": "SHA-256 of this claim's canonical JSON (sorted keys, compact separators, floats to 12 "
        "significant digits) without integrity.sha256",
        "ledger": ledger,
    }
    normal = dict(normal_body(claim) if body is None else body)
    normal["integrity"] = normalize(out["integrity"])
    digest = _sha(_compact(normal))
    out["integrity"]["sha256"] = normal["integrity"]["sha256"] = digest
    return out, normal


def verify_claim_hash(claim: dict[str, Any]) -> tuple[bool | None, str | None, str]:
    """(matches, recorded, actual): ``matches`` is None when the claim records no hash."""
    actual = claim_sha256(claim)
    integrity = claim.get("integrity")
    recorded = integrity.get("sha256") if isinstance(integrity, dict) else None
    if not isinstance(recorded, str):
        return None, None, actual
    return recorded == actual, recorded, actual


# -- entries ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerEntry:
    """One parsed line of the ledger."""

    line: int
    text: str
    data: dict[str, Any]

    @property
    def seq(self) -> Any:
        return self.data.get("seq")

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


def entry_line(entry: dict[str, Any]) -> str:
    """The canonical text of an entry (one line, no newline)."""
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def entry_self_hash(entry: dict[str, Any]) -> str:
    body = {k: v for k, v in entry.items() if k != "entry_sha256"}
    return _sha(entry_line(body))


def new_entry(claim: dict[str, Any], plan_file: str, previous: list[LedgerEntry]) -> dict[str, Any]:
    """The entry for ``claim`` after ``previous`` (without ``claim_sha256`` / ``entry_sha256`` yet)."""
    from evalspec.analyses.registry import is_sequential

    plan = claim.get("plan") or {}
    lock = plan.get("lock") or {}
    cov = claim.get("coverage") or {}
    units = cov.get("independent_units") or {}
    seq_action = None
    for a in claim.get("analyses") or []:
        offers = a.get("offers") if isinstance(a, dict) else None
        if isinstance(offers, dict) and isinstance(offers.get("sequential"), dict):
            seq_action = offers["sequential"].get("action")
        res = a.get("result") if isinstance(a, dict) else None
        if seq_action is None and isinstance(res, dict) and isinstance(res.get("action"), str) \
                and is_sequential(a.get("kind")):
            seq_action = res["action"]
    return {
        "ledger_format": LEDGER_FORMAT,
        "seq": len(previous) + 1,
        "time": claim.get("created"),
        "plan_id": plan.get("id"),
        "plan_file": plan_file,
        "plan_hash": plan.get("hash"),
        "lock_hash": lock.get("hash") if lock.get("exists") else None,
        "lock_matches": lock.get("matches"),
        "data": [{"path": f.get("path"), "sha256": f.get("sha256"), "rows": f.get("rows")}
                 for f in (claim.get("data") or {}).get("files") or []],
        "units_seen": {"count": units.get("count"), "unit": units.get("unit")},
        "cases": (cov.get("cases") or {}).get("total"),
        "verdict": (claim.get("decision") or {}).get("verdict"),
        "action": seq_action,
        "evalspec_version": claim.get("evalspec_version"),
        "prev_sha256": _sha(previous[-1].text) if previous else GENESIS,
    } | ({"period": period} if isinstance(period := (plan.get("registered") or {}).get("period"), str) else {})


def look_number(claim: dict[str, Any], plan_file: str, previous: list[LedgerEntry]) -> int:
    """Which look at the data this claim is: distinct data states of this plan's looks, this one included.

    The same count as the process check "Looks within the planned number" (:mod:`evalspec.process`),
    so the verdict's caveat and the audit agree: running the same data again is not a new look;
    new data is.
    """
    plan = claim.get("plan") or {}

    def state(data: Any) -> str:
        items = data if isinstance(data, list) else []  # a hand-edited entry may hold anything
        return repr([(d.get("path"), d.get("sha256")) for d in items if isinstance(d, dict)])

    period = (plan.get("registered") or {}).get("period")  # a recurring evaluation: each period its own budget
    period = period if isinstance(period, str) else None
    seen: list[str] = []
    for e in previous:
        if e.get("plan_file") == plan_file and e.get("plan_id") == plan.get("id") and e.get("period") == period:
            key = state(e.get("data"))
            if key not in seen:
                seen.append(key)
    files = (claim.get("data") or {}).get("files") if isinstance(claim.get("data"), dict) else None
    mine = state([{"path": f.get("path"), "sha256": f.get("sha256")}
                  for f in (files if isinstance(files, list) else []) if isinstance(f, dict)])
    return seen.index(mine) + 1 if mine in seen else len(seen) + 1


def with_look_caveat(claim: dict[str, Any], plan_file: str, previous: list[LedgerEntry]) -> dict[str, Any]:
    """``claim`` with a verdict caveat when this look goes beyond the plan's number of looks."""
    from evalspec.decision import looks_caveat

    registered = (claim.get("plan") or {}).get("registered") or {}
    stop = registered.get("stopping") or {}
    level = float((registered.get("decision") or {}).get("confidence_level", 0.95))
    sequential = (claim.get("decision") or {}).get("sequential") is not None
    caveat = looks_caveat(look_number(claim, plan_file, previous), int(stop.get("looks", 1) or 1),
                          str(stop.get("rule", "fixed")), level, sequential)
    decision = claim.get("decision")
    if caveat is None or not isinstance(decision, dict):
        return claim
    out = dict(claim)
    out["decision"] = {**decision, "caveats": [*(decision.get("caveats") or []), caveat.model_dump(mode="json")]}
    return out


def append_entry(plan_path: str | Path, entry: dict[str, Any]) -> Path:
    """Append ``entry`` to the plan's ledger (the whole file is rewritten atomically)."""
    from evalspec._atomic import write_text_atomic
    from evalspec._files import read_text
    from evalspec.errors import Diagnostic, InputError

    path = ledger_path(plan_path)
    old = read_text(path, what="the ledger of looks", hint="restore the ledger from version control",
                    missing_ok=True) or ""
    try:
        if old and not old.endswith("\n"):
            old += "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, old + entry_line(entry) + "\n")
    except OSError as exc:
        raise InputError(f"{path}: cannot record this look in the ledger", [Diagnostic(
            file=str(path), message=f"cannot write the ledger of looks: {exc.strerror or type(exc).__name__}",
            hint="run from a folder where the plan's .evalspec/ folder is writable")]) from None
    return path


def read_ledger(path: str | Path) -> list[LedgerEntry]:
    """Parsed lines of a ledger (empty when the file does not exist).

    Raises :class:`~evalspec.errors.InputError` naming the line when a line is not a JSON
    object.
    """
    from evalspec._files import loads_json, read_text
    from evalspec.errors import Diagnostic, InputError

    p = Path(path)
    hint = "restore the ledger from version control"
    text = read_text(p, what="the ledger of looks", display=str(p), hint=hint, missing_ok=True)
    if text is None:
        return []
    out = []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        data = loads_json(line, display=str(p), what=f"ledger line {i}", hint=hint, line=i)
        if not isinstance(data, dict):
            raise InputError(f"{p}: line {i} is not a JSON object", [Diagnostic(
                file=str(p), line=i, message=f"ledger line {i} is not a JSON object",
                hint="restore the ledger from version control")])
        wrong = _field_problem(data)
        if wrong is not None:
            raise InputError(f"{p}: line {i}: {wrong}", [Diagnostic(
                file=str(p), line=i, message=f"ledger line {i}: {wrong} (the entry was edited or damaged)",
                hint="restore the ledger from version control")])
        out.append(LedgerEntry(line=i, text=line, data=data))
    return out


_TEXT = (str, type(None))
#: The type each field of an entry must have, when present (readers rely on them).
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "seq": (int,), "time": _TEXT, "plan_id": _TEXT, "plan_file": _TEXT, "plan_hash": _TEXT, "lock_hash": _TEXT,
    "lock_matches": (bool, type(None)), "data": (list, type(None)), "units_seen": (dict, type(None)),
    "cases": (int, type(None)), "verdict": _TEXT, "action": _TEXT, "evalspec_version": _TEXT,
    "prev_sha256": _TEXT, "claim_sha256": _TEXT, "entry_sha256": _TEXT, "period": _TEXT,
}


def _field_problem(entry: dict[str, Any]) -> str | None:
    """What is wrong with a field's type in a ledger entry, or None."""
    for key, types in _FIELD_TYPES.items():
        if key not in entry:
            continue
        v = entry[key]
        if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
            return f"{key} must be {' or '.join('null' if t is type(None) else t.__name__ for t in types)}"
    for d in entry.get("data") or []:
        if not isinstance(d, dict):
            return "data must be a list of objects"
    units = entry.get("units_seen")
    if isinstance(units, dict) and not isinstance(units.get("count"), (int, type(None))):
        return "units_seen.count must be a number"
    return None


# -- verification ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerProblem:
    """One broken entry: the line, its sequence number and what is wrong."""

    line: int
    seq: Any
    message: str


@dataclass(frozen=True)
class LedgerCheck:
    """Result of :func:`verify`."""

    entries: list[LedgerEntry]
    problems: list[LedgerProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(entries: list[LedgerEntry] | str | Path) -> LedgerCheck:
    """Check the chain; every problem names the entry (line and ``seq``) where it shows.

    * an entry whose content no longer matches its own ``entry_sha256`` was edited;
    * a ``seq`` that is not the previous one plus one means entries were removed (a gap) or
      reordered (a step back);
    * a ``prev_sha256`` that is not the SHA-256 of the line before means the line before
      was edited, or something was removed or moved in between.
    """
    if not isinstance(entries, list):
        entries = read_ledger(entries)
    problems: list[LedgerProblem] = []
    prev_text: str | None = None
    prev_seq: Any = 0
    for e in entries:
        label = f"entry {e.seq} (line {e.line})"
        recorded = e.get("entry_sha256")
        if recorded != entry_self_hash(e.data):
            problems.append(LedgerProblem(e.line, e.seq, f"{label} was edited: its content no longer matches "
                                          "its recorded SHA-256"))
        seq = e.seq
        if isinstance(seq, int) and isinstance(prev_seq, int):
            if seq > prev_seq + 1:
                missing = f"entry {prev_seq + 1}" if seq == prev_seq + 2 else f"entries {prev_seq + 1}-{seq - 1}"
                problems.append(LedgerProblem(e.line, seq, f"{missing} missing before {label}: deleted from the ledger"))
            elif seq <= prev_seq:
                problems.append(LedgerProblem(e.line, seq, f"{label} follows entry {prev_seq}: the entries were "
                                              "reordered or duplicated"))
        elif not isinstance(seq, int):
            problems.append(LedgerProblem(e.line, seq, f"{label} has no valid sequence number"))
        expected = GENESIS if prev_text is None else _sha(prev_text)
        if e.get("prev_sha256") != expected:
            before = "the start of the ledger" if prev_text is None else f"the line before it (line {e.line - 1})"
            problems.append(LedgerProblem(e.line, seq, f"{label} does not chain to {before}: its prev_sha256 is "
                                          f"{str(e.get('prev_sha256'))[:12]}..., the SHA-256 there is "
                                          f"{expected[:12]}... (an entry was edited, removed or moved)"))
        prev_text = e.text
        prev_seq = seq if isinstance(seq, int) else prev_seq
    return LedgerCheck(entries, problems)
