"""The background-temperature estimator (section 6.5 and 7 of the paper).

"Introducing Background Temperature to Characterise Hidden Randomness in Large Language
Models" (Alberto Messina, Stefano Scotta): for a reference model ``l`` answering every
prompt ``K`` times at each temperature ``T`` of a grid, ``f_T`` is the distribution over
prompts of a variability metric; ``g`` is the same for the system under test (SUT) at
nominal T = 0. Then ``T_hat_l = argmin_T KS(f_T, g)`` and ``T_bg = mean_l T_hat_l``.

What this implementation adds, so that the number cannot say more than the data:

* **Like with like.** The metrics depend on the number of answers per prompt (the most
  common answer among 100 is rarer than among 32), so SUT and reference are compared at
  the same ``K``: the side with more answers is subsampled to ``K`` (without replacement,
  ``subsamples`` times per prompt) and its distribution is the pool of those subsample
  values, so each value carries the same sampling noise as a ``K``-answer reference value.
  (Averaging the metric over subsamples first would remove that noise from one side only.)
* **Ties.** KS values between discrete distributions tie; the whole set of temperatures at
  the minimum is reported, and the point estimate is its lower median on the grid.
* **Uncertainty.** A percentile interval from resampling prompts (the same resample for the
  SUT and every reference): for each replicate the tied set ``[lo, hi]`` is found, and the
  interval runs from the ``alpha/2`` quantile of ``lo`` to the ``1 - alpha/2`` quantile of
  ``hi`` (conservative, on the grid).
* **Deterministic or not.** Whether the SUT is more varied than the reference at T = 0 is
  a test of its own: a sign-flip (prompt-swap) test of the pooled KS distance between g and
  f_0. When it does not reject at ``1 - confidence_level``, the SUT is *indistinguishable
  from deterministic at this resolution* (prompts, K), reported instead of "T_bg = 0"; when
  it rejects but T = 0 is still the closest grid point, the note says the temperature lies
  below the grid's lowest non-zero value.
* **Below the grid's resolution.** A temperature between 0 and the lowest non-zero grid value
  is closest to T = 0, so an interval whose upper end is the grid's lowest value (0) says
  only that the temperature is below the next one: its upper end is reported as that value,
  open (``high_open``; "< 0.01"), never as "at most 0" (a true T = 0.003 on a grid 0, 0.01,
  ... gave [0, 0] in a quarter of the studies).

numpy only (no torch): :mod:`evalspec.stats.distance` gives the KS distance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalspec.stats.distance import ks_distance
from evalspec.tbg.metrics import METRICS, AnswerSet

__all__ = ["ReferenceEstimate", "TbgEstimate", "estimate_from_answers", "estimate_tbg", "fast_ks_curves",
           "prompt_values"]

_TIE = 1e-12

Answers = Sequence[Sequence[int] | str]


def prompt_values(sets: Sequence[AnswerSet], metric: str, k: int, subsamples: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Metric per prompt at ``k`` answers: ``[prompts, 1]``, or ``[prompts, subsamples]`` when a set is larger.

    A prompt with exactly ``k`` answers repeats its one value in every column (its ECDF is the same).
    """
    larger = any(len(s) > k for s in sets)
    cols = subsamples if larger else 1
    out = np.empty((len(sets), cols), dtype=np.float64)
    for i, s in enumerate(sets):
        if len(s) < k:
            raise ValueError(f"prompt {i} has {len(s)} answers, fewer than K = {k}")
        if len(s) == k:
            out[i, :] = s.value(metric)
            continue
        for j in range(cols):
            out[i, j] = s.value(metric, rng.choice(len(s), size=k, replace=False))
    return out


def _ecdf_rows(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Per prompt, the fraction of its values <= each grid point: ``[prompts, len(grid)]``."""
    srt = np.sort(values, axis=1)
    return np.stack([np.searchsorted(row, grid, side="right") for row in srt]) / values.shape[1]


def fast_ks_curves(g: np.ndarray, refs: Sequence[np.ndarray], weights: np.ndarray) -> np.ndarray:
    """KS distance of the pooled ``g`` against each pooled ``refs[t]`` under prompt weights.

    ``g`` and ``refs[t]`` are ``[prompts, columns]``; ``weights`` is ``[B, prompts]`` (counts of
    each prompt in a resample; all ones gives the plain pooled KS distance, the same as
    :func:`evalspec.stats.distance.ks_distance` on the pooled values). Returns ``[B, len(refs)]``.
    """
    n = weights.sum(axis=1, keepdims=True)
    out = np.empty((weights.shape[0], len(refs)))
    for t, f in enumerate(refs):
        grid = np.unique(np.concatenate([g.ravel(), f.ravel()]))
        diff = _ecdf_rows(g, grid) - _ecdf_rows(f, grid)
        out[:, t] = np.abs(weights @ diff / n).max(axis=1)
    return out


def _sign_flip_p(g: np.ndarray, f0: np.ndarray, seed: int, stream: int, flips: int = 4000) -> float:
    """p-value of "the target is as varied as the reference at T = 0", by flipping prompts.

    Under that hypothesis the target's and the reference's values of one prompt are
    exchangeable, so swapping them (per prompt, at random) leaves the pooled KS distance's
    distribution unchanged. A swap negates that prompt's ECDF difference, so each flip is a
    sign vector over prompts. ``p = (1 + #{KS_flip >= KS_obs}) / (flips + 1)``.
    """
    grid = np.unique(np.concatenate([g.ravel(), f0.ravel()]))
    diff = _ecdf_rows(g, grid) - _ecdf_rows(f0, grid)
    n = diff.shape[0]
    observed = np.abs(diff.mean(axis=0)).max()
    if observed <= _TIE:
        return 1.0
    rng = np.random.default_rng(np.random.SeedSequence([seed, 4, stream]))
    signs = rng.choice(np.array([-1.0, 1.0]), size=(flips, n))
    ks = np.abs(signs @ diff / n).max(axis=1)
    return float((1 + np.sum(ks >= observed - _TIE)) / (flips + 1))


def _tied(curve: np.ndarray) -> np.ndarray:
    return np.flatnonzero(curve <= curve.min() + _TIE)


@dataclass
class ReferenceEstimate:
    """T_hat for one reference model."""

    name: str
    temperatures: list[float]
    ks: list[float]
    t_hat: float
    tied: list[float]
    ks_min: float
    interval: tuple[float, float]
    share_including_zero: float | None
    indistinguishable: bool
    ks_vs_zero: float | None
    p_vs_deterministic: float | None
    k: int
    subsampled: str
    hist: dict[str, Any] = field(default_factory=dict)
    replicate_lo: np.ndarray | None = None
    replicate_hi: np.ndarray | None = None
    high_open: bool = False  # the upper end is the lowest non-zero grid value, excluded ("< 0.01")

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "t_hat": self.t_hat, "interval": list(self.interval), "high_open": self.high_open,
            "tied": self.tied,
            "ks_min": self.ks_min, "temperatures": self.temperatures, "ks": self.ks,
            "indistinguishable_from_deterministic": self.indistinguishable,
            "ks_vs_zero": self.ks_vs_zero, "p_vs_deterministic": self.p_vs_deterministic,
            "share_of_resamples_including_zero": self.share_including_zero,
            "k": self.k, "subsampled": self.subsampled, "histogram": self.hist,
        }


@dataclass
class TbgEstimate:
    """The estimate over all reference models."""

    metric: str
    units: str
    k: int
    n_prompts: int
    resamples: int
    subsamples: int
    seed: int
    confidence_level: float
    references: list[ReferenceEstimate]
    t_bg: float
    t_bg_interval: tuple[float, float]
    indistinguishable: bool
    heatmaps: list[dict[str, Any]]
    notes: list[str]
    summary: str
    t_bg_high_open: bool = False  # the upper end is below the lowest non-zero grid value(s), excluded

    def to_json(self) -> dict[str, Any]:
        return {
            "t_bg": self.t_bg, "t_bg_interval": list(self.t_bg_interval), "t_bg_high_open": self.t_bg_high_open,
            "indistinguishable_from_deterministic": self.indistinguishable,
            "summary": self.summary, "metric": self.metric, "units": self.units, "k": self.k,
            "prompts": self.n_prompts, "resamples": self.resamples, "subsamples": self.subsamples,
            "seed": self.seed, "confidence_level": self.confidence_level,
            "references": [r.to_json() for r in self.references], "heatmaps": self.heatmaps, "notes": self.notes,
        }


def _histogram(g: np.ndarray, f: np.ndarray, bins: int = 20) -> dict[str, Any]:
    lo, hi = float(min(g.min(), f.min())), float(max(g.max(), f.max()))
    if hi <= lo:
        hi = lo + 1.0
    edges = np.linspace(lo, hi, bins + 1)
    gh, _ = np.histogram(g.ravel(), edges)
    fh, _ = np.histogram(f.ravel(), edges)
    return {"edges": edges.tolist(), "target": (gh / g.size).tolist(), "reference": (fh / f.size).tolist()}


def _quantile(x: np.ndarray, q: float, method: str) -> float:
    return float(np.quantile(x, q, method=method))


def _shared(references: Sequence[tuple[str, Mapping[float, Mapping[str, Answers]]]], target: Mapping[str, Answers],
            k: int | None, notes: list[str]) -> tuple[list[str], list[AnswerSet], int]:
    """The prompts the target and every reference answered, the target's answer sets, and K."""
    common = set(target)
    for _, table in references:
        for answers in table.values():
            common &= set(answers)
    prompts = sorted(common)
    dropped = len(set(target)) - len(prompts)
    if dropped:
        notes.append(f"{dropped} of the target's prompts have no reference answers and were left out.")
    if len(prompts) < 5:
        raise ValueError(f"only {len(prompts)} prompts are shared by the target and every reference; need at least 5")
    t_sets = [AnswerSet(target[p]) for p in prompts]
    k_target = min(len(s) for s in t_sets)
    k_ref = min(len(a) for _, table in references for ans in table.values() for a in (ans[p] for p in prompts))
    k_auto = min(k_target, k_ref)
    if k is None:
        k = k_auto
    elif k > k_auto:
        raise ValueError(f"K = {k} is more than the answers available (target {k_target}, reference {k_ref} per prompt)")
    if k < 2:
        raise ValueError(f"need at least 2 answers per prompt on both sides (K = {k})")
    if max(len(s) for s in t_sets) != k_target:
        notes.append(f"The target has between {k_target} and {max(len(s) for s in t_sets)} answers per prompt.")
    return prompts, t_sets, k


@dataclass(frozen=True)
class _Setup:
    """What every reference's estimate shares: the target's values, the bootstrap weights, the settings."""

    prompts: list[str]
    g: np.ndarray
    weights: np.ndarray
    metric: str
    k: int
    subsamples: int
    resamples: int
    seed: int
    alpha: float


def _reference(r_index: int, name: str, table: Mapping[float, Mapping[str, Answers]], s: _Setup,
               notes: list[str]) -> tuple[ReferenceEstimate, tuple[str, list[float], list[np.ndarray]]]:
    """T_hat of one reference, its bootstrap interval and the sign-flip test against T = 0 (notes appended)."""
    g, alpha, resamples, seed = s.g, s.alpha, s.resamples, s.seed
    temps = sorted(float(t) for t in table)
    r_rng = np.random.default_rng(np.random.SeedSequence([seed, 3, r_index]))
    f = [prompt_values([AnswerSet(table[t][p]) for p in s.prompts], s.metric, s.k, s.subsamples, r_rng) for t in temps]
    if any(x.shape[1] > 1 for x in f):
        notes.append(f"{name}: its answers were subsampled to K = {s.k} per prompt ({s.subsamples} subsamples, pooled).")
    curve = np.array([ks_distance(g.ravel(), ft.ravel()).statistic for ft in f])
    tied = _tied(curve)
    t_hat = temps[int(tied[(len(tied) - 1) // 2])]
    reps = fast_ks_curves(g, f, s.weights)
    lo = np.empty(resamples)
    hi = np.empty(resamples)
    for b in range(resamples):
        tb = _tied(reps[b])
        lo[b], hi[b] = temps[tb[0]], temps[tb[-1]]
    interval = (_quantile(lo, alpha / 2, "lower"), _quantile(hi, 1 - alpha / 2, "higher"))
    high_open = bool(interval[1] <= temps[0] and len(temps) > 1)
    if high_open:  # below the grid's resolution: "< lowest non-zero value", never "at most 0"
        interval = (interval[0], temps[1])
    has_zero = temps[0] == 0.0
    share_zero = float(np.mean(lo == 0.0)) if has_zero else None
    p_det = _sign_flip_p(g, f[0], seed, r_index) if has_zero else None
    indist = bool(has_zero and p_det is not None and p_det >= alpha)
    if not np.allclose(fast_ks_curves(g, f, np.ones((1, len(s.prompts))))[0], curve, atol=1e-12):  # pragma: no cover
        raise AssertionError("bootstrap KS path disagrees with ks_distance")
    est = ReferenceEstimate(
        name=name, temperatures=temps, ks=curve.tolist(), t_hat=t_hat, tied=[temps[i] for i in tied],
        ks_min=float(curve.min()), interval=interval, share_including_zero=share_zero, indistinguishable=indist,
        ks_vs_zero=float(curve[0]) if has_zero else None, p_vs_deterministic=p_det, k=s.k,
        subsampled=("target" if g.shape[1] > 1 else "") + ("+reference" if any(x.shape[1] > 1 for x in f) else ""),
        hist=_histogram(g, f[temps.index(t_hat)]), replicate_lo=lo, replicate_hi=hi, high_open=high_open)
    if has_zero and not indist and t_hat == 0.0:
        notes.append(f"{name}: the target is more varied than the reference at T = 0 (sign-flip test p = "
                     f"{p_det:.3f}) but closest to it on this grid: its temperature lies below the lowest non-zero "
                     f"grid temperature ({temps[1]:g} if present); a finer grid would resolve it.")
    if t_hat == temps[-1]:
        notes.append(f"{name}: the estimate is at the top of the grid ({t_hat:g}); the true value may be higher.")
    if est.ks_min > 0.3:
        notes.append(f"{name}: no temperature of the grid reproduces the target's spread well (smallest KS "
                     f"distance {est.ks_min:.2f}); T_hat is the closest, not a match.")
    if len(tied) > 1:
        notes.append(f"{name}: {len(tied)} temperatures tie at the smallest KS distance "
                     f"({', '.join(f'{temps[i]:g}' for i in tied)}).")
    return est, (name, temps, f)


def _heatmaps(ref_values: list[tuple[str, list[float], list[np.ndarray]]]) -> list[dict[str, Any]]:
    """The KS distance between every two references at every pair of temperatures."""
    heatmaps = []
    for a in range(len(ref_values)):
        for b in range(a + 1, len(ref_values)):
            na, ta, fa = ref_values[a]
            nb, tb_, fb = ref_values[b]
            mat = [[ks_distance(x.ravel(), y.ravel()).statistic for y in fb] for x in fa]
            heatmaps.append({"rows": na, "cols": nb, "row_temperatures": ta, "col_temperatures": tb_, "ks": mat})
    return heatmaps


def _summary(t_bg: float, interval: tuple[float, float], indist: bool, tbg_open: bool, level: float, n: int, k: int,
             metric: str, n_refs: int) -> str:
    """The estimate in one sentence (below the grid's resolution, indistinguishable, or a value)."""
    pct = f"{level:.0%}"
    below = f"below the lowest non-zero grid value (< {interval[1]:g})"
    if indist and tbg_open:
        return (f"Indistinguishable from deterministic at this resolution ({n} prompts, K = {k}, {metric}): "
                f"the background temperature is {below}, at the {pct} level; a finer grid would resolve it.")
    if indist:
        return (f"Indistinguishable from deterministic at this resolution ({n} prompts, K = {k}, {metric}): "
                f"the background temperature is at most {interval[1]:g} ({pct} interval upper end).")
    if tbg_open:
        return (f"Background temperature T_bg {below} ({pct} interval {interval[0]:g} to "
                f"< {interval[1]:g}; {n} prompts, K = {k}, {metric}, {n_refs} reference "
                f"model{'s' if n_refs > 1 else ''}); a finer grid would resolve it.")
    return (f"Background temperature T_bg = {t_bg:g} ({pct} interval {interval[0]:g} to "
            f"{interval[1]:g}; {n} prompts, K = {k}, {metric}, "
            f"{n_refs} reference model{'s' if n_refs > 1 else ''}).")


def estimate_from_answers(references: Sequence[tuple[str, Mapping[float, Mapping[str, Answers]]]],
                          target: Mapping[str, Answers], *, metric: str = "exact_match", k: int | None = None,
                          subsamples: int = 20, resamples: int = 1000, seed: int = 0,
                          confidence_level: float = 0.95, units: str = "tokens") -> TbgEstimate:
    """Estimate T_hat per reference and T_bg from answers in memory.

    ``references`` is a list of ``(name, {T: {prompt: answers}})``; ``target`` is
    ``{prompt: answers}``. Only prompts that the target and every reference answered are used.
    Raises ``ValueError`` with a plain message on unusable input.
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    if not references:
        raise ValueError("no reference run given")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence level must be in (0, 1) (got {confidence_level})")
    notes: list[str] = []
    prompts, t_sets, k = _shared(references, target, k, notes)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    g = prompt_values(t_sets, metric, k, subsamples, rng)
    if g.shape[1] > 1:
        notes.append(f"The target's answers were subsampled to K = {k} per prompt ({subsamples} subsamples, pooled) "
                     "to compare like with like.")
    n = len(prompts)
    level = confidence_level
    alpha = 1 - level
    boot_rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))
    weights = boot_rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64)
    setup = _Setup(prompts=prompts, g=g, weights=weights, metric=metric, k=k, subsamples=subsamples,
                   resamples=resamples, seed=seed, alpha=alpha)
    estimates: list[ReferenceEstimate] = []
    ref_values: list[tuple[str, list[float], list[np.ndarray]]] = []
    for r_index, (name, table) in enumerate(references):
        est, values = _reference(r_index, name, table, setup, notes)
        estimates.append(est)
        ref_values.append(values)
    t_bg = float(np.mean([e.t_hat for e in estimates]))
    mean_lo = np.mean([e.replicate_lo for e in estimates], axis=0)
    mean_hi = np.mean([e.replicate_hi for e in estimates], axis=0)
    t_bg_interval = (_quantile(mean_lo, alpha / 2, "lower"), _quantile(mean_hi, 1 - alpha / 2, "higher"))
    tbg_open = bool(all(e.high_open for e in estimates) and t_bg_interval[1] <= min(e.temperatures[0] for e in estimates))
    if tbg_open:  # every reference below its lowest non-zero grid value: T_bg below their mean
        t_bg_interval = (t_bg_interval[0], float(np.mean([e.temperatures[1] for e in estimates])))
    indist = all(e.indistinguishable for e in estimates)
    summary = _summary(t_bg, t_bg_interval, indist, tbg_open, level, n, k, metric, len(estimates))
    return TbgEstimate(metric=metric, units=units, k=k, n_prompts=n, resamples=resamples, subsamples=subsamples,
                       seed=seed, confidence_level=level, references=estimates, t_bg=t_bg,
                       t_bg_interval=t_bg_interval, indistinguishable=indist, heatmaps=_heatmaps(ref_values),
                       notes=notes, summary=summary, t_bg_high_open=tbg_open)


def estimate_tbg(reference_dirs: Sequence[str], target: str, *, target_temperature: float | None = None,
                 **kwargs: Any) -> TbgEstimate:
    """Estimate from ``tbg sample`` folders and a target file/folder (see :mod:`evalspec.tbg.data`)."""
    from evalspec.errors import InputError
    from evalspec.tbg.data import load_reference, load_target

    tgt = load_target(target, target_temperature)
    refs = [load_reference(d) for d in reference_dirs]
    names = [r.name for r in refs]
    labelled = [(r.name if names.count(r.name) == 1 else f"{r.name} ({r.path})", r.answers(tgt.units)) for r in refs]
    try:
        return estimate_from_answers(labelled, tgt.answers, units=tgt.units, **kwargs)
    except ValueError as exc:
        raise InputError(f"tbg estimate: {exc}") from None
