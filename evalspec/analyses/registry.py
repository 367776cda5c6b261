"""Implementations of analyses, registered under their YAML names.

An implementation is a function ``(ctx, params) -> dict`` where ``ctx`` is the
:class:`~evalspec.analyses.context.AnalysisContext` built by ``evalspec run`` (case-level
table after the attempt rule, the repeats, the plan) and ``params`` the validated
parameter model. It returns a JSON-ready mapping that goes into the claim verbatim.

Implementation modules are listed in :data:`IMPLEMENTATION_MODULES` and imported by
:func:`load_implementations` only when a plan is run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from evalspec.analyses.params import PARAMS

AnalysisFn = Callable[[Any, Any], dict[str, Any]]

#: YAML name -> implementation. Filled by :func:`analysis`.
IMPLEMENTATIONS: dict[str, AnalysisFn] = {}

#: Modules that register implementations; imported lazily by :func:`load_implementations`.
IMPLEMENTATION_MODULES: list[str] = [
    "evalspec.analyses.proportion",
    "evalspec.analyses.paired",
    "evalspec.analyses.critical",
    "evalspec.analyses.variation",
    "evalspec.analyses.slices",
    "evalspec.analyses.clustered",
]


def analysis(kind: str) -> Callable[[AnalysisFn], AnalysisFn]:
    """Register ``fn`` as the implementation of the analysis ``kind``.

    The kind must already have a parameter model in :mod:`evalspec.analyses.params`.
    """
    if kind not in PARAMS:
        raise ValueError(f"analysis {kind!r} has no parameter model; add it to evalspec.analyses.params")

    def deco(fn: AnalysisFn) -> AnalysisFn:
        if kind in IMPLEMENTATIONS and IMPLEMENTATIONS[kind] is not fn:
            raise ValueError(f"analysis {kind!r} implemented twice")
        IMPLEMENTATIONS[kind] = fn
        return fn

    return deco


def load_implementations() -> dict[str, AnalysisFn]:
    """Import every implementation module and return the registry."""
    for module in IMPLEMENTATION_MODULES:
        importlib.import_module(module)
    return IMPLEMENTATIONS


def get(kind: str) -> AnalysisFn:
    """The implementation of ``kind`` (after :func:`load_implementations`)."""
    load_implementations()
    try:
        return IMPLEMENTATIONS[kind]
    except KeyError:
        raise KeyError(
            f"analysis {kind!r} has parameters but no implementation; known: {', '.join(sorted(IMPLEMENTATIONS))}"
        ) from None
