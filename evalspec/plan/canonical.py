"""The canonical form of a plan and its SHA-256 hash.

What the hash commits to
------------------------
The hash is taken over the *validated* plan (:class:`~evalspec.plan.model.Plan`)
with every default filled in, serialised as JSON with sorted keys, no insignificant
whitespace and UTF-8 text. Therefore it is

* blind to comments, key order, indentation, quoting style, flow vs block style,
  YAML anchors, and to writing a default explicitly (``confidence_level: 0.95``
  written out or left to its default hash the same: the plan *means* the same);
* sensitive to every value, including list order (``systematic_limits``, ``analyses``).

Numbers are normalised so ``temperature: 0`` and ``temperature: 0.0`` are the same
value. The canonical form keeps every value's type where the plan leaves the type open
(candidate ``settings`` and other free-form values): an unquoted date there is
``{"$date": "YYYY-MM-DD"}``, so it hashes differently from the quoted text
``"YYYY-MM-DD"``, and a non-finite float is ``{"$float": "nan"}``, never the text ``"nan"``
(plans refuse non-finite numbers when loaded; this keeps the hash honest for plans built in
code). A field typed as a date (``stopping.decision_date``) is always a date, quoted or not,
and stays ``YYYY-MM-DD``. Because defaults count, a later evalspec whose
models add a field (or change a default) may hash an unchanged file differently:
the lock records the evalspec version and the canonical plan, so such a change is
visible key by key (:func:`diff_keys`) rather than silent.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalspec.plan.positions import Path, format_path

__all__ = ["canonical_data", "canonical_json", "canonical_hash", "hash_canonical", "Change", "diff_keys"]

_MISSING = object()


def canonical_data(plan: Any) -> dict[str, Any]:
    """The plan as plain JSON-ready data, defaults filled in, numbers normalised.

    ``plan`` is a :class:`~evalspec.plan.model.Plan`, a
    :class:`~evalspec.plan.load.LoadedPlan`, or a mapping (validated first; raises
    ``pydantic.ValidationError`` when it is not a valid plan).
    """
    from evalspec.plan.model import Plan

    if hasattr(plan, "plan") and isinstance(plan.plan, Plan):
        plan = plan.plan
    if isinstance(plan, Mapping):
        plan = Plan.model_validate(dict(plan))
    if not isinstance(plan, Plan):
        raise TypeError(f"expected a Plan, LoadedPlan or mapping, got {type(plan).__name__}")
    return _normalise(plan.model_dump(mode="python"), (), _typed_dates(plan))


def _typed_dates(obj: Any, path: tuple[Any, ...] = ()) -> set[tuple[Any, ...]]:
    """Paths (as in ``model_dump``) of dates held by fields whose type is a date."""
    from pydantic import BaseModel

    out: set[tuple[Any, ...]] = set()
    if isinstance(obj, BaseModel):
        for name, info in type(obj).model_fields.items():
            value = getattr(obj, name, None)
            if isinstance(value, _dt.date) and "date" in repr(info.annotation):
                out.add(path + (name,))
            else:
                out |= _typed_dates(value, path + (name,))
    elif isinstance(obj, Mapping):
        for k, v in obj.items():
            out |= _typed_dates(v, path + (str(k),))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out |= _typed_dates(v, path + (i,))
    return out


def _normalise(value: Any, path: tuple[Any, ...] = (), typed: set[tuple[Any, ...]] | frozenset[Any] = frozenset()) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"$float": repr(value)}  # JSON has no such numbers; never the same as the text 'nan'
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, _dt.datetime):
        return value.isoformat() if path in typed else {"$datetime": value.isoformat()}
    if isinstance(value, _dt.date):
        return value.isoformat() if path in typed else {"$date": value.isoformat()}
    if isinstance(value, Mapping):
        return {str(k): _normalise(v, path + (str(k),), typed) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(v, path + (i,), typed) for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        return sorted((_normalise(v, path, typed) for v in value), key=repr)
    return str(value)


def canonical_json(plan: Any) -> str:
    """Canonical JSON text: sorted keys, ``,``/``:`` separators, non-ASCII kept as UTF-8."""
    return _dumps(canonical_data(plan))


def _dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_hash(plan: Any) -> str:
    """``"sha256:<64 hex>"`` of :func:`canonical_json` of ``plan`` (Plan, LoadedPlan or mapping)."""
    return hash_canonical(canonical_data(plan))


def hash_canonical(data: dict[str, Any]) -> str:
    """Hash of data already in canonical form (e.g. the ``plan`` stored in a lock file)."""
    return "sha256:" + hashlib.sha256(_dumps(data).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Change:
    """One key whose value differs between two canonical plans."""

    key: str
    old: Any = _MISSING
    new: Any = _MISSING

    @property
    def kind(self) -> str:
        """``"added"``, ``"removed"`` or ``"changed"``."""
        if self.old is _MISSING:
            return "added"
        if self.new is _MISSING:
            return "removed"
        return "changed"

    def describe(self) -> str:
        """``changed decision.margin: 0.02 -> 0.03``."""
        if self.kind == "added":
            return f"added {self.key}: {_short(self.new)}"
        if self.kind == "removed":
            return f"removed {self.key} (was {_short(self.old)})"
        return f"changed {self.key}: {_short(self.old)} -> {_short(self.new)}"


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff_keys(old: Any, new: Any, path: Path = ()) -> list[Change]:
    """Every dotted key whose value differs between two canonical plans, in key order.

    Lists of equal length are compared entry by entry (``analyses[1].method``); a list
    whose length changed is reported as one change of the whole list.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[Change] = []
        for key in sorted(set(old) | set(new)):
            sub = path + (key,)
            if key not in old:
                out.append(Change(format_path(sub), new=new[key]))
            elif key not in new:
                out.append(Change(format_path(sub), old=old[key]))
            else:
                out.extend(diff_keys(old[key], new[key], sub))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        out = []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            out.extend(diff_keys(a, b, path + (i,)))
        return out
    if old == new and type(old) is type(new):
        return []
    return [Change(format_path(path) or "(plan)", old, new)]
