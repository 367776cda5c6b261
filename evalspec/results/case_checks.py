"""The checks of a case table against the plan: those attempt rows get, made on counts.

Fatal findings refuse the run with the case-table rows located (file and row). Non-fatal
findings (extra or fewer repeats, a version other than the declared one, pooled versions,
missing outcomes, unpaired cases, a case attribute that differs between attempts) are worded
exactly as :mod:`evalspec.results.checks` words them for attempt rows, so a case table reduced
from the same rows gives the same claim (``tests/results/test_case_table.py`` holds them equal).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalspec.errors import Diagnostic
from evalspec.results.checks import unpaired_deviation, version_change, version_notes, versions_change
from evalspec.results.values import LazyCoded, held_values
from evalspec.labels import identifier_label as _label
from evalspec.results.table import factorize, missing_mask

__all__ = ["check_case_table"]


def check_case_table(t: Any, files: list[Any], where_all: str, *, cand: np.ndarray, case: np.ndarray,
                     case_ids: np.ndarray, cluster: np.ndarray | None, cluster_ids: np.ndarray | None,
                     counts: dict[str, np.ndarray], rule: dict[str, np.ndarray], times: dict[str, np.ndarray],
                     agreed: list[Diagnostic] | None = None) -> Any:
    """Check the typed case table ``t`` (a :class:`~evalspec.results.case_table._Typed`) and build the table.

    ``agreed``: the problems of :func:`_counts_agree` on these counts, made already (beside the typing).
    """
    from evalspec.results.case_model import CaseTable, micros_range

    plan = t.plan
    names = list(plan.candidates)
    version, vlabels = _versions(t)
    cells = _Cells(cand, case, len(names), len(case_ids))  # (in matrix order: each cell's one row, nothing to find)
    if not cells.in_order:
        _one_row_each(t, cand, case, case_ids, version, vlabels, cluster)
    for j, name in enumerate(names):
        if not cells.in_order and not np.any(cand == j):
            t.problems.append(Diagnostic(file=where_all, key=plan.data.columns.candidate,
                                         message=f"candidate {name!r} has no rows in the case table",
                                         hint="reduce every candidate's attempts, or check the candidate names"))
    if cluster is not None and _clusters_differ(cells, case, cluster, len(case_ids)):
        first = np.full(len(case_ids), -1, dtype=np.int64)
        order = np.argsort(case, kind="stable")
        starts = np.r_[0, np.flatnonzero(case[order][1:] != case[order][:-1]) + 1] if case.size else np.zeros(0, int)
        first[case[order][starts]] = cluster[order][starts]
        bad = cluster != first[case]
        if bad.any():
            i0 = int(np.flatnonzero(bad)[0])
            assert cluster_ids is not None
            t.flag(bad, plan.units.cluster, f"the case's cluster differs between rows (case {case_ids[case[i0]]!r} is "
                   f"in cluster {cluster_ids[first[case[i0]]]!r} elsewhere)",
                   hint="a case belongs to one cluster for every candidate; fix the cluster column")
    if agreed is None:
        _counts_agree(t, counts, rule)
    else:
        t.problems += agreed
    seen = _version_checks(t, cand, version, vlabels, counts)
    t.raise_problems("checks")

    table = CaseTable(files=files, candidates=names, case_ids=case_ids, cluster_ids=cluster_ids,
                      case_cluster=_case_cluster(cells, case, cluster, len(case_ids)), raw=t.cols, time_range=None,
                      attempts=cells.matrix(counts["attempts"]),
                      missing_counts=cells.matrix(counts["missing"]),
                      passes=cells.matrix(counts["passes"]),
                      rule_counts={k: cells.matrix(v, fill=np.nan)
                                   for k, v in {**rule, **{c: counts[c].astype(np.float64) for c in counts
                                                           if "_in_first_" in c}}.items()})
    table.versions_seen = seen
    table.deviations += t.version_deviations
    table.detected += t.version_detected
    if "first_time" in times:
        table.time_range = micros_range(times["first_time"], times["last_time"])
    _repeats(t, table, cand, counts)
    _missing(t, table, cand, counts)
    _unpaired(table)
    table.case_columns, table.attribute_deviations = _case_columns(t, cells, case, case_ids, counts)
    return table


def _clusters_differ(cells: _Cells, case: np.ndarray, cluster: np.ndarray, n_cases: int) -> bool:
    """Whether the rows of some case name two clusters (a scatter and a gather: no sort when none does; in
    matrix order, whether some candidate's row of clusters differs from the first's)."""
    if cells.in_order:
        grid = cluster.reshape(cells.shape)
        return bool(np.any(grid[1:] != grid[0]))
    some = np.full(n_cases, -1, dtype=np.int64)
    some[case] = cluster  # one row's cluster per case (whichever NumPy wrote last)
    return bool(np.any(some[case] != cluster))


def _repeated_keys(cand: np.ndarray, case: np.ndarray, n_cases: int) -> bool:
    """Whether some candidate x case has two rows (``cand``, ``case``: codes, none missing)."""
    flat = cand.astype(np.int64) * n_cases + case
    seen = np.zeros(int(cand.max()) * n_cases + n_cases if cand.size else 0, dtype=bool)
    seen[flat] = True
    return int(np.count_nonzero(seen)) < flat.size


class _Cells:
    """Where each row sits in the candidate x case matrices (rows checked: one row per candidate and case).

    A table whose rows are in matrix order (candidates in the plan's order, cases sorted, every
    cell once: what ``ORDER BY`` candidate, case gives) is laid out by a reshape; any other order
    by a scatter. Both give the same matrices.
    """

    def __init__(self, cand: np.ndarray, case: np.ndarray, n_cand: int, n_cases: int) -> None:
        self.shape = (n_cand, n_cases)
        self.rows = int(cand.shape[0])
        self._cand, self._case = cand, case
        self._cell: np.ndarray | None = None
        # (in matrix order the rows' cells are 0, 1, 2, ...: candidate j's rows name j and cases 0, 1, 2, ...)
        self.in_order = self.rows == n_cand * n_cases and _is_grid(cand, case, self.shape)

    @property
    def cell(self) -> np.ndarray:
        """Each row's cell (``candidate x cases + case``; made where the rows are not in matrix order)."""
        if self._cell is None:
            self._cell = self._cand.astype(np.int64) * self.shape[1] + self._case
        return self._cell

    def matrix(self, values: np.ndarray, fill: float = 0) -> np.ndarray:
        """The matrix of ``values`` (each row's at its cell), ``fill`` where no row is.

        In matrix order an array of the right type that owns its memory is laid out in place (the
        matrix is ``values`` reshaped): the caller gives it away, reading it at most afterwards. A
        read-only one (a case table's counts as Arrow read them, or one count broadcast) is reshaped
        too, a view where NumPy can make one: the matrix is then read-only, and nothing writes to it.
        """
        dtype = np.float64 if isinstance(fill, float) else np.int64
        if self.in_order:  # (cells 0, 1, ..., in order: every cell is filled once)
            if (values.dtype == dtype and values.base is None and values.flags.c_contiguous
                    and values.flags.writeable and values.ndim == 1):
                return values.reshape(self.shape)
            if values.dtype == dtype and values.ndim == 1 and not values.flags.writeable:
                return values.reshape(self.shape)  # (read-only, as read: a case table's counts; a view where it can)
            return np.array(values, dtype=dtype).reshape(self.shape)
        out = np.full(self.shape, fill, dtype=dtype) if fill else np.zeros(self.shape, dtype=dtype)
        out.ravel()[self.cell] = values
        return out

    def grid(self, codes: np.ndarray) -> np.ndarray:
        """The int32 matrix of the rows' ``codes`` (a new array of its own), -1 where no row is."""
        if self.in_order:
            return codes.astype(np.int32, copy=False).reshape(self.shape)
        out = np.full(self.shape, -1, dtype=np.int32)
        out.ravel()[self.cell] = codes
        return out


def _is_grid(cand: np.ndarray, case: np.ndarray, shape: tuple[int, int]) -> bool:
    """Whether rows (``cand``, ``case``: one per cell) are in matrix order: candidate j's rows, in turn, name j and
    the cases 0, 1, 2, ... (their cells are then 0, 1, 2, ...; two comparisons a row, no cell computed)."""
    n_cand, n_cases = shape
    if not cand.size:
        return True
    lanes = np.arange(n_cases, dtype=case.dtype if case.dtype.kind in "iu" else np.int64)
    rows_cand, rows_case = cand.reshape(shape), case.reshape(shape)
    return all(bool(np.all(rows_cand[j] == j)) and np.array_equal(rows_case[j], lanes) for j in range(n_cand))


def _case_cluster(cells: _Cells, case: np.ndarray, cluster: np.ndarray | None, n_cases: int) -> np.ndarray | None:
    """Each case's cluster (the clusters checked: the same in every row of a case)."""
    if cluster is None:
        return None
    if cells.in_order:  # (the first candidate's rows are the cases in order)
        return cluster[:n_cases].astype(np.int64)
    out = np.zeros(n_cases, dtype=np.int64)
    out[case] = cluster
    return out


def _versions(t: Any) -> tuple[np.ndarray | None, list[str]]:
    name = t.plan.data.columns.model_version
    if name is None:
        return None, []
    codes, uniq = factorize(t.cols[name])
    labels = [None if m else _label(u) for u, m in zip(uniq.tolist(), missing_mask(uniq).tolist())]
    index: dict[str, int] = {}
    remap = np.array([-1 if lab is None else index.setdefault(lab, len(index)) for lab in labels] + [-1],
                     dtype=np.int64)
    return remap[codes], list(index)


def _one_row_each(t: Any, cand: np.ndarray, case: np.ndarray, case_ids: np.ndarray, version: np.ndarray | None,
                  vlabels: list[str], cluster: np.ndarray | None) -> None:
    """One row per candidate × case: a second row is located, with what differs between the two."""
    if not cand.size or (cand.min() >= 0 and case.min() >= 0 and not _repeated_keys(cand, case, len(case_ids))):
        return
    key = cand.astype(np.int64) * (len(case_ids) + 1) + case
    order = np.argsort(key, kind="stable")
    same = key[order][1:] == key[order][:-1]
    for pos in np.flatnonzero(same)[:5].tolist():
        a, b = int(order[pos]), int(order[pos + 1])
        file0, line0 = t.where(a)
        who = f"candidate {list(t.plan.candidates)[cand[b]]!r}, case {case_ids[case[b]]!r}"
        if version is not None and version[a] != version[b]:
            message = (f"{who} has a row for model version {vlabels[version[a]]!r} at {file0}:{line0} and one for "
                       f"{vlabels[version[b]]!r}: a case whose attempts ran on two versions cannot be reduced to "
                       "one case outcome from counts")
            hint = "read the attempt rows (data.format: parquet, jsonl or csv), or rerun the case on one version"
        elif cluster is not None and cluster[a] != cluster[b]:
            message = f"{who}: the case's cluster differs between rows (another row at {file0}:{line0})"
            hint = "a case belongs to one cluster for every candidate and repeat; fix the cluster column"
        else:
            message = f"duplicate (candidate, case): {who} already has a row at {file0}:{line0}"
            hint = "a case table has one row per candidate and case; reduce the attempts again"
        file1, line1 = t.where(b)
        t.problems.append(Diagnostic(file=file1, line=line1, key=t.plan.units.case, message=message, hint=hint))
    extra = int(same.sum()) - 5
    if extra > 0:
        t.problems.append(Diagnostic(file=t.where(int(order[0]))[0],
                                     message=f"... and {extra} more rows like these ({t.plan.units.case})"))


def _one(values: np.ndarray) -> np.ndarray:
    """``values``, or its one value alone (shape ``(1,)``) where it is one value repeated for every row (a count
    column of one value, typed as a broadcast): a comparison then reads one value, not every row."""
    return values[:1] if values.ndim == 1 and values.size > 1 and values.strides == (0,) else values


#: Rows compared at a time by :func:`_rows_above` (each chunk's temporaries small, in cache).
_CHUNK_ROWS = 1 << 16


def _rows_above(left: np.ndarray, right: np.ndarray, less: np.ndarray | None = None,
                chunk: int = _CHUNK_ROWS) -> np.ndarray:
    """``left > right - less`` (``less`` 0 when None) as :meth:`_Typed.flag` takes it, each array a column or
    one value (shape ``(1,)``): the rows where it holds, or ``[False]`` where no row does. Told
    ``chunk`` rows at a time, so no difference of every row is made to find that none is above
    (a check that passes, as almost all do, costs no array of every row)."""
    def above(a: np.ndarray, b: np.ndarray, c: np.ndarray | None) -> np.ndarray:
        return a > (b if c is None else b - c)

    arrays = [a for a in (left, right, less) if a is not None]
    n = max(a.shape[0] for a in arrays)
    if n <= 2 * chunk:
        return above(left, right, less)

    def part(a: np.ndarray | None, lo: int, hi: int) -> np.ndarray | None:
        return a if a is None or a.shape[0] == 1 else a[lo:hi]

    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        if above(part(left, lo, hi), part(right, lo, hi), part(less, lo, hi)).any():
            return above(left, right, less)  # (some row is: every row's answer, to locate them)
    return np.zeros(1, dtype=bool)


def _counts_agree(t: Any, counts: dict[str, np.ndarray], rule: dict[str, np.ndarray]) -> None:
    """The counts of each row describe possible attempts, and the attempt rows' own checks passed."""
    planned = int(t.plan.attempts.repeats)
    counts = {name: _one(values) for name, values in counts.items()}  # (a column of one value: checked once)
    att, miss, passes = counts["attempts"], counts["missing"], counts["passes"]
    t.flag(att < 1, "attempts", "attempts must be at least 1 (a row stands for attempts that were made)")
    t.flag(att > planned, "attempts", f"more attempts kept than the {planned} planned (attempts.repeats); count the "
           "attempts beyond the first {planned} in extra_attempts".replace("{planned}", str(planned)))
    t.flag((counts["extra_attempts"] > 0) & (att != planned), "extra_attempts",
           f"extra attempts beside fewer than the {planned} planned kept: the first {planned} attempts are kept")
    t.flag(_rows_above(miss, att), "missing", "more missing outcomes than attempts")
    t.flag(_rows_above(passes, att, miss), "passes", "more passes than attempts with an outcome")
    t.flag(counts["duplicate_attempts"] > 0, "duplicate_attempts",
           "duplicate (candidate, case, repeat): the same attempt appears twice among the rows this row reduces",
           hint="remove the duplicate or number the repeats, then reduce again")
    t.flag(counts["unreadable"] > 0, "unreadable", "attempt rows that could not be read (an outcome that is not a "
           "pass/fail value or a score, a repeat number that is not an integer, a time that is not ISO 8601) were "
           "reduced into this row",
           hint="fix those attempt rows (evalspec validate --data on a sample of them shows each at its line)")
    if "lacking_record" in counts:
        t.flag(counts["lacking_record"] > 0, "lacking_record", "attempt rows lacking metadata the plan requires "
               f"(record: {', '.join(t.plan.record)}) were reduced into this row",
               hint="log it with every result; the plan's `record` lists what each row must carry")
    for name, values in rule.items():
        if name == "first_outcome":
            t.flag(np.isnan(values) & (miss == 0), name, "first_outcome is empty, but no attempt lacks an outcome")
        if name == "first_answered_outcome":
            t.flag(np.isnan(values) & (miss < att), name, "first_answered_outcome is empty, but some attempt has an "
                   "outcome")
    k = int(t.plan.attempts.k or 1)
    if f"missing_in_first_{k}" in counts:
        t.flag(counts[f"missing_in_first_{k}"] > np.minimum(miss, k), f"missing_in_first_{k}",
               f"missing_in_first_{k} exceeds the missing outcomes, or the {k} attempts it counts")
    for name in (f"passes_in_first_{k}", f"answered_passes_in_first_{k}"):
        if name in counts:
            t.flag((counts[name] > passes) | (counts[name] > np.minimum(att, k)), name,
                   f"{name} exceeds the passes, or the {k} attempts it counts")


def _version_checks(t: Any, cand: np.ndarray, version: np.ndarray | None, vlabels: list[str],
                    counts: dict[str, np.ndarray]) -> dict[str, dict[str, int]]:
    """Model versions per candidate, counted in attempt rows (the kept and the extra ones), as for attempt rows."""
    plan = t.plan
    t.version_deviations, t.version_detected = [], []
    seen_all: dict[str, dict[str, int]] = {}
    if version is None:
        return seen_all
    rows_of = counts["attempts"] + counts["extra_attempts"]
    for j, name in enumerate(plan.candidates):
        mine = (cand == j) & (version >= 0)
        per = np.bincount(version[mine], weights=rows_of[mine], minlength=len(vlabels)).astype(np.int64)
        seen = {v: int(c) for v, c in sorted(zip(vlabels, per.tolist()), key=lambda p: str(p[0])) if c}
        seen_all[name] = seen
        declared = plan.candidates[name].version
        if versions_change(seen, declared):
            firsts = []
            for v in seen:
                f, ln = t.where(int(np.flatnonzero(mine & (version == vlabels.index(v)))[0]))
                firsts.append(f"{v!r} first at {f}:{ln}")
            t.problems.append(version_change(name, seen, firsts, plan.data.columns.model_version,
                                             firsts and t.where(int(np.flatnonzero(mine)[0]))[0]))
            continue
        detected, deviation = version_notes(name, seen, declared)
        t.version_detected += [detected] if detected else []
        t.version_deviations += [deviation] if deviation else []
    return seen_all


def _repeats(t: Any, table: Any, cand: np.ndarray, counts: dict[str, np.ndarray]) -> None:
    planned = int(t.plan.attempts.repeats)
    names = table.candidates
    att, extra = counts["attempts"], counts["extra_attempts"]
    if extra.any():
        per = {names[j]: int(extra[cand == j].sum()) for j in range(len(names))}
        table.deviations.append({"code": "extra_repeats",
                                 "message": f"More repeats than the {planned} planned: "
                                 + ", ".join(f"{k} {v} extra attempt(s)" for k, v in per.items() if v)
                                 + f" (up to {int((att + extra).max())} per case); only the first {planned} "
                                 "of each case (lowest repeat numbers) were analysed."})
    table.repeats_observed = (int(att.min()), int(att.max())) if att.size else (1, 1)
    if table.repeats_observed[0] < planned:
        short = int(att[att < planned].sum())
        table.deviations.append({"code": "fewer_repeats",
                                 "message": f"Some cases have fewer repeats than the {planned} planned "
                                 f"(as few as {table.repeats_observed[0]}; {short} attempt rows belong to such "
                                 "cases)."})


def _missing(t: Any, table: Any, cand: np.ndarray, counts: dict[str, np.ndarray]) -> None:
    plan = t.plan
    policy = plan.missing.policy
    for j, name in enumerate(table.candidates):
        # (the matrices hold each of the candidate's rows once, in its own cell: their sums are the rows')
        m, a = int(table.missing_counts[j].sum()), int(table.attempts[j].sum())
        frac = m / a if a else 0.0
        table.missing[name] = {"missing": m, "attempts": a, "fraction": frac, "policy": policy}
        if m and policy == "error":
            t.flag((cand == j) & (counts["missing"] > 0), "missing", f"missing outcome for candidate {name!r} and "
                   f"the plan's missing.policy is 'error' ({m} of {a} attempts missing)",
                   hint="rerun the missing attempts, or preregister another policy")
        elif frac > plan.missing.max_fraction:
            t.flag((cand == j) & (counts["missing"] > 0), "missing", f"candidate {name!r} has {m} of {a} outcomes "
                   f"missing ({frac:.1%}), above the plan's missing.max_fraction {plan.missing.max_fraction:.1%}",
                   hint="rerun the missing attempts under the same policy; do not change the limit after seeing the "
                   "results")
        elif m:
            treat = "counted as failures" if policy == "count_as_fail" else "excluded from the analysis"
            table.detected.append({"code": "missing_outcomes",
                                   "message": f"Candidate {name}: {m} of {a} attempts ({frac:.1%}) have no outcome "
                                   f"and were {treat} (missing.policy {policy}); if they are not random failures "
                                   "the estimate is biased."})
    t.raise_problems("missing outcomes break the plan's missing-outcome policy")


def _unpaired(table: Any) -> None:
    names = table.candidates
    if len(names) < 2:
        return
    deviation = unpaired_deviation(names, table.attempts > 0)
    if deviation is not None:
        table.deviations.append(deviation)


def _case_columns(t: Any, cells: _Cells, case: np.ndarray, case_ids: np.ndarray,
                  counts: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[dict[str, str]]]:
    """Each attribute's value per case (the first candidate's, in the plan's order, that has one) and the
    cases whose attempts disagree, worded as :func:`evalspec.run._case_columns` words them.

    A candidate has one row per case (checked before), so each attribute is laid out as a
    candidate x case matrix of codes (-1: missing) and read down each case's column: no sort.
    """
    from evalspec.plan.case_table import attribute_columns

    out: dict[str, np.ndarray] = {}
    devs: list[dict[str, str]] = []
    every_cell = cells.rows == cells.shape[0] * cells.shape[1]  # (one row per cell: each cell has its row)
    for col in attribute_columns(t.plan):
        codes, uniq = factorize(t.cols[col])
        absent = missing_mask(uniq)
        whole = every_cell and not absent.any() and (not codes.size or int(codes.min()) >= 0)  # no cell without one
        keep = None if whole else np.append(np.where(absent, -1, np.arange(len(uniq))), -1).astype(np.int32)
        if whole and cells.in_order and codes.dtype.kind == "i":  # (the codes themselves, in their own type, read
            grid = codes.reshape(cells.shape)  # down each case: no copy)
        else:
            grid = cells.grid(codes if keep is None else keep[codes])
        case_codes, varies = _down_each_case(grid, whole)
        more = _one(counts[f"distinct_{col}"]) > 1
        if more.shape == (1,) and case.size != 1:  # (a count of one value: every case or none)
            if more[0]:
                varies[case] = True
        else:
            varies[case[more]] = True
        bad = np.flatnonzero(varies)
        if bad.size:
            ids = ", ".join(str(case_ids[i]) for i in bad[:5])
            devs.append({"code": "inconsistent_case_attribute",
                         "message": f"Column {col!r} differs between rows of {bad.size} case(s) ({ids}"
                         f"{', ...' if bad.size > 5 else ''}); the first value of each case was used."})
        case_codes, held = held_values(case_codes, uniq)  # (the values some case holds: none missing)
        kept = np.empty(len(held), dtype=object)
        kept[:] = list(held)
        out[col] = LazyCoded(case_codes, kept)  # (kept distinct, none missing; never expanded for a code)
    return out, devs


def _down_each_case(grid: np.ndarray, whole: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each case's code (the first candidate's, in the plan's order, that has one) and whether its candidates'
    codes differ, from the candidate x case ``grid`` of codes (-1: missing; ``whole``: none is)."""
    if whole:  # every candidate has a value: the first gives it, and a case varies where another differs from it
        varies = np.zeros(grid.shape[1], dtype=bool)
        for j in range(1, len(grid)):
            varies |= grid[j] != grid[0]
        return grid[0].copy(), varies
    grid = grid.astype(np.int32, copy=False)  # (read as unsigned below: four bytes a code)
    case_codes = grid[0].copy()
    for j in range(1, len(grid)):  # the first candidate with a value gives it
        np.copyto(case_codes, grid[j], where=case_codes < 0)
    hi = grid.max(axis=0)  # -1: no candidate has a value
    lo = grid.view(np.uint32).min(axis=0).view(np.int32)  # (as unsigned, -1 is the largest: the least present)
    return case_codes, (hi >= 0) & (lo != hi)
