"""``PARAMS``: every registered kind's parameter model, by kind.

An entry of the plan's ``analyses`` list is a flat mapping: ``kind`` names the analysis
and the other keys are its parameters, e.g.::

    analyses:
      - {kind: proportion, method: wilson, confidence_level: 0.95}
      - {kind: paired_difference, compare: [A, B], method: cluster_bootstrap, seed: 7}

Each model forbids unknown keys, so a misspelt parameter is an error at its line.
This module imports pydantic only (no scipy): it is on the ``evalspec validate`` path.

A kind's parameter model lives in the kind's own module (see
:mod:`evalspec.analyses.contract` and :mod:`evalspec.analyses.registry`); import it from there.
:data:`PARAMS` maps every registered kind to its parameter model, read from the registry.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from evalspec.analyses.base import AnalysisParams

__all__ = ["PARAMS", "known_kinds"]


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


def known_kinds() -> list[str]:
    """The registered analysis kinds, sorted (for 'unknown kind' messages)."""
    from evalspec.analyses.registry import KIND_MODULES

    return sorted(KIND_MODULES)

