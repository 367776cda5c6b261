"""Parameter models of the analysis kinds not yet ported to the contract, and ``PARAMS``.

An entry of the plan's ``analyses`` list is a flat mapping: ``kind`` names the analysis
and the other keys are its parameters, e.g.::

    analyses:
      - {kind: proportion, method: wilson, confidence_level: 0.95}
      - {kind: paired_difference, compare: [A, B], method: cluster_bootstrap, seed: 7}

Each model forbids unknown keys, so a misspelt parameter is an error at its line.
This module imports pydantic only (no scipy): it is on the ``evalspec validate`` path.

A kind's parameter model belongs in the kind's own module (see
:mod:`evalspec.analyses.contract` and :mod:`evalspec.analyses.registry`). The models still
declared here with ``@register_params`` are those of kinds whose module is not yet ported;
porting a kind moves its model into its module (re-export it here if other code imports it
from here, without ``@register_params``). :data:`PARAMS` maps every registered kind to its
parameter model, whichever module declares it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

from pydantic import Field

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel, register_params

__all__ = ["PARAMS", "AnalysisParams", "ConfidenceLevel", "known_kinds", "register_params"]


class _AllParams(Mapping[str, type[AnalysisParams]]):
    """kind -> parameter model of every registered kind (read from the registry when used)."""

    def _models(self) -> dict[str, type[AnalysisParams]]:
        from evalspec.analyses.registry import params_models

        return params_models()

    def __getitem__(self, kind: str) -> type[AnalysisParams]:
        return self._models()[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._models())

    def __len__(self) -> int:
        return len(self._models())


#: YAML name -> parameter model, for every kind in the registry.
PARAMS: Mapping[str, type[AnalysisParams]] = _AllParams()

ProportionMethod = Literal[
    "wilson", "wilson_cc", "clopper_pearson", "jeffreys", "agresti_coull", "mid_p", "wald"
]
def known_kinds() -> list[str]:
    """The registered analysis kinds, sorted (for 'unknown kind' messages)."""
    from evalspec.analyses.registry import KIND_MODULES

    return sorted(KIND_MODULES)


@register_params("proportion")
class ProportionParams(AnalysisParams):
    """Pass rate of each candidate with a binomial interval (seed 000, worked example)."""

    kind: Literal["proportion"]
    method: ProportionMethod = Field("wilson", description="Interval method for a single proportion.")
    confidence_level: ConfidenceLevel | None = Field(
        None, description="Defaults to decision.confidence_level."
    )
    candidates: list[str] | None = Field(None, description="Candidates to report; default all.")


@register_params("run_variation")
class RunVariationParams(AnalysisParams):
    """Run variation vs case variation from repeats (seed 000, 'Separate sources of variation')."""

    kind: Literal["run_variation"]
    candidates: list[str] | None = Field(None, description="Candidates to report; default all.")


@register_params("clustered_mean")
class ClusteredMeanParams(AnalysisParams):
    """Mean of a numeric score with a cluster-robust standard error and a t interval on C-1 df."""

    kind: Literal["clustered_mean"]
    score: str | None = Field(
        None, description="Results column with the numeric score; default the outcome column."
    )
    correction: Literal["CR0", "CR1"] = Field("CR1", description="Small-sample correction of the clustered SE.")
    confidence_level: ConfidenceLevel | None = Field(None, description="Defaults to decision.confidence_level.")
    candidates: list[str] | None = Field(None, description="Candidates to report; default all.")


# ported kinds: their parameter models live in their modules (re-exported for old imports)
from evalspec.analyses.critical import CriticalFailuresParams  # noqa: E402
from evalspec.analyses.paired import PairedDifferenceParams, PairedMethod  # noqa: E402
from evalspec.analyses.slices import SlicesParams  # noqa: E402
