"""The starter plan that ``evalspec init`` writes, generated from the plan models.

Every comment is the description of its key in :mod:`evalspec.plan.model` (the same text
as the README's field reference and the JSON Schema), so the starter cannot drift from
what the code does. Sections whose keys can change a verdict (``units``, ``attempts``,
``missing``, ``decision``, ``stopping`` and the outcome reading) are written with *every*
key, defaults included, so no hidden default decides a study.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from evalspec.plan.starter_examples import EXAMPLE

__all__ = ["starter_text", "VERDICT_SECTIONS"]

#: Sections written with every key (their defaults can change a verdict).
VERDICT_SECTIONS = ("units", "attempts", "missing", "decision", "stopping", "data.outcome")

_HEADER = """\
# evalspec plan: written BEFORE anyone looks at results, and committed next to the code.
# Check it with `evalspec validate plan.yaml`. Before locking, check it against a pilot or a sample
# of your tool's output: `evalspec validate plan.yaml --data pilot.jsonl` reads it as `run` would
# (columns, candidate names, versions, repeats) and computes nothing, writes nothing, records no look.
# Then freeze it with `evalspec lock plan.yaml`, before the study's results exist.
# data.columns maps only what every format has; if your results carry the model version actually
# served (inspect_ai logs do: model_version), add `model_version: model_version` under data.columns
# and to `record`, so runs across a model update are never pooled unnoticed.
# Every comment below is the description of its key (`evalspec schema` prints them all).
# Keys whose defaults can change the verdict are all written out: read each one.
"""

def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        plain = value and all(c.isalnum() or c in "-_./ " for c in value) and not value[0].isdigit() \
            and value.strip() == value and value.lower() not in {"yes", "no", "on", "off", "true", "false", "null"}
        return value if plain else json.dumps(value, ensure_ascii=False)
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()):
        return "{" + ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a flow value: {value!r}")


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def _comment(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    return [f"{indent}# {line}" for line in textwrap.wrap(text, width=100 - len(indent) - 2)]


def _default_of(info: Any) -> Any:
    if info.default_factory is not None:
        value = info.default_factory()
        return value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    return None if info.is_required() else info.default


def _emit(model: type[BaseModel], values: dict[str, Any], path: str, depth: int, out: list[str]) -> None:
    indent = "  " * depth
    full = path in VERDICT_SECTIONS
    for name, info in model.model_fields.items():
        if name not in values and not full:
            continue
        value = values[name] if name in values else _default_of(info)
        key = f"{path}.{name}" if path else name
        out += _comment(info.description, indent)
        sub = _submodel(info.annotation)
        if isinstance(value, dict) and sub is not None and get_origin(info.annotation) is not dict:
            out.append(f"{indent}{name}:")
            _emit(sub, value, key, depth + 1, out)
        elif isinstance(value, dict) and sub is not None:  # name -> model (candidates)
            out.append(f"{indent}{name}:")
            for item, item_values in value.items():
                out.append(f"{indent}  {item}:")
                _emit(sub, item_values, f"{key}.{item}", depth + 2, out)
        elif name == "analyses":
            out.append(f"{indent}{name}:")
            _emit_analyses(value, depth, out)
        elif isinstance(value, list) and value and all(isinstance(v, str) and len(v) > 40 for v in value):
            out.append(f"{indent}{name}:")
            out += [f"{indent}  - {_scalar(v)}" for v in value]
        else:
            out.append(f"{indent}{name}: {_scalar(value)}")


def _emit_analyses(entries: list[dict[str, Any]], depth: int, out: list[str]) -> None:
    from evalspec.analyses.params import PARAMS

    indent = "  " * (depth + 1)
    for entry in entries:
        model = PARAMS[entry["kind"]]
        doc = (model.__doc__ or "").strip().splitlines()[0]
        out += _comment(doc, indent)
        first = True
        for name, value in entry.items():
            info = model.model_fields[name]
            if name != "kind":
                out += _comment(info.description, indent + "  ")
            prefix = f"{indent}- " if first else f"{indent}  "
            out.append(f"{prefix}{name}: {_scalar(value)}")
            first = False


def starter_text() -> str:
    """The starter ``plan.yaml``: example values, every verdict-bearing key, comments from the models."""
    from evalspec.plan.model import Plan

    lines: list[str] = []
    _emit(Plan, EXAMPLE, "", 0, lines)
    return _HEADER + "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(starter_text(), end="")
