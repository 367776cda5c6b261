"""The ``proportion`` section's plot: the pass-rate forest of its candidates.

Also page 1's forest when the plan makes no comparison (drawn again with its own ids).
"""

from __future__ import annotations

from typing import Any

from evalspec.report.plots import ForestRow, forest_svg

__all__ = ["section_plots"]


def section_plots(a: dict[str, Any], *, key: str | None = None) -> dict[str, str]:
    """The pass-rate forest of one ``proportion`` record, keyed ``forest-<index>``."""
    cands = (a.get("result") or {}).get("candidates") or {}
    rows = [ForestRow(str(k), v.get("estimate"), v.get("low"), v.get("high")) for k, v in cands.items()
            if isinstance(v, dict)]
    if not rows:
        return {}
    return {f"forest-{a.get('index')}": forest_svg(rows, "Pass rate (%), with its interval",
                                                   key=key or f"fp{a.get('index')}",
                                                   title="Pass rate of each candidate with its interval")}
