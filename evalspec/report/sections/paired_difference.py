"""The ``paired_difference`` section's plot: the clusters that contribute most to the difference.
"""

from __future__ import annotations

from typing import Any

from evalspec.report.plots import cluster_bars_svg

__all__ = ["section_plots"]


def section_plots(a: dict[str, Any]) -> dict[str, str]:
    """The cluster contributions of one ``paired_difference`` record, keyed ``clusters-<index>``."""
    res = a.get("result") or {}
    contrib = (res.get("clusters") or {}).get("contributions") or []
    if not contrib:
        return {}
    top = int((a.get("params") or {}).get("top_clusters") or 3)
    return {f"clusters-{a.get('index')}": cluster_bars_svg(contrib, top, str(res.get("candidate")),
                                                           str(res.get("baseline")), key=f"cb{a.get('index')}")}
