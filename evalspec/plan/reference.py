"""A Markdown reference of every plan key, generated from the models' descriptions.

Used to write the README's "The plan" section (``python -m evalspec.plan.reference``),
so the reference says exactly what the models accept. A test checks that every key
and analysis kind appears in the README.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from evalspec.analyses.base import AnalysisParams
from evalspec.analyses.params import PARAMS
from evalspec.plan.model import Plan

__all__ = ["field_rows", "markdown_reference"]


def _type_name(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Annotated:
        return _type_name(get_args(tp)[0])
    if origin is Literal:
        return " \\| ".join(f"`{a}`" for a in get_args(tp))
    if origin in (Union, types.UnionType):
        parts = [_type_name(a) for a in get_args(tp) if a is not type(None)]
        return " or ".join(parts)
    if origin in (list, tuple):
        args = [a for a in get_args(tp) if a is not Ellipsis]
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping name → {_type_name(get_args(tp)[1])}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "mapping"
    if tp is Any:
        return "any value"
    return {str: "text", int: "integer", float: "number", bool: "true/false"}.get(tp, getattr(tp, "__name__", str(tp)))


def _default(info: Any) -> str:
    if info.is_required():
        return "**required**"
    if info.default_factory is not None:
        value = info.default_factory()
        if isinstance(value, BaseModel):
            return "(see below)"
        return f"`{value!r}`" if value not in ([], {}) else "empty"
    if info.default is PydanticUndefined or info.default is None:
        return "—"
    return f"`{info.default}`"


def _models(tp: Any) -> list[type[BaseModel]]:
    out: list[type[BaseModel]] = []
    origin = get_origin(tp)
    if origin is Annotated:
        return _models(get_args(tp)[0])
    if origin in (Union, types.UnionType, list, tuple, dict):
        for arg in get_args(tp):
            out += _models(arg)
        return out
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        out.append(tp)
    return out


def field_rows(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, str, str]]:
    """``(dotted key, type, default, description)`` for every key of ``model``, nested ones included."""
    rows: list[tuple[str, str, str, str]] = []
    for name, info in model.model_fields.items():
        key = f"{prefix}{name}"
        rows.append((key, _type_name(info.annotation), _default(info), (info.description or "").replace("|", "\\|")))
        for sub in _models(info.annotation):
            if issubclass(sub, AnalysisParams):  # the analyses union: each kind gets its own table below
                continue
            inner = f"{key}.<name>." if get_origin(info.annotation) is dict else f"{key}."
            if get_origin(info.annotation) is list:
                inner = f"{key}[]."
            rows += field_rows(sub, inner)
    return rows


def markdown_reference() -> str:
    """The plan's keys and the analysis kinds with their parameters, as Markdown tables."""
    lines = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for key, typ, default, desc in field_rows(Plan):
        if key == "analyses":
            typ = "list of analyses (below)"
        lines.append(f"| `{key}` | {typ} | {default} | {desc} |")
    lines += ["", "Analyses (`analyses:` entries; `kind` selects one, the other keys are its parameters):", ""]
    for kind, model in PARAMS.items():
        doc = (model.__doc__ or "").strip().splitlines()[0]
        lines += [f"**`{kind}`** — {doc}", "", "| parameter | type | default | meaning |", "| --- | --- | --- | --- |"]
        for key, typ, default, desc in field_rows(model):
            if key != "kind":
                lines.append(f"| `{key}` | {typ} | {default} | {desc} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(markdown_reference(), end="")
