"""Read a claim record from disk, with located errors for files that are not claims.

The file must exist, be UTF-8 JSON, be an object, say the ``claim_format`` this evalspec
reads, and validate against the claim model (:mod:`evalspec.claim_model`), so a hand-edited
claim with a wrong inner type is refused with the key path named instead of crashing a plot
or a template. Each failure is an :class:`~evalspec.errors.InputError` (exit code 2) naming
the file, the place, and what to do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalspec.errors import Diagnostic, InputError

__all__ = ["SUPPORTED_FORMATS", "load_claim", "read_claim", "validate_claim"]

SUPPORTED_FORMATS = (2,)


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
    return read_claim(path)[0]


def read_claim(path: str | Path) -> tuple[dict[str, Any], dict[str, Any], str]:
    """``(claim as validated, the JSON object as written, the file's text)`` (the audit reads all three)."""
    from evalspec._files import loads_json, read_regular

    path = Path(path)
    if path.is_dir():
        raise _fail(path, "is a folder, not a claim file", hint="give the path of claim.json inside it")
    raw = read_regular(path, what="the claim", display=str(path),
                       hint="give the claim.json that `evalspec run` wrote")
    assert raw is not None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        from evalspec.plan.source import binary_kind

        what = binary_kind(raw[:8])
        raise _fail(path, f"is not a claim record: it is {what}" if what else f"is not UTF-8 text (byte {exc.start})",
                    hint="a claim is the JSON file `evalspec run` writes (out/claim.json beside the plan)") from None
    try:
        json.loads(text, object_pairs_hook=lambda pairs: None)  # syntax only: a located message for each kind
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
    except (ValueError, RecursionError):
        pass  # loads_json names it
    claim = loads_json(text, display=str(path), what="the claim",
                       hint="the claim was edited by hand or is damaged; re-run `evalspec run`")
    if not isinstance(claim, dict):
        raise _fail(path, "is JSON but not a claim record (expected an object at the top level)",
                    got=type(claim).__name__)
    if "claim_format" not in claim:
        from evalspec.plan.source import log_kind

        what = log_kind(claim)
        if what:
            raise _fail(path, f"is not a claim record: it looks like {what}",
                        hint="run the plan that names it (`evalspec run PLAN`), then report on the claim.json it writes")
        if "locked_at" in claim and isinstance(claim.get("plan_file"), str):
            raise _fail(path, "is not a claim record: it is a lock file written by `evalspec lock`",
                        hint=f"run the plan it locks (`evalspec run {claim['plan_file']}` in its folder), then report "
                        "on the claim.json it writes")
        raise _fail(path, "is JSON but not a claim record", key="claim_format",
                    hint="missing key; is this a plan, a lock file or results? give the claim.json from `evalspec run`")
    fmt = claim["claim_format"]
    if fmt not in SUPPORTED_FORMATS:
        wrote = claim.get("evalspec_version")
        by = f" (written by evalspec {wrote})" if isinstance(wrote, str) else ""
        raise _fail(path, f"is a claim of format {fmt!r}{by}; this evalspec reads claim format "
                    f"{', '.join(map(str, SUPPORTED_FORMATS))}", key="claim_format",
                    hint="re-run its plan with this evalspec (`evalspec run PLAN`) to write a claim it can report on")
    if "decision" not in claim:
        raise _fail(path, "the claim has no decision", key="decision", hint="re-run `evalspec run` to write a complete claim")
    return validate_claim(claim, path), claim, text


def _key_path(loc: tuple[Any, ...], claim: Any) -> str:
    """A pydantic error location as a key path of the JSON document (union tags dropped)."""
    out = ""
    cur = claim
    for item in loc:
        if isinstance(item, int) and isinstance(cur, list):
            out += f"[{item}]"
            cur = cur[item] if 0 <= item < len(cur) else None
        elif isinstance(cur, dict) and item in cur:
            out += f".{item}" if out else str(item)
            cur = cur[item]
        elif isinstance(cur, dict) and (cur.get("kind") == item or item == "__other__"):
            continue  # the tag of the analysis-record union
        else:
            out += f".{item}" if out else str(item)
            cur = None
    return out


def validate_claim(claim: dict[str, Any], path: str | Path = "claim.json") -> dict[str, Any]:
    """``claim`` checked against the claim model, as the JSON-ready dict the templates read.

    Raises :class:`InputError` listing each problem at its key path (``analyses[1].result.low``).
    """
    from pydantic import ValidationError

    from evalspec.claim_model import claim_model

    import json

    try:  # strict: a number written as text is an error, not silently converted
        model = claim_model().model_validate_json(json.dumps(claim), strict=True)
    except ValidationError as exc:
        diags = []
        for err in exc.errors()[:20]:
            key = _key_path(tuple(err.get("loc", ())), claim)
            got = err.get("input")
            has_got = not isinstance(got, (dict, list))
            diags.append(Diagnostic(file=str(path), key=key or None, message=str(err.get("msg")),
                                    got=got if has_got else None, has_got=has_got,
                                    hint="the claim was edited by hand or is damaged; re-run `evalspec run` to "
                                    "write it again"))
        raise InputError(f"{path}: not a valid claim record ({exc.error_count()} problem"
                         f"{'s' if exc.error_count() != 1 else ''})", diags) from None
    return dict(model.model_dump(mode="json"))
