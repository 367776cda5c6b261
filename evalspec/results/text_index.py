"""Distinct texts numbered in first-seen order, found and added in C (NumPy, Arrow), never as Python objects.

:class:`TextIndex` is the hash table the record-batch reader
(:class:`~evalspec.results.batches.Distinct`) keeps for a text column across batches: each
batch's distinct texts (an Arrow string array) are looked up and the new ones appended, in
vectorised passes, so ten million distinct case ids cost no Python work per value. The texts
themselves are kept as one growing UTF-8 buffer: :meth:`TextIndex.arrow` is every text so far,
in the order first seen, as an Arrow array (no copy).

Open addressing with linear probing on a 64-bit hash of each text's bytes. A hash is only a
hint: a text is found only when its bytes equal the stored text's (Arrow compares them), so
two texts with the same hash stay two texts, and the numbering is exactly a Python dict's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalspec.results.values import positions

__all__ = ["TextIndex", "grown", "text_buffers", "text_hashes"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_ODD = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser of each 64-bit value (NumPy's unsigned arithmetic wraps, as it should)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def text_buffers(arr: Any) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (int64, ``len + 1``) and the UTF-8 bytes of an Arrow string array, without a copy."""
    import pyarrow as pa

    wide = pa.types.is_large_string(arr.type)
    _, obuf, dbuf = arr.buffers()
    offsets = np.frombuffer(obuf, dtype=np.int64 if wide else np.int32, count=len(arr) + 1,
                            offset=arr.offset * (8 if wide else 4)).astype(np.int64)
    data = np.frombuffer(dbuf, dtype=np.uint8) if dbuf is not None and dbuf.size else np.zeros(0, dtype=np.uint8)
    return offsets, data


#: Texts hashed in one pass (bounds the temporary arrays: a few bytes times the texts' bytes).
_CHUNK = 1 << 16


def text_hashes(arr: Any) -> np.ndarray:
    """A 64-bit hash of each text of an Arrow string array without nulls (equal texts, equal hashes)."""
    if len(arr) > _CHUNK:
        return np.concatenate([_hashes(arr.slice(i, _CHUNK)) for i in range(0, len(arr), _CHUNK)])
    return _hashes(arr)


def _hashes(arr: Any) -> np.ndarray:
    offsets, data = text_buffers(arr)
    n = len(offsets) - 1
    lens = np.diff(offsets)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    width = int(lens.max())
    h = _mix(lens.astype(np.uint64) + _ODD)
    if width == 0:
        return _mix(h)  # (the sum of no bytes is 0: what the other paths give an empty text)
    # a polynomial of the bytes: each byte (plus one) times ODD to the power of its place, modulo 2**64
    powers = np.cumprod(np.full(width, _ODD, dtype=np.uint64))  # (NumPy's unsigned arithmetic wraps)
    body = data[offsets[0]:offsets[-1]]
    if int(lens.min()) == width:  # texts of one length (padded ids): one row of bytes each
        block = body.reshape(n, width)
        sums = np.zeros(n, dtype=np.uint64)
        for j in range(width):  # (a column at a time: NumPy sums short rows slowly)
            sums += (block[:, j].astype(np.uint64) + np.uint64(1)) * powers[j]
        return _mix(h ^ sums)
    starts = offsets[:-1] - offsets[0]
    place = np.arange(body.size, dtype=np.int64) - np.repeat(starts, lens)
    terms = (body.astype(np.uint64) + np.uint64(1)) * powers[place]
    some = lens > 0
    sums = np.zeros(n, dtype=np.uint64)
    sums[some] = np.add.reduceat(terms, starts[some])
    return _mix(h ^ sums)


#: An empty slot of the table (a held slot is the text's hash's upper 32 bits, then its number plus one),
#: so that a new table is zeros (fresh pages from the system, not written first).
_EMPTY = np.uint64(0)
_LOW = np.uint64(0xFFFFFFFF)
_TOP = np.uint64(32)


class TextIndex:
    """Distinct texts in the order first added, each with its number (0, 1, ...); lookups and additions in C.

    Texts are hashed and put into the table only when a lookup needs them: a column read in
    one batch (or the last batch of a file) is stored, never hashed. The first texts added are
    kept as the Arrow array they came in until more come or a lookup needs the table (a column
    read in one batch is never copied).
    """

    def __init__(self) -> None:
        self._n = 0
        self._hashed = 0  # texts whose hash is in ``_hashes``
        self._placed = 0  # texts in the table
        self._slots = np.zeros(1 << 12, dtype=np.uint64)
        self._hashes = np.zeros(1 << 10, dtype=np.uint64)  # by number (to place them again when the table grows)
        self._offsets = np.zeros(1 << 10, dtype=np.int64)  # by number, one more than texts
        self._data = np.zeros(1 << 14, dtype=np.uint8)
        self._first: Any = None  # the first texts added, as Arrow gave them (not in the buffers yet)

    def __len__(self) -> int:
        return self._n

    def arrow(self) -> Any:
        """Every text so far, in the order first added, as an Arrow ``large_string`` array (a view: no copy)."""
        import pyarrow as pa

        if self._first is not None:  # (a cast to large_string shares the texts' bytes: no copy)
            first = self._first
            return first if pa.types.is_large_string(first.type) else first.cast(pa.large_string())
        n = self._n
        end = int(self._offsets[n])
        return pa.LargeStringArray.from_buffers(n, pa.py_buffer(self._offsets[:n + 1]), pa.py_buffer(self._data[:end]))

    def find(self, arr: Any) -> np.ndarray:
        """The number of each text of ``arr`` (an Arrow string array without nulls), -1 for one not added."""
        if not self._n:
            return np.full(len(arr), -1, dtype=np.int64)
        return self._find(arr, text_hashes(arr))

    def add(self, arr: Any) -> tuple[np.ndarray, np.ndarray]:
        """Add the texts of ``arr`` (distinct, no nulls) not added before, in their order.

        Returns each text's number and whether it was new (the new ones are numbered
        ``len(self)`` before the call onwards, in the order of ``arr``).
        """
        if not self._n:  # nothing to look up: kept as they are
            if len(arr):
                self._first, self._n = arr, len(arr)
            return np.arange(len(arr), dtype=np.int64), np.ones(len(arr), dtype=bool)
        h = text_hashes(arr)
        ids = self._find(arr, h)
        new = ids < 0
        k = int(np.count_nonzero(new))
        if k:
            fresh = np.flatnonzero(new) if k < len(arr) else None
            ids[new] = np.arange(self._n, self._n + k)
            self._append(arr if fresh is None else arr.take(positions(fresh)), h if fresh is None else h[fresh])
        return ids, new

    # -- the table ----------------------------------------------------------------------------
    def _find(self, arr: Any, h: np.ndarray) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        from evalspec.results.arrow import arrow_numpy

        out = np.full(h.size, -1, dtype=np.int64)
        if not self._n or not h.size:
            return out
        self._store_first()
        self._settle()
        if not pa.types.is_large_string(arr.type):
            arr = arr.cast(pa.large_string())
        stored = self.arrow()
        mask = self._slots.size - 1
        pending = np.arange(h.size)
        slot = (h & np.uint64(mask)).astype(np.int64)
        tag = h >> _TOP
        while pending.size:
            held = self._slots[slot]
            live = held != _EMPTY  # an empty slot ends the probe: the text is not there
            if not live.all():
                pending, slot, held = pending[live], slot[live], held[live]
            same = (held >> _TOP) == tag[pending]
            if same.any():  # the same hash: the same text only if the bytes are equal
                at, who = pending[same], (held[same] & _LOW).astype(np.int64) - 1
                equal = arrow_numpy(pc.equal(arr.take(positions(at)), stored.take(positions(who))))
                out[at[equal]] = who[equal]
                same[same] = equal
                pending, slot = pending[~same], slot[~same]
            slot = (slot + 1) & mask
        return out

    def _store_first(self) -> None:
        """Copy the first texts into the buffers (more texts come, or a lookup needs the table)."""
        if self._first is not None:
            first, self._first, self._n = self._first, None, 0
            self._append(first, None)

    def _append(self, arr: Any, h: np.ndarray | None) -> None:
        """Store the texts of ``arr`` (none stored yet) and, where given, their hashes."""
        self._store_first()
        k = len(arr)
        n = self._n
        offsets, data = text_buffers(arr)
        size = int(offsets[-1] - offsets[0])
        end = int(self._offsets[n])
        self._offsets = grown(self._offsets, n + k + 1)
        self._data = grown(self._data, end + size)
        self._offsets[n + 1:n + k + 1] = offsets[1:] - offsets[0] + end
        self._data[end:end + size] = data[offsets[0]:offsets[-1]]
        if h is not None and self._hashed == n:
            self._hashes = grown(self._hashes, n + k)
            self._hashes[n:n + k] = h
            self._hashed = n + k
        self._n = n + k

    def _settle(self) -> None:
        """Hash and place the texts stored since the last lookup (the table four times as big when half full)."""
        n = self._n
        if self._placed == n:
            return
        self._store_first()
        if self._hashed < n:
            self._hashes = grown(self._hashes, n)
            self._hashes[self._hashed:n] = text_hashes(self.arrow().slice(self._hashed))
            self._hashed = n
        if 2 * n > self._slots.size:
            slots = self._slots.size
            while 2 * n > slots:
                slots *= 4
            self._slots = np.zeros(slots, dtype=np.uint64)
            self._placed = 0
        self._place(np.arange(self._placed, n, dtype=np.uint64), self._hashes[self._placed:n])
        self._placed = n

    def _place(self, ids: np.ndarray, h: np.ndarray) -> None:
        """Put texts ``ids`` (none of them in the table yet) into empty slots, probing from their hashes."""
        mask = self._slots.size - 1
        slot = (h & np.uint64(mask)).astype(np.int64)
        held = ((h >> _TOP) << _TOP) | (ids + np.uint64(1))
        while held.size:
            free = self._slots[slot] == _EMPTY
            # of several texts that probe one free slot, one takes it (whichever NumPy wrote last: the
            # slot a text sits in never changes its number); the others probe on
            self._slots[slot[free]] = held[free]
            free[free] = self._slots[slot[free]] == held[free]
            held, slot = held[~free], (slot[~free] + 1) & mask


def grown(arr: np.ndarray, size: int) -> np.ndarray:
    """``arr``, or a copy twice as long or more, so that it holds ``size`` items."""
    if size <= arr.size:
        return arr
    out = np.zeros(max(size, 2 * arr.size), dtype=arr.dtype)
    out[:arr.size] = arr
    return out
