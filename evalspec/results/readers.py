"""Readers of results files (JSONL, CSV, Parquet) into raw columns with row locations.

A reader returns a :class:`RawFile`: every column as a NumPy object array (values as the
file holds them: str, int, float, bool, ``None``, or a list/dict for a nested JSON value),
the 1-based line (JSONL, CSV) or row (Parquet) of every record, the file's SHA-256 and its
format. Typing the columns against the plan happens in :mod:`evalspec.results.table`;
readers only read.

One definition of what a file means, whichever path reads it
---------------------------------------------------------------
JSONL and CSV have two paths: a vectorised one (pyarrow) that keeps a million-row file
cheap, and an exact line-by-line Python one that stops at the first bad line with its
number. The fast path is only taken where it is known to give the same values; anything
unusual (carriage returns, blank lines, quotes in CSV, integers beyond 2**53 that Arrow
would turn into floats, values Arrow refuses) goes to the exact path. The same rules hold
on both (a property test reads generated files both ways and compares):

* a leading UTF-8 byte-order mark is ignored; the text must be UTF-8 (a bad byte is an
  error at its line);
* lines end at ``\\n`` (an optional ``\\r`` before it is dropped); U+0085, U+2028 and U+2029
  inside a string are characters, not line ends;
* a whole number is an ``int`` (exact at any size); a float with an integral value below
  2**53 becomes the same ``int`` (``2.0`` and ``2`` are one value), other floats stay
  floats; JSON ``NaN`` is missing;
* a JSON object naming a key twice is an error at its line (which value was meant?);
* Parquet ``binary`` values are decoded as UTF-8 text; native Parquet timestamps and
  dates become ISO 8601 text (timestamps without a zone are taken as UTC).

Only regular files are read (a named pipe or a device is refused, so a run never hangs),
and at most :data:`~evalspec.limits.MAX_RESULTS_BYTES` bytes of each.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evalspec._files import special_kind
from evalspec.errors import Diagnostic, InputError
from evalspec.limits import MAX_RESULTS_BYTES

__all__ = ["RawFile", "CodedColumn", "Texts", "arrow_numpy", "arrow_strings", "arrow_texts", "read_file", "read_bytes", "detect_format", "FORMATS", "READERS",
           "regular_file_problem"]

#: Formats the run step reads, by file extension.
FORMATS: dict[str, str] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}

#: Integral floats below this magnitude are ints (exactly representable in a double).
_EXACT = 2**53
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class RawFile:
    """One results file as read: columns of raw values and where each record sits.

    ``unit`` is ``"line"`` for text formats and ``"row"`` for Parquet, so messages say
    ``results.jsonl:17`` or ``results.parquet row 17``.
    """

    path: str
    display: str
    format: str
    sha256: str
    columns: dict[str, np.ndarray]
    lines: np.ndarray
    unit: str
    #: Where an object-store object or a partitioned file came from (``uri``, ``size``, ``modified``,
    #: ``partition``); ``None`` for a plain local file. Kept in the claim's ``data.files[].location``.
    location: dict[str, Any] | None = None

    @property
    def rows(self) -> int:
        """Number of records read."""
        return int(self.lines.shape[0])


def detect_format(path: Path, declared: str) -> str:
    """The format of ``path``: ``declared`` unless it is ``auto``, else by extension."""
    if declared != "auto":
        return declared
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"{path}: cannot tell the format from the extension {path.suffix!r}",
            [
                Diagnostic(
                    file=str(path),
                    message=f"cannot tell the results format from the extension {path.suffix!r}",
                    hint="name the file .jsonl, .csv or .parquet, or set data.format in the plan",
                )
            ],
        )
    return fmt


# -- bytes ----------------------------------------------------------------------------------

#: What a non-regular file is (``"a named pipe"``...), or None for a regular file: one definition for
#: every file evalspec reads (:func:`evalspec._files.special_kind`).
regular_file_problem = special_kind


def _checked_stat(path: Path, limit: int, refuse: Any) -> os.stat_result:
    """``os.stat`` of a results file that may be read: a regular file of at most ``limit`` bytes.

    Anything else (missing, a named pipe, a device, a socket, a symlink loop, too big) is
    refused (``refuse(message, hint)`` builds the located error) before the file is opened.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        raise refuse(f"cannot read the results file: {_strerror(exc)}") from None
    kind = regular_file_problem(st.st_mode)
    if kind is not None:
        raise refuse(f"not a regular file ({kind})", "results are read from regular files only; export them to a "
                     "file and name that file in data.results")
    if st.st_size > limit:
        raise refuse(f"the file is {st.st_size:,} bytes, more than the {limit:,} evalspec reads",
                     "split the results into several files, or summarise them before the analysis")
    return st


def _refuser(display: str) -> Callable[..., InputError]:
    """``refuse(message, hint=None)``: the located error for a results file that cannot be read."""
    def refuse(message: str, hint: str | None = None) -> InputError:
        return InputError(f"{display}: {message}", [Diagnostic(file=display, message=message, hint=hint)])

    return refuse


def _open_regular(path: Path, limit: int, refuse: Callable[..., InputError]) -> tuple[int, os.stat_result]:
    """An open descriptor of a regular file of at most ``limit`` bytes, and its ``fstat``.

    Checked before opening (:func:`_checked_stat`: no named pipe is opened, so nothing hangs)
    and again on the descriptor (the file may have been swapped since). The caller closes it.
    """
    _checked_stat(path, limit, refuse)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise refuse(f"cannot read the results file: {_strerror(exc)}") from None
    try:
        fst = os.fstat(fd)
        kind = regular_file_problem(fst.st_mode)
    except OSError as exc:
        os.close(fd)
        raise refuse(f"cannot read the results file: {_strerror(exc)}") from None
    if kind is not None:
        os.close(fd)
        raise refuse(f"not a regular file ({kind})")
    return fd, fst


def read_bytes(path: Path, display: str, limit: int = MAX_RESULTS_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is a located error.

    A named pipe, a device (``/dev/zero``, also through a symbolic link) or a socket is
    refused before it is opened, so reading never hangs or runs out of memory; a loop of
    symbolic links or a permission problem is an error naming the file.
    """
    refuse = _refuser(display)
    fd, fst = _open_regular(path, limit, refuse)
    try:
        size = fst.st_size
        with os.fdopen(fd, "rb", closefd=False) as fh:
            # read what the file holds, never read(limit): Python would allocate the whole limit up front
            want = min(limit, size) + 1
            chunks = [fh.read(want)]
            total = len(chunks[0])
            while total == want or (len(chunks) > 1 and total <= limit):  # the file grew since the stat
                more = fh.read(min(8 << 20, limit + 1 - total))
                if not more:
                    break
                chunks.append(more)
                total += len(more)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError as exc:
        raise refuse(f"cannot read the results file: {_strerror(exc)}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise refuse(f"the file is more than the {limit:,} bytes evalspec reads")
    return data


@dataclass
class Source:
    """A results file to read: where it is and what one streaming pass learnt about it.

    :func:`scan` reads the file once, in blocks (its SHA-256, newline and comma counts,
    whether it holds a carriage return or a quote, its first 64 KiB), without keeping it
    in memory: the fast paths then let Arrow read the file itself, so a million-row file is
    never held twice. :meth:`read` gives the bytes to the exact path, checked against the
    hash; :meth:`check_unchanged` refuses a file that changed while it was read, so the
    claim's SHA-256 is always that of the bytes analysed.
    """

    display: str
    size: int
    sha256: str
    newlines: int
    has_cr: bool
    has_quote: bool
    commas: int  # -1 when not counted (only the CSV reader reads it)
    head: bytes
    last: bytes
    path: Path | None = None
    mtime_ns: int = 0
    data: bytes | None = None

    @classmethod
    def of_bytes(cls, data: bytes, display: str) -> Source:
        """A source held in memory (tests, and readers given bytes)."""
        return cls(display=display, size=len(data), sha256=hashlib.sha256(data).hexdigest(),
                   newlines=data.count(b"\n"), has_cr=b"\r" in data, has_quote=b'"' in data,
                   commas=data.count(b","), head=data[: 1 << 16], last=data[-1:], data=data)

    @property
    def lines(self) -> int:
        """Number of lines (a last line without a newline counts)."""
        return self.newlines + (1 if self.size and self.last != b"\n" else 0)

    def arrow_input(self) -> Any:
        """What Arrow reads: the path (streamed by Arrow) or the bytes."""
        return io.BytesIO(self.data) if self.data is not None else str(self.path)

    def read(self) -> bytes:
        """The whole file, verified against the hash of the scan."""
        if self.data is not None:
            return self.data
        assert self.path is not None
        data = read_bytes(self.path, self.display)
        if hashlib.sha256(data).hexdigest() != self.sha256:
            raise _changed(self.display)
        return data

    def check_unchanged(self) -> None:
        """Refuse a file that changed since the scan (its size or modification time)."""
        if self.path is None:
            return
        try:
            st = os.stat(self.path)
        except OSError:
            raise _changed(self.display) from None
        if (st.st_size, st.st_mtime_ns) != (self.size, self.mtime_ns):
            raise _changed(self.display)


def _changed(display: str) -> InputError:
    message = "the file changed while evalspec was reading it"
    return InputError(f"{display}: {message}", [Diagnostic(
        file=display, message=message, hint="run again once whatever writes the results has finished")])


def scan(path: Path, display: str, limit: int = MAX_RESULTS_BYTES, *, count_commas: bool = True) -> Source:
    """One streaming pass over a regular file (same refusals as :func:`read_bytes`).

    ``count_commas=False`` leaves ``commas`` at -1 (only CSV needs it; a pass over the bytes saved).
    """
    refuse = _refuser(display)
    digest = hashlib.sha256()
    newlines = commas = size = 0
    has_cr = has_quote = False
    head = last = b""
    fd, fst = _open_regular(path, limit, refuse)
    try:
        buf = bytearray(4 << 20)  # one buffer, reused: no fresh 8 MiB block per read for the allocator to keep
        view = memoryview(buf)
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as fh:
            while True:
                got = fh.readinto(buf)
                if not got:
                    break
                size += got
                if size > limit:
                    raise refuse(f"the file is more than the {limit:,} bytes evalspec reads")
                digest.update(view[:got])
                newlines += buf.count(b"\n", 0, got)
                if count_commas:
                    commas += buf.count(b",", 0, got)
                has_cr = has_cr or buf.find(b"\r", 0, got) >= 0
                has_quote = has_quote or buf.find(b'"', 0, got) >= 0
                if len(head) < 1 << 16:
                    head += bytes(view[: min(got, (1 << 16) - len(head))])
                last = bytes(view[got - 1: got])
        view.release()
    except OSError as exc:
        raise refuse(f"cannot read the results file: {_strerror(exc)}") from None
    finally:
        os.close(fd)
    return Source(display=display, size=size, sha256=digest.hexdigest(), newlines=newlines, has_cr=has_cr,
                  has_quote=has_quote, commas=commas if count_commas else -1, head=head, last=last, path=Path(path),
                  mtime_ns=fst.st_mtime_ns)


def _release_arrow_memory() -> None:
    """Give the memory of Arrow's freed tables back to the system (its pool keeps it otherwise)."""
    if "pyarrow" not in sys.modules:  # nothing was read by Arrow: do not import it for this
        return
    try:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except (ImportError, AttributeError):  # pragma: no cover - older pyarrow
        pass


def _as_source(src: Source | bytes, display: str) -> Source:
    return src if isinstance(src, Source) else Source.of_bytes(src, display)


def _strerror(exc: OSError) -> str:
    text = exc.strerror or type(exc).__name__
    return text[:1].lower() + text[1:]


#: format -> reader of a scanned file: ``(source, display) -> (columns, lines, unit)`` (``source`` is
#: a :class:`Source`, or bytes). The one dispatch point: a new format adds an entry here.
READERS: dict[str, Callable[[Any, str], tuple[dict[str, np.ndarray], np.ndarray, str]]] = {}


#: JSONL and CSV files below this size are read by the exact (Python) path alone: at this size it
#: is as fast as Arrow's, and importing pyarrow would cost more (about 0.1 s). Both paths give the
#: same values (see the module docstring), so the size decides speed, never meaning.
SMALL_FILE_BYTES = 1 << 20


def _small_text_file(path: Path, fmt: str) -> str | None:
    """``fmt`` when ``path`` is a regular JSONL or CSV file under :data:`SMALL_FILE_BYTES`, else None."""
    if fmt not in ("jsonl", "csv"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None  # the reader refuses it with its located message
    return fmt if stat.S_ISREG(st.st_mode) and st.st_size < SMALL_FILE_BYTES else None


def read_file(path: Path, fmt: str, display: str | None = None) -> RawFile:
    """Read one results file of format ``fmt`` (``jsonl``, ``csv`` or ``parquet``)."""
    display = display or str(path)
    reader = READERS.get(fmt)
    if reader is None:  # pragma: no cover - the plan model restricts formats
        raise InputError(f"{display}: unsupported format {fmt!r}", [Diagnostic(file=display, message=f"unsupported format {fmt!r}")])
    small = _small_text_file(Path(path), fmt)
    if small is not None:  # read once, hashed, parsed by the exact path: no pyarrow import (about 0.1 s)
        raw = read_bytes(Path(path), display)
        src = Source.of_bytes(raw, display)
        data = raw[3:] if raw.startswith(_BOM) else raw
        columns, lines = (_read_jsonl_python if small == "jsonl" else _read_csv_python)(data, display)
        unit = "line"
    elif fmt == "jsonl":  # the scan (SHA-256, line count) runs beside Arrow's parse, not before it
        src, parsed = _scan_while_parsing_jsonl(Path(path), display)
        columns, lines, unit = _read_jsonl(src, display, parsed)
    else:
        src = scan(Path(path), display, count_commas=fmt == "csv")
        columns, lines, unit = reader(src, display)
    src.check_unchanged()
    _release_arrow_memory()
    return RawFile(path=str(path), display=display, format=fmt, sha256=src.sha256, columns=columns, lines=lines,
                   unit=unit)


# -- values ---------------------------------------------------------------------------------


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


def arrow_texts(values: np.ndarray) -> Any:
    """``values`` (an object array) as an Arrow string array, or None when some value is not text."""
    arrow = getattr(values, "arrow", None)
    return arrow if arrow is not None else arrow_strings(values.tolist())


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
        if not distinct and (None in values or len(set(map(_key, values))) != len(values)):
            # inputs that read as one value ("1" and "1.0") share a code; those read as missing get -1
            index: dict[Any, int] = {}
            remap = np.full(len(values) + 1, -1, dtype=np.int32)
            kept: list[Any] = []
            for i, v in enumerate(values):
                if v is not None:
                    remap[i] = index.setdefault(_key(v), len(kept))
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


def _number(value: Any) -> Any:
    """The one definition of a number: integral floats below 2**53 are ints, NaN is missing."""
    if value.__class__ is float:
        if value != value:
            return None
        if value.is_integer() and -_EXACT < value < _EXACT:
            return int(value)
    return value


def _utf8(data: bytes, display: str, corrupt: Callable[[str, int, str], InputError]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise corrupt(display, line, "is not valid UTF-8") from None


# -- Arrow columns -> object arrays ----------------------------------------------------------


def _repeated(names: list[str]) -> list[str]:
    """The names given more than once, sorted (linear: ``list.count`` per name was quadratic in columns)."""
    from collections import Counter

    return sorted(n for n, c in Counter(names).items() if c > 1)


#: Chunks of one column read chunk by chunk; more are combined into one first (linear in rows).
_FEW_CHUNKS = 16


def _arrow_to_object(col: Any, display: str = "", unit: str = "row") -> np.ndarray:
    """A pyarrow column as an object array of plain values (``None`` for nulls).

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
    enc = col.dictionary_encode()  # NaN (a float) becomes None below, via _number
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
        values = [_number(v) for v in values]
    uniques[:] = values
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):  # the distinct texts keep their Arrow form
        uniques = Texts.of(uniques, dictionary)
    return CodedColumn.of(codes, uniques, distinct=not pa.types.is_floating(typ))


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


def _key(value: Any) -> tuple[type, Any]:
    return (value.__class__, value)


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


# -- JSONL --------------------------------------------------------------------------------


def _read_jsonl(source: Source | bytes, display: str,
                parsed: list[Any] | None = None) -> tuple[dict[str, np.ndarray], np.ndarray, str]:
    """``parsed``: ``[Arrow's parse]`` made beside the scan (:func:`_scan_while_parsing_jsonl`); emptied here."""
    src = _as_source(source, display)
    fast = _read_jsonl_arrow(src, display, parsed)  # a bad UTF-8 byte sends it to the exact path, which locates it
    if fast is not None:
        return fast[0], fast[1], "line"
    data = src.read()
    columns, lines = _read_jsonl_python(data[3:] if data.startswith(_BOM) else data, display)
    return columns, lines, "line"


def _scan_while_parsing_jsonl(path: Path, display: str) -> tuple[Source, list[Any]]:
    """The file's :func:`scan` and ``[Arrow's parse of it]`` (empty when Arrow cannot), made at the same time.

    The scan (SHA-256, line count) runs in a thread while Arrow parses (both release the
    GIL), so a large file costs about one pass instead of two. The file is refused as
    :func:`scan` refuses it (not a regular file, too big, unreadable) before Arrow opens it,
    and the parse is used only when the scan saw the same first bytes; a file that changes
    while it is read is refused afterwards (:meth:`Source.check_unchanged`). The parse comes in
    a list its reader empties, so that no caller keeps the whole table alive while its
    columns are converted one by one.
    """
    from concurrent.futures import ThreadPoolExecutor

    head = _peek(path, display)
    with ThreadPoolExecutor(max_workers=1) as pool:
        scanned = pool.submit(scan, path, display, count_commas=False)
        try:
            table = _jsonl_arrow_table(str(path), head)
        finally:
            src = scanned.result()  # the scan's located error, if any, wins
    return src, [] if table is None or src.head != head else [table]


def _peek(path: Path, display: str) -> bytes:
    """The first 64 KiB of a results file, refused as :func:`scan` refuses it."""
    refuse = _refuser(display)
    fd, _ = _open_regular(path, MAX_RESULTS_BYTES, refuse)
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(1 << 16)
    except OSError as exc:
        raise refuse(f"cannot read the results file: {_strerror(exc)}") from None
    finally:
        os.close(fd)


def _jsonl_arrow_table(arrow_input: Any, head: bytes) -> Any:
    """Arrow's parse of a JSONL file whose first 64 KiB are ``head``; None when Arrow cannot.

    Text that looks like a time stays text (the schema is sniffed from the first block, so
    the file is parsed once).
    """
    import pyarrow as pa
    import pyarrow.json as pj

    if not head or head[:1].isspace() or head.startswith(_BOM) or head.isspace():
        return None  # blank lines are caught later: Arrow skips them, so the row count falls short

    def stamped(schema: Any) -> list[str]:
        return [f.name for f in schema if pa.types.is_timestamp(f.type) or pa.types.is_date(f.type)]

    def read(as_text: list[str]) -> Any:
        opts = None
        if as_text:
            schema = pa.schema([(name, pa.string()) for name in as_text])
            opts = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
        return pj.read_json(arrow_input() if callable(arrow_input) else arrow_input,
                            read_options=pj.ReadOptions(block_size=8 << 20), parse_options=opts)

    try:
        cut = head.rfind(b"\n") + 1 or len(head)
        sniffed = stamped(pj.read_json(io.BytesIO(head[:cut])).schema)
        table = read(sniffed)
        late = stamped(table.schema)
        if late:
            table = read(sniffed + late)
        table.column_names  # noqa: B018 - a key that is not UTF-8 fails here (UnicodeDecodeError is a ValueError)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OSError):
        return None  # Arrow cannot: the exact path reads the file and locates what is wrong
    return table


def _read_jsonl_arrow(source: Source | bytes, display: str,
                      parsed: list[Any] | None = None) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
    """Vectorised JSONL read with pyarrow; ``None`` when anything is odd (the exact path decides).

    Only used when every line ends in ``\\n`` alone and is a non-empty JSON object (blank
    lines would shift line numbers) and Arrow's values are the exact path's. ``parsed`` holds
    Arrow's parse when already made (:func:`_scan_while_parsing_jsonl`); it is emptied.
    """
    import pyarrow as pa

    src = _as_source(source, display)
    table = parsed.pop() if parsed else None
    if not src.size or src.has_cr:
        return None
    if parsed is None:
        table = _jsonl_arrow_table(src.arrow_input, src.head)
    if table is None:
        return None
    names = table.column_names
    for col in table.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            try:
                col.validate(full=True)  # Arrow does not check UTF-8 while parsing JSON
            except pa.ArrowInvalid:
                return None
    if table.num_rows != src.lines:
        return None
    _release_arrow_memory()  # the parser's freed buffers (several times the table) before objects are made
    columns: dict[str, np.ndarray] = {}
    import pyarrow.compute as pc

    cols, n_rows = table.columns, table.num_rows
    del table  # each Arrow column is freed once converted: the table and the objects never peak together
    for i, name in enumerate(names):
        col, cols[i] = cols[i], None
        typ = col.type
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ)
                or pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_null(typ)):
            return None  # nested values: the exact path keeps them as they are
        if pa.types.is_floating(typ) and len(col):
            big = pc.max(pc.abs(col)).as_py()
            if big is not None and big >= _EXACT:
                return None  # an integer beyond 2**53 read as a float: the exact path keeps it exact
        columns[name] = _arrow_to_object(col, display, "line")
        del col
    return columns, np.arange(1, n_rows + 1, dtype=np.int64)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _plain(value: Any) -> Any:
    if value.__class__ is float:
        return _number(value)
    return value


def _read_jsonl_python(data: bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    text = _utf8(data[3:] if data.startswith(_BOM) else data, display, _corrupt)
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys)
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line.strip():
            continue
        try:
            obj = decoder.decode(line)
        except json.JSONDecodeError as exc:
            raise _corrupt(display, number, f"is not valid JSON: {exc.msg}: column {exc.colno}") from None
        except _DuplicateKey as exc:
            raise _corrupt(display, number, f"names the key {exc.key!r} twice") from None
        except RecursionError:
            raise _corrupt(display, number, "is nested too deeply") from None
        if not isinstance(obj, dict):
            raise _corrupt(display, number, f"is not a JSON object (a {type(obj).__name__})")
        records.append(obj)
        lines.append(number)
    if not records:
        raise InputError(
            f"{display}: no results rows",
            [Diagnostic(file=display, message="the results file has no rows", hint="check data.results in the plan")],
        )
    keys: dict[str, None] = {}
    for rec in records:
        for key in rec:
            keys.setdefault(key, None)
    columns = {}
    for key in keys:
        col = np.empty(len(records), dtype=object)
        col[:] = [_plain(rec.get(key)) for rec in records]
        columns[key] = col
    return columns, np.asarray(lines, dtype=np.int64)


def _corrupt(display: str, line: int, what: str) -> InputError:
    return InputError(
        f"{display}:{line}: corrupt line",
        [
            Diagnostic(
                file=display,
                line=line,
                message=f"corrupt line: {what}",
                hint="each line must be one JSON object; fix or remove the line and run again",
            )
        ],
    )


# -- CSV ----------------------------------------------------------------------------------


def _read_csv(source: Source | bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray, str]:
    src = _as_source(source, display)
    fast = _read_csv_arrow(src)
    if fast is not None:
        return fast[0], fast[1], "line"
    data = src.read()
    columns, lines = _read_csv_python(data[3:] if data.startswith(_BOM) else data, display)
    return columns, lines, "line"


def _read_csv_arrow(source: Source | bytes) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
    """Vectorised CSV read with pyarrow, for plain files only; else ``None``.

    Plain means: no quotes, no carriage returns, no blank lines, a header without
    duplicates, and exactly ``width - 1`` commas on every line (checked by one count).
    Cells are typed by :func:`_csv_value` on the distinct values only.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    src = _as_source(source, "")
    if not src.size or src.has_quote or src.has_cr or src.head.startswith(_BOM) or b"\n" not in src.head:
        return None  # blank lines: Arrow skips them, so the row count below falls short
    try:
        header = [h.strip() for h in src.head[: src.head.index(b"\n")].decode("utf-8").split(",")]
    except UnicodeDecodeError:
        return None
    if not any(header) or len(set(header)) != len(header):
        return None
    n_lines = src.lines
    if n_lines < 2 or src.commas != (len(header) - 1) * n_lines:
        return None
    try:
        table = pcsv.read_csv(
            src.arrow_input(),
            read_options=pcsv.ReadOptions(column_names=header, skip_rows=1, block_size=8 << 20),
            parse_options=pcsv.ParseOptions(newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, ValueError):  # not UTF-8 among them: the exact path locates it
        return None
    if table.num_rows != n_lines - 1:
        return None
    columns: dict[str, np.ndarray] = {}
    for name in header:
        col = table.column(name)
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        enc = col.dictionary_encode()
        codes = arrow_numpy(enc.indices).astype(np.int32, copy=False)
        columns[name] = _typed(codes, enc.dictionary.to_pylist())
    return columns, np.arange(2, n_lines + 1, dtype=np.int64)


def _typed(codes: np.ndarray, texts: list[str]) -> np.ndarray:
    """``_csv_value`` of each distinct text, expanded by ``codes``; the codes are remembered."""
    typed = np.empty(len(texts), dtype=object)
    typed[:] = [_csv_value(t) for t in texts]
    return CodedColumn.of(codes, typed)


def _read_csv_python(data: bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    text = _utf8(data[3:] if data.startswith(_BOM) else data, display, _corrupt_csv)
    reader = csv.reader(io.StringIO(text, newline=""))
    old_limit = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # the file size is capped; any field is read whole
    try:
        try:
            header = next(reader)
        except StopIteration:
            header = []
        except csv.Error as exc:
            raise _corrupt_csv(display, reader.line_num, f"cannot be parsed ({exc})") from None
        if not header or not any(h.strip() for h in header):
            raise InputError(
                f"{display}: no header row",
                [Diagnostic(file=display, line=1, message="the CSV file has no header row naming the columns")],
            )
        header = [h.strip() for h in header]
        dupes = _repeated(header)
        if dupes:
            raise InputError(
                f"{display}:1: duplicate column names",
                [Diagnostic(file=display, line=1, message=f"the header names a column twice: {', '.join(dupes)}")],
            )
        width = len(header)
        rows: list[list[str]] = []
        lines: list[int] = []
        start = reader.line_num + 1
        try:
            for row in reader:
                number, start = start, reader.line_num + 1
                if not row or (len(row) == 1 and not row[0].strip() and width > 1):
                    continue
                if len(row) != width:
                    raise _corrupt_csv(display, number, f"has {len(row)} fields, the header has {width}")
                rows.append(row)
                lines.append(number)
        except csv.Error as exc:
            raise _corrupt_csv(display, start, f"cannot be parsed ({exc})") from None
    finally:
        csv.field_size_limit(old_limit)
    if not rows:
        raise InputError(f"{display}: no results rows", [Diagnostic(file=display, message="the CSV file has a header but no rows")])
    columns: dict[str, np.ndarray] = {}
    cache: dict[str, Any] = {}
    for j, name in enumerate(header):
        col = np.empty(len(rows), dtype=object)
        col[:] = [cache[c] if c in cache else cache.setdefault(c, _csv_value(c)) for c in (r[j] for r in rows)]
        columns[name] = col
    return columns, np.asarray(lines, dtype=np.int64)


def _csv_value(text: str) -> Any:
    """CSV cells are text: empty means missing; canonical integers and decimals become numbers.

    ``"007"`` stays text (an identifier, not the number 7); ``"nan"`` is missing; a decimal
    with an integral value (``"2.0"``) is the integer, as in JSON.
    """
    s = text.strip()
    if s == "":
        return None
    if not s.isascii():
        return s
    body = s[1:] if s[0] in "+-" else s
    if body.isdigit():
        number = int(s)
        return number if str(number) == s else s
    if body.replace(".", "", 1).isdigit() or (("e" in body or "E" in body) and body[:1].isdigit()):
        try:
            return _number(float(s))
        except ValueError:
            return s
    if s.lower() in ("nan", "inf", "infinity", "-inf", "+inf", "-infinity"):
        return _number(float(s))
    return s


def _corrupt_csv(display: str, line: int, what: str) -> InputError:
    return InputError(
        f"{display}:{line}: corrupt line",
        [Diagnostic(file=display, line=line, message=f"corrupt line: {what}", hint="fix or remove the line and run again")],
    )


# -- Parquet ------------------------------------------------------------------------------


def _read_parquet(source: Source | bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray, str]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"{display}: reading Parquet needs pyarrow",
            [
                Diagnostic(
                    file=display,
                    message="reading Parquet needs pyarrow, which is not installed",
                    hint="pip install 'evalspec[parquet]', or export the results as JSONL or CSV",
                )
            ],
        ) from None
    try:
        src = _as_source(source, display)
        table = pq.read_table(pa.BufferReader(src.data) if src.data is not None else str(src.path))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(
            f"{display}: not a readable Parquet file",
            [Diagnostic(file=display, message=f"not a readable Parquet file ({str(exc)[:200]})", hint="re-export the file")],
        ) from None
    names = table.column_names
    dupes = _repeated(names)
    if dupes:
        raise InputError(f"{display}: duplicate column names", [Diagnostic(
            file=display, message=f"the file names a column twice: {', '.join(dupes)}")])
    columns = {name: _arrow_to_object(col, display, "row") for name, col in zip(names, table.columns)}
    return columns, np.arange(1, table.num_rows + 1, dtype=np.int64), "row"


READERS.update({"jsonl": _read_jsonl, "csv": _read_csv, "parquet": _read_parquet})
