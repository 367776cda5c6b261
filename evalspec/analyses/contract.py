"""The analysis contract: what every analysis kind declares, in one place.

An analysis kind is one module under :mod:`evalspec.analyses` that defines, at top level
and importing nothing heavier than pydantic (``evalspec validate`` imports every kind to
build the plan schema; scipy, pymc or torch are imported inside ``compute``):

* a **parameter model** (subclass of :class:`~evalspec.analyses.base.AnalysisParams`,
  ``kind: Literal["<kind>"]``): the keys a plan may set, each with a description;
* a **result model** (subclass of :class:`ResultModel`): the typed shape of its numbers in
  the claim record (the claim's JSON Schema is generated from it);
* a **compute function** ``compute(ctx, params) -> Outcome``: a pure function of the
  context (:class:`Context`, what it may read) and the parameters;
* optionally ``columns(params, plan) -> list[ColumnNeed]``: results columns it reads (a
  missing one is an error at its plan line before anything runs);
* a **report section** ``templates/sections/<kind>.html.j2``;

and registers them with one :class:`AnalysisKind` value named ``KIND``, plus one line in
:data:`evalspec.analyses.registry.KIND_MODULES`.

``compute`` returns an :class:`Outcome`: the result, the seeds it actually used, its
:class:`Caveat` s (each says whether it bears on the verdict) and its :class:`Offers` to the
decision — a primary interval, critical-failure statuses, confirmatory findings, a
sequential-monitoring status. The decision reads the offers only, never result internals;
the pipeline runs every kind the same way and names none of them.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from evalspec.analyses.base import AnalysisParams

__all__ = [
    "AnalysisKind",
    "AnalysisRefused",
    "Issue",
    "PlanRule",
    "default_comparison",
    "did_you_mean",
    "entries",
    "pair_issues",
    "CaseCounts",
    "CaseValues",
    "Context",
    "Pair",
    "Repeats",
    "Caveat",
    "ColumnNeed",
    "CriticalStatus",
    "Finding",
    "Offers",
    "Outcome",
    "PrimaryInterval",
    "ResultModel",
    "SeedUse",
    "SequentialStatus",
    "Severity",
]

#: ``verdict``: bears on the verdict, printed beside it on page 1 of the report.
#: ``note``: context for the analysis's own section.
Severity = Literal["verdict", "note"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ResultModel(BaseModel):
    """Base of every analysis's typed result (what the claim record holds under ``result``).

    Numbers are plain floats (NaN/inf are not allowed: use ``None`` for "not defined" and say
    why in a caveat); nested parts are models too, so the claim's schema is complete.

    Its validator is built when first used (``defer_build``), not when the kind's module is
    imported: the plan model imports every kind for its parameters, and a run builds the
    results of the kinds its plan names only (the same validator either way).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)


class Caveat(_Frozen):
    """Something a reader of the numbers must know.

    ``code`` is stable (tests and the audit match on it); ``message`` is one or two plain
    sentences true of this study, for a decision owner (no jargon, no file paths).
    """

    code: str = Field(description="Stable identifier, e.g. 'few_clusters', 'degenerate_interval'.")
    severity: Severity = Field(description="'verdict' when it bears on the verdict (shown on page 1), else 'note'.")
    message: str = Field(description="Plain-language statement of the caveat for this study.")


class SeedUse(_Frozen):
    """A random seed an analysis actually used (only those: a declared but unused seed is not listed)."""

    purpose: str = Field(description="What the seed drove, e.g. 'cluster bootstrap resamples'.")
    seed: int


class PrimaryInterval(_Frozen):
    """The difference the decision reads: ``candidate`` minus ``baseline``, in pass-rate units (0-1 scale).

    ``low``/``high`` bound a two-sided interval at ``confidence_level``, i.e. each bound is a
    one-sided bound at ``1 - one_sided_alpha``. The decision uses the same bound for
    superiority, non-inferiority and equivalence (TOST at the same one-sided alpha), so its
    verdicts cannot disagree with each other. ``informative`` is False when the interval
    cannot mean anything (zero width, every cluster's net contribution zero, too few
    discordant pairs or clusters with disagreements, ...); ``why_uninformative`` says why and
    the decision then reaches ``inconclusive``. ``estimand`` states what the interval bounds.
    """

    candidate: str
    baseline: str
    estimate: float
    low: float
    high: float
    method: str = Field(description="Method actually used (after any fallback), in words a reader can look up.")
    confidence_level: float = Field(description="Two-sided level of [low, high].")
    one_sided_alpha: float = Field(description="(1 - confidence_level) / 2: the error rate of each bound.")
    informative: bool = True
    why_uninformative: str | None = None
    units: int | None = Field(None, description="Independent units behind the interval (clusters or cases).")
    unit_name: str | None = Field(None, description="What a unit is, e.g. 'clusters (document)' or 'cases'.")
    candidate_only: int | None = Field(None, description="Cases only the candidate passed (None when outcomes are "
                                       "fractions, under the 'mean' attempt rule).")
    baseline_only: int | None = Field(None, description="Cases only the baseline passed (None under 'mean').")
    estimand: str = Field("case_weighted_difference", description=(
        "The quantity [low, high] bounds: 'case_weighted_difference' (the pass-rate difference, each paired case "
        "counting once: what the plan's thresholds are about), 'cluster_weighted_difference' (each cluster counting "
        "once), or another a kind names. The decision checks the interval against the case-weighted estimate "
        "whatever it says (docs/decision.md, 'The estimand guard')."))


class CriticalStatus(_Frozen):
    """Critical-failure status of one candidate, against the plan's limit if it has one."""

    candidate: str
    critical_cases: int
    failures: int = Field(description="Critical cases with at least one failed attempt (whatever the attempt rule).")
    upper_bound: float | None = Field(description="One-sided upper confidence bound of the failure rate; None if no case.")
    confidence_level: float
    method: str
    max_rate: float | None = None
    within_limit: bool | None = Field(None, description="upper_bound < max_rate; None without a limit.")
    adopting: bool = Field(False, description="True for the candidate the decision would adopt.")
    reachable: bool | None = Field(
        None, description="Whether the planned number of critical cases can ever show a bound below the limit."
    )


class Finding(_Frozen):
    """A confirmatory result the decision must weigh (e.g. a declared slice with a material loss)."""

    name: str
    estimate: float
    low: float
    high: float
    confidence_level: float
    adjustment: str | None = Field(None, description="Multiplicity adjustment applied, e.g. 'Holm over 4 slices'.")
    material_loss: bool = Field(False, description="The whole adjusted interval lies below minus the margin used.")
    message: str


class SequentialStatus(_Frozen):
    """Where an anytime-valid sequential design stands at this look."""

    action: Literal["continue", "stop_decided", "stop_futility"]
    look: int
    planned_looks: int
    message: str


class Offers(_Frozen):
    """What an analysis offers the decision. Most analyses offer nothing."""

    primary: PrimaryInterval | None = None
    critical: list[CriticalStatus] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    sequential: SequentialStatus | None = None


@dataclass(frozen=True)
class Outcome:
    """What ``compute`` returns."""

    result: ResultModel
    caveats: list[Caveat] | tuple[Caveat, ...] = ()
    seeds: list[SeedUse] | tuple[SeedUse, ...] = ()
    offers: Offers = Offers()


@dataclass(frozen=True)
class ColumnNeed:
    """A results column an analysis reads, and the plan key that names it (for located errors)."""

    column: str
    key: str
    #: 'case': a case-level attribute (first non-missing value per case, e.g. a flag or slice);
    #: 'row': kept per attempt row (e.g. a numeric score).
    level: Literal["case", "row"] = "case"


_NO_VALUE = object()


@dataclass(frozen=True)
class Issue:
    """A problem a plan rule finds at ``path`` (a tuple of keys and indices, e.g. ``("analyses", 2, "method")``).

    ``evalspec validate`` prints it at the line of that key; ``hint`` says what to do;
    ``got`` is the offending value (when there is one).
    """

    path: tuple[str | int, ...]
    message: str
    hint: str | None = None
    got: Any = _NO_VALUE

    @property
    def has_got(self) -> bool:
        return self.got is not _NO_VALUE


#: A validate-time rule: ``(top-level plan sections it reads, rule)``; ``rule(view)`` yields
#: :class:`Issue` objects. ``view`` holds the plan's sections that validated (``view.decision``,
#: ``view.units``, ...) and ``view.analyses``, ``(index, params)`` pairs; ``"analyses*"`` in the
#: sections runs the rule on the entries that validated even when another entry is broken,
#: ``"analyses"`` only on a complete, valid list. ``view.offers_primary(params)`` says whether an
#: entry gives the decision its fixed-sample primary interval. See :mod:`evalspec.plan.rules`.
PlanRule = tuple[tuple[str, ...], Callable[[Any], Iterable[Issue]]]


def entries(view: Any, kind: str) -> Iterator[tuple[int, Any]]:
    """``(index, params)`` of the plan's analyses of ``kind`` (for a kind's rules)."""
    return ((i, a) for i, a in view.analyses if a.kind == kind)


def default_comparison(candidates: Iterable[str], baseline: str | None) -> tuple[str, str] | None:
    """The comparison a plan makes where it names none: the first candidate other than the baseline, against it.

    None without a baseline or without another candidate. The one home of this rule: the plan's
    primary comparison, the context's paired comparisons, the kinds that compare two
    candidates, power and the pilot all use it.
    """
    if baseline is None:
        return None
    other = next((c for c in candidates if c != baseline), None)
    return None if other is None else (other, baseline)


def pair_issues(view: Any, i: int, a: Any) -> Iterator[Issue]:
    """What keeps analysis ``i`` (``a``, a kind with ``compare``) from having two sides to compare.

    One wording for every kind that compares two candidates: the plan's rule for a primary
    comparison and paired_difference's own rule for its other entries both use it.
    """
    if len(view.candidates) < 2:
        yield Issue(("analyses", i, "kind"), f"{a.kind} needs at least two candidates",
                    f"the plan declares only {', '.join(view.candidates)}")
    elif a.compare is None and view.baseline is None:
        yield Issue(("analyses", i), f"{a.kind} without `compare` needs a top-level `baseline`",
                    "add `baseline: NAME` or `compare: [CANDIDATE, BASELINE]`")


def did_you_mean(value: Any, options: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` for the closest of ``options``, or None."""
    if not isinstance(value, str):
        return None
    close = difflib.get_close_matches(value, list(options), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else None


class AnalysisRefused(Exception):
    """The data cannot support an analysis the plan asks for (e.g. no case run by both candidates).

    ``compute`` raises it; ``evalspec run`` reports it at the analysis's plan line and refuses
    the run (exit 2).
    """


# -- what compute receives --------------------------------------------------------------
# The context is built above the data layer (:class:`evalspec.analyses.context.AnalysisContext`);
# a kind sees it through :class:`Context`, so a kind module never imports the runtime.


@dataclass(frozen=True)
class Repeats:
    """Attempt-level rows (after the checks and before the attempt rule), one entry per row.

    ``cand`` and ``case`` are codes (row ``j`` of ``ctx.candidates``, column ``i`` of
    ``ctx.case_ids``), ``repeat`` the repeat number as read, ``passed`` the row's outcome in
    [0, 1] (NaN where it is missing: the plan's ``missing`` policy is *not* applied here),
    ``score`` the ``score`` column (``passed`` where there is none), ``columns`` the row-level
    columns a kind asked for with ``ColumnNeed(level="row")``. ``ctx.repeats`` holds every row;
    ``ctx.attempts()`` the rows with the plan's missing-outcome policy applied (use it).
    """

    cand: np.ndarray
    case: np.ndarray
    repeat: np.ndarray
    passed: np.ndarray
    score: np.ndarray
    columns: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class CaseCounts:
    """Attempt counts per candidate × case, with the plan's missing-outcome policy applied.

    ``trials[j, i]`` attempts of candidate ``j`` on case ``i`` that count (under ``exclude`` the
    ones with an outcome; otherwise all, a missing outcome counting as a failure),
    ``passes[j, i]`` of them passed (outcome 1), ``missing[j, i]`` had no outcome (before the
    policy). ``ctx.case_counts()`` gives them from the attempt rows or from a pre-aggregated case
    table alike, so a kind that reads only these serves both (``AnalysisKind.attempt_rows`` None).
    """

    trials: np.ndarray
    passes: np.ndarray
    missing: np.ndarray
    #: Whether every attempt's outcome is 0 or 1 (always so in a run: a score outcome is read against
    #: its pass threshold first; a context built from lists may hold fractions).
    binary: bool = True


@dataclass(frozen=True)
class Pair:
    """Case outcomes of two candidates on the cases both have (the paired intersection)."""

    x: np.ndarray
    y: np.ndarray
    cases: np.ndarray
    clusters: np.ndarray | None


class CaseValues(Protocol):
    """Case outcomes after the attempt rule (:class:`evalspec.attempts.CaseOutcomes`)."""

    @property
    def values(self) -> np.ndarray:
        """``values[j, i]``: candidate ``j``, case ``i``; NaN where the candidate has no outcome."""

    @property
    def attempts(self) -> np.ndarray:
        """``attempts[j, i]``: attempts the rule used."""

    @property
    def rule(self) -> str: ...

    @property
    def k(self) -> int | None: ...

    @property
    def binary(self) -> bool:
        """Whether case outcomes are pass/fail (every attempt rule but ``mean``)."""


class Context(Protocol):
    """What ``compute(ctx, params)`` may read: the data after the attempt rule and the validated plan.

    :class:`evalspec.analyses.context.AnalysisContext` implements it (its docstring describes
    each member); tests build one with ``evalspec.testing.context_from_arrays``.
    """

    @property
    def candidates(self) -> list[str]: ...
    @property
    def baseline(self) -> str | None: ...
    @property
    def case_ids(self) -> np.ndarray: ...
    @property
    def case_cluster(self) -> np.ndarray | None: ...
    @property
    def cluster_ids(self) -> np.ndarray | None: ...
    @property
    def case_columns(self) -> dict[str, np.ndarray]: ...
    @property
    def outcomes(self) -> CaseValues: ...
    @property
    def repeats(self) -> Repeats: ...
    @property
    def plan(self) -> Any: ...
    @property
    def plan_dir(self) -> Path | None: ...
    @property
    def decision(self) -> Any: ...
    @property
    def stopping(self) -> Any: ...
    @property
    def confidence_level(self) -> float: ...
    @property
    def goal(self) -> str: ...
    @property
    def margin(self) -> float | None: ...
    @property
    def minimum_improvement(self) -> float: ...
    @property
    def slices(self) -> list[Any]: ...
    @property
    def critical_role(self) -> str | None: ...
    @property
    def critical_max_rate(self) -> float | None: ...
    @property
    def critical_level(self) -> float | None: ...
    @property
    def missing_policy(self) -> str: ...
    @property
    def planned_repeats(self) -> int: ...
    @property
    def primary(self) -> tuple[str, str] | None: ...

    def index(self, name: str) -> int: ...
    def level(self, params: Any) -> float: ...
    def chosen(self, params: Any) -> list[str]: ...
    def values(self, name: str, mask: np.ndarray | None = None) -> np.ndarray: ...
    def compared(self, params: Any) -> tuple[str, str]: ...
    def pair(self, first: str, second: str, mask: np.ndarray | None = None) -> Pair: ...
    def has_every_outcome(self, name: str) -> bool: ...
    def cluster_label(self, code: int) -> str: ...
    def codes(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
    def attempts(self) -> Repeats: ...
    def case_counts(self) -> CaseCounts: ...


@dataclass(frozen=True)
class AnalysisKind:
    """One analysis kind, as its module declares it (``KIND = AnalysisKind(...)``)."""

    name: str
    params: type[AnalysisParams]
    result: type[ResultModel]
    compute: Callable[[Context, Any], Outcome]
    title: str
    columns: Callable[[Any, Any], list[ColumnNeed]] | None = None
    #: Report order: lower first (proportion 10, paired_difference 20, sequential_difference and
    #: judge_corrected 25, critical_failures and ranking 30, slices 50, run_variation 60,
    #: beta_binomial 65, clustered_mean 70, background_temperature 80; the default 100 puts a
    #: kind last). Page-1 material comes from offers and caveats, not from here.
    order: int = 100
    #: Validate-time rules of this kind (``evalspec validate`` runs them with the plan's own rules,
    #: each error at its line); :data:`PlanRule`.
    rules: tuple[PlanRule, ...] = ()
    #: Rules whose findings are warnings (the plan stays valid).
    warnings: tuple[PlanRule, ...] = ()
    #: An anytime-valid (sequential) kind: its interval replaces the fixed-sample primary one and
    #: adjusts for the planned looks (so its ``primary: true`` is not a second primary comparison).
    sequential: bool = False
    #: Why the kind needs the attempt-level rows (``ctx.repeats``, ``ctx.attempts()``), in words
    #: for the plan line that names it under ``data.format: case_table``; None when it computes
    #: exactly from case outcomes, case columns and ``ctx.case_counts()``, which a pre-aggregated
    #: case table gives. The default refuses: a kind says it needs no rows only when it does not.
    attempt_rows: str | None = "it reads each attempt's row, which a case table does not hold"

    @property
    def template(self) -> str:
        """Report section template, relative to ``templates/``."""
        return f"sections/{self.name}.html.j2"
