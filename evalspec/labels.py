"""How a value read from a results file is written as a label: one rule for every layer.

A boolean is ``true``/``false``, an integral float is written as its integer (``17.0`` and
``17`` are the same case, the same slice group), anything else as its text. Identifiers
(case, candidate and cluster ids, model versions) also lose the spaces at either end; slice
values keep them, and a missing slice value (None, NaN) has no label. A leaf: the results
table, the tool-log adapters and the slices analysis all use it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["identifier_label", "value_label"]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def identifier_label(value: Any) -> str:
    """Text label of an identifier value (17 and "17" are the same case; spaces at either end dropped)."""
    return _text(value).strip()


def value_label(value: Any) -> str | None:
    """Text label of a slice value, or None when it is missing (None or NaN)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    return _text(value)
