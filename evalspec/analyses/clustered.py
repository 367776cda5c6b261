"""The ``clustered_mean`` analysis: mean numeric score with a cluster-robust interval.

Every attempt with a score counts; attempts of one case — and cases of one cluster — are
correlated, so the standard error is clustered on the plan's cluster (or on the case when
no cluster is declared). The default correction is CR2 (Bell–McCaffrey bias-reduced
linearisation) with the Bell–McCaffrey Satterthwaite degrees of freedom, at every number of
clusters; CR0/CR1 (t on ``G − 1`` df) stay as options. The kernel is
:func:`evalspec.stats.clustered_mean_interval`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import AnalysisKind, Caveat, ColumnNeed, Issue, Outcome, ResultModel, entries

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from evalspec.analyses.contract import Context

__all__ = ["KIND", "ClusteredMeanParams", "ClusteredMeanResult", "columns", "compute"]

#: Fewer clusters than this: a caveat that the interval rests on few independent units.
FEW_CLUSTERS = 10


class ClusteredMeanParams(AnalysisParams):
    """Mean of a numeric score with a cluster-robust standard error and a t interval."""

    kind: Literal["clustered_mean"]
    score: str | None = Field(
        None, description="Results column with the numeric score; default the outcome column."
    )
    correction: Literal["CR2", "CR1", "CR0"] = Field(
        "CR2", description="Small-sample correction of the clustered SE: CR2 with Bell-McCaffrey df (default), "
        "or CR1/CR0 with G-1 df.")
    confidence_level: ConfidenceLevel | None = Field(None, description="Defaults to decision.confidence_level.")
    candidates: list[str] | None = Field(None, description="Candidates to report; default all.")


class ClusteredMeanEntry(ResultModel):
    n: int = Field(description="Attempts with a score.")
    n_clusters: int
    cluster_unit: Literal["clusters", "cases"]
    correction: str
    confidence_level: float
    missing_scores: int
    estimate: float | None
    se: float | None
    df: float | None
    low: float | None
    high: float | None
    method: str | None = None
    note: str | None = None


class ClusteredMeanResult(ResultModel):
    score: str | None = Field(description="The score column (None: the outcome).")
    candidates: dict[str, ClusteredMeanEntry]


def columns(params: ClusteredMeanParams, plan: Any) -> list[ColumnNeed]:
    """The score column, kept per attempt row."""
    return [] if params.score is None else [ColumnNeed(column=params.score, key="score", level="row")]


def _numbers(col: np.ndarray) -> np.ndarray:
    import numpy as np

    out = np.full(col.shape[0], np.nan)
    for i, v in enumerate(col):
        if isinstance(v, bool) or v is None:
            continue
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            continue
    return out


def compute(ctx: Context, params: ClusteredMeanParams) -> Outcome:
    """Mean score per candidate, clustered SE, t interval."""
    import numpy as np

    from evalspec.stats import clustered_mean_interval

    reps = ctx.repeats
    level = ctx.level(params)
    if params.score is not None:
        if params.score not in reps.columns:
            raise KeyError(params.score)
        scores = _numbers(reps.columns[params.score])
    else:
        scores = reps.score
    clusters_all = ctx.case_cluster[reps.case] if ctx.case_cluster is not None else reps.case
    unit: Literal["clusters", "cases"] = "clusters" if ctx.case_cluster is not None else "cases"
    out: dict[str, ClusteredMeanEntry] = {}
    caveats: list[Caveat] = []
    for name in ctx.chosen(params):
        mine = reps.cand == ctx.index(name)
        rows = mine & ~np.isnan(scores)
        values, clusters = scores[rows], clusters_all[rows]
        n_cl = int(np.unique(clusters).size)
        base: dict[str, Any] = {"n": int(values.size), "n_clusters": n_cl, "cluster_unit": unit,
                                "correction": params.correction, "confidence_level": level,
                                "missing_scores": int(np.count_nonzero(mine & np.isnan(scores)))}
        if n_cl < 2:
            out[name] = ClusteredMeanEntry(**base, estimate=float(values.mean()) if values.size else None, se=None,
                                           df=None, low=None, high=None,
                                           note=f"Fewer than two {unit}: no clustered standard error.")
            continue
        r = clustered_mean_interval(values, clusters, confidence_level=level, correction=params.correction)
        out[name] = ClusteredMeanEntry(**base, estimate=r.estimate, se=r.se, df=r.df, low=r.low, high=r.high,
                                       method=r.method, note=r.note or None)
        if r.note:  # a zero-width interval is uninformative, never certainty
            caveats.append(Caveat(code="zero_width_interval", severity="note", message=(
                f"{name}: the mean score's interval has zero width because the {unit} give no variation to "
                "estimate from; it is uninformative, not evidence of certainty.")))
        if n_cl < FEW_CLUSTERS:
            caveats.append(Caveat(code="few_clusters", severity="note", message=(
                f"{name}: the mean score's interval rests on {n_cl} independent {unit}; an interval from so few "
                "units is itself unstable.")))
    return Outcome(result=ClusteredMeanResult(score=params.score, candidates=out), caveats=caveats)


def _needs_clusters(view: Any) -> Iterable[Issue]:
    """Validate-time rule: the robust standard error needs the plan's clusters."""
    if view.units.cluster is not None:
        return
    for i, _ in entries(view, "clustered_mean"):
        yield Issue(("analyses", i, "kind"), "clustered_mean needs units.cluster (the clusters of the robust SE)",
                    "declare units.cluster")


KIND = AnalysisKind(name="clustered_mean", params=ClusteredMeanParams, result=ClusteredMeanResult, compute=compute,
                    title="Mean score with clustered standard errors", columns=columns, order=70,
                    rules=((("units", "analyses*"), _needs_clusters),),
                    attempt_rows="it averages each attempt's score, and a case table carries pass counts only")
