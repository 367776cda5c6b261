"""The ``beta_binomial`` analysis: the hierarchical Beta-Binomial profile of repeated trials.

From "Characterizing LLM performance via a Bayesian lens" (section 2): each question of a
condition is tried ``J_i`` times; ``y_i`` trials are correct. Per condition the analysis
reports the posterior mean and HDI of

* ``mu``: mean accuracy over the population of questions;
* ``kappa``: concentration (large = questions of similar difficulty);
* ``variance``: the Beta variance ``mu (1 - mu) / (kappa + 1)`` of question difficulty, the
  quantity to compare across conditions whose ``mu`` differ (``kappa`` alone depends on mu);
* ``gamma_bar``: mean over questions of ``J_i theta_i (1 - theta_i)``, the expected
  trial-to-trial variance of a question's count of correct trials (response stochasticity),
  computed per posterior draw as the paper does;
* ``theta_i`` per question (mean and HDI; the claim keeps at most ``theta_cap`` questions per
  condition, the hardest and easiest first when it must cut);

plus a posterior predictive check, the engine's diagnostics, and for each contrast the
posterior of each difference (HDI, P(diff > 0), whether the HDI excludes zero) and the
normalised Bhattacharyya distance between the conditions' posteriors.

Conditions are the candidates by default (e.g. candidates ``exact`` and ``rephrased`` for one
model under two prompt forms), or the values of a case-level results column (``condition:
variant``) for one candidate. Trials are the attempts of a case: outcomes must be pass/fail.
Missing attempts are dropped under the ``exclude`` missing policy and count as failed
trials under ``count_as_fail``.

The analysis describes; it offers nothing to the decision (the verdict comes from the plan's
primary comparison). ``evalspec run --save-posterior`` writes the posterior draws as ArviZ
InferenceData (netCDF) next to the claim.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from evalspec.analyses.base import AnalysisParams
from evalspec.analyses.contract import AnalysisKind, Caveat, ColumnNeed, Outcome, ResultModel, SeedUse

if TYPE_CHECKING:  # pragma: no cover
    from evalspec.analyses.contract import Context

__all__ = [
    "KIND",
    "BetaBinomialParams",
    "BetaBinomialResult",
    "collect_posteriors",
    "compute",
    "posterior_writer_missing",
    "save_posteriors",
]

PARAMETERS = ("mu", "kappa", "gamma_bar", "variance")

#: Points of each posterior density curve kept in the claim for the report's plots.
DENSITY_POINTS = 64


class BetaBinomialParams(AnalysisParams):
    """Hierarchical Beta-Binomial profile per condition ("Characterizing LLM performance via a Bayesian lens")."""

    kind: Literal["beta_binomial"]
    condition: str = Field(
        "candidate",
        description="What a condition is: 'candidate' (each candidate is a condition) or a results column holding "
                    "each case's condition (e.g. 'variant'), for one candidate.")
    conditions: list[str] | None = Field(
        None, description="Conditions to profile, in order; default all (the baseline first when it is one).")
    candidate: str | None = Field(
        None, description="With a condition column: the candidate whose trials are profiled; default the only one.")
    contrasts: list[tuple[str, str]] | None = Field(
        None, description="Pairs [first, second] whose differences (first minus second) are reported; default "
                          "every other condition minus the first.")
    engine: Literal["grid", "nuts"] = Field(
        "grid", description="'grid': deterministic adaptive quadrature (fast, default). 'nuts': the paper's PyMC "
                            "model sampled by NUTS (needs the mcmc extra).")
    hdi_prob: float = Field(0.95, gt=0.0, lt=1.0, description="Mass of every highest-density interval.")
    prior_mu: tuple[float, float] = Field((1.0, 1.0), description="mu ~ Beta(a, b); the paper: Beta(1, 1).")
    prior_log_kappa: tuple[float, float] = Field(
        (0.0, 1.5), description="log kappa ~ Normal(mean, sd); the paper: Normal(0, 1.5).")
    draws: int = Field(20_000, ge=1_000, le=1_000_000, description="Grid engine: posterior draws for intervals.")
    grid_points: int = Field(96, ge=32, le=1024, description="Grid engine: points per axis of the final grid.")
    chains: int = Field(4, ge=1, le=16, description="NUTS engine: chains (the paper: 4).")
    tune: int = Field(2_000, ge=100, le=50_000, description="NUTS engine: warm-up iterations per chain "
                                                            "(the paper: 50,000).")
    nuts_draws: int = Field(2_000, ge=100, le=200_000, description="NUTS engine: draws per chain (the paper: "
                                                                   "200,000 in all).")
    target_accept: float = Field(0.9, gt=0.5, lt=1.0, description="NUTS engine: target acceptance rate.")
    progressbar: bool = Field(False, description="NUTS engine: show PyMC's progress bar.")
    seed: int = Field(0, ge=0, description="Seed of every random draw (recorded in the claim).")
    theta_cap: int = Field(
        300, ge=0, le=5_000, description="Most questions per condition whose theta_i go into the claim.")


# --------------------------------------------------------------------------- result
class Estimate(ResultModel):
    mean: float
    sd: float
    low: float
    high: float


class Density(ResultModel):
    """A posterior density on an even grid (for the report's plots)."""

    x: list[float]
    density: list[float]

    @model_validator(mode="after")
    def _same_length(self) -> Density:
        # a hand-edited claim with curves of unequal length would crash the report's plot
        if len(self.x) != len(self.density):
            raise ValueError(f"x has {len(self.x)} points and density {len(self.density)}; a density curve needs "
                             "one value per point")
        return self


class ThetaEntry(ResultModel):
    case: str
    successes: int
    trials: int
    mean: float
    low: float
    high: float


class DiagnosticEntry(ResultModel):
    check: str
    ok: bool
    value: float | None
    threshold: float | None
    finding: str
    meaning: str
    remedy: str


class PPCStat(ResultModel):
    name: str
    observed: float
    replicated_mean: float
    low: float
    high: float
    p_value: float


class PPCEntry(ResultModel):
    """Posterior predictive check of the per-question proportions y_i / J_i."""

    statistics: list[PPCStat]
    bin_edges: list[float]
    observed: list[float]
    replicated_median: list[float]
    replicated_low: list[float]
    replicated_high: list[float]
    band: float = Field(description="Mass of the replicated band per bin.")
    replicates: int
    p_min: float = Field(description="Smallest two-sided posterior predictive p-value of the statistics.")
    bins_outside: int = Field(description="Bins whose observed count lies outside the replicated band.")


class ConditionEntry(ResultModel):
    questions: int
    trials: int
    successes: int
    mu: Estimate
    kappa: Estimate
    gamma_bar: Estimate
    variance: Estimate
    densities: dict[str, Density]
    theta: list[ThetaEntry]
    theta_omitted: int = Field(0, description="Questions left out of `theta` by theta_cap.")
    ppc: PPCEntry
    diagnostics: list[DiagnosticEntry]
    notes: list[str] = Field(default_factory=list)


class DifferenceEntry(ResultModel):
    mean: float
    sd: float
    low: float
    high: float
    p_greater: float = Field(description="Posterior probability that the difference is above zero.")
    excludes_zero: bool
    density: Density


class ContrastEntry(ResultModel):
    first: str
    second: str
    differences: dict[str, DifferenceEntry]
    bhattacharyya_coefficient: dict[str, float] = Field(
        description="Overlap of the two posteriors per parameter: 1 identical, 0 disjoint.")
    bhattacharyya_distance: dict[str, float] = Field(
        description="Normalised Bhattacharyya (Hellinger) distance sqrt(1 - coefficient), in [0, 1].")


class BetaBinomialResult(ResultModel):
    engine: str
    hdi_prob: float
    condition: str
    prior: dict[str, float]
    conditions: dict[str, ConditionEntry]
    contrasts: list[ContrastEntry]
    seed: int


# --------------------------------------------------------------------------- --save-posterior
_SINK: contextvars.ContextVar[list[tuple[str, Any]] | None] = contextvars.ContextVar("beta_binomial_sink",
                                                                                     default=None)


@contextlib.contextmanager
def collect_posteriors() -> Iterator[list[tuple[str, Any]]]:
    """Within this block every ``beta_binomial`` analysis appends ``(name, profile)`` to the list.

    ``evalspec run --save-posterior`` uses it to write the posteriors after the claim.
    """
    sink: list[tuple[str, Any]] = []
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


def posterior_writer_missing() -> str | None:
    """Why ``--save-posterior`` cannot work here (ArviZ or a netCDF writer missing), or None."""
    import importlib.util

    if importlib.util.find_spec("arviz") is None:
        return "--save-posterior needs ArviZ: pip install 'evalspec[mcmc]'"
    if importlib.util.find_spec("h5netcdf") is None and importlib.util.find_spec("netCDF4") is None:
        return "--save-posterior needs a netCDF writer (h5netcdf or netCDF4): pip install 'evalspec[mcmc]'"
    return None


def save_posteriors(sink: list[tuple[str, Any]], folder: Any) -> list[Any]:
    """Write each collected profile as ArviZ InferenceData (netCDF): ``posterior-<label>.nc``."""
    import os
    import re
    from pathlib import Path

    from evalspec.stats.beta_binomial import to_inference_data

    folder = Path(folder)
    written: list[Path] = []
    seen: dict[str, int] = {}
    for label, profile in sink:
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-.") or "beta_binomial"
        seen[stem] = seen.get(stem, 0) + 1
        name = f"posterior-{stem}" + (f"-{seen[stem]}" if seen[stem] > 1 else "") + ".nc"
        target = folder / name
        tmp = folder / f".{name}.tmp"
        to_inference_data(profile).to_netcdf(str(tmp))
        os.replace(tmp, target)
        written.append(target)
    return written


# --------------------------------------------------------------------------- compute
def columns(params: BetaBinomialParams, plan: Any) -> list[ColumnNeed]:
    if params.condition == "candidate":
        return []
    return [ColumnNeed(column=params.condition, key="condition", level="case")]


def _refuse(message: str) -> Exception:
    from evalspec.analyses.contract import AnalysisRefused

    return AnalysisRefused(message)


def _counts(ctx: Context, params: BetaBinomialParams) -> tuple[dict[str, tuple[Any, Any, Any]], list[str]]:
    """Per condition: (successes, trials, case labels); and notes about dropped attempts.

    Successes count attempts whose outcome is 1 (a run's outcomes are pass/fail: a score outcome is
    read against its pass threshold before any analysis).
    """
    import numpy as np

    counts = ctx.case_counts()  # the plan's missing-outcome policy applied; from attempt rows or a case table
    if not counts.binary:
        raise _refuse("beta_binomial needs pass/fail trials, but the outcome column has values other than 0 and 1 "
                      "(e.g. scores); use clustered_mean for a numeric score")
    notes: list[str] = []
    missing = int(counts.missing.sum())
    n_cases = len(ctx.case_ids)
    if params.condition == "candidate":
        groups = {name: (ctx.index(name), np.ones(n_cases, dtype=bool)) for name in ctx.candidates}
    else:
        col = ctx.case_columns.get(params.condition)
        if col is None:
            raise _refuse(f"condition column {params.condition!r} is not in the results")
        if params.candidate is not None:
            if params.candidate not in ctx.candidates:
                raise _refuse(f"candidate {params.candidate!r} is not one of {', '.join(ctx.candidates)}")
            cand = params.candidate
        elif len(ctx.candidates) == 1:
            cand = ctx.candidates[0]
        else:
            raise _refuse(f"with condition column {params.condition!r} and several candidates, set `candidate` to "
                          f"one of {', '.join(ctx.candidates)}")
        values = np.array(["" if v is None or (isinstance(v, float) and v != v) else str(v) for v in col],
                          dtype=object)
        labels = [v for v in dict.fromkeys(values.tolist()) if v != ""]
        groups = {v: (ctx.index(cand), values == v) for v in sorted(labels)}
    wanted = params.conditions or list(groups)
    if params.conditions is None and ctx.baseline in groups:
        wanted = [ctx.baseline] + [g for g in groups if g != ctx.baseline]
    out: dict[str, tuple[Any, Any, Any]] = {}
    for name in wanted:
        if name not in groups:
            raise _refuse(f"condition {name!r} has no data; conditions in the results: {', '.join(groups) or 'none'}")
        row, in_group = groups[name]
        codes = np.flatnonzero(in_group & (counts.trials[row] > 0))  # cases with trials, in case order
        if codes.size == 0:
            raise _refuse(f"condition {name!r} has no trials with an outcome; run it or leave it out of `conditions`")
        y = counts.passes[row, codes].astype(np.int64)
        j = counts.trials[row, codes].astype(np.int64)
        out[name] = (y, j, ctx.case_ids[codes])
    if missing:
        how = "dropped" if ctx.missing_policy == "exclude" else "counted as failed trials"
        notes.append(f"{missing} attempt(s) without an outcome were {how}.")
    return out, notes


def _density(draws: Any, log_scale: bool = False) -> Density:
    import numpy as np

    x = np.log(draws) if log_scale else np.asarray(draws)
    lo, hi = np.quantile(x, [0.002, 0.998])
    if not hi > lo:
        lo, hi = lo - 1e-6, hi + 1e-6
    pad = 0.08 * (hi - lo)
    edges = np.linspace(lo - pad, hi + pad, DENSITY_POINTS + 1)
    counts = np.histogram(x, edges)[0].astype(float)
    kernel = np.array([1, 4, 6, 4, 1], dtype=float)
    kernel /= kernel.sum()
    smooth = np.convolve(counts, kernel, mode="same")
    mids = 0.5 * (edges[1:] + edges[:-1])
    if log_scale:  # density of kappa itself on its (uneven) points
        xs = np.exp(mids)
        dens = smooth / (x.size * (edges[1] - edges[0])) / xs
    else:
        xs = mids
        dens = smooth / (x.size * (edges[1] - edges[0]))
    return Density(x=[float(f"{v:.6g}") for v in xs], density=[float(f"{v:.5g}") for v in dens])


def _est(s: Any) -> Estimate:
    return Estimate(mean=s.mean, sd=s.sd, low=s.low, high=s.high)


def _theta(post: Any, cases: Any, cap: int) -> tuple[list[ThetaEntry], int]:
    import numpy as np

    th = post.theta
    n = th.mean.size
    order = np.argsort(th.mean, kind="stable")
    if n > cap:
        half = cap // 2
        order = np.concatenate([order[:half], order[n - (cap - half):]]) if cap else order[:0]
    entries = [ThetaEntry(case=str(cases[i]), successes=int(th.successes[i]), trials=int(th.trials[i]),
                          mean=float(th.mean[i]), low=float(th.low[i]), high=float(th.high[i])) for i in order]
    return entries, n - len(entries)


def _profile(counts: dict[str, Any], names: list[str], contrasts: Any, params: BetaBinomialParams) -> tuple[Any, Any]:
    """``(profile, prior)`` from the engine, an invalid setting refused at the analysis."""
    from evalspec.stats import InvalidArgument
    from evalspec.stats.beta_binomial import BetaBinomialPrior, beta_binomial_profile

    try:
        prior = BetaBinomialPrior(mu_a=params.prior_mu[0], mu_b=params.prior_mu[1],
                                  log_kappa_mean=params.prior_log_kappa[0], log_kappa_sd=params.prior_log_kappa[1])
        profile = beta_binomial_profile(
            {n: (counts[n][0], counts[n][1]) for n in names}, engine=params.engine, contrasts=contrasts,
            hdi_prob=params.hdi_prob, seed=params.seed, prior=prior, draws=params.draws,
            grid_points=params.grid_points, chains=params.chains, tune=params.tune, nuts_draws=params.nuts_draws,
            target_accept=params.target_accept, progressbar=params.progressbar)
    except InvalidArgument as exc:
        raise _refuse(f"beta_binomial: {exc}") from None
    return profile, prior


def _condition(name: str, post: Any, ids: Any, theta_cap: Any) -> tuple[ConditionEntry, list[Caveat]]:
    """One condition's claim entry and the caveats its diagnostics, fit, data and theta cap raise."""
    theta, omitted = _theta(post, ids, theta_cap)
    ppc = post.ppc
    entry = ConditionEntry(
        questions=post.n_questions, trials=post.n_trials, successes=post.n_successes,
        mu=_est(post.mu), kappa=_est(post.kappa), gamma_bar=_est(post.gamma_bar), variance=_est(post.variance),
        densities={p: _density(post.draws[p], log_scale=(p == "kappa")) for p in PARAMETERS},
        theta=theta, theta_omitted=omitted,
        ppc=PPCEntry(statistics=[PPCStat(name=s.name, observed=s.observed, replicated_mean=s.replicated_mean,
                                         low=s.low, high=s.high, p_value=s.p_value) for s in ppc.statistics],
                     bin_edges=[float(v) for v in ppc.bin_edges], observed=[float(v) for v in ppc.observed],
                     replicated_median=[float(v) for v in ppc.replicated_median],
                     replicated_low=[float(v) for v in ppc.replicated_low],
                     replicated_high=[float(v) for v in ppc.replicated_high], band=ppc.band,
                     replicates=ppc.replicates, p_min=ppc.p_min, bins_outside=ppc.bins_outside),
        diagnostics=[DiagnosticEntry(**d.to_dict()) for d in post.diagnostics], notes=list(post.notes))
    caveats: list[Caveat] = []
    for d in post.diagnostics:
        if not d.ok:
            caveats.append(Caveat(code=f"bayes_{d.check}", severity="note", message=(
                f"Bayesian profile of {name}: {d.finding}. This means {d.meaning}. Remedy: {d.remedy}.")))
    if ppc.p_min < 0.05:
        worst = min(ppc.statistics, key=lambda s: s.p_value)
        caveats.append(Caveat(code="bayes_ppc_misfit", severity="note", message=(
            f"Bayesian profile of {name}: the model reproduces the data poorly on '{worst.name}' (observed "
            f"{worst.observed:.3g}, replicated {worst.low:.3g} to {worst.high:.3g}); read mu, kappa and gamma-bar "
            "with care.")))
    for text in post.notes:
        caveats.append(Caveat(code="bayes_data", severity="note", message=f"Bayesian profile of {name}: {text}."))
    if omitted:
        caveats.append(Caveat(code="bayes_theta_cap", severity="note", message=(
            f"Bayesian profile of {name}: {omitted} of {post.n_questions} questions' theta are left out of the "
            f"claim (theta_cap {theta_cap}); the hardest and easiest are kept.")))
    return entry, caveats


def _contrast(profile: Any, c: Any) -> ContrastEntry:
    """One contrast's claim entry: each difference's summary and the density of its draws."""
    diffs = {}
    for p in PARAMETERS:
        dif = c.differences[p]
        draws = profile.conditions[c.first].draws[p]
        other = profile.conditions[c.second].draws[p]
        m = min(draws.size, other.size)
        diffs[p] = DifferenceEntry(mean=dif.mean, sd=dif.sd, low=dif.low, high=dif.high, p_greater=dif.p_greater,
                                   excludes_zero=dif.excludes_zero, density=_density(draws[:m] - other[:m]))
    return ContrastEntry(first=c.first, second=c.second, differences=diffs,
                         bhattacharyya_coefficient=c.bhattacharyya_coefficient,
                         bhattacharyya_distance=c.bhattacharyya_distance)


def compute(ctx: Context, params: BetaBinomialParams) -> Outcome:
    """Posterior profile of each condition and the contrasts between conditions."""
    counts, notes = _counts(ctx, params)
    names = list(counts)
    contrasts = params.contrasts
    if contrasts is None:
        contrasts = [(other, names[0]) for other in names[1:]]
    for a, b in contrasts:
        for n in (a, b):
            if n not in counts:
                raise _refuse(f"contrast [{a}, {b}]: condition {n!r} is not profiled; conditions: {', '.join(names)}")
    profile, prior = _profile(counts, names, contrasts, params)
    sink = _SINK.get()
    if sink is not None:
        sink.append((params.label or "beta_binomial", profile))
    caveats: list[Caveat] = []
    conds: dict[str, ConditionEntry] = {}
    for name in names:
        conds[name], found = _condition(name, profile.conditions[name], counts[name][2], params.theta_cap)
        caveats += found
    cons = [_contrast(profile, c) for c in profile.contrasts]
    for text in notes:
        caveats.append(Caveat(code="bayes_missing", severity="note", message=f"Bayesian profile: {text}"))
    result = BetaBinomialResult(
        engine=params.engine, hdi_prob=params.hdi_prob, condition=params.condition,
        prior={"mu_a": prior.mu_a, "mu_b": prior.mu_b, "log_kappa_mean": prior.log_kappa_mean,
               "log_kappa_sd": prior.log_kappa_sd},
        conditions=conds, contrasts=cons, seed=params.seed)
    purpose = ("Beta-Binomial posterior draws (grid cells, theta and gamma-bar draws, posterior predictive check)"
               if params.engine == "grid" else
               "Beta-Binomial posterior (NUTS chains, theta and gamma-bar draws, posterior predictive check)")
    return Outcome(result=result, caveats=caveats, seeds=[SeedUse(purpose=purpose, seed=params.seed)])


KIND = AnalysisKind(name="beta_binomial", params=BetaBinomialParams, result=BetaBinomialResult, compute=compute,
                    title="Bayesian profile of repeated trials", columns=columns, order=65, attempt_rows=None)
