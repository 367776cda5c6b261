"""``background_temperature``: the hidden randomness of the system under test, as a temperature.

After "Introducing Background Temperature to Characterise Hidden Randomness in Large
Language Models" (Alberto Messina, Stefano Scotta), sections 5-7. The system under test
(SUT) answered a prompt set several times at nominal T = 0 (``target``); stable local
reference models answered the same prompts K times at each temperature of a grid
(``references``: folders written by ``evalspec tbg sample``). Per reference, T_hat is the
grid temperature whose distribution of a variability metric over prompts is closest (KS
distance) to the SUT's; T_bg is their mean. The result carries each T_hat with its
prompt-bootstrap interval, the tied temperatures, the KS curves, the histograms of the SUT
against the closest reference temperature and the reference-vs-reference KS heatmaps
(the paper's Figures 4-6), and whether the SUT is distinguishable from deterministic at all.

When the plan also compares two candidates with repeats, the result puts the observed gap
next to the run-to-run spread the repeats show, in one sentence (section 8 of the paper: a
gap smaller than what background randomness produces is not evidence of a better model).

Numbers come from :mod:`evalspec.tbg.estimate` (numpy only; torch is never imported here).
Relative paths are read from the plan's folder when the context knows it, else from the
working directory.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import AnalysisKind, Caveat, Outcome, ResultModel, SeedUse, default_comparison

__all__ = ["KIND", "BackgroundTemperatureParams", "BackgroundTemperatureResult", "compute"]

Metric = Literal["exact_match", "first_divergence", "edit_distance", "entropy", "token_entropy"]


class BackgroundTemperatureParams(AnalysisParams):
    """Background temperature T_bg of the system under test against local reference models."""

    kind: Literal["background_temperature"]
    target: str = Field(
        description="The system under test's answers at nominal T = 0: JSONL (prompt, repeat, answer or tokens), "
        "or an `evalspec tbg sample` folder (a simulated system under test).")
    target_temperature: float | None = Field(
        None, ge=0.0, description="When target is a sample folder with several temperatures: the one that plays it.")
    references: list[str] = Field(
        min_length=1, description="Folders written by `evalspec tbg sample`, one per reference model.")
    prompts: str | None = Field(
        None, description="The prompts file; when given, every reference run must have been made from it.")
    grid: list[float] | None = Field(
        None, min_length=2, description="Use only these temperatures (each must be in every reference's grid).")
    metric: Metric = Field("exact_match", description="Variability metric per prompt (the paper's primary: exact_match).")
    k: int | None = Field(None, ge=2, description="Answers per prompt compared on both sides (default: the smaller side's).")
    subsamples: int = Field(20, ge=1, le=1000, description="Subsamples of size K per prompt for the side with more answers.")
    resamples: int = Field(2000, ge=100, le=100_000, description="Bootstrap resamples of prompts.")
    seed: int = Field(0, ge=0, description="Seed of the subsamples and of the prompt bootstrap (recorded in the claim).")
    confidence_level: ConfidenceLevel | None = Field(None, description="Defaults to decision.confidence_level.")
    spread_compare: tuple[str, str] | None = Field(
        None, description="[candidate, baseline] whose gap is set against the run-to-run spread; default: the "
        "plan's primary comparison (first non-baseline candidate against the baseline).")


class KsCurve(ResultModel):
    temperatures: list[float]
    ks: list[float]


class Histogram(ResultModel):
    edges: list[float]
    target: list[float] = Field(description="Fraction of the target's per-prompt values in each bin.")
    reference: list[float] = Field(description="The same for the reference at T_hat.")


class ReferenceResult(ResultModel):
    name: str
    t_hat: float
    low: float
    high: float
    high_open: bool = Field(False, description="The upper end is the lowest non-zero grid value, excluded: the "
                            "temperature is below the grid's resolution (< high), not 'at most 0'.")
    tied: list[float] = Field(description="Grid temperatures tied at the smallest KS distance.")
    ks_min: float
    ks_vs_zero: float | None = Field(description="KS distance to the reference at T = 0 (None when 0 is not in the grid).")
    p_vs_deterministic: float | None = Field(
        description="Sign-flip test p-value of 'as varied as the reference at T = 0' (None when 0 is not in the grid).")
    indistinguishable_from_deterministic: bool = Field(description="p_vs_deterministic >= 1 - confidence_level.")
    curve: KsCurve
    histogram: Histogram
    subsampled: str = Field(description="Which side was subsampled to K ('target', '+reference', both or '').")


class Heatmap(ResultModel):
    rows: str
    cols: str
    row_temperatures: list[float]
    col_temperatures: list[float]
    ks: list[list[float]]


class InputFile(ResultModel):
    role: str
    path: str
    sha256: str


class GapContext(ResultModel):
    """The observed gap of a paired comparison next to the run-to-run spread of the same gap."""

    candidate: str
    baseline: str
    gap: float = Field(description="Mean of candidate minus baseline case outcomes (0-1 scale).")
    repeats: int
    spread_low: float = Field(description="Smallest per-repeat gap.")
    spread_high: float = Field(description="Largest per-repeat gap.")
    spread_sd: float = Field(description="Standard deviation of the per-repeat gaps.")
    within_spread: bool = Field(description="|gap| <= spread_high - spread_low: no larger than the run-to-run spread.")
    sentence: str


class BackgroundTemperatureResult(ResultModel):
    t_bg: float
    low: float
    high: float
    high_open: bool = Field(False, description="The upper end is below the lowest non-zero grid value and excluded "
                            "(reported as '< high').")
    confidence_level: float
    indistinguishable_from_deterministic: bool
    summary: str
    metric: str
    units: str = Field(description="'tokens' (ids compared) or 'text' (decoded answers compared).")
    k: int
    prompts: int
    resamples: int
    subsamples: int
    references: list[ReferenceResult]
    heatmaps: list[Heatmap]
    notes: list[str]
    inputs: list[InputFile]
    gap: GapContext | None = None


# -- helpers ------------------------------------------------------------------------------------

def _base_dir(ctx: Any) -> Any:
    from pathlib import Path

    for attr in ("plan_dir", "base_dir"):
        value = getattr(ctx, attr, None)
        if value:
            return Path(value)
    return Path.cwd()


def _digest(path: Any) -> str:
    import hashlib

    h = hashlib.sha256()
    if path.is_dir():
        for f in sorted([path / "manifest.json", *sorted((path / "shards").glob("*.jsonl"))]):
            if f.is_file():
                h.update(f.name.encode())
                h.update(f.read_bytes())
    elif path.is_file():
        h.update(path.read_bytes())
    return h.hexdigest()


def _gap_context(ctx: Any, params: BackgroundTemperatureParams, t_bg_text: str) -> GapContext | None:
    """Observed gap vs the spread of the per-repeat gaps (None without two candidates and two repeats)."""
    import numpy as np

    pair = params.spread_compare or getattr(ctx, "primary", None)
    if pair is None:
        pair = default_comparison(ctx.candidates, ctx.baseline)
        if pair is None:
            return None
    first, second = pair
    if first not in ctx.candidates or second not in ctx.candidates:
        return None
    reps = ctx.repeats
    ia, ib = ctx.index(first), ctx.index(second)
    gaps = []
    for r in np.unique(reps.repeat):
        sel = reps.repeat == r
        a = {int(c): float(p) for c, p in zip(reps.case[sel & (reps.cand == ia)], reps.passed[sel & (reps.cand == ia)],
                                               strict=True) if not np.isnan(p)}
        b = {int(c): float(p) for c, p in zip(reps.case[sel & (reps.cand == ib)], reps.passed[sel & (reps.cand == ib)],
                                               strict=True) if not np.isnan(p)}
        both = sorted(set(a) & set(b))
        if both:
            gaps.append(float(np.mean([a[c] - b[c] for c in both])))
    if len(gaps) < 2:
        return None
    p = ctx.pair(first, second)
    if p.x.size == 0:
        return None
    gap = float(np.mean(p.x - p.y))
    lo, hi, sd = min(gaps), max(gaps), float(np.std(gaps, ddof=1))
    # The gap is "within the run-to-run spread" when it is no larger than how far the same gap
    # moves between repeats of the same evaluation (max - min of the per-repeat gaps).
    within = abs(gap) <= hi - lo
    pts = f"{gap * 100:+.1f} points"
    spread = (f"from {lo * 100:+.1f} to {hi * 100:+.1f} points across {len(gaps)} repeats, a spread of "
              f"{(hi - lo) * 100:.1f} points")
    if within:
        sentence = (f"The observed gap, {first} minus {second} = {pts}, is no larger than the run-to-run spread of the "
                    f"same gap ({spread}): repeating the evaluation moves it that much, so on its own it is not "
                    f"evidence of a better model. {t_bg_text}")
    else:
        sentence = (f"The observed gap, {first} minus {second} = {pts}, is larger than the run-to-run spread of the "
                    f"same gap ({spread}), so background randomness alone does not explain it. {t_bg_text}")
    return GapContext(candidate=first, baseline=second, gap=gap, repeats=len(gaps), spread_low=lo, spread_high=hi,
                      spread_sd=sd, within_spread=within, sentence=sentence)


def _load(ctx: Any, params: BackgroundTemperatureParams) -> tuple[Any, list[Any], list[InputFile]]:
    """``(target, references, input files)``, the prompts file checked against every reference; refused when unusable."""
    from evalspec.analyses.contract import AnalysisRefused
    from evalspec.errors import InputError
    from evalspec.tbg.data import load_reference, load_target

    base = _base_dir(ctx)

    def at(p: str) -> Any:
        from pathlib import Path

        path = Path(p).expanduser()
        return path if path.is_absolute() else base / path

    try:
        target = load_target(at(params.target), params.target_temperature)
        refs = [load_reference(at(r)) for r in params.references]
    except InputError as exc:
        raise AnalysisRefused(exc.message) from None
    inputs = [InputFile(role="target", path=params.target, sha256=_digest(at(params.target)))]
    inputs += [InputFile(role="reference", path=r, sha256=_digest(at(r))) for r in params.references]
    if params.prompts is not None:
        from evalspec.tbg.prompts import prompts_digest, read_prompts

        try:
            prompt_sha = prompts_digest(read_prompts(at(params.prompts)))
        except InputError as exc:
            raise AnalysisRefused(exc.message) from None
        inputs.append(InputFile(role="prompts", path=params.prompts, sha256=prompt_sha))
        for r, name in zip(refs, params.references, strict=True):
            if r.manifest.get("prompts", {}).get("sha256") != prompt_sha:
                raise AnalysisRefused(f"references: {name} was sampled from other prompts than {params.prompts}; "
                                      "sample the reference again from this prompts file")
    return target, refs, inputs


def _tables(refs: list[Any], target: Any, params: BackgroundTemperatureParams) -> list[tuple[str, Any]]:
    """Each reference's answers by temperature (the plan's grid only, when it names one), labelled uniquely."""
    from evalspec.analyses.contract import AnalysisRefused

    tables = []
    names = [r.name for r in refs]
    for r in refs:
        table = r.answers(target.units)
        if params.grid is not None:
            missing = [t for t in params.grid if float(t) not in table]
            if missing:
                raise AnalysisRefused(f"grid: {', '.join(f'{t:g}' for t in missing)} not in the grid of {r.path}")
            table = {float(t): table[float(t)] for t in params.grid}
        label = r.name if names.count(r.name) == 1 else f"{r.name} ({r.path})"
        tables.append((label, table))
    return tables


def _t_text(est: Any, level: float) -> str:
    """What the estimate says about the system at nominal T = 0, in one sentence."""
    below = f"below the lowest non-zero grid value (< {est.t_bg_interval[1]:g})"
    if est.indistinguishable:
        bound = below if est.t_bg_high_open else f"at most {est.t_bg_interval[1]:g}"
        return (f"The system's answers at nominal T = 0 are indistinguishable from deterministic at this resolution "
                f"(background temperature {bound}).")
    if est.t_bg_high_open:
        return f"Its hidden randomness at nominal T = 0 corresponds to a background temperature {below}."
    return (f"Its hidden randomness at nominal T = 0 corresponds to a background temperature of {est.t_bg:g} "
            f"({level:.0%} interval {est.t_bg_interval[0]:g} to {est.t_bg_interval[1]:g}).")


def _caveats(est: Any, gap: Any) -> list[Caveat]:
    """Indistinguishable, a poor match, the grid's edge, and a gap within the run-to-run spread."""
    caveats: list[Caveat] = []
    if est.indistinguishable:
        caveats.append(Caveat(code="tbg_indistinguishable", severity="note", message=est.summary))
    for ref in est.references:
        if ref.ks_min > 0.3:
            caveats.append(Caveat(code="tbg_poor_match", severity="note",
                                  message=f"No temperature of {ref.name} reproduces the system's spread of answers "
                                  f"well (smallest KS distance {ref.ks_min:.2f}); its T_hat is the closest, not a "
                                  "match."))
        if ref.t_hat == ref.temperatures[-1] and not ref.indistinguishable:
            caveats.append(Caveat(code="tbg_grid_edge", severity="note",
                                  message=f"The estimate for {ref.name} is at the top of its temperature grid "
                                  f"({ref.t_hat:g}); the background temperature may be higher."))
    if gap is not None and gap.within_spread:
        caveats.append(Caveat(code="gap_within_run_spread", severity="verdict", message=gap.sentence))
    return caveats


def compute(ctx: Any, params: BackgroundTemperatureParams) -> Outcome:
    """Estimate T_bg from the reference runs and the target's answers (see the module docstring)."""
    from evalspec.analyses.contract import AnalysisRefused
    from evalspec.tbg.estimate import estimate_from_answers

    level = float(params.confidence_level if params.confidence_level is not None else ctx.confidence_level)
    target, refs, inputs = _load(ctx, params)
    tables = _tables(refs, target, params)
    try:
        est = estimate_from_answers(tables, target.answers, metric=params.metric, k=params.k,
                                    subsamples=params.subsamples, resamples=params.resamples, seed=params.seed,
                                    confidence_level=level, units=target.units)
    except ValueError as exc:
        raise AnalysisRefused(f"background_temperature: {exc}") from None
    references = [ReferenceResult(
        name=r.name, t_hat=r.t_hat, low=r.interval[0], high=r.interval[1], high_open=r.high_open, tied=r.tied,
        ks_min=r.ks_min,
        ks_vs_zero=r.ks_vs_zero, p_vs_deterministic=r.p_vs_deterministic,
        indistinguishable_from_deterministic=r.indistinguishable,
        curve=KsCurve(temperatures=r.temperatures, ks=r.ks), histogram=Histogram(**r.hist), subsampled=r.subsampled)
        for r in est.references]
    gap = _gap_context(ctx, params, _t_text(est, level))
    caveats = _caveats(est, gap)
    result = BackgroundTemperatureResult(
        t_bg=est.t_bg, low=est.t_bg_interval[0], high=est.t_bg_interval[1], high_open=est.t_bg_high_open,
        confidence_level=level,
        indistinguishable_from_deterministic=est.indistinguishable, summary=est.summary, metric=est.metric,
        units=est.units, k=est.k, prompts=est.n_prompts, resamples=est.resamples, subsamples=est.subsamples,
        references=references, heatmaps=[Heatmap(**h) for h in est.heatmaps], notes=est.notes, inputs=inputs, gap=gap)
    seeds = [SeedUse(purpose="background temperature: K-matching subsamples and prompt bootstrap", seed=params.seed)]
    return Outcome(result=result, caveats=caveats, seeds=seeds)


KIND = AnalysisKind(
    name="background_temperature",
    params=BackgroundTemperatureParams,
    result=BackgroundTemperatureResult,
    compute=compute,
    title="Background temperature",
    order=80,
    attempt_rows="it sets the gap beside the spread of each repeat's outcomes",
)
