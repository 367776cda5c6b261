"""The base of every analysis kind's parameter model (pydantic only).

Each kind module defines its own parameter model as a subclass of :class:`AnalysisParams`
with ``kind: Literal["<kind>"]``; the plan model's ``analyses`` union is built from the
models of every kind in :data:`evalspec.analyses.registry.KIND_MODULES`. This module imports
pydantic only: it is on the ``evalspec validate`` path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AnalysisParams", "ConfidenceLevel", "register_params"]

ConfidenceLevel = Annotated[float, Field(gt=0.0, lt=1.0, description="Confidence level in (0, 1), e.g. 0.95.")]


class AnalysisParams(BaseModel):
    """Common base: forbids unknown keys; ``kind`` is the registry key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    label: str | None = Field(
        default=None, description="Optional short name for this analysis in reports (defaults to the kind)."
    )


#: Parameter models declared in :mod:`evalspec.analyses.params` for kinds whose module does
#: not yet define ``KIND`` (the transition to the contract). Filled by :func:`register_params`.
LEGACY_PARAMS: dict[str, type[AnalysisParams]] = {}

_P = TypeVar("_P", bound=type[AnalysisParams])


def register_params(kind: str) -> Callable[[_P], _P]:
    """Class decorator (transition only): declare a kind's parameter model outside its module."""

    def deco(cls: _P) -> _P:
        if kind in LEGACY_PARAMS:
            raise ValueError(f"analysis kind {kind!r} registered twice")
        LEGACY_PARAMS[kind] = cls
        return cls

    return deco
