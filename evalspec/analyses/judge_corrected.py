"""The ``judge_corrected`` analysis: pass rates a person would give, from a judge and a labelled subset.

When the outcome comes from a model grader (a judge), a verdict on the judge's labels is a
verdict on the judge. People label a random subset of cases (the plan's ``human_label``
column, blank elsewhere); prediction-powered inference (PPI++: Angelopoulos, Duchi and Zrnic
2023, after Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, *Science* 2023) combines the
few human labels with the judge's labels on every case into an interval for the
**human-label** pass rate of each candidate and for the paired difference
``candidate - baseline``, valid whatever the judge's errors are, including errors that
differ between candidates (:mod:`evalspec.stats.ppi`; clusters: a cluster-robust variance
with the cases of a cluster together). Beside it: the naive judge-only interval (what
``paired_difference`` would read) and the human-labels-only interval.

On the labelled subset it also measures the judge: Cohen's kappa and Krippendorff's alpha
(nominal) with cluster-bootstrap intervals, and the judge's error rate per candidate. When
the error rates differ by ``material_error_gap`` or more between candidates, a caveat bears
on the verdict: a judge-only comparison is then biased toward the candidate the judge
favours.

What the data cannot show: that the labelled cases were drawn at random. With a draw
recorded in the plan (``labelled_subset.file``, written by ``evalspec draw-labels``, its
SHA-256 in the plan) the labelled cases are compared with the drawn ones; without one a
caveat says nothing shows it. Always: the labelled share against the plan's ``fraction``,
and whether the judge's pass rate differs between labelled and unlabelled cases (a random
draw makes them alike; ``p < 0.01`` is a caveat). These caveats bear on the verdict when this
analysis is primary.

With ``primary: true`` the corrected paired interval is the one the decision reads (then no
``paired_difference`` may be primary). It is uninformative with fewer than
:data:`MIN_LABELLED_UNITS` labelled units or zero width.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import (
    AnalysisKind,
    Caveat,
    ColumnNeed,
    Offers,
    Outcome,
    PrimaryInterval,
    ResultModel,
    SeedUse,
    default_comparison,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["KIND", "JudgeCorrectedParams", "JudgeCorrectedResult", "LabelledSubset", "MIN_LABELLED_UNITS", "compute"]

#: Fewer labelled independent units than this: the corrected interval is uninformative.
MIN_LABELLED_UNITS = 10
#: A balance p-value below this says the labelled cases may not be a random subset.
BALANCE_ALPHA = 0.01
#: Observed labelled share outside [1 - this, 1 + this] x the planned fraction: a caveat.
SHARE_TOLERANCE = 0.1

Column = Annotated[str, Field(min_length=1, max_length=200)]


class LabelledSubset(BaseModel):
    """How the cases that people labelled were chosen (preregistered)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    selection: Literal["simple_random", "stratified"] = Field(
        description="simple_random: every case (or cluster) equally likely; stratified: a random draw within "
        "each level of `strata`.")
    fraction: float | None = Field(None, gt=0.0, le=1.0, description="Planned share of the cases (or clusters) "
                                   "drawn for labelling; the run compares it with the share labelled.")
    seed: int | None = Field(None, ge=0, description="Seed of the draw, recorded so the draw can be repeated.")
    unit: Literal["case", "cluster"] = Field("case", description="What was drawn: single cases, or whole clusters "
                                             "(units.cluster) with all their cases.")
    strata: Column | None = Field(None, description="Results column of the strata (required for stratified).")
    file: Annotated[str, Field(min_length=1, max_length=500)] | None = Field(
        None, description="The draw written by `evalspec draw-labels`, relative to the plan: the run compares the "
        "cases that carry a human label with it. Without it evalspec cannot check which cases were drawn.")
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = Field(
        None, description="SHA-256 of the draw file as written: the plan's hash (and its lock) covers the draw.")

    @field_validator("file")
    @classmethod
    def _beside_the_plan(cls, v: str | None) -> str | None:
        import pathlib

        if v is None:
            return v
        parts = pathlib.PurePosixPath(v.replace("\\", "/")).parts
        if not v.strip() or v.startswith(("/", "\\")) or ":" in v or ".." in parts:
            raise ValueError("must be a file inside the plan's folder (a relative path without '..')")
        return v

    @model_validator(mode="after")
    def _strata_for_stratified(self) -> LabelledSubset:
        if self.selection == "stratified" and self.strata is None:
            raise ValueError("selection 'stratified' needs `strata`: the column the draw was stratified by")
        if self.selection == "simple_random" and self.strata is not None:
            raise ValueError("`strata` is only read with selection 'stratified'")
        if (self.file is None) != (self.sha256 is None):
            raise ValueError("`file` and `sha256` go together: paste the entry `evalspec draw-labels` prints")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        for key in ("file", "sha256"):  # unset: the plan hashes as before the keys
            if isinstance(data, dict) and data.get(key) is None:
                data.pop(key, None)
        return data


class JudgeCorrectedParams(AnalysisParams):
    """Human-label pass rates and difference by prediction-powered inference (PPI++) from a judge and a labelled subset."""

    kind: Literal["judge_corrected"]
    human_label: Column = Field(description="Results column of people's pass/fail labels; blank on cases nobody "
                                "labelled. The judge's label is the plan's outcome column.")
    labelled_subset: LabelledSubset = Field(description="How the labelled cases were chosen (at random).")
    compare: tuple[str, str] | None = Field(
        None, description="[candidate, baseline] of the corrected difference; default: the first non-baseline "
        "candidate against the baseline (none without a baseline).")
    candidates: list[str] | None = Field(None, description="Candidates whose corrected pass rate is reported; default all.")
    primary: bool = Field(False, description="Offer the corrected paired interval as the one the verdict reads "
                          "(then no paired_difference may be primary).")
    confidence_level: ConfidenceLevel | None = Field(None, description="Defaults to decision.confidence_level.")
    power_tuning: float | None = Field(
        None, ge=0.0, le=1.0, description="Fixed PPI++ lambda (1: the original PPI, 0: human labels only); default: "
        "tuned to the smallest variance.")
    material_error_gap: float = Field(0.05, gt=0.0, le=1.0, description="Judge error rates that differ by this much "
                                      "between candidates give a caveat on the verdict.")
    resamples: int = Field(2000, ge=200, le=1_000_000, description="Bootstrap resamples of the agreement intervals "
                           "and of the cluster-bootstrap corrected interval.")
    seed: int = Field(0, ge=0, description="Seed of those bootstraps.")
    interval: Literal["cluster_robust", "cluster_bootstrap"] | None = Field(
        None, description="Which corrected paired interval the verdict reads when primary: cluster_robust (the "
        "default: a cluster-robust variance, t on labelled clusters - 1) or cluster_bootstrap (whole clusters "
        "resampled, lambda re-tuned in each resample, percentile). Both are shown.")

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("interval") is None:  # unset: the plan hashes as before the key
            data.pop("interval", None)
        return data


# -- result model ------------------------------------------------------------------------------


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built with the result that holds it


class Interval(_Part):
    estimate: float
    low: float
    high: float
    method: str
    confidence_level: float


class RateEntry(_Part):
    """One candidate: corrected, judge-only and human-only pass rates, and the judge's errors."""

    cases: int = Field(description="Cases with a judge outcome.")
    labelled: int = Field(description="Of those, cases with a human label.")
    corrected: Interval
    judge_only: Interval
    human_only: Interval
    power_tuning: float = Field(description="PPI++ lambda used.")
    judge_error_rate: float | None = Field(None, description="Share of labelled cases where judge and person differ.")
    error_low: float | None = None
    error_high: float | None = None
    false_pass: int | None = Field(None, description="Labelled cases the judge passed and the person failed.")
    false_fail: int | None = Field(None, description="Labelled cases the judge failed and the person passed.")


class ComparisonEntry(_Part):
    candidate: str
    baseline: str
    cases: int
    labelled: int = Field(description="Paired cases with both human labels.")
    corrected: Interval
    corrected_bootstrap: Interval | None = Field(None, description="The same estimate with a cluster-bootstrap "
                                                 "percentile interval (clusters resampled, lambda re-tuned).")
    offered: Literal["cluster_robust", "cluster_bootstrap"] = Field(
        "cluster_robust", description="The corrected interval the verdict reads when primary.")
    informative: bool = True
    why_uninformative: str | None = None
    judge_only: Interval
    human_only: Interval
    power_tuning: float
    judge_shift: float = Field(description="Judge-label minus human-label difference on the labelled cases: how far "
                               "the judge moves the comparison.")
    units: int = Field(description="Independent units behind the corrected interval (labelled clusters or cases).")
    unit_name: str


class AgreementEntry(_Part):
    units: int = Field(description="Labelled (candidate, case) pairs compared.")
    agree: int
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    alpha: float | None = Field(description="Krippendorff's alpha, nominal.")
    alpha_low: float | None
    alpha_high: float | None
    confidence_level: float
    resamples: int
    seed: int
    clusters: int = Field(description="Units the bootstrap resampled (clusters, or cases).")


class SubsetCheck(_Part):
    selection: str
    unit: str
    planned_fraction: float | None
    seed: int | None
    strata: str | None
    cases: int
    labelled_cases: int = Field(description="Cases with a human label for at least one candidate.")
    labelled_share: float
    balance_difference: float | None = Field(None, description="Judge pass rate on labelled minus unlabelled cases.")
    balance_pvalue: float | None = None
    draw_file: str | None = Field(None, description="The recorded draw (labelled_subset.file); None: no draw recorded.")
    drawn_cases: int | None = Field(None, description="Analysed cases the recorded draw holds.")
    labelled_not_drawn: int | None = Field(None, description="Labelled cases the draw does not hold.")
    drawn_not_labelled: int | None = Field(None, description="Drawn cases nobody labelled.")
    examples: list[str] = Field(default_factory=list, description="A few of those cases, to look up.")


class JudgeCorrectedResult(ResultModel):
    human_label: str
    subset: SubsetCheck
    candidates: dict[str, RateEntry]
    comparison: ComparisonEntry | None = None
    agreement: AgreementEntry | None = None
    error_gap: float | None = Field(None, description="Largest minus smallest judge error rate between candidates.")
    material_error_gap: float
    notes: list[str] = Field(default_factory=list)


# -- reading the human labels ----------------------------------------------------------------

_TRUE = {"1", "1.0", "true", "pass", "passed", "yes", "y", "correct", "c", "t"}
_FALSE = {"0", "0.0", "false", "fail", "failed", "no", "n", "incorrect", "i", "f"}
_BLANK = {"", "na", "nan", "null", "none"}


def _label(value: Any) -> float | None:
    """1.0 / 0.0 for a pass/fail label, NaN when blank, None when unreadable."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return math.nan
        return float(value) if value in (0, 1) else None
    if isinstance(value, str):
        s = value.strip().lower()
        return math.nan if s in _BLANK else 1.0 if s in _TRUE else 0.0 if s in _FALSE else None
    return None


def human_matrix(ctx: Any, column: str) -> tuple[np.ndarray, int]:
    """Candidates x cases matrix of human labels (NaN unlabelled); and how many (candidate, case) disagree
    between repeats (the first repeat's label is used)."""
    import numpy as np

    from evalspec.analyses.contract import AnalysisRefused

    raw = np.asarray(ctx.repeats.columns[column], dtype=object)
    uniques: dict[Any, float | None] = {}
    vals = np.empty(raw.size)
    bad: list[str] = []
    for i, v in enumerate(raw.tolist()):
        key: Any = (type(v), v) if not (isinstance(v, float) and math.isnan(v)) else "nan"
        try:
            hash(key)
        except TypeError:
            key = ("unhashable", repr(v))
            uniques.setdefault(key, None)
        if key not in uniques:
            uniques[key] = _label(v)
            if uniques[key] is None:
                bad.append(repr(v))
        got = uniques[key]
        if got is None and key[0] == "unhashable" and repr(v) not in bad:
            bad.append(repr(v))
        vals[i] = math.nan if got is None else got
    if bad:
        raise AnalysisRefused(f"column {column!r} must hold pass/fail labels (1/0, true/false, pass/fail) or be "
                              f"blank, but has {', '.join(bad[:3])}{' ...' if len(bad) > 3 else ''}")
    k, n = ctx.outcomes.values.shape
    out = np.full((k, n), np.nan)
    order = np.lexsort((ctx.repeats.repeat, ctx.repeats.case, ctx.repeats.cand))
    disagree = 0
    seen = np.zeros((k, n), dtype=bool)
    for r in order.tolist():
        v = vals[r]
        if math.isnan(v):
            continue
        j, c = int(ctx.repeats.cand[r]), int(ctx.repeats.case[r])
        if not seen[j, c]:
            out[j, c], seen[j, c] = v, True
        elif out[j, c] != v:
            disagree += 1
    return out, disagree


# -- the pieces -------------------------------------------------------------------------------


def _ppi(y: np.ndarray, f: np.ndarray, lab: np.ndarray, ctx: Any, idx: np.ndarray, strata: np.ndarray | None,
         params: JudgeCorrectedParams, level: float, bounds: tuple[float, float]) -> Any:
    import numpy as np

    from evalspec.stats.ppi import ppi_mean_interval

    clusters = None if ctx.case_cluster is None else ctx.case_cluster[idx]
    return ppi_mean_interval(np.where(lab, y, np.nan), f, lab, clusters=clusters,
                             strata=None if strata is None else strata[idx], lam=params.power_tuning,
                             confidence_level=level, bounds=bounds)


def _bootstrap(y: np.ndarray, f: np.ndarray, lab: np.ndarray, ctx: Any, idx: np.ndarray, strata: np.ndarray | None,
               params: JudgeCorrectedParams, level: float) -> Interval:
    import numpy as np

    from evalspec.stats.ppi import ppi_bootstrap_interval

    clusters = None if ctx.case_cluster is None else ctx.case_cluster[idx]
    b = ppi_bootstrap_interval(np.where(lab, y, np.nan), f, lab, clusters=clusters,
                               strata=None if strata is None else strata[idx], lam=params.power_tuning,
                               confidence_level=level, resamples=params.resamples, seed=params.seed, bounds=(-1.0, 1.0))
    method = b.method.replace("prediction-powered inference", "people's labels by prediction-powered inference", 1)
    return Interval(estimate=b.estimate, low=b.low, high=b.high, method=method, confidence_level=level)


def _intervals(r: Any, level: float) -> tuple[Interval, Interval]:
    method = r.method.replace("prediction-powered inference", "people's labels by prediction-powered inference", 1)
    corrected = Interval(estimate=r.estimate, low=r.low, high=r.high, method=method, confidence_level=level)
    human = Interval(estimate=r.classical_estimate, low=r.classical_low, high=r.classical_high,
                     method="human labels only (lambda = 0)", confidence_level=level)
    return corrected, human


def _errors(y: np.ndarray, f: np.ndarray, clusters: np.ndarray | None, level: float) -> dict[str, Any]:
    import numpy as np

    from evalspec.stats import clustered_proportion_interval, proportion_interval

    wrong = (y != f).astype(float)
    n = int(wrong.size)
    if n == 0:
        return {}
    if clusters is not None and np.unique(clusters).size >= 2:
        ci = clustered_proportion_interval(wrong, clusters, confidence_level=level)
        low, high = ci.low, ci.high
    else:
        pi = proportion_interval(int(wrong.sum()), n, confidence_level=level)
        low, high = pi.low, pi.high
    return {"judge_error_rate": float(wrong.mean()), "error_low": float(low), "error_high": float(high),
            "false_pass": int(((f == 1) & (y == 0)).sum()), "false_fail": int(((f == 0) & (y == 1)).sum())}


def _strata(ctx: Any, params: JudgeCorrectedParams) -> np.ndarray | None:
    import numpy as np

    col = params.labelled_subset.strata
    if col is None:
        return None
    values = np.asarray(ctx.case_columns[col], dtype=object)
    return np.unique(np.array([str(v) for v in values.tolist()], dtype=object), return_inverse=True)[1]


def _rates(ctx: Any, params: JudgeCorrectedParams, human: np.ndarray, strata: np.ndarray | None,
           level: float) -> dict[str, RateEntry]:
    import numpy as np

    from evalspec.analyses.proportion import proportion_of

    out: dict[str, RateEntry] = {}
    for name in ctx.chosen(params):
        j = ctx.index(name)
        f_all = ctx.outcomes.values[j]
        idx = np.flatnonzero(~np.isnan(f_all))
        lab = ~np.isnan(human[j, idx])
        if not lab.any():
            continue
        r = _ppi(human[j, idx], f_all[idx], lab, ctx, idx, strata, params, level, (0.0, 1.0))
        corrected, human_only = _intervals(r, level)
        naive = proportion_of(ctx, name, "wilson", level) or {}
        judge_only = Interval(estimate=float(naive.get("estimate", 0.0)), low=float(naive.get("low", 0.0)),
                              high=float(naive.get("high", 1.0)), method=str(naive.get("method", "wilson")),
                              confidence_level=level)
        errs = (_errors(human[j, idx][lab], f_all[idx][lab],
                        None if ctx.case_cluster is None else ctx.case_cluster[idx][lab], level)
                if ctx.outcomes.binary else {})
        out[name] = RateEntry(cases=int(idx.size), labelled=int(lab.sum()), corrected=corrected,
                              judge_only=judge_only, human_only=human_only, power_tuning=r.lam, **errs)
    return out


def _comparison(ctx: Any, params: JudgeCorrectedParams, human: np.ndarray, strata: np.ndarray | None,
                level: float) -> ComparisonEntry | None:
    import numpy as np

    from evalspec.analyses.paired import paired_core

    pair = _pair_names(ctx, params)
    if pair is None:
        return None
    first, second = pair
    i, j = ctx.index(first), ctx.index(second)
    fx, fy = ctx.outcomes.values[i], ctx.outcomes.values[j]
    idx = np.flatnonzero(~np.isnan(fx) & ~np.isnan(fy))
    if idx.size == 0:
        return None
    y = human[i, idx] - human[j, idx]
    lab = ~np.isnan(y)
    f = fx[idx] - fy[idx]
    naive_core = paired_core(ctx, first, second, method="auto", level=level, resamples=1000, seed=0,
                             bootstrap_interval="percentile", correction="CR2")
    assert naive_core is not None
    core = naive_core[0]
    judge_only = Interval(estimate=core.estimate, low=core.low, high=core.high, method=core.method,
                          confidence_level=level)
    clusters = None if ctx.case_cluster is None else ctx.case_cluster[idx]
    units = int(np.unique(clusters[lab]).size) if clusters is not None else int(lab.sum())
    unit_name = "labelled clusters" if clusters is not None else "labelled cases"
    if not lab.any():
        empty = Interval(estimate=0.0, low=-1.0, high=1.0, method="none (no labelled pair)", confidence_level=level)
        return ComparisonEntry(candidate=first, baseline=second, cases=int(idx.size), labelled=0, corrected=empty,
                               informative=False, why_uninformative="no case has human labels for both candidates",
                               judge_only=judge_only, human_only=empty, power_tuning=0.0, judge_shift=0.0,
                               units=0, unit_name=unit_name)
    r = _ppi(y, f, lab, ctx, idx, strata, params, level, (-1.0, 1.0))
    corrected, human_only = _intervals(r, level)
    boot = _bootstrap(y, f, lab, ctx, idx, strata, params, level) if units >= 2 else None
    why = None
    if units < MIN_LABELLED_UNITS:
        why = (f"only {units} labelled {unit_name} hold human labels for both {first} and {second}; at least "
               f"{MIN_LABELLED_UNITS} are needed for a prediction-powered interval to mean anything")
    elif not (read := boot if params.interval == "cluster_bootstrap" and boot else corrected).high - read.low > 1e-12:
        why = "the corrected interval has zero width: the labelled cases give no variation to estimate from"
    return ComparisonEntry(candidate=first, baseline=second, cases=int(idx.size), labelled=int(lab.sum()),
                           corrected=corrected, corrected_bootstrap=boot, offered=params.interval or "cluster_robust",
                           informative=why is None, why_uninformative=why,
                           judge_only=judge_only, human_only=human_only, power_tuning=r.lam,
                           judge_shift=float(np.mean(f[lab] - y[lab])), units=units, unit_name=unit_name)


def _pair_names(ctx: Any, params: JudgeCorrectedParams) -> tuple[str, str] | None:
    if params.compare is not None:
        return params.compare[0], params.compare[1]
    return default_comparison(ctx.candidates, ctx.baseline)


def _agreement(ctx: Any, params: JudgeCorrectedParams, human: np.ndarray, level: float) -> AgreementEntry | None:
    import numpy as np

    from evalspec.stats.agreement import binary_agreement

    if not ctx.outcomes.binary:
        return None
    rows = [ctx.index(n) for n in ctx.chosen(params)]
    h = human[rows]
    f = ctx.outcomes.values[rows]
    keep = ~np.isnan(h) & ~np.isnan(f)
    if not keep.any():
        return None
    cases = np.nonzero(keep)[1]
    units = cases if ctx.case_cluster is None else ctx.case_cluster[cases]
    r = binary_agreement(h[keep], f[keep], clusters=units, confidence_level=level, resamples=params.resamples,
                         seed=params.seed)
    return AgreementEntry(units=r.units, agree=r.agree, kappa=r.kappa, kappa_low=r.kappa_low, kappa_high=r.kappa_high,
                          alpha=r.alpha, alpha_low=r.alpha_low, alpha_high=r.alpha_high, confidence_level=level,
                          resamples=r.resamples, seed=r.seed, clusters=r.clusters)


def _subset(ctx: Any, params: JudgeCorrectedParams, human: np.ndarray) -> SubsetCheck:
    import numpy as np

    from evalspec.stats.ppi import labelled_balance

    ls = params.labelled_subset
    rows = [ctx.index(n) for n in ctx.chosen(params)]
    f = ctx.outcomes.values[rows]
    has = ~np.isnan(f).all(axis=0)
    lab_case = (~np.isnan(human[rows])).any(axis=0) & has
    idx = np.flatnonzero(has)
    n, n_lab = int(idx.size), int(lab_case[idx].sum())
    share = n_lab / n if n else 0.0
    if ls.unit == "cluster" and ctx.case_cluster is not None and n:
        cl = ctx.case_cluster[idx]
        labelled_clusters = np.unique(cl[lab_case[idx]])
        share = labelled_clusters.size / np.unique(cl).size
    diff = pval = None
    if 0 < n_lab < n:
        mean_f = np.nanmean(f[:, idx], axis=0)
        b = labelled_balance(mean_f, lab_case[idx], clusters=None if ctx.case_cluster is None else ctx.case_cluster[idx])
        diff, pval = b.difference, b.pvalue
    check = _against_draw(ctx, ls, idx, lab_case[idx]) if ls.file is not None else {}
    return SubsetCheck(selection=ls.selection, unit=ls.unit, planned_fraction=ls.fraction, seed=ls.seed,
                       strata=ls.strata, cases=n, labelled_cases=n_lab, labelled_share=float(share),
                       balance_difference=diff, balance_pvalue=pval, **check)


def _load_draw(ctx: Any, ls: LabelledSubset) -> Any:
    """The recorded draw (labelled_subset.file), its SHA-256 checked against the plan's."""
    import hashlib
    from pathlib import Path

    from evalspec._files import read_text
    from evalspec.analyses.contract import AnalysisRefused
    from evalspec.errors import InputError
    from evalspec.label_draw import parse_draw

    path = Path(ls.file or "")
    base = getattr(ctx, "plan_dir", None)
    if base is not None and not path.is_absolute():
        path = Path(base) / path
    try:
        text = read_text(path, what="labelled-subset draw", limit=64 * 1024**2) or ""
    except (InputError, OSError) as exc:
        raise AnalysisRefused(f"the recorded draw of the labelled cases {ls.file} cannot be read: "
                              f"{getattr(exc, 'message', None) or exc}") from None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != ls.sha256:
        raise AnalysisRefused(f"the draw {ls.file} is not the one the plan recorded (SHA-256 {digest[:12]}..., the "
                              f"plan says {(ls.sha256 or '')[:12]}...): the draw was changed after it was preregistered")
    draw, problem = parse_draw(text)
    if draw is None:
        raise AnalysisRefused(f"the draw {ls.file}: {problem}")
    return draw


def _against_draw(ctx: Any, ls: LabelledSubset, idx: np.ndarray, labelled: np.ndarray) -> dict[str, Any]:
    """The labelled cases against the recorded draw: labelled but not drawn, drawn but not labelled."""
    drawn = set(_load_draw(ctx, ls).cases)
    ids = [str(c) for c in ctx.case_ids[idx].tolist()]
    extra = [c for c, lab in zip(ids, labelled.tolist(), strict=True) if lab and c not in drawn]
    skipped = [c for c, lab in zip(ids, labelled.tolist(), strict=True) if not lab and c in drawn]
    return {"draw_file": ls.file, "drawn_cases": sum(c in drawn for c in ids), "labelled_not_drawn": len(extra),
            "drawn_not_labelled": len(skipped), "examples": (extra + skipped)[:5]}


def _caveats(result: JudgeCorrectedResult, params: JudgeCorrectedParams, disagree: int) -> list[Caveat]:
    sev: Literal["verdict", "note"] = "verdict" if params.primary else "note"
    s = result.subset
    out: list[Caveat] = []
    what = "clusters" if s.unit == "cluster" else "cases"
    if s.planned_fraction is not None and abs(s.labelled_share / s.planned_fraction - 1) > SHARE_TOLERANCE:
        out.append(Caveat(code="labelled_share_differs", severity=sev, message=(
            f"People labelled {s.labelled_share:.1%} of the {what}, but the plan drew {s.planned_fraction:.1%}: if "
            "drawn cases were skipped, or others added, for a reason linked to their outcome, the corrected numbers "
            "can be biased.")))
    if s.balance_pvalue is not None and s.balance_pvalue < BALANCE_ALPHA:
        out.append(Caveat(code="labelled_subset_not_random", severity=sev, message=(
            f"The judge passes {abs(s.balance_difference or 0):.1%} {'more' if (s.balance_difference or 0) > 0 else 'fewer'}"
            f" of the labelled cases than of the others (p = {s.balance_pvalue:.2g}): the labelled cases may not be a "
            "random subset, which the corrected interval assumes.")))
    if s.draw_file is None:
        out.append(Caveat(code="labelled_draw_not_recorded", severity=sev, message=(
            "The plan records no draw of the cases people labelled (evalspec draw-labels writes one), so nothing shows "
            "they were chosen at random, which the corrected numbers assume: evalspec checked only the labelled share "
            "and the judge's pass rate on them.")))
    elif s.labelled_not_drawn or s.drawn_not_labelled:
        shown = f" (e.g. {', '.join(s.examples[:3])})" if s.examples else ""
        out.append(Caveat(code="labels_differ_from_draw", severity=sev, message=(
            f"The labelled cases are not the recorded draw ({s.draw_file}): {s.labelled_not_drawn} labelled cases were "
            f"not drawn and {s.drawn_not_labelled} drawn cases were not labelled{shown}. If cases were swapped or "
            "skipped for a reason linked to their outcome, the corrected numbers can be biased.")))
    c = result.comparison
    if params.primary and c is not None and not c.informative:
        out.append(Caveat(code="uninformative_interval", severity="verdict",
                          message=f"The corrected interval cannot decide anything: {c.why_uninformative}."))
    if params.primary and c is not None and c.informative and params.power_tuning != 0:
        out.append(Caveat(code="corrected_level_approximate", severity="verdict", message=(
            "The corrected interval uses the judge's labels with a weight tuned on the same labelled cases, so it "
            "holds the truth a little less often than stated: in simulations with 100 labelled cases among 2,000 it "
            "held it in 94.1% of studies for a stated 95%, and wrongly excluded it on one side in up to 3.4% "
            "rather than 2.5%. Label more cases, or set power_tuning: 0 (people's labels only, a wider interval) "
            "where that matters.")))
    if result.error_gap is not None and result.error_gap >= params.material_error_gap:
        rates = ", ".join(f"{n} {e.judge_error_rate:.1%}" for n, e in result.candidates.items()
                          if e.judge_error_rate is not None)
        tail = ("The verdict reads the corrected interval, which accounts for it." if params.primary and c is not None
                else "A comparison read from the judge's labels alone is biased toward the candidate the judge "
                "favours; the corrected interval of this analysis accounts for it.")
        out.append(Caveat(code="judge_error_differs", severity="verdict", message=(
            f"The judge disagrees with people at different rates for different candidates ({rates}; a gap of "
            f"{result.error_gap:.1%}, at least the plan's {params.material_error_gap:.1%}). {tail}")))
    if disagree:
        out.append(Caveat(code="human_labels_differ_between_repeats", severity="note", message=(
            f"{disagree} human labels differ between repeats of the same case and candidate; the first repeat's "
            "label was used.")))
    if result.agreement is not None and result.agreement.kappa is None:
        out.append(Caveat(code="agreement_undefined", severity="note", message=(
            "Agreement between judge and people cannot be measured here: every label on the labelled subset is the "
            "same.")))
    return out


def compute(ctx: Any, params: JudgeCorrectedParams) -> Outcome:
    """Corrected pass rates, the corrected paired difference, and the judge's agreement with people."""
    import numpy as np

    from evalspec.analyses.contract import AnalysisRefused

    level = ctx.level(params)
    if params.labelled_subset.unit == "cluster" and ctx.case_cluster is None:
        raise AnalysisRefused("labelled_subset.unit is 'cluster' but the plan declares no units.cluster")
    human, disagree = human_matrix(ctx, params.human_label)
    if np.isnan(human).all():
        raise AnalysisRefused(f"column {params.human_label!r} holds no human label; label a random subset of cases, "
                              "or remove this analysis")
    strata = _strata(ctx, params)
    try:
        rates = _rates(ctx, params, human, strata, level)
        comparison = _comparison(ctx, params, human, strata, level)
    except ValueError as exc:  # a stratum without labelled cases
        raise AnalysisRefused(str(exc).split(": ", 1)[-1]) from None
    errors = [e.judge_error_rate for e in rates.values() if e.judge_error_rate is not None]
    result = JudgeCorrectedResult(
        human_label=params.human_label, subset=_subset(ctx, params, human), candidates=rates, comparison=comparison,
        agreement=_agreement(ctx, params, human, level), error_gap=(max(errors) - min(errors)) if len(errors) > 1 else None,
        material_error_gap=params.material_error_gap)
    offers = Offers()
    if params.primary and comparison is not None:
        c = comparison
        read = c.corrected_bootstrap if c.offered == "cluster_bootstrap" and c.corrected_bootstrap else c.corrected
        offers = Offers(primary=PrimaryInterval(
            candidate=c.candidate, baseline=c.baseline, estimate=read.estimate, low=read.low,
            high=read.high, method=read.method, confidence_level=level, one_sided_alpha=(1 - level) / 2,
            informative=c.informative, why_uninformative=c.why_uninformative, units=c.units, unit_name=c.unit_name,
            estimand="human_label_difference"))  # not the judge's outcome column: the decision cannot recompute it
    seeds = ([SeedUse(purpose="agreement and corrected-interval bootstrap resamples", seed=params.seed)]
             if result.agreement or (comparison is not None and comparison.corrected_bootstrap) else [])
    return Outcome(result=result, caveats=_caveats(result, params, disagree), seeds=seeds, offers=offers)


def columns(params: JudgeCorrectedParams, plan: Any) -> list[ColumnNeed]:
    """The human labels (per attempt row) and, for a stratified draw, the strata (per case)."""
    out = [ColumnNeed(column=params.human_label, key="human_label", level="row")]
    if params.labelled_subset.strata is not None:
        out.append(ColumnNeed(column=params.labelled_subset.strata, key="labelled_subset.strata"))
    return out


KIND = AnalysisKind(name="judge_corrected", params=JudgeCorrectedParams, result=JudgeCorrectedResult,
                    compute=compute, title="Judge-corrected pass rates", columns=columns, order=25,
                    attempt_rows="it reads each attempt's judge and human labels")
