"""The JSON Schema of a plan, generated from the pydantic models.

``schemas/plan.schema.json`` is a checked-in copy of :func:`schema_text` (a test
regenerates it and fails on any difference; ``evalspec schema --output
schemas/plan.schema.json`` rewrites it). Example plans point editors at it with
``# yaml-language-server: $schema=../../schemas/plan.schema.json`` so mistakes are
underlined as you type. The schema checks structure and single fields; cross-field
rules (baseline is a candidate, ...) are only checked by ``evalspec validate``.
"""

from __future__ import annotations

import json
from typing import Any

from evalspec.plan.model import Plan

__all__ = ["plan_schema", "schema_text"]

_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def plan_schema() -> dict[str, Any]:
    """The plan's JSON Schema (draft 2020-12) as a dict."""
    body = Plan.model_json_schema(mode="validation")
    schema: dict[str, Any] = {"$schema": _DIALECT}
    schema.update(body)
    schema["title"] = "evalspec plan"
    schema["description"] = (
        "A preregistered evaluation plan (plan.yaml). Generated from evalspec's pydantic models by "
        "`evalspec schema`; cross-field rules are checked by `evalspec validate`."
    )
    return schema


def schema_text() -> str:
    """The schema as the exact text of ``schemas/plan.schema.json`` (2-space indent, final newline)."""
    return json.dumps(plan_schema(), indent=2, ensure_ascii=False) + "\n"
