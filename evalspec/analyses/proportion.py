"""The ``proportion`` analysis: each candidate's pass rate with an interval.

"Repeat AI evaluations and report uncertainty honestly" (worked example): A passes 82 of
100, 95 % Wilson 73.3 %–88.3 %. The interval is for one candidate's proportion, not for a
difference.

* Binary case outcomes without clusters: the plan's binomial interval (Wilson by default).
* Binary case outcomes with declared clusters: cases of one cluster are not independent,
  so the interval is cluster-aware (:func:`evalspec.stats.clustered_proportion_interval`,
  Korn and Graubard's effective sample size: the Wilson or Clopper–Pearson interval on
  ``n / design effect`` cases with a degrees-of-freedom adjustment, never narrower than the
  same interval treating cases as independent). A plan method without a cluster-aware form
  is replaced by Wilson (Clopper–Pearson for mid-p) and a caveat says so.
* Under the ``mean`` attempt rule a case outcome is a fraction, so successes are
  fractional and a binomial interval would treat repeats as independent trials: the
  interval is the cluster-robust (CR2, Bell–McCaffrey df) t interval of the mean case
  outcome over clusters (or over cases when none is declared), and a caveat says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import AnalysisKind, Caveat, Outcome, ResultModel

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from evalspec.analyses.contract import Context

__all__ = ["KIND", "ProportionEntry", "ProportionParams", "ProportionResult", "compute", "proportion_of"]

ProportionMethod = Literal[
    "wilson", "wilson_cc", "clopper_pearson", "jeffreys", "agresti_coull", "mid_p", "wald"
]

MEAN_RULE_NOTE = (
    "Attempt rule 'mean': each case contributes the fraction of its attempts that passed, so successes "
    "are fractional; the interval is a t interval on the cluster-robust (CR2) standard error of the mean "
    "case outcome, not a binomial interval."
)


class ProportionParams(AnalysisParams):
    """Pass rate of each candidate with a binomial interval ("Repeat AI evaluations...", worked example)."""

    kind: Literal["proportion"]
    method: ProportionMethod = Field("wilson", description="Interval method for a single proportion.")
    confidence_level: ConfidenceLevel | None = Field(
        None, description="Defaults to decision.confidence_level."
    )
    candidates: list[str] | None = Field(None, description="Candidates to report; default all.")


class ProportionEntry(ResultModel):
    """One candidate's pass rate and interval."""

    successes: int | float = Field(description="Passing cases (fractional under the 'mean' attempt rule).")
    n: int = Field(description="Cases with an outcome.")
    estimate: float
    low: float
    high: float
    method: str = Field(description="Interval method actually used.")
    confidence_level: float
    n_clusters: int | None = Field(None, description="Clusters behind a cluster-aware interval.")
    design_effect: float | None = Field(None, description="Estimated design effect of a cluster-aware interval.")
    note: str | None = None


class ProportionResult(ResultModel):
    """Pass rate of each chosen candidate."""

    candidates: dict[str, ProportionEntry]


def _entry(ctx: Context, name: str, method: str, level: float, mask: np.ndarray | None = None,
           among: tuple[np.ndarray, Any] | None = None,
           kept: bool = False, values: np.ndarray | None = None) -> tuple[ProportionEntry | None, list[Caveat]]:
    """``among``: the cases (positions, in order) and their clusters of a pair made on ``mask``, taken where they
    are the cases this candidate keeps (the same values: a group's clusters then counted once for both);
    ``kept``: the caller knows they are (no outcome of either candidate missing), so it is not asked again;
    ``values``: with ``among`` and ``kept``, this candidate's outcomes on those cases as the pair has them already
    (``row[among[0]]``, not gathered again)."""
    import numpy as np

    from evalspec.stats import cluster_labels, cluster_sizes, clustered_mean_interval, proportion_interval

    row = ctx.outcomes.values[ctx.index(name)]
    if not (among is not None and kept):
        values = None
    if among is not None and kept:
        n = int(among[0].size)
    else:
        keep = ~np.isnan(row)
        if mask is not None:
            keep &= mask
        n = int(np.count_nonzero(keep))
        if among is not None and not (among[0].size == n and bool(keep[among[0]].all())):
            among = None  # (this candidate keeps other cases than the pair's)
    if n == 0:
        return None, []
    every = n == row.size  # (every case kept: the arrays themselves, read only, not gathered)
    idx = among[0] if among is not None else None if every else np.flatnonzero(keep)  # (none made for every case)
    vals = row if every else row[idx] if values is None else values

    def clusters_kept() -> Any:  # (counted once for the kernels that read them)
        if among is not None and among[1] is not None and not every:
            return among[1]
        labels = ctx.case_cluster
        assert labels is not None
        return cluster_labels(labels if every else labels[idx])

    if ctx.outcomes.binary:
        successes = int(vals.sum())
        caveats: list[Caveat] = []
        if ctx.case_cluster is not None:
            case_clusters = clusters_kept()
            if cluster_sizes(case_clusters).size >= 2:
                entry = _clustered(vals, case_clusters, method, level)
                if entry.method.split("_cluster")[0] != method:
                    caveats.append(Caveat(code="method_substituted", severity="note", message=(
                        f"{name}: the plan's {method} interval has no cluster-aware form; the cluster-aware "
                        f"{entry.method.split('_cluster')[0].replace('_', '-')} interval was used, because cases "
                        "share clusters.")))
                return entry, caveats
            caveats.append(Caveat(code="cases_independent", severity="note", message=(
                f"{name}: all cases lie in one cluster, so no cluster-aware interval exists; the {method} interval "
                "treats the cases as independent and is too narrow if they are alike.")))
        r = proportion_interval(successes, n, method=method, confidence_level=level)
        return ProportionEntry(successes=successes, n=n, estimate=r.estimate, low=r.low, high=r.high,
                               method=r.method, confidence_level=r.confidence_level), caveats
    clusters = cluster_labels(np.arange(n)) if ctx.case_cluster is None else clusters_kept()
    if n < 2 or cluster_sizes(clusters).size < 2:
        return ProportionEntry(successes=float(vals.sum()), n=n, estimate=float(vals.mean()), low=0.0, high=1.0,
                               method="none (fewer than 2 clusters)", confidence_level=level,
                               note=_fraction_note(ctx.outcomes.rule)), []
    cm = clustered_mean_interval(vals, clusters, confidence_level=level, correction="CR2")
    if cm.note:  # zero width (no variation between clusters): never shown as certainty
        return _no_variation(vals, clusters, level, ctx.outcomes.rule), []
    return ProportionEntry(successes=float(vals.sum()), n=n, estimate=cm.estimate, low=max(0.0, cm.low),
                           high=min(1.0, cm.high), method="clustered_mean_t (CR2)",
                           confidence_level=cm.confidence_level, n_clusters=cm.n_clusters,
                           note=_fraction_note(ctx.outcomes.rule)), []


def _no_variation(vals: np.ndarray, clusters: np.ndarray, level: float, rule: str) -> ProportionEntry:
    """Fractional outcomes with no variation between clusters (all 0, say): the CR2 t interval has zero
    width; the cluster-aware Wilson interval counts clusters instead (issue 18, finding 9)."""
    from evalspec.stats import clustered_proportion_interval

    r = clustered_proportion_interval(vals, clusters, confidence_level=level, method="wilson")
    why = ("The clustered t interval has zero width here (every cluster's outcomes average the same), which "
           "would read as certainty; the interval shown is the cluster-aware Wilson interval instead: " + r.note + ".")
    return ProportionEntry(successes=float(vals.sum()), n=int(vals.size), estimate=float(r.estimate),
                           low=float(r.low), high=float(r.high), method=f"{r.method} (no variation between clusters)",
                           confidence_level=float(r.confidence_level), n_clusters=int(r.n_clusters),
                           design_effect=float(r.design_effect), note=f"{_fraction_note(rule)} {why}")


def _fraction_note(rule: str) -> str:
    """What a fractional case outcome is, under the plan's attempt rule."""
    if rule == "mean":
        return MEAN_RULE_NOTE
    what = "the chance that at least one of k attempts passes (pass@k)" if rule == "pass_at_k" else \
        "the chance that all k attempts pass (pass^k)"
    return (f"Attempt rule {rule!r}: each case contributes {what}, estimated from all its attempts, so successes "
            "are fractional; the interval is a t interval on the cluster-robust (CR2) standard error of the mean "
            "case outcome, not a binomial interval.")


def _clustered(vals: np.ndarray, clusters: np.ndarray, method: str, level: float) -> ProportionEntry:
    """The cluster-aware interval (Korn-Graubard effective n): Clopper-Pearson for the exact methods, else Wilson."""
    from evalspec.stats import clustered_proportion_interval

    kernel_method = "clopper_pearson" if method in ("clopper_pearson", "mid_p") else "wilson"
    r = clustered_proportion_interval(vals, clusters, confidence_level=level, method=kernel_method)
    return ProportionEntry(successes=int(round(float(r.successes))), n=int(r.n), estimate=float(r.estimate),
                           low=float(r.low), high=float(r.high), method=str(r.method),
                           confidence_level=float(r.confidence_level), n_clusters=int(r.n_clusters),
                           design_effect=float(r.design_effect), note=r.note or None)


def proportion_of(ctx: Context, name: str, method: str, level: float, mask: np.ndarray | None = None,
                  among: tuple[np.ndarray, Any] | None = None, kept: bool = False,
                  values: np.ndarray | None = None) -> dict[str, Any] | None:
    """Pass rate of ``name`` (within ``mask``) as a JSON-ready dict; None when it has no cases (``among``,
    ``kept`` and ``values``: as :func:`_entry` takes them)."""
    entry, _ = _entry(ctx, name, method, level, mask, among, kept, values)
    return None if entry is None else entry.model_dump(mode="json", exclude_none=True)


def compute(ctx: Context, params: ProportionParams) -> Outcome:
    """Each chosen candidate's pass rate with the plan's interval method."""
    level = ctx.level(params)
    out: dict[str, ProportionEntry] = {}
    caveats: list[Caveat] = []
    for name in ctx.chosen(params):
        entry, notes = _entry(ctx, name, params.method, level)
        if entry is not None:
            out[name] = entry
            caveats += notes
    return Outcome(result=ProportionResult(candidates=out), caveats=caveats)


KIND = AnalysisKind(name="proportion", params=ProportionParams, result=ProportionResult, compute=compute,
                    title="Each candidate's pass rate", order=10, attempt_rows=None)
