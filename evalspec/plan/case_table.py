"""The pre-aggregated case table a plan implies: its columns, and what such a table cannot serve.

A team whose attempt rows live in a warehouse or a lake reduces them where they are (the SQL
of ``evalspec reduce-sql``) to **one row per candidate × case** holding the attempt counts the
plan's attempt rule needs and the case's attributes, and points the plan at that table with
``data.format: case_table``. Which columns the table holds follows from the plan
(:func:`case_table_columns`): the identity columns under the plan's own column names, the
counts under fixed names, the columns the attempt rule and the missing-outcome policy read,
the run times, and the case attributes the analyses read. ``docs/case_table.md`` describes it
for people; ``evalspec reduce-sql PLAN --schema`` prints it for machines.

Every count is over the **kept** attempts: the first ``attempts.repeats`` attempts of the
candidate × case by repeat number, as the checks keep them from attempt rows; the rest are
counted in ``extra_attempts``. An outcome is 1 (pass), 0 (fail) or missing.

:func:`refusals` is the plan rule: under ``data.format: case_table`` an analysis kind that
reads attempt rows (``AnalysisKind.attempt_rows``) or the attempt rule ``majority_answer``
is refused at its plan line, with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evalspec.analyses.contract import Issue

__all__ = ["CaseColumn", "COUNT_COLUMNS", "RESERVED", "attribute_columns", "case_table_columns", "column_needs", "refusals"]


@dataclass(frozen=True)
class CaseColumn:
    """One column of a plan's case table."""

    name: str
    #: ``text``, ``integer`` (a whole number >= 0), ``outcome`` (1, 0 or empty), ``timestamp``
    #: (a time, or ISO 8601 text) or ``value`` (an attribute as the attempt rows hold it).
    type: str
    meaning: str
    #: the plan key the column comes from, where it is one of the plan's names
    key: str | None = None


#: The count columns every case table holds (fixed names), with their meaning.
COUNT_COLUMNS: dict[str, str] = {
    "attempts": "attempts kept: the first attempts.repeats attempts by repeat number",
    "extra_attempts": "attempts beyond attempts.repeats (not analysed; reported as a deviation)",
    "missing": "kept attempts without an outcome",
    "passes": "kept attempts that passed (outcome 1)",
    "duplicate_attempts": "attempt rows that repeat a repeat number of this candidate and case (must be 0)",
    "unreadable": "attempt rows whose outcome, repeat number or time could not be read (must be 0)",
}


#: Names the case table gives its own columns (the plan's columns may not take them).
RESERVED = frozenset({*COUNT_COLUMNS, "lacking_record", "first_outcome", "first_answered_outcome", "first_time",
                      "last_time"})


def _first_k(plan: Any) -> int:
    return int(plan.attempts.k or 1)


def _rule_columns(plan: Any) -> list[CaseColumn]:
    """The columns the attempt rule reads beyond the counts (both policies' under ``exclude``)."""
    rule, policy = plan.attempts.rule, plan.missing.policy
    both = policy == "exclude"  # the estimand guard also counts missing outcomes as failures
    out: list[CaseColumn] = []
    if rule == "first":
        out.append(CaseColumn("first_outcome", "outcome", "outcome of the lowest-numbered kept attempt "
                              "(empty when it has none)"))
        if both:
            out.append(CaseColumn("first_answered_outcome", "outcome", "outcome of the lowest-numbered kept attempt "
                                  "that has one (empty when none has)"))
    elif rule == "best_of_k":
        k = _first_k(plan)
        out.append(CaseColumn(f"passes_in_first_{k}", "integer", f"passes among the {k} lowest-numbered kept "
                              "attempts (a missing outcome is no pass)"))
        if both:
            out.append(CaseColumn(f"answered_passes_in_first_{k}", "integer", f"passes among the {k} lowest-numbered "
                                  "kept attempts that have an outcome"))
            out.append(CaseColumn(f"missing_in_first_{k}", "integer", f"attempts without an outcome among the {k} "
                                  "lowest-numbered kept attempts"))
    return out


def column_needs(plan: Any) -> dict[str, tuple[str, str]]:
    """Every column the plan's analyses read: ``{column: (plan key, level)}``, level ``case`` or ``row``.

    The critical role, then each kind's ``columns(params, plan)``; a key naming one of a kind's
    parameters is relative to its ``analyses[i]`` entry.
    """
    from evalspec.analyses.registry import get_kind

    need: dict[str, tuple[str, str]] = {}
    crit_role = plan.data.columns.critical
    if crit_role is not None:
        need.setdefault(crit_role, ("data.columns.critical", "case"))
    for i, params in enumerate(plan.analyses):
        kind = get_kind(params.kind)
        if kind.columns is None:
            continue
        for n in kind.columns(params, plan):
            key, level = need.get(n.column, (_plan_key(params, i, n.key), n.level))
            need[n.column] = (key, "row" if "row" in (level, n.level) else "case")
    return need


def _plan_key(params: Any, index: int, key: str) -> str:
    """A :class:`ColumnNeed` key as a plan path: relative to the analysis when it names one of its parameters."""
    head = key.split(".", 1)[0].split("[", 1)[0]
    return f"analyses[{index}].{key}" if head in type(params).model_fields else key


_ROLE_RECORDS = {"model_version", "timestamp", "candidate", "repeat", "outcome"}


def attribute_columns(plan: Any) -> dict[str, str]:
    """The case attributes the table carries: ``{column: plan key}`` (analyses' columns, then ``record`` items)."""
    out = {col: key for col, (key, _) in column_needs(plan).items()}
    for j, item in enumerate(plan.record):
        if item not in _ROLE_RECORDS:
            out.setdefault(item, f"record[{j}]")
    return out


def case_table_columns(plan: Any) -> list[CaseColumn]:
    """The columns of ``plan``'s case table, in order: identity, counts, rule, times, attributes."""
    cols = plan.data.columns
    out = [CaseColumn(cols.candidate, "text", "the candidate (a key of candidates, or a name candidate_names maps)",
                      "data.columns.candidate"),
           CaseColumn(plan.units.case, "text", "the case id", "units.case")]
    if plan.units.cluster is not None:
        out.append(CaseColumn(plan.units.cluster, "text", "the case's cluster", "units.cluster"))
    if cols.model_version is not None:
        out.append(CaseColumn(cols.model_version, "text", "the model version of the attempts (one per row: a "
                              "candidate and case whose attempts ran on two versions is two rows)",
                              "data.columns.model_version"))
    out += [CaseColumn(name, "integer", meaning) for name, meaning in COUNT_COLUMNS.items()]
    if plan.record:
        out.append(CaseColumn("lacking_record", "integer", "attempt rows that lack metadata the plan's record "
                              "requires (must be 0)"))
    out += _rule_columns(plan)
    if cols.timestamp is not None:
        out += [CaseColumn("first_time", "timestamp", "earliest run time of the attempts (all of them, extra ones "
                           "too)", "data.columns.timestamp"),
                CaseColumn("last_time", "timestamp", "latest run time of the attempts", "data.columns.timestamp")]
    for col, key in attribute_columns(plan).items():
        out.append(CaseColumn(col, "value", "the case's value: that of the lowest-numbered attempt that has one", key))
        out.append(CaseColumn(f"distinct_{col}", "integer", f"distinct values of {col} among the attempts (more than "
                              "1 is reported as a deviation)", key))
    return out


def refusals(view: Any) -> Iterable[Issue]:
    """Under ``data.format: case_table``: what a table of counts cannot serve, at the plan line that asks for it."""
    if view.data.format != "case_table":
        return
    from evalspec.analyses.registry import KIND_MODULES, get_kind

    if view.has("attempts") and view.attempts.rule == "majority_answer":
        yield Issue(("attempts", "rule"), "majority_answer grades the most common answer of each case's attempts, "
                    "and a case table (data.format: case_table) holds counts, not answers",
                    "read the attempt rows (data.format: parquet, jsonl or csv), or preregister a rule counts serve "
                    "(first, best_of_k, majority, mean, pass_at_k, pass_hat_k)", "majority_answer")
    for i, a in view.analyses:
        if a.kind not in KIND_MODULES:
            continue
        why = get_kind(a.kind).attempt_rows
        if why is not None:
            yield Issue(("analyses", i, "kind"), f"{a.kind} cannot run on a case table (data.format: case_table): "
                        f"{why}", "read the attempt rows (data.format: parquet, jsonl or csv), or leave this analysis "
                        "out", a.kind)
    for col, path in _plan_names(view).items():
        if col in RESERVED or col.startswith(("distinct_", "passes_in_first_", "answered_passes_in_first_",
                                              "missing_in_first_")):
            yield Issue(path, f"column {col!r} has the name of one of the case table's own columns",
                        "rename the column in the case table and here (`evalspec reduce-sql PLAN --schema` lists the "
                        "case table's own columns)", col)


def _plan_names(view: Any) -> dict[str, tuple[Any, ...]]:
    """The identity columns the plan names, with their plan path."""
    out: dict[str, tuple[Any, ...]] = {view.data.columns.candidate: ("data", "columns", "candidate")}
    if view.has("units"):
        out.setdefault(view.units.case, ("units", "case"))
        if view.units.cluster is not None:
            out.setdefault(view.units.cluster, ("units", "cluster"))
    for role in ("model_version", "critical"):
        if getattr(view.data.columns, role) is not None:
            out.setdefault(getattr(view.data.columns, role), ("data", "columns", role))
    if view.has("slices"):
        for j, sl in enumerate(view.slices):
            out.setdefault(sl.column, ("slices", j, "column"))
    return out
