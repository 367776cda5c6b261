"""The fixed-size state a streaming reduction keeps per candidate × case: three 64-bit masks, never rows.

For repeat numbers 0 to :data:`MAX_REPEAT_BIT`, bit ``r`` of a cell's ``present`` mask says the
attempt numbered ``r`` was seen, of ``passed`` that it passed, of ``missing`` that it has no
outcome. That is all the attempt rule and the checks read from attempt rows, exactly:

* the kept attempts are the lowest ``attempts.repeats`` set bits of ``present`` (what
  :func:`evalspec.results.checks.planned_repeats` keeps), the rest are extra attempts;
* a repeat bit that is already set is a duplicate attempt;
* passes, missing outcomes, the first (answered) outcome and the passes among the first ``k``
  are bit counts (:func:`numpy.bitwise_count`) of masked masks.

A case attribute (a slice column, the critical flag) keeps, per cell, the code of its
lowest-numbered attempt with a value and the lowest and highest code seen, so the case's value
and whether its kept attempts disagree follow exactly, or :func:`cell_attributes` says the
state cannot tell (extra attempts with other values than the kept ones), and the caller reads
the rows the exact way instead. ``tests/results/test_stream_state.py`` checks every count
against :func:`evalspec.results.case_reduce.reduce_rows`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_REPEAT_BIT", "AttributeState", "CellState", "Fallback", "lowest_bits", "lowest_bits_each",
           "rule_counts"]

#: Highest repeat number the masks hold (bit 63 of a 64-bit mask).
MAX_REPEAT_BIT = 63
_ONE = np.uint64(1)
_NONE_REP = 255  # no attempt with a value yet
_NO_LO = np.iinfo(np.int32).max  # (codes of one column's distinct values: fewer than 2**31)


class Fallback(Exception):
    """The streaming state cannot give the in-memory path's claim exactly: read the rows in memory.

    The message says why, in words for the person whose results are too large to read in memory.
    """

    def __init__(self, why: str, hint: str | None = None) -> None:
        super().__init__(why)
        self.hint = hint


def lowest_bits(masks: np.ndarray, n: int) -> np.ndarray:
    """The lowest ``n`` set bits of each mask (all of them where fewer are set)."""
    if not masks.size or int(np.bitwise_count(masks).max()) <= n:  # (no cell has extra attempts: all its bits)
        return masks.copy()
    out = np.zeros_like(masks)
    rest = masks.copy()
    for _ in range(n):
        if not rest.any():
            break
        low = rest & (~rest + _ONE)  # the lowest set bit (two's complement)
        out |= low
        rest ^= low
    return out


def lowest_bits_each(masks: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """The lowest ``limits[i]`` set bits of each ``masks[i]`` (all of them where fewer are set; none at 0)."""
    out = np.zeros_like(masks)
    rest = masks.copy()
    zero = np.uint64(0)
    for i in range(int(limits.max()) if limits.size else 0):
        low = rest & (~rest + _ONE)
        out |= np.where(limits > i, low, zero)
        rest ^= low
    return out


def _count(masks: np.ndarray) -> np.ndarray:
    return np.bitwise_count(masks).astype(np.int64)


@dataclass
class AttributeState:
    """One case attribute's per-cell state: the lowest repeat with a value, its code, lowest and highest code."""

    first_rep: np.ndarray
    first_code: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def empty(cls, shape: tuple[int, int]) -> AttributeState:
        return cls(np.full(shape, _NONE_REP, dtype=np.uint8), np.full(shape, -1, dtype=np.int32),
                   np.full(shape, _NO_LO, dtype=np.int32), np.full(shape, -1, dtype=np.int32))

    def grown(self, cap: int) -> AttributeState:
        return AttributeState(*(_pad(a, cap, fill) for a, fill in (
            (self.first_rep, _NONE_REP), (self.first_code, -1), (self.lo, _NO_LO), (self.hi, -1))))


def _pad(a: np.ndarray, cap: int, fill: int) -> np.ndarray:
    """``a`` with room for ``cap`` columns, the new ones ``fill`` (zeros from fresh pages: none written first)."""
    if fill == 0:
        out = np.zeros((a.shape[0], cap), dtype=a.dtype)
        out[:, :a.shape[1]] = a
        return out
    out = np.empty((a.shape[0], cap), dtype=a.dtype)
    out[:, :a.shape[1]] = a
    out[:, a.shape[1]:] = fill
    return out


class CellState:
    """Masks per candidate × case (cases numbered as first seen), grown as new cases arrive."""

    def __init__(self, n_cand: int, attributes: list[str]) -> None:
        self.n_cand = n_cand
        self.cap = 0
        shape = (n_cand, 0)
        self.present = np.zeros(shape, dtype=np.uint64)
        self.passed = np.zeros(shape, dtype=np.uint64)
        self.missing = np.zeros(shape, dtype=np.uint64)
        self.attrs = {name: AttributeState.empty(shape) for name in attributes}

    def grow(self, n_cases: int) -> None:
        """Room for ``n_cases`` cases."""
        if n_cases <= self.cap:
            return
        cap = max(n_cases, 2 * self.cap, 1024)
        self.present, self.passed, self.missing = (_pad(a, cap, 0) for a in (self.present, self.passed, self.missing))
        self.attrs = {name: a.grown(cap) for name, a in self.attrs.items()}
        self.cap = cap

    def add(self, cand: np.ndarray, case: np.ndarray, repeat: np.ndarray, passed: np.ndarray,
            attributes: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Add a batch of typed attempts (``repeat`` in 0..63); the rows that repeat an attempt seen before.

        ``attributes``: name -> (global code per row, whether the row has a value).
        """
        cell = cand.astype(np.int64) * self.cap + case
        key = cell * 64 + repeat
        again = np.zeros(key.shape[0], dtype=bool)
        if not key.size:
            return np.flatnonzero(again)
        order: np.ndarray | None = None
        if bool((key[1:] > key[:-1]).all()):  # rows in cell and repeat order (as results are often written)
            sk = key
        else:
            order = np.argsort(key, kind="stable")
            sk = key[order]
            again[order[1:][sk[1:] == sk[:-1]]] = True  # twice in this batch: the later row
        sc = sk >> 6
        bits = np.left_shift(_ONE, (sk & 63).astype(np.uint64))
        starts = np.r_[0, np.flatnonzero(sc[1:] != sc[:-1]) + 1]
        cells = sc[starts]
        p = passed if order is None else passed[order]
        flat_present = self.present.reshape(-1)
        seen = (flat_present[sc] & bits) != 0  # seen in an earlier batch
        again[np.flatnonzero(seen) if order is None else order[seen]] = True
        zero = np.uint64(0)
        flat_present[cells] |= np.bitwise_or.reduceat(bits, starts)
        self.passed.reshape(-1)[cells] |= np.bitwise_or.reduceat(np.where(p >= 1.0, bits, zero), starts)
        self.missing.reshape(-1)[cells] |= np.bitwise_or.reduceat(np.where(np.isnan(p), bits, zero), starts)
        reps = sk & 63
        for name, (codes, has) in attributes.items():
            if order is not None:
                codes, has = codes[order], has[order]
            self._attribute(self.attrs[name], sc, reps, codes, has, (starts, cells))
        return np.flatnonzero(again)

    def _attribute(self, a: AttributeState, sc: np.ndarray, reps: np.ndarray, codes: np.ndarray,
                   has: np.ndarray, runs: tuple[np.ndarray, np.ndarray]) -> None:
        """Fold in one attribute of a batch whose rows are in cell order (``codes``, ``has``: in that order too).

        ``runs``: where each cell's rows start in ``sc``, and the cells (those of every row with a value).
        """
        if has.all():
            code = codes.astype(np.int32, copy=False)
            starts, c = runs
            r, first = reps[starts].astype(np.uint8), code[starts]
        else:
            pos = np.flatnonzero(has)
            if not pos.size:
                return
            cells, rep, code = sc[pos], reps[pos], codes[pos].astype(np.int32)
            starts = np.r_[0, np.flatnonzero(cells[1:] != cells[:-1]) + 1]
            c = cells[starts]
            r, first = rep[starts].astype(np.uint8), code[starts]
        fr, fc = a.first_rep.reshape(-1), a.first_code.reshape(-1)
        better = r < fr[c]
        fr[c[better]], fc[c[better]] = r[better], first[better]
        lo, hi = a.lo.reshape(-1), a.hi.reshape(-1)
        lo[c] = np.minimum(lo[c], np.minimum.reduceat(code, starts))
        hi[c] = np.maximum(hi[c], np.maximum.reduceat(code, starts))

    def trimmed(self, n_cases: int, order: np.ndarray | None = None) -> CellState:
        """The state of the first ``n_cases`` cases, their columns in ``order`` (the sorted case ids; None: as
        they are, copied whole rather than gathered)."""
        def pick(a: np.ndarray) -> np.ndarray:
            return a[:, :n_cases].copy() if order is None else a[:, order]

        out = CellState.__new__(CellState)
        out.n_cand, out.cap = self.n_cand, n_cases
        out.present, out.passed, out.missing = (pick(a) for a in (self.present, self.passed, self.missing))
        out.attrs = {name: AttributeState(pick(a.first_rep), pick(a.first_code), pick(a.lo), pick(a.hi))
                     for name, a in self.attrs.items()}
        return out


def kept_masks(state: CellState, planned: int) -> np.ndarray:
    """The kept attempts of each cell: its lowest ``planned`` repeat numbers."""
    return lowest_bits(state.present, planned)


def rule_counts(state: CellState, kept: np.ndarray, names: list[str], k: int) -> dict[str, np.ndarray]:
    """The counts and rule columns of a case table (:func:`evalspec.plan.case_table.case_table_columns` names)."""
    passed, missing = state.passed, state.missing
    out: dict[str, np.ndarray] = {
        "attempts": _count(kept), "extra_attempts": _count(state.present) - _count(kept),
        "missing": _count(kept & missing), "passes": _count(kept & passed)}
    answered = kept & ~missing
    for name in names:
        if name == "first_outcome":
            out[name] = _first(kept, passed, missing)
        elif name == "first_answered_outcome":
            out[name] = _first(answered, passed, missing)
        elif name.startswith("passes_in_first_"):
            out[name] = _count(lowest_bits(kept, k) & passed)
        elif name.startswith("missing_in_first_"):
            out[name] = _count(lowest_bits(kept, k) & missing)
        elif name.startswith("answered_passes_in_first_"):
            out[name] = _count(lowest_bits(answered, k) & passed)
    return out


def _first(masks: np.ndarray, passed: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """The outcome of each mask's lowest attempt: 1.0, 0.0, NaN when it has none (or no attempt)."""
    low = masks & (~masks + _ONE)
    out = np.where((low & passed) != 0, 1.0, 0.0)
    out[((low & missing) != 0) | (masks == 0)] = np.nan
    return out


def cell_attributes(a: AttributeState, kept: np.ndarray, extra: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Per cell among its kept attempts: whether one has a value, the first one's code, lowest and highest code.

    None when the state cannot tell: a cell with extra attempts whose attempts hold different values
    (which of them are among the kept ones is not kept).
    """
    rep = a.first_rep.astype(np.uint64)
    has = (a.first_rep != _NONE_REP) & (((kept >> np.minimum(rep, np.uint64(63))) & _ONE) != 0)
    if (has & (extra > 0) & (a.lo != a.hi)).any():
        return None
    return has, a.first_code, a.lo, a.hi
