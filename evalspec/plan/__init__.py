"""The evaluation plan: model, YAML loading with positions, validation at the line, hash, lock.

Public API (used by ``run``, ``audit`` and the CLI):

* :func:`load_plan` -> :class:`LoadedPlan` (``.plan``, ``.path``, ``.raw``, ``.positions``,
  ``.locate(key)``, ``.diagnostic(key, message, ...)``); raises ``InputError`` (exit 2)
  or ``PlanInvalid`` (exit 1) with every problem located.
* :func:`canonical_hash` -> ``"sha256:<hex>"`` of the validated plan (defaults filled in;
  blind to comments, key order, whitespace), :func:`canonical_data`, :func:`diff_keys`.
* :func:`read_lock`, :func:`check_lock`, :func:`write_lock`, :func:`lock_path`.
* :func:`plan_schema` / :func:`schema_text`: the JSON Schema.

Nothing here imports scipy or other heavy libraries: ``evalspec validate`` stays fast.
"""

from evalspec.plan.canonical import (
    Change,
    canonical_data,
    canonical_hash,
    canonical_json,
    diff_keys,
)
from evalspec.plan.load import LoadedPlan, load_plan, validate_document
from evalspec.plan.lock import (
    LockRecord,
    LockResult,
    LockStatus,
    check_lock,
    lock_path,
    read_lock,
    write_lock,
)
from evalspec.plan.model import Plan
from evalspec.plan.positions import PositionMap, format_path, parse_path
from evalspec.plan.schema import plan_schema, schema_text

__all__ = [
    "Change",
    "LoadedPlan",
    "LockRecord",
    "LockResult",
    "LockStatus",
    "Plan",
    "PositionMap",
    "canonical_data",
    "canonical_hash",
    "canonical_json",
    "check_lock",
    "diff_keys",
    "format_path",
    "load_plan",
    "lock_path",
    "parse_path",
    "plan_schema",
    "read_lock",
    "schema_text",
    "validate_document",
    "write_lock",
]
