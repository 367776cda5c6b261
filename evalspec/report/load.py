"""Read a claim record from disk, with located errors for files that are not claims.

The report renders whatever a well-formed claim holds, so the checks here are the minimum
that makes rendering meaningful: the file exists, is UTF-8 JSON, is an object, says
``claim_format: 1`` and has a ``decision``. Each failure is an :class:`~evalspec.errors.InputError`
(exit code 2) naming the file, the place, and what to do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalspec.errors import Diagnostic, InputError

__all__ = ["SUPPORTED_FORMATS", "load_claim"]

SUPPORTED_FORMATS = (1,)


def _fail(path: Path, message: str, *, line: int | None = None, col: int | None = None,
          key: str | None = None, hint: str | None = None, **got: Any) -> InputError:
    diag = Diagnostic(file=str(path), message=message, line=line, col=col, key=key, hint=hint,
                      got=got.get("got"), has_got="got" in got)
    return InputError(diag.headline(), [diag])


def _first_line_is_object(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    try:
        return isinstance(json.loads(first), dict)
    except ValueError:
        return False


def load_claim(path: str | Path) -> dict[str, Any]:
    """Parse ``path`` as a claim record; raise :class:`InputError` if it is not one."""
    path = Path(path)
    if not path.exists():
        raise _fail(path, "no such file", hint="give the claim.json that `evalspec run` wrote")
    if path.is_dir():
        raise _fail(path, "is a folder, not a claim file", hint="give the path of claim.json inside it")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise _fail(path, f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise _fail(path, f"is not UTF-8 text (byte {exc.start})",
                    hint="a claim is the JSON file `evalspec run` writes") from None
    try:
        claim = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and _first_line_is_object(text):
            raise _fail(path, "is not a claim record: it looks like a results file (JSON lines, one record per line)",
                        hint="give the claim.json that `evalspec run PLAN` writes from these results") from None
        if path.suffix.lower() in (".yaml", ".yml") or text.lstrip().startswith(("evalspec:", "#")):
            raise _fail(path, "is not a claim record: it looks like a plan (YAML)",
                        hint="run the plan first (`evalspec run PLAN`), then report on the claim.json it writes") \
                from None
        raise _fail(path, f"is not valid JSON: {exc.msg}", line=exc.lineno, col=exc.colno,
                    hint="the file may be truncated or edited by hand; re-run `evalspec run`") from None
    if not isinstance(claim, dict):
        raise _fail(path, "is JSON but not a claim record (expected an object at the top level)",
                    got=type(claim).__name__)
    if "claim_format" not in claim:
        raise _fail(path, "is JSON but not a claim record", key="claim_format",
                    hint="missing key; is this a plan, a lock file or results? give the claim.json from `evalspec run`")
    if claim["claim_format"] not in SUPPORTED_FORMATS:
        raise _fail(path, f"claim format not supported by this evalspec (supports {SUPPORTED_FORMATS})",
                    key="claim_format", got=claim["claim_format"], hint="upgrade evalspec or re-run the plan")
    for key, kind in (("decision", dict), ("plan", dict), ("analyses", list)):
        if key in claim and not isinstance(claim[key], kind):
            raise _fail(path, f"must be a JSON {'object' if kind is dict else 'array'}", key=key,
                        got=type(claim[key]).__name__)
    if "decision" not in claim:
        raise _fail(path, "the claim has no decision", key="decision", hint="re-run `evalspec run` to write a complete claim")
    return claim
