"""The ``slices`` section's plots: one forest per slice (paired differences, else pass rates).
"""

from __future__ import annotations

from typing import Any

from evalspec.report.plots import ForestRow, forest_svg

__all__ = ["section_plots"]


def section_plots(a: dict[str, Any], *, claim: dict[str, Any] | None = None) -> dict[str, str]:
    """One forest per slice of a ``slices`` record (paired differences, else pass rates), keyed
    ``slice-<index>-<j>``. Reference lines: no difference and the decision's minimum improvement."""
    out: dict[str, str] = {}
    result = a.get("result") or {}
    thresholds = ((claim or {}).get("decision") or {}).get("thresholds") or {}
    for j, sl in enumerate(result.get("slices") or []):
        groups = [g for g in sl.get("groups") or [] if isinstance(g, dict)]
        paired_rows = [ForestRow(str(g.get("value")), *(g["paired"].get(k) for k in ("estimate", "low", "high")))
                       for g in groups if isinstance(g.get("paired"), dict)
                       and g["paired"].get("informative", True) is not False]  # an uninformative interval is not drawn
        if paired_rows:
            refs = [(0.0, "no difference")]
            m = thresholds.get("minimum_improvement")
            if m:
                refs.append((float(m), "minimum improvement"))
            out[f"slice-{a.get('index')}-{j}"] = forest_svg(
                paired_rows, "Paired difference (percentage points), with its interval", unit="pts",
                refs=refs, key=f"sl{a.get('index')}x{j}", title=f"Paired difference by {sl.get('name')}")
            continue
        rows = [ForestRow(f"{g.get('value')} \u00b7 {cand}", p.get("estimate"), p.get("low"), p.get("high"))
                for g in groups for cand, p in (g.get("candidates") or {}).items() if isinstance(p, dict)]
        if rows:
            out[f"slice-{a.get('index')}-{j}"] = forest_svg(
                rows, "Pass rate (%), with its interval", key=f"sl{a.get('index')}x{j}",
                title=f"Pass rate by {sl.get('name')}")
    return out
