"""The plots of each kind's report section: ``evalspec/report/sections/<kind>.py``, found by the kind's name.

A kind's section is its template ``templates/sections/<kind>.html.j2`` and, when it has plots,
the module here named after the kind, defining ``section_plots(record) -> {key: svg}``
(``record`` is the kind's analysis record in the claim; a function with a ``claim`` keyword
also gets the whole claim). The section template reads the keys (``plots["forest-3"]``).
Nothing else names the kinds: the report asks :func:`plotter` for the kind of each section,
so a new kind with plots adds its module here and no table entry.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

__all__ = ["plotter"]


def plotter(kind: Any) -> Any:
    """``section_plots`` of ``kind``'s section, or None (an unregistered kind, or one without plots)."""
    from evalspec.analyses.registry import KIND_MODULES

    if not isinstance(kind, str) or kind not in KIND_MODULES:
        return None
    name = f"{__name__}.{kind}"
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name).section_plots
