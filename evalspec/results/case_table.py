"""Read a pre-aggregated case table (``data.format: case_table``) and check it as attempt rows are checked.

One row per candidate × case (× model version) with the attempt counts the plan's attempt
rule needs and the case's attributes (the columns: :mod:`evalspec.plan.case_table`,
``docs/case_table.md``). :func:`load_case_table` reads it with the same readers as attempt
rows (JSONL, CSV, Parquet, a partitioned folder, an object-store URI), types it and makes the
checks the attempt rows get where counts can carry them: every candidate has rows, one row per
candidate and case, a case's cluster the same for every candidate, no duplicate attempt,
model versions, required metadata, repeats against the plan, missing outcomes against the
policy, unpaired cases. Non-fatal findings are worded as for attempt rows, so a case table
reduced from the same rows gives the same claim. :meth:`CaseTable.outcomes` is the attempt
rule on counts: the same case outcomes :func:`evalspec.attempts.reduce_attempts` gives from the
rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.plan.case_table import CaseColumn, case_table_columns
from evalspec.results.case_model import CaseTable
from evalspec.labels import identifier_label as _label
from evalspec.results.table import FileInfo, _labels, factorize, located, missing_mask, times_micros
from evalspec.results.values import LazyNumbers

__all__ = ["CaseTable", "load_case_table"]

_NO_TIME = np.iinfo(np.int64).min


class _Rows:
    """Where each case-table row sits (file and row), for located messages (worked out when one is located)."""

    def __init__(self, raws: list[Any]) -> None:
        self.displays = [r.display for r in raws]
        self._raws = raws
        self._ends: np.ndarray | None = None  # each file's end, in rows of all files

    def where(self, i: int) -> tuple[str, int]:
        if self._ends is None:
            self._ends = np.cumsum([r.rows for r in self._raws])
        j = int(np.searchsorted(self._ends, i, side="right"))
        return self.displays[j], int(self._raws[j].lines[i - (int(self._ends[j - 1]) if j else 0)])


def load_case_table(plan: Any, plan_path: Path, plan_diagnostic: Any = None) -> CaseTable:
    """Read, type and check the case table ``plan`` names; raise :class:`InputError` on bad input."""
    from evalspec.limits import MAX_CASE_CELLS
    from evalspec.results import read_all
    from evalspec.results.adapters.graders import grader_limits

    from evalspec.results.batches import NUMBERS

    reuse_freed_memory()
    as_tables = plan.model_copy(update={"data": plan.data.model_copy(update={"format": "auto"})})
    token = NUMBERS.set(frozenset(c.name for c in case_table_columns(plan) if c.type == "integer"))
    try:  # (the counts read as numbers where Arrow reads them as integers: _Typed.integers)
        raws = read_all(as_tables, plan_path, plan_diagnostic)
    finally:
        NUMBERS.reset(token)
    total = sum(r.rows for r in raws)
    where_all = ", ".join(r.display for r in raws)
    if total > MAX_CASE_CELLS:  # a row is a cell of candidates x cases
        _too_many(where_all, f"the case table holds {total:,} rows")
    columns = _columns(raws, plan, plan_diagnostic)
    rows = _Rows(raws) if raws else None
    typed = _Typed(plan, columns, rows, total, plan_diagnostic)
    table = typed.build([FileInfo(path=r.display, sha256=r.sha256, rows=r.rows, format="case_table",
                                  location=r.location) for r in raws], where_all)
    table.detected.extend(grader_limits(plan, raws))
    return table


#: NumPy arrays of at least this many bytes come from glibc's heap (reused once freed), not from fresh pages.
_HEAP_UP_TO = 1 << 30


def reuse_freed_memory() -> None:
    """Let this process's large NumPy arrays reuse the memory of freed ones, not fresh pages from the kernel.

    A case table of millions of cells makes and frees many arrays of tens of MiB (its columns, the
    candidate x case matrices, the analyses' per-case arrays). By default glibc maps each array above
    its mmap threshold afresh and unmaps it when freed, and NumPy asks the kernel for huge pages for
    each (``madvise``): every array is paid for in page faults and, where transparent huge pages are
    granted on request, in compaction. At 10M rows that was 2-3 s of system CPU of a run, against
    about 1.3 s with arrays taken from the heap and no huge-page requests (``bench_case_table.py``).
    The heap is given back to the system after a read (``batches._trim_heap``) and when the process
    ends. Only allocation changes, never a value; with another C library or NumPy nothing changes.
    For the rest of the process (one run reads one results set).
    """
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, _HEAP_UP_TO)  # M_MMAP_THRESHOLD: larger blocks only are mapped afresh
        libc.mallopt(-1, _HEAP_UP_TO)  # M_TRIM_THRESHOLD: the heap's free top is kept up to this (for reuse)
    except (OSError, AttributeError):  # another C library: nothing to do
        return
    try:
        from numpy._core import multiarray
    except ImportError:  # (NumPy 1)
        from numpy.core import multiarray  # type: ignore[no-redef]
    off = getattr(multiarray, "_set_madvise_hugepage", None)
    if off is not None:
        off(False)


def _too_many(where: str, what: str) -> None:
    from evalspec.limits import MAX_CASE_CELLS

    message = f"{what}, more than the {MAX_CASE_CELLS:,} cells (candidates x cases) evalspec analyses in one run"
    raise InputError(f"{where}: {message}", [Diagnostic(
        file=where, message=message, hint="analyse a preregistered sample of the cases, or split the study")])


def _columns(raws: list[Any], plan: Any, plan_diagnostic: Any) -> dict[str, np.ndarray]:
    """The columns of every file concatenated; a column the plan's table needs but lacks is located."""
    from evalspec.results.table import concat_columns, names_hint

    wanted = case_table_columns(plan)
    problems: list[Diagnostic] = []
    names: dict[str, None] = {}
    for r in raws:
        names.update(dict.fromkeys(r.columns))
    for col in wanted:
        lacking = [r.display for r in raws if col.name not in r.columns]
        if not lacking:
            continue
        message = f"the case table has no column {col.name!r} ({col.meaning})"
        hint = (f"columns found: {names_hint(names)}; `evalspec reduce-sql` writes every column this plan's case "
                "table needs (`evalspec reduce-sql PLAN --schema` lists them)")
        if col.key is not None and plan_diagnostic is not None and len(lacking) == len(raws):
            problems.append(plan_diagnostic(col.key, message, got=col.name, hint=hint))
        else:
            problems.append(Diagnostic(file=lacking[0], key=col.name, message=message, hint=hint))
    if problems:
        raise InputError("the case table lacks columns the plan needs", problems)
    return {c.name: concat_columns([r.columns[c.name] for r in raws]) if raws else np.zeros(0, dtype=object)
            for c in wanted}


class _Typed:
    """Typing and checks of the concatenated case table (all problems of one stage at once)."""

    def __init__(self, plan: Any, columns: dict[str, np.ndarray], rows: _Rows | None, n: int,
                 plan_diagnostic: Any = None) -> None:
        self.plan, self.cols, self.rows, self.n = plan, columns, rows, n
        self.plan_diagnostic = plan_diagnostic
        self.problems: list[Diagnostic] = []
        self.spec: dict[str, CaseColumn] = {c.name: c for c in case_table_columns(plan)}

    def where(self, i: int) -> tuple[str, int]:
        assert self.rows is not None
        return self.rows.where(i)

    def flag(self, bad: np.ndarray, key: str, message: str, hint: str | None = None,
             values: np.ndarray | None = None) -> None:
        if bad.shape == (1,) and self.n != 1:  # (a check of columns of one value each: every row or none)
            if not bad[0]:
                return
            bad = np.broadcast_to(bad, (self.n,))
        idx = np.flatnonzero(bad)
        if idx.size:
            self.problems += located(self, idx, key, message, values=values, hint=hint)

    def raise_problems(self, what: str) -> None:
        if self.problems:
            raise InputError(f"{len(self.problems)} problem(s) in the case table: {what}", self.problems)

    # -- typing ---------------------------------------------------------------------------
    def integers(self, name: str) -> np.ndarray:
        col = self.cols[name]
        if isinstance(col, LazyNumbers) and _count(col.lo) is not None and _count(col.hi) is not None:
            # (integers from the least to the largest count: each the count it is, as _whole reads it; any
            # other column, or a value out of range, is read and located below)
            if col.lo == col.hi:  # one value throughout: as below
                return np.broadcast_to(np.int64(col.lo), col.shape)
            return col.numbers.astype(np.int64, copy=False)  # (Arrow's buffer where it is int64: read-only)
        codes, uniq = factorize(col)
        parsed = [_whole(u) for u in uniq.tolist()]
        ok = np.array([p is not None for p in parsed] + [False], dtype=bool)
        if not (ok[:-1].all() and (not codes.size or codes.min() >= 0)):  # (every value read: nothing to locate)
            self.flag(~ok[codes], name, f"{name} must be a whole number from 0 to {_MAX_COUNT:,}", values=col,
                      hint=self.spec[name].meaning)
        table = np.array([-1 if p is None else p for p in parsed] + [-1], dtype=np.int64)
        if len(parsed) == 1 and codes.size and codes.min() >= 0:  # one value throughout (attempts = repeats):
            return np.broadcast_to(table[0], codes.shape)  # read-only, no memory (the checks only read counts)
        return table[codes]

    def outcome(self, name: str) -> np.ndarray:
        col = self.cols[name]
        codes, uniq = factorize(col)
        parsed = [_outcome(u) for u in uniq.tolist()]
        ok = np.array([p is not None for p in parsed] + [True], dtype=bool)
        if not ok.all():
            self.flag(~ok[codes], name, f"{name} must be 1 (pass), 0 (fail) or empty", values=col,
                      hint=self.spec[name].meaning)
        return np.array([np.nan if p is None else p for p in parsed] + [np.nan], dtype=np.float64)[codes]

    def times(self, name: str) -> np.ndarray:
        col = self.cols[name]
        codes, uniq = factorize(col)
        micros = times_micros(uniq)
        bad = (micros == _NO_TIME) & ~missing_mask(uniq)
        self.flag(np.append(bad, False)[codes], name, f"{name} is not a time (ISO 8601)", values=col,
                  hint="write times like 2026-10-01T12:00:00Z, or store a timestamp")
        return np.append(micros, _NO_TIME)[codes]

    def candidates(self) -> np.ndarray:
        key = self.plan.data.columns.candidate
        col = self.cols[key]
        names = list(self.plan.candidates)
        codes, uniq = factorize(col)
        labels = [None if m else _label(u) for u, m in zip(uniq.tolist(), missing_mask(uniq).tolist())]
        remap = np.array([-2 if lab is None else names.index(lab) if lab in names else -1 for lab in labels] + [-2],
                         dtype=np.int64)
        if len(names) == len(labels) and np.array_equal(remap[:-1], np.arange(len(labels))) and (
                not codes.size or int(codes.min()) >= 0):  # (named in the plan's order, every row: their own codes)
            cand = codes.view()
            cand.flags.writeable = False
            return cand
        cand = remap[codes]
        unknown = sorted({lab for lab, c in zip(labels, remap[:-1].tolist()) if c == -1 and lab is not None})
        self.flag(cand == -1, key, f"unknown candidate {', '.join(map(repr, unknown))}; the plan's candidates are "
                  f"{', '.join(names)}", values=col, hint="name a candidate of the plan, or map it in "
                  "data.candidate_names")
        self.flag(cand == -2, key, "the row names no candidate", hint="fill in the candidate")
        return cand

    def labels(self, key: str, what: str, lazy: bool = False) -> tuple[np.ndarray, np.ndarray]:
        col = self.cols[key]
        codes, labels, miss = _labels(col, None, lazy)  # (lazy: case ids kept as Arrow texts, values.LazyTexts;
        # None: the reader's codes themselves where they are the labels' (read only: the checks only read them))
        self.flag(miss, key, f"the row has no {what}", values=col, hint=f"every row needs its {what}")
        return codes, labels

    def limits(self) -> None:
        """The limits attempt rows have: label length, slice levels (each at its row or plan line)."""
        from types import SimpleNamespace

        from evalspec.results.table import _long_label_problems, slice_problems

        plan = self.plan
        for name, what in ((plan.data.columns.candidate, "candidate"), (plan.units.case, "case"),
                           (plan.units.cluster, "cluster"), (plan.data.columns.model_version, "model version"),
                           *((s.column, "slice") for s in plan.slices)):
            if name is not None and name in self.cols:
                self.problems += _long_label_problems(self, self.cols[name], name, what)
        view = SimpleNamespace(columns=self.cols, displays=self.rows.displays if self.rows else [])
        self.problems += slice_problems(view, plan, self.plan_diagnostic)

    # -- the table --------------------------------------------------------------------------
    def build(self, files: list[FileInfo], where_all: str) -> CaseTable:
        from evalspec.limits import MAX_CASE_CELLS

        import copy
        from concurrent.futures import ThreadPoolExecutor

        plan = self.plan
        mine = copy.copy(self)  # the case ids typed in a thread (Arrow and NumPy, mostly without the GIL) ...
        mine.problems = []  # (... with their problems kept apart, then put in their place: the same order)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalspec-case-ids") as pool:
            cases = pool.submit(mine.labels, plan.units.case, "case id", True)
            cand = self.candidates()
            before = len(self.problems)
            cluster = cluster_ids = None
            if plan.units.cluster is not None:
                cluster, cluster_ids = self.labels(plan.units.cluster, "cluster id")
            counts = {name: self.integers(name) for name, c in self.spec.items() if c.type == "integer"}
            rule = {name: self.outcome(name) for name, c in self.spec.items() if c.type == "outcome"}
            times = {name: self.times(name) for name, c in self.spec.items() if c.type == "timestamp"}
            self.limits()
            from evalspec.results.case_checks import _counts_agree

            agreed = copy.copy(self)  # (the counts' own checks while the case ids are typed: their problems kept
            agreed.problems = []  # apart, put where the checks put them; none is reported if the typing fails)
            _counts_agree(agreed, counts, rule)
            case, case_ids = cases.result()
        if len(case_ids) * len(plan.candidates) > MAX_CASE_CELLS:  # (refused before any problem, as in turn)
            _too_many(where_all, f"{len(case_ids):,} cases for {len(plan.candidates)} candidates")
        self.problems[before:before] = mine.problems
        self.raise_problems("values that cannot be read")
        from evalspec.results.case_checks import check_case_table

        return check_case_table(self, files, where_all, cand=cand, case=case, case_ids=case_ids, cluster=cluster,
                                cluster_ids=cluster_ids, counts=counts, rule=rule, times=times,
                                agreed=agreed.problems)


#: Largest count a case-table cell may hold (attempts of one candidate on one case), so sums stay exact.
_MAX_COUNT = 1_000_000_000


def _whole(value: Any) -> int | None:
    """A whole number from 0 to :data:`_MAX_COUNT` (``3``, ``3.0``, ``"3"``), else None."""
    out = _whole_any(value)
    return None if out is None else _count(out)


def _count(value: int) -> int | None:
    """``value`` (a whole number) when it is a count a cell may hold, from 0 to :data:`_MAX_COUNT`, else None."""
    return value if 0 <= value <= _MAX_COUNT else None


def _whole_any(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not (text.isascii() and text.isdigit()) or len(text) > 30:
            return None
        value = int(text)
    if isinstance(value, (int, np.integer)):
        return int(value) if value >= 0 else None
    if isinstance(value, (float, np.floating)) and float(value).is_integer() and value >= 0:
        return int(value)
    return None


def _outcome(value: Any) -> float | None:
    """1.0 / 0.0, NaN when empty, None when unreadable."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return np.nan
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value) if value in (0, 1) else None
    if isinstance(value, str):
        text = value.strip().lower()
        return {"1": 1.0, "0": 0.0, "true": 1.0, "false": 0.0, "": np.nan}.get(text)
    return None
