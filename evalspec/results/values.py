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

__all__ = ["EXACT", "CodedColumn", "Texts", "as_number", "repeated", "utf8", "value_key"]

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
