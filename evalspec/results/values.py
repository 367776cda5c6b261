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

__all__ = ["EXACT", "CodedColumn", "LazyCoded", "LazyNumbers", "LazyTexts", "Texts", "as_number", "narrow_codes", "positions", "repeated", "utf8", "value_key"]

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


def positions(idx: np.ndarray) -> Any:
    """``idx`` (integers) as an Arrow int64 array for ``take``, from its buffer: ``take`` of a NumPy array
    asks pyarrow to convert it, which imports pandas (half a second) to ask whether it is a pandas object."""
    import pyarrow as pa

    idx = np.ascontiguousarray(idx, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), idx.size, [None, pa.py_buffer(idx)])


def held_values(case_codes: np.ndarray, uniques: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``case_codes`` (-1: none) and ``uniques`` narrowed to the values some case holds, in their order.

    Where a case attribute differs between a case's rows, the case takes its first value, and a
    value seen only on rows whose cases took another is no case's: left in, a slice would list a
    group of no cases. A case table holds one value per candidate and case, so it cannot see such
    values at all; every input path narrows to the held values, and gives the same claim.
    """
    whole = not case_codes.size or int(case_codes.min()) >= 0  # (every case holds a value: none to leave out)
    if whole and len(uniques) <= 8:  # (a few values: each looked for, not counted)
        held = np.array([bool(np.any(case_codes == k)) for k in range(len(uniques))], dtype=bool)
    else:
        held = np.bincount(case_codes if whole else case_codes[case_codes >= 0], minlength=len(uniques)) > 0
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

    __slots__ = ("codes", "_uniques", "texts")
    dtype = np.dtype(object)
    ndim = 1

    def __init__(self, codes: np.ndarray, uniques: np.ndarray | None, texts: Any = None) -> None:
        self.codes = codes
        self._uniques = uniques
        self.texts = texts if uniques is None else None  # the distinct texts in Arrow, not yet made objects

    @classmethod
    def of_texts(cls, codes: np.ndarray, texts: Any) -> LazyCoded:
        """Codes into ``texts`` (distinct, an Arrow string array without nulls), made Python objects only when
        ``uniques`` is first read; :meth:`lazy_texts` reads them without (a case table's five million case ids)."""
        return cls(codes, None, texts)

    @property
    def uniques(self) -> np.ndarray:
        """The distinct values as an object array (of texts: a :class:`Texts`, made at the first reading)."""
        uniques = self._uniques
        if uniques is None:  # (two threads may both make them: the same values, either kept)
            texts: Any = self.texts
            values = np.empty(len(texts), dtype=object)
            values[:] = texts.to_pylist()
            uniques = self._uniques = Texts.of(values, self.texts) if len(values) else values
        return uniques

    def lazy_texts(self) -> LazyTexts | None:
        """The distinct texts as :class:`LazyTexts` (no Python object made) when held in Arrow, else None."""
        return None if self.texts is None else LazyTexts(self.texts)

    @property
    def shape(self) -> tuple[int]:
        """``(rows,)``."""
        return (len(self),)

    @property
    def size(self) -> int:
        """Number of rows."""
        return len(self)

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, (int, np.integer)):
            code = int(self.codes[key])
            if code < 0:
                return None
            return self.texts[code].as_py() if self.texts is not None else self.uniques[code]
        return LazyCoded(self.codes[key], self._uniques, self.texts)

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


class LazyNumbers(LazyCoded):
    """A column of integers (none missing) kept as NumPy numbers: a case table's counts, read as numbers.

    What the batch reader gives for a column its caller reads as whole numbers
    (:data:`evalspec.results.batches.NUMBERS`) when Arrow read it as integers without a null:
    ``numbers`` the values (read-only: Arrow's buffer itself, or one value broadcast where all are
    equal), ``lo`` and ``hi`` the least and largest. Anywhere else it reads as the
    :class:`LazyCoded` of the same values, which the reader's general path would have given
    (``coded``, made at the first asking: codes, uniques, a row's value, expanding), so code
    that does not know it reads it as before. ``tests/results/test_lazy_numbers.py`` holds the two
    equal.
    """

    __slots__ = ("numbers", "lo", "hi", "_coded", "_make")

    def __init__(self, numbers: np.ndarray, lo: int, hi: int, coded: Callable[[], LazyCoded]) -> None:
        self.numbers, self.lo, self.hi = numbers, lo, hi
        self._make: Callable[[], LazyCoded] = coded
        self._coded: LazyCoded | None = None

    def coded(self) -> LazyCoded:
        """The column as the general path's :class:`LazyCoded` (made once; two threads asking at once may both
        make it, the same values, and either is kept: the maker is never dropped while it may be called)."""
        made = self._coded
        if made is None:
            made = self._coded = self._make()
        return made

    @property
    def codes(self) -> np.ndarray:  # type: ignore[override]  # (LazyCoded's slots, via the general path's column)
        return self.coded().codes

    @property
    def _uniques(self) -> np.ndarray | None:  # type: ignore[override]
        return self.coded()._uniques

    @property
    def texts(self) -> Any:  # type: ignore[override]
        return None

    def __len__(self) -> int:  # (shape and size are LazyCoded's, through it)
        return int(self.numbers.shape[0])


class LazyTexts:
    """Texts held as an Arrow string array (no nulls), each made a Python ``str`` only where it is read.

    A case table's case ids: five million of them as Python strings took about 0.4 s to make,
    350 MB to hold and 0.1 s to free, for the few a run reads (located messages, failing
    critical cases, a paired claim's listed cases). It reads as the 1-D object array of ``str``
    it stands for wherever case ids are read: ``len``, a text by index (``ids[i]``), an object
    array for an index array, a mask or a slice (``ids[idx]``), and every text made at once by
    :func:`numpy.asarray`, :meth:`tolist` or iteration. It is never changed (no item is set).
    ``tests/results/test_lazy_texts.py`` holds it to the object array it stands for.
    """

    __slots__ = ("arrow",)
    dtype = np.dtype(object)
    ndim = 1

    def __init__(self, arrow: Any) -> None:
        self.arrow = arrow

    @property
    def shape(self) -> tuple[int]:
        return (len(self.arrow),)

    @property
    def size(self) -> int:
        return len(self.arrow)

    def __len__(self) -> int:
        return len(self.arrow)

    def __getitem__(self, key: Any) -> Any:
        n = len(self.arrow)
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            i = int(key)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for {n} texts")
            return self.arrow[i % n].as_py()
        if isinstance(key, slice):
            at = np.arange(n)[key]
        else:
            at = np.asarray(key)
            if at.dtype == bool:
                if at.shape != (n,):
                    raise IndexError(f"a mask of shape {at.shape} for {n} texts")
                at = np.flatnonzero(at)
            elif at.dtype.kind not in "iu" or at.ndim != 1:
                return np.asarray(self)[key]  # (anything else: as the object array reads it)
            elif at.size and (int(at.min()) < -n or int(at.max()) >= n):
                raise IndexError(f"an index out of bounds for {n} texts")
            else:
                at = np.where(at < 0, at + n, at)
        out = np.empty(at.size, dtype=object)
        out[:] = self.arrow.take(positions(at)).to_pylist()
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = np.empty(len(self.arrow), dtype=object)
        out[:] = self.arrow.to_pylist()
        return out if dtype is None else out.astype(dtype)

    def __iter__(self) -> Any:
        return iter(self.arrow.to_pylist())

    def tolist(self) -> list[Any]:
        """Every text, as a list of ``str``."""
        return self.arrow.to_pylist()

    def __reduce__(self) -> Any:  # pickles as the object array it stands for
        return np.asarray(self).__reduce__()
