"""The claim record: one JSON document every later step (report, audit) reads.

The record's shape is the pydantic model in :mod:`evalspec.claim_model` (its generated JSON
Schema is ``schemas/claim.schema.json``). This module only serialises and writes it: floats are rounded to 12 significant digits (so the bytes do
not depend on the last bits of a floating-point sum), keys are sorted, the text is UTF-8
with a trailing newline; :func:`evalspec.run.write_claim` writes it atomically
(:mod:`evalspec._atomic`), so a failed run never leaves half a claim. Same inputs
and seeds give the same bytes; ``created`` comes from ``SOURCE_DATE_EPOCH`` when set.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from itertools import chain
from typing import Any

import numpy as np

from evalspec.claim_model import CLAIM_FORMAT

__all__ = ["CLAIM_FORMAT", "created_time", "dumps", "normalize", "software_versions"]
SIGNIFICANT_DIGITS = 12


def created_time() -> str:
    """UTC creation time ``YYYY-MM-DDTHH:MM:SSZ``; fixed by ``SOURCE_DATE_EPOCH`` when set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip():
        try:
            t = _dt.datetime.fromtimestamp(int(epoch.strip()), tz=_dt.timezone.utc)
        except (ValueError, OverflowError, OSError):
            from evalspec.errors import Diagnostic, InputError

            raise InputError(
                f"SOURCE_DATE_EPOCH={epoch!r} is not a Unix time",
                [Diagnostic(file="environment", key="SOURCE_DATE_EPOCH", message="not a Unix time in seconds",
                            got=epoch, has_got=True, hint="set it to an integer such as 1796299200, or unset it")],
            ) from None
    else:
        t = _dt.datetime.now(tz=_dt.timezone.utc)
    return t.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _round(x: float) -> float | None:
    """``x`` to :data:`SIGNIFICANT_DIGITS` significant digits (None for NaN and infinities; 0.0 for -0.0)."""
    if not math.isfinite(x):
        return None
    if x == 0:
        return 0.0
    if -_EXACT < x < _EXACT and x.is_integer():  # (a whole number of at most 12 digits is its own 12-digit text)
        return x
    return float(f"{x:.{SIGNIFICANT_DIGITS}g}")


_EXACT = 10.0 ** SIGNIFICANT_DIGITS


def normalize(value: Any) -> Any:
    """JSON-ready builtins with floats rounded to 12 significant digits (NaN/inf become null).

    The result may share parts that need no change with ``value`` (long lists' dicts): read it, do not change it.
    """
    cls = value.__class__  # the builtins a claim is made of first (a million-row claim lists every disagreement)
    if cls is str or cls is int or cls is bool or value is None:
        return value
    if cls is float:
        return _round(value)
    if cls is dict:
        return _normal_dict(value)
    if cls is list:
        return _normal_list(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _round(float(value))
    if isinstance(value, str):  # a str subclass (an enum member): its text
        return str.__str__(value)
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [normalize(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if hasattr(value, "to_dict"):
        return normalize(value.to_dict())
    raise TypeError(f"cannot put a {type(value).__name__} into the claim record")


def _normal_dict(value: dict[Any, Any]) -> dict[str, Any]:
    """:func:`normalize` of a dict: its texts, integers, booleans and nulls as they are, without a call each
    (a claim's rows of cases and clusters are dicts of these)."""
    out: dict[str, Any] = {}
    for k, v in value.items():
        c = v.__class__
        out[k if k.__class__ is str else str(k)] = v if c is str or c is int or c is bool or v is None else \
            _round(v) if c is float else normalize(v)
    return out


#: The builtins a normal dict holds as they are (a float is rounded; a NaN becomes null).
_KEPT = frozenset({str, int, bool, type(None)})
#: Lists at least this long whose items are dicts are asked, in C, whether every dict is normal already.
_ASKED = 64


def _normal_list(value: list[Any]) -> list[Any]:
    """:func:`normalize` of a list (its dicts' and texts' normal form made here, without a call each).

    A long list of dicts whose keys are texts and whose values are texts, integers, booleans or nulls
    (a claim's lists of cases: hundreds of thousands at 100M rows) is normal already: its dicts are
    kept as they are (shared with ``value``, in a new list), found so in two passes in C.
    """
    if len(value) >= _ASKED and value[0].__class__ is dict and set(map(type, value)) == {dict} \
            and set(map(type, chain.from_iterable(value))) <= {str} \
            and set(map(type, chain.from_iterable(map(dict.values, value)))) <= _KEPT:
        return list(value)
    out: list[Any] = []
    append = out.append
    for v in value:
        c = v.__class__
        if c is dict:
            append(_normal_dict(v))
        elif c is str or c is int or c is bool or v is None:
            append(v)
        else:
            append(normalize(v))
    return out


def dumps(claim: dict[str, Any], *, normalized: bool = False) -> str:
    """The claim's canonical text: sorted keys, 2-space indent, UTF-8, trailing newline.

    The same text as ``json.dumps(normalize(claim), indent=2, sort_keys=True,
    ensure_ascii=False)``, written by :func:`_indented` (the standard library's indented
    encoder is pure Python and several times slower). ``normalized``: ``claim`` is
    :func:`normalize`'s output already (made once for the claim's hash and its text).
    """
    parts: list[str] = []
    _indented(claim if normalized else normalize(claim), "\n", parts)
    parts.append("\n")
    return "".join(parts)


_encode_str = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _flat_text(value: list[Any], newline: str) -> str | None:
    """``value``'s text as :func:`_indented` writes it, by the standard library's C encoder, when it is a list of
    scalars or of non-empty dicts of scalars (a claim's long lists: cases, clusters); None for any other list.

    The C encoder writes no indent, but it writes any separator between items: the line break and
    indent of the items' level. In a list of dicts that one separator comes between two dicts'
    members and, after a ``}`` and before a ``{``, between two dicts; only there (a member's value is
    a scalar, which never ends in ``}``; a text holds no line break), where the dicts' own line is put back.
    """
    inner = newline + "  "
    kinds = set(map(type, value))
    try:
        if kinds <= _SCALARS:
            return "[" + inner + _encoder("," + inner).encode(value)[1:-1] + newline + "]"
        if kinds != {dict} or not all(value) or not set(map(type, chain.from_iterable(map(dict.values, value)))) \
                <= _SCALARS:
            return None
        members = inner + "  "
        body = _encoder("," + members).encode(value)[2:-2]
    except ValueError:  # a NaN (not normalised): the writer below says what is wrong
        return None
    between = "}," + members + "{"
    return "[" + inner + "{" + members + body.replace(between, inner + "}," + inner + "{" + members) + inner + "}" \
        + newline + "]"


def _encoder(separator: str) -> json.JSONEncoder:
    return json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(separator, ": "), allow_nan=False,
                            check_circular=False)


def _indented(value: Any, newline: str, out: list[str]) -> None:
    """Append ``value`` (normalised JSON) as ``json.dumps(indent=2, sort_keys=True)`` writes it.

    ``newline`` is the line break plus the indent of the current level.
    """
    cls = value.__class__
    if cls is str:
        out.append(_encode_str(value))
    elif cls is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        first = True
        for key in sorted(value):
            out.append(("{" if first else ",") + inner)
            first = False
            out.append(_encode_str(key))
            out.append(": ")
            _indented(value[key], inner, out)
        out.append(newline + "}")
    elif cls is list:
        if not value:
            out.append("[]")
            return
        flat = _flat_text(value, newline) if len(value) > 1 else None
        if flat is not None:
            out.append(flat)
            return
        inner = newline + "  "
        first = True
        for item in value:
            out.append(("[" if first else ",") + inner)
            first = False
            _indented(item, inner, out)
        out.append(newline + "]")
    elif value is None:
        out.append("null")
    elif cls is bool:
        out.append("true" if value else "false")
    elif cls is int:
        out.append(int.__repr__(value))
    elif cls is float:
        if value != value or value in (math.inf, -math.inf):
            raise ValueError(f"a claim holds no NaN or infinity (got {value!r})")
        out.append(float.__repr__(value))
    else:  # pragma: no cover - normalize() returns only the types above
        raise TypeError(f"cannot put a {type(value).__name__} into the claim record")


def software_versions() -> dict[str, str]:
    """Versions of Python, evalspec and the numeric libraries that produced the numbers."""
    import platform
    from importlib import metadata

    from evalspec._version import __version__

    out = {"python": platform.python_version(), "evalspec": __version__}
    for name in ("numpy", "scipy", "pandas", "pydantic", "pyarrow"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # pyarrow is optional
            continue
    return out
