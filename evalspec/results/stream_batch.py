"""One batch of attempt rows typed as :func:`~evalspec.results.table.build_table` types them, folded into the state.

:class:`Reducer` keeps, over every batch of every file, only what the case table needs: the
cell masks (:class:`~evalspec.results.stream_state.CellState`), the case, cluster and version
labels (one entry per distinct value), each case's cluster, the rows of each candidate and
version and where each version was first seen, the first rows without an outcome, the run
times' range and the slice levels. A batch's values are typed by the same ``typed_*``
functions as the in-memory path's, so an unreadable value is located at its file and line in
the same words; a check that fails (a duplicate attempt, a case in two clusters, a row lacking
required metadata) refuses at that batch, before the rest is read.
"""

from __future__ import annotations

import datetime as _dt
from itertools import compress, repeat
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.results.stream_state import MAX_REPEAT_BIT, CellState, Fallback

__all__ = ["Reducer"]

_ROLE_KEYS = (("candidate", "data.columns.candidate"), ("outcome", "data.columns.outcome"),
              ("model_version", "data.columns.model_version"), ("timestamp", "data.columns.timestamp"))


class _Rows:
    """Where the rows of one batch sit (its file, their lines), for located messages."""

    def __init__(self, display: str, unit: str, lines: np.ndarray) -> None:
        self.displays, self.units, self.line = [display], [unit], lines
        self.unit = unit
        self.file_idx = np.zeros(lines.shape[0], dtype=np.int8)

    def where(self, i: int) -> tuple[str, int]:
        return self.displays[0], int(self.line[i])


class _Values:
    """Distinct values of one column over every batch (first-seen), as :class:`~evalspec.results.batches.Distinct`
    tells values apart (``1``, ``True`` and ``"1"`` are three)."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []

    def codes(self, uniques: np.ndarray) -> np.ndarray:
        """Global codes of a batch's distinct values, -1 appended (for code -1, missing)."""
        out = np.empty(len(uniques) + 1, dtype=np.int64)
        for i, v in enumerate(uniques.tolist()):
            key = (v.__class__, repr(v)) if isinstance(v, (list, dict)) else (v.__class__, v)
            g = self.index.get(key)
            if g is None:
                g = self.index[key] = len(self.values)
                self.values.append(v)
            out[i] = g
        out[-1] = -1
        return out


def first_rows(codes: np.ndarray, m: int) -> np.ndarray:
    """The first row of each of ``m`` codes (``codes``: -1 for none), ``len(codes)`` where a code is not used.

    A code's first row begins a run of equal codes, so only the runs' first rows are looked at
    (a batch's rows of one case, or of one version, are mostly together).
    """
    n = codes.shape[0]
    first = np.full(m, n, dtype=np.int64)
    if not n:
        return first
    starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    starts = np.concatenate(([0], starts)) if starts.size else np.zeros(1, dtype=np.int64)
    at = codes[starts]
    ok = at >= 0
    np.minimum.at(first, at[ok], starts[ok])
    return first


def label_order(labels: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[Any], Any]:
    """``(first row of each label, the used labels' positions in row order, those labels, the same as an Arrow
    string array or None)`` of a batch's distinct ``labels`` (``codes``: each row's): what :func:`_labels_in_order`
    numbers, known without its state (the Arrow form: None where a label is not text Arrow holds)."""
    from evalspec.results.arrow import arrow_strings

    first = first_rows(codes, len(labels))
    used = np.flatnonzero(first < codes.shape[0])
    used = used[np.argsort(first[used], kind="stable")]
    keys = np.asarray(labels, dtype=object)[used].tolist()
    texts = arrow_strings(keys)  # (None where a label is not text; labels are text, from identifier_label)
    if texts is not None and texts.null_count:
        texts = None
    return first, used, keys, texts


class Labels:
    """Distinct labels (case or cluster ids) numbered 0, 1, ... in the order first seen, over every batch.

    Kept in a :class:`~evalspec.results.text_index.TextIndex` (looked up and added in NumPy and
    Arrow, which let the reader thread run meanwhile) while every batch's labels come as Arrow
    texts; from the first batch whose do not (a text Arrow cannot hold), in a dict, numbered the
    same (:meth:`number` gives what a dict filled row by row gives, either way).
    """

    def __init__(self) -> None:
        from evalspec.results.text_index import TextIndex

        self.texts: Any = TextIndex()
        self.index: dict[Any, int] | None = None

    def __len__(self) -> int:
        return len(self.texts) if self.index is None else len(self.index)

    def number(self, keys: list[Any], texts: Any) -> np.ndarray:
        """The numbers of distinct ``keys`` (``texts``: the same as Arrow texts, or None), new ones numbered on."""
        if self.index is None and texts is not None:
            return self.texts.add(texts)[0]
        if self.index is None:  # (from here on a dict: the labels so far, in their order)
            self.index = dict(zip(self.labels(), range(len(self.texts))))
            self.texts = None
        return _numbered(self.index, keys)

    def labels(self) -> list[Any]:
        """Every label, in the order numbered."""
        return list(self.index) if self.index is not None else self.texts.arrow().to_pylist()

    def arrow(self) -> Any:
        """Every label as an Arrow string array in the order numbered; None when some label is not held as text."""
        return self.texts.arrow() if self.index is None else None


def _numbered(index: dict[Any, int], keys: list[Any]) -> np.ndarray:
    """The numbers of distinct ``keys`` in ``index``, the new ones added, numbered on in their order."""
    # (C loops: a batch has tens of thousands of new case ids; each is looked up once)
    found = np.fromiter(map(index.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
    new = found < 0
    k = int(np.count_nonzero(new))
    if k:  # (the labels are distinct: the new ones are numbered on, in row order)
        n = len(index)
        found[new] = np.arange(n, n + k)
        index.update(zip(keys if k == len(keys) else compress(keys, new.tolist()), range(n, n + k)))
    return found


def _labels_in_order(index: Labels | dict[Any, int], labels: np.ndarray, codes: np.ndarray,
                     order: tuple[np.ndarray, np.ndarray, list[Any], Any] | None = None) -> np.ndarray:
    """Global codes of a batch's distinct ``labels`` (``codes``: each row's), new ones numbered in row order.

    ``order``: :func:`label_order` of them, when computed already (in the reader thread).
    """
    out = np.full(len(labels) + 1, -1, dtype=np.int64)
    if not len(labels):
        return out
    _, used, keys, texts = label_order(labels, codes) if order is None else order
    out[used] = _numbered(index, keys) if isinstance(index, dict) else index.number(keys, texts)
    return out


class Typed:
    """One batch typed by :meth:`Typer.typed`: what :meth:`Reducer.fold` needs, and what it must refuse."""

    __slots__ = ("attributes", "cand", "case_local", "case_order", "cat", "cl_labels", "cl_local", "cl_order",
                 "file_repeat", "labels", "passed", "problems", "raw", "refusal", "repeat", "slice_labels", "times",
                 "trange", "version")

    def __init__(self, raw: Any, cat: _Rows) -> None:
        self.raw, self.cat = raw, cat
        self.file_repeat: bool | None = None  # (a file's first batch, one attempt planned: has it a repeat column)
        self.refusal: tuple[str, list[Diagnostic]] | None = None
        self.problems: list[Diagnostic] = []
        self.times: tuple[Any, int] | None = None  # (the time column, where its problems go; typed by the fold)
        self.trange: tuple[Any, Any] | None = None
        # (the labels' order in rows, :func:`label_order`: made by the fold, on the main thread, which waits less
        # for its batches than this thread takes to type them; None here)
        self.case_order: tuple[np.ndarray, np.ndarray, list[Any], Any] | None = None
        self.cl_order: tuple[np.ndarray, np.ndarray, list[Any], Any] | None = None


class Typer:
    """Types batches as :func:`~evalspec.results.table.build_table` types rows, with nothing of the fold's state.

    A file's batches may be typed in its reader thread while the main thread folds the batch
    before (one thread at a time calls it: a file's reader ends before the next file's starts).
    What it keeps between batches: whether the file's first batch had a repeat column, and the
    time texts typed already (their range and problems were in an earlier batch), which only
    :meth:`Reducer.fold` reads and adds to (:meth:`_times`: the times are typed on the main thread).
    """

    def __init__(self, plan: Any, attributes: list[str]) -> None:
        self.plan, self.attributes = plan, attributes
        self.repeat_in_file = True
        self.times_seen: set[str] = set()

    def typed(self, raw: Any, *, first: bool) -> Typed:
        """The batch ``raw`` (a :class:`~evalspec.results.readers.RawFile`, the plan applied) typed; ``first``: a file's first."""
        from evalspec.results import table as t

        plan, c, n = self.plan, raw.columns, raw.rows
        cols = plan.data.columns
        out = Typed(raw, _Rows(raw.display, raw.unit, raw.lines))
        cat = out.cat
        if first:
            missing = self._file_columns(raw, out)
            if missing:
                out.refusal = ("the results do not have the columns the plan names", missing)
                return out
        problems: list[Diagnostic] = self._labels_and_nesting(cat, c)
        if problems:
            out.refusal = ("the results do not have the columns the plan names", problems)
            return out
        out.cand = t.typed_candidates(cat, self._col(c, cols.candidate, n), plan, problems)
        out.case_local, out.labels = t.typed_cases(cat, self._col(c, plan.units.case, n), plan, problems)
        out.repeat = t.typed_repeats(cat, self._repeat_col(c, n), cols.repeat, problems)
        out.passed, _ = t.typed_outcomes(cat, self._col(c, cols.outcome, n), plan, problems)
        out.cl_local, out.cl_labels = t.typed_clusters(cat, None if plan.units.cluster is None else
                                                       self._col(c, plan.units.cluster, n), plan, problems)
        out.version = None if cols.model_version is None else t.typed_versions(self._col(c, cols.model_version, n))
        # (the times are typed by the fold, on the main thread, which waits less for its batches than this thread
        # takes to type them: their problems go here, after the versions', before the record's)
        out.times = (None if cols.timestamp is None else self._col(c, cols.timestamp, n), len(problems))
        problems += self._record(cat, c, n)
        out.problems = problems
        if not problems:
            out.attributes = self._attributes(c, n)
            out.slice_labels = self._slices(c)
        return out

    def _col(self, c: dict[str, Any], name: str, n: int) -> Any:
        from evalspec.results.values import LazyCoded

        if name in c:
            return c[name]
        return LazyCoded(np.full(n, -1, dtype=np.int8), np.zeros(0, dtype=object))  # no such key in these rows

    def _repeat_col(self, c: dict[str, Any], n: int) -> Any:
        name = self.plan.data.columns.repeat
        if name in c:
            return c[name]
        if self.plan.attempts.repeats == 1 and not self.repeat_in_file:
            return None  # one attempt per case and no repeat column in this file: repeat 1
        return self._col(c, name, n)

    def _file_columns(self, raw: Any, out: Typed) -> list[Diagnostic]:
        """The columns of the plan's roles missing from the file's first batch (every file has the same columns)."""
        plan, c = self.plan, raw.columns
        cols = plan.data.columns
        needed = [(cols.candidate, "data.columns.candidate"), (plan.units.case, "units.case"),
                  (cols.outcome, "data.columns.outcome"), (plan.units.cluster, "units.cluster"),
                  (cols.model_version, "data.columns.model_version"), (cols.timestamp, "data.columns.timestamp")]
        if plan.attempts.repeats == 1:
            self.repeat_in_file = out.file_repeat = cols.repeat in c
        else:
            needed.append((cols.repeat, "data.columns.repeat"))
        return [Diagnostic(file=raw.display, key=role, message=f"this file has no column {name!r} ({role})",
                           hint="every results file must have the same columns")
                for name, role in needed if name is not None and name not in c]

    def _labels_and_nesting(self, cat: _Rows, c: dict[str, Any]) -> list[Diagnostic]:
        from evalspec.results.table import _long_label_problems, _nested_problems, plan_columns

        plan = self.plan
        problems: list[Diagnostic] = []
        for name in plan_columns(plan):
            if name in c:
                problems += _nested_problems(cat, c[name], name)
        for name, what in ((plan.data.columns.candidate, "candidate"), (plan.units.case, "case"),
                           (plan.units.cluster, "cluster"), (plan.data.columns.model_version, "model version"),
                           *((s.column, "slice") for s in plan.slices)):
            if name is not None and name in c:
                problems += _long_label_problems(cat, c[name], name, what)
        return problems

    def _record(self, cat: _Rows, c: dict[str, Any], n: int) -> list[Diagnostic]:
        """Rows lacking metadata the plan's ``record`` requires (a column these rows lack: every row)."""
        from evalspec.results.checks import _none_mask
        from evalspec.results.table import located

        plan = self.plan
        roles = {"model_version": plan.data.columns.model_version, "timestamp": plan.data.columns.timestamp,
                 "candidate": plan.data.columns.candidate, "repeat": plan.data.columns.repeat,
                 "outcome": plan.data.columns.outcome}
        problems: list[Diagnostic] = []
        for item in plan.record:
            col = roles.get(item) or item
            missing = _none_mask(self._col(c, col, n))
            if missing.any():
                problems += located(cat, np.flatnonzero(missing), col,
                                    f"the row lacks metadata the plan requires ({item!r} is empty)",
                                    hint="log it with every result; the plan's `record` lists what each row must carry")
        return problems

    def _attributes(self, c: dict[str, Any], n: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per case attribute: the batch's codes, distinct values, and whether each row has a value."""
        from evalspec.results.table import factorize, missing_mask

        out = {}
        for name in self.attributes:
            codes, uniq = factorize(self._col(c, name, n))
            out[name] = (codes, uniq, ~np.append(missing_mask(uniq), True)[codes])
        return out

    def _slices(self, c: dict[str, Any]) -> dict[str, set[str]]:
        from evalspec.labels import identifier_label
        from evalspec.results.table import factorize, missing_mask

        out: dict[str, set[str]] = {}
        for sl in self.plan.slices:
            if sl.column in c:
                _, uniq = factorize(c[sl.column])
                out.setdefault(sl.column, set()).update(
                    identifier_label(u) for u, m in zip(uniq.tolist(), missing_mask(uniq).tolist()) if not m)
        return out

    def _times(self, cat: _Rows, col: Any, problems: list[Diagnostic]) -> tuple[Any, Any] | None:
        """:func:`~evalspec.results.table.typed_timestamps` of the values not seen in an earlier batch (those were
        read, and counted in the time range, already): a batch's rows often share their times."""
        from evalspec.results.table import factorize, typed_timestamps
        from evalspec.results.values import LazyCoded, narrow_codes

        if col is None:
            return None
        codes, uniq = factorize(col)
        values = uniq.tolist()
        seen = self.times_seen
        if seen.issuperset(values):  # (every time of the batch seen before: the usual case, one pass in C)
            return None
        unseen = set(values).difference(seen)  # (only texts are ever remembered: a number is never seen)
        new = np.fromiter(map(unseen.__contains__, values), dtype=bool, count=len(values))
        if not new.any():
            return None
        remap = np.full(len(values) + 1, -1, dtype=np.int64)
        remap[np.flatnonzero(new)] = np.arange(int(new.sum()))
        fresh = np.asarray(uniq, dtype=object)[new]
        _, trange = typed_timestamps(cat, LazyCoded(narrow_codes(remap[codes], fresh.size), fresh),
                                     self.plan.data.columns.timestamp, problems)
        if len(seen) > _TIMES_KEPT:
            seen.clear()  # (every time distinct: the cache would only grow)
        seen.update(v for v in unseen if v.__class__ is str)
        return trange


class Reducer:
    """The streaming reduction's state over every batch; :meth:`finish` gives the checked case table."""

    def __init__(self, plan: Any, displays: list[str], plan_diagnostic: Any, *, exact_refusal: bool) -> None:
        from evalspec.limits import MAX_CASE_CELLS
        from evalspec.plan.case_table import column_needs

        self.plan, self.displays, self.plan_diagnostic, self.exact = plan, displays, plan_diagnostic, exact_refusal
        self.names = list(plan.candidates)
        self.attributes = [c for c, (_, level) in column_needs(plan).items() if level == "case"]
        self.typer = Typer(plan, self.attributes)
        self.state = CellState(len(self.names), self.attributes)
        self.cases = Labels()
        self.clusters = Labels()
        self.case_cluster = np.zeros(0, dtype=np.int64)
        self.versions: dict[str, int] = {}
        self.version_rows = np.zeros((len(self.names), 0), dtype=np.int64)
        self.version_first: dict[tuple[int, int], tuple[int, int]] = {}
        self.values = {c: _Values() for c in self.attributes}
        self.slice_labels: dict[str, set[str]] = {}
        self.rows_of = np.zeros(len(self.names), dtype=np.int64)
        self.missing_at: list[list[tuple[int, int, int, int]]] = [[] for _ in self.names]
        self.time: list[int] = []
        self.files: list[Any] = []
        self.columns: dict[str, None] = {}
        self.repeat_files: list[bool] = []
        self.limit = MAX_CASE_CELLS // max(1, len(self.names))

    def refuse(self, what: str, problems: list[Diagnostic]) -> None:
        """Refuse the results: in the in-memory path's own words where it can hold them (:class:`Fallback`)."""
        if self.exact:
            raise Fallback(what)
        raise InputError(what, problems)

    # -- one batch --------------------------------------------------------------------------
    def take(self, raw: Any, j: int, *, first: bool) -> None:
        """Type the batch ``raw`` (a :class:`~evalspec.results.readers.RawFile`) of file ``j`` and fold it in."""
        self.fold(self.typer.typed(raw, first=first), j)

    def fold(self, typed: Typed, j: int) -> None:
        """Fold in a batch of file ``j`` typed by :attr:`typer` (refused here where its typing found problems)."""
        from evalspec.results import table as t

        self.columns.update(dict.fromkeys(typed.raw.columns))
        if typed.file_repeat is not None:
            self.repeat_files.append(typed.file_repeat)
        if typed.refusal is not None:
            self.refuse(*typed.refusal)
        if typed.times is not None:  # (the typing thread leaves the times to the fold: Typer._times keeps its state)
            col, at = typed.times
            found: list[Diagnostic] = []
            typed.trange = self.typer._times(typed.cat, col, found)
            typed.problems[at:at] = found
            typed.times = None
        if typed.problems:
            self.refuse(f"{len(typed.problems)} problem(s) in the results", typed.problems)
        plan, cat, cand, repeat, passed = self.plan, typed.cat, typed.cand, typed.repeat, typed.passed
        labels, case_local = typed.labels, typed.case_local
        case_order = typed.case_order if typed.case_order is not None else label_order(labels, case_local)
        glabel = _labels_in_order(self.cases, labels, case_local, case_order)
        gcase = glabel[case_local]
        if len(self.cases) > self.limit:
            row = int(np.flatnonzero(gcase >= self.limit)[0])
            if self.exact:
                raise Fallback("case limit")
            raise t.case_table_refusal(*cat.where(row), cat.unit, plan)
        n = typed.raw.rows
        if n and (int(repeat.min()) < 0 or int(repeat.max()) > MAX_REPEAT_BIT):
            file, line = cat.where(int(np.flatnonzero((repeat < 0) | (repeat > MAX_REPEAT_BIT))[0]))
            raise Fallback(f"{file}:{line} has repeat number {int(repeat[(repeat < 0) | (repeat > MAX_REPEAT_BIT)][0])}"
                           f", and the reduction holds the repeat numbers 0 to {MAX_REPEAT_BIT}",
                           hint=f"number the repeats of a case 1, 2, 3, ... (at most {MAX_REPEAT_BIT})")
        self.state.grow(len(self.cases))
        attributes = {name: (self.values[name].codes(uniq)[codes], has)
                      for name, (codes, uniq, has) in typed.attributes.items()}
        again = self.state.add(cand, gcase, repeat, passed, attributes)
        problems: list[Diagnostic] = []
        if again.size:
            problems += t.located(cat, again, "row", "duplicate (candidate, case, repeat): the same attempt appears "
                                  "twice (an earlier row has the same candidate, case and repeat)",
                                  hint="remove the duplicate or number the repeats")
        problems += self._clusters(cat, gcase, glabel, typed, labels, case_local, case_order[0])
        if problems:
            self.refuse(f"the results fail {len(problems)} check(s)", problems)
        self._versions(j, typed.raw.lines, cand, typed.version)
        self._missing_rows(j, typed.raw.lines, cand, gcase, repeat, passed)
        if typed.trange is not None:
            lo, hi = (int((x - _EPOCH) // _dt.timedelta(microseconds=1)) for x in typed.trange)
            self.time = [min(self.time[0], lo), max(self.time[1], hi)] if self.time else [lo, hi]
        for col, labels_seen in typed.slice_labels.items():
            self.slice_labels.setdefault(col, set()).update(labels_seen)
        self.rows_of += np.bincount(cand, minlength=len(self.names))

    def file_done(self, info: Any) -> None:
        self.files.append(info)

    def finish(self) -> Any:
        from evalspec.results.stream_finish import finish

        return finish(self)

    def _clusters(self, cat: _Rows, gcase: np.ndarray, glabel: np.ndarray, typed: Typed, labels: np.ndarray,
                  case_local: np.ndarray, case_first: np.ndarray) -> list[Diagnostic]:
        """Rows whose cluster is not the one the case's first row names (``glabel``: each case label's global code;
        ``case_first``: each case label's first row in the batch)."""
        from evalspec.results.table import located

        cl_local, cl_labels = typed.cl_local, typed.cl_labels
        if cl_local is None or cl_labels is None:
            return []
        gcl = _labels_in_order(self.clusters, cl_labels, cl_local, typed.cl_order)[cl_local]
        if self.case_cluster.shape[0] < len(self.cases):
            grown = np.full(max(len(self.cases), 2 * self.case_cluster.shape[0]), -1, dtype=np.int64)
            grown[:self.case_cluster.shape[0]] = self.case_cluster
            self.case_cluster = grown
        per_label = glabel[:-1]
        new = (per_label >= 0) & (self.case_cluster[np.maximum(per_label, 0)] < 0)  # cases first seen in this batch
        if new.any():  # a case's cluster is its first row's
            self.case_cluster[per_label[new]] = gcl[case_first[new]]
        bad = np.flatnonzero(self.case_cluster[gcase] != gcl)
        if not bad.size:
            return []
        names = np.array(self.clusters.labels(), dtype=object)
        i0 = int(bad[0])
        return located(cat, bad, self.plan.units.cluster,
                       f"the case's cluster differs between rows (case {labels[case_local[i0]]!r} is in cluster "
                       f"{names[self.case_cluster[gcase[i0]]]!r} elsewhere)", values=names[gcl],
                       hint="a case belongs to one cluster for every candidate and repeat; fix the cluster column")

    def _versions(self, j: int, lines: np.ndarray, cand: np.ndarray, version: Any) -> None:
        if version is None:
            return
        codes = np.asarray(version.codes, dtype=np.int64)
        glabel = _labels_in_order(self.versions, np.asarray(version.uniques, dtype=object), codes)
        n_v = len(self.versions)
        if self.version_rows.shape[1] < n_v:
            grown = np.zeros((len(self.names), n_v), dtype=np.int64)
            grown[:, :self.version_rows.shape[1]] = self.version_rows
            self.version_rows = grown
        if len(version.uniques) == 1 and codes.size and int(codes.min()) == 0:  # one version on every row
            self._one_version(j, lines, cand, int(glabel[0]))
            return
        g = glabel[codes]
        ok = np.flatnonzero(g >= 0)
        key = cand[ok].astype(np.int64) * n_v + g[ok]
        self.version_rows += np.bincount(key, minlength=len(self.names) * n_v).reshape(len(self.names), n_v)
        first = first_rows(key, len(self.names) * n_v)
        for k in np.flatnonzero(first < key.shape[0]).tolist():
            self.version_first.setdefault((k // n_v, k % n_v), (j, int(lines[ok[first[k]]])))

    def _one_version(self, j: int, lines: np.ndarray, cand: np.ndarray, g: int) -> None:
        """:meth:`_versions` of a batch whose rows all have version ``g``: each candidate's rows, and its first."""
        n = len(self.names)
        self.version_rows[:, g] += np.bincount(cand, minlength=n)
        first = first_rows(cand, n)
        for k in np.flatnonzero(first < cand.shape[0]).tolist():
            self.version_first.setdefault((k, g), (j, int(lines[first[k]])))

    def _missing_rows(self, j: int, lines: np.ndarray, cand: np.ndarray, gcase: np.ndarray, repeat: np.ndarray,
                      passed: np.ndarray) -> None:
        """The first rows without an outcome of each candidate (where a refusal shows them)."""
        miss = np.flatnonzero(np.isnan(passed))
        for k in range(len(self.names)):
            room = 64 - len(self.missing_at[k])
            if room > 0 and miss.size:
                rows = miss[cand[miss] == k][:room].tolist()
                self.missing_at[k] += [(j, int(lines[i]), int(gcase[i]), int(repeat[i])) for i in rows]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
#: Distinct time texts remembered as read (beyond it the memory is cleared: times that never repeat).
_TIMES_KEPT = 1_000_000
