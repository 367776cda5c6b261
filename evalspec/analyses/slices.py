"""The ``slices`` analysis: per-slice pass rates and paired differences.

Slices declared in the plan's top-level ``slices`` are *confirmatory*: they were chosen
before the results were seen. Columns requested under ``exploratory`` are reported and
labelled exploratory — seed 000: choosing a subgroup after seeing results can exaggerate
apparent differences. Each group gets every candidate's interval and, when the plan has a
comparison, the paired difference on the group's paired cases.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalspec.analyses.context import AnalysisContext
from evalspec.analyses.paired import paired_core
from evalspec.analyses.proportion import proportion_of
from evalspec.analyses.registry import analysis

__all__ = ["slices", "SLICE_RESAMPLES"]

#: Bootstrap resamples per slice group when the paired method is a bootstrap (seed 0).
SLICE_RESAMPLES = 2000


def _label(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _one(ctx: AnalysisContext, params: Any, name: str, column: str, confirmatory: bool,
         values: list[Any] | None) -> dict[str, Any]:
    col = ctx.case_columns.get(column)
    if col is None:
        raise KeyError(column)
    labels = np.array([_label(v) for v in col], dtype=object)
    present = sorted({v for v in labels.tolist() if v is not None})
    wanted = [_label(v) for v in values] if values else present
    level = ctx.level(params)
    comparison = ctx.primary
    if comparison is None and ctx.baseline is not None and len(ctx.candidates) > 1:
        comparison = (next(c for c in ctx.candidates if c != ctx.baseline), ctx.baseline)
    groups = []
    for value in wanted:
        mask = labels == value
        cands = {}
        for cand in ctx.candidates:
            res = proportion_of(ctx, cand, params.method, level, mask)
            if res is not None:
                cands[cand] = res
        paired = None
        if comparison is not None:
            core = paired_core(ctx, comparison[0], comparison[1], method=params.paired_method, level=level,
                               mask=mask, resamples=SLICE_RESAMPLES, seed=0)
            if core is not None:
                core.pop("_pair")
                paired = {"candidate": comparison[0], "baseline": comparison[1], **core}
        groups.append({"value": value, "n": int(mask.sum()), "candidates": cands, "paired": paired})
    unlisted = [v for v in present if v not in wanted]
    entry: dict[str, Any] = {"name": name, "column": column, "confirmatory": confirmatory, "groups": groups}
    if not confirmatory:
        entry["label"] = "exploratory"
        entry["note"] = ("Exploratory: this slice was not declared in the plan before the results were seen; "
                         "treat its differences as hypotheses, not findings.")
    if unlisted:
        entry["unlisted_values"] = unlisted
    if ctx.case_cluster is not None and ctx.outcomes.binary:
        entry["clustering_note"] = (
            f"Per-group pass-rate intervals ({params.method}) treat cases as independent, but cases share "
            "clusters; they may be too narrow. The paired difference in each group uses "
            f"{params.paired_method}" + (" (a cluster method)." if params.paired_method in ("auto", "cluster_bootstrap", "cluster_t")
                                        else ", which also ignores the clusters."))
    return entry


@analysis("slices")
def slices(ctx: AnalysisContext, params: Any) -> dict[str, Any]:
    """Declared slices (confirmatory), then requested exploratory columns."""
    out = []
    declared = {s.name: s for s in ctx.slices}
    for name in (params.names if params.names is not None else list(declared)):
        s = declared[name]
        out.append(_one(ctx, params, s.name, s.column, True, s.values))
    for column in params.exploratory:
        out.append(_one(ctx, params, column, column, False, None))
    return {"slices": out}
