"""The tidy results table: one row per (candidate, case, repeat), typed against the plan.

:func:`build_table` maps the plan's column roles onto the raw columns read by
:mod:`evalspec.results.readers`, and turns values into codes and numbers with
vectorised work on the *distinct* values (codes from Arrow's dictionary encoding, or
:func:`factorize` here), not per row, so a million-row file costs little more than reading
it. Anything that cannot be typed (an unknown candidate, an outcome that is not pass/fail,
a repeat that is not an integer, a missing case id, a list or object where one value
belongs, a timestamp outside the years 1-9999, an infinite score, a label longer than
:data:`~evalspec.limits.MAX_LABEL_CHARS`) is a located :class:`~evalspec.errors.Diagnostic`.
"""

from __future__ import annotations

import datetime as _dt
import math
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.labels import identifier_label as _label
from evalspec.limits import MAX_CASE_CELLS, MAX_LABEL_CHARS, MAX_SLICE_LEVELS
from evalspec.results.hints import OUTCOME_HINT, candidate_names_hint, column_guess, delimiter_problems
from evalspec.results.batches import Watch
from evalspec.results.arrow import arrow_numpy, arrow_strings, arrow_texts
from evalspec.results.readers import RawFile
from evalspec.results.values import CodedColumn, LazyCoded, LazyTexts, Texts, narrow_codes

__all__ = ["Tidy", "FileInfo", "build_table", "case_table_watch", "case_table_refusal", "located", "factorize", "missing_mask", "MAX_LISTED", "MAX_REPEAT",
           "MAX_ABS_SCORE", "plan_columns"]

#: At most this many rows are listed per finding; the rest are counted.
MAX_LISTED = 5

_TRUE = {"pass", "passed", "true", "t", "yes", "y", "c", "correct", "1", "1.0", "success", "ok"}
_FALSE = {"fail", "failed", "false", "f", "no", "n", "i", "incorrect", "0", "0.0", "failure"}
_MISSING = {"", "na", "nan", "null", "none"}
#: Repeat numbers are integers of at most this magnitude.
MAX_REPEAT = 1_000_000
#: Scores are finite numbers of at most this magnitude (sums of millions of them stay exact enough).
MAX_ABS_SCORE = 1e12
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
#: The type of :class:`Tidy`'s per-row codes and repeat numbers (see there).
CODE_TYPE = np.int32


@dataclass(frozen=True)
class FileInfo:
    """A results file's fingerprint for the claim."""

    path: str
    sha256: str
    rows: int
    format: str
    location: dict[str, Any] | None = None


@dataclass
class Tidy:
    """Typed results: parallel arrays over rows, codes into label lists.

    ``passed`` is 1.0/0.0 and NaN where the outcome is missing; ``score`` holds numeric
    scores (for ``outcome.type: score``) or equals ``passed``. ``cand`` indexes
    ``candidates`` (the plan's order); ``case`` indexes ``case_ids`` (sorted);
    ``cluster`` indexes ``cluster_ids`` or is ``None`` when the plan declares no cluster.
    ``raw`` keeps every column as read, for slices, flags and required metadata.

    ``cand``, ``case``, ``repeat`` and ``cluster`` are int32 (:data:`CODE_TYPE`: 4 bytes a row,
    not 8): every code fits, as case codes are fewer than :data:`~evalspec.limits.MAX_CASE_CELLS`
    and a repeat number is at most :data:`MAX_REPEAT` in size. NumPy keeps int32 in arithmetic
    with a Python integer (NEP 50), so cast to int64 before any product or sum that can pass
    2**31 (``cand.astype(np.int64) * n_cases``).
    """

    files: list[FileInfo]
    displays: list[str]
    units: list[str]
    candidates: list[str]
    cand: np.ndarray
    case: np.ndarray
    case_ids: np.ndarray
    repeat: np.ndarray
    passed: np.ndarray
    score: np.ndarray
    cluster: np.ndarray | None
    cluster_ids: np.ndarray | None
    version: np.ndarray | None
    timestamp: np.ndarray | None
    file_idx: np.ndarray
    line: np.ndarray
    raw: dict[str, np.ndarray] = field(default_factory=dict)
    time_range: tuple[_dt.datetime, _dt.datetime] | None = None

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.cand.shape[0])

    def subset(self, keep: np.ndarray) -> Tidy:
        """The rows where the boolean mask ``keep`` is true (labels kept)."""

        def take(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[keep]

        return Tidy(
            files=self.files, displays=self.displays, units=self.units, candidates=self.candidates,
            cand=self.cand[keep], case=self.case[keep], case_ids=self.case_ids, repeat=self.repeat[keep],
            passed=self.passed[keep], score=self.score[keep], cluster=take(self.cluster),
            cluster_ids=self.cluster_ids, version=take(self.version), timestamp=take(self.timestamp),
            file_idx=self.file_idx[keep], line=self.line[keep],
            raw={k: v[keep] for k, v in self.raw.items()}, time_range=self.time_range,
        )

    def where(self, i: int) -> tuple[str, int]:
        """``(file, line)`` of row ``i``."""
        return self.displays[int(self.file_idx[i])], int(self.line[i])


def located(tidy_or_files: Any, rows: np.ndarray, key: str | None, message: str, *, values: np.ndarray | None = None,
            hint: str | None = None) -> list[Diagnostic]:
    """Diagnostics for the first :data:`MAX_LISTED` of ``rows``, plus a count of the rest."""
    out: list[Diagnostic] = []
    rows = np.asarray(rows)
    for i in rows[:MAX_LISTED]:
        file, line = tidy_or_files.where(int(i))
        kw: dict[str, Any] = {}
        if values is not None:
            kw = {"got": values[int(i)], "has_got": True}
        out.append(Diagnostic(file=file, line=line, key=key, message=message, hint=hint, **kw))
    if rows.shape[0] > MAX_LISTED:
        file, _ = tidy_or_files.where(int(rows[0]))
        out.append(Diagnostic(file=file, message=f"... and {rows.shape[0] - MAX_LISTED} more rows like these ({key})"))
    return out


class _Concat:
    """Raw columns of several files concatenated, with row locations."""

    def __init__(self, raws: list[RawFile]) -> None:
        self.displays = [r.display for r in raws]
        self.units = [r.unit for r in raws]
        names: dict[str, None] = {}
        for r in raws:
            for k in r.columns:
                names.setdefault(k, None)
        self.present = {k: [k in r.columns for r in raws] for k in names}
        self.columns: dict[str, np.ndarray] = {}
        for k in names:
            parts = []
            lazy = any(isinstance(r.columns.get(k), LazyCoded) for r in raws)
            for r in raws:
                if k in r.columns:
                    parts.append(r.columns[k])
                elif lazy:  # (files read in batches: the column stays codes)
                    parts.append(LazyCoded(np.full(r.rows, -1, dtype=np.int8), np.zeros(0, dtype=object)))
                else:
                    parts.append(np.full(r.rows, None, dtype=object))
            self.columns[k] = concat_columns(parts)
        index_type = np.int8 if len(raws) < 2**7 else np.int16 if len(raws) < 2**15 else np.int32
        self.file_idx = np.concatenate([np.full(r.rows, j, dtype=index_type) for j, r in enumerate(raws)])
        self.line = raws[0].lines if len(raws) == 1 else np.concatenate([r.lines for r in raws])

    def where(self, i: int) -> tuple[str, int]:
        return self.displays[int(self.file_idx[i])], int(self.line[i])


def concat_columns(parts: list[np.ndarray]) -> np.ndarray:
    """One column from the same column of several files, keeping the readers' codes where every part has them.

    A partitioned dataset is many files; concatenating their coded columns into a plain
    object array would make typing them a per-value Python loop again. The merged codes
    are renumbered in first-seen order over the rows, so :func:`factorize` gives exactly
    what it gives for the plain concatenation (property-tested).
    """
    if len(parts) == 1:
        return parts[0]
    if not all(getattr(p, "codes", None) is not None for p in parts):
        return np.concatenate(parts)
    ucodes, merged = factorize(np.concatenate([np.array(p.uniques, dtype=np.object_) for p in parts]))
    if all(_first_seen_codes(p.codes, len(p.uniques)) for p in parts):
        return _merged_in_order(parts, ucodes, merged)
    pieces, offset = [], 0
    for p in parts:
        size = len(p.uniques)
        remap = np.append(ucodes[offset:offset + size], -1)  # code -1 (missing) stays -1
        part = p.codes.astype(np.int64)  # (narrow codes: size may not fit their type)
        pieces.append(remap[np.where(part >= 0, part, size)])
        offset += size
    codes = np.concatenate(pieces).astype(np.int64, copy=False)
    seen = codes >= 0
    used, first = np.unique(codes[seen], return_index=True)
    order = used[np.argsort(np.flatnonzero(seen)[first], kind="stable")]  # first-seen over the rows
    renumber = np.full(len(merged) + 1, -1, dtype=np.int64)
    renumber[order] = np.arange(order.size)
    uniques = np.empty(order.size, dtype=object)
    uniques[:] = list(merged[order]) if order.size else []
    out = renumber[np.where(seen, codes, len(merged))]
    if any(isinstance(p, LazyCoded) for p in parts):  # read in batches: stays codes
        values = uniques.tolist()
        if values and all(v.__class__ is str for v in values):
            uniques = Texts.of(uniques, arrow_strings(values))  # typed in C later
        return LazyCoded(narrow_codes(out, order.size), uniques)
    return CodedColumn.of(out, uniques, distinct=True)


def _first_seen_codes(codes: np.ndarray, n_values: int) -> bool:
    """Whether ``codes`` (-1 = missing) number ``n_values`` values in the order they first appear, each used.

    What every reader's codes are (:func:`factorize`, Arrow's dictionaries, the batch reader's
    merge). Then the largest code so far grows by exactly one at each new value; comparisons
    only, so narrow codes cannot overflow.
    """
    if codes.shape[0] == 0:
        return n_values == 0
    top = np.maximum.accumulate(codes)
    steps = top[np.flatnonzero(top[1:] != top[:-1]) + 1].astype(np.int64)
    start = int(top[0])
    return (start in (-1, 0) and int(top[-1]) == n_values - 1
            and bool(np.array_equal(steps, np.arange(start + 1, start + 1 + steps.shape[0]))))


def _merged_in_order(parts: list[Any], ucodes: np.ndarray, merged: np.ndarray) -> np.ndarray:
    """:func:`concat_columns` of parts whose codes are in first-seen order, in time linear in the rows.

    The values then first appear over the rows in the order of the parts' uniques laid end to
    end, which is the order :func:`factorize` numbered ``merged`` in: no renumbering (the general
    path finds that order by sorting every row's code).
    """
    dtype = narrow_codes(np.zeros(0, dtype=np.int64), len(merged)).dtype
    out = np.empty(sum(len(p) for p in parts), dtype=dtype)
    at = offset = 0
    for p in parts:
        size = len(p.uniques)
        remap = np.append(ucodes[offset:offset + size], -1).astype(dtype)  # code -1 (missing) stays -1
        codes = p.codes
        out[at:at + len(codes)] = remap[codes]  # (remap's last entry: code -1 indexes it)
        at += len(codes)
        offset += size
    uniques = np.empty(len(merged), dtype=object)
    uniques[:] = list(merged)
    if any(isinstance(p, LazyCoded) for p in parts):  # read in batches: stays codes
        values = uniques.tolist()
        if values and all(v.__class__ is str for v in values):
            uniques = Texts.of(uniques, arrow_strings(values))  # typed in C later
        return LazyCoded(out, uniques)
    return CodedColumn.of(out.astype(np.int64), uniques, distinct=True)


def _factorize(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` of an object column; code -1 = None/NaN (a reader's codes are reused)."""
    return factorize(col)


def factorize(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` of an object column in first-seen order; code -1 = None/NaN.

    Values of different types stay distinct (``1``, ``True`` and ``"1"`` are three values);
    unhashable values (a nested list or object) are compared by their text, so they are
    counted and located rather than crashing. Homogeneous columns go through Arrow.
    """

    if getattr(col, "codes", None) is not None:  # a CodedColumn straight from a reader
        return col.codes, col.uniques
    n = col.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    values = col.tolist()
    arr = None  # many texts go through Arrow; a few are cheaper in Python than importing it
    if arrow_pays(n) and all(v is None or v.__class__ is str for v in values):
        arr = arrow_strings(values)
    if arr is not None:
        enc = arr.dictionary_encode()
        uniques = np.empty(len(enc.dictionary), dtype=object)
        uniques[:] = enc.dictionary.to_pylist()
        return arrow_numpy(enc.indices, fill=-1).astype(np.int64, copy=False), uniques
    index: dict[Any, int] = {}
    firsts: list[Any] = []
    codes = np.empty(n, dtype=np.int64)
    for i, v in enumerate(values):
        if v is None or (v.__class__ is float and v != v):
            codes[i] = -1
            continue
        key = (v.__class__, repr(v)) if v.__class__ in (list, dict) else (v.__class__, v)
        j = index.get(key)
        if j is None:
            j = index[key] = len(firsts)
            firsts.append(v)
        codes[i] = j
    uniques = np.empty(len(firsts), dtype=object)
    uniques[:] = firsts
    return codes, uniques


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in _MISSING


def arrow_pays(n: int) -> bool:
    """Whether ``n`` values are typed faster by Arrow than one by one in Python.

    Above 2,000 values when pyarrow is loaded already (a file Arrow read); a small file read by
    the exact path leaves it unloaded, and then only 200,000 values pay for its import (about
    0.1 s). Both ways give the same answer (property-tested); only the time differs.
    """
    return n > 2000 and ("pyarrow" in sys.modules or n > 200_000)


def missing_mask(uniques: np.ndarray) -> np.ndarray:
    """:func:`_is_missing` of each of ``uniques`` (distinct values), as a boolean array."""
    if arrow_pays(len(uniques)):  # many distinct texts (ids, times): ask Arrow, in C
        import pyarrow.compute as pc

        arr = arrow_texts(uniques)
        if arr is not None:
            norm = pc.utf8_lower(pc.utf8_trim_whitespace(arr))
            return arrow_numpy(pc.is_in(norm, value_set=arrow_strings(sorted(_MISSING))), fill=True)
    miss = _MISSING
    return np.fromiter(
        (v is None or (v.__class__ is float and v != v) or (v.__class__ is str and (not v or v.strip().lower() in miss))
         for v in uniques.tolist()), dtype=bool, count=len(uniques))


def _nested(value: Any) -> bool:
    return isinstance(value, (list, dict))


#: Every character ``str.strip()`` removes (``str.isspace``), for Arrow's regular expressions.
PY_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                 "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _plain_texts(uniques: np.ndarray, edges: Any = None) -> Any:
    """The Arrow form of distinct texts none of which ``_label`` changes (no space at either end), or None
    (``edges``: their :func:`_edge_bytes`, when known)."""
    arr = getattr(uniques, "arrow", None)
    if arr is None or len(arr) <= 2000:
        return None
    import pyarrow.compute as pc

    from evalspec.results.values import positions

    first, last, size = edges if edges is not None else _edge_bytes(arr)
    if not (_none_in(first, _ASCII_SPACE) and _none_in(last, _ASCII_SPACE)) and np.any(
            _ASCII_SPACE[first] | _ASCII_SPACE[last]):  # (an ASCII byte at an end is a whole character)
        return None
    if _none_in(first, _NON_ASCII_SPACE_LEAD) and _none_in(last, _NON_ASCII_SPACE_END) and size.all():
        maybe = np.zeros(0, dtype=np.int64)  # (no text begins or ends with a byte of a space: none to ask)
    else:
        maybe = np.flatnonzero(_NON_ASCII_SPACE_LEAD[first] | _NON_ASCII_SPACE_END[last] | (size == 0))
    if maybe.size:  # texts that may begin or end with a space beyond ASCII: asked exactly
        space = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in PY_WHITESPACE) + "]"
        edged = pc.match_substring_regex(arr.take(positions(maybe)), f"^{space}|{space}$")
        if pc.any(edged).as_py():
            return None
    return arr


def _none_in(values: np.ndarray, table: np.ndarray) -> bool:
    """Whether no byte of ``values`` (uint8) is one ``table`` (256 flags) flags, told from their range where no
    byte in it is flagged (case ids: letters and digits), without a lookup of each; False: not told so."""
    return not values.size or not table[int(values.min()):int(values.max()) + 1].any()


def _byte_set(values: Any) -> np.ndarray:
    out = np.zeros(256, dtype=bool)
    out[list(values)] = True
    return out


#: First or last bytes of a text: a Python space in ASCII (``str.isspace``), a byte that begins a space
#: beyond ASCII in UTF-8, a byte that ends one (the texts with either are looked at whole).
_ASCII_SPACE = _byte_set(ord(c) for c in PY_WHITESPACE if ord(c) < 128)
_NON_ASCII_SPACE_LEAD = _byte_set(c.encode()[0] for c in PY_WHITESPACE if ord(c) >= 128)
_NON_ASCII_SPACE_END = _byte_set(c.encode()[-1] for c in PY_WHITESPACE if ord(c) >= 128)


def _edge_bytes(arr: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first and last byte of each text of ``arr`` (an Arrow string array, no nulls; 0 for an empty
    text) and its length in bytes, read from Arrow's buffers."""
    import pyarrow as pa

    wide = pa.types.is_large_string(arr.type)
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64 if wide else np.int32, count=len(arr) + arr.offset + 1)
    offsets = offsets[arr.offset:]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None and data_buf.size else np.zeros(1, np.uint8)
    size = np.diff(offsets)  # (the offsets' own type: four bytes a text for Arrow's string)
    if size.size and int(size.min()) > 0:  # no empty text (case ids): each one's first and last byte read directly
        return data[offsets[:-1]], data[offsets[1:] - 1], size
    offsets = offsets.astype(np.int64)
    start, end = offsets[:-1], offsets[1:]
    size = end - start
    some = size > 0
    first = np.where(some, data[np.minimum(start, data.size - 1)], 0)
    last = np.where(some, data[np.clip(end - 1, 0, data.size - 1)], 0)
    return first, last, size


def _missing_texts(arr: Any, uniques: np.ndarray, edges: Any = None) -> np.ndarray:
    """:func:`missing_mask` of distinct texts that have no space at either end (``_plain_texts``' ``arr``).

    A text of more than 4 bytes whose first and last bytes are printable ASCII is no missing-value
    word (each is at most 4 ASCII letters, and no other character lowers to one of theirs): only
    the others are asked.
    """
    first, last, size = edges if edges is not None else _edge_bytes(arr)
    printable = np.zeros(256, dtype=bool)
    printable[0x21:0x7F] = True
    short = max(map(len, _MISSING))
    if size.size and int(size.min()) > short and _none_in(first, ~printable) and _none_in(last, ~printable):
        maybe = np.zeros(0, dtype=np.int64)  # (every text long, between printable bytes: none to ask)
    else:
        maybe = np.flatnonzero((size <= short) | ~printable[first] | ~printable[last])
    out = np.zeros(len(arr), dtype=bool)
    if maybe.size:
        asked = uniques[maybe] if isinstance(uniques, LazyTexts) else np.asarray(uniques).view(np.ndarray)[maybe]
        out[maybe] = missing_mask(asked)
    return out


def _sorted_order(arr: Any) -> np.ndarray | None:
    """The positions of distinct texts ``arr`` in UTF-8 byte order (code point order); None when they are in
    that order already (no sort, and no positions made)."""
    import pyarrow.compute as pc

    from evalspec.results.arrow import arrow_numpy

    n = len(arr)
    if n < 2 or pc.all(pc.greater(arr.slice(1), arr.slice(0, n - 1))).as_py():
        return None
    return arrow_numpy(pc.sort_indices(arr)).astype(np.int64)


def _coded_texts(col: np.ndarray) -> tuple[np.ndarray, Any]:
    """``(codes, uniques)`` of a column, as :func:`factorize`, its uniques a :class:`LazyTexts` (no Python object
    made) where a reader holds them in Arrow."""
    lazy = col.lazy_texts() if isinstance(col, LazyCoded) else None
    return (col.codes, lazy) if lazy is not None else _factorize(col)


def _labels(col: np.ndarray, dtype: Any = np.int64, lazy: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, sorted labels, missing mask)`` of an identifier column; the codes are of ``dtype`` (None: where the
    column's own codes are the labels' codes, those themselves, read only, in their type; else int64).

    ``lazy``: many distinct texts that are their own labels, held in Arrow by the reader, are
    given as :class:`LazyTexts` (each made a Python ``str`` where read: a case table's case ids).
    """
    own = dtype is None
    dtype = np.int64 if own else dtype
    codes, uniques = _coded_texts(col) if lazy else _factorize(col)
    if isinstance(uniques, LazyTexts) and len(uniques) <= 2000:  # (few: as objects, as the other paths give)
        codes, uniques = _factorize(col)
    arr = getattr(uniques, "arrow", None)
    edges = _edge_bytes(arr) if arr is not None and len(arr) > 2000 else None  # (read once for both checks)
    arr = _plain_texts(uniques, edges)
    if arr is None and isinstance(uniques, LazyTexts):  # (labels to make one by one: from the objects)
        codes, uniques = _factorize(col)
    if arr is not None:  # many distinct texts that are their own labels: sorted by Arrow, in C
        umissing = _missing_texts(arr, uniques, edges)
        order = _sorted_order(arr)
        held = isinstance(uniques, LazyTexts)
        if order is None and not umissing.any():  # in order, none missing
            out = codes.astype(dtype) if not own else codes.view()
            out.flags.writeable = out.flags.writeable and not own
            return out, uniques if held else np.asarray(uniques).view(np.ndarray), out < 0  # type: ignore[return-value]
        if order is None:
            order = np.arange(len(arr), dtype=np.int64)
        if umissing.any():
            order = order[~umissing[order]]
        rank = np.full(len(uniques) + 1, -1, dtype=dtype)
        rank[order] = np.arange(len(order), dtype=dtype)
        out = rank[codes]
        if held:
            from evalspec.results.values import positions

            return out, LazyTexts(arr.take(positions(order))), out < 0  # type: ignore[return-value]
        return out, np.asarray(uniques).view(np.ndarray)[order], out < 0
    ulabels = np.empty(len(uniques), dtype=object)
    ulabels[:] = [_label(u) for u in uniques.tolist()]
    umissing = missing_mask(uniques)
    good = ulabels[~umissing] if len(ulabels) else ulabels
    sorted_labels = np.array(sorted(set(good.tolist())), dtype=object)
    index = {lab: j for j, lab in enumerate(sorted_labels.tolist())}
    remap = np.array([(-1 if m else index[lab]) for lab, m in zip(ulabels.tolist(), umissing.tolist())] + [-1],
                     dtype=dtype)
    out = remap[codes]  # code -1 picks the trailing -1
    return out, sorted_labels, out < 0


def _parse_binary(value: Any) -> float | None:
    """1.0 / 0.0 for a pass/fail value, NaN when missing, ``None`` when unreadable."""
    if _is_missing(value):
        return math.nan
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value) if value in (0, 1) else None
    if isinstance(value, str):
        s = value.strip().lower()
        if s in _TRUE:
            return 1.0
        if s in _FALSE:
            return 0.0
    return None


def _parse_score(value: Any) -> float | None:
    """A finite number of magnitude at most :data:`MAX_ABS_SCORE`; NaN when missing; None when unreadable.

    Text must be a plain decimal number (``"8.5"``); ``"8,5"``, ``"n/a"`` or ``"high"`` are
    unreadable, never dropped silently.
    """
    if _is_missing(value):
        return math.nan
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            v = float(value)
        except OverflowError:
            return None
    elif isinstance(value, str):
        try:
            v = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return v if math.isfinite(v) and abs(v) <= MAX_ABS_SCORE else None


def _parse_repeat(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        s = value.strip()
        body = s[1:] if s[:1] in "+-" else s
        if body.isascii() and body.isdigit() and len(body) <= 30:
            return int(s)
    return None


def parse_timestamp(value: Any) -> _dt.datetime | None:
    """An ISO 8601 time as an aware UTC datetime (naive times are taken as UTC).

    None when the text is no ISO 8601 time or the time falls outside the years 1-9999 in UTC.
    """
    if not isinstance(value, str):
        return None
    try:
        t = _dt.datetime.fromisoformat(value.strip())
        if t.tzinfo is None:
            return t.replace(tzinfo=_dt.timezone.utc)
        return t.astimezone(_dt.timezone.utc)
    except (ValueError, OverflowError):
        return None


def _micros(t: _dt.datetime) -> int:
    return (t - _EPOCH) // _dt.timedelta(microseconds=1)


def parse_times(texts: list[Any]) -> list[int | None]:
    """Microseconds since 1970 UTC of each value, as :func:`parse_timestamp` reads it (None: unreadable)."""
    values = np.empty(len(texts), dtype=object)
    for i, text in enumerate(texts):  # (a slice assignment would unpack nested lists)
        values[i] = text
    return [None if m == _NO_TIME else m for m in times_micros(values).tolist()]


def times_micros(values: np.ndarray) -> np.ndarray:
    """:func:`parse_times` of an object array, as int64 microseconds (``_NO_TIME``: unreadable).

    The common shape ``YYYY-MM-DDTHH:MM:SSZ`` is read in C (:func:`_iso_z_micros`) where it
    names a day of the calendar and a time of day (2026-02-30 and 24:00:00 do not); everything
    else is parsed by :func:`parse_timestamp`, so both give the same answer on every input.
    """
    out = np.full(len(values), _NO_TIME, dtype=np.int64)
    todo = range(len(values))
    if arrow_pays(len(values)):
        arr = arrow_texts(values)
        if arr is not None:
            same, micros = _iso_z_micros(arr)
            out[same] = micros
            todo = np.flatnonzero(~same).tolist()
    for i in todo:
        t = parse_timestamp(values[i])
        if t is not None:
            out[i] = _micros(t)
    return out


#: ``YYYY-MM-DDTHH:MM:SSZ``: the byte each of the 20 positions holds (0: a digit, 0-9).
_ISO_Z_BYTES = np.frombuffer(b"0000-00-00T00:00:00Z", dtype=np.uint8) * (
    np.frombuffer(b"0000-00-00T00:00:00Z", dtype=np.uint8) != ord("0"))
_MONTH_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)


def _iso_z_micros(arr: Any) -> tuple[np.ndarray, np.ndarray]:
    """Which texts of ``arr`` (Arrow strings) are ``YYYY-MM-DDTHH:MM:SSZ`` times :func:`parse_timestamp` reads,
    and those times' microseconds since 1970 (in their order).

    Read from the texts' bytes: a text of that shape is 20 bytes, each an ASCII digit or the
    separator of its position (the test a regular expression ``^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$``
    makes, made on every text's bytes at once; property-tested against it), then years 0001-9999,
    months 1-12, the month's days (29 February in leap years), hours 0-23, minutes and seconds 0-59
    (Python's ``fromisoformat`` refuses a 60th second). Days are counted from the civil date
    (Hinnant's ``days_from_civil``).
    """
    from evalspec.results.text_index import text_buffers

    offsets, data = text_buffers(arr)
    sized = np.diff(offsets) == 20
    if arr.null_count:
        import pyarrow.compute as pc

        sized &= arrow_numpy(pc.is_valid(arr), fill=False)
    at = np.flatnonzero(sized)
    if at.size == len(arr):  # (every text 20 bytes long: they lie one after another)
        start = int(offsets[0])
        raw = data[start:start + 20 * at.size].reshape(-1, 20)
    else:
        raw = data[offsets[at][:, None] + np.arange(20)]
    digits, seps = raw[:, _ISO_Z_BYTES == 0], raw[:, _ISO_Z_BYTES != 0]
    shaped = ((digits >= ord("0")) & (digits <= ord("9"))).all(axis=1) & (seps == _ISO_Z_BYTES[_ISO_Z_BYTES != 0]).all(
        axis=1)
    at = at[shaped]
    d = raw[shaped].astype(np.int64) - ord("0")

    def num(*cols: int) -> np.ndarray:
        out = np.zeros(at.size, dtype=np.int64)
        for c in cols:
            out = out * 10 + d[:, c]
        return out

    y, m, day = num(0, 1, 2, 3), num(5, 6), num(8, 9)
    hh, mm, ss = num(11, 12), num(14, 15), num(17, 18)
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    month_days = _MONTH_DAYS[np.clip(m - 1, 0, 11)] + (leap & (m == 2))
    ok = (y >= 1) & (m >= 1) & (m <= 12) & (day >= 1) & (day <= month_days) & (hh <= 23) & (mm <= 59) & (ss <= 59)
    yy = y - (m <= 2)
    era = yy // 400
    yoe = yy - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    same = np.zeros(len(arr), dtype=bool)
    same[at[ok]] = True
    return same, ((days * 86400 + hh * 3600 + mm * 60 + ss) * 1_000_000)[ok]


def _map_unique(col: np.ndarray, fn: Any, dtype: Any, bad: Any) -> tuple[np.ndarray, np.ndarray]:
    """Apply ``fn`` to the distinct values of ``col``; ``(mapped, unreadable mask)``."""
    codes, uniques = _factorize(col)
    mapped = [fn(u) for u in uniques]
    na = fn(None)
    ok = np.array([m is not None for m in mapped] + [na is not None], dtype=bool)
    vals = np.array([bad if m is None else m for m in mapped] + [bad if na is None else na], dtype=dtype)
    return vals[codes], ~ok[codes]


def build_table(raws: list[RawFile], plan: Any, plan_diagnostic: Any = None) -> Tidy:
    """Type the raw columns against ``plan``'s roles; raise all located problems at once.

    ``plan_diagnostic(key, message, hint=...)``, when given, makes a diagnostic at the plan
    line of ``key`` (a column the plan names but the results lack points at the plan). Each
    role is typed by its own function below, in the order its problems are listed.
    """
    cat = _Concat(raws)
    roles = role_columns(cat, raws, plan, plan_diagnostic)
    problems: list[Diagnostic] = []
    cols = plan.data.columns
    cand = typed_candidates(cat, roles.candidate, plan, problems)
    case, case_ids = typed_cases(cat, roles.case, plan, problems)
    if len(case_ids) * max(1, len(plan.candidates)) > MAX_CASE_CELLS:
        _, firsts = np.unique(case[case >= 0], return_index=True)
        row = int(np.flatnonzero(case >= 0)[np.sort(firsts)[MAX_CASE_CELLS // max(1, len(plan.candidates))]])
        raise case_table_refusal(*cat.where(row), "line" if cat.units[int(cat.file_idx[row])] == "line" else "row",
                                 plan)
    repeat = typed_repeats(cat, roles.repeat, cols.repeat, problems)
    passed, score = typed_outcomes(cat, roles.outcome, plan, problems)
    cluster, cluster_ids = typed_clusters(cat, roles.cluster, plan, problems)
    version = None if roles.version is None else typed_versions(roles.version)
    timestamp, time_range = typed_timestamps(cat, roles.timestamp, cols.timestamp, problems)
    problems += slice_problems(cat, plan, plan_diagnostic)
    for a in plan.analyses:  # numeric columns the analyses name (a `score` parameter)
        name = getattr(a, "score", None)
        if isinstance(name, str) and name in cat.columns:
            problems += score_column(cat, cat.columns[name], name)[1]
    if problems:
        raise InputError(f"{len(problems)} problem(s) in the results", problems)
    files = [FileInfo(path=r.display, sha256=r.sha256, rows=r.rows, format=r.format, location=r.location) for r in raws]
    return Tidy(
        files=files, displays=cat.displays, units=cat.units, candidates=list(plan.candidates), cand=cand,
        case=case, case_ids=case_ids, repeat=repeat, passed=passed, score=score, cluster=cluster,
        cluster_ids=cluster_ids, version=version, timestamp=timestamp, file_idx=cat.file_idx, line=cat.line,
        raw=cat.columns, time_range=time_range,
    )


def case_table_watch(plan: Any) -> Watch:
    """A watch that refuses a results set whose case table exceeds :data:`~evalspec.limits.MAX_CASE_CELLS`.

    Given to the batch readers (:func:`evalspec.results.readers.read_file`), it stops the read
    at the first row of the case that is one too many (distinct case ids as written, over
    every file), before the rest of the input is read.
    """
    def refuse(display: str, line: int, unit: str) -> InputError:
        return case_table_refusal(display, line, unit, plan)

    return Watch(column=plan.units.case, limit=MAX_CASE_CELLS // max(1, len(plan.candidates)), refuse=refuse)


def case_table_refusal(display: str, line: int, unit: str, plan: Any) -> InputError:
    """The located refusal of a case table larger than :data:`~evalspec.limits.MAX_CASE_CELLS`."""
    n = max(1, len(plan.candidates))
    message = (f"this row names case {MAX_CASE_CELLS // n + 1:,}: {n} candidate(s) x more than "
               f"{MAX_CASE_CELLS // n:,} cases is more than the {MAX_CASE_CELLS:,} candidate x case cells evalspec "
               "analyses in one run")
    where = f"{display}:{line}" if unit == "line" else f"{display} row {line}"
    return InputError(f"{where}: {message}", [Diagnostic(
        file=display, line=line, key=plan.units.case, message=message,
        hint="analyse a preregistered sample of the cases, or split the study into several plans")])


@dataclass(frozen=True)
class RoleColumns:
    """The raw column of each role the plan names (``None``: the plan names none, or it is optional)."""

    candidate: np.ndarray
    case: np.ndarray
    outcome: np.ndarray
    repeat: np.ndarray | None
    cluster: np.ndarray | None
    version: np.ndarray | None
    timestamp: np.ndarray | None


def role_columns(cat: Any, raws: list[RawFile], plan: Any, plan_diagnostic: Any = None) -> RoleColumns:
    """Each role's raw column; a column the plan names that a file lacks, a nested value or an overlong
    label is an error (all of them raised at once)."""
    cols = plan.data.columns
    problems: list[Diagnostic] = []
    found = names_hint(cat.columns)

    def need(name: str | None, role: str) -> np.ndarray | None:
        if name is None:
            return None
        if name not in cat.columns:
            message = f"the plan names column {name!r} for {role}, but no results file has it"
            hint = f"columns found in {', '.join(cat.displays)}: {found}; fix the plan's column name or the results"
            guess = column_guess(name, role, cat.columns)
            if guess is not None:
                hint = f"did you mean {guess!r}? " + hint
            if plan_diagnostic is not None:
                problems.append(plan_diagnostic(role, message, hint=hint))
            else:
                problems.append(Diagnostic(file=", ".join(cat.displays), key=role, message=message, hint=hint))
            return None
        missing_in = [d for d, p in zip(cat.displays, cat.present[name]) if not p]
        if missing_in:
            problems.append(
                Diagnostic(file=missing_in[0], key=role, message=f"this file has no column {name!r} ({role})",
                           hint="every results file must have the same columns")
            )
        return cat.columns[name]

    cand_col = need(cols.candidate, "data.columns.candidate")
    case_col = need(plan.units.case, "units.case")
    out_col = need(cols.outcome, "data.columns.outcome")
    cluster_col = need(plan.units.cluster, "units.cluster")
    version_col = need(cols.model_version, "data.columns.model_version")
    time_col = need(cols.timestamp, "data.columns.timestamp")
    if cols.repeat is not None and cols.repeat not in cat.columns and plan.attempts.repeats == 1:
        repeat_col = None  # one attempt per case: a repeat column is optional
    else:
        repeat_col = need(cols.repeat, "data.columns.repeat")
    if problems:
        raise InputError("the results do not have the columns the plan names",
                         delimiter_problems((r.display, r.format, list(r.columns)) for r in raws) + problems)
    assert cand_col is not None and case_col is not None and out_col is not None
    for name in plan_columns(plan):
        if name in cat.columns:
            problems += _nested_problems(cat, cat.columns[name], name)
    for name, key in ((cols.candidate, "candidate"), (plan.units.case, "case"), (plan.units.cluster, "cluster"),
                      (cols.model_version, "model version"), *((s.column, "slice") for s in plan.slices)):
        if name is not None and name in cat.columns:
            problems += _long_label_problems(cat, cat.columns[name], name, key)
    if problems:
        raise InputError(f"{len(problems)} problem(s) in the results", problems)
    return RoleColumns(candidate=cand_col, case=case_col, outcome=out_col, repeat=repeat_col, cluster=cluster_col,
                       version=version_col, timestamp=time_col)


def typed_candidates(cat: Any, col: np.ndarray, plan: Any, problems: list[Diagnostic]) -> np.ndarray:
    """Each row's index into the plan's candidates; an unknown or missing candidate is a problem at its row."""
    name = plan.data.columns.candidate
    names = list(plan.candidates)
    ccodes, cuniq = _factorize(col)
    ulab = [_label(u) for u in cuniq]
    remap = np.array([names.index(lab) if lab in names else -1 for lab in ulab] + [-2], dtype=CODE_TYPE)
    cand = remap[ccodes]
    unknown = np.flatnonzero(cand == -1)
    if unknown.size:
        seen = sorted({ulab[c] for c in ccodes[unknown]})
        problems += located(cat, unknown, name,
                            f"unknown candidate {', '.join(map(repr, seen))}; the plan's candidates are {', '.join(names)}",
                            values=col, hint=candidate_names_hint(seen, plan))
    nocand = np.flatnonzero(cand == -2)
    if nocand.size:
        problems += located(cat, nocand, name, "the row names no candidate", hint="fill in the candidate")
    return cand


def typed_cases(cat: Any, col: np.ndarray, plan: Any, problems: list[Diagnostic]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's index into the sorted case ids, and the ids; a row without a case id is a problem."""
    case, case_ids, case_missing = _labels(col, CODE_TYPE)
    if case_missing.any():
        problems += located(cat, np.flatnonzero(case_missing), plan.units.case, "the row has no case id",
                            values=col, hint="every row needs the id of its case")
    return case, case_ids


def typed_repeats(cat: Any, col: np.ndarray | None, name: str | None, problems: list[Diagnostic]) -> np.ndarray:
    """Each row's repeat number (1 on every row without a repeat column); a non-integer or huge one is a problem."""
    if col is None:
        return np.ones(cat.line.shape[0], dtype=CODE_TYPE)
    rcodes, runiq = _factorize(col)
    parsed = [_parse_repeat(u) for u in runiq.tolist()]
    big = np.array([p is not None and abs(p) > MAX_REPEAT for p in parsed] + [False], dtype=bool)
    bad = np.array([p is None for p in parsed] + [True], dtype=bool)
    repeat = np.array([-1 if p is None or abs(p) > MAX_REPEAT else p for p in parsed] + [-1], dtype=CODE_TYPE)[rcodes]
    # (a row is asked only when some value is bad, or missing: code -1; the usual column is not gathered again)
    if (bad[:-1].any() or (rcodes.size and int(rcodes.min()) < 0)) and bad[rcodes].any():
        problems += located(cat, np.flatnonzero(bad[rcodes]), name, "the repeat number is not an integer",
                            values=col, hint="number the repeats of a case 1, 2, 3, ...")
    if big[:-1].any() and big[rcodes].any():
        problems += located(cat, np.flatnonzero(big[rcodes]), name,
                            f"the repeat number is out of range (at most {MAX_REPEAT:,} in size)",
                            values=col, hint="number the repeats of a case 1, 2, 3, ...")
    return repeat


def typed_outcomes(cat: Any, col: np.ndarray, plan: Any, problems: list[Diagnostic]) -> tuple[np.ndarray, np.ndarray]:
    """``(passed, score)``: 1.0/0.0/NaN per row, and the score (``passed`` itself for pass/fail outcomes)."""
    name = plan.data.columns.outcome
    if plan.data.outcome.type == "score":
        score, found_problems = score_column(cat, col, name)
        problems += found_problems
        with np.errstate(invalid="ignore"):
            passed = np.where(np.isnan(score), np.nan, (score >= plan.data.outcome.pass_threshold).astype(np.float64))
        return passed, score
    passed, bad = _map_unique(col, _parse_binary, np.float64, np.nan)
    if bad.any():
        problems += located(cat, np.flatnonzero(bad), name, "the outcome is not a pass/fail value", values=col,
                            hint=OUTCOME_HINT)
    return passed, passed


def typed_clusters(cat: Any, col: np.ndarray | None, plan: Any,
                   problems: list[Diagnostic]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Each row's index into the sorted cluster ids, and the ids (``None`` without ``units.cluster``)."""
    if col is None:
        return None, None
    cluster, cluster_ids, cl_missing = _labels(col, CODE_TYPE)
    if cl_missing.any():
        problems += located(cat, np.flatnonzero(cl_missing), plan.units.cluster, "the row has no cluster id",
                            values=col, hint="every case needs its cluster (units.cluster)")
    return cluster, cluster_ids


def typed_versions(col: np.ndarray) -> np.ndarray:
    """The model version of each row as its text label (``None`` when missing), coded first-seen."""
    vcodes, vuniq = _factorize(col)
    labels = [None if m else _label(u) for u, m in zip(vuniq.tolist(), missing_mask(vuniq).tolist())]
    index: dict[str, int] = {}
    remap = np.array([-1 if lab is None else index.setdefault(lab, len(index)) for lab in labels] + [-1],
                     dtype=np.int32)
    uniq_labels = np.empty(len(index), dtype=object)
    uniq_labels[:] = list(index)
    if isinstance(col, LazyCoded):
        return LazyCoded(narrow_codes(remap[vcodes], len(index)), uniq_labels)
    return CodedColumn.of(remap[vcodes], uniq_labels, distinct=True)  # its codes travel with it


def typed_timestamps(cat: Any, col: np.ndarray | None, name: str | None, problems: list[Diagnostic]
                     ) -> tuple[np.ndarray | None, tuple[_dt.datetime, _dt.datetime] | None]:
    """Microseconds since 1970 UTC per row (``_NO_TIME``: missing) and the first and last time seen."""
    if col is None:
        return None, None
    tcodes, tuniq = _factorize(col)
    umicros = times_micros(tuniq)
    unreadable = umicros == _NO_TIME
    if unreadable.any():  # (a time read is not missing: only the unread ones are asked)
        unreadable &= ~missing_mask(tuniq)
    out_of_range = np.zeros(len(tuniq), dtype=bool)
    for i in np.flatnonzero(unreadable).tolist():
        out_of_range[i] = _iso_shaped(tuniq[i])
    bad_u = np.append(unreadable & ~out_of_range, False)
    far_u = np.append(out_of_range, False)
    if bad_u[tcodes].any():
        problems += located(cat, np.flatnonzero(bad_u[tcodes]), name,
                            "the timestamp is not an ISO 8601 time", values=col,
                            hint="write times like 2026-10-01T12:00:00Z")
    if far_u[tcodes].any():
        problems += located(cat, np.flatnonzero(far_u[tcodes]), name,
                            "the timestamp is outside the years 1 to 9999 once converted to UTC", values=col,
                            hint="write times like 2026-10-01T12:00:00Z")
    micros = np.append(umicros, _NO_TIME)
    good = micros[:-1][micros[:-1] != _NO_TIME]
    time_range = None
    if good.size:
        time_range = (_EPOCH + _dt.timedelta(microseconds=int(good.min())),
                      _EPOCH + _dt.timedelta(microseconds=int(good.max())))
    return micros[tcodes], time_range


def slice_problems(cat: Any, plan: Any, plan_diagnostic: Any = None) -> list[Diagnostic]:
    """A slice column with more than :data:`~evalspec.limits.MAX_SLICE_LEVELS` distinct values, at its plan line."""
    problems: list[Diagnostic] = []
    for j, sl in enumerate(plan.slices):
        if sl.column in cat.columns:
            scodes, suniq = _factorize(cat.columns[sl.column])
            levels = {_label(u) for u, m in zip(suniq.tolist(), missing_mask(suniq).tolist()) if not m}
            if len(levels) > MAX_SLICE_LEVELS:
                message = (f"slice column {sl.column!r} has {len(levels):,} distinct values, more than the "
                           f"{MAX_SLICE_LEVELS} a slice may have")
                hint = "slice by a coarser column (a topic, not an id)"
                problems.append(plan_diagnostic(f"slices[{j}].column", message, hint=hint) if plan_diagnostic
                                else Diagnostic(file=", ".join(cat.displays), key=f"slices[{j}].column",
                                                message=message, hint=hint))
    return problems


#: Missing time in :attr:`Tidy.timestamp` (microseconds since 1970 UTC).
_NO_TIME = np.iinfo(np.int64).min


def _iso_shaped(text: Any) -> bool:
    """Text shaped like an ISO 8601 date-time (so an unreadable one is out of range, not misspelt)."""
    if not isinstance(text, str):
        return False
    s = text.strip()
    return len(s) >= 10 and s[4:5] == "-" and s[7:8] == "-" and s[:4].isdigit() and s[5:7].isdigit() \
        and s[8:10].isdigit() and 1 <= int(s[5:7]) <= 12 and 1 <= int(s[8:10]) <= 31 \
        and (s[:4] in ("0000", "0001") or s[:4] == "9999")


def names_hint(names: Any, limit: int = 30) -> str:
    """Column names for a hint: at most ``limit`` plain names; never other file content.

    A "name" that is not a plain column name (longer than 40 characters, or with characters
    other than letters, digits, spaces and ``_ - . /``) is counted, not shown: the header
    of a file that is not a results table (a key, a password file) is not echoed.
    """
    names = [str(n) for n in names]
    plain = sorted(n for n in names if _plain_name(n))
    shown = plain[:limit]
    text = ", ".join(shown) or "none"
    if len(plain) > limit:
        text += f" (and {len(plain) - limit} more)"
    hidden = len(names) - len(plain)
    if hidden:
        text += f" (and {hidden} name{'s' if hidden != 1 else ''} not shown: not a plain column name)"
    return text


def _plain_name(name: str) -> bool:
    return 0 < len(name) <= 40 and all(ch.isalnum() or ch in " _-./" for ch in name) and name.isprintable()


def plan_columns(plan: Any) -> dict[str, str]:
    """Every results column the plan names, with the plan key that names it (first wins)."""
    out: dict[str, str] = {}
    cols = plan.data.columns
    for field_name in type(cols).model_fields:
        value = getattr(cols, field_name, None)
        if isinstance(value, str):
            out.setdefault(value, f"data.columns.{field_name}")
    for field_name in type(plan.units).model_fields:
        value = getattr(plan.units, field_name, None)
        if isinstance(value, str):
            out.setdefault(value, f"units.{field_name}")
    for j, sl in enumerate(plan.slices):
        out.setdefault(sl.column, f"slices[{j}].column")
    for i, a in enumerate(plan.analyses):
        for field_name in type(a).model_fields:
            value = getattr(a, field_name, None)
            values = value if isinstance(value, list) else [value]
            for v in values:
                if isinstance(v, str) and field_name not in ("kind", "label", "method", "correction", "compare"):
                    out.setdefault(v, f"analyses[{i}].{field_name}")
    for item in getattr(plan, "record", []) or []:
        if isinstance(item, str):
            out.setdefault(item, "record")
    return out


def _nested_problems(cat: Any, col: np.ndarray, name: str) -> list[Diagnostic]:
    if getattr(col, "codes", None) is not None:
        return []  # a column typed by Arrow holds plain values only
    codes, uniq = _factorize(col)
    bad_u = np.array([_nested(u) for u in uniq.tolist()] + [False], dtype=bool)
    if not bad_u.any():
        return []
    return located(cat, np.flatnonzero(bad_u[codes]), name, "a list or object where one value belongs",
                   values=col, hint="give this column one plain value (text, number or true/false) per row, or "
                   "flatten the nested value into its own column")


def _long_label_problems(cat: Any, col: np.ndarray, name: str, what: str) -> list[Diagnostic]:
    codes, uniq = _coded_texts(col)
    arr = getattr(uniq, "arrow", None)
    if arr is not None and len(arr) and (_max_bytes(arr) <= MAX_LABEL_CHARS or _max_length(arr) <= MAX_LABEL_CHARS):
        return []  # (stripping only shortens a label; a text has at most as many characters as bytes)
    bad_u = np.array([isinstance(u, str) and len(u.strip()) > MAX_LABEL_CHARS for u in uniq.tolist()] + [False],
                     dtype=bool)
    if not bad_u.any():
        return []
    return located(cat, np.flatnonzero(bad_u[codes]), name,
                   f"the {what} label is longer than the {MAX_LABEL_CHARS} characters evalspec accepts",
                   values=col, hint="use a short identifier; keep long text in a column the plan does not name")


def _max_bytes(arr: Any) -> int:
    """The longest text of ``arr`` in bytes (from Arrow's offsets: no text read)."""
    import pyarrow.compute as pc

    return int(pc.max(pc.binary_length(arr)).as_py() or 0)


def _max_length(arr: Any) -> int:
    import pyarrow.compute as pc

    return int(pc.max(pc.utf8_length(arr)).as_py() or 0)


def score_column(cat: Any, col: np.ndarray, name: str) -> tuple[np.ndarray, list[Diagnostic]]:
    """A numeric column as floats (NaN = missing) and located problems for every unreadable value.

    Text that is not a plain number (``"8,5"``, ``"n/a"``) and numbers that are infinite or
    larger than :data:`MAX_ABS_SCORE` are errors at their row: never dropped silently.
    """
    codes, uniq = _factorize(col)
    values = uniq.tolist()
    parsed = [_parse_score(u) for u in values]
    miss = missing_mask(uniq).tolist()
    numeric = [isinstance(u, (int, float)) and not isinstance(u, bool) for u in values]
    as_text = [p is None and not nm for p, nm in zip(parsed, numeric)]
    too_big = [p is None and nm for p, nm in zip(parsed, numeric)]
    out = np.array([math.nan if (p is None or m) else p for p, m in zip(parsed, miss)] + [math.nan],
                   dtype=np.float64)[codes]
    problems: list[Diagnostic] = []
    bad = np.array(as_text + [False], dtype=bool)[codes]
    if bad.any():
        problems += located(cat, np.flatnonzero(bad), name, "the score is not a number", values=col,
                            hint="scores must be numbers; leave missing outcomes empty (null)")
    big = np.array(too_big + [False], dtype=bool)[codes]
    if big.any():
        problems += located(cat, np.flatnonzero(big), name,
                            f"the score is infinite or larger than {MAX_ABS_SCORE:g} in size", values=col,
                            hint="scores must be finite numbers on a sensible scale; rescale them or leave a missing "
                            "score empty (null)")
    return out, problems
