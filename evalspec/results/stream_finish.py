"""The end of a streaming reduction: the checks that need every row, and the case table they give.

What :func:`evalspec.results.checks.check_results` finds on attempt rows, found on the cell
state in the same words: a candidate without rows, a model version that changes, the planned
repeats, the missing-outcome policy, unpaired cases; then the case table's matrices
(:class:`~evalspec.results.case_model.CaseTable`), in the sorted case order the in-memory path
uses, and each case attribute's value (its first candidate's lowest-numbered kept attempt's).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic
from evalspec.results.case_model import CaseTable
from evalspec.results.stream_state import Fallback, cell_attributes, lowest_bits, rule_counts

__all__ = ["StreamedTable", "finish"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass
class StreamedTable(CaseTable):
    """A case table reduced while read, which keeps each cell's masks of kept, passed and missing attempts
    (so the decision's equal-attempts reading is made exactly: :mod:`evalspec.stream_views`)."""

    masks: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


def _sorted(labels: list[str] | None, arr: Any = None) -> np.ndarray | None:
    """The order that sorts ``labels`` (distinct; code point order, as the in-memory path sorts ids), None when
    they are in that order already (results written in case order: nothing to sort or gather). ``arr``: the same
    labels as an Arrow string array, when at hand (then ``labels`` may be None)."""
    if (len(arr) if arr is not None else len(labels or ())) < 2:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    if arr is None:
        arr = pa.array(labels, pa.string())
    if pc.all(pc.greater(arr.slice(1), arr.slice(0, len(arr) - 1))).as_py():  # (Arrow compares UTF-8 bytes)
        return None
    return np.asarray(pc.sort_indices(arr), dtype=np.int64)


def _case_ids(labels: list[str] | None, arrow: Any, resort: np.ndarray | None) -> Any:
    """The case ids in sorted order: from Arrow texts a :class:`~evalspec.results.values.LazyTexts` (each made a
    ``str`` only where read, as the case table's), else an object array."""
    if arrow is None:
        return _objects(labels or []) if resort is None else _objects(labels or [])[resort]
    from evalspec.results.values import positions
    from evalspec.results.values import LazyTexts

    return LazyTexts(arrow if resort is None else arrow.take(positions(resort)))


def _objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _end_checks(red: Any) -> None:
    """The checks that need every row: candidates without rows, version changes, slice levels, repeat columns."""
    from evalspec.results.checks import candidates_without_rows, version_change, versions_change
    from evalspec.results.table import slice_problems

    plan = red.plan
    shim = SimpleNamespace(candidates=red.names, cand=np.flatnonzero(red.rows_of > 0), displays=red.displays)
    problems: list[Diagnostic] = candidates_without_rows(shim, plan)
    red.versions_seen = {}
    labels = list(red.versions)
    for k, name in enumerate(red.names):
        if plan.data.columns.model_version is None:
            break
        counts = red.version_rows[k]
        seen = {v: int(c) for v, c in sorted(zip(labels, counts.tolist()), key=lambda p: str(p[0])) if c}
        red.versions_seen[name] = seen
        if versions_change(seen, plan.candidates[name].version):
            firsts, where = [], []
            for v in seen:
                j, line = red.version_first[(k, labels.index(v))]
                where.append((j, line))
                firsts.append(f"{v!r} first at {red.displays[j]}:{line}")
            j, line = sorted(where)[1]
            problems.append(version_change(name, seen, firsts, plan.data.columns.model_version, red.displays[j], line))
    if red.repeat_files and any(red.repeat_files) and not all(red.repeat_files):
        name = plan.data.columns.repeat
        problems += [Diagnostic(file=d, key="data.columns.repeat", message=f"this file has no column {name!r} "
                                "(data.columns.repeat)", hint="every results file must have the same columns")
                     for d, has in zip(red.displays, red.repeat_files) if not has]
    view = SimpleNamespace(columns={col: _objects(sorted(s)) for col, s in red.slice_labels.items()},
                           displays=red.displays)
    problems += slice_problems(view, plan, red.plan_diagnostic)
    if problems:
        red.refuse(f"the results fail {len(problems)} check(s)", problems)


def finish(red: Any) -> Any:
    """The checked :class:`~evalspec.results.case_model.CaseTable` of everything ``red`` was given."""
    from evalspec.plan.case_table import case_table_columns
    from evalspec.results.adapters.graders import grader_limits
    _end_checks(red)
    plan = red.plan
    planned, k = int(plan.attempts.repeats), int(plan.attempts.k or 1)
    arrow = red.cases.arrow()  # (the case ids as Arrow texts, or None: then as Python objects)
    case_labels = red.cases.labels() if arrow is None else None
    n_cases = len(red.cases)
    resort = _sorted(case_labels, arrow)
    state = red.state.trimmed(n_cases, resort)
    red.state = red.cases = None  # (their copies in case order are all that is needed now)
    order = np.arange(n_cases) if resort is None else resort
    case_ids = _case_ids(case_labels, arrow, resort)
    cluster_ids = case_cluster = None
    if plan.units.cluster is not None:
        cl_labels = red.clusters.labels()
        cl_order = _sorted(cl_labels, red.clusters.arrow())
        cl_order = np.arange(len(cl_labels)) if cl_order is None else cl_order
        rank = np.empty(len(cl_labels), dtype=np.int64)
        rank[cl_order] = np.arange(len(cl_labels))
        cluster_ids = _objects(cl_labels)[cl_order]
        firsts = red.case_cluster[:n_cases]
        case_cluster = rank[firsts if resort is None else firsts[order]]
    kept = lowest_bits(state.present, planned)
    names = [c.name for c in case_table_columns(plan)]
    counts = rule_counts(state, kept, names, k)
    _missing_guard(red, counts, kept, order)
    none = counts["attempts"] == 0
    rules = {n: np.where(none, np.nan, counts[n].astype(np.float64)) for n in names
             if n in ("first_outcome", "first_answered_outcome") or "_in_first_" in n}
    time_range = None
    if red.time:
        time_range = tuple(_EPOCH + _dt.timedelta(microseconds=m) for m in red.time)
    table = StreamedTable(files=red.files, candidates=red.names, case_ids=case_ids, cluster_ids=cluster_ids,
                      case_cluster=case_cluster, raw=dict(red.columns), time_range=time_range,  # type: ignore[arg-type]
                      attempts=counts["attempts"], missing_counts=counts["missing"], passes=counts["passes"],
                      rule_counts=rules, masks=(kept, state.passed, state.missing))
    _notes(red, table, counts)
    table.case_columns, table.attribute_deviations = _case_columns(red, state, kept, counts, case_ids)
    table.detected.extend(grader_limits(plan, []))
    return table


def _notes(red: Any, table: Any, counts: dict[str, np.ndarray]) -> None:
    """The non-fatal findings, in the attempt-row checks' order and words."""
    from evalspec.results.case_checks import _missing, _repeats, _unpaired
    from evalspec.results.checks import version_notes

    plan = red.plan
    table.versions_seen = red.versions_seen
    for name in red.names:
        if name in red.versions_seen:
            detected, deviation = version_notes(name, red.versions_seen[name], plan.candidates[name].version)
            table.detected += [detected] if detected else []
            table.deviations += [deviation] if deviation else []
    has = counts["attempts"] > 0
    cand = np.nonzero(has)[0]
    per_cell = {name: counts[name][has] for name in ("attempts", "extra_attempts", "missing")}
    shim = SimpleNamespace(plan=plan, flag=_unexpected, raise_problems=lambda what: None)
    _repeats(shim, table, cand, per_cell)
    _missing(shim, table, cand, per_cell)
    _unpaired(table)


def _unexpected(*_: Any, **__: Any) -> None:  # pragma: no cover - the guard refused these before
    raise AssertionError("a missing-outcome refusal the guard did not make")


def _missing_guard(red: Any, counts: dict[str, np.ndarray], kept: np.ndarray, order: np.ndarray) -> None:
    """Missing outcomes against the plan's policy; a breach is refused at the first rows without an outcome."""
    from evalspec.results.table import MAX_LISTED

    plan = red.plan
    policy = plan.missing.policy
    problems: list[Diagnostic] = []
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    for j, name in enumerate(red.names):
        m, a = int(counts["missing"][j].sum()), int(counts["attempts"][j].sum())
        frac = m / a if a else 0.0
        if m and policy == "error":
            message = (f"missing outcome for candidate {name!r} and the plan's missing.policy is 'error' ({m} of {a} "
                       "attempts missing)")
            hint = "rerun the missing attempts, or preregister another policy"
        elif frac > plan.missing.max_fraction:
            message = (f"candidate {name!r} has {m} of {a} outcomes missing ({frac:.1%}), above the plan's "
                       f"missing.max_fraction {plan.missing.max_fraction:.1%}")
            hint = "rerun the missing attempts under the same policy; do not change the limit after seeing the results"
        else:
            continue
        shown = [x for x in red.missing_at[j] if (int(kept[j, rank[x[2]]]) >> x[3]) & 1][:MAX_LISTED]
        problems += [Diagnostic(file=red.displays[f], line=line, key=plan.data.columns.outcome, message=message,
                                hint=hint) for f, line, _, _ in shown]
        if m > len(shown):
            problems.append(Diagnostic(file=red.displays[shown[0][0]] if shown else ", ".join(red.displays),
                                       message=f"... and {m - len(shown)} more rows like these "
                                       f"({plan.data.columns.outcome})"))
    if problems:
        red.refuse("missing outcomes break the plan's missing-outcome policy", problems)


def _case_columns(red: Any, state: Any, kept: np.ndarray, counts: dict[str, np.ndarray], case_ids: np.ndarray
                  ) -> tuple[dict[str, np.ndarray], list[dict[str, str]]]:
    """Each case attribute's value per case (the first candidate's in the plan's order, its lowest-numbered kept
    attempt's) and the cases whose kept attempts disagree, worded as :func:`evalspec.run._case_columns` words them."""
    from evalspec.results.values import CodedColumn, held_values

    out: dict[str, np.ndarray] = {}
    devs: list[dict[str, str]] = []
    n_cases = case_ids.shape[0]
    for col in red.attributes:
        cells = cell_attributes(state.attrs[col], kept, counts["extra_attempts"])
        if cells is None:
            raise Fallback(f"some case has attempts beyond attempts.repeats whose {col!r} differs from its kept "
                           "attempts', and the reduction does not keep which attempt had which value",
                           hint=f"give each case one {col!r} value on every attempt, or drop the extra attempts")
        has, first, lo, hi = cells
        case_codes = np.full(n_cases, -1, dtype=np.int64)
        for j in range(has.shape[0]):
            take = (case_codes < 0) & has[j]
            case_codes[take] = first[j][take]
        big = np.iinfo(np.int64).max
        lo_case = np.where(has, lo.astype(np.int64), big).min(axis=0)
        hi_case = np.where(has, hi.astype(np.int64), -1).max(axis=0)
        bad = np.flatnonzero(has.any(axis=0) & (lo_case != hi_case))
        uniques = _objects(red.values[col].values)
        if bad.size:
            ids = ", ".join(str(case_ids[i]) for i in bad[:5])
            devs.append({"code": "inconsistent_case_attribute",
                         "message": f"Column {col!r} differs between rows of {bad.size} case(s) ({ids}"
                         f"{', ...' if bad.size > 5 else ''}); the first value of each case was used."})
            case_codes, uniques = held_values(case_codes, uniques)  # (as evalspec.run._case_columns)
        out[col] = CodedColumn.of(case_codes, uniques, distinct=True)
    return out, devs
