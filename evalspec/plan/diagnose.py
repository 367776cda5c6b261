"""Turn pydantic validation errors and rule issues into located diagnostics.

Every problem becomes one line ``plan.yaml:LINE:COL: dotted.key: message (got VALUE); hint``
followed by the source line and a caret. Pydantic locations are mapped onto the YAML
document (union member tags dropped, dict-key errors pointed at the key), unknown
keys get a "did you mean", missing keys point at their parent, and values YAML read
as numbers or dates where text was expected get "write it in quotes".

When a plan has field errors pydantic skips the plan-level validator, so
:func:`partial_view` validates each top-level section on its own and the
cross-field rules run on the sections that are valid.
"""

from __future__ import annotations

import difflib
import functools
import re
import types
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError

from evalspec.analyses.params import PARAMS, known_kinds
from evalspec.errors import Diagnostic
from evalspec.analyses.contract import Issue
from evalspec.plan import rules as _rules
from evalspec.plan.positions import Path, PositionMap, excerpt, format_path

__all__ = ["diagnose", "issue_diagnostic", "partial_view", "section_issues"]

_ABSENT = object()


class _Verbatim:
    """A scalar shown exactly as written in the YAML (``1.10``, ``2026-10-01``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


_TYPE_WORDS = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping (key: value lines)",
    "model_type": "a mapping (key: value lines)",
    "model_attributes_type": "a mapping (key: value lines)",
    "date_type": "a date written YYYY-MM-DD",
    "date_parsing": "a date written YYYY-MM-DD",
    "date_from_datetime_parsing": "a date written YYYY-MM-DD",
    "literal_error": None,
}


def diagnose(
    error: ValidationError, raw: dict[str, Any], positions: PositionMap, file: str, lines: list[str], model: type[BaseModel]
) -> list[Diagnostic]:
    """All diagnostics for a pydantic ``ValidationError`` raised by ``model`` on ``raw``."""
    grouped: dict[tuple[Path, bool], list[Any]] = {}
    diags: list[Diagnostic] = []
    for err in error.errors(include_url=False):
        if err["type"] == "plan_rule":
            base, _ = _normalize(err["loc"], raw, "plan_rule")
            for issue in err["ctx"]["issues"]:
                moved = Issue(base + tuple(issue.path), issue.message, issue.hint, issue.got)
                diags.append(issue_diagnostic(moved, positions, file, lines))
            continue
        path, key_error = _normalize(err["loc"], raw, err["type"])
        if err["type"] == "union_tag_invalid":
            path = path + ("kind",)
        grouped.setdefault((path, key_error), []).append(err)
    # A misspelt required key is one mistake, not two: drop "missing" when an unknown
    # sibling key is its likely misspelling (the unknown key's hint names it).
    missing = {path for (path, _), errs in grouped.items() if errs[0]["type"] == "missing"}
    covered: set[Path] = set()
    for (path, _), errs in grouped.items():
        if errs[0]["type"] == "extra_forbidden" and path:
            guess = difflib.get_close_matches(str(path[-1]), [str(m[-1]) for m in missing if m[:-1] == path[:-1]],
                                              n=1, cutoff=0.6)
            if guess:
                covered.add(path[:-1] + (guess[0],))
    by_parent: dict[Path, list[Path]] = {}
    for path in missing - covered:
        by_parent.setdefault(path[:-1], []).append(path)
    for parent, paths in by_parent.items():
        if len(paths) >= _COLLAPSE_MISSING:
            covered.update(paths)
            diags.append(_many_missing(parent, sorted(str(p[-1]) for p in paths), positions, file, lines))
    for (path, key_error), errs in grouped.items():
        if path in covered and errs[0]["type"] == "missing":
            continue
        diags.append(_error_diagnostic(path, key_error, errs, raw, positions, file, lines, model,
                                       required=covered))
    return diags


#: From this many missing keys in one mapping on, they are reported in one line.
_COLLAPSE_MISSING = 3


def _many_missing(parent: Path, names: list[str], positions: PositionMap, file: str, lines: list[str]) -> Diagnostic:
    _, pos, exact = positions.resolve(parent)
    line = col = None
    if pos is not None:
        line, col = pos.key_pos if parent else (pos.line, pos.col)
    hint = "run `evalspec init` for a starter plan with every required key" if not parent else None
    return Diagnostic(file=file, message="required keys are missing: " + ", ".join(names), line=line, col=col,
                      key=format_path(parent) or None, hint=hint,
                      excerpt=(excerpt(lines, line, col) or None) if line and col else None)


def issue_diagnostic(issue: Issue, positions: PositionMap, file: str, lines: list[str]) -> Diagnostic:
    """A diagnostic for a cross-field rule issue, at the value its path names."""
    found, pos, exact = positions.resolve(issue.path)
    line = col = None
    width = 1
    if pos is not None:
        line, col = (pos.line, pos.col) if exact else pos.key_pos
        width = _width(pos) if exact else 1
    return Diagnostic(
        file=file, message=issue.message, line=line, col=col, key=format_path(issue.path) or None,
        got=_shown(issue.got, positions, issue.path) if issue.has_got else None, has_got=issue.has_got,
        hint=issue.hint, excerpt=(excerpt(lines, line, col, width) or None) if line and col else None,
    )


# -- locations ---------------------------------------------------------------------------------


def _normalize(loc: tuple[Any, ...], raw: Any, err_type: str) -> tuple[Path, bool]:
    """Map a pydantic ``loc`` onto the document: drop union tags; flag dict-key errors."""
    path: list[Any] = []
    cur: Any = raw
    items = list(loc)
    for n, item in enumerate(items):
        if item == "[key]":
            return tuple(path), True
        last = n == len(items) - 1
        if (len(path) == 2 and path[0] == "analyses" and isinstance(cur, dict) and item in PARAMS
                and item == cur.get("kind") and not last):
            continue  # discriminated-union tag
        if isinstance(cur, dict) and item in cur or isinstance(cur, list) and isinstance(item, int) and 0 <= item < len(cur):
            path.append(item)
            cur = cur[item]
        elif last and err_type in ("missing", "extra_forbidden"):
            path.append(item)
        elif isinstance(cur, dict) and not isinstance(item, int) and err_type in ("missing",):
            path.append(item)
            cur = _ABSENT
        else:
            continue  # a union member name such as 'list[str]'
    return tuple(path), False


def _width(pos: Any) -> int:
    if pos.source is not None and pos.end_line == pos.line:
        return max(1, pos.end_col - pos.col)
    return 1


def _shown(value: Any, positions: PositionMap, path: Path) -> Any:
    if isinstance(value, str):
        return value
    pos = positions.get(path)
    if pos is not None and pos.source is not None:
        return _Verbatim(pos.source)
    return value


# -- messages ------------------------------------------------------------------------------------


def _error_diagnostic(path: Path, key_error: bool, errs: list[dict[str, Any]], raw: dict[str, Any],
                      positions: PositionMap, file: str, lines: list[str], model: type[BaseModel],
                      required: set[Path] | None = None) -> Diagnostic:
    err = errs[0]
    etype = err["type"]
    found, pos, exact = positions.resolve(path)
    line = col = None
    width = 1
    if pos is not None:
        if exact and (key_error or etype == "extra_forbidden"):
            line, col = pos.key_pos
            width = len(str(path[-1])) if path else 1
        elif exact:
            line, col, width = pos.line, pos.col, _width(pos)
        else:
            line, col = pos.key_pos
    message, hint, show_got = _message(path, key_error, errs, raw, model, required or set())
    got: Any = None
    if show_got and key_error:
        got = path[-1] if path else None
    elif show_got:
        value = err["ctx"]["tag"] if etype == "union_tag_invalid" else err.get("input")
        if isinstance(value, (dict, list)):
            show_got = False
        else:
            got = _shown(value, positions, path)
    return Diagnostic(
        file=file, message=message, line=line, col=col, key=format_path(path) or None, got=got,
        has_got=show_got, hint=hint, excerpt=(excerpt(lines, line, col, width) or None) if line and col else None,
    )


def _message(path: Path, key_error: bool, errs: list[dict[str, Any]], raw: dict[str, Any],
             model: type[BaseModel], required: set[Path]) -> tuple[str, str | None, bool]:
    """(message, hint, whether to show the value) for one location's errors."""
    err = errs[0]
    etype = err["type"]
    value = err.get("input")
    if key_error:
        if etype == "string_pattern_mismatch":
            return "a name must start with a letter and use only letters, digits, '_', '-' and '.'", None, True
        return "name " + _plain(err), None, True
    if etype == "missing":
        info = _field_at(model, path, raw)
        desc = info.description if info is not None else None
        return "required key is missing", f"add `{path[-1]}:` ({desc.rstrip('.')})" if desc else None, False
    if etype == "extra_forbidden":
        allowed = _allowed_keys(model, path[:-1], raw)
        guess = difflib.get_close_matches(str(path[-1]), allowed, n=1, cutoff=0.6) if allowed else []
        if guess:
            hint = f"did you mean {guess[0]!r}?"
            if path[:-1] + (guess[0],) in required:
                hint += f" ({guess[0]} is required and missing)"
        elif allowed:
            hint = "allowed here: " + ", ".join(allowed)
        else:
            hint = None
        return "unknown key", hint, False
    if etype == "union_tag_invalid":
        kinds = known_kinds()
        guess = difflib.get_close_matches(str(err["ctx"]["tag"]), kinds, n=1, cutoff=0.6)
        hint = (f"did you mean {guess[0]!r}? " if guess else "") + "known kinds: " + ", ".join(kinds)
        return "unknown analysis kind", hint, True
    if etype == "union_tag_not_found":
        return "an analysis needs `kind`", "known kinds: " + ", ".join(known_kinds()), False
    if etype == "literal_error":
        expected = _literal_options(errs)
        if len(expected) == 1:
            return f"must be {expected[0]}", None, True
        guess = difflib.get_close_matches(str(value), expected, n=1, cutoff=0.6) if isinstance(value, str) else []
        return ("must be one of " + ", ".join(expected), f"did you mean {guess[0]!r}?" if guess else None, True)
    words = [w for w in (_type_word(e) for e in errs) if w]
    if len(errs) > 1 and len(words) == len(errs):  # one value failing every member of a union
        seen: list[str] = []
        for w in words:
            if w not in seen:
                seen.append(w)
        message = "must be " + " or ".join(seen)
    else:
        message = _plain(err)
    hint = None
    if any(e["type"] == "string_type" for e in errs) and isinstance(value, (int, float, bool)) or (
        any(e["type"] == "string_type" for e in errs) and hasattr(value, "isoformat")
    ):
        hint = f"YAML reads this as a {_yaml_type(value)}; write it in quotes to keep it as text"
    if etype == "string_pattern_mismatch" and "A-Za-z" in str(err.get("ctx", {}).get("pattern", "")):
        message = "must start with a letter and use only letters, digits, '_', '-' and '.'"
    return message, hint, True


def _type_word(err: dict[str, Any]) -> str | None:
    return _TYPE_WORDS.get(err["type"])


def _plain(err: dict[str, Any]) -> str:
    word = _TYPE_WORDS.get(err["type"])
    if word:
        return f"must be {word}"
    if err["type"] == "too_short" and err.get("ctx", {}).get("min_length") == 1:
        return "must not be empty"
    msg = re.sub(r" after validation, not \d+$", "", str(err["msg"]))
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    msg = msg.replace("Input should be", "must be").replace("Input should", "must")
    msg = msg.replace("List should have", "must have").replace("String should have", "must have")
    msg = msg.replace("Dictionary should have", "must have").replace("Tuple should have", "must have")
    return msg[:1].lower() + msg[1:] if msg[:2] != msg[:2].upper() else msg


def _literal_options(errs: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for e in errs:
        text = str(e.get("ctx", {}).get("expected", ""))
        for part in text.replace(" or ", ", ").split(", "):
            part = part.strip().strip("'")
            if part and part not in out:
                out.append(part)
    return out


def _yaml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "number"
    if isinstance(value, float):
        return "number"
    return "date"


# -- walking the model along a path ---------------------------------------------------------------


def _unwrap(tp: Any) -> list[Any]:
    """The concrete types inside Annotated / Optional / Union."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _unwrap(get_args(tp)[0])
    if origin in (Union, types.UnionType):
        out: list[Any] = []
        for arg in get_args(tp):
            out.extend(_unwrap(arg))
        return out
    return [tp]


def _step(tp: Any, item: Any, raw: Any) -> tuple[Any, Any]:
    """Type and raw value one step down ``item`` from a value of type ``tp``."""
    for t in _unwrap(tp):
        origin = get_origin(t)
        if isinstance(t, type) and issubclass(t, BaseModel) and isinstance(item, str):
            f = t.model_fields.get(item)
            if f is not None:
                return f.annotation, raw.get(item) if isinstance(raw, dict) else None
        if origin in (list, tuple) and isinstance(item, int):
            args = get_args(t)
            sub = raw[item] if isinstance(raw, list) and 0 <= item < len(raw) else None
            return (args[0] if args else Any), sub
        if origin is dict and not isinstance(item, int):
            args = get_args(t)
            return (args[1] if len(args) == 2 else Any), raw.get(item) if isinstance(raw, dict) else None
    return None, None


def _model_at(model: type[BaseModel], path: Path, raw: Any) -> type[BaseModel] | None:
    """The pydantic model describing the mapping at ``path``, if any."""
    tp: Any = model
    cur = raw
    for n, item in enumerate(path):
        if n == 1 and path[0] == "analyses" and isinstance(cur, dict) and cur.get("kind") in PARAMS:
            tp = PARAMS[cur["kind"]]
        tp, cur = _step(tp, item, cur)
        if tp is None:
            return None
    if len(path) == 2 and path[0] == "analyses" and isinstance(cur, dict) and cur.get("kind") in PARAMS:
        return PARAMS[cur["kind"]]
    for t in _unwrap(tp):
        if isinstance(t, type) and issubclass(t, BaseModel):
            return t
    return None


def _allowed_keys(model: type[BaseModel], path: Path, raw: Any) -> list[str]:
    found = _model_at(model, path, raw)
    return list(found.model_fields) if found is not None else []


def _field_at(model: type[BaseModel], path: Path, raw: Any) -> Any:
    if not path:
        return None
    parent = _model_at(model, path[:-1], raw)
    if parent is None:
        return None
    return parent.model_fields.get(str(path[-1]))


# -- partial validation for the cross-field rules ------------------------------------------------


@functools.cache
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    info = model.model_fields[name]
    return TypeAdapter(Annotated[info.annotation, info])  # type: ignore[arg-type, name-defined]


def partial_view(model: type[BaseModel], raw: dict[str, Any], broken: set[str]) -> _rules.PlanView:
    """A :class:`~evalspec.plan.rules.PlanView` of the sections of ``raw`` that validate alone.

    ``broken`` names the top-level sections pydantic already reported; they are left
    out, except ``analyses`` whose valid entries are kept one by one.
    """
    values: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if name in broken:
            continue
        if name not in raw:
            if info.is_required():
                continue
            values[name] = info.get_default(call_default_factory=True)
            continue
        try:
            values[name] = _adapter(model, name).validate_python(raw[name])
        except ValidationError:
            continue
    cands = raw.get("candidates")
    if "candidates" not in values and isinstance(cands, dict) and cands and all(isinstance(k, str) for k in cands):
        values["candidates"] = dict.fromkeys(cands)  # names are known even when an entry is broken
    analyses: list[tuple[int, Any]] = []
    complete = "analyses" in values
    items = raw.get("analyses")
    if "analyses" in values:
        analyses = list(enumerate(values["analyses"]))
    elif isinstance(items, list):
        item_type = get_args(_unwrap(model.model_fields["analyses"].annotation)[0])[0]
        adapter = _item_adapter(item_type)
        for i, item in enumerate(items):
            try:
                analyses.append((i, adapter.validate_python(item)))
            except ValidationError:
                continue
    return _rules.PlanView(values=values, analyses=analyses, analyses_complete=complete)


_ITEM_ADAPTERS: dict[int, TypeAdapter[Any]] = {}


def _item_adapter(tp: Any) -> TypeAdapter[Any]:
    key = id(tp)
    if key not in _ITEM_ADAPTERS:
        _ITEM_ADAPTERS[key] = TypeAdapter(tp)
    return _ITEM_ADAPTERS[key]



def section_issues(model: type[BaseModel], raw: dict[str, Any], errors: Sequence[Any]) -> list[Issue]:
    """Rules within sections that pydantic skipped because another field of the section failed.

    For every mapping that encloses a field error, each of its model's
    ``__section_rules__`` runs when the fields it reads validate on their own; the
    issues come back with paths from the document root.
    """
    broken: list[Path] = []
    ran: set[Path] = set()
    for err in errors:
        path, _ = _normalize(err["loc"], raw, err["type"])
        (ran.add(path) if err["type"] == "plan_rule" else broken.append(path))
    enclosing = {p[:n] for p in broken for n in range(1, len(p))}
    issues: list[Issue] = []
    for section in sorted(enclosing - ran, key=lambda p: [str(x) for x in p]):
        cls = _model_at(model, section, raw)
        rules = getattr(cls, "__section_rules__", ()) if cls is not None else ()
        sub = _value_at(raw, section)
        if not rules or not isinstance(sub, dict):
            continue
        for fields, rule in rules:
            if any(p[: len(section) + 1] == section + (f,) for p in broken for f in fields):
                continue
            values = _fields_alone(cls, sub, fields)
            if values is not None:
                issues += [Issue(section + tuple(i.path), i.message, i.hint, i.got)
                           for i in rule(SimpleNamespace(**values))]
    return issues


def _value_at(raw: Any, path: Path) -> Any:
    for item in path:
        if isinstance(raw, dict) and item in raw or isinstance(raw, list) and isinstance(item, int) and 0 <= item < len(raw):
            raw = raw[item]
        else:
            return None
    return raw


def _fields_alone(cls: Any, sub: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any] | None:
    """The named fields of ``sub`` validated one by one (defaults for absent ones), or None."""
    values: dict[str, Any] = {}
    for name in fields:
        info = cls.model_fields[name]
        if name in sub:
            try:
                values[name] = _adapter(cls, name).validate_python(sub[name])
            except ValidationError:
                return None
        elif info.is_required():
            return None
        else:
            values[name] = info.get_default(call_default_factory=True)
    return values
