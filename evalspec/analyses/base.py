"""The base of every analysis kind's parameter model (pydantic only).

Each kind module defines its own parameter model as a subclass of :class:`AnalysisParams`
with ``kind: Literal["<kind>"]``; the plan model's ``analyses`` union is built from the
models of every kind in :data:`evalspec.analyses.registry.KIND_MODULES`. This module imports
pydantic only: it is on the ``evalspec validate`` path.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AnalysisParams", "ConfidenceLevel"]

ConfidenceLevel = Annotated[float, Field(gt=0.0, lt=1.0, description="Confidence level in (0, 1), e.g. 0.95.")]


class AnalysisParams(BaseModel):
    """Common base: forbids unknown keys; ``kind`` is the registry key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    label: str | None = Field(
        default=None, description="Optional short name for this analysis in reports (defaults to the kind)."
    )
