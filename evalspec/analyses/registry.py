"""The registry of analysis kinds: one line per kind in :data:`KIND_MODULES`.

Adding a kind = its module (``evalspec/analyses/<kind>.py`` defining ``KIND``, see
:mod:`evalspec.analyses.contract`) + its report section (``templates/sections/<kind>.html.j2``)
+ one line here (``docs/ARCHITECTURE.md``, "Adding an analysis"). Nothing else names kinds:
the plan model builds its ``analyses`` union from :func:`params_models`, the pipeline runs
each kind's ``compute``, the claim model types each record's ``result`` by the kind's result
model, and the report picks the section template by kind.

Kind modules import only pydantic at top level, so :func:`params_models` (on the
``evalspec validate`` path) stays light; heavy libraries load inside ``compute``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from evalspec.analyses.base import AnalysisParams
    from evalspec.analyses.contract import AnalysisKind

__all__ = ["KIND_MODULES", "RegistryError", "get", "get_kind", "is_sequential", "kinds", "params_models"]

#: kind (its YAML name) -> module defining ``KIND``. The order is the plan reference's; the
#: report orders sections by ``AnalysisKind.order``.
KIND_MODULES: dict[str, str] = {
    "proportion": "evalspec.analyses.proportion",
    "paired_difference": "evalspec.analyses.paired",
    "critical_failures": "evalspec.analyses.critical",
    "run_variation": "evalspec.analyses.variation",
    "slices": "evalspec.analyses.slices",
    "clustered_mean": "evalspec.analyses.clustered",
    "beta_binomial": "evalspec.analyses.beta_binomial",
    "sequential_difference": "evalspec.analyses.sequential_difference",
    "background_temperature": "evalspec.analyses.background_temperature",
    "judge_corrected": "evalspec.analyses.judge_corrected",
    "ranking": "evalspec.analyses.ranking",
}


class RegistryError(RuntimeError):
    """A kind module does not match its registry line (a programming error, exit 70)."""


def get_kind(name: str) -> AnalysisKind:
    """The :class:`~evalspec.analyses.contract.AnalysisKind` of ``name`` (imports its module)."""
    if name not in KIND_MODULES:
        raise KeyError(f"unknown analysis kind {name!r}; known: {', '.join(KIND_MODULES)}")
    module = importlib.import_module(KIND_MODULES[name])
    value = getattr(module, "KIND", None)
    if value is None:
        raise RegistryError(f"{KIND_MODULES[name]} defines no KIND (see evalspec.analyses.contract)")
    if value.name != name:
        raise RegistryError(f"{KIND_MODULES[name]}.KIND is named {value.name!r}, registered as {name!r}")
    field = value.params.model_fields.get("kind")
    if field is None or getattr(field.annotation, "__args__", None) != (name,):
        raise RegistryError(f"{value.params.__name__}.kind must be Literal[{name!r}]")
    return value


def params_models() -> dict[str, type[AnalysisParams]]:
    """kind -> parameter model, for every registered kind (imports the pydantic-only kind modules)."""
    return {kind: get_kind(kind).params for kind in KIND_MODULES}


def kinds() -> dict[str, AnalysisKind]:
    """Every registered kind, in :data:`KIND_MODULES` order (imports every kind module)."""
    return {name: get_kind(name) for name in KIND_MODULES}


def is_sequential(kind: Any) -> bool:
    """Whether ``kind`` (a name as a plan or a claim gives it, maybe not a string) is an anytime-valid kind.

    Asks the kind (``AnalysisKind.sequential``), so nothing outside a kind's module names the
    sequential kinds; an unknown name is not one.
    """
    return isinstance(kind, str) and kind in KIND_MODULES and get_kind(kind).sequential


def get(kind: str) -> Callable[[Any, Any], dict[str, Any]]:
    """``(ctx, params) -> result as a JSON-ready dict`` of ``kind`` (a shorthand for tests)."""
    k = get_kind(kind)

    def run(ctx: Any, params: Any) -> dict[str, Any]:
        return k.compute(ctx, params).result.model_dump(mode="json")

    return run
