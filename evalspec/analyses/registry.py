"""The registry of analysis kinds: one line per kind in :data:`KIND_MODULES`.

Adding a kind = its module (``evalspec/analyses/<kind>.py`` defining ``KIND``, see
:mod:`evalspec.analyses.contract`) + its report section (``templates/sections/<kind>.html.j2``)
+ one line here. Nothing else names kinds: the plan model builds its ``analyses`` union
from :func:`params_models`, the pipeline runs :func:`kinds`, the claim model types each
record's ``result`` by the kind's result model, and the report picks the section template.

Kind modules import only pydantic at top level, so :func:`params_models` (on the
``evalspec validate`` path) stays light; heavy libraries load inside ``compute``.

Transition: a kind whose module does not define ``KIND`` yet (an implementation registered
with :func:`analysis` returning a dict, its parameter model in
:mod:`evalspec.analyses.params`) runs through :mod:`evalspec.analyses._legacy`. When such a
module is ported, its parameter model moves into the module and leaves ``params.py``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalspec.analyses.base import LEGACY_PARAMS, AnalysisParams

if TYPE_CHECKING:  # pragma: no cover
    from evalspec.analyses.contract import AnalysisKind

__all__ = ["KIND_MODULES", "analysis", "get", "get_kind", "kinds", "params_models"]

#: kind (its YAML name) -> module defining ``KIND``. The order is the plan reference's and
#: the report's default order (then ``AnalysisKind.order``).
KIND_MODULES: dict[str, str] = {
    "proportion": "evalspec.analyses.proportion",
    "paired_difference": "evalspec.analyses.paired",
    "critical_failures": "evalspec.analyses.critical",
    "run_variation": "evalspec.analyses.variation",
    "slices": "evalspec.analyses.slices",
    "clustered_mean": "evalspec.analyses.clustered",
    "beta_binomial": "evalspec.analyses.beta_binomial",
    "sequential_difference": "evalspec.analyses.sequential_difference",
}


class RegistryError(RuntimeError):
    """A kind module does not match its registry line (a programming error, exit 70)."""


def _legacy_params() -> dict[str, type[AnalysisParams]]:
    import evalspec.analyses.params  # noqa: F401  (declares the transition-period parameter models)

    return LEGACY_PARAMS


def params_models() -> dict[str, type[AnalysisParams]]:
    """kind -> parameter model, for every registered kind (imports pydantic-only modules)."""
    legacy = _legacy_params()
    out: dict[str, type[AnalysisParams]] = {}
    for kind in KIND_MODULES:
        # a legacy model is used without importing the kind's (possibly heavy, unported) module
        out[kind] = legacy[kind] if kind in legacy else _module_kind(kind).params
    return out


def _module_kind(kind: str) -> AnalysisKind:
    module = importlib.import_module(KIND_MODULES[kind])
    value = getattr(module, "KIND", None)
    if value is None:
        raise RegistryError(f"{KIND_MODULES[kind]} defines no KIND (and {kind!r} has no legacy parameter model)")
    if value.name != kind:
        raise RegistryError(f"{KIND_MODULES[kind]}.KIND is named {value.name!r}, registered as {kind!r}")
    field = value.params.model_fields.get("kind")
    if field is None or getattr(field.annotation, "__args__", None) != (kind,):
        raise RegistryError(f"{value.params.__name__}.kind must be Literal[{kind!r}]")
    return value


def get_kind(name: str) -> AnalysisKind:
    """The :class:`~evalspec.analyses.contract.AnalysisKind` of ``name`` (imports its module)."""
    if name not in KIND_MODULES:
        raise KeyError(f"unknown analysis kind {name!r}; known: {', '.join(KIND_MODULES)}")
    legacy = _legacy_params()
    module = importlib.import_module(KIND_MODULES[name])
    if getattr(module, "KIND", None) is None and name in legacy:
        from evalspec.analyses._legacy import legacy_kind

        return legacy_kind(name, legacy[name], IMPLEMENTATIONS[name])
    # A ported module's KIND wins. Until its legacy model leaves params.py, plans still
    # validate with that model; its fields are the same, so compute reads them alike.
    return _module_kind(name)


def kinds() -> dict[str, AnalysisKind]:
    """Every registered kind, in :data:`KIND_MODULES` order (imports every kind module)."""
    return {name: get_kind(name) for name in KIND_MODULES}


def get(kind: str) -> Callable[[Any, Any], dict[str, Any]]:
    """``(ctx, params) -> result as JSON-ready dict`` of ``kind`` (a shorthand for tests)."""
    k = get_kind(kind)

    def run(ctx: Any, params: Any) -> dict[str, Any]:
        return k.compute(ctx, params).result.model_dump(mode="json")

    return run


# -- transition: implementations registered as plain functions --------------------------------

AnalysisFn = Callable[[Any, Any], dict[str, Any]]

#: kind -> legacy implementation (a module not yet ported to the contract). Filled at import.
IMPLEMENTATIONS: dict[str, AnalysisFn] = {}


def analysis(kind: str) -> Callable[[AnalysisFn], AnalysisFn]:
    """Register ``fn`` as the (legacy, dict-returning) implementation of ``kind``."""

    def deco(fn: AnalysisFn) -> AnalysisFn:
        if kind in IMPLEMENTATIONS and IMPLEMENTATIONS[kind] is not fn:
            raise ValueError(f"analysis {kind!r} implemented twice")
        IMPLEMENTATIONS[kind] = fn
        return fn

    return deco


def load_implementations() -> dict[str, AnalysisKind]:
    """Import every kind module (kept for the benchmark scripts); same as :func:`kinds`."""
    return kinds()
