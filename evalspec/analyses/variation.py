"""The ``run_variation`` analysis: run-to-run variation against case-to-case variation.

"Repeat AI evaluations and report uncertainty honestly" ("Separate sources of variation"):
case variation asks how outcomes differ across cases; run variation how one configuration
behaves when a case is repeated. With ``K_i`` attempts of case ``i`` and pass fraction
``p_i``, the decomposition of Miller (2024, "Adding Error Bars to Evals", §4) is

* within-case (run) variance ``σ²_w = mean_i[ p_i (1 − p_i) K_i / (K_i − 1) ]`` — the
  unbiased per-case Bernoulli variance, averaged over cases;
* between-case variance ``σ²_b = Var_i(p_i) − mean_i(σ²_w,i / K_i)`` (floored at 0) — the
  sample variance of the case means with the part due to finite repeats removed;
* standard error of the mean with ``K`` repeats per case:
  ``SE(K) = sqrt((σ²_b + σ²_w / K) / n)``.

More repeats shrink only the ``σ²_w / K`` term: when ``σ²_b`` dominates, new independent
cases help and more repeats do not. Repeat agreement is the share of cases whose attempts
all agree.

The decomposition treats cases as independent. When clusters are declared the result also
gives the cluster-robust (CR2) standard error of the mean case outcome over clusters
(``se_clustered``), the one that accounts for shared clusters, and a caveat compares the two.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from evalspec.analyses.base import AnalysisParams
from evalspec.analyses.contract import AnalysisKind, Caveat, Issue, Outcome, ResultModel, entries

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from evalspec.analyses.contract import Context

__all__ = ["KIND", "SE_REPEATS", "RunVariationParams", "RunVariationResult", "compute", "variance_decomposition"]

#: Repeats per case at which the standard error is shown.
SE_REPEATS = (1, 2, 5, 10, 20, 50)


class RunVariationParams(AnalysisParams):
    """Run variation vs case variation from repeats ("Repeat AI evaluations...", 'Separate sources of variation')."""

    kind: Literal["run_variation"]
    candidates: list[str] | None = Field(None, description="Candidates to report; default all.")


class SeAtRepeats(ResultModel):
    repeats: int
    se: float


class RunVariationEntry(ResultModel):
    """One candidate's decomposition (variances are None with fewer than two repeated cases)."""

    cases: int
    repeats: int = Field(description="Planned repeats per case.")
    repeats_observed_mean: float
    repeated_cases: int = Field(description="Cases attempted at least twice.")
    mean: float | None
    agreement: float | None = Field(description="Share of repeated cases whose attempts all agree.")
    within_case_variance: float | None
    between_case_variance: float | None
    se: float | None = Field(description="Standard error of the mean at the observed repeats (cases independent).")
    se_by_repeats: list[SeAtRepeats] = Field(default_factory=list)
    se_limit: float | None = Field(None, description="Standard error with infinitely many repeats.")
    run_share: float | None = Field(None, description="Share of the variance of the mean due to run variation.")
    se_clustered: float | None = Field(
        None, description="Cluster-robust (CR2) standard error of the mean case outcome, when clusters are declared.")
    n_clusters: int | None = None
    note: str | None = None


class RunVariationResult(ResultModel):
    candidates: dict[str, RunVariationEntry]


def variance_decomposition(case: np.ndarray, passed: np.ndarray) -> dict[str, Any]:
    """Miller (2024) decomposition from attempt rows.

    Parameters
    ----------
    case : ndarray of int
        Case code of each attempt.
    passed : ndarray of float
        1.0 pass, 0.0 fail (missing already resolved).

    Returns
    -------
    dict
        ``cases`` (with at least one attempt), ``repeated_cases`` (at least two),
        ``mean_repeats``, ``mean``, ``within_case_variance``, ``between_case_variance``,
        ``agreement``, and ``codes``/``case_means`` (per case); variances are None without
        repeated cases.
    """
    import numpy as np

    codes, inv = np.unique(case, return_inverse=True)
    k = np.bincount(inv).astype(np.float64)
    s = np.bincount(inv, weights=passed)
    return _decomposed(codes, k, s)


def _decomposed(codes: np.ndarray, k: np.ndarray, s: np.ndarray) -> dict[str, Any]:
    """The decomposition of cases ``codes`` with ``k`` attempts (all >= 1) and outcome sums ``s``."""
    import numpy as np

    p = s / k if k.size else s
    rep = k >= 2
    out: dict[str, Any] = {"cases": int(codes.size), "repeated_cases": int(rep.sum()),
                           "mean_repeats": float(k.mean()) if k.size else 0.0,
                           "mean": float(p.mean()) if p.size else None, "codes": codes, "case_means": p}
    if rep.sum() < 2:
        out.update(within_case_variance=None, between_case_variance=None, agreement=None)
        return out
    pr, kr = p[rep], k[rep]
    within_i = pr * (1 - pr) * kr / (kr - 1)
    within = float(within_i.mean())
    between = float(max(pr.var(ddof=1) - (within_i / kr).mean(), 0.0))
    agree = float(np.mean((pr == 0) | (pr == 1)))
    out.update(within_case_variance=within, between_case_variance=between, agreement=agree)
    return out


def _decomposition(ctx: Context, name: str) -> dict[str, Any]:
    """:func:`variance_decomposition` of one candidate from its per-case counts (attempt rows or a case table).

    Each case enters through its attempts ``k`` and passes ``s`` only (the plan's missing-outcome
    policy applied; a run's outcomes are 0 or 1, so ``s`` is the sum of the outcomes): the same
    numbers :func:`variance_decomposition` makes of the attempt rows, so the analysis serves a
    pre-aggregated case table and a results set reduced while read alike.
    """
    import numpy as np

    counts = ctx.case_counts()
    if not counts.binary:  # (only a context built from lists holds fractions: read the attempts then)
        reps = ctx.attempts()
        rows = reps.cand == ctx.index(name)
        return variance_decomposition(reps.case[rows], reps.passed[rows])
    row = ctx.index(name)
    codes = np.flatnonzero(counts.trials[row] > 0)
    k = counts.trials[row][codes].astype(np.float64)
    s = counts.passes[row][codes].astype(np.float64)
    return _decomposed(codes, k, s)


def _entry(ctx: Context, name: str) -> tuple[RunVariationEntry, list[Caveat]]:
    import numpy as np

    from evalspec.stats import clustered_standard_error

    dec = _decomposition(ctx, name)
    n = dec["cases"]
    fields: dict[str, Any] = {
        "cases": n, "repeats": ctx.planned_repeats, "repeats_observed_mean": dec["mean_repeats"],
        "repeated_cases": dec["repeated_cases"], "mean": dec["mean"], "agreement": dec["agreement"],
        "within_case_variance": dec["within_case_variance"], "between_case_variance": dec["between_case_variance"],
        "se": None,
    }
    caveats: list[Caveat] = []
    if dec["within_case_variance"] is None:
        fields["note"] = ("Fewer than two cases were attempted more than once, so run-to-run variation cannot be "
                          "separated from case-to-case variation; repeat a representative subset of cases to measure it.")
    else:
        w, b = dec["within_case_variance"], dec["between_case_variance"]
        k_obs = max(1, int(round(dec["mean_repeats"])))
        ks = sorted(set(SE_REPEATS) | {k_obs})
        total = b + w / k_obs
        fields["se"] = float(np.sqrt(total / n))
        fields["se_by_repeats"] = [SeAtRepeats(repeats=k, se=float(np.sqrt((b + w / k) / n))) for k in ks]
        fields["se_limit"] = float(np.sqrt(b / n))
        share = w / k_obs / total if total > 0 else 0.0
        fields["run_share"] = float(share)
        fields["note"] = (
            f"With {k_obs} repeat(s) per case, run-to-run variation makes up {share:.0%} of the variance of "
            f"the mean; even infinitely many repeats would leave a standard error of {100 * fields['se_limit']:.1f} points "
            "from case-to-case variation, which only more independent cases reduce.")
    if ctx.case_cluster is not None and n >= 1:
        clusters = ctx.case_cluster[dec["codes"]]
        g = int(np.unique(clusters).size)
        fields["n_clusters"] = g
        if g >= 2 and fields["se"] is not None:
            se_cl = clustered_standard_error(dec["case_means"], clusters, correction="CR2")
            fields["se_clustered"] = float(se_cl)
            relation = ("wider than" if se_cl > fields["se"] * 1.005 else
                        "narrower than" if se_cl < fields["se"] * 0.995 else "about the same as")
            caveats.append(Caveat(code="cases_independent", severity="note", message=(
                f"{name}: the decomposition treats cases as independent, but cases share {g} clusters. The "
                f"cluster-robust (CR2) standard error of the mean case outcome is {se_cl:.3f}, {relation} the "
                f"{fields['se']:.3f} that treats cases as independent; use it for the uncertainty of the pass rate. "
                "The decomposition still shows how much repeats can help.")))
    return RunVariationEntry(**fields), caveats


def compute(ctx: Context, params: RunVariationParams) -> Outcome:
    """Repeat agreement, within/between-case variance and the SE as repeats grow, per candidate."""
    out: dict[str, RunVariationEntry] = {}
    caveats: list[Caveat] = []
    for name in ctx.chosen(params):
        out[name], notes = _entry(ctx, name)
        caveats += notes
    return Outcome(result=RunVariationResult(candidates=out), caveats=caveats)


def _needs_repeats(view: Any) -> Iterable[Issue]:
    """Validate-time rule: run-to-run variation needs repeated attempts."""
    if view.attempts.repeats > 1:
        return
    for i, _ in entries(view, "run_variation"):
        yield Issue(("analyses", i, "kind"), "run_variation needs repeated attempts, but attempts.repeats is 1",
                    "plan attempts.repeats > 1, or drop this analysis")


KIND = AnalysisKind(name="run_variation", params=RunVariationParams, result=RunVariationResult, compute=compute,
                    title="Run-to-run variation", order=60,
                    rules=((("attempts", "analyses*"), _needs_repeats),),
                    attempt_rows=None)  # attempts and passes per case serve it
