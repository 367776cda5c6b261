"""Cross-field rules of a plan: what no single field can check on its own.

Each rule is a function of a :class:`PlanView` that yields :class:`Issue` objects,
each located at the dotted key a reader should fix. A rule declares the top-level
sections it reads (``needs``); the loader runs every rule whose sections validated,
so a plan with a field error in ``decision`` still gets its ``baseline`` checked —
all problems are reported at once, not the first. For a fully valid plan,
:class:`~evalspec.plan.model.Plan` runs all rules itself (so a plan built in Python
obeys them too).

``needs`` may name ``"analyses*"``: the rule runs on the analyses that validated,
one by one, even when another list entry is broken; ``"analyses"`` means the rule
needs the complete, valid list (e.g. "some analysis checks critical failures").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from evalspec.analyses.contract import Issue, did_you_mean, pair_issues
from evalspec.plan.positions import Path, format_path

__all__ = ["PlanView", "RULES", "WARNINGS", "check", "is_sequential", "offers_primary", "rule", "warning", "warnings"]

@dataclass
class PlanView:
    """The validated parts of a plan, for rules to read.

    Attributes are the :class:`~evalspec.plan.model.Plan` fields that validated;
    ``analyses`` holds ``(index, spec)`` pairs of the entries that validated and
    ``analyses_complete`` says whether that is all of them. When some candidate
    entry is broken, ``candidates`` maps the names to ``None``: rules read names only.
    """

    values: dict[str, Any]
    analyses: list[tuple[int, Any]] = field(default_factory=list)
    analyses_complete: bool = True

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def offers_primary(self, a: Any) -> bool:
        """Whether the analysis ``a`` gives the decision its fixed-sample primary interval (:func:`offers_primary`)."""
        return offers_primary(a)

    def has(self, section: str) -> bool:
        if section == "analyses*":
            return "analyses" in self.values or bool(self.analyses)
        if section == "analyses":
            return "analyses" in self.values and self.analyses_complete
        return section in self.values

    @classmethod
    def from_plan(cls, plan: Any) -> PlanView:
        values = {name: getattr(plan, name) for name in type(plan).model_fields}
        return cls(values=values, analyses=list(enumerate(plan.analyses)), analyses_complete=True)


RuleFn = Callable[[PlanView], Iterable[Issue]]
#: (sections needed, rule) in the order they run.
RULES: list[tuple[tuple[str, ...], RuleFn]] = []


def rule(*needs: str) -> Callable[[RuleFn], RuleFn]:
    """Register a cross-field rule that reads the top-level sections ``needs``."""

    def deco(fn: RuleFn) -> RuleFn:
        RULES.append((needs, fn))
        return fn

    return deco


#: Rules whose findings do not make a plan invalid (``evalspec validate`` prints them and exits 0):
#: (sections needed, rule), run by :func:`warnings` on a valid plan.
WARNINGS: list[tuple[tuple[str, ...], RuleFn]] = []


def warning(*needs: str) -> Callable[[RuleFn], RuleFn]:
    """Register a rule whose issues are warnings: the plan stays valid, the reader is told."""

    def deco(fn: RuleFn) -> RuleFn:
        WARNINGS.append((needs, fn))
        return fn

    return deco


def _kind_rules(which: str) -> list[tuple[tuple[str, ...], RuleFn]]:
    """The ``rules`` (or ``warnings``) every registered kind declares, in registry order."""
    from evalspec.analyses.registry import kinds

    return [r for kind in kinds().values() for r in getattr(kind, which)]


def warnings(plan: Any) -> list[Issue]:
    """Warnings about a valid plan (each located like an error): the plan's, then each kind's."""
    view = PlanView.from_plan(plan)
    return [issue for needs, fn in [*WARNINGS, *_kind_rules("warnings")] if all(view.has(n) for n in needs)
            for issue in fn(view)]


def check(view: PlanView) -> list[Issue]:
    """Run every rule whose sections are available (the plan's, then each kind's); return all issues."""
    issues: list[Issue] = []
    for needs, fn in [*RULES, *_kind_rules("rules")]:
        if all(view.has(n) for n in needs):
            issues.extend(fn(view))
    return issues


def offers_primary(a: Any) -> bool:
    """Whether an analysis asks to give the decision its fixed-sample primary interval (``primary: true``).

    Any kind with a ``primary`` parameter can (paired_difference, judge_corrected...); a
    sequential kind's anytime-valid interval replaces the fixed-sample one instead (the decision
    prefers it), so it is not counted here (``AnalysisKind.sequential``).
    """
    from evalspec.analyses.registry import KIND_MODULES, get_kind

    return bool(getattr(a, "primary", False)) and not (a.kind in KIND_MODULES and get_kind(a.kind).sequential)


def is_sequential(kind: str) -> bool:
    """Whether ``kind`` is an anytime-valid (sequential) analysis kind (:func:`evalspec.analyses.registry.is_sequential`)."""
    from evalspec.analyses.registry import is_sequential as _is_sequential

    return _is_sequential(kind)


# -- candidates and comparisons ---------------------------------------------------------------


@rule("candidates", "baseline")
def _baseline_is_candidate(view: PlanView) -> Iterable[Issue]:
    names = list(view.candidates)
    if view.baseline is not None and view.baseline not in view.candidates:
        yield Issue(("baseline",), f"must be one of the candidates: {', '.join(names)}",
                    did_you_mean(view.baseline, names), view.baseline)


@rule("candidates", "analyses*")
def _named_candidates_exist(view: PlanView) -> Iterable[Issue]:
    names = list(view.candidates)
    for i, a in view.analyses:
        compare = getattr(a, "compare", None)
        if compare is not None:
            for j, who in enumerate(compare):
                if who not in view.candidates:
                    yield Issue(("analyses", i, "compare", j), f"not a candidate; candidates are {', '.join(names)}",
                                did_you_mean(who, names), who)
            if compare[0] == compare[1]:
                yield Issue(("analyses", i, "compare"), "compares a candidate with itself",
                            "name the candidate first and the baseline second")
        for j, who in enumerate(getattr(a, "candidates", None) or []):
            if who not in view.candidates:
                yield Issue(("analyses", i, "candidates", j), f"not a candidate; candidates are {', '.join(names)}",
                            did_you_mean(who, names), who)


def _needs_a_pair(a: Any) -> bool:
    """A primary comparison of two candidates (any kind with `compare`; a kind that always compares
    checks its other entries itself, e.g. paired_difference)."""
    return "compare" in type(a).model_fields and offers_primary(a)


@rule("candidates", "baseline", "analyses*")
def _paired_has_two_sides(view: PlanView) -> Iterable[Issue]:
    for i, a in view.analyses:
        if _needs_a_pair(a):
            yield from pair_issues(view, i, a)


@rule("analyses")
def _one_primary(view: PlanView) -> Iterable[Issue]:
    primaries = [(i, a) for i, a in view.analyses if offers_primary(a)]
    for i, a in primaries[1:]:
        first, other = primaries[0]
        what = a.kind if other.kind == a.kind else "analysis"
        where = f"analyses[{first}]" if other.kind == a.kind else f"analyses[{first}], {other.kind},"
        yield Issue(("analyses", i, "primary"), f"only one {what} may be primary ({where} already is)",
                    "set `primary: false` on the secondary comparisons")


# -- units, columns, attempts ---------------------------------------------------------------


@rule("data", "units")
def _distinct_columns(view: PlanView) -> Iterable[Issue]:
    roles: list[tuple[Path, str]] = [(("units", "case"), view.units.case)]
    if view.units.cluster is not None:
        roles.append((("units", "cluster"), view.units.cluster))
    cols = view.data.columns
    for role in ("candidate", "repeat", "outcome", "model_version", "timestamp", "critical"):
        value = getattr(cols, role)
        if value is not None:
            roles.append((("data", "columns", role), value))
    seen: dict[str, Path] = {}
    for path, column in roles:
        if column in seen:
            yield Issue(path, f"column {column!r} is already used for {format_path(seen[column])}",
                        "each role needs its own column")
        else:
            seen[column] = path


@rule("attempts", "data")
def _repeats_need_a_repeat_column(view: PlanView) -> Iterable[Issue]:
    if view.attempts.repeats > 1 and view.data.columns.repeat is None:
        yield Issue(("data", "columns", "repeat"),
                    f"attempts.repeats is {view.attempts.repeats}, so the results need a repeat column",
                    "name the column that numbers the repeats of a case")


# -- slices -----------------------------------------------------------------------------------


@rule("slices")
def _unique_slices(view: PlanView) -> Iterable[Issue]:
    seen: dict[str, int] = {}
    for j, s in enumerate(view.slices):
        if s.name in seen:
            yield Issue(("slices", j, "name"), f"slice name is already declared at slices[{seen[s.name]}]",
                        None, s.name)
        else:
            seen[s.name] = j


# -- decision and stopping ------------------------------------------------------------------------


@rule("decision", "stopping")
def _units_reachable(view: PlanView) -> Iterable[Issue]:
    max_units = view.stopping.max_units
    if max_units is not None and view.decision.minimum_units > max_units:
        yield Issue(("decision", "minimum_units"),
                    f"exceeds stopping.max_units ({max_units}); the plan could never reach a verdict",
                    None, view.decision.minimum_units)


@rule("decision", "analyses*")
def _primary_at_the_decision_level(view: PlanView) -> Iterable[Issue]:
    """One stated error rate: the primary comparison runs at decision.confidence_level."""
    level = view.decision.confidence_level
    for i, a in view.analyses:
        own = getattr(a, "confidence_level", None)
        if offers_primary(a) and own is not None and abs(float(own) - float(level)) > 1e-12:
            yield Issue(("analyses", i, "confidence_level"),
                        f"the primary comparison must use the decision's level ({level}): the verdict is stated at "
                        "that level, and another level here would change its error rate silently",
                        "remove this key (it defaults to decision.confidence_level) or change "
                        "decision.confidence_level", own)


# -- warnings: the plan is valid, but the reader must know ----------------------------------------


@warning("stopping", "analyses")
def _looks_without_sequential_method(view: PlanView) -> Iterable[Issue]:
    stop = view.stopping
    sequential = any(is_sequential(a.kind) for _, a in view.analyses)
    if stop.looks > 1 and not sequential:
        yield Issue(("stopping", "looks"),
                    f"{stop.looks} looks are planned but no sequential analysis adjusts the interval for them: the "
                    "stated error rate holds for one look only (the report says so beside the verdict)",
                    "add a sequential analysis (an anytime-valid interval), or plan one look", stop.looks)


@warning("power", "decision", "attempts", "units", "stopping")
def _planned_units_reach_the_goal(view: PlanView) -> Iterable[Issue]:
    """The planned units can detect the declared difference (audit engineer; assumptions from the `power` block)."""
    if view.power is None or view.stopping.max_units is None:
        return
    from evalspec.power import shortfall

    found = shortfall(view.power, view.decision, view.attempts, view.units, view.stopping)
    if found is not None:
        yield Issue(("stopping", "max_units"), found[0], found[1], view.stopping.max_units)


@warning("title", "question", "decision_owner", "population", "systematic_limits")
def _starter_text_left_in(view: PlanView) -> Iterable[Issue]:
    """Text the decision owner reads on page 1 that is still `evalspec init`'s example."""
    from evalspec.plan.starter_examples import example_value

    for key in ("title", "question", "decision_owner", "population"):
        if getattr(view, key) == example_value(key):
            yield Issue((key,), f"{key} is still the example text of `evalspec init`; the report shows it as this "
                        f"study's {key.replace('_', ' ')}", f"write this study's {key.replace('_', ' ')}",
                        getattr(view, key))
    for i, limit in enumerate(view.systematic_limits):
        if limit in example_value("systematic_limits"):
            yield Issue(("systematic_limits", i), "this limit is still the example text of `evalspec init`; the "
                        "report lists it as a limit of this study",
                        "write the limits no interval covers (languages not sampled, label noise, a provider "
                        "alias...), or remove the entry", limit)


#: The columns each tool-log adapter writes that the plan must name for the claim to keep them.
_LOG_COLUMNS = {"inspect": ("model_version", "timestamp"), "lm_eval": ("timestamp",), "promptfoo": ("timestamp",)}


@warning("data")
def _tool_log_columns_left_unmapped(view: PlanView) -> Iterable[Issue]:
    """Tool logs carry run times (and inspect_ai the version served); unmapped, the claim and the audit lose them."""
    roles = [r for r in _LOG_COLUMNS.get(view.data.format, ()) if getattr(view.data.columns, r) is None]
    if roles:
        what = " and ".join({"model_version": "the model version served", "timestamp": "the run time"}[r]
                            for r in roles)
        lost = " and ".join({"model_version": "a model update inside the run goes unseen",
                             "timestamp": "the audit cannot show the plan was locked before the results"}[r]
                            for r in roles)
        it = "them" if len(roles) > 1 else "it"
        yield Issue(("data", "format"),
                    f"the {view.data.format} logs give {what} of each attempt, but data.columns does not name {it}: "
                    f"the claim will not record {it}, so {lost}",
                    "add data.columns: {" + ", ".join(f"{r}: {r}" for r in roles) + "}", view.data.format)


@warning("decision", "stopping", "units")
def _critical_limit_reachable(view: PlanView) -> Iterable[Issue]:
    cf = view.decision.critical_failures
    if cf is None:
        return
    from evalspec.stats.power import zero_failure_cases

    need = zero_failure_cases(float(cf.max_rate), float(cf.confidence_level))
    max_units = view.stopping.max_units
    if max_units is not None and max_units < need and view.units.cluster is not None:
        yield Issue(("decision", "critical_failures", "max_rate"),
                    f"at most {max_units} clusters are planned; with critical cases in clusters the bound counts "
                    f"clusters as the independent opportunities, so it may never fall below {cf.max_rate:.1%}: "
                    f"{need} failure-free independent critical cases are needed",
                    "plan more clusters with critical cases, or a limit the design can show", cf.max_rate)
    elif max_units is not None and max_units < need:
        yield Issue(("decision", "critical_failures", "max_rate"),
                    f"at most {max_units} units are planned, so the critical-failure bound can never fall below "
                    f"{cf.max_rate:.1%}: {need} failure-free critical cases are needed",
                    "plan more critical cases, or a limit the design can show", cf.max_rate)


# -- record -------------------------------------------------------------------------------------

_ROLE_RECORDS = ("model_version", "timestamp")


@rule("record", "data")
def _recorded_roles_have_columns(view: PlanView) -> Iterable[Issue]:
    seen: set[str] = set()
    for j, item in enumerate(view.record):
        if item in seen:
            yield Issue(("record", j), "listed twice", None, item)
        seen.add(item)
        if item in _ROLE_RECORDS and getattr(view.data.columns, item) is None:
            yield Issue(("record", j), f"names the role {item}, but data.columns.{item} is not set",
                        f"set data.columns.{item} to the results column that holds it", item)


# -- a pre-aggregated case table ----------------------------------------------------------------


@rule("data")
def _case_table_serves_the_plan(view: PlanView) -> Iterable[Issue]:
    """Under ``data.format: case_table``: the attempt rule and the kinds a table of counts cannot serve."""
    from evalspec.plan.case_table import refusals

    yield from refusals(view)
