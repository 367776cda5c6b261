"""Arrow columns as NumPy: codes and distinct values, without pandas.

:func:`arrow_to_object` turns a column a reader parsed with pyarrow into the object column
the table types (dictionary-encoded in C, the distinct values converted once), with
Parquet's binary, timestamp and date types as text. pyarrow is imported inside the
functions only, so a small file read by the exact path never loads it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.results.values import CodedColumn, Texts, as_number, positions

__all__ = ["arrow_codes", "dictionary_codes", "arrow_numpy", "run_firsts", "arrow_strings", "arrow_texts", "arrow_to_object", "release_arrow_memory"]

def release_arrow_memory() -> None:
    """Give the memory of Arrow's freed tables back to the system (its pool keeps it otherwise)."""
    if "pyarrow" not in sys.modules:  # nothing was read by Arrow: do not import it for this
        return
    try:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except (ImportError, AttributeError):  # pragma: no cover - older pyarrow
        pass


def arrow_texts(values: np.ndarray) -> Any:
    """``values`` (an object array) as an Arrow string array, or None when some value is not text."""
    arrow = getattr(values, "arrow", None)
    return arrow if arrow is not None else arrow_strings(values.tolist())


#: Chunks of one column read chunk by chunk; more are combined into one first (linear in rows).
_FEW_CHUNKS = 16


def arrow_to_object(col: Any, display: str = "", unit: str = "row") -> np.ndarray:
    """A pyarrow column as an object array of plain values (``None`` for nulls): :func:`arrow_codes`, expanded.

    A column of simple values is a :class:`~evalspec.results.values.CodedColumn` (it keeps its codes).
    """
    coded = arrow_codes(col, display, unit)
    if isinstance(coded, np.ndarray):
        return coded
    codes, uniques, distinct = coded
    return CodedColumn.of(codes, uniques, distinct=distinct)


def arrow_codes(col: Any, display: str = "", unit: str = "row") -> tuple[np.ndarray, np.ndarray, bool] | np.ndarray:
    """A pyarrow column as ``(codes, distinct values, distinct)``, or an object array (nested values, all null).

    Code -1 is a null; ``distinct`` is False where two values may read as one (floats: ``as_number``).
    Simple types are dictionary-encoded in Arrow (fast, in C), the distinct values
    converted once and expanded by a NumPy take. Binary is
    decoded as UTF-8, timestamps and dates become ISO 8601 text, nested values Python
    lists and dicts.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    typ = col.type
    simple = (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ)
              or pa.types.is_string(typ) or pa.types.is_large_string(typ))
    if isinstance(col, pa.ChunkedArray) and (not simple or col.num_chunks <= 1 or col.num_chunks > _FEW_CHUNKS):
        # one chunk: linear in rows whatever the file's row groups (per-chunk dictionaries compared
        # pairwise were quadratic: 3,500 row groups of one row took 30 s per column)
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_dictionary(typ):
        coded = dictionary_codes(col)
        if coded is not None:
            return coded
        col = col.cast(typ.value_type)
        typ = col.type
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_fixed_size_binary(typ):
        col = _binary_as_text(col, display, unit)
        typ = col.type
    if pa.types.is_timestamp(typ):
        if typ.tz is None:
            col = pc.assume_timezone(col, "UTC")
        # %S holds the fraction (microseconds), so the text is 2026-10-01T12:00:00.000000Z
        col = pc.strftime(col.cast(pa.timestamp("us", tz="UTC")), format="%Y-%m-%dT%H:%M:%SZ", locale="C")
    elif pa.types.is_date(typ):
        col = pc.strftime(col, format="%Y-%m-%d", locale="C")
    elif pa.types.is_time(typ) or pa.types.is_duration(typ) or pa.types.is_decimal(typ):
        col = col.cast(pa.string()) if not pa.types.is_decimal(typ) else col.cast(pa.float64())
    typ = col.type
    if not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ)
            or pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_null(typ)):
        out = np.empty(len(col), dtype=object)
        out[:] = col.to_pylist()
        return out
    if pa.types.is_null(typ):
        return np.full(len(col), None, dtype=object)
    enc = col.dictionary_encode()  # NaN (a float) becomes None below, via number
    if isinstance(enc, pa.ChunkedArray) and enc.num_chunks and not all(
            ch.dictionary.equals(enc.chunks[-1].dictionary) for ch in enc.chunks):
        enc = col.combine_chunks().dictionary_encode()  # (Arrow shares one dictionary; never rely on it blindly)
    if isinstance(enc, pa.ChunkedArray):  # the chunks share one dictionary
        parts = [arrow_numpy(ch.indices, fill=-1).astype(np.int32, copy=False) for ch in enc.chunks]
        codes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
        dictionary = enc.chunks[-1].dictionary if enc.num_chunks else pa.array([], type=typ)
    else:
        codes = arrow_numpy(enc.indices, fill=-1).astype(np.int32, copy=False)
        dictionary = enc.dictionary
    uniques = np.empty(len(dictionary), dtype=object)
    values = dictionary.to_pylist()
    if pa.types.is_floating(typ):
        values = [as_number(v) for v in values]
    uniques[:] = values
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):  # the distinct texts keep their Arrow form
        uniques = Texts.of(uniques, dictionary)
    return codes, uniques, not pa.types.is_floating(typ)


def dictionary_codes(col: Any) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """:func:`arrow_codes` of a dictionary array of texts (Parquet's own dictionary pages), without hashing a row's text.

    Exactly what dictionary-encoding the texts gives: the used indices in first-seen order
    (``pc.unique`` of the integer indices, of each run's first: :func:`run_firsts`) are the codes' order, so a dictionary holding values
    no row uses, or in another order, changes nothing. ``None`` (hash the texts as before) for a
    dictionary that is not texts, holds a null, or holds a used text twice.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(col, pa.DictionaryArray):
        return None
    dictionary = col.dictionary
    if not (pa.types.is_string(dictionary.type) or pa.types.is_large_string(dictionary.type)) or dictionary.null_count:
        return None
    idx = arrow_numpy(col.indices, fill=-1)  # (-1: a null index, a missing value)
    firsts = run_firsts(idx)  # (the indices themselves where few rows repeat the row before: hashed as Arrow holds
    # them, not copied into int64 first)
    used = arrow_numpy(pc.unique(col.indices if firsts is idx else positions(firsts)), fill=-1)  # first-seen order
    used = used[used >= 0]  # (-1 among them: a null, no text)
    texts = dictionary.take(positions(used))
    if len(texts) > 1 and len(pc.unique(texts)) != len(texts):
        return None  # (a writer may repeat a dictionary value: the codes would not be distinct)
    if len(used) == len(dictionary) and not col.null_count and np.array_equal(used, np.arange(len(used))):
        codes = idx.astype(np.int32, copy=False)  # (every text used, first seen in the dictionary's order: the
        # indices are the codes)
    else:
        lookup = np.full(len(dictionary) + 1, -1, dtype=np.int32)  # the last slot: a null's fill, -1
        lookup[used] = np.arange(len(used), dtype=np.int32)
        codes = lookup[idx]
    uniques = np.empty(len(texts), dtype=object)
    uniques[:] = texts.to_pylist()
    return codes, Texts.of(uniques, texts), True


def run_firsts(values: np.ndarray) -> np.ndarray:
    """The first value of each run of equal values, in order: the same values first seen in the same order as
    ``values`` (a value's first place begins a run), fewer of them where equal values sit together (a batch's
    rows of one case, one time, one topic), so that ``pc.unique`` hashes the runs, not every row."""
    n = values.shape[0]
    if n < 2:
        return values
    starts = np.flatnonzero(values[1:] != values[:-1])
    if starts.size > n // 2:  # (mostly runs of one: as they are)
        return values
    return np.concatenate((values[:1], values[starts + 1]))


def arrow_numpy(arr: Any, fill: Any = None) -> np.ndarray:
    """An Arrow array of numbers or booleans as NumPy (nulls become ``fill``), without pandas.

    (``to_numpy`` and Python scalars in ``pyarrow.compute`` import pandas, half a second, for
    nothing.)
    """
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_boolean(arr.type):
        out = arrow_numpy(arr.cast(pa.uint8()), None if fill is None else int(fill))
        return out.astype(bool)
    dtype = np.dtype({"double": "float64", "float": "float32", "halffloat": "float16"}.get(str(arr.type),
                                                                                        str(arr.type)))
    data = np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr) + arr.offset)[arr.offset:]
    if arr.null_count:
        if fill is None:
            raise ValueError("arrow_numpy: the array has nulls and no fill value was given")
        bits = np.unpackbits(np.frombuffer(arr.buffers()[0], dtype=np.uint8), bitorder="little")
        valid = bits[arr.offset: arr.offset + len(arr)].astype(bool)
        data = np.where(valid, data, np.asarray(fill).astype(data.dtype))
    return data


def arrow_strings(values: list[Any]) -> Any:
    """An Arrow string array of ``values`` (``None`` -> null), or None when some value is not text.

    Built from buffers: ``pyarrow.array`` would import pandas (half a second) to ask whether
    the list is a pandas object.
    """
    import pyarrow as pa

    ascii_texts = _ascii_strings(values)
    if ascii_texts is not None:
        return ascii_texts
    valid = [v is not None for v in values]
    try:
        enc = [v.encode("utf-8") if v is not None else b"" for v in values]
    except (AttributeError, UnicodeEncodeError):
        return None
    offsets = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in enc], out=offsets[1:])
    bitmap = None
    if not all(valid):
        bitmap = pa.py_buffer(np.packbits(np.asarray(valid, dtype=bool), bitorder="little").tobytes())
    return pa.LargeStringArray.from_buffers(len(enc), pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(enc)),
                                            bitmap)


def _ascii_strings(values: list[Any]) -> Any:
    """:func:`arrow_strings` of values that are all ASCII text without NUL (case ids, labels), else None.

    No bytes object per value: the joined text is the data buffer, and the offsets are where
    the NULs of a NUL-joined copy fall, less the NULs before them (a 100,000-value column in
    about 5 ms instead of 35).
    """
    import pyarrow as pa

    try:
        joined = "".join(values)
    except TypeError:  # a None, or a value that is not text
        return None
    if not joined.isascii() or "\0" in joined:
        return None
    ends = np.flatnonzero(np.frombuffer("\0".join(values).encode("ascii"), dtype=np.uint8) == 0)
    offsets = np.empty(len(values) + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:-1] = ends - np.arange(len(ends))
    offsets[-1] = len(joined)
    return pa.LargeStringArray.from_buffers(len(values), pa.py_buffer(offsets.tobytes()),
                                            pa.py_buffer(joined.encode("ascii")))


def _binary_as_text(col: Any, display: str, unit: str) -> Any:
    import pyarrow as pa

    try:
        return col.cast(pa.large_string() if pa.types.is_large_binary(col.type) else pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # Arrow says only that some value is not UTF-8; find which one, to name its row
        invalid = col.to_pylist()
    for i, value in enumerate(invalid):
        if value is not None:
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{display} {unit} {i + 1}: a binary value is not UTF-8 text", [Diagnostic(
                    file=display, line=i + 1, message="a binary value is not UTF-8 text",
                    got=value[:40], has_got=True, hint="store identifiers and labels as text")]) from None
    return col.cast(pa.string())  # pragma: no cover - every value decoded above
