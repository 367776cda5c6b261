"""What a value read from a results file is, whichever reader read it.

One definition of a number (:func:`number`: integral floats below 2**53 are ints, NaN is
missing) and the two column types readers hand on: :class:`CodedColumn` (an object column
that carries its factorization, so typing it later costs nothing) and :class:`Texts`
(distinct texts that carry their Arrow form).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from evalspec.errors import InputError

__all__ = ["EXACT", "CodedColumn", "LazyCoded", "Texts", "as_number", "narrow_codes", "repeated", "utf8", "value_key"]

#: Integral floats below this magnitude are ints (exactly representable in a double).
EXACT = 2**53


def as_number(value: Any) -> Any:
    """The one definition of a number: integral floats below 2**53 are ints, NaN is missing."""
    if value.__class__ is float:
        if value != value:
            return None
        if value.is_integer() and -EXACT < value < EXACT:
            return int(value)
    return value


def value_key(value: Any) -> tuple[type, Any]:
    return (value.__class__, value)


class Texts(np.ndarray):
    """Distinct texts as an object array that also carries them as an Arrow string array.

    The distinct values of a text column a reader dictionary-encoded in Arrow: typing them
    (missing values, times) asks Arrow, in C, without turning a million Python strings back
    into Arrow first. ``arrow`` is ``None`` on any array derived from it (a slice or a
    changed copy holds other values).
    """

    arrow: Any

    @classmethod
    def of(cls, values: np.ndarray, arrow: Any) -> np.ndarray:
        """``values`` (an object array of str) carrying ``arrow``, the same values in Arrow."""
        out = values.view(cls)
        out.arrow = arrow if arrow is not None and len(arrow) == len(values) and not arrow.null_count else None
        return out

    def __array_finalize__(self, obj: Any) -> None:
        self.arrow = None

    def __reduce__(self) -> Any:  # pickles as a plain object array
        return np.asarray(self).view(np.ndarray).__reduce__()


class CodedColumn(np.ndarray):
    """An object column that knows its factorization: ``col == uniques[codes]`` (code -1 = missing).

    Readers that dictionary-encode a column in Arrow return it as a ``CodedColumn``, so that
    typing it later (:func:`evalspec.results.table.factorize`) costs nothing. The codes
    travel with the array itself: a slice, a concatenation or a replaced column is a plain
    array again (no cache keyed by identity that could go stale).
    """

    codes: np.ndarray | None
    uniques: np.ndarray | None

    @classmethod
    def of(cls, codes: np.ndarray, uniques: np.ndarray, *, distinct: bool = False) -> np.ndarray:
        """``uniques[codes]`` (``None`` for -1) carrying its codes; ``distinct``: known distinct, none None."""
        values = [] if distinct else uniques.tolist()
        if not distinct and (None in values or len(set(map(value_key, values))) != len(values)):
            # inputs that read as one value ("1" and "1.0") share a code; those read as missing get -1
            index: dict[Any, int] = {}
            remap = np.full(len(values) + 1, -1, dtype=np.int32)
            kept: list[Any] = []
            for i, v in enumerate(values):
                if v is not None:
                    remap[i] = index.setdefault(value_key(v), len(kept))
                    if remap[i] == len(kept):
                        kept.append(v)
            codes = remap[codes]
            uniques = np.empty(len(kept), dtype=object)
            uniques[:] = kept
        coded = np.append(uniques, None)[codes].view(cls)
        coded.codes, coded.uniques = codes, uniques
        return coded

    def __array_finalize__(self, obj: Any) -> None:
        self.codes = None
        self.uniques = None

    def __reduce__(self) -> Any:  # pickles as a plain object array
        return np.asarray(self).view(np.ndarray).__reduce__()


def utf8(data: bytes, display: str, corrupt: Callable[[str, int, str], InputError]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise corrupt(display, line, "is not valid UTF-8") from None


def repeated(names: list[str]) -> list[str]:
    """The names given more than once, sorted (linear: ``list.count`` per name was quadratic in columns)."""
    from collections import Counter

    return sorted(n for n, c in Counter(names).items() if c > 1)


def narrow_codes(codes: np.ndarray, n_values: int) -> np.ndarray:
    """``codes`` (-1 = missing) in the smallest signed integer type that holds ``n_values`` codes."""
    dtype = np.int8 if n_values < 2**7 else np.int16 if n_values < 2**15 else np.int32
    return codes.astype(dtype, copy=False)


def held_values(case_codes: np.ndarray, uniques: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``case_codes`` (-1: none) and ``uniques`` narrowed to the values some case holds, in their order.

    Where a case attribute differs between a case's rows, the case takes its first value, and a
    value seen only on rows whose cases took another is no case's: left in, a slice would list a
    group of no cases. A case table holds one value per candidate and case, so it cannot see such
    values at all; every input path narrows to the held values, and gives the same claim.
    """
    held = np.bincount(case_codes[case_codes >= 0], minlength=len(uniques)) > 0
    if held.all():
        return case_codes, uniques
    remap = np.full(len(uniques) + 1, -1, dtype=np.int64)  # (code -1 reads the last slot)
    remap[np.flatnonzero(held)] = np.arange(int(held.sum()))
    return remap[case_codes], np.asarray(uniques, dtype=object)[held]


class LazyCoded:
    """A column held as codes into its distinct values (``value = uniques[code]``, -1 missing), never expanded.

    What a streamed reader (:mod:`evalspec.results.batches`) returns: one to four bytes a row
    instead of an object reference a row. It reads as a :class:`CodedColumn` wherever a
    column is read: ``.codes`` / ``.uniques`` (so factorizing it is free), ``len``, a row's
    value by index, another ``LazyCoded`` for a mask or an index array, and
    :func:`numpy.asarray` (or :meth:`copy`, for a column to change) expands it, for code that
    needs the object array. The uniques are distinct, in first-seen order, and never None.
    """

    __slots__ = ("codes", "uniques")
    dtype = np.dtype(object)
    ndim = 1

    def __init__(self, codes: np.ndarray, uniques: np.ndarray) -> None:
        self.codes = codes
        self.uniques = uniques

    @property
    def shape(self) -> tuple[int]:
        """``(rows,)``."""
        return (int(self.codes.shape[0]),)

    @property
    def size(self) -> int:
        """Number of rows."""
        return int(self.codes.shape[0])

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, (int, np.integer)):
            code = int(self.codes[key])
            return None if code < 0 else self.uniques[code]
        return LazyCoded(self.codes[key], self.uniques)

    def expand(self) -> np.ndarray:
        """The object array (a :class:`CodedColumn`, so its codes travel with it)."""
        return CodedColumn.of(self.codes, self.uniques, distinct=True)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.expand()
        return out if dtype is None else out.astype(dtype)

    def __iter__(self) -> Any:
        return iter(self.expand().tolist())

    def tolist(self) -> list[Any]:
        """The values as a list."""
        return self.expand().tolist()

    def copy(self) -> np.ndarray:
        """A changeable plain object array of the values (it carries no codes that a change would leave stale)."""
        return np.asarray(self.expand()).view(np.ndarray).copy()
